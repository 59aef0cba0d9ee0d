#include "dflow/array_ops.h"

#include "graph/graph.h"

namespace dflow::ops {
namespace {

Output Out(const Operation& op) { return op.valid() ? Output(op, 0) : Output(); }

// One Output per output of `op` (none if building failed).
std::vector<Output> Outs(const Operation& op) {
  std::vector<Output> out;
  if (!op.valid()) return out;
  for (int i = 0; i < op.num_outputs(); ++i) out.emplace_back(op, i);
  return out;
}

// `in` as an Output: literals become Consts of `dtype` (DT_INVALID: their own type).
Output AsOutput(const Scope& scope, const Input& in, DType dtype) {
  if (!in.is_initializer()) return in.output();
  StatusOr<Tensor> t = in.initializer().AsType(dtype);
  if (!t.ok()) {
    scope.UpdateStatus(t.status());
    return Output();
  }
  return Const(scope, Input::Initializer(*t));
}

}  // namespace

Output Concat(const Scope& scope, const std::vector<Input>& values, Input axis) {
  if (values.size() == 1) return Identity(scope, values[0]);
  std::vector<Input> inputs(values.begin(), values.end());
  inputs.push_back(std::move(axis));
  return Out(BuildOp(scope, "ConcatV2", inputs, {}, "concat"));
}

std::vector<Output> Split(const Scope& scope, Input axis, Input value, int64_t num_split) {
  return Outs(BuildOp(scope, "Split", {std::move(axis), std::move(value)}, {{"num_split", num_split}}, "split"));
}

std::vector<Output> SplitV(const Scope& scope, Input value, Input size_splits, Input axis, int64_t num_split) {
  return Outs(BuildOp(scope, "SplitV", {std::move(value), std::move(size_splits), std::move(axis)},
                      {{"num_split", num_split}}, "split"));
}

std::vector<Output> DynamicPartition(const Scope& scope, Input data, Input partitions, int64_t num_partitions) {
  return Outs(BuildOp(scope, "DynamicPartition", {std::move(data), std::move(partitions)},
                      {{"num_partitions", num_partitions}}));
}

Output Stack(const Scope& scope, const std::vector<Input>& values, int64_t axis) {
  return Out(BuildOp(scope, "Pack", values, {{"axis", axis}}, "stack"));
}

std::vector<Output> Unstack(const Scope& scope, Input value, int64_t num, int64_t axis) {
  return Outs(BuildOp(scope, "Unpack", {std::move(value)}, {{"num", num}, {"axis", axis}}, "unstack"));
}

Output Slice(const Scope& scope, Input input, Input begin, Input size) {
  return Out(BuildOp(scope, "Slice", {std::move(input), std::move(begin), std::move(size)}));
}

Output StridedSlice(const Scope& scope, Input input, Input begin, Input end, Input strides,
                    const StridedSliceAttrs& a) {
  return Out(BuildOp(scope, "StridedSlice", {std::move(input), std::move(begin), std::move(end), std::move(strides)},
                     {{"begin_mask", a.begin_mask},
                      {"end_mask", a.end_mask},
                      {"ellipsis_mask", a.ellipsis_mask},
                      {"new_axis_mask", a.new_axis_mask},
                      {"shrink_axis_mask", a.shrink_axis_mask}}));
}

Output Pad(const Scope& scope, Input input, Input paddings) {
  return Out(BuildOp(scope, "Pad", {std::move(input), std::move(paddings)}));
}

Output PadV2(const Scope& scope, Input input, Input paddings, Input constant_values) {
  return Out(BuildOp(scope, "PadV2", {std::move(input), std::move(paddings), std::move(constant_values)}));
}

Output Transpose(const Scope& scope, Input x, Input perm) {
  return Out(BuildOp(scope, "Transpose", {std::move(x), std::move(perm)}, {}, "transpose"));
}

Output InvertPermutation(const Scope& scope, Input x) {
  return Out(BuildOp(scope, "InvertPermutation", {std::move(x)}));
}

Output ExpandDims(const Scope& scope, Input input, Input axis) {
  return Out(BuildOp(scope, "ExpandDims", {std::move(input), std::move(axis)}));
}

Output Squeeze(const Scope& scope, Input input, const std::vector<int64_t>& axis) {
  return Out(BuildOp(scope, "Squeeze", {std::move(input)}, {{"squeeze_dims", axis}}));
}

Output Tile(const Scope& scope, Input input, Input multiples) {
  return Out(BuildOp(scope, "Tile", {std::move(input), std::move(multiples)}));
}

Output BroadcastTo(const Scope& scope, Input input, Input shape) {
  return Out(BuildOp(scope, "BroadcastTo", {std::move(input), std::move(shape)}));
}

Output Gather(const Scope& scope, Input params, Input indices, Input axis, int64_t batch_dims) {
  return Out(BuildOp(scope, "GatherV2", {std::move(params), std::move(indices), std::move(axis)},
                     {{"batch_dims", batch_dims}}));
}

Output OneHot(const Scope& scope, Input indices, Input depth, Input on_value, Input off_value, int64_t axis) {
  return Out(BuildOp(scope, "OneHot", {std::move(indices), std::move(depth), std::move(on_value), std::move(off_value)},
                     {{"axis", axis}}));
}

Output DynamicStitch(const Scope& scope, const std::vector<Input>& indices, const std::vector<Input>& data) {
  if (!scope.ok()) return Output();
  if (indices.size() != data.size()) {
    scope.UpdateStatus(errors::InvalidArgument("DynamicStitch: ", indices.size(), " index tensors but ", data.size(),
                                               " data tensors"));
    return Output();
  }
  // Two list inputs: the literal dtypes are settled here (int32 indices; data of the first
  // Output's type), and N is given explicitly.
  DType t = DT_INVALID;
  for (const Input& d : data) {
    if (!d.is_initializer() && d.output().valid()) {
      t = BaseType(d.output().dtype());
      break;
    }
  }
  std::vector<Input> inputs;
  for (const Input& i : indices) inputs.push_back(AsOutput(scope, i, DT_INT32));
  for (const Input& d : data) inputs.push_back(AsOutput(scope, d, t));
  if (!scope.ok()) return Output();
  return Out(BuildOp(scope, "DynamicStitch", inputs, {{"N", static_cast<int64_t>(indices.size())}}));
}

Output UnsortedSegmentSum(const Scope& scope, Input data, Input segment_ids, Input num_segments) {
  return Out(BuildOp(scope, "UnsortedSegmentSum", {std::move(data), std::move(segment_ids), std::move(num_segments)}));
}

Output ZerosLike(const Scope& scope, Input x) { return Out(BuildOp(scope, "ZerosLike", {std::move(x)})); }
Output OnesLike(const Scope& scope, Input x) { return Out(BuildOp(scope, "OnesLike", {std::move(x)})); }

Output Range(const Scope& scope, Input start, Input limit, Input delta) {
  return Out(BuildOp(scope, "Range", {std::move(start), std::move(limit), std::move(delta)}));
}

Output StopGradient(const Scope& scope, Input input) { return Out(BuildOp(scope, "StopGradient", {std::move(input)})); }

Output RandomShuffle(const Scope& scope, Input value, int64_t seed) {
  if (!scope.ok()) return Output();
  return Out(BuildOp(scope, "RandomShuffle", {std::move(value)}, RandomSeedAttrs(scope, seed)));
}

Output Multinomial(const Scope& scope, Input logits, Input num_samples, int64_t seed, DType output_dtype) {
  if (!scope.ok()) return Output();
  AttrMap a = RandomSeedAttrs(scope, seed);
  a["output_dtype"] = output_dtype;
  return Out(BuildOp(scope, "Multinomial", {std::move(logits), std::move(num_samples)}, a));
}

}  // namespace dflow::ops
