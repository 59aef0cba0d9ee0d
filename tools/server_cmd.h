// `dflow server`: runs one task of a cluster until SIGTERM or SIGINT.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace dflow::tools {

// args: --ps_hosts=... --worker_hosts=... --job_name=... --task_index=... (or TF_CONFIG), and
// optionally --startup_wait_ms=N. Returns the exit code: 0 after a signal stopped the server.
int RunServerCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace dflow::tools
