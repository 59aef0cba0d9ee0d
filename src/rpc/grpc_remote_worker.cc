#include "rpc/grpc_remote_worker.h"

#include <cstring>

#include "distributed/job_completion.h"
#include "framework/device_name.h"
#include "proto/rpc/services.grpc.pb.h"
#include "rpc/grpc_util.h"
#include "tensor/tensor_proto.h"

namespace dflow::rpc {
namespace {

// Deadlines of the calls that have no step deadline of their own.
constexpr int64_t kControlTimeoutMs = 60000;

// Assembles a streamed tensor: the first chunk says what it is, the others carry its bytes.
class RecvTensorReader : public grpc::ClientReadReactor<proto::RecvTensorChunk> {
 public:
  RecvTensorReader(std::string from, RecvTensorResult* result, CallOptions* opts, StatusCallback done)
      : from_(std::move(from)), result_(result), opts_(opts), done_(std::move(done)) {
    if (opts_ != nullptr) {
      SetTimeout(ctx_.get(), opts_->timeout_ms);
      // The context is shared so that a late cancel finds it alive.
      opts_->SetCancelCallback([ctx = ctx_] { ctx->TryCancel(); });
    }
  }
  grpc::ClientContext* context() { return ctx_.get(); }
  void Start() {
    StartRead(&chunk_);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ended; OnDone follows
    if (error_.ok()) error_ = Take();
    chunk_.Clear();
    StartRead(&chunk_);
  }

  void OnDone(const grpc::Status& s) override {
    if (opts_ != nullptr) opts_->ClearCancelCallback();
    Status status = FromGrpc(s);
    if (status.ok()) status = error_;
    if (status.ok() && !got_first_) status = Malformed("no chunk arrived");
    if (status.ok() && received_ != expected_) {
      status = Malformed(absl::StrCat(received_, " of ", expected_, " bytes arrived"));
    }
    if (status.ok()) {
      result_->tensor = std::move(tensor_);
      result_->is_dead = is_dead_;
    }
    StatusCallback done = std::move(done_);
    delete this;
    done(status);
  }

 private:
  Status Malformed(const std::string& what) const {
    return errors::DataLoss("Malformed tensor stream from ", from_, ": ", what);
  }

  Status Take() {
    if (!got_first_) {
      got_first_ = true;
      is_dead_ = chunk_.is_dead();
      if (is_dead_) return absl::OkStatus();
      if (chunk_.has_proto()) {
        ASSIGN_OR_RETURN(tensor_, TensorFromProto(chunk_.proto()));
        return absl::OkStatus();
      }
      DType dtype = static_cast<DType>(chunk_.dtype());
      if (!IsValidDType(chunk_.dtype()) || dtype == DT_STRING || dtype == DT_RESOURCE || dtype == DT_VARIANT) {
        return Malformed(absl::StrCat("dtype ", chunk_.dtype(), " cannot travel as bytes"));
      }
      StatusOr<TensorShape> shape = ShapeFromProto(chunk_.shape());
      if (!shape.ok()) return Malformed(std::string(shape.status().message()));
      StatusOr<Tensor> t = Tensor::Allocate(dtype, *shape);
      if (!t.ok()) return t.status();
      tensor_ = std::move(t).value();
      expected_ = tensor_.TotalBytes();
      if (chunk_.total_bytes() != static_cast<int64_t>(expected_)) {
        return Malformed(absl::StrCat("announces ", chunk_.total_bytes(), " bytes for a ", DTypeString(dtype),
                                      " tensor of shape ", shape->DebugString(), " (", expected_, " bytes)"));
      }
    } else if (is_dead_ || !tensor_.IsInitialized() || expected_ == 0) {
      return Malformed("data after a tensor that takes none");
    }
    const std::string& data = chunk_.data();
    if (data.size() > expected_ - received_) {
      return Malformed(absl::StrCat("more bytes than the tensor holds (", data.size(), " more after ", received_,
                                    " of ", expected_, ")"));
    }
    if (!data.empty()) std::memcpy(static_cast<char*>(tensor_.raw_data()) + received_, data.data(), data.size());
    received_ += data.size();
    return absl::OkStatus();
  }

  const std::string from_;
  RecvTensorResult* result_;
  CallOptions* opts_;
  StatusCallback done_;
  std::shared_ptr<grpc::ClientContext> ctx_ = std::make_shared<grpc::ClientContext>();
  proto::RecvTensorChunk chunk_;
  Status error_;
  bool got_first_ = false;
  bool is_dead_ = false;
  Tensor tensor_;
  size_t expected_ = 0;
  size_t received_ = 0;
};

// The callback form of a stub method (the method names are overloaded, so no member pointers).
#define STUB_CALL(Method)                                                                          \
  [this](grpc::ClientContext* c, auto* q, auto* r, std::function<void(grpc::Status)> f) {          \
    stub_->async()->Method(c, q, r, std::move(f));                                               \
  }

class GrpcRemoteWorker : public WorkerInterface {
 public:
  GrpcRemoteWorker(const std::string& address, std::string task)
      : address_(address), task_(std::move(task)), stub_(proto::rpc::WorkerService::NewStub(NewChannel(address))) {}

