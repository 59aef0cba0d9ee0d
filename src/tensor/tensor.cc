#include "tensor/tensor.h"

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <ostream>

#include "tensor/memory_budget.h"

namespace dflow {
namespace {
size_t ElementSize(DType t) {
  if (t == DT_STRING) return sizeof(std::string);
  if (t == DT_RESOURCE) return sizeof(ResourceHandle);
  if (t == DT_VARIANT) return sizeof(Variant);
  return DTypeSize(t);
}
}  // namespace

void Tensor::RefBuffer(TensorBuffer* buf) { buf->Ref(); }
void Tensor::UnrefBuffer(TensorBuffer* buf) { buf->Unref(); }
bool Tensor::RefCountIsOne() const { return buf_ != nullptr && buf_->RefCountIsOne(); }

TensorBuffer* TensorBuffer::Allocate(DType dtype, int64_t count, bool zero) {
  size_t elem = ElementSize(dtype);
  if (elem == 0 && count > 0) return nullptr;
  // The header occupies one aligned block; the data follows it in the same allocation.
  constexpr size_t kHeader = (sizeof(TensorBuffer) + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  static_assert(kHeader == kTensorAlignment, "the buffer header should fit in one aligned block");
  // A size that cannot exist (a hostile shape) must not wrap around into a small allocation.
  const int64_t checked = TensorBytesOrOverflow(count, static_cast<int64_t>(elem));
  if (checked < 0 || checked > INT64_MAX - static_cast<int64_t>(2 * kTensorAlignment)) return nullptr;
  size_t bytes = static_cast<size_t>(checked);
  size_t total = kHeader + (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  // malloc, aligned by hand, rather than aligned_alloc: glibc serves aligned_alloc from the locked
  // arena every time (its per-thread cache holds only malloc's own alignment), which made a small
  // tensor's allocation and free cost ~100 ns. The pointer malloc returned is kept in the 8 bytes
  // before the header, for Destroy.
  void* raw = std::malloc(total + kTensorAlignment);
  if (raw == nullptr) return nullptr;
  const uintptr_t header = (reinterpret_cast<uintptr_t>(raw) + sizeof(void*) + kTensorAlignment - 1) &
                           ~uintptr_t{kTensorAlignment - 1};
  void* mem = reinterpret_cast<void*>(header);
  reinterpret_cast<void**>(mem)[-1] = raw;
  auto* buf = new (mem) TensorBuffer();
  buf->dtype_ = dtype;
  buf->count_ = count;
  buf->bytes_ = bytes;
  buf->data_ = static_cast<char*>(mem) + kHeader;
  if (dtype == DT_STRING) {
    auto* s = static_cast<std::string*>(buf->data_);
    for (int64_t i = 0; i < count; ++i) new (s + i) std::string();
  } else if (dtype == DT_RESOURCE) {
    auto* h = static_cast<ResourceHandle*>(buf->data_);
    for (int64_t i = 0; i < count; ++i) new (h + i) ResourceHandle();
  } else if (dtype == DT_VARIANT) {
    auto* v = static_cast<Variant*>(buf->data_);
    for (int64_t i = 0; i < count; ++i) new (v + i) Variant();
  } else if (zero && bytes > 0) {
    std::memset(buf->data_, 0, bytes);
  }
  return buf;
}

void TensorBuffer::Destroy() {
  if (dtype_ == DT_STRING) {
    auto* s = static_cast<std::string*>(data_);
    for (int64_t i = 0; i < count_; ++i) s[i].~basic_string();
  } else if (dtype_ == DT_RESOURCE) {
    auto* h = static_cast<ResourceHandle*>(data_);
    for (int64_t i = 0; i < count_; ++i) h[i].~ResourceHandle();
  } else if (dtype_ == DT_VARIANT) {
    auto* v = static_cast<Variant*>(data_);
    for (int64_t i = 0; i < count_; ++i) v[i].~Variant();
  }
  if (budget_ != nullptr) budget_->Release(static_cast<int64_t>(bytes_));
  void* raw = reinterpret_cast<void**>(this)[-1];
  this->~TensorBuffer();
  std::free(raw);
}

StatusOr<Tensor> Tensor::Allocate(DType dtype, const TensorShape& shape) {
  if (!IsValidDType(dtype)) {
    return errors::InvalidArgument("Cannot allocate a tensor of type ", DTypeString(dtype));
  }
  TensorBuffer* buf = TensorBuffer::Allocate(dtype, shape.num_elements(), /*zero=*/false);
  if (buf == nullptr) {
    return errors::ResourceExhausted("Out of memory allocating a ", DTypeString(dtype), " tensor of shape ",
                                     shape.DebugString());
  }
  return Tensor(dtype, shape, buf, buf->data());
}

StatusOr<Tensor> Tensor::Allocate(DType dtype, const TensorShape& shape, const std::shared_ptr<MemoryBudget>& budget) {
  if (budget == nullptr) return Allocate(dtype, shape);
  if (!IsValidDType(dtype)) {
    return errors::InvalidArgument("Cannot allocate a tensor of type ", DTypeString(dtype));
  }
  const int64_t bytes = TensorBytesOrOverflow(shape.num_elements(), static_cast<int64_t>(ElementSize(dtype)));
  if (bytes < 0) {
    return errors::ResourceExhausted("A ", DTypeString(dtype), " tensor of shape ", shape.DebugString(),
                                     " is too big to allocate (over 2^63 bytes)");
  }
  RETURN_IF_ERROR(budget->Charge(bytes));
  TensorBuffer* buf = TensorBuffer::Allocate(dtype, shape.num_elements(), /*zero=*/false);
  if (buf == nullptr) {
    budget->Release(bytes);
    return errors::ResourceExhausted("Out of memory allocating a ", DTypeString(dtype), " tensor of shape ",
                                     shape.DebugString());
  }
  buf->budget_ = budget;
  return Tensor(dtype, shape, buf, buf->data());
}

Tensor::Tensor(DType dtype, const TensorShape& shape) : dtype_(dtype), shape_(shape) {
  CHECK(IsValidDType(dtype)) << "bad dtype " << DTypeString(dtype);
  buf_ = TensorBuffer::Allocate(dtype, shape.num_elements(), /*zero=*/true);
  CHECK(buf_ != nullptr) << "out of memory for shape " << shape.DebugString();
  data_ = buf_->data();
}

Tensor::Tensor(float v) : Tensor(DT_FLOAT, TensorShape{}) { scalar<float>() = v; }
Tensor::Tensor(double v) : Tensor(DT_DOUBLE, TensorShape{}) { scalar<double>() = v; }
Tensor::Tensor(int32_t v) : Tensor(DT_INT32, TensorShape{}) { scalar<int32_t>() = v; }
Tensor::Tensor(int64_t v) : Tensor(DT_INT64, TensorShape{}) { scalar<int64_t>() = v; }
Tensor::Tensor(bool v) : Tensor(DT_BOOL, TensorShape{}) { scalar<bool>() = v; }
Tensor::Tensor(std::string v) : Tensor(DT_STRING, TensorShape{}) { scalar<std::string>() = std::move(v); }
Tensor::Tensor(ResourceHandle h) : Tensor(DT_RESOURCE, TensorShape{}) { scalar<ResourceHandle>() = std::move(h); }
Tensor::Tensor(Variant v) : Tensor(DT_VARIANT, TensorShape{}) { scalar<Variant>() = std::move(v); }

size_t Tensor::TotalBytes() const {
  if (dtype_ == DT_STRING) {
    size_t n = 0;
    for (const auto& s : flat<std::string>()) n += s.size();
    return n;
  }
  return static_cast<size_t>(NumElements()) * DTypeSize(dtype_);
}

StatusOr<Tensor> Tensor::Reshaped(const TensorShape& shape) const {
  if (shape.num_elements() != NumElements()) {
    return errors::InvalidArgument("Cannot reshape a tensor with ", NumElements(), " elements to shape ",
                                   shape.DebugString(), " (", shape.num_elements(), " elements)");
  }
  if (buf_) buf_->Ref();
  return Tensor(dtype_, shape, buf_, data_);
}

StatusOr<Tensor> Tensor::Slice(int64_t start, int64_t limit) const {
  if (dims() < 1) return errors::InvalidArgument("Cannot slice a scalar");
  if (start < 0 || limit < start || limit > dim_size(0)) {
    return errors::InvalidArgument("Slice [", start, ", ", limit, ") is out of range for dimension 0 of size ",
                                   dim_size(0));
  }
  TensorShape s;
  s.AddDimUnchecked(limit - start);
  for (int i = 1; i < dims(); ++i) s.AddDimUnchecked(dim_size(i));
  int64_t row = dim_size(0) == 0 ? 0 : NumElements() / dim_size(0);
  size_t elem = ElementSize(dtype_);
  if (buf_) buf_->Ref();
  return Tensor(dtype_, std::move(s), buf_, static_cast<char*>(data_) + start * row * elem);
}

Tensor Tensor::DeepCopy() const {
  if (!IsInitialized()) return Tensor();
  Tensor t = Allocate(dtype_, shape_).value();
  if (dtype_ == DT_STRING) {
    auto src = flat<std::string>();
    auto dst = t.flat<std::string>();
    for (size_t i = 0; i < src.size(); ++i) dst[i] = src[i];
  } else if (dtype_ == DT_RESOURCE) {
    auto src = flat<ResourceHandle>();
    auto dst = t.flat<ResourceHandle>();
    for (size_t i = 0; i < src.size(); ++i) dst[i] = src[i];
  } else if (dtype_ == DT_VARIANT) {
    auto src = flat<Variant>();
    auto dst = t.flat<Variant>();
    for (size_t i = 0; i < src.size(); ++i) dst[i] = src[i];
  } else if (TotalBytes() > 0) {
    std::memcpy(t.data_, data_, TotalBytes());
  }
  return t;
}

std::string FormatNumber(float v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

std::string FormatNumber(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

namespace {

constexpr int64_t kSummarizeThreshold = 1000;  // as NumPy
constexpr int64_t kEdgeItems = 3;

std::string FormatElement(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DT_FLOAT: return FormatNumber(t.data<float>()[i]);
    case DT_DOUBLE: return FormatNumber(t.data<double>()[i]);
    case DT_INT32: return std::to_string(t.data<int32_t>()[i]);
    case DT_INT64: return std::to_string(t.data<int64_t>()[i]);
    case DT_UINT8: return std::to_string(t.data<uint8_t>()[i]);
    case DT_BOOL: return t.data<bool>()[i] ? "True" : "False";
    case DT_STRING: return t.data<std::string>()[i];
    case DT_RESOURCE: return t.data<ResourceHandle>()[i].DebugString();
    case DT_VARIANT: return t.data<Variant>()[i].DebugString();
    default: return "?";
  }
}

// ToString stops here: an empty tensor of shape [1000000000, 0] would print "[]" a billion times.
constexpr size_t kMaxToStringBytes = size_t{1} << 16;

void FormatDim(const Tensor& t, int dim, int64_t offset, int64_t stride, bool summarize, std::string* out) {
  if (out->size() > kMaxToStringBytes) return;
  if (dim == t.dims()) {
    *out += FormatElement(t, offset);
    return;
  }
  int64_t n = t.dim_size(dim);
  int64_t inner = stride / (n == 0 ? 1 : n);
  *out += '[';
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      *out += " ...";
      i = n - kEdgeItems - 1;
      continue;
    }
    if (out->size() > kMaxToStringBytes) {
      *out += " ...";
      break;
    }
    if (i > 0) *out += ' ';
    FormatDim(t, dim + 1, offset + i * inner, inner, summarize, out);
  }
  *out += ']';
}

}  // namespace

std::string Tensor::ToString() const {
  if (!IsInitialized()) return "<uninitialized tensor>";
  std::string out;
  FormatDim(*this, 0, 0, NumElements(), NumElements() > kSummarizeThreshold, &out);
  return out;
}

std::string Tensor::DebugString() const {
  return absl::StrCat("Tensor<type: ", DTypeString(dtype_), " shape: ", shape_.DebugString(), " values: ", ToString(),
                      ">");
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.ToString(); }

}  // namespace dflow
