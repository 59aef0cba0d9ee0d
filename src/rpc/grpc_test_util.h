// What the gRPC tests share. For tests only.
#pragma once

#include <memory>
#include <string>

#include "base/net.h"
#include "rpc/grpc_server.h"

namespace dflow::rpc {

// A cluster of one task, /job:worker/task:0, served on a free port of 127.0.0.1.
inline StatusOr<std::unique_ptr<GrpcServer>> StartOneTaskServer() {
  ASSIGN_OR_RETURN(std::vector<int> ports, PickFreePorts(1));
  GrpcServerOptions o;
  ASSIGN_OR_RETURN(o.cluster, ClusterSpec::FromJobs({{"worker", {"127.0.0.1:" + std::to_string(ports[0])}}}));
  o.job_name = "worker";
  return GrpcServer::Create(o);
}

}  // namespace dflow::rpc
