#include "ops/array/array_util.h"

#include <limits>

namespace dflow::array {

Status ReadIndexVector(const Tensor& t, absl::string_view what, DimVector* out) {
  if (t.dims() != 1) {
    return errors::InvalidArgument(what, " must be a 1-D vector, got shape ", t.shape().DebugString());
  }
  out->clear();
  if (t.dtype() == DT_INT32) {
    for (int32_t d : t.flat<int32_t>()) out->push_back(d);
  } else if (t.dtype() == DT_INT64) {
    for (int64_t d : t.flat<int64_t>()) out->push_back(d);
  } else {
    return errors::InvalidArgument(what, " must be int32 or int64, not ", DTypeString(t.dtype()));
  }
  return absl::OkStatus();
}

Status ReadIndexScalar(const Tensor& t, absl::string_view what, int64_t* out, bool allow_one_element) {
  const bool ok_shape = t.dims() == 0 || (allow_one_element && t.dims() == 1 && t.dim_size(0) == 1);
  if (!ok_shape) {
    return errors::InvalidArgument(what, " must be a scalar, got shape ", t.shape().DebugString());
  }
  if (t.dtype() == DT_INT32) {
    *out = t.flat<int32_t>()[0];
  } else if (t.dtype() == DT_INT64) {
    *out = t.flat<int64_t>()[0];
  } else {
    return errors::InvalidArgument(what, " must be int32 or int64, not ", DTypeString(t.dtype()));
  }
  return absl::OkStatus();
}

Status CanonicalAxis(int64_t axis, int rank, absl::string_view what, int* out) {
  if (axis < -int64_t{rank} || axis >= rank) {
    return errors::InvalidArgument(what, " ", axis, " is out of range for a tensor of rank ", rank, " (it must be in [",
                                   -rank, ", ", rank, "))");
  }
  *out = static_cast<int>(axis < 0 ? axis + rank : axis);
  return absl::OkStatus();
}

StatusOr<Tensor> MakeIndexTensor(DType dtype, absl::Span<const int64_t> values) {
  TensorShape s;
  s.AddDimUnchecked(static_cast<int64_t>(values.size()));
  if (dtype == DT_INT64) return Tensor::FromValues<int64_t>(values, s);
  if (dtype != DT_INT32) return errors::InvalidArgument("index type must be int32 or int64, not ", DTypeString(dtype));
  ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(DT_INT32, s));
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] > std::numeric_limits<int32_t>::max() || values[i] < std::numeric_limits<int32_t>::min()) {
      return errors::InvalidArgument("value ", values[i], " does not fit in int32");
    }
    t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
  }
  return t;
}

StatusOr<bool> ConstIndexVector(const InferenceContext* c, int input, absl::string_view what, DimVector* out) {
  const Tensor* t = c->input_tensor(input);
  if (t == nullptr) return false;
  RETURN_IF_ERROR(ReadIndexVector(*t, what, out));
  return true;
}

StatusOr<bool> ConstIndexScalar(const InferenceContext* c, int input, absl::string_view what, int64_t* out) {
  const Tensor* t = c->input_tensor(input);
  if (t == nullptr) return false;
  RETURN_IF_ERROR(ReadIndexScalar(*t, what, out));
  return true;
}

}  // namespace dflow::array
