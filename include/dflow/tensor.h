// Tensor: a typed n-dimensional array over a shared, reference-counted, 64-byte aligned buffer.
//
// Copies are cheap (they share the buffer); Slice() shares it too. A Tensor is a value: it is
// safe to read one from many threads, and writers must own the buffer alone (RefCountIsOne()) or
// copy first. Strings are stored as std::string elements, variants as Variant.
#pragma once

#include <cassert>
#include <cstdint>
#include <cstring>
#include <iosfwd>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/types/span.h"
#include "dflow/dtype.h"
#include "dflow/status.h"
#include "dflow/tensor_shape.h"

namespace dflow {

constexpr size_t kTensorAlignment = 64;

// Defined inside dflow (the reference-counted storage behind Tensors, and the budget that some
// buffers are charged to); Tensor only holds pointers to them.
class TensorBuffer;
class MemoryBudget;
struct ResourceHandle;
struct Variant;

class Tensor {
 public:
  Tensor() = default;  // not initialized: dtype() == DT_INVALID
  // A zero-filled tensor (empty strings for DT_STRING). Aborts the process only when memory runs
  // out; use Allocate() where the size comes from outside.
  Tensor(DType dtype, const TensorShape& shape);
  // Scalars.
  explicit Tensor(float v);
  explicit Tensor(double v);
  explicit Tensor(int32_t v);
  explicit Tensor(int64_t v);
  explicit Tensor(bool v);
  explicit Tensor(std::string v);
  explicit Tensor(const char* v) : Tensor(std::string(v)) {}
  explicit Tensor(ResourceHandle h);
  explicit Tensor(Variant v);

  // Allocates without zeroing numbers; ResourceExhausted when memory runs out.
  static StatusOr<Tensor> Allocate(DType dtype, const TensorShape& shape);
  // The same, charged to `budget` (a task's memory limit, inside dflow) until the buffer is
  // freed: ResourceExhausted, before any memory is taken, when the budget cannot cover it. A
  // null budget is the plain Allocate.
  static StatusOr<Tensor> Allocate(DType dtype, const TensorShape& shape, const std::shared_ptr<MemoryBudget>& budget);
  // A tensor holding `values` in row-major order; InvalidArgument if the count does not match.
  template <typename T>
  static StatusOr<Tensor> FromValues(absl::Span<const T> values, const TensorShape& shape);

  Tensor(const Tensor& o) : dtype_(o.dtype_), shape_(o.shape_), buf_(o.buf_), data_(o.data_) {
    if (buf_) RefBuffer(buf_);
  }
  Tensor(Tensor&& o) noexcept : dtype_(o.dtype_), shape_(std::move(o.shape_)), buf_(o.buf_), data_(o.data_) {
    o.buf_ = nullptr;
    o.data_ = nullptr;
    o.dtype_ = DT_INVALID;
  }
  Tensor& operator=(const Tensor& o) {
    if (this != &o) {
      Tensor tmp(o);
      *this = std::move(tmp);
    }
    return *this;
  }
  Tensor& operator=(Tensor&& o) noexcept {
    if (this != &o) {
      if (buf_) UnrefBuffer(buf_);
      dtype_ = o.dtype_;
      shape_ = std::move(o.shape_);
      buf_ = o.buf_;
      data_ = o.data_;
      o.buf_ = nullptr;
      o.data_ = nullptr;
      o.dtype_ = DT_INVALID;
    }
    return *this;
  }
  ~Tensor() {
    if (buf_) UnrefBuffer(buf_);
  }

  bool IsInitialized() const { return dtype_ != DT_INVALID; }
  DType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int dims() const { return shape_.dims(); }
  int64_t dim_size(int i) const { return shape_.dim_size(i); }
  int64_t NumElements() const { return shape_.num_elements(); }
  size_t TotalBytes() const;

  template <typename T>
  T* data() {
    assert(DTypeOf<T>::value == dtype_);
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    assert(DTypeOf<T>::value == dtype_);
    return static_cast<const T*>(data_);
  }
  template <typename T>
  absl::Span<T> flat() {
    return absl::Span<T>(data<T>(), static_cast<size_t>(NumElements()));
  }
  template <typename T>
  absl::Span<const T> flat() const {
    return absl::Span<const T>(data<T>(), static_cast<size_t>(NumElements()));
  }
  template <typename T>
  T& scalar() {
    return *data<T>();
  }
  template <typename T>
  const T& scalar() const {
    return *data<T>();
  }
  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }

  // The same buffer under another shape with the same element count.
  StatusOr<Tensor> Reshaped(const TensorShape& shape) const;
  // Rows [start, limit) of dimension 0, sharing the buffer.
  StatusOr<Tensor> Slice(int64_t start, int64_t limit) const;
  // A copy that shares nothing with this tensor.
  Tensor DeepCopy() const;
  bool SharesBufferWith(const Tensor& o) const { return buf_ != nullptr && buf_ == o.buf_; }
  // True when nobody else holds this buffer, so it may be written in place.
  bool RefCountIsOne() const;

  // The values: scalars as "8", "7.5", arrays as "[3 7]", "[[1 2] [3 4]]"; each number in the
  // shortest form that reads back exactly; large arrays summarized with "...".
  std::string ToString() const;
  // "Tensor<type: float shape: [2] values: [3 7]>".
  std::string DebugString() const;

 private:
  Tensor(DType dtype, TensorShape shape, TensorBuffer* buf, void* data)
      : dtype_(dtype), shape_(std::move(shape)), buf_(buf), data_(data) {}
  static void RefBuffer(TensorBuffer* buf);
  static void UnrefBuffer(TensorBuffer* buf);

  DType dtype_ = DT_INVALID;
  TensorShape shape_;
  TensorBuffer* buf_ = nullptr;
  void* data_ = nullptr;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Shortest text that reads back to exactly `v`.
std::string FormatNumber(float v);
std::string FormatNumber(double v);

template <typename T>
StatusOr<Tensor> Tensor::FromValues(absl::Span<const T> values, const TensorShape& shape) {
  if (static_cast<int64_t>(values.size()) != shape.num_elements()) {
    return errors::InvalidArgument("Cannot make a tensor of shape ", shape.DebugString(), " from ", values.size(),
                                   " values");
  }
  DFLOW_ASSIGN_OR_RETURN(Tensor t, Allocate(DTypeOf<T>::value, shape));
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace dflow
