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
#pragma once

#include <memory>
#include <string>

#include "distributed/cluster_spec.h"

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
};

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
  // Blocks until Stop() (from another thread).
  void Join();
  // Fails steps in progress, closes sessions, stops serving. Idempotent; the destructor calls it.
  void Stop();

 private:
  explicit Server(std::unique_ptr<rpc::GrpcServer> impl);
  std::unique_ptr<rpc::GrpcServer> impl_;
};

}  // namespace dflow
