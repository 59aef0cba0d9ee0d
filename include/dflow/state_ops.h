// Public op functions for state: resource variables, sparse updates of reference variables,
// queues and mutexes (see dflow/ops.h for the conventions: each adds one node to the scope's
// graph; errors go to the scope).
//
//   Output v = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, {2});
//   session.Run({ops::AssignVariableOp(root, v, {1.0f, 2.0f})});
//   Output x = ops::ReadVariableOp(root, v, DT_FLOAT);
//
//   Output q = ops::FIFOQueue(root, {DT_FLOAT}, {.capacity = 10});
//   Operation enq = ops::QueueEnqueue(root, q, {x});
//   std::vector<Output> item = ops::QueueDequeue(root, q, {DT_FLOAT});   // blocks while empty
//
// Resources (variables, queues, mutexes) are named by (container, shared_name); an empty
// container is the session's default (per graph in process), an empty shared_name the node's
// name, so every session of a graph shares them. On a server, queues and accumulators without a
// shared_name belong to the session that made them instead (TensorFlow's rule, docs/CLUSTER.md):
// give one a shared_name to share it among the clients of a cluster.
#pragma once

#include <string>
#include <vector>

#include "dflow/ops.h"

namespace dflow::ops {

// ---- Resource variables ----
struct ResourceAttrs {
  std::string container;
  std::string shared_name;
};
// A DT_RESOURCE handle to the variable; it does not create it (AssignVariableOp does).
Output VarHandleOp(const Scope& scope, DType dtype, const PartialTensorShape& shape, const ResourceAttrs& attrs = {});
// A snapshot of the value; FailedPrecondition when it was never assigned. Differentiable: the
// gradient flows to the handle.
Output ReadVariableOp(const Scope& scope, Input resource, DType dtype);
// Stores `value`, creating the variable if needed.
Operation AssignVariableOp(const Scope& scope, Input resource, Input value);
Operation AssignAddVariableOp(const Scope& scope, Input resource, Input value);
Operation AssignSubVariableOp(const Scope& scope, Input resource, Input value);
Output VarIsInitializedOp(const Scope& scope, Input resource);
// Rows of the variable at `indices` (int32 or int64): shape indices.shape + variable.shape[1:].
Output ResourceGather(const Scope& scope, Input resource, Input indices, DType dtype);

// ---- Reference variables (VariableV2 / Variable::ref()) ----
// ref[indices[i], ...] = updates[i, ...]; updates of shape indices.shape + ref.shape[1:] or a
// scalar. Returns the reference.
Output ScatterUpdate(const Scope& scope, Input ref, Input indices, Input updates, bool use_locking = true);
// ref[indices[i], ...] += updates[i, ...]; duplicate indices accumulate.
Output ScatterAdd(const Scope& scope, Input ref, Input indices, Input updates, bool use_locking = false);
Output ScatterSub(const Scope& scope, Input ref, Input indices, Input updates, bool use_locking = false);
// Outputs the value of an int32/int64 scalar variable and increments it; OutOfRange
// ("Reached limit of <limit>") once the value has reached `limit`.
Output CountUpTo(const Scope& scope, Input ref, int64_t limit);

// True when the variable (a reference, VariableV2 / Variable::ref()) has a value.
Output IsVariableInitialized(const Scope& scope, Input ref);

// ---- Queues ----
struct QueueAttrs {
  // Empty, or one fully defined shape per component (needed by QueueDequeueMany).
  std::vector<PartialTensorShape> shapes;
  int64_t capacity = -1;  // < 0: unbounded
  std::string container;
  std::string shared_name;
};
struct RandomShuffleQueueAttrs {
  std::vector<PartialTensorShape> shapes;
  int64_t capacity = -1;
  int64_t min_after_dequeue = 0;
  int64_t seed = 0;  // seed and seed2 both 0: a different order every time
  int64_t seed2 = 0;
  std::string container;
  std::string shared_name;
};
Output FIFOQueue(const Scope& scope, const std::vector<DType>& component_types, const QueueAttrs& attrs = {});
Output RandomShuffleQueue(const Scope& scope, const std::vector<DType>& component_types,
                          const RandomShuffleQueueAttrs& attrs = {});
// Enqueues one element, waiting while the queue is full; timeout_ms < 0 waits without a
// deadline (the step's deadline and Session::Close still end the wait).
Operation QueueEnqueue(const Scope& scope, Input handle, const std::vector<Input>& components, int64_t timeout_ms = -1);
// Enqueues the rows (dimension 0) of each component as elements.
Operation QueueEnqueueMany(const Scope& scope, Input handle, const std::vector<Input>& components,
                           int64_t timeout_ms = -1);
// Dequeues one element (one Output per component), waiting while the queue is empty;
// OutOfRange once it is closed and empty.
std::vector<Output> QueueDequeue(const Scope& scope, Input handle, const std::vector<DType>& component_types,
                                 int64_t timeout_ms = -1);
// Dequeues n elements, each component batched along a new dimension 0.
std::vector<Output> QueueDequeueMany(const Scope& scope, Input handle, Input n,
                                     const std::vector<DType>& component_types, int64_t timeout_ms = -1);
// Later enqueues fail; pending and later dequeues drain what is left. With
// cancel_pending_enqueues, enqueues that wait for room fail at once.
Operation QueueClose(const Scope& scope, Input handle, bool cancel_pending_enqueues = false);
Output QueueSize(const Scope& scope, Input handle);

// ---- Gradient accumulators (synchronous replicas) ----
// TensorFlow's ResourceConditionalAccumulator family: gradients of one global step from several
// replicas, aggregated. A gradient whose local_step is older than the accumulator's global step
// is dropped and counted (AccumulatorNumDropped).
struct ConditionalAccumulatorAttrs {
  std::string container;
  std::string shared_name;
  std::string reduction_type = "MEAN";  // or "SUM"
  // dflow's addition: gradients beyond this many for one step are dropped and counted, so that
  // each step aggregates exactly this many; -1: no limit (TensorFlow's behaviour).
  int64_t max_gradients_per_step = -1;
};
// A handle to the accumulator of `dtype` (float or double) gradients of `shape` (created on
// first use).
Output ConditionalAccumulator(const Scope& scope, DType dtype, const PartialTensorShape& shape,
                              const ConditionalAccumulatorAttrs& attrs = {});
// Adds `gradient` computed at `local_step` (int64 scalar) unless that step is stale.
Operation AccumulatorApplyGradient(const Scope& scope, Input handle, Input local_step, Input gradient);
// Waits until `num_required` (int32 scalar >= 1) gradients are there; returns their mean (or
// sum), resets the accumulator and increments its global step. The step's cancellation and
// deadline end the wait.
Output AccumulatorTakeGradient(const Scope& scope, Input handle, Input num_required, DType dtype);
// Gradients accumulated for the current step (int32).
Output AccumulatorNumAccumulated(const Scope& scope, Input handle);
// Sets the accumulator's global step (int64 scalar).
Operation AccumulatorSetGlobalStep(const Scope& scope, Input handle, Input new_global_step);
// Stale gradients dropped since the accumulator was made (int64; dflow's own op).
Output AccumulatorNumDropped(const Scope& scope, Input handle);

// ---- Mutexes ----
// A handle to a mutex (created on first lock).
Output Mutex(const Scope& scope, const ResourceAttrs& attrs = {});
// Waits for the mutex; the output holds it until its last copy is destroyed. Ops of the
// critical section take a control dependency on it.
Output MutexLock(const Scope& scope, Input mutex);
// Keeps `mutex_lock` (and so the mutex) held until this op runs; give it control dependencies
// on the last ops of the critical section.
Operation ConsumeMutexLock(const Scope& scope, Input mutex_lock);

}  // namespace dflow::ops
