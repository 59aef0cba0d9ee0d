// Helpers shared by the dataset kernels (src/ops/data): the base class of ops that output a
// dataset, reading scalar inputs, and waiting with cancellation.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/env.h"
#include "framework/cancellation.h"
#include "framework/dataset.h"
#include "framework/op_kernel.h"

namespace dflow {

// An op whose output 0 is a dataset (DT_VARIANT scalar). Reads the output_types and
// output_shapes attrs where the op has them and checks that the dataset made agrees with them.
class DatasetOpKernel : public OpKernel {
 public:
  explicit DatasetOpKernel(OpKernelConstruction* c);
  void Compute(OpKernelContext* ctx) final;

 protected:
  virtual StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) = 0;
  // Input 0 as a dataset (the "input_dataset" of unary transformations).
  StatusOr<std::shared_ptr<const DatasetBase>> InputDataset(OpKernelContext* ctx, int index = 0) const;
  // A scalar input of type int64 (or int32, bool as declared) named `what` in errors.
  StatusOr<int64_t> ScalarInt(OpKernelContext* ctx, int index, absl::string_view what) const;
  // The Env through which a file dataset reads `files` later (its device's file_env(), kept by
  // the dataset for its iterators), after checking every file against the device's file policy
  // now: PermissionDenied naming the node and the first file refused.
  StatusOr<std::shared_ptr<Env>> FileEnv(OpKernelContext* ctx, const std::vector<std::string>& files) const;
  // InvalidArgument naming the node.
  template <typename... Args>
  Status Error(Args&&... args) const {
    return errors::InvalidArgument(type_string(), " ", name(), ": ", std::forward<Args>(args)...);
  }

  std::vector<DType> types_;
  std::vector<PartialTensorShape> shapes_;
};

// Waits on `cv` (with `lock` on its mutex) until `ready()` or until ctx's cancellation starts
// (Cancelled naming `what`). `ready` is checked under the lock.
Status WaitWithCancellation(IteratorContext* ctx, std::condition_variable* cv, std::unique_lock<std::mutex>* lock,
                            const std::function<bool()>& ready, absl::string_view what);

// Checks that an element matches the dtypes and static shapes a dataset declares.
Status CheckElement(const std::vector<Tensor>& element, const std::vector<DType>& types,
                    const std::vector<PartialTensorShape>& shapes, absl::string_view what);

// Rows `indices` of `t` (each in [0, t.dim_size(0)), checked by the caller) stacked into a new
// tensor [indices.size(), t.dims()[1:]...].
StatusOr<Tensor> GatherRows(const Tensor& t, absl::Span<const int64_t> indices);
// Batches of one component (of `what`, for errors) joined along dimension 0; InvalidArgument
// when their other dimensions differ.
StatusOr<Tensor> ConcatRows(const std::vector<Tensor>& parts, absl::string_view what);
// Row 0 of a one-row batch, without the batch dimension.
StatusOr<Tensor> FirstRow(const Tensor& batch);

// The status OutOfRange("End of sequence") that IteratorGetNext returns at the end.
Status EndOfSequence();

// Registers the data op families; called by RegisterDataOps.
void RegisterSourceDatasetOps();
void RegisterCsvOps();
void RegisterTransformDatasetOps();
void RegisterMapDatasetOps();
void RegisterIteratorOps();

}  // namespace dflow
