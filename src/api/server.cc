#include "dflow/server.h"

#include "dflow/core.h"
#include "rpc/grpc_server.h"

namespace dflow {

Server::Server(std::unique_ptr<rpc::GrpcServer> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;

StatusOr<std::unique_ptr<Server>> Server::Create(const ServerOptions& options) {
  InitDflow();
  rpc::GrpcServerOptions o;
  o.cluster = options.cluster;
  o.job_name = options.job_name;
  o.task_index = options.task_index;
  o.master.startup_wait_ms = options.startup_wait_ms;
  ASSIGN_OR_RETURN(std::unique_ptr<rpc::GrpcServer> impl, rpc::GrpcServer::Create(o));
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

StatusOr<std::unique_ptr<Server>> Server::CreateLocalServer() {
  ServerOptions o;
  ASSIGN_OR_RETURN(o.cluster, ClusterSpec::FromJobs({{"localhost", {"localhost:0"}}}));
  o.job_name = "localhost";
  return Create(o);
}

std::string Server::target() const { return impl_->target(); }
int Server::port() const { return impl_->port(); }
void Server::Join() { impl_->Join(); }
void Server::Stop() { impl_->Stop(); }

}  // namespace dflow
