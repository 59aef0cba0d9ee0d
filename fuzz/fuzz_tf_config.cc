// TF_CONFIG: the checks of the JSON text before protobuf's parser reads it, that parser, and
// ParseTfConfig's checks of the cluster and the task.
// The same text is then read as the server's flags, one argument per line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "distributed/cluster_spec.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dflow;
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  StatusOr<TaskConfig> task = ParseTfConfig(text);
  fuzz::Note("TF_CONFIG", task.status());
  if (task.ok()) {
    FUZZ_CHECK(!task->job_name.empty());
    (void)task->cluster.DebugString();
    (void)task->cluster.TaskNames();
  }
  if (size < 4096) {
    std::vector<std::string> args = absl::StrSplit(text, '\n');
    std::vector<std::string> rest;
    (void)TaskConfigFromArgs(args, "", &rest);
  }
  return 0;
}
