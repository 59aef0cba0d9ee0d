// `dflow inspect CHECKPOINT`: the tensors of a V2 checkpoint (a prefix, its .index or .data-*
// file, a directory whose `checkpoint` state file names one, or that state file itself).
#pragma once

#include <iosfwd>
#include <string>

namespace dflow::tools {

// True when `path` names a checkpoint rather than a GraphDef file.
bool LooksLikeCheckpoint(const std::string& path);

// Lists every tensor: name, dtype, shape (and slices), and the values of tensors of at most 16
// elements. Every tensor is read, so a damaged file is reported (DataLoss naming the file and
// the tensor) with exit code 1. A state file naming a checkpoint that is gone is NotFound naming
// the stale path. `state_file`: `path` is a `checkpoint` state file (of any name).
int InspectCheckpoint(const std::string& path, std::ostream& out, std::ostream& err, bool state_file = false);

}  // namespace dflow::tools
