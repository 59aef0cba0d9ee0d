// Reading checkpoints: the variables a V2 checkpoint (what train::Saver and TensorFlow write:
// PREFIX.index and PREFIX.data-*) holds, with their dtypes and shapes, and their values —
// TensorFlow's tf.train.load_checkpoint / list_variables / load_variable.
//
//   DFLOW_ASSIGN_OR_RETURN(std::string prefix, train::LatestCheckpoint("/tmp/run"));
//   DFLOW_ASSIGN_OR_RETURN(auto reader, train::CheckpointReader::Open(prefix));
//   DFLOW_ASSIGN_OR_RETURN(std::vector<train::CheckpointVariable> vars, reader->ListVariables());
//   DFLOW_ASSIGN_OR_RETURN(Tensor w, reader->Read("layer1/weights"));
//
// A variable saved in slices (a partitioned variable) is listed and read whole. Everything read
// is checked against the checksums and sizes in the checkpoint: damage is DataLoss naming the
// file and the variable. Thread-safe after Open.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dflow/dtype.h"
#include "dflow/status.h"
#include "dflow/tensor.h"
#include "dflow/tensor_shape.h"

namespace dflow::train {

struct CheckpointVariable {
  std::string name;
  DType dtype = DT_INVALID;
  TensorShape shape;  // the full shape (of every slice together, for a sliced variable)
};

class CheckpointReader {
 public:
  // Opens checkpoint `prefix` ("/tmp/run/model-100"; a directory is not a prefix: see
  // train::LatestCheckpoint). NotFound when PREFIX.index is missing; DataLoss when it is damaged.
  static StatusOr<std::unique_ptr<CheckpointReader>> Open(const std::string& prefix);
  ~CheckpointReader();
  CheckpointReader(const CheckpointReader&) = delete;
  CheckpointReader& operator=(const CheckpointReader&) = delete;

  const std::string& prefix() const;
  // Every variable (name, dtype, full shape), sorted by name. DataLoss when an entry is damaged.
  StatusOr<std::vector<CheckpointVariable>> ListVariables() const;
  bool Has(const std::string& name) const;
  // NotFound naming the variable and the checkpoint when it is not there.
  StatusOr<CheckpointVariable> Describe(const std::string& name) const;
  // The value of a variable (assembled from its slices when it was saved in slices).
  StatusOr<Tensor> Read(const std::string& name) const;

 private:
  class Impl;
  explicit CheckpointReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dflow::train
