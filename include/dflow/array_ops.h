// Public op functions of the array family (see dflow/ops.h for the conventions): joining,
// splitting, slicing, reordering and indexing tensors, and the random ops that permute or
// sample from one.
//
//   Output x = ops::Const(root, {{1, 2, 3}, {4, 5, 6}});
//   Output c = ops::Concat(root, {x, x}, 0);                          // [4,3]
//   std::vector<Output> parts = ops::Split(root, 1, x, 3);            // three [2,1]
//   Output last_col = ops::StridedSlice(root, x, {0, -1}, {0, 0}, {1, 1},
//                                       {.begin_mask = 1, .end_mask = 1, .shrink_axis_mask = 2});  // [3 6]
//
// Multi-output ops (Split, SplitV, Unstack) return one Output per piece; when building fails,
// the vector is empty and the error is in scope.status().
#pragma once

#include <cstdint>
#include <vector>

#include "dflow/ops.h"

namespace dflow::ops {

// ---- joining and splitting ----

// Concatenates `values` (at least one) along `axis` ("ConcatV2"; one value is an Identity).
Output Concat(const Scope& scope, const std::vector<Input>& values, Input axis);
// `num_split` equal pieces of `value` along `axis`.
std::vector<Output> Split(const Scope& scope, Input axis, Input value, int64_t num_split);
// Pieces of the given sizes (one may be -1: the rest) along `axis`.
std::vector<Output> SplitV(const Scope& scope, Input value, Input size_splits, Input axis, int64_t num_split);
// Stacks tensors of one shape along a new dimension `axis` ("Pack").
Output Stack(const Scope& scope, const std::vector<Input>& values, int64_t axis = 0);
inline Output Pack(const Scope& s, const std::vector<Input>& values, int64_t axis = 0) {
  return Stack(s, values, axis);
}
// The `num` slices of `value` along `axis`, which they lose ("Unpack").
std::vector<Output> Unstack(const Scope& scope, Input value, int64_t num, int64_t axis = 0);
inline std::vector<Output> Unpack(const Scope& s, Input value, int64_t num, int64_t axis = 0) {
  return Unstack(s, std::move(value), num, axis);
}

// ---- slicing and padding ----

// The box of `size` elements starting at `begin` (a size of -1 takes the rest).
Output Slice(const Scope& scope, Input input, Input begin, Input size);

// Bit i of each mask refers to entry i of begin/end/strides (TensorFlow's StridedSlice attrs).
struct StridedSliceAttrs {
  int64_t begin_mask = 0;        // ignore begin[i]: start from the first (or, striding back, the last)
  int64_t end_mask = 0;          // ignore end[i]: run to the end
  int64_t ellipsis_mask = 0;     // entry i is "...": as many full dimensions as needed
  int64_t new_axis_mask = 0;     // entry i inserts a dimension of size 1
  int64_t shrink_axis_mask = 0;  // entry i is the single index begin[i]; its dimension is removed
};
// NumPy-style slicing: input[begin:end:strides] per dimension, with the masks above.
Output StridedSlice(const Scope& scope, Input input, Input begin, Input end, Input strides,
                    const StridedSliceAttrs& attrs = {});
// Pads with zeros; paddings is [rank, 2]: elements before and after, per dimension.
Output Pad(const Scope& scope, Input input, Input paddings);
// Pads with the scalar constant_values.
Output PadV2(const Scope& scope, Input input, Input paddings, Input constant_values);

// ---- reordering dimensions ----

Output Transpose(const Scope& scope, Input x, Input perm);
Output InvertPermutation(const Scope& scope, Input x);
// Inserts a dimension of size 1 at `axis` (negative counts from the end).
Output ExpandDims(const Scope& scope, Input input, Input axis);
// Removes the listed dimensions of size 1, or every one when `axis` is empty.
Output Squeeze(const Scope& scope, Input input, const std::vector<int64_t>& axis = {});
// Repeats the input multiples[d] times along each dimension d.
Output Tile(const Scope& scope, Input input, Input multiples);
// Broadcasts the input to `shape` by NumPy's rules.
Output BroadcastTo(const Scope& scope, Input input, Input shape);

// ---- indexing ----

// The slices of params at `indices` along `axis` ("GatherV2"); an index out of range is an
// InvalidArgument error when the graph runs.
Output Gather(const Scope& scope, Input params, Input indices, Input axis = 0, int64_t batch_dims = 0);
// on_value where the new dimension (at `axis`, -1: last) equals the index, else off_value.
Output OneHot(const Scope& scope, Input indices, Input depth, Input on_value, Input off_value, int64_t axis = -1);
// merged[indices[i][j]] = data[i][j] (indices.size() == data.size()).
Output DynamicStitch(const Scope& scope, const std::vector<Input>& indices, const std::vector<Input>& data);
// outputs[k]: the rows data[i] (in order) whose partitions[i] (int32, in [0, num_partitions))
// is k; partitions' shape must start data's. The inverse of DynamicStitch.
std::vector<Output> DynamicPartition(const Scope& scope, Input data, Input partitions, int64_t num_partitions);
// output[k] = sum of data rows whose id is k (negative ids are dropped).
Output UnsortedSegmentSum(const Scope& scope, Input data, Input segment_ids, Input num_segments);

// ---- values ----

Output ZerosLike(const Scope& scope, Input x);
Output OnesLike(const Scope& scope, Input x);
// start, start + delta, ... up to but excluding limit.
Output Range(const Scope& scope, Input start, Input limit, Input delta = 1);
// The input, through which no gradient flows.
Output StopGradient(const Scope& scope, Input input);

// ---- random (stateful; `seed` 0 takes the graph seed rule, see Scope::SetRandomSeed) ----

// The value with its first dimension randomly permuted.
Output RandomShuffle(const Scope& scope, Input value, int64_t seed = 0);
// num_samples class indices per row of logits [batch, classes], drawn from softmax(logits).
Output Multinomial(const Scope& scope, Input logits, Input num_samples, int64_t seed = 0,
                   DType output_dtype = DT_INT64);

}  // namespace dflow::ops
