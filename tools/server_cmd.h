// `dflow server`: runs one task of a cluster until SIGTERM or SIGINT.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace dflow::tools {

// args: --ps_hosts=... --worker_hosts=... --job_name=... --task_index=... (or TF_CONFIG), and
// optionally --startup_wait_ms=N, --credentials=DIR or --insecure, --max_message_bytes=N. Returns
// the exit code: 0 after a signal stopped the server or the job completed, 1 when the server
// cannot start, 2 for bad arguments.
int RunServerCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// `dflow credentials create DIR [--hosts=H,...] [--mutual_tls]`: fresh credentials for a cluster
// (framework/credentials.h) in DIR/chief (for the chief's host only) and DIR/member (for every
// other task and client), each mode 0700. Fails when DIR exists. Returns the exit code.
int RunCredentialsCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace dflow::tools
