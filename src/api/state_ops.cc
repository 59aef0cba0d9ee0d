// The op functions of include/dflow/state_ops.h.
#include "dflow/state_ops.h"

namespace dflow::ops {
namespace {

Output Out(const Operation& op, int i = 0) { return op.valid() ? Output(op, i) : Output(); }

std::vector<Output> AllOutputs(const Operation& op) {
  std::vector<Output> out;
  if (!op.valid()) return out;
  for (int i = 0; i < op.num_outputs(); ++i) out.emplace_back(op, i);
  return out;
}

std::vector<Input> Prepend(Input first, const std::vector<Input>& rest) {
  std::vector<Input> all;
  all.reserve(rest.size() + 1);
  all.push_back(std::move(first));
  for (const Input& in : rest) all.push_back(in);
  return all;
}

}  // namespace

Output VarHandleOp(const Scope& s, DType dtype, const PartialTensorShape& shape, const ResourceAttrs& attrs) {
  return Out(BuildOp(
      s, "VarHandleOp", {},
      {{"dtype", dtype}, {"shape", shape}, {"container", attrs.container}, {"shared_name", attrs.shared_name}}));
}
Output ReadVariableOp(const Scope& s, Input resource, DType dtype) {
  return Out(BuildOp(s, "ReadVariableOp", {std::move(resource)}, {{"dtype", dtype}}));
}
Operation AssignVariableOp(const Scope& s, Input resource, Input value) {
  return BuildOp(s, "AssignVariableOp", {std::move(resource), std::move(value)});
}
Operation AssignAddVariableOp(const Scope& s, Input resource, Input value) {
  return BuildOp(s, "AssignAddVariableOp", {std::move(resource), std::move(value)});
}
Operation AssignSubVariableOp(const Scope& s, Input resource, Input value) {
  return BuildOp(s, "AssignSubVariableOp", {std::move(resource), std::move(value)});
}
Output VarIsInitializedOp(const Scope& s, Input resource) {
  return Out(BuildOp(s, "VarIsInitializedOp", {std::move(resource)}));
}
Output ResourceGather(const Scope& s, Input resource, Input indices, DType dtype) {
  return Out(BuildOp(s, "ResourceGather", {std::move(resource), std::move(indices)}, {{"dtype", dtype}}));
}

Output ScatterUpdate(const Scope& s, Input ref, Input indices, Input updates, bool use_locking) {
  return Out(BuildOp(s, "ScatterUpdate", {std::move(ref), std::move(indices), std::move(updates)},
                     {{"use_locking", use_locking}}));
}
Output ScatterAdd(const Scope& s, Input ref, Input indices, Input updates, bool use_locking) {
  return Out(BuildOp(s, "ScatterAdd", {std::move(ref), std::move(indices), std::move(updates)},
                     {{"use_locking", use_locking}}));
}
Output ScatterSub(const Scope& s, Input ref, Input indices, Input updates, bool use_locking) {
  return Out(BuildOp(s, "ScatterSub", {std::move(ref), std::move(indices), std::move(updates)},
                     {{"use_locking", use_locking}}));
}
Output CountUpTo(const Scope& s, Input ref, int64_t limit) {
  return Out(BuildOp(s, "CountUpTo", {std::move(ref)}, {{"limit", limit}}));
}

Output IsVariableInitialized(const Scope& s, Input ref) {
  return Out(BuildOp(s, "IsVariableInitialized", {std::move(ref)}));
}

Output FIFOQueue(const Scope& s, const std::vector<DType>& component_types, const QueueAttrs& attrs) {
  return Out(BuildOp(s, "FIFOQueueV2", {},
                     {{"component_types", component_types},
                      {"shapes", attrs.shapes},
                      {"capacity", attrs.capacity},
                      {"container", attrs.container},
                      {"shared_name", attrs.shared_name}}));
}
Output RandomShuffleQueue(const Scope& s, const std::vector<DType>& component_types,
                          const RandomShuffleQueueAttrs& attrs) {
  return Out(BuildOp(s, "RandomShuffleQueueV2", {},
                     {{"component_types", component_types},
                      {"shapes", attrs.shapes},
                      {"capacity", attrs.capacity},
                      {"min_after_dequeue", attrs.min_after_dequeue},
                      {"seed", attrs.seed},
                      {"seed2", attrs.seed2},
                      {"container", attrs.container},
                      {"shared_name", attrs.shared_name}}));
}
Operation QueueEnqueue(const Scope& s, Input handle, const std::vector<Input>& components, int64_t timeout_ms) {
  return BuildOp(s, "QueueEnqueueV2", Prepend(std::move(handle), components), {{"timeout_ms", timeout_ms}});
}
Operation QueueEnqueueMany(const Scope& s, Input handle, const std::vector<Input>& components, int64_t timeout_ms) {
  return BuildOp(s, "QueueEnqueueManyV2", Prepend(std::move(handle), components), {{"timeout_ms", timeout_ms}});
}
std::vector<Output> QueueDequeue(const Scope& s, Input handle, const std::vector<DType>& component_types,
                                 int64_t timeout_ms) {
  return AllOutputs(BuildOp(s, "QueueDequeueV2", {std::move(handle)},
                            {{"component_types", component_types}, {"timeout_ms", timeout_ms}}));
}
std::vector<Output> QueueDequeueMany(const Scope& s, Input handle, Input n, const std::vector<DType>& component_types,
                                     int64_t timeout_ms) {
  return AllOutputs(BuildOp(s, "QueueDequeueManyV2", {std::move(handle), std::move(n)},
                            {{"component_types", component_types}, {"timeout_ms", timeout_ms}}));
}
Operation QueueClose(const Scope& s, Input handle, bool cancel_pending_enqueues) {
  return BuildOp(s, "QueueCloseV2", {std::move(handle)}, {{"cancel_pending_enqueues", cancel_pending_enqueues}});
}
Output QueueSize(const Scope& s, Input handle) { return Out(BuildOp(s, "QueueSizeV2", {std::move(handle)})); }

Output Mutex(const Scope& s, const ResourceAttrs& attrs) {
  return Out(BuildOp(s, "MutexV2", {}, {{"container", attrs.container}, {"shared_name", attrs.shared_name}}, "Mutex"));
}
Output MutexLock(const Scope& s, Input mutex) { return Out(BuildOp(s, "MutexLock", {std::move(mutex)})); }
Operation ConsumeMutexLock(const Scope& s, Input mutex_lock) {
  return BuildOp(s, "ConsumeMutexLock", {std::move(mutex_lock)});
}

Output ConditionalAccumulator(const Scope& s, DType dtype, const PartialTensorShape& shape,
                              const ConditionalAccumulatorAttrs& attrs) {
  return Out(BuildOp(s, "ResourceConditionalAccumulator", {},
                     {{"dtype", dtype},
                      {"shape", shape},
                      {"container", attrs.container},
                      {"shared_name", attrs.shared_name},
                      {"reduction_type", attrs.reduction_type},
                      {"max_gradients_per_step", attrs.max_gradients_per_step}}));
}
Operation AccumulatorApplyGradient(const Scope& s, Input handle, Input local_step, Input gradient) {
  return BuildOp(s, "ResourceAccumulatorApplyGradient",
                 {std::move(handle), std::move(local_step), std::move(gradient)});
}
Output AccumulatorTakeGradient(const Scope& s, Input handle, Input num_required, DType dtype) {
  return Out(BuildOp(s, "ResourceAccumulatorTakeGradient", {std::move(handle), std::move(num_required)},
                     {{"dtype", dtype}}));
}
Output AccumulatorNumAccumulated(const Scope& s, Input handle) {
  return Out(BuildOp(s, "ResourceAccumulatorNumAccumulated", {std::move(handle)}));
}
Operation AccumulatorSetGlobalStep(const Scope& s, Input handle, Input new_global_step) {
  return BuildOp(s, "ResourceAccumulatorSetGlobalStep", {std::move(handle), std::move(new_global_step)});
}
Output AccumulatorNumDropped(const Scope& s, Input handle) {
  return Out(BuildOp(s, "ResourceAccumulatorNumDropped", {std::move(handle)}));
}

}  // namespace dflow::ops
