#include "ops/data/dataset_kernel.h"

#include "ops/register_all.h"

namespace dflow {

DatasetOpKernel::DatasetOpKernel(OpKernelConstruction* c) : OpKernel(c) {
  if (c->node().attrs.count("output_types")) c->SetStatus(c->GetAttr("output_types", &types_));
  if (c->node().attrs.count("output_shapes")) c->SetStatus(c->GetAttr("output_shapes", &shapes_));
  if (!types_.empty() && !shapes_.empty() && types_.size() != shapes_.size()) {
    c->SetStatus(errors::InvalidArgument(c->node().op, " ", c->node().name, ": ", types_.size(),
                                         " output_types but ", shapes_.size(), " output_shapes"));
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
      return errors::InvalidArgument(what, ": component ", i, " has type ", DTypeString(element[i].dtype()),
                                     " but ", DTypeString(types[i]), " is declared");
    }
    if (i < shapes.size() && !shapes[i].IsCompatibleWith(element[i].shape())) {
      return errors::InvalidArgument(what, ": component ", i, " has shape ", element[i].shape().DebugString(),
                                     " but ", shapes[i].DebugString(), " is declared");
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

}  // namespace dflow
