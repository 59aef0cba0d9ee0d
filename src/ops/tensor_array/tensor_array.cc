#include "ops/tensor_array/tensor_array.h"

#include <cstring>
#include <utility>

#include "framework/device.h"
#include "ops/array/array_util.h"
#include "tensor/resource_handle.h"

namespace dflow {

namespace {

StatusOr<Tensor> Zeros(DType dtype, const TensorShape& shape) {
  ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  if (dtype != DT_STRING && t.TotalBytes() > 0) std::memset(t.raw_data(), 0, t.TotalBytes());
  return t;
}

StatusOr<Tensor> Add(const Tensor& a, const Tensor& b) {
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(a.dtype(), a.shape()));
  bool ok = VisitNumeric(a.dtype(), [&]<typename T>() {
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    T* z = out.data<T>();
    for (int64_t i = 0, n = a.NumElements(); i < n; ++i) z[i] = x[i] + y[i];
  });
  if (!ok) return errors::InvalidArgument("TensorArray: cannot add up elements of type ", DTypeString(a.dtype()));
  return out;
}

}  // namespace

TensorArray::TensorArray(std::string name, int64_t size, Options opts)
    : name_(std::move(name)), opts_(std::move(opts)), elems_(static_cast<size_t>(size)) {}

Status TensorArray::CheckOpen() const {
  if (closed_) return errors::InvalidArgument("TensorArray ", name_, " has already been closed.");
  return absl::OkStatus();
}

Status TensorArray::LockedWrite(int64_t index, const Tensor& value) {
  RETURN_IF_ERROR(CheckOpen());
  if (index < 0) {
    return errors::InvalidArgument("TensorArray ", name_, ": Tried to write to index ", index,
                                   " but array size is: ", elems_.size());
  }
  if (static_cast<size_t>(index) >= elems_.size()) {
    if (!opts_.dynamic_size) {
      return errors::InvalidArgument("TensorArray ", name_, ": Tried to write to index ", index,
                                     " but array is not resizeable and size is: ", elems_.size());
    }
    elems_.resize(static_cast<size_t>(index) + 1);
  }
  if (value.dtype() != opts_.dtype) {
    return errors::InvalidArgument("TensorArray ", name_, ": Could not write to TensorArray index ", index,
                                   " because the value dtype is ", DTypeString(value.dtype()),
                                   " but TensorArray dtype is ", DTypeString(opts_.dtype), ".");
  }
  if (!opts_.element_shape.IsCompatibleWith(value.shape())) {
    return errors::InvalidArgument("TensorArray ", name_, ": Could not write to TensorArray index ", index,
                                   " because the value shape is ", value.shape().DebugString(),
                                   " which is incompatible with the TensorArray's inferred element shape: ",
                                   opts_.element_shape.DebugString(), " (consider setting infer_shape=False).");
  }
  if (opts_.identical_element_shapes && !opts_.element_shape.IsFullyDefined()) {
    opts_.element_shape = PartialTensorShape(value.shape());
  }
  Elem& e = elems_[static_cast<size_t>(index)];
  if (e.cleared) {
    return errors::InvalidArgument("TensorArray ", name_, ": Could not write to TensorArray index ", index,
                                   " because it has already been read and cleared.");
  }
  if (e.written) {
    if (!opts_.multiple_writes_aggregate) {
      return errors::InvalidArgument("TensorArray ", name_, ": Could not write to TensorArray index ", index,
                                     " because it has already been written to.");
    }
    if (e.tensor.shape() != value.shape()) {
      return errors::InvalidArgument("TensorArray ", name_, ": Could not aggregate to TensorArray index ", index,
                                     " because the existing shape is ", e.tensor.shape().DebugString(),
                                     " but the new input shape is ", value.shape().DebugString(), ".");
    }
    ASSIGN_OR_RETURN(e.tensor, Add(e.tensor, value));
    return absl::OkStatus();
  }
  e.tensor = value;
  e.written = true;
  return absl::OkStatus();
}

Status TensorArray::LockedRead(int64_t index, Tensor* out) {
  RETURN_IF_ERROR(CheckOpen());
  if (index < 0 || static_cast<size_t>(index) >= elems_.size()) {
    return errors::InvalidArgument("Tried to read from index ", index, " but array size is: ", elems_.size());
  }
  Elem& e = elems_[static_cast<size_t>(index)];
  if (e.cleared) {
    return errors::InvalidArgument("TensorArray ", name_, ": Could not read index ", index,
                                   " twice because it was cleared after a previous read (perhaps try setting "
                                   "clear_after_read = false?).");
  }
  if (!e.written) {
    if (!opts_.element_shape.IsFullyDefined()) {
      return errors::InvalidArgument("TensorArray ", name_, ": Could not read from TensorArray index ", index,
                                     ".  Furthermore, the element shape is not fully defined: ",
                                     opts_.element_shape.DebugString(),
                                     ".  It is possible you are working with a resizeable TensorArray and "
                                     "stop_gradients is not allowing the gradients to be written.  If you set the "
                                     "full element_shape property on the forward TensorArray, the proper all-zeros "
                                     "tensor will be returned instead of incurring this error.");
    }
    ASSIGN_OR_RETURN(TensorShape s, opts_.element_shape.ToTensorShape());
    ASSIGN_OR_RETURN(*out, Zeros(opts_.dtype, s));
    return absl::OkStatus();
  }
  *out = e.tensor;
  if (opts_.clear_after_read) {
    e.tensor = Tensor();
    e.cleared = true;
  }
  return absl::OkStatus();
}

Status TensorArray::Write(int64_t index, const Tensor& value) {
  std::lock_guard<std::mutex> l(mu_);
  return LockedWrite(index, value);
}

