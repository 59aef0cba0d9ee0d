#include "ops/data/dataset_kernel.h"

#include <cstring>

#include "framework/device.h"
#include "framework/file_policy.h"
#include "ops/register_all.h"

namespace dflow {

DatasetOpKernel::DatasetOpKernel(OpKernelConstruction* c) : OpKernel(c) {
  if (c->node().attrs.count("output_types")) c->SetStatus(c->GetAttr("output_types", &types_));
  if (c->node().attrs.count("output_shapes")) c->SetStatus(c->GetAttr("output_shapes", &shapes_));
  if (!types_.empty() && !shapes_.empty() && types_.size() != shapes_.size()) {
    c->SetStatus(errors::InvalidArgument(c->node().op, " ", c->node().name, ": ", types_.size(), " output_types but ",
                                         shapes_.size(), " output_shapes"));
  }
}

void DatasetOpKernel::Compute(OpKernelContext* ctx) {
  OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<const DatasetBase> ds, MakeDataset(ctx));
  if (!types_.empty() && ds->output_dtypes() != types_) {
    std::string have, want;
    for (DType t : ds->output_dtypes()) absl::StrAppend(&have, have.empty() ? "" : ", ", DTypeString(t));
    for (DType t : types_) absl::StrAppend(&want, want.empty() ? "" : ", ", DTypeString(t));
    ctx->SetStatus(Error("the dataset's elements are (", have, ") but output_types says (", want, ")"));
    return;
  }
  ctx->set_output(0, DatasetToTensor(std::move(ds)));
}

StatusOr<std::shared_ptr<const DatasetBase>> DatasetOpKernel::InputDataset(OpKernelContext* ctx, int index) const {
  StatusOr<std::shared_ptr<const DatasetBase>> ds = DatasetFromTensor(ctx->input(index), "input_dataset");
  if (!ds.ok()) return errors::Annotate(ds.status(), absl::StrCat(type_string(), " ", name(), ": "));
  return ds;
}

StatusOr<std::shared_ptr<Env>> DatasetOpKernel::FileEnv(OpKernelContext* ctx,
                                                        const std::vector<std::string>& files) const {
  const Device* d = ctx->step().device;
  if (d == nullptr) return MakeFileEnv(nullptr);  // never in a session: unrestricted
  if (const FilePolicy* policy = d->file_policy(); policy != nullptr) {
    for (const std::string& f : files) {
      RETURN_IF_ERROR(errors::Annotate(policy->CheckRead(f), absl::StrCat(type_string(), " ", name(), ": ")));
    }
  }
  return d->file_env();
}

StatusOr<int64_t> DatasetOpKernel::ScalarInt(OpKernelContext* ctx, int index, absl::string_view what) const {
  const Tensor& t = ctx->input(index);
  if (t.dims() != 0) return Error(what, " must be a scalar, not of shape ", t.shape().DebugString());
  switch (t.dtype()) {
    case DT_INT64: return t.scalar<int64_t>();
    case DT_INT32: return t.scalar<int32_t>();
    case DT_BOOL: return t.scalar<bool>() ? 1 : 0;
    default: return Error(what, " must be an integer, not ", DTypeString(t.dtype()));
  }
}

Status WaitWithCancellation(IteratorContext* ctx, std::condition_variable* cv, std::unique_lock<std::mutex>* lock,
                            const std::function<bool()>& ready, absl::string_view what) {
  if (ready()) return absl::OkStatus();
  CancellationManager* cm = ctx->cancellation;
  if (cm == nullptr) {
    cv->wait(*lock, ready);
    return absl::OkStatus();
  }
  bool cancelled = false;
  std::mutex* mu = lock->mutex();
  CancellationManager::Token token = cm->NewToken();
  // The callback takes the waiter's mutex, so the wake-up cannot fall between a check of
  // `cancelled` and the wait.
  bool registered = cm->RegisterCallback(token, [&, mu] {
    std::lock_guard<std::mutex> l(*mu);
    cancelled = true;
    cv->notify_all();
  });
  if (!registered) return errors::Cancelled(what, " was cancelled");
  cv->wait(*lock, [&] { return cancelled || ready(); });
  // Deregistering may wait for a running callback, which needs the lock.
  lock->unlock();
  cm->DeregisterCallback(token);
  lock->lock();
  if (ready()) return absl::OkStatus();
  return errors::Cancelled(what, " was cancelled");
}

Status CheckElement(const std::vector<Tensor>& element, const std::vector<DType>& types,
                    const std::vector<PartialTensorShape>& shapes, absl::string_view what) {
  if (element.size() != types.size()) {
    return errors::InvalidArgument(what, ": an element has ", element.size(), " components but ", types.size(),
                                   " are declared");
  }
  for (size_t i = 0; i < element.size(); ++i) {
    if (element[i].dtype() != types[i]) {
      return errors::InvalidArgument(what, ": component ", i, " has type ", DTypeString(element[i].dtype()), " but ",
                                     DTypeString(types[i]), " is declared");
    }
    if (i < shapes.size() && !shapes[i].IsCompatibleWith(element[i].shape())) {
      return errors::InvalidArgument(what, ": component ", i, " has shape ", element[i].shape().DebugString(), " but ",
                                     shapes[i].DebugString(), " is declared");
    }
  }
  return absl::OkStatus();
}

