// Sessions on "grpc://host:port": every call is a MasterService RPC to the server at host:port.
#include <mutex>

#include "framework/session.h"
#include "proto/rpc/services.grpc.pb.h"
#include "rpc/grpc_server.h"
#include "rpc/grpc_util.h"
#include "tensor/tensor_proto.h"

namespace dflow::rpc {
namespace {

constexpr char kPrefix[] = "grpc://";
// CreateSession waits for the cluster to come up (the master's own wait is 30 s by default).
constexpr int64_t kCreateTimeoutMs = 120000;
constexpr int64_t kControlTimeoutMs = 60000;

class GrpcSession : public Session {
 public:
  GrpcSession(const SessionOptions& options, std::string address)
      : options_(options), address_(std::move(address)), stub_(proto::rpc::MasterService::NewStub(NewChannel(address_))) {}
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
    proto::CreateSessionResponse resp;
    grpc::ClientContext ctx;
    SetTimeout(&ctx, kCreateTimeoutMs);
    RETURN_IF_ERROR(Annotate(stub_->CreateSession(&ctx, req, &resp)));
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
    grpc::ClientContext ctx;
    SetTimeout(&ctx, kControlTimeoutMs);
    return Annotate(stub_->ExtendSession(&ctx, req, &resp));
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
    grpc::ClientContext ctx;
    if (timeout > 0) SetTimeout(&ctx, timeout + 10000);
    grpc::Status gs = stub_->RunStep(&ctx, req, &resp);
    if (gs.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && timeout > 0) {
      return errors::DeadlineExceeded("Run did not finish within the deadline of ", timeout, " ms");
    }
    RETURN_IF_ERROR(Annotate(gs));
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
    grpc::ClientContext ctx;
    SetTimeout(&ctx, kControlTimeoutMs);
    std::vector<std::string> out;
    if (!stub_->ListDevices(&ctx, req, &resp).ok()) return out;
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
    grpc::ClientContext ctx;
    SetTimeout(&ctx, 10000);
    return Annotate(stub_->CloseSession(&ctx, req, &resp));
  }

 private:
  Status Annotate(const grpc::Status& gs) const {
    Status s = FromGrpc(gs);
    if (s.code() == absl::StatusCode::kUnavailable) {
      return errors::Unavailable("The server at ", address_, " is unreachable: ", s.message());
    }
    return s;
  }

  const SessionOptions options_;
  const std::string address_;
  std::unique_ptr<proto::rpc::MasterService::Stub> stub_;
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
    return std::unique_ptr<Session>(new GrpcSession(o, address));
  }
};

}  // namespace

void RegisterGrpcSessionFactory() {
  static bool done = [] {
    RegisterSessionFactory("GRPC_SESSION", std::make_unique<GrpcSessionFactory>());
    return true;
  }();
  (void)done;
}

}  // namespace dflow::rpc
