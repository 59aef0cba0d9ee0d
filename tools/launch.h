// `dflow launch`: starts a whole cluster on 127.0.0.1 and runs a trainer on it.
//
//   dflow launch --ps 2 --workers 3 [--base_port P] [--timeout S] [--] TRAINER [ARGS...]
//
// Picks one port per task (OS-assigned free ports on 127.0.0.1, or P, P+1, ... with --base_port),
// starts N parameter servers
//   <dir of the dflow binary>/dflow server --ps_hosts=... --worker_hosts=... --job_name=ps --task_index=i
// (--ps defaults to 0: no parameter servers; --workers is required, at most 256 tasks in all)
// and M trainers
//   TRAINER ARGS... --ps_hosts=... --worker_hosts=... --job_name=worker --task_index=i
// each in its own process group, with stdin from /dev/null and stdout+stderr through a pipe.
// Every line a task writes goes to `out` prefixed with the task ("[ps 0] ", "[worker 1] "); lines
// are written whole, so lines of different tasks never mix. The launcher's own messages go to
// `err`, prefixed "dflow launch: ".
//
// When every worker has exited, the ps tasks get SIGTERM, and SIGKILL after the grace period
// (--grace_period, 5 s by default). The exit code is 0 when every worker exited 0. Otherwise the
// launcher says which task failed and how (exit status or signal), stops all the other tasks the
// same way, and returns 1: when a worker fails, when a ps task fails before the workers are done
// (a ps task that exits 0 was told the job is complete, and the workers go on to finish),
// when a task cannot be started, or when --timeout S passes. SIGINT or SIGTERM to the launcher
// stops every task and returns 128 + the signal number (a second signal kills them at once).
// Bad arguments return 2. Every wait is bounded: after SIGKILL the launcher waits at most 5 s more
// for the tasks and their output, then returns.
//
// --server_cmd CMD is for tests: it runs CMD (split at spaces) instead of `dflow server`, with the
// same flags appended.
//
// The port choice can race with other programs that bind ports between the moment the launcher
// releases a port and the moment the task binds it; tasks should report a failed bind clearly.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "base/net.h"
#include "base/status.h"

namespace dflow::tools {

struct LaunchOptions {
  int num_ps = 0;
  int num_workers = 0;
  int base_port = 0;          // 0: OS-assigned free ports
  double timeout_s = 0;       // 0: no timeout
  double grace_period_s = 5;  // between SIGTERM and SIGKILL when stopping tasks
  std::vector<std::string> server_cmd;  // empty: {<dir of the dflow binary>/dflow, "server"}
  std::vector<std::string> trainer;     // TRAINER ARGS...
};

// Parses the arguments after "launch". InvalidArgument naming the bad argument.
StatusOr<LaunchOptions> ParseLaunchArgs(const std::vector<std::string>& args);

using ::dflow::PickFreePorts;  // base/net.h

// Runs the cluster described by `options`; returns the exit code (see above). Installs handlers
// for SIGINT and SIGTERM (and ignores SIGPIPE) while it runs and restores the previous ones.
int RunLaunch(const LaunchOptions& options, std::ostream& out, std::ostream& err);

// `dflow launch ARGS...`: ParseLaunchArgs, then RunLaunch.
int RunLaunchCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace dflow::tools
