// `dflow events FILE`: the scalars of an event file, one "tag step value" line each.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace dflow::tools {

// Prints every scalar (simple_value, or a one-element numeric tensor) in file order; values in
// the shortest form that reads back exactly (as float for simple_value). Exit code 0 at the
// clean end of the file; 1 after printing what precedes a damaged record (the error, naming
// file and offset, goes to `err`); 2 for bad arguments.
int RunEventsCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace dflow::tools
