// Sessions on "grpc://host:port": every call is a MasterService RPC to the server at host:port,
// or, when that server runs in this process, a direct call of its master (LocalMaster).
#include <mutex>

#include "distributed/job_completion.h"
#include "distributed/local_master.h"
#include "framework/cancellation.h"
#include "framework/session.h"
#include "proto/rpc/services.grpc.pb.h"
#include "rpc/grpc_auth.h"
#include "rpc/grpc_server.h"
#include "rpc/grpc_util.h"
#include "tensor/tensor_proto.h"

namespace dflow::rpc {
namespace {

constexpr char kPrefix[] = "grpc://";
// CreateSession waits for the cluster to come up (the master's own wait is 30 s by default).
constexpr int64_t kCreateTimeoutMs = 120000;
constexpr int64_t kControlTimeoutMs = 60000;

// How a session reaches its master: the MasterService stub, or the master itself. Each call has a
// deadline (0: none) after which it fails with DeadlineExceeded.
class MasterChannel {
 public:
  virtual ~MasterChannel() = default;
  virtual Status CreateSession(const proto::CreateSessionRequest& req, proto::CreateSessionResponse* resp,
                               int64_t timeout_ms) = 0;
  virtual Status ExtendSession(const proto::ExtendSessionRequest& req, proto::ExtendSessionResponse* resp,
                               int64_t timeout_ms) = 0;
  // `cancellation` (may be null) cancels the call.
  virtual Status RunStep(const proto::RunStepRequest& req, proto::RunStepResponse* resp, int64_t timeout_ms,
                         CancellationManager* cancellation) = 0;
  virtual Status CloseSession(const proto::CloseSessionRequest& req, proto::CloseSessionResponse* resp,
                              int64_t timeout_ms) = 0;
  virtual Status ListDevices(const proto::ListDevicesRequest& req, proto::ListDevicesResponse* resp,
                             int64_t timeout_ms) = 0;
};

class RpcMasterChannel : public MasterChannel {
 public:
  RpcMasterChannel(const std::string& address, const ClusterCredentials& creds)
      : stub_(proto::rpc::MasterService::NewStub(NewChannel(address, creds))) {}
  Status CreateSession(const proto::CreateSessionRequest& req, proto::CreateSessionResponse* resp,
                       int64_t timeout_ms) override {
    return Call(timeout_ms, [&](grpc::ClientContext* c) { return stub_->CreateSession(c, req, resp); });
  }
  Status ExtendSession(const proto::ExtendSessionRequest& req, proto::ExtendSessionResponse* resp,
                       int64_t timeout_ms) override {
    return Call(timeout_ms, [&](grpc::ClientContext* c) { return stub_->ExtendSession(c, req, resp); });
  }
  Status RunStep(const proto::RunStepRequest& req, proto::RunStepResponse* resp, int64_t timeout_ms,
                 CancellationManager* cancellation) override {
    grpc::ClientContext ctx;
    if (timeout_ms > 0) SetTimeout(&ctx, timeout_ms);
    CancellationManager::Token token = -1;
    bool registered = false;
    if (cancellation != nullptr) {
      token = cancellation->NewToken();
      registered = cancellation->RegisterCallback(token, [&ctx] { ctx.TryCancel(); });
      if (!registered) return errors::Cancelled("Run was cancelled before it started");
    }
    Status s = FromGrpc(stub_->RunStep(&ctx, req, resp));
    if (registered) cancellation->DeregisterCallback(token);
    return s;
  }
  Status CloseSession(const proto::CloseSessionRequest& req, proto::CloseSessionResponse* resp,
                      int64_t timeout_ms) override {
    return Call(timeout_ms, [&](grpc::ClientContext* c) { return stub_->CloseSession(c, req, resp); });
  }
  Status ListDevices(const proto::ListDevicesRequest& req, proto::ListDevicesResponse* resp,
                     int64_t timeout_ms) override {
    return Call(timeout_ms, [&](grpc::ClientContext* c) { return stub_->ListDevices(c, req, resp); });
  }

