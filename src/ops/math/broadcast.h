// BroadcastPlan: how the two inputs of a binary element-wise op line up with its output under
// NumPy broadcasting, reduced to the fewest dimensions that describe it.
//
// Adjacent output dimensions are merged when both inputs behave alike across them (both
// present, or one of them broadcast), and dimensions of size 1 are dropped, so [2,3,4] + [4]
// becomes a loop of 6 rows of 4 with x stepping by 4 per row and y by 0. Kernels walk the
// plan with BroadcastLoop below; the innermost dimension is a tight loop specialised for
// vector/vector, vector/scalar and scalar/vector operands.
#pragma once

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "base/status.h"
#include "tensor/tensor_shape.h"

namespace dflow {

struct BroadcastPlan {
  TensorShape output_shape;
  // The merged output dimensions, outermost first; never empty (a single element is {1}).
  absl::InlinedVector<int64_t, 4> dims;
  // Element strides of x and y along each merged dimension: 0 where that input is broadcast.
  absl::InlinedVector<int64_t, 4> x_strides;
  absl::InlinedVector<int64_t, 4> y_strides;
};

// Plans x (op) y. InvalidArgument "Incompatible shapes: [2,3] vs. [4]" when they do not
// broadcast, or when the output would have too many elements.
StatusOr<BroadcastPlan> MakeBroadcastPlan(const TensorShape& x, const TensorShape& y);

// The axes of the broadcast output along which the gradient must be summed to give the gradient
// of x and of y (TensorFlow's BroadcastGradientArgs): where one operand is 1 (or missing) and
// the other is not, and where both are 1. Identical shapes need no reduction at all. The dims
// must be non-negative; InvalidArgument when the shapes do not broadcast.
Status BroadcastGradientAxes(absl::Span<const int64_t> x, absl::Span<const int64_t> y, DimVector* rx, DimVector* ry);

// Calls out[i] = fn(x[...], y[...]) for every output element in row-major order, reading the
// inputs through the plan's strides. `fn` is any callable (TOut(const TIn&, const TIn&)); it is
// inlined, not type-erased. The plan's output must have at least one element.
template <typename TIn, typename TOut, typename Fn>
void BroadcastLoop(const BroadcastPlan& p, const TIn* x, const TIn* y, TOut* out, Fn fn) {
  const int rank = static_cast<int>(p.dims.size());
  const int64_t inner = p.dims[rank - 1];
  const int64_t sx = p.x_strides[rank - 1];
  const int64_t sy = p.y_strides[rank - 1];
  const int64_t total = p.output_shape.num_elements();
  absl::InlinedVector<int64_t, 4> index(rank, 0);
  int64_t xo = 0, yo = 0;
  for (int64_t done = 0; done < total; done += inner) {
    const TIn* xr = x + xo;
    const TIn* yr = y + yo;
    if (sx != 0 && sy != 0) {
      for (int64_t i = 0; i < inner; ++i) out[i] = fn(xr[i], yr[i]);
    } else if (sx != 0) {
      const TIn& b = *yr;
      for (int64_t i = 0; i < inner; ++i) out[i] = fn(xr[i], b);
    } else if (sy != 0) {
      const TIn& a = *xr;
      for (int64_t i = 0; i < inner; ++i) out[i] = fn(a, yr[i]);
    } else {
      for (int64_t i = 0; i < inner; ++i) out[i] = fn(*xr, *yr);
    }
    out += inner;
    // Advance the outer index (the innermost dimension was covered by the loop above).
    for (int d = rank - 2; d >= 0; --d) {
      xo += p.x_strides[d];
      yo += p.y_strides[d];
      if (++index[d] < p.dims[d]) break;
      xo -= p.x_strides[d] * p.dims[d];
      yo -= p.y_strides[d] * p.dims[d];
      index[d] = 0;
    }
  }
}

}  // namespace dflow
