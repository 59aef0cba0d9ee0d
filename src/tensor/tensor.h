// Tensor: a typed n-dimensional array over a shared, reference-counted, 64-byte aligned buffer.
//
// Copies are cheap (they share the buffer); Slice() shares it too. A Tensor is a value: it is
// safe to read one from many threads, and writers must own the buffer alone (RefCountIsOne()) or
// copy first. Strings are stored as std::string elements, variants as Variant.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <iosfwd>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/types/span.h"
#include "base/logging.h"
#include "base/status.h"
#include "tensor/dtype.h"
#include "tensor/resource_handle.h"
#include "tensor/tensor_shape.h"
#include "tensor/variant.h"

namespace dflow {

constexpr size_t kTensorAlignment = 64;

class MemoryBudget;

// The storage behind one or more Tensors. Intrusively reference counted.
class TensorBuffer {
 public:
  // Allocates `count` elements of `dtype` (strings are default-constructed; other types are left
  // uninitialized unless `zero` is set). Returns nullptr when memory runs out or the size does
  // not fit in memory at all.
  static TensorBuffer* Allocate(DType dtype, int64_t count, bool zero);

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) Destroy();
  }
  bool RefCountIsOne() const { return refs_.load(std::memory_order_acquire) == 1; }
  void* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  friend class Tensor;
  TensorBuffer() = default;
  void Destroy();

  std::atomic<int32_t> refs_{1};
  DType dtype_ = DT_INVALID;
  int64_t count_ = 0;
  size_t bytes_ = 0;
  void* data_ = nullptr;
  // The budget bytes_ were charged to (null for most buffers), released in Destroy. The header
  // stays within one 64-byte block with it.
  std::shared_ptr<MemoryBudget> budget_;
};

class Tensor {
 public:
  Tensor() = default;  // not initialized: dtype() == DT_INVALID
  // A zero-filled tensor (empty strings for DT_STRING). CHECK-fails only when memory runs out;
  // use Allocate() where the size comes from outside.
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
  // The same, charged to `budget` (tensor/memory_budget.h) until the buffer is freed:
  // ResourceExhausted, before any memory is taken, when the budget cannot cover it. A null
  // budget is the plain Allocate.
  static StatusOr<Tensor> Allocate(DType dtype, const TensorShape& shape,
                                   const std::shared_ptr<MemoryBudget>& budget);
  // A tensor holding `values` in row-major order; InvalidArgument if the count does not match.
  template <typename T>
  static StatusOr<Tensor> FromValues(absl::Span<const T> values, const TensorShape& shape);

  Tensor(const Tensor& o) : dtype_(o.dtype_), shape_(o.shape_), buf_(o.buf_), data_(o.data_) {
    if (buf_) buf_->Ref();
  }
  Tensor(Tensor&& o) noexcept
      : dtype_(o.dtype_), shape_(std::move(o.shape_)), buf_(o.buf_), data_(o.data_) {
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
      if (buf_) buf_->Unref();
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
    if (buf_) buf_->Unref();
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
    DCHECK(DTypeOf<T>::value == dtype_);
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    DCHECK(DTypeOf<T>::value == dtype_);
    return static_cast<const T*>(data_);
  }
  template <typename T>
  absl::Span<T> flat() { return absl::Span<T>(data<T>(), static_cast<size_t>(NumElements())); }
  template <typename T>
  absl::Span<const T> flat() const {
    return absl::Span<const T>(data<T>(), static_cast<size_t>(NumElements()));
  }
  template <typename T>
  T& scalar() { return *data<T>(); }
  template <typename T>
  const T& scalar() const { return *data<T>(); }
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
  bool RefCountIsOne() const { return buf_ != nullptr && buf_->RefCountIsOne(); }

  // The values: scalars as "8", "7.5", arrays as "[3 7]", "[[1 2] [3 4]]"; each number in the
  // shortest form that reads back exactly; large arrays summarized with "...".
  std::string ToString() const;
  // "Tensor<type: float shape: [2] values: [3 7]>".
  std::string DebugString() const;

 private:
  Tensor(DType dtype, TensorShape shape, TensorBuffer* buf, void* data)
      : dtype_(dtype), shape_(std::move(shape)), buf_(buf), data_(data) {}

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
    return errors::InvalidArgument("Cannot make a tensor of shape ", shape.DebugString(), " from ",
                                   values.size(), " values");
  }
  ASSIGN_OR_RETURN(Tensor t, Allocate(DTypeOf<T>::value, shape));
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace dflow
