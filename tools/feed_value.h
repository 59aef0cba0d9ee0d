// Values written on the command line: `2`, `-1.5`, `[[1,2],[3,4]]`, `true`, or `@file.npy`.
#pragma once

#include <string>

#include "base/status.h"
#include "tensor/tensor.h"

namespace dflow::tools {

// Parses `text` into a tensor of `dtype`: a number, a boolean or nested lists of them in JSON
// (read by protobuf's JSON parser; Python's True and False are accepted too), at most 32 deep.
// Numbers must fit an integer dtype exactly; integers are taken as written, so int64 values
// beyond 2^53 are exact. A string dtype takes the text as it is. InvalidArgument says what is
// wrong and where.
StatusOr<Tensor> ParseFeedValue(const std::string& text, DType dtype);

}  // namespace dflow::tools
