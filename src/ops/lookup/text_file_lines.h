// The entries of a table read from a text file, as TensorFlow's TextFileLineIterator reads them
// (lookup_util.cc): one entry per line (the first vocab_size lines when vocab_size != -1); the
// key and the value are a column of the line split at any delimiter character, the line number
// plus offset (index -1, int64 only) or the whole line (index -2).
#pragma once

#include <string>

#include "base/env.h"
#include "base/status.h"
#include "tensor/tensor.h"

namespace dflow {

struct TextFileTableOptions {
  int64_t key_index = -2;
  int64_t value_index = -1;
  int64_t vocab_size = -1;
  std::string delimiter = "\t";
  int64_t offset = 0;
};

// 1-D `keys` and `values` of the file's entries. InvalidArgument (with TensorFlow's messages) for
// an empty line, a line with too few columns, a field that does not parse as the dtype, a file
// shorter than vocab_size, or a line-number index on a non-int64 column.
Status ReadTextFileTable(const Env* env, const std::string& filename, const TextFileTableOptions& opts, DType key_dtype,
                         DType value_dtype, Tensor* keys, Tensor* values);

}  // namespace dflow
