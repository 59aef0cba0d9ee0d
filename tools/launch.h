// `dflow launch`: starts a whole cluster on 127.0.0.1 and runs a trainer on it.
//
//   dflow launch --ps 2 --workers 3 [--base_port P] [--timeout S] [--grace_period S] [--finish_timeout S]
//                [--fail_fast] [--ps_trainer] [--mutual_tls] [--credentials DIR] [--no_tls] [--] TRAINER [ARGS...]
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
// `err`, prefixed "dflow launch: ", among them each task's pid as it starts
// ("dflow launch: started worker 2 (pid 1234)").
//
// The launch ends with the chief, worker 0 (TensorFlow's rule for the ps/worker layout):
// - The chief exits 0: the job is complete. The chief has told the other tasks
//   (NotifyJobComplete) and they exit by themselves; the launcher waits for them at most
//   --finish_timeout seconds (10 by default), then stops those left: SIGTERM, and SIGKILL after
//   --grace_period seconds (5 by default), naming each. The exit code is 0, however the other
//   tasks end.
// - Another worker fails (exits non-zero or is killed by a signal): the launcher says so ("worker
//   2 was killed by signal 9 (Killed); the other tasks go on") and the others go on: a synchronous
//   job with backup workers, or an asynchronous one, trains on without it. With --fail_fast a
//   worker's failure stops all the tasks and the exit code is 1 (also after the chief's success).
// - A ps task that exits 0 was told the job is complete and is not a failure. One that fails
//   before the chief finished stops all the tasks (nothing restarts a ps task under the launcher)
//   and the exit code is 1; after, it is only reported.
// The exit code is also 1, and all the tasks are stopped, when the chief fails, when a task cannot
// be started, or when --timeout S passes before the chief finished (after, it only cuts the wait
// for the others short). SIGINT or SIGTERM to the launcher stops every task and returns 128 + the
// signal number (a second signal kills them at once). Bad arguments return 2. Every wait is
// bounded: after SIGKILL the launcher waits at most 5 s more for the tasks and their output, then
// returns (1 if the job had not failed yet).
//
// --ps_trainer: the ps tasks run TRAINER ARGS... --job_name=ps --task_index=i as well, for
// programs written as in TensorFlow's guide (one program for every task; its ps branch serves
// until the job is complete: server.join()). A Python trainer runs as `dflow launch ... --
// python3 trainer.py ...`; the tasks inherit the launcher's environment (PYTHONPATH, TF_CONFIG is
// not set: the flags describe the cluster).
//
// Security: the launcher makes fresh credentials for the cluster (a secret, the chief's secret, a
// CA and a certificate: see framework/credentials.h) in a private directory under $TMPDIR, removed
// when the launch ends, and gives each task its directory in DFLOW_CREDENTIALS: the chief's copy
// holds the chief's secret, the others' only its hash. Every task serves TLS and checks the
// secret on every call; with --mutual_tls the servers also require the clients' certificates.
// --credentials DIR uses DIR/chief and DIR/member (made by `dflow credentials create DIR`)
// instead, so that clients outside the launch (an evaluator, a monitor) can join. --no_tls keeps
// the secrets but sends plaintext: on loopback only root can read the traffic, and big transfers
// cost less than half of what they cost over TLS (docs/SECURITY.md).
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
  int base_port = 0;                    // 0: OS-assigned free ports
  double timeout_s = 0;                 // 0: no timeout
  double grace_period_s = 5;            // between SIGTERM and SIGKILL when stopping tasks
  double finish_timeout_s = 10;         // after the chief's success, how long the other tasks may take to exit
  bool fail_fast = false;               // a failing worker stops the launch (otherwise only the chief's does)
  bool ps_trainer = false;              // ps tasks run the trainer too (with --job_name=ps), not `dflow server`
  bool mutual_tls = false;              // the servers also require the clients' certificates
  bool no_tls = false;                  // the secret is checked, but the traffic is plaintext
  std::string credentials_dir;          // DIR with chief/ and member/ (`dflow credentials create`); empty: fresh ones
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
