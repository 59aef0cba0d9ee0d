// GrpcServer: one task of a cluster — its Worker and Master behind gRPC services on the task's
// port. The public dflow::Server (include/dflow/server.h) wraps it. No gRPC types here.
#pragma once

#include <memory>
#include <string>

#include "distributed/cluster_spec.h"
#include "distributed/master.h"
#include "distributed/worker.h"
#include "framework/credentials.h"

namespace dflow {
class Worker;
namespace rpc {

struct GrpcServerOptions {
  ClusterSpec cluster;
  std::string job_name;
  int task_index = 0;
  MasterOptions master;
  // The worker's limits (memory budget for steps, largest partition).
  WorkerOptions worker;
  // What callers must present, and what this task presents to the others (framework/credentials.h).
  // Unset: the directory named by DFLOW_CREDENTIALS when set; else, for a task that listens on
  // loopback only, its cluster's credentials in the per-user store (made there by the first task
  // of the cluster to start). A task listening on other interfaces fails to start with neither,
  // unless `credentials.insecure` says plaintext on purpose.
  ClusterCredentials credentials;
  // Requests above this size fail with RESOURCE_EXHAUSTED before they are read.
  int64_t max_message_bytes = int64_t{1} << 30;
  // The only directories that ops run here may read or write (checkpoints, datasets); paths are
  // resolved (no "..", no symlink out). Empty: DefaultAllowedDirs(). {"/"}: anywhere.
  std::vector<std::string> allowed_dirs;
};

// The working directory and the temporary directory ($TMPDIR, else /tmp).
std::vector<std::string> DefaultAllowedDirs();

class GrpcServer {
 public:
  struct Impl;

  // Binds the task's port (port 0: one the OS chooses) and starts serving. Errors: the task is
  // not in the cluster (InvalidArgument), the port cannot be bound (Unavailable naming it).
  static StatusOr<std::unique_ptr<GrpcServer>> Create(const GrpcServerOptions& options);
  ~GrpcServer();

  int port() const;
  // "grpc://localhost:PORT"
  std::string target() const;
  const std::string& task() const;
  Worker* worker();
  // The credentials it serves with (resolved as GrpcServerOptions::credentials describes).
  const ClusterCredentials& credentials() const;
  // Blocks until Stop, or until the server stopped because the job is complete (JobComplete).
  void Join();
  // True once another task declared the job complete, from the moment this task was told (while
  // it drains, and after it stopped).
  bool job_complete() const;
  // Fails the steps in progress, closes sessions and stops serving (bounded: in-flight calls get
  // a few seconds). Idempotent.
  void Stop();

 private:
  explicit GrpcServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Makes sessions with target "grpc://host:port" talk to the master at host:port.
void RegisterGrpcSessionFactory();

// Asks the master at `target` ("grpc://host:port") to tell every task of its cluster that the
// job is complete (Master::CompleteJob): directly when that server runs in this process, by RPC
// otherwise. InvalidArgument for a malformed target; Unavailable when the master cannot be
// reached. Tasks that could not be told are listed in `resp`, not an error.
Status CompleteJob(const std::string& target, const proto::CompleteJobRequest& req, proto::CompleteJobResponse* resp);

}  // namespace rpc
}  // namespace dflow
