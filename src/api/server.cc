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
  o.credentials = options.credentials;
  o.max_message_bytes = options.max_message_bytes;
  o.allowed_dirs = options.allowed_dirs;
  o.worker.step_memory_limit_bytes = options.step_memory_limit_bytes;
  o.worker.max_graph_bytes = o.master.max_graph_bytes = options.max_graph_bytes;
  o.worker.max_graph_nodes = o.master.max_graph_nodes = options.max_graph_nodes;
  o.master.max_sessions_per_client = options.max_sessions_per_client;
  o.master.session_idle_timeout_ms = options.session_idle_timeout_ms;
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
const ClusterCredentials& Server::credentials() const { return impl_->credentials(); }
void Server::Join() { impl_->Join(); }
bool Server::job_complete() const { return impl_->job_complete(); }
Status Server::NotifyJobComplete(const JobCompleteOptions& options, JobCompleteResult* result) {
  // Told already (a MonitoredTrainingSession on the chief ends the job when it closes): this
  // task may have stopped serving, and every task was told.
  if (job_complete()) return absl::OkStatus();
  return dflow::NotifyJobComplete(target(), options, result);
}

Status NotifyJobComplete(const std::string& target, const JobCompleteOptions& options, JobCompleteResult* result) {
  InitDflow();
  if (options.drain_ms < 0 || options.timeout_ms < 0 || options.retry_ms < 0) {
    return errors::InvalidArgument("NotifyJobComplete: drain_ms (", options.drain_ms, "), timeout_ms (",
                                   options.timeout_ms, ") and retry_ms (", options.retry_ms, ") must be >= 0");
  }
  proto::CompleteJobRequest req;
  req.set_drain_ms(options.drain_ms);
  req.set_timeout_ms(options.timeout_ms);
  req.set_retry_ms(options.retry_ms > 0 ? options.retry_ms : -1);  // 0 here: no retries
  proto::CompleteJobResponse resp;
  RETURN_IF_ERROR(rpc::CompleteJob(target, req, &resp));
  if (result != nullptr) {
    result->notified_tasks.assign(resp.notified_tasks().begin(), resp.notified_tasks().end());
    result->unreachable_tasks.assign(resp.unreachable_tasks().begin(), resp.unreachable_tasks().end());
  }
  return absl::OkStatus();
}
void Server::Stop() { impl_->Stop(); }

}  // namespace dflow
