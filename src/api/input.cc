// Input::Initializer: values written in code, and their conversion to a wanted dtype.
#include <cmath>

#include "base/status.h"
#include "dflow/scope.h"

namespace dflow {
namespace {

// Converts numeric `t` to `dtype`; InvalidArgument when a value would change.
StatusOr<Tensor> ConvertNumeric(const Tensor& t, DType dtype) {
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(dtype, t.shape()));
  Status status;
  bool ok_in = VisitPOD(t.dtype(), [&]<typename S>() {
    bool ok_out = VisitPOD(dtype, [&]<typename D>() {
      const S* src = t.data<S>();
      D* dst = out.data<D>();
      for (int64_t i = 0; i < t.NumElements(); ++i) {
        D v = static_cast<D>(src[i]);
        // Rounding into a floating type is fine; an integer must hold the value exactly.
        bool exact = std::is_floating_point_v<D> ||
                     (static_cast<double>(src[i]) == std::trunc(static_cast<double>(src[i])) &&
                      static_cast<double>(v) == static_cast<double>(src[i]));
        if (!exact && status.ok()) {
          status = errors::InvalidArgument("Cannot convert ", FormatNumber(static_cast<double>(src[i])), " to ",
                                           DTypeString(dtype), " without changing it");
        }
        dst[i] = v;
      }
    });
    if (!ok_out) status = errors::InvalidArgument("Cannot convert to ", DTypeString(dtype));
  });
  if (!ok_in) return errors::InvalidArgument("Cannot convert a ", DTypeString(t.dtype()), " value");
  RETURN_IF_ERROR(status);
  return out;
}

}  // namespace

Input::Initializer::Initializer(std::initializer_list<Initializer> rows) : literal(true) {
  if (rows.size() == 0) {
    tensor = Tensor(DT_FLOAT, TensorShape{0});
    return;
  }
  const Initializer& first = *rows.begin();
  // Literal rows of mixed number types widen to the first row's type where exact ({1, 2.5} is
  // a double list only if written so: the widest type wins).
  DType dtype = first.tensor.dtype();
  for (const Initializer& r : rows) {
    if (!r.status.ok()) {
      status = r.status;
      return;
    }
    if (r.tensor.dtype() != dtype) {
      bool num = IsNumeric(dtype) && IsNumeric(r.tensor.dtype()) && r.literal;
      if (num && (r.tensor.dtype() == DT_DOUBLE || (r.tensor.dtype() == DT_FLOAT && dtype != DT_DOUBLE) ||
                  (r.tensor.dtype() == DT_INT64 && IsInteger(dtype)))) {
        dtype = r.tensor.dtype();
      } else if (!num) {
        status = errors::InvalidArgument("Initializer list mixes ", DTypeString(dtype), " and ",
                                         DTypeString(r.tensor.dtype()));
        return;
      }
    }
    if (r.tensor.shape() != first.tensor.shape()) {
      status = errors::InvalidArgument("Initializer list rows have different shapes: ",
                                       first.tensor.shape().DebugString(), " and ", r.tensor.shape().DebugString());
      return;
    }
  }
  TensorShape shape;
  Status s = shape.AddDim(static_cast<int64_t>(rows.size()));
  for (int64_t d : first.tensor.shape().dim_sizes())
    if (s.ok()) s = shape.AddDim(d);
  if (!s.ok()) {
    status = s;
    return;
  }
  auto out = Tensor::Allocate(dtype, shape);
  if (!out.ok()) {
    status = out.status();
    return;
  }
  tensor = *out;
  int64_t row = first.tensor.NumElements();
  int64_t i = 0;
  for (const Initializer& r : rows) {
    Tensor v = r.tensor;
    if (v.dtype() != dtype) {
      auto c = ConvertNumeric(v, dtype);
      if (!c.ok()) {
        status = c.status();
        return;
      }
      v = *c;
    }
    if (dtype == DT_STRING) {
      for (int64_t j = 0; j < row; ++j) tensor.data<std::string>()[i * row + j] = v.data<std::string>()[j];
    } else if (row > 0) {
      size_t bytes = static_cast<size_t>(row) * DTypeSize(dtype);
      std::memcpy(static_cast<char*>(tensor.raw_data()) + i * bytes, v.raw_data(), bytes);
    }
    ++i;
  }
}

StatusOr<Tensor> Input::Initializer::AsType(DType dtype) const {
  RETURN_IF_ERROR(status);
  if (tensor.dtype() == dtype || dtype == DT_INVALID) return tensor;
  if (!literal || !IsNumeric(dtype) || !IsNumeric(tensor.dtype())) {
    return errors::InvalidArgument("Expected a ", DTypeString(dtype), " value but got ", DTypeString(tensor.dtype()));
  }
  return ConvertNumeric(tensor, dtype);
}

}  // namespace dflow
