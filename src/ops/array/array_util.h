// Helpers shared by the array op kernels and shape functions: reading index tensors, checking
// axes, and moving elements of any dtype.
//
// Data-movement kernels (concat, slice, transpose, ...) do not care what an element means, only
// how it is stored, so they are written once over a storage type: uint8_t, uint16_t, uint32_t or
// uint64_t for the fixed-size types (bool, uint8, int32, float, int64, double) and std::string
// for strings. VisitStorage picks it from the dtype.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "base/status.h"
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "tensor/tensor.h"

namespace dflow::array {

// Reads a 1-D int32/int64 tensor into `out`. `what` names it in errors ("begin").
Status ReadIndexVector(const Tensor& t, absl::string_view what, DimVector* out);
// Reads a scalar (or, where `allow_one_element`, a 1-element vector) int32/int64 tensor.
Status ReadIndexScalar(const Tensor& t, absl::string_view what, int64_t* out, bool allow_one_element = false);
// Maps `axis` in [-rank, rank) onto [0, rank); InvalidArgument names `what`, the axis and the rank.
Status CanonicalAxis(int64_t axis, int rank, absl::string_view what, int* out);
// A 1-D int32 or int64 tensor holding `values`; InvalidArgument if int32 cannot hold one.
StatusOr<Tensor> MakeIndexTensor(DType dtype, absl::Span<const int64_t> values);

// InvalidArgument "<Op> '<node>': <args...>": kernel errors name the op and the node.
template <typename... Args>
Status KernelError(const OpKernel& k, const Args&... args) {
  return errors::InvalidArgument(k.type_string(), " '", k.name(), "': ", args...);
}
// `s` prefixed with "<Op> '<node>': " (OK stays OK).
inline Status KernelAnnotate(const OpKernel& k, const Status& s) {
  return s.ok() ? s : errors::Annotate(s, absl::StrCat(k.type_string(), " '", k.name(), "': "));
}

// TensorShape::FromDims with errors prefixed as KernelAnnotate does.
inline StatusOr<TensorShape> MakeShape(const OpKernel& k, absl::Span<const int64_t> dims) {
  StatusOr<TensorShape> s = TensorShape::FromDims(dims);
  if (!s.ok()) return KernelAnnotate(k, s.status());
  return s;
}

// "[2,3]" for error messages.
inline std::string ShapeStr(const Tensor& t) { return t.shape().DebugString(); }

// Calls fn.template operator()<E>() with the storage type of `dtype` (see the file comment);
// false for types without one (DT_RESOURCE, invalid).
template <typename Fn>
bool VisitStorage(DType dtype, Fn&& fn) {
  if (dtype == DT_STRING) {
    fn.template operator()<std::string>();
    return true;
  }
  switch (DTypeSize(dtype)) {
    case 1: fn.template operator()<uint8_t>(); return true;
    case 2: fn.template operator()<uint16_t>(); return true;
    case 4: fn.template operator()<uint32_t>(); return true;
    case 8: fn.template operator()<uint64_t>(); return true;
    default: return false;
  }
}

// The elements of `t` viewed as storage type E (which VisitStorage chose for t's dtype).
template <typename E>
const E* StorageData(const Tensor& t) {
  return static_cast<const E*>(t.raw_data());
}
template <typename E>
E* StorageData(Tensor* t) {
  return static_cast<E*>(t->raw_data());
}

// Copies n elements of storage type E.
template <typename E>
inline void CopyN(const E* src, int64_t n, E* dst) {
  if constexpr (std::is_trivially_copyable_v<E>) {
    if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(E));
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

// The product of dims [begin, end) of `s` (1 for an empty range). A shape with a zero
// dimension may have sub-products beyond int64 ([0, 2^40, 2^40]); those saturate at INT64_MAX,
// so callers must not loop over them unless the tensor has elements.
inline int64_t DimProduct(const TensorShape& s, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) {
    p = MultiplyWithoutOverflow(p, s.dim_size(i));
    if (p < 0) return std::numeric_limits<int64_t>::max();
  }
  return p;
}

// Row-major strides of `s`, in elements.
inline DimVector Strides(const TensorShape& s) {
  DimVector st(s.dims());
  int64_t acc = 1;
  for (int i = s.dims() - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= s.dim_size(i);
  }
  return st;
}

// Copies a strided box of `src` into contiguous `dst`: for every index (i_0, ..., i_{r-1}) of
// `dims` in row-major order, *dst++ = src[start + sum_d i_d * steps[d]]. Steps are in elements
// and may be zero (broadcasting) or negative (reversal); the caller keeps every address inside
// `src`.
template <typename E>
void GatherBox(const E* src, int64_t start, absl::Span<const int64_t> dims, absl::Span<const int64_t> steps, E* dst) {
  const int r = static_cast<int>(dims.size());
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  if (r == 0) {
    *dst = src[start];
    return;
  }
  const int64_t inner = dims[r - 1], step = steps[r - 1];
  DimVector idx(r, 0);
  int64_t off = start;
  for (int64_t done = 0; done < total; done += inner) {
    if (step == 1) {
      CopyN(src + off, inner, dst);
    } else {
      for (int64_t k = 0; k < inner; ++k) dst[k] = src[off + k * step];
    }
    dst += inner;
    for (int d = r - 2; d >= 0; --d) {
      off += steps[d];
      if (++idx[d] < dims[d]) break;
      off -= steps[d] * dims[d];
      idx[d] = 0;
    }
  }
}

// The inverse of GatherBox: dst[start + sum_d i_d * steps[d]] = *src++ (no step may be zero).
template <typename E>
void ScatterBox(const E* src, absl::Span<const int64_t> dims, absl::Span<const int64_t> steps, int64_t start, E* dst) {
  const int r = static_cast<int>(dims.size());
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  if (r == 0) {
    dst[start] = *src;
    return;
  }
  const int64_t inner = dims[r - 1], step = steps[r - 1];
  DimVector idx(r, 0);
  int64_t off = start;
  for (int64_t done = 0; done < total; done += inner) {
    if (step == 1) {
      CopyN(src, inner, dst + off);
    } else {
      for (int64_t k = 0; k < inner; ++k) dst[off + k * step] = src[k];
    }
    src += inner;
    for (int d = r - 2; d >= 0; --d) {
      off += steps[d];
      if (++idx[d] < dims[d]) break;
      off -= steps[d] * dims[d];
      idx[d] = 0;
    }
  }
}

// Sets n elements to `v`.
template <typename E>
void FillN(E* dst, int64_t n, const E& v) {
  for (int64_t i = 0; i < n; ++i) dst[i] = v;
}

// Shape-function helpers: the value of a constant 1-D or scalar index input, if known.
// Returns false (and leaves `out` alone) when the input is not a constant.
StatusOr<bool> ConstIndexVector(const InferenceContext* c, int input, absl::string_view what, DimVector* out);
StatusOr<bool> ConstIndexScalar(const InferenceContext* c, int input, absl::string_view what, int64_t* out);

}  // namespace dflow::array
