// Datasets and iterators: the values behind tf.data's graph ops.
//
// A DatasetBase is an immutable description of a sequence of elements (each a list of tensors
// whose dtypes and static shapes the dataset declares). Dataset ops output it inside a scalar
// DT_VARIANT tensor; a dataset holds its inputs, so a chain of ops is a chain of datasets.
// MakeIterator starts a walk over it: an IteratorBase holds the position (and the background
// work of prefetching and parallel map). Iterator resources (ops/data/iterator_ops.cc) hold one
// iterator each.
//
// Cancellation: every blocking wait inside GetNext registers with ctx->cancellation and ends
// with Cancelled when it starts. Iterators that run background work own it: their destructor
// stops it and joins (no thread outlives its iterator).
//
// Thread-safety: datasets are immutable and shared freely (a dataset with mutable state, such
// as shuffle's seed generator, guards it). An iterator is used by one thread at a time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tensor/memory_budget.h"
#include "absl/types/span.h"
#include "base/status.h"
#include "tensor/tensor.h"

namespace dflow {

class CancellationManager;

struct IteratorContext {
  // Ends blocking waits (the step's, or a background thread's own). May be null: then waits
  // end only when their producer ends.
  CancellationManager* cancellation = nullptr;
  int64_t step_id = 0;
  // The budget of the step that asked for the element (StepParams::memory_budget): the
  // datasets' functions are charged to it. Null: nothing is counted.
  std::shared_ptr<MemoryBudget> memory_budget;
};

class IteratorBase {
 public:
  virtual ~IteratorBase() = default;
  // Produces the next element into *out, or sets *end_of_sequence (and leaves *out empty).
  // After the end or an error, later calls may be made and end (or fail) again. Errors: the
  // input's (a malformed file names the file and line or record) and the functions'.
  virtual Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end_of_sequence) = 0;

  // A faster path for Batch, for iterators that can write elements straight into batch
  // tensors: up to `max` elements stacked along a new first dimension into *out, and their
  // number into *count (0 at the end). Only called when SupportsBatch().
  virtual bool SupportsBatch() const { return false; }
  virtual Status GetNextBatch(IteratorContext* ctx, int64_t max, std::vector<Tensor>* out, int64_t* count) {
    return errors::Unimplemented("GetNextBatch");
  }
};

class DatasetBase : public VariantValue, public std::enable_shared_from_this<DatasetBase> {
 public:
  DatasetBase(std::vector<DType> types, std::vector<PartialTensorShape> shapes)
      : types_(std::move(types)), shapes_(std::move(shapes)) {}
  const std::vector<DType>& output_dtypes() const { return types_; }
  const std::vector<PartialTensorShape>& output_shapes() const { return shapes_; }
  // An iterator at the first element.
  virtual StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const = 0;
  std::string TypeName() const override { return "Dataset"; }

  // True when GetNext of its iterators may wait (on files, functions or other threads):
  // IteratorGetNext then runs it off the step's thread. Datasets held in memory answer false and
  // are read on the step's thread, without a hand-off.
  virtual bool MayBlock() const { return true; }
  // Random access, for datasets held in memory (slices of tensors and zips of them): the number
  // of elements, or -1 for none. With it, Gather stacks the elements at `indices` (each in
  // [0, Cardinality())) along a new first dimension into *out, as Batch would: Shuffle and Batch
  // then move indices instead of elements.
  virtual int64_t Cardinality() const { return -1; }
  virtual Status Gather(absl::Span<const int64_t> indices, std::vector<Tensor>* out) const {
    return errors::Unimplemented(Name(), " has no random access");
  }
  // "TensorSliceDataset", ... for error messages.
  virtual std::string Name() const = 0;
  std::string DebugString() const override { return "<" + Name() + ">"; }

 protected:
  std::shared_ptr<const DatasetBase> self() const { return shared_from_this(); }

 private:
  std::vector<DType> types_;
  std::vector<PartialTensorShape> shapes_;
};

// A scalar DT_VARIANT tensor holding `dataset`.
Tensor DatasetToTensor(std::shared_ptr<const DatasetBase> dataset);
// The dataset a tensor holds; InvalidArgument naming `what` unless it is a scalar variant
// holding a dataset.
StatusOr<std::shared_ptr<const DatasetBase>> DatasetFromTensor(const Tensor& t, absl::string_view what);

}  // namespace dflow
