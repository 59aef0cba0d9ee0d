// `dflow inspect CHECKPOINT`: the tensors of a V2 checkpoint (a prefix, its .index file, or a
// directory whose state file names one).
#pragma once

#include <iosfwd>
#include <string>

namespace dflow::tools {

// True when `path` names a checkpoint rather than a GraphDef file.
bool LooksLikeCheckpoint(const std::string& path);

// Lists every tensor: name, dtype, shape (and slices), and the values of tensors of at most 16
// elements. Every tensor is read, so a damaged file is reported (DataLoss naming the file and
// the tensor) with exit code 1.
int InspectCheckpoint(const std::string& path, std::ostream& out, std::ostream& err);

}  // namespace dflow::tools
