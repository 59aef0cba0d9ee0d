#include "ops/array/strided_slice.h"

#include <algorithm>
#include <vector>

namespace dflow {
namespace {

constexpr int kNewAxis = -1;
constexpr int kShrinkAxis = -2;
constexpr int64_t kMaxSparseDims = 63;  // the masks are 64-bit; one bit is kept for the implied ellipsis

bool Bit(uint64_t mask, int64_t i) { return ((mask >> i) & 1u) != 0; }
bool Bit(int64_t mask, int64_t i) { return Bit(static_cast<uint64_t>(mask), i); }

// The sparse spec's sizes and masks are consistent with each other and with the input's rank being known.
Status CheckSparseSpec(const PartialTensorShape& input_shape, int64_t sparse_dims, const DimVector* begin,
                       const DimVector* end, const DimVector& strides, const StridedSliceMasks& masks) {
  if (input_shape.unknown_rank()) return errors::InvalidArgument("StridedSlice needs an input of known rank");
  if (sparse_dims > kMaxSparseDims) {
    return errors::InvalidArgument("StridedSlice supports at most ", kMaxSparseDims, " slice entries, got ",
                                   sparse_dims);
  }
  if (static_cast<int64_t>(strides.size()) != sparse_dims ||
      (begin && static_cast<int64_t>(begin->size()) != sparse_dims) ||
      (end && static_cast<int64_t>(end->size()) != sparse_dims)) {
    return errors::InvalidArgument("Expected begin, end, and strides to be 1D equal size tensors, but got sizes ",
                                   begin ? static_cast<int64_t>(begin->size()) : -1, ", ",
                                   end ? static_cast<int64_t>(end->size()) : -1, ", and ", strides.size());
  }
  for (int64_t m : {masks.begin, masks.end, masks.ellipsis, masks.new_axis, masks.shrink_axis}) {
    if (m < 0) return errors::InvalidArgument("StridedSlice masks must be non-negative, got ", m);
  }
  return absl::OkStatus();
}

// The dense spec's per-input-dimension flags, beside the plan's begin/end/strides.
struct DenseSliceSpec {
  std::vector<char> begin_masked, end_masked, shrink;
  std::vector<int> gather;  // per output dim: an input dim, kNewAxis or kShrinkAxis
};

// Expands the sparse spec into one entry per input dimension (plan->begin/end/strides and `dense`):
// the ellipsis (implied at the end when absent) covers the dimensions no other entry takes.
Status ExpandSparseSpec(int rank, int64_t sparse_dims, const DimVector* begin, const DimVector* end,
                        const DimVector& strides, const StridedSliceMasks& masks, StridedSlicePlan* plan,
                        DenseSliceSpec* dense) {
  uint64_t ellipsis = static_cast<uint64_t>(masks.ellipsis) & ((uint64_t{1} << sparse_dims) - 1);
  if ((ellipsis & (ellipsis - 1)) != 0) {
    return errors::InvalidArgument("Multiple ellipses in slice spec not allowed");
  }
  // New axes after the ellipsis do not consume input dimensions, so the ellipsis covers more.
  int64_t new_axes_after_ellipsis = 0;
  bool ellipsis_seen = false;
  for (int64_t i = 0; i < sparse_dims; ++i) {
    if (ellipsis_seen && Bit(masks.new_axis, i)) ++new_axes_after_ellipsis;
    if (Bit(ellipsis, i)) ellipsis_seen = true;
  }
  int64_t n = sparse_dims;
  if (!ellipsis_seen) {
    ellipsis |= uint64_t{1} << n;
    ++n;
  }

  plan->begin.assign(rank, 0);
  plan->end.assign(rank, 0);
  plan->strides.assign(rank, 1);
  dense->begin_masked.assign(rank, 0);
  dense->end_masked.assign(rank, 0);
  dense->shrink.assign(rank, 0);
  dense->gather.clear();
  int full = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (Bit(ellipsis, i)) {
      const int64_t next = std::min<int64_t>(rank - (n - i) + 1 + new_axes_after_ellipsis, rank);
      for (; full < next; ++full) {
        dense->begin_masked[full] = dense->end_masked[full] = 1;
        dense->gather.push_back(full);
      }
    } else if (Bit(masks.new_axis, i)) {
      dense->gather.push_back(kNewAxis);
    } else {
      if (full == rank) {
        return errors::InvalidArgument("Index out of range using input dim ", full, "; input has only ", rank, " dims");
      }
      if (begin) plan->begin[full] = (*begin)[i];
      if (end) plan->end[full] = (*end)[i];
      plan->strides[full] = strides[i];
      dense->begin_masked[full] = Bit(masks.begin, i);
      dense->end_masked[full] = Bit(masks.end, i);
      if (Bit(masks.shrink_axis, i)) {
        dense->shrink[full] = 1;
        dense->gather.push_back(kShrinkAxis);
      } else {
        dense->gather.push_back(full);
      }
      ++full;
    }
  }
  return absl::OkStatus();
}

// Canonicalizes input dimension i's begin and end (where known) and sets its processing size
// (-1 where unknown) and its part of plan->is_identity.
Status CanonicalizeDim(int i, int64_t dim, bool begin_known, bool end_known, const DenseSliceSpec& dense,
                       StridedSlicePlan* plan) {
  const int64_t stride = plan->strides[i];
  if (stride == 0) return errors::InvalidArgument("strides[", i, "] must be non-zero");
  if (dense.shrink[i] && stride <= 0) return errors::InvalidArgument("only stride 1 allowed on non-range indexing.");
  if (dim < 0) {
    plan->processing_shape[i] = dense.shrink[i] ? 1 : -1;
    plan->is_identity = false;
    return absl::OkStatus();
  }
  // The first and last+1 valid positions in the walking direction.
  const int64_t lo = stride > 0 ? 0 : -1;
  const int64_t hi = stride > 0 ? dim : dim - 1;
  auto canonical = [&](int64_t x, bool masked, bool is_end) -> int64_t {
    if (masked) return (stride > 0) != is_end ? lo : hi;
    const int64_t fwd = x < 0 ? dim + x : x;
    return std::clamp(fwd, lo, hi);
  };
  const bool begin_masked = dense.begin_masked[i], end_masked = dense.end_masked[i];
  bool known = false;
  int64_t interval = 0;
  if (dense.shrink[i]) {
    if (begin_known) {
      const int64_t b = plan->begin[i] < 0 ? dim + plan->begin[i] : plan->begin[i];
      if (b < 0 || b >= dim) {
        return errors::InvalidArgument("slice index ", plan->begin[i], " of dimension ", i, " out of bounds.");
      }
      plan->begin[i] = b;
      plan->end[i] = b + 1;
    }
    interval = 1;
    known = true;
  } else {
    if (begin_known || begin_masked) plan->begin[i] = canonical(plan->begin[i], begin_masked, false);
    if (end_known || end_masked) plan->end[i] = canonical(plan->end[i], end_masked, true);
    if ((begin_known || begin_masked) && (end_known || end_masked)) {
      interval = plan->end[i] - plan->begin[i];
      known = true;
    }
  }
  if (!known) {
    plan->is_identity = false;
    return absl::OkStatus();
  }
  int64_t size = 0;
  if (interval != 0 && (interval < 0) == (stride < 0)) {
    size = interval / stride + (interval % stride != 0 ? 1 : 0);
  }
  plan->processing_shape[i] = size;
  plan->is_identity &= !dense.shrink[i] && stride == 1 && plan->begin[i] == 0 && plan->end[i] == dim;
  return absl::OkStatus();
}

}  // namespace

Status PlanStridedSlice(const PartialTensorShape& input_shape, int64_t sparse_dims, const DimVector* begin,
                        const DimVector* end, const DimVector& strides, const StridedSliceMasks& masks,
                        StridedSlicePlan* plan) {
  RETURN_IF_ERROR(CheckSparseSpec(input_shape, sparse_dims, begin, end, strides, masks));
  // The dense spec: one entry per input dimension.
  const int rank = input_shape.dims();
  DenseSliceSpec dense;
  RETURN_IF_ERROR(ExpandSparseSpec(rank, sparse_dims, begin, end, strides, masks, plan, &dense));

  plan->processing_shape.assign(rank, -1);
  plan->is_identity = true;
  for (int i = 0; i < rank; ++i) {
    RETURN_IF_ERROR(CanonicalizeDim(i, input_shape.dim_size(i), begin != nullptr, end != nullptr, dense, plan));
  }
  plan->final_shape.clear();
  for (int g : dense.gather) {
    if (g >= 0) plan->final_shape.push_back(plan->processing_shape[g]);
    else if (g == kNewAxis) plan->final_shape.push_back(1);
  }
  return absl::OkStatus();
}

}  // namespace dflow