Status EndOfSequence() { return errors::OutOfRange("End of sequence"); }

void RegisterDataOps() {
  RegisterSourceDatasetOps();
  RegisterCsvOps();
  RegisterTransformDatasetOps();
  RegisterMapDatasetOps();
  RegisterIteratorOps();
}

namespace {

// Copies rows [src_row, src_row + n) of `src` to rows [dst_row, ...) of `dst` (same row shape).
void CopyRows(const Tensor& src, int64_t src_row, Tensor* dst, int64_t dst_row, int64_t n) {
  const int64_t per_row = src.dim_size(0) == 0 ? 0 : src.NumElements() / src.dim_size(0);
  if (src.dtype() == DT_STRING) {
    const std::string* from = src.data<std::string>() + src_row * per_row;
    std::string* to = dst->data<std::string>() + dst_row * per_row;
    for (int64_t k = 0; k < n * per_row; ++k) to[k] = from[k];
    return;
  }
  const size_t row_bytes = static_cast<size_t>(per_row) * DTypeSize(src.dtype());
  if (row_bytes * n == 0) return;
  std::memcpy(static_cast<char*>(dst->raw_data()) + dst_row * row_bytes,
              static_cast<const char*>(src.raw_data()) + src_row * row_bytes, row_bytes * n);
}

Status CheckCopyable(DType dtype) {
  if (dtype != DT_STRING && DTypeSize(dtype) <= 0) {
    return errors::InvalidArgument("Cannot batch tensors of type ", DTypeString(dtype));
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<Tensor> GatherRows(const Tensor& t, absl::Span<const int64_t> indices) {
  RETURN_IF_ERROR(CheckCopyable(t.dtype()));
  TensorShape shape;
  RETURN_IF_ERROR(shape.AddDim(static_cast<int64_t>(indices.size())));
  for (int d = 1; d < t.dims(); ++d) RETURN_IF_ERROR(shape.AddDim(t.dim_size(d)));
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(t.dtype(), shape));
  const size_t row_bytes = t.dtype() == DT_STRING || t.dim_size(0) == 0
                               ? 0
                               : static_cast<size_t>(t.NumElements() / t.dim_size(0)) * DTypeSize(t.dtype());
  const char* src = static_cast<const char*>(t.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  // Rows of one number (a shuffled column) are the common case: a plain load and store each.
  if (row_bytes == 4) {
    for (size_t i = 0; i < indices.size(); ++i) std::memcpy(dst + 4 * i, src + 4 * indices[i], 4);
  } else if (row_bytes == 8) {
    for (size_t i = 0; i < indices.size(); ++i) std::memcpy(dst + 8 * i, src + 8 * indices[i], 8);
  } else {
    for (size_t i = 0; i < indices.size(); ++i) CopyRows(t, indices[i], &out, static_cast<int64_t>(i), 1);
  }
  return out;
}

StatusOr<Tensor> ConcatRows(const std::vector<Tensor>& parts, absl::string_view what) {
  if (parts.size() == 1) return parts[0];
  const Tensor& first = parts[0];
  RETURN_IF_ERROR(CheckCopyable(first.dtype()));
  int64_t rows = 0;
  for (const Tensor& p : parts) {
    bool same = p.dims() == first.dims() && p.dims() >= 1;
    for (int d = 1; same && d < p.dims(); ++d) same = p.dim_size(d) == first.dim_size(d);
    if (!same) {
      return errors::InvalidArgument("Cannot batch tensors with different shapes in ", what, ": ",
                                     first.shape().DebugString(), " and ", p.shape().DebugString());
    }
    rows += p.dim_size(0);
  }
  TensorShape shape;
  RETURN_IF_ERROR(shape.AddDim(rows));
  for (int d = 1; d < first.dims(); ++d) RETURN_IF_ERROR(shape.AddDim(first.dim_size(d)));
  ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(first.dtype(), shape));
  int64_t at = 0;
  for (const Tensor& p : parts) {
    CopyRows(p, 0, &out, at, p.dim_size(0));
    at += p.dim_size(0);
  }
  return out;
}

StatusOr<Tensor> FirstRow(const Tensor& batch) {
  TensorShape row;
  for (int d = 1; d < batch.dims(); ++d) row.AddDimUnchecked(batch.dim_size(d));
  ASSIGN_OR_RETURN(Tensor one, batch.Slice(0, 1));
  return one.Reshaped(row);
}

}  // namespace dflow
