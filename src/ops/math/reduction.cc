#include "ops/math/reduction.h"

#include "framework/shape_inference.h"

namespace dflow {

Status ReducedAxes(int rank, const Tensor& axes, absl::InlinedVector<bool, 8>* reduced) {
  if (axes.dims() > 1) {
    return errors::InvalidArgument("reduction axes must be a scalar or a vector, got shape ",
                                   axes.shape().DebugString());
  }
  if (axes.dtype() != DT_INT32 && axes.dtype() != DT_INT64) {
    return errors::InvalidArgument("reduction axes must be int32 or int64, not ", DTypeString(axes.dtype()));
  }
  reduced->assign(rank, false);
  for (int64_t i = 0; i < axes.NumElements(); ++i) {
    const int64_t a = axes.dtype() == DT_INT32 ? axes.data<int32_t>()[i] : axes.data<int64_t>()[i];
    if (a < -rank || a >= rank) {
      return errors::InvalidArgument("Invalid reduction dimension ", a, " for input with ", rank, " dimensions");
    }
    (*reduced)[a < 0 ? a + rank : a] = true;
  }
  return absl::OkStatus();
}

StatusOr<ReductionPlan> MakeReductionPlan(const TensorShape& input, const Tensor& axes, bool keep_dims) {
  absl::InlinedVector<bool, 8> reduced;
  RETURN_IF_ERROR(ReducedAxes(input.dims(), axes, &reduced));
  // The kernels reject an axis named twice (TensorFlow's do; its shape functions allow it).
  int64_t named = 0;
  for (bool r : reduced) named += r ? 1 : 0;
  if (named != axes.NumElements()) {
    absl::InlinedVector<bool, 8> seen(input.dims(), false);
    for (int64_t i = 0; i < axes.NumElements(); ++i) {
      int64_t a = axes.dtype() == DT_INT32 ? axes.data<int32_t>()[i] : axes.data<int64_t>()[i];
      if (a < 0) a += input.dims();
      if (seen[a]) {
        return errors::InvalidArgument("Invalid reduction arguments: Axes contains duplicate dimension: ", a);
      }
      seen[a] = true;
    }
  }
  ReductionPlan p;
  for (int i = 0; i < input.dims(); ++i) {
    const int64_t d = input.dim_size(i);
    if (reduced[i]) {
      p.reduced_count *= d;  // bounded by the input's checked element count
      if (keep_dims) p.output_shape.AddDimUnchecked(1);
    } else {
      p.output_shape.AddDimUnchecked(d);
    }
    if (d == 1) continue;
    if (!p.dims.empty() && p.reduced.back() == reduced[i]) {
      p.dims.back() *= d;
    } else {
      p.dims.push_back(d);
      p.reduced.push_back(reduced[i]);
    }
  }
  if (p.dims.empty()) {
    p.dims.push_back(1);
    p.reduced.push_back(false);
  }
  const int n = static_cast<int>(p.dims.size());
  p.out_strides.assign(n, 0);
  int64_t stride = 1;
  for (int i = n - 1; i >= 0; --i) {
    if (p.reduced[i]) continue;
    p.out_strides[i] = stride;
    stride *= p.dims[i];
  }
  return p;
}

Status ReductionShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  const PartialTensorShape& axes_shape = c->input(1);
  if (axes_shape.dims() > 1) {
    return errors::InvalidArgument("reduction_indices must be a scalar or a vector, got ", axes_shape.DebugString());
  }
  bool keep_dims = false;
  RETURN_IF_ERROR(c->GetAttr("keep_dims", &keep_dims));
  const Tensor* axes = c->input_tensor(1);
  if (axes != nullptr && !in.unknown_rank()) {
    absl::InlinedVector<bool, 8> reduced;
    RETURN_IF_ERROR(ReducedAxes(in.dims(), *axes, &reduced));
    std::vector<int64_t> dims;
    for (int i = 0; i < in.dims(); ++i) {
      if (!reduced[i]) dims.push_back(in.dim_size(i));
      else if (keep_dims) dims.push_back(1);
    }
    ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
    c->set_output(0, std::move(out));
  } else if (axes_shape.dims() == 1 && axes_shape.dim_size(0) == 0) {
    c->set_output(0, in);  // no axes: nothing is reduced
  } else if (!in.unknown_rank() && keep_dims) {
    c->set_output(0, PartialTensorShape::UnknownOfRank(in.dims()));
  } else {
    c->set_output(0, PartialTensorShape());
  }
  return absl::OkStatus();
}

}  // namespace dflow
