// Server: one task of a cluster, hosting a master (what sessions talk to) and a worker (what
// runs graph partitions) over gRPC.
//
//   auto server = Server::CreateLocalServer();           // a one-task cluster on a free port
//   ClientSession session(root, (*server)->target());    // "grpc://localhost:PORT"
//
//   ServerOptions o;
//   o.cluster = *ClusterSpec::FromJobs({{"ps", {"127.0.0.1:2222"}}, {"worker", {"127.0.0.1:2223"}}});
//   o.job_name = "ps";
//   auto ps = Server::Create(o);
//   (*ps)->Join();                                         // until Stop()
//
// A session on any task's target places nodes on every task of the cluster ("/job:ps/task:0");
// nodes without a device run on that task. Variables live on their task and are shared by name
// by every session of the cluster.
//
// Job completion: when training is over, the chief calls NotifyJobComplete(its target). Every
// task of the cluster then refuses new steps (OutOfRange "Job is complete: ..."), lets the steps
// in progress finish for up to drain_ms (then fails them with the same error) and stops its
// server: Join returns and job_complete() is true, so `dflow server` ps tasks exit 0 by
// themselves. Workers are told before the ps tasks, and the chief's own server last: a step that
// fails because a ps task stopped fails on a task that already knows the job is complete. A task
// that could not be told is tried again for JobCompleteOptions::retry_ms; and a task that missed
// the announcement learns it from a task that was told: a new session (a training session
// recovering from the lost link) asks its tasks and the chief, and one that says the job is
// complete makes this task complete too (job_complete() turns true, the session fails with
// OutOfRange "Job is complete").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dflow/cluster.h"
#include "dflow/credentials.h"

namespace dflow {
namespace rpc {
class GrpcServer;
}

struct ServerOptions {
  ClusterSpec cluster;
  std::string job_name;
  int task_index = 0;
  // How long a new session waits for the other tasks to answer before failing with
  // Unavailable (it logs the tasks it waits for).
  int64_t startup_wait_ms = 30000;
  // What callers must present and this task presents to the others: the cluster secret (checked
  // on every call), TLS certificates, the chief's secret (see dflow/credentials.h and
  // docs/SECURITY.md). Unset: the directory named by DFLOW_CREDENTIALS; else, for a task that
  // listens on loopback only, credentials kept for its cluster in this user's store (made by the
  // first task to start; clients of this user find them by the task's address). A task that would
  // listen on other interfaces without credentials fails to start (FailedPrecondition) unless
  // `credentials.insecure` asks for plaintext without authentication.
  ClusterCredentials credentials;
  // Requests larger than this fail with ResourceExhausted before they are read.
  int64_t max_message_bytes = int64_t{1} << 30;
  // The only directories that ops run on this task may read or write (SaveV2, RestoreV2,
  // MergeV2Checkpoints, the file datasets): paths are resolved, so ".." and symlinks cannot lead
  // out; others fail with PermissionDenied naming the path and these directories. Empty: the
  // working directory and the temporary directory ($TMPDIR, else /tmp). {"/"}: anywhere.
  std::vector<std::string> allowed_dirs;
  // Limits that keep one client from taking the task down; each failing request gets
  // ResourceExhausted naming the limit (docs/SECURITY.md):
  // - bytes that buffers of this task's steps may hold at once, values kept in variables and
  //   queues included (-1: half of the memory the process may use; 0: unlimited);
  int64_t step_memory_limit_bytes = -1;
  // - the largest graph a session may have (serialized bytes, nodes; 0: unlimited);
  int64_t max_graph_bytes = int64_t{1} << 30;
  int64_t max_graph_nodes = 500000;
  // - open sessions per client host (0: unlimited; sessions of this process are not counted);
  int max_sessions_per_client = 64;
  // - a session no call used for this long is closed (its later calls fail with Aborted); 0: never.
  int64_t session_idle_timeout_ms = 3600000;
};

struct JobCompleteOptions {
  // How long each task lets the steps in progress finish before failing them.
  int64_t drain_ms = 5000;
  // How long to wait for each task to acknowledge.
  int64_t timeout_ms = 10000;
  // How long to keep trying the tasks that could not be told (cut off from this one, or not
  // answering), so that a task whose link comes back learns the job is over and exits 0 instead
  // of retrying its steps until it fails; 0: no retries. A task where nothing serves (every try's
  // connection refused or reset: its process is gone) is tried for 3 s only.
  int64_t retry_ms = 60000;
};

struct JobCompleteResult {
  std::vector<std::string> notified_tasks;
  // "task (address): error" for each task that could not be told (already gone, or silent).
  std::vector<std::string> unreachable_tasks;
};

// Tells every task of the cluster of the server at `target` ("grpc://host:port") that the job is
// complete: the tasks of jobs other than ps, then the ps tasks, then that server's own task;
// returns once every task acknowledged or could not be reached (bounded by about 3 * timeout_ms).
// Tasks that are gone already are listed in `result` (may be null) and are not an error: the job
// is over for them too. InvalidArgument for a target that is not grpc://host:port; Unavailable
// when the master at `target` cannot be reached.
Status NotifyJobComplete(const std::string& target, const JobCompleteOptions& options = {},
                         JobCompleteResult* result = nullptr);

class Server {
 public:
  // Starts serving on the task's port (port 0: one the OS picks). InvalidArgument when the task
  // is not in the cluster; Unavailable when the port cannot be bound.
  static StatusOr<std::unique_ptr<Server>> Create(const ServerOptions& options);
  // A cluster of one task, "/job:localhost/replica:0/task:0", on 127.0.0.1 and a free port.
  static StatusOr<std::unique_ptr<Server>> CreateLocalServer();
  ~Server();

  // "grpc://localhost:PORT": the target of a ClientSession on this server.
  std::string target() const;
  int port() const;
  // The credentials it serves with (for clients in this process that call it through RPC).
  const ClusterCredentials& credentials() const;
  // Blocks until Stop() (from another thread), or until the job is complete (another task called
  // NotifyJobComplete) and the steps in progress here finished or failed.
  void Join();
  // True from the moment this task is told the job is complete (while it finishes the steps in
  // progress, and after it stopped). A step that fails from then on marks the end of training,
  // not a failure to recover from.
  bool job_complete() const;
  // NotifyJobComplete(target(), ...): this task tells the whole cluster, itself last. OK at once
  // when this task knows the job is complete already.
  Status NotifyJobComplete(const JobCompleteOptions& options = {}, JobCompleteResult* result = nullptr);
  // Fails steps in progress, closes sessions, stops serving. Idempotent; the destructor calls it.
  void Stop();

 private:
  explicit Server(std::unique_ptr<rpc::GrpcServer> impl);
  std::unique_ptr<rpc::GrpcServer> impl_;
};

}  // namespace dflow
