// What the tests of the `dflow` command share: running it in-process and finding TensorFlow's
// files in testdata/.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "tools/commands.h"

namespace dflow::tools {

// The exit code and what the command wrote to stdout and stderr.
struct Result {
  int code;
  std::string out, err;
};

inline Result Cmd(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = RunDflowCommand(args, out, err);
  return {code, out.str(), err.str()};
}

// A file in testdata/tf/ (written by TensorFlow).
inline std::string Data(const std::string& name) { return std::string(DFLOW_SOURCE_DIR) + "/testdata/tf/" + name; }

}  // namespace dflow::tools
