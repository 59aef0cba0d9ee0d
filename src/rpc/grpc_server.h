// GrpcServer: one task of a cluster — its Worker and Master behind gRPC services on the task's
// port. The public dflow::Server (include/dflow/server.h) wraps it. No gRPC types here.
#pragma once

#include <memory>
#include <string>

#include "distributed/cluster_spec.h"
#include "distributed/master.h"

namespace dflow {
class Worker;
namespace rpc {

struct GrpcServerOptions {
  ClusterSpec cluster;
  std::string job_name;
  int task_index = 0;
  MasterOptions master;
};

class GrpcServer {
 public:
  // Binds the task's port (port 0: one the OS chooses) and starts serving. Errors: the task is
  // not in the cluster (InvalidArgument), the port cannot be bound (Unavailable naming it).
  static StatusOr<std::unique_ptr<GrpcServer>> Create(const GrpcServerOptions& options);
  ~GrpcServer();

  int port() const;
  // "grpc://localhost:PORT"
  std::string target() const;
  const std::string& task() const;
  Worker* worker();
  // Blocks until Stop.
  void Join();
  // Fails the steps in progress, closes sessions and stops serving (bounded: in-flight calls get
  // a few seconds). Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit GrpcServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Makes sessions with target "grpc://host:port" talk to the master at host:port.
void RegisterGrpcSessionFactory();

}  // namespace rpc
}  // namespace dflow