Status TensorArray::WriteMany(absl::Span<const int64_t> indices, absl::Span<const Tensor> values) {
  std::lock_guard<std::mutex> l(mu_);
  for (size_t i = 0; i < indices.size(); ++i) RETURN_IF_ERROR(LockedWrite(indices[i], values[i]));
  return absl::OkStatus();
}

Status TensorArray::Read(int64_t index, Tensor* out) {
  std::lock_guard<std::mutex> l(mu_);
  return LockedRead(index, out);
}

Status TensorArray::ReadMany(absl::Span<const int64_t> indices, std::vector<Tensor>* out) {
  std::lock_guard<std::mutex> l(mu_);
  out->resize(indices.size());
  for (size_t i = 0; i < indices.size(); ++i) RETURN_IF_ERROR(LockedRead(indices[i], &(*out)[i]));
  return absl::OkStatus();
}

Status TensorArray::ReadAll(std::vector<Tensor>* out) {
  std::lock_guard<std::mutex> l(mu_);
  RETURN_IF_ERROR(CheckOpen());
  out->resize(elems_.size());
  for (size_t i = 0; i < elems_.size(); ++i) RETURN_IF_ERROR(LockedRead(static_cast<int64_t>(i), &(*out)[i]));
  return absl::OkStatus();
}

Status TensorArray::CheckOrResizeForSplit(int64_t n) {
  std::lock_guard<std::mutex> l(mu_);
  RETURN_IF_ERROR(CheckOpen());
  if (static_cast<int64_t>(elems_.size()) == n) return absl::OkStatus();
  if (!opts_.dynamic_size) {
    return errors::InvalidArgument("TensorArray's size is not equal to the size of lengths (", elems_.size(), " vs. ",
                                   n, "), and the TensorArray is not marked as dynamically resizeable");
  }
  if (static_cast<int64_t>(elems_.size()) < n) elems_.resize(static_cast<size_t>(n));
  return absl::OkStatus();
}

StatusOr<int32_t> TensorArray::Size() {
  std::lock_guard<std::mutex> l(mu_);
  RETURN_IF_ERROR(CheckOpen());
  return static_cast<int32_t>(elems_.size());
}

void TensorArray::Close() {
  std::lock_guard<std::mutex> l(mu_);
  closed_ = true;
  elems_.clear();
  grads_.clear();
}

StatusOr<PartialTensorShape> TensorArray::ElementShape() {
  std::lock_guard<std::mutex> l(mu_);
  return opts_.element_shape;
}

StatusOr<std::shared_ptr<TensorArray>> TensorArray::Grad(const std::string& source,
                                                         const std::vector<int64_t>& prepend) {
  std::lock_guard<std::mutex> l(mu_);
  RETURN_IF_ERROR(CheckOpen());
  auto it = grads_.find(source);
  if (it != grads_.end()) return it->second;
  Options g;
  g.dtype = opts_.dtype;
  g.element_shape = opts_.element_shape;
  if (!prepend.empty() && !g.element_shape.unknown_rank()) {
    std::vector<int64_t> dims(prepend);
    dims.insert(dims.end(), g.element_shape.dim_sizes().begin(), g.element_shape.dim_sizes().end());
    ASSIGN_OR_RETURN(g.element_shape, PartialTensorShape::FromDims(dims));
  }
  g.dynamic_size = false;
  g.clear_after_read = true;
  g.identical_element_shapes = opts_.identical_element_shapes;
  g.multiple_writes_aggregate = true;
  g.is_grad = true;
  auto ga = std::make_shared<TensorArray>(name_ + "@" + source, static_cast<int64_t>(elems_.size()), std::move(g));
  grads_.emplace(source, ga);
  return ga;
}

StatusOr<std::shared_ptr<TensorArray>> GetTensorArray(OpKernelContext* ctx, int i) {
  const Tensor& t = ctx->input(i);
  const OpKernel& k = ctx->op_kernel();
  if (t.dtype() != DT_RESOURCE || t.NumElements() != 1) {
    return errors::InvalidArgument(k.type_string(), " '", k.name(), "': the handle must be a resource scalar, got a ",
                                   DTypeString(t.dtype()), " tensor of shape ", t.shape().DebugString());
  }
  const ResourceHandle& h = *t.data<ResourceHandle>();
  if (h.type_name != kTensorArrayKind || h.payload == nullptr) {
    return errors::InvalidArgument(k.type_string(), " '", k.name(), "': the handle is not a TensorArray (",
                                   h.DebugString(), ")");
  }
  return std::static_pointer_cast<TensorArray>(h.payload);
}

Tensor TensorArrayHandle(OpKernelContext* ctx, std::shared_ptr<TensorArray> ta) {
  ResourceHandle h;
  h.device = ctx->step().device != nullptr ? ctx->step().device->name() : "";
  h.name = ta->name();
  h.type_name = kTensorArrayKind;
  h.payload = std::move(ta);
  return Tensor(std::move(h));
}

StatusOr<Tensor> ConcatParts(DType dtype, const std::vector<Tensor>& parts, const TensorShape& shape) {
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(dtype, shape));
  bool ok = array::VisitStorage(dtype, [&]<typename E>() {
    E* dst = static_cast<E*>(out.raw_data());
    for (const Tensor& p : parts) {
      const E* src = static_cast<const E*>(p.raw_data());
      const int64_t n = p.NumElements();
      if constexpr (std::is_same_v<E, std::string>) {
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
      } else if (n > 0) {
        std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(E));
      }
      dst += n;
    }
  });
  if (!ok) return errors::InvalidArgument("TensorArray: cannot concatenate elements of type ", DTypeString(dtype));
  return out;
}

}  // namespace dflow
