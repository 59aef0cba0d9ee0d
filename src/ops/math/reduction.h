// ReductionPlan: how Sum, Mean, Max, Min and Prod walk their input, and the axis handling that
// their kernels and shape functions share.
//
// The input's dimensions are merged where neighbours are both reduced or both kept (and dims of
// size 1 dropped), so reducing [2,3,4] over {1,2} is a loop over 2 rows of 12. ReduceLoop then
// reads the input once in row-major order and folds each element into its output slot; the
// innermost merged dimension is a tight loop, either into one accumulator (reduced) or along a
// row of accumulators (kept).
#pragma once

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "base/status.h"
#include "tensor/tensor.h"

namespace dflow {

class InferenceContext;

// Reads the reduction axes (a scalar or a vector, int32 or int64) of an input of rank `rank`
// into a bitmap: (*reduced)[i] is true when axis i is reduced. Negative axes count from the
// end; duplicates are allowed. InvalidArgument for an axis outside [-rank, rank) or axes of
// rank > 1.
Status ReducedAxes(int rank, const Tensor& axes, absl::InlinedVector<bool, 8>* reduced);

// The shape function of the reductions (Sum, Mean, Max, Min, Prod, All, Any): inputs `input`
// and `reduction_indices`, attr keep_dims.
Status ReductionShape(InferenceContext* c);

struct ReductionPlan {
  TensorShape output_shape;  // reduced dims dropped, or kept as 1 with keep_dims
  // Merged input dims, outermost first; never empty. Their product is the input's size.
  DimVector dims;
  absl::InlinedVector<bool, 4> reduced;  // per merged dim
  DimVector out_strides;                 // output element stride per merged dim; 0 where reduced
  int64_t reduced_count = 1;             // input elements folded into each output element
};

StatusOr<ReductionPlan> MakeReductionPlan(const TensorShape& input, const Tensor& axes, bool keep_dims);

// Folds every input element into acc[its output index] with acc = combine(acc, x). `acc` has
// one slot per output element, initialized by the caller to the reduction's identity.
template <typename T, typename Acc, typename Combine>
void ReduceLoop(const ReductionPlan& p, const T* in, Acc* acc, Combine combine) {
  const int rank = static_cast<int>(p.dims.size());
  int64_t total = 1;
  for (int64_t d : p.dims) total *= d;
  if (total == 0) return;
  const int64_t inner = p.dims[rank - 1];
  const bool inner_reduced = p.reduced[rank - 1];
  absl::InlinedVector<int64_t, 4> index(rank, 0);
  int64_t oo = 0;
  for (int64_t done = 0; done < total; done += inner) {
    const T* x = in + done;
    if (inner_reduced) {
      Acc a = acc[oo];
      for (int64_t j = 0; j < inner; ++j) a = combine(a, x[j]);
      acc[oo] = a;
    } else {
      Acc* o = acc + oo;
      for (int64_t j = 0; j < inner; ++j) o[j] = combine(o[j], x[j]);
    }
    for (int d = rank - 2; d >= 0; --d) {
      oo += p.out_strides[d];
      if (++index[d] < p.dims[d]) break;
      oo -= p.out_strides[d] * p.dims[d];
      index[d] = 0;
    }
  }
}

}  // namespace dflow