 private:
  template <typename Fn>
  Status Call(int64_t timeout_ms, Fn&& fn) {
    grpc::ClientContext ctx;
    if (timeout_ms > 0) SetTimeout(&ctx, timeout_ms);
    return FromGrpc(fn(&ctx));
  }
  std::unique_ptr<proto::rpc::MasterService::Stub> stub_;
};

// The master of the server at host:port: called directly while that server runs in this process,
// through the MasterService otherwise. It looks again on every call, so a session outlives its
// server's restart the way a remote session does (the new master answers Aborted for the old
// session's handle). Direct calls are bounded by the master itself (the step's deadline, the
// start-up wait), so they need no deadline of their own.
class ResolvingMasterChannel : public MasterChannel {
 public:
  ResolvingMasterChannel(std::string address, std::string host, int port, ClusterCredentials creds)
      : address_(std::move(address)), host_(std::move(host)), port_(port), creds_(std::move(creds)) {}
  Status CreateSession(const proto::CreateSessionRequest& req, proto::CreateSessionResponse* resp,
                       int64_t timeout_ms) override {
    if (auto m = Local()) return m->CreateSession(req, resp);
    return Rpc()->CreateSession(req, resp, timeout_ms);
  }
  Status ExtendSession(const proto::ExtendSessionRequest& req, proto::ExtendSessionResponse* resp,
                       int64_t timeout_ms) override {
    if (auto m = Local()) return m->ExtendSession(req, resp);
    return Rpc()->ExtendSession(req, resp, timeout_ms);
  }
  Status RunStep(const proto::RunStepRequest& req, proto::RunStepResponse* resp, int64_t timeout_ms,
                 CancellationManager* cancellation) override {
    if (auto m = Local()) return m->RunStep(req, resp, cancellation);
    return Rpc()->RunStep(req, resp, timeout_ms, cancellation);
  }
  Status CloseSession(const proto::CloseSessionRequest& req, proto::CloseSessionResponse* resp,
                      int64_t timeout_ms) override {
    if (auto m = Local()) return m->CloseSession(req, resp);
    return Rpc()->CloseSession(req, resp, timeout_ms);
  }
  Status ListDevices(const proto::ListDevicesRequest& req, proto::ListDevicesResponse* resp,
                     int64_t timeout_ms) override {
    if (auto m = Local()) return m->ListDevices(req, resp);
    return Rpc()->ListDevices(req, resp, timeout_ms);
  }

 private:
  std::shared_ptr<LocalMaster> Local() {
    std::lock_guard<std::mutex> l(mu_);
    if (local_ == nullptr || local_->stopping()) local_ = LocalMaster::Find(host_, port_);
    return local_;
  }
  MasterChannel* Rpc() {
    std::lock_guard<std::mutex> l(mu_);
    if (rpc_ == nullptr) rpc_ = std::make_unique<RpcMasterChannel>(address_, creds_);
    return rpc_.get();
  }

  const std::string address_, host_;
  const int port_;
  const ClusterCredentials creds_;
  std::mutex mu_;
  std::shared_ptr<LocalMaster> local_;
  std::unique_ptr<MasterChannel> rpc_;
};

class GrpcSession : public Session {
 public:
  GrpcSession(const SessionOptions& options, std::string address, std::unique_ptr<MasterChannel> channel)
      : options_(options), address_(std::move(address)), master_(std::move(channel)) {}
  ~GrpcSession() override { Close().IgnoreError(); }

