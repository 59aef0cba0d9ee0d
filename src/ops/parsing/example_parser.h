// Parsing of serialized tf.train.Example protos (proto/example.proto) into the tensors of
// ParseExample / ParseExampleV2 / ParseSingleExample, straight from the wire format: no message
// objects are built, only the features asked for are decoded, and the values go directly into the
// output tensors. The semantics are TensorFlow's fast parser's: the last occurrence of a feature in
// an example wins (as in a protobuf map), a feature of another list type is an error, a fixed-length dense feature must
// have exactly its shape's element count, and errors name the example and the feature in
// TensorFlow's words.
#pragma once

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "base/status.h"
#include "tensor/tensor.h"

namespace dflow::parsing {

// A dense feature: its values become a [batch..., shape...] tensor.
struct DenseSpec {
  std::string key;
  DType dtype = DT_FLOAT;
  // The shape of one example's values. A first dimension of -1 makes the feature variable-length
  // (FixedLenSequenceFeature): rows of the inner shape, padded to the longest with the default.
  PartialTensorShape shape;
  // Empty (no elements): the feature is required (unless variable-length, where the padding is
  // the dtype's zero). Otherwise the values of a missing feature (the padding, variable-length).
  Tensor default_value;

  // Filled by Finalize.
  bool variable_length = false;
  int64_t elements_per_stride = 1;  // element count of one row (the shape without its first dim)
};

// A sparse (VarLenFeature) or ragged (RaggedFeature) feature: every value present, in order.
struct VarLenSpec {
  std::string key;
  DType dtype = DT_FLOAT;
  DType split_dtype = DT_INT64;  // ragged row_splits only
};

struct ParseConfig {
  std::vector<DenseSpec> dense;
  std::vector<VarLenSpec> sparse;
  std::vector<VarLenSpec> ragged;

  // Checks dtypes (float, int64, string), shapes and defaults as TensorFlow's ParseExample does
  // and derives the variable-length fields. InvalidArgument on a bad config.
  Status Finalize();
};

struct ParseResult {
  std::vector<Tensor> sparse_indices;  // int64 [n, batch rank + 1]
  std::vector<Tensor> sparse_values;   // [n]
  std::vector<Tensor> sparse_shapes;   // int64 [batch rank + 1]
  std::vector<Tensor> dense_values;    // [batch..., shape...]
  std::vector<Tensor> ragged_values;   // [n]
  std::vector<Tensor> ragged_splits;   // [number of examples + 1] ([0] for a scalar input)
};

// Parses the serialized Examples (`batch_shape` is their tensor's shape: a scalar, a vector or
// more dimensions; the outputs' leading dims follow it). `names` is empty or one per example
// (used only in error messages). A finalized `config` is required.
Status ParseExamples(const ParseConfig& config, absl::Span<const std::string> serialized,
                     absl::Span<const std::string> names, const TensorShape& batch_shape, ParseResult* result);

}  // namespace dflow::parsing