  void GetStatusAsync(const proto::GetStatusRequest* req, proto::GetStatusResponse* resp, CallOptions* opts,
                      StatusCallback done) override {
    Unary(STUB_CALL(GetStatus), req, resp, opts, kControlTimeoutMs,
          std::move(done));
  }
  void RegisterGraphAsync(const proto::RegisterGraphRequest* req, proto::RegisterGraphResponse* resp,
                          StatusCallback done) override {
    Unary(STUB_CALL(RegisterGraph), req, resp, nullptr, kControlTimeoutMs,
          std::move(done));
  }
  void DeregisterGraphAsync(const proto::DeregisterGraphRequest* req, proto::DeregisterGraphResponse* resp,
                            StatusCallback done) override {
    Unary(STUB_CALL(DeregisterGraph), req, resp, nullptr, kControlTimeoutMs,
          std::move(done));
  }
  void RunGraphAsync(const proto::RunGraphRequest* req, proto::RunGraphResponse* resp, CallOptions* opts,
                     StatusCallback done) override {
    Unary(STUB_CALL(RunGraph), req, resp, opts, 0, std::move(done));
  }
  Status RunGraph(const proto::RunGraphRequest* req, proto::RunGraphResponse* resp, CallOptions* opts) override {
    auto ctx = std::make_shared<grpc::ClientContext>();
    if (opts != nullptr) {
      SetTimeout(ctx.get(), opts->timeout_ms);
      opts->SetCancelCallback([ctx] { ctx->TryCancel(); });
    }
    Status st = FromGrpc(stub_->RunGraph(ctx.get(), *req, resp));
    if (opts != nullptr) opts->ClearCancelCallback();
    if (st.code() == absl::StatusCode::kUnavailable || st.code() == absl::StatusCode::kDeadlineExceeded) {
      st = errors::Annotate(st, absl::StrCat("Calling ", Where(), ": "));
    }
    return st;
  }
  void AbortStepAsync(const proto::AbortStepRequest* req, proto::AbortStepResponse* resp,
                      StatusCallback done) override {
    Unary(STUB_CALL(AbortStep), req, resp, nullptr, 10000, std::move(done));
  }
  void ResetAsync(const proto::ResetRequest* req, proto::ResetResponse* resp, StatusCallback done) override {
    Unary(STUB_CALL(Reset), req, resp, nullptr, kControlTimeoutMs,
          std::move(done));
  }
  void JobCompleteAsync(const proto::JobCompleteRequest* req, proto::JobCompleteResponse* resp,
                        StatusCallback done) override {
    Unary(STUB_CALL(JobComplete), req, resp, nullptr, kDefaultJobCompleteTimeoutMs, std::move(done));
  }
  void RecvTensorAsync(const proto::RecvTensorRequest* req, RecvTensorResult* result, CallOptions* opts,
                       StatusCallback done) override {
    auto* reader = new RecvTensorReader(Where(), result, opts, std::move(done));
    stub_->async()->RecvTensor(reader->context(), req, reader);
    reader->Start();
  }

 private:
  std::string Where() const { return absl::StrCat(task_, " (", address_, ")"); }

  // One unary call: its context lives until the callback.
  template <typename Invoke, typename Req, typename Resp>
  void Unary(Invoke invoke, const Req* req, Resp* resp, CallOptions* opts, int64_t default_timeout_ms,
             StatusCallback done) {
    auto ctx = std::make_shared<grpc::ClientContext>();
    int64_t timeout = opts != nullptr && opts->timeout_ms > 0 ? opts->timeout_ms : default_timeout_ms;
    SetTimeout(ctx.get(), timeout);
    if (opts != nullptr) opts->SetCancelCallback([ctx] { ctx->TryCancel(); });
    std::string where = Where();
    invoke(ctx.get(), req, resp, [ctx, opts, where, done = std::move(done)](grpc::Status s) {
      if (opts != nullptr) opts->ClearCancelCallback();
      Status st = FromGrpc(s);
      if (st.code() == absl::StatusCode::kUnavailable || st.code() == absl::StatusCode::kDeadlineExceeded) {
        st = errors::Annotate(st, absl::StrCat("Calling ", where, ": "));
      }
      done(st);
    });
  }

  const std::string address_;
  const std::string task_;
  std::unique_ptr<proto::rpc::WorkerService::Stub> stub_;
};

#undef STUB_CALL

}  // namespace

std::shared_ptr<WorkerInterface> NewGrpcRemoteWorker(const std::string& address, const std::string& task) {
  return std::make_shared<GrpcRemoteWorker>(address, task);
}

GrpcWorkerCache::GrpcWorkerCache(ClusterSpec cluster, std::string local_task, std::shared_ptr<WorkerInterface> local)
    : cluster_(std::move(cluster)), local_task_(std::move(local_task)), local_(std::move(local)) {}

GrpcWorkerCache::~GrpcWorkerCache() = default;

StatusOr<std::shared_ptr<WorkerInterface>> GrpcWorkerCache::GetWorker(const std::string& task) {
  if (task == local_task_ && local_ != nullptr) return local_;
  std::lock_guard<std::mutex> l(mu_);
  auto it = remote_.find(task);
  if (it != remote_.end()) return it->second;
  ASSIGN_OR_RETURN(DeviceName n, DeviceName::Parse(task));
  if (!n.has_job || !n.has_task) return errors::InvalidArgument("'", task, "' is not a task name");
  ASSIGN_OR_RETURN(std::string address, cluster_.TaskAddress(n.job, n.task));
  auto w = NewGrpcRemoteWorker(address, task);
  remote_[task] = w;
  return w;
}

std::vector<std::string> GrpcWorkerCache::ListTasks() const { return cluster_.TaskNames(); }

std::string GrpcWorkerCache::TaskAddress(const std::string& task) const {
  StatusOr<DeviceName> n = DeviceName::Parse(task);
  if (!n.ok()) return "";
  StatusOr<std::string> a = cluster_.TaskAddress(n->job, n->task);
  return a.ok() ? *a : "";
}

}  // namespace dflow::rpc