  Status Create(const proto::GraphDef& graph) override {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return errors::FailedPrecondition("Session has been closed");
    if (!handle_.empty()) return errors::FailedPrecondition("Session already has a graph: use Extend to add nodes");
    proto::CreateSessionRequest req;
    *req.mutable_graph_def() = graph;
    proto::SessionConfig* c = req.mutable_config();
    c->set_allow_soft_placement(options_.allow_soft_placement);
    c->set_log_device_placement(options_.log_device_placement);
    c->set_operation_timeout_ms(options_.operation_timeout_ms);
    for (const std::string& f : options_.device_filters) c->add_device_filters(f);
    c->set_disable_op_fusion(!options_.fuse_ops);
    proto::CreateSessionResponse resp;
    RETURN_IF_ERROR(Annotate(master_->CreateSession(req, &resp, kCreateTimeoutMs)));
    handle_ = resp.session_handle();
    return absl::OkStatus();
  }

  Status Extend(const proto::GraphDef& graph) override {
    std::string handle;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (closed_) return errors::FailedPrecondition("Session has been closed");
      if (handle_.empty()) {
        mu_.unlock();
        Status s = Create(graph);
        mu_.lock();
        return s;
      }
      handle = handle_;
    }
    proto::ExtendSessionRequest req;
    req.set_session_handle(handle);
    *req.mutable_graph_def() = graph;
    proto::ExtendSessionResponse resp;
    return Annotate(master_->ExtendSession(req, &resp, kControlTimeoutMs));
  }

  Status Run(const RunOptions& run_options, const std::vector<std::pair<std::string, Tensor>>& inputs,
             const std::vector<std::string>& output_names, const std::vector<std::string>& target_names,
             std::vector<Tensor>* outputs, RunMetadata* metadata) override {
    proto::RunStepRequest req;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (closed_) return errors::FailedPrecondition("Session has been closed");
      if (handle_.empty()) return errors::FailedPrecondition("Session has no graph: call Create first");
      req.set_session_handle(handle_);
    }
    for (const auto& [name, t] : inputs) {
      proto::NamedTensor* f = req.add_feed();
      f->set_name(name);
      TensorToProto(t, f->mutable_tensor());
    }
    for (const std::string& o : output_names) req.add_fetch(o);
    for (const std::string& t : target_names) req.add_target(t);
    const int64_t timeout = run_options.timeout_in_ms > 0 ? run_options.timeout_in_ms : options_.operation_timeout_ms;
    req.set_timeout_in_ms(timeout);
    req.set_trace(metadata != nullptr || run_options.trace);
    proto::RunStepResponse resp;
    Status rs = master_->RunStep(req, &resp, timeout > 0 ? timeout + 10000 : 0, run_options.cancellation);
    if (absl::IsDeadlineExceeded(rs) && timeout > 0) {
      return errors::DeadlineExceeded("Run did not finish within the deadline of ", timeout, " ms");
    }
    RETURN_IF_ERROR(Annotate(rs));
    if (resp.tensor_size() != static_cast<int>(output_names.size())) {
      return errors::Internal("The master at ", address_, " returned ", resp.tensor_size(), " tensors for ",
                              output_names.size(), " fetches");
    }
    std::vector<Tensor> out;
    for (const proto::TensorProto& p : resp.tensor()) {
      ASSIGN_OR_RETURN(Tensor t, TensorFromProto(p));
      out.push_back(std::move(t));
    }
    if (outputs != nullptr) *outputs = std::move(out);
    if (metadata != nullptr) {
      for (const proto::NodeStats& s : resp.stats()) {
        metadata->step_stats.push_back({s.node_name(), s.op(), s.device(), s.start_micros(), s.end_micros()});
      }
    }
    return absl::OkStatus();
  }

  std::vector<std::string> ListDevices() const override {
    proto::ListDevicesRequest req;
    {
      std::lock_guard<std::mutex> l(mu_);
      req.set_session_handle(handle_);
    }
    proto::ListDevicesResponse resp;
    std::vector<std::string> out;
    if (!master_->ListDevices(req, &resp, kControlTimeoutMs).ok()) return out;
    for (const auto& d : resp.device()) out.push_back(d.name());
    return out;
  }

  Status Close() override {
    std::string handle;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (closed_) return absl::OkStatus();
      closed_ = true;
      handle = handle_;
    }
    if (handle.empty()) return absl::OkStatus();
    proto::CloseSessionRequest req;
    req.set_session_handle(handle);
    proto::CloseSessionResponse resp;
    return Annotate(master_->CloseSession(req, &resp, 10000));
  }

 private:
  Status Annotate(const Status& s) const {
    if (s.code() == absl::StatusCode::kUnavailable) {
      return errors::Unavailable("The server at ", address_, " is unreachable: ", s.message(),
                                 options_.credentials.IsSet()
                                     ? ""
                                     : " (if it requires TLS and a secret, as dflow servers do "
                                       "unless started --insecure, give this client the "
                                       "cluster's credentials: DFLOW_CREDENTIALS=DIR)");
    }
    return s;
  }

  const SessionOptions options_;
  const std::string address_;
  std::unique_ptr<MasterChannel> master_;
  mutable std::mutex mu_;
  bool closed_ = false;
  std::string handle_;
};

class GrpcSessionFactory : public SessionFactory {
 public:
  bool AcceptsOptions(const SessionOptions& o) const override { return o.target.rfind(kPrefix, 0) == 0; }
  StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& o) override {
    std::string address = o.target.substr(sizeof(kPrefix) - 1);
    size_t colon = address.rfind(':');
    if (address.empty() || colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
      return errors::InvalidArgument("Target '", o.target, "' is not grpc://host:port");
    }
    int port = 0;
    const bool numeric_port = absl::SimpleAtoi(address.substr(colon + 1), &port);
    SessionOptions options = o;
    ASSIGN_OR_RETURN(options.credentials, ClientCredentials(o.credentials, address.substr(0, colon), port));
    std::unique_ptr<MasterChannel> channel;
    if (o.direct_to_local_master && numeric_port) {
      channel = std::make_unique<ResolvingMasterChannel>(address, address.substr(0, colon), port, options.credentials);
    } else {
      channel = std::make_unique<RpcMasterChannel>(address, options.credentials);
    }
    return std::unique_ptr<Session>(new GrpcSession(options, address, std::move(channel)));
  }
};

}  // namespace

Status CompleteJob(const std::string& target, const proto::CompleteJobRequest& req, proto::CompleteJobResponse* resp) {
  if (target.rfind(kPrefix, 0) != 0) return errors::InvalidArgument("Target '", target, "' is not grpc://host:port");
  std::string address = target.substr(sizeof(kPrefix) - 1);
  size_t colon = address.rfind(':');
  int port = 0;
  if (address.empty() || colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port)) {
    return errors::InvalidArgument("Target '", target, "' is not grpc://host:port");
  }
  if (auto local = LocalMaster::Find(address.substr(0, colon), port)) return local->CompleteJob(req, resp);
  ASSIGN_OR_RETURN(ClusterCredentials creds, ClientCredentials({}, address.substr(0, colon), port));
  auto stub = proto::rpc::MasterService::NewStub(NewChannel(address, creds));
  grpc::ClientContext ctx;
  // Each task is told within the request's timeout, the master's own task after the others, and
  // those not told are tried again for the retry time.
  const int64_t per_task = req.timeout_ms() > 0 ? req.timeout_ms() : kDefaultJobCompleteTimeoutMs;
  const int64_t retry = req.retry_ms() == 0 ? kDefaultJobCompleteRetryMs : std::max<int64_t>(req.retry_ms(), 0);
  SetTimeout(&ctx, 3 * per_task + retry + 15000);
  Status s = FromGrpc(stub->CompleteJob(&ctx, req, resp));
  if (s.code() == absl::StatusCode::kUnavailable) {
    return errors::Unavailable("The server at ", address, " is unreachable: ", s.message());
  }
  return s;
}

void RegisterGrpcSessionFactory() {
  static bool done = [] {
    RegisterSessionFactory("GRPC_SESSION", std::make_unique<GrpcSessionFactory>());
    return true;
  }();
  (void)done;
}

}  // namespace dflow::rpc
