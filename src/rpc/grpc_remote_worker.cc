#include "rpc/grpc_remote_worker.h"

#include <grpcpp/generic/generic_stub.h>

#include <atomic>
#include <unordered_set>

#include "distributed/job_completion.h"
#include "framework/device_name.h"
#include "proto/rpc/services.grpc.pb.h"
#include "rpc/grpc_util.h"
#include "rpc/tensor_chunks.h"

namespace dflow::rpc {
namespace {

// Deadlines of the calls that have no step deadline of their own.
constexpr int64_t kControlTimeoutMs = 60000;

// The RecvTensor method, called through a generic stub so that chunks arrive as raw buffers.
constexpr char kRecvTensorMethod[] = "/dflow.proto.rpc.WorkerService/RecvTensor";

// RecvTensor calls made, by path (GetRecvTensorCallCounts).
std::atomic<int64_t> unary_calls{0}, streamed_calls{0};

// What both RecvTensor calls set up: the request as raw bytes, and the step's deadline and
// cancellation on the call's context (shared, so that a late cancel finds it alive).
grpc::ByteBuffer PrepareRecvTensorCall(const proto::RecvTensorRequest& req, CallOptions* opts,
                                       const std::shared_ptr<grpc::ClientContext>& ctx) {
  if (opts != nullptr) {
    SetTimeout(ctx.get(), opts->timeout_ms);
    opts->SetCancelCallback([ctx] { ctx->TryCancel(); });
  }
  grpc::Slice slice(req.SerializeAsString());
  return grpc::ByteBuffer(&slice, 1);
}

// Receives a streamed tensor. The call is server-streaming on the wire; the client side is a
// bidi reactor only because that is the generic stub's streaming form. Each chunk is read where
// gRPC received it (TensorChunkAssembler), so its bytes are copied once, into the tensor.
class RecvTensorReader : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  RecvTensorReader(std::string from, const proto::RecvTensorRequest& req, RecvTensorResult* result, CallOptions* opts,
                   StatusCallback done)
      : assembler_(std::move(from)), result_(result), opts_(opts), done_(std::move(done)) {
    request_ = PrepareRecvTensorCall(req, opts_, ctx_);
  }
  void Start(grpc::GenericStub* stub) {
    ++streamed_calls;
    stub->PrepareBidiStreamingCall(ctx_.get(), kRecvTensorMethod, grpc::StubOptions(), this);
    StartWriteLast(&request_, grpc::WriteOptions());
    StartRead(&chunk_);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ended; OnDone follows
    if (error_.ok()) {
      std::vector<grpc::Slice> slices;
      error_ = FromGrpc(chunk_.Dump(&slices));
      std::vector<absl::string_view> pieces;
      pieces.reserve(slices.size());
      for (const grpc::Slice& sl : slices) {
        pieces.emplace_back(reinterpret_cast<const char*>(sl.begin()), sl.size());
      }
      if (error_.ok()) error_ = assembler_.Add(pieces);
      // No point in the rest of a stream that went wrong.
      if (!error_.ok()) ctx_->TryCancel();
    }
    chunk_.Clear();
    StartRead(&chunk_);
  }

  void OnDone(const grpc::Status& s) override {
    if (opts_ != nullptr) opts_->ClearCancelCallback();
    Status status = error_.ok() ? FromGrpc(s) : error_;
    if (status.ok()) status = assembler_.Finish(result_);
    StatusCallback done = std::move(done_);
    delete this;
    done(status);
  }

 private:
  TensorChunkAssembler assembler_;
  RecvTensorResult* result_;
  CallOptions* opts_;
  StatusCallback done_;
  std::shared_ptr<grpc::ClientContext> ctx_ = std::make_shared<grpc::ClientContext>();
  grpc::ByteBuffer request_;
  grpc::ByteBuffer chunk_;
  Status error_;
};

// RecvTensorUnary: the whole tensor in one response, read where gRPC received it.
constexpr char kRecvTensorUnaryMethod[] = "/dflow.proto.rpc.WorkerService/RecvTensorUnary";

// Whether the tensor `r` fits in one chunk: then a unary call carries it next time.
bool FitsInOneChunk(const RecvTensorResult& r) {
  if (r.is_dead || !r.tensor.IsInitialized()) return true;
  const DType t = r.tensor.dtype();
  if (t == DT_STRING || t == DT_RESOURCE || t == DT_VARIANT) return false;  // no cheap size
  return r.tensor.TotalBytes() <= kChunkBytes;
}

// The rendezvous keys (the same every step) whose last tensor fit in one chunk. A key seen for
// the first time streams; after that its size decides. A tensor that grew still arrives whole
// by the unary call (it is the same message, only unbounded), and its key streams again after.
class SmallKeys {
 public:
  bool Contains(const std::string& key) {
    std::lock_guard<std::mutex> l(mu_);
    return keys_.count(key) > 0;
  }
  void Record(const std::string& key, bool small) {
    std::lock_guard<std::mutex> l(mu_);
    if (!small) {
      keys_.erase(key);
      return;
    }
    // Bounded: keys of while-loop iterations are many; forgetting only costs a streamed call.
    if (keys_.size() >= kMaxKeys) keys_.clear();
    keys_.insert(key);
  }

 private:
  static constexpr size_t kMaxKeys = 4096;
  std::mutex mu_;
  std::unordered_set<std::string> keys_;
};

// Receives a tensor by one unary call.
class RecvTensorUnaryCall {
 public:
  RecvTensorUnaryCall(std::string from, const proto::RecvTensorRequest& req, RecvTensorResult* result,
                      CallOptions* opts, StatusCallback done)
      : assembler_(std::move(from)), result_(result), opts_(opts), done_(std::move(done)) {
    request_ = PrepareRecvTensorCall(req, opts_, ctx_);
  }
  void Start(grpc::GenericStub* stub) {
    ++unary_calls;
    stub->UnaryCall(ctx_.get(), kRecvTensorUnaryMethod, grpc::StubOptions(), &request_, &response_,
                    [this](grpc::Status s) { OnDone(s); });
  }

 private:
  void OnDone(const grpc::Status& s) {
    if (opts_ != nullptr) opts_->ClearCancelCallback();
    Status status = FromGrpc(s);
    if (status.ok()) {
      std::vector<grpc::Slice> slices;
      status = FromGrpc(response_.Dump(&slices));
      std::vector<absl::string_view> pieces;
      pieces.reserve(slices.size());
      for (const grpc::Slice& sl : slices) pieces.emplace_back(reinterpret_cast<const char*>(sl.begin()), sl.size());
      if (status.ok()) status = assembler_.Add(pieces);
      if (status.ok()) status = assembler_.Finish(result_);
    }
    StatusCallback done = std::move(done_);
    delete this;
    done(status);
  }

  TensorChunkAssembler assembler_;
  RecvTensorResult* result_;
  CallOptions* opts_;
  StatusCallback done_;
  std::shared_ptr<grpc::ClientContext> ctx_ = std::make_shared<grpc::ClientContext>();
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
};

// The callback form of a stub method (the method names are overloaded, so no member pointers).
#define STUB_CALL(Method)                                                                 \
  [this](grpc::ClientContext* c, auto* q, auto* r, std::function<void(grpc::Status)> f) { \
    stub_->async()->Method(c, q, r, std::move(f));                                        \
  }

class GrpcRemoteWorker : public WorkerInterface {
 public:
  GrpcRemoteWorker(const std::string& address, std::string task, const ClusterCredentials& creds)
      : address_(address),
        task_(std::move(task)),
        channel_(NewChannel(address, creds)),
        stub_(proto::rpc::WorkerService::NewStub(channel_)),
        generic_(channel_) {}

  void GetStatusAsync(const proto::GetStatusRequest* req, proto::GetStatusResponse* resp, CallOptions* opts,
                      StatusCallback done) override {
    Unary(STUB_CALL(GetStatus), req, resp, opts, kControlTimeoutMs, std::move(done));
  }
  void RegisterGraphAsync(const proto::RegisterGraphRequest* req, proto::RegisterGraphResponse* resp,
                          StatusCallback done) override {
    Unary(STUB_CALL(RegisterGraph), req, resp, nullptr, kControlTimeoutMs, std::move(done));
  }
  void DeregisterGraphAsync(const proto::DeregisterGraphRequest* req, proto::DeregisterGraphResponse* resp,
                            StatusCallback done) override {
    Unary(STUB_CALL(DeregisterGraph), req, resp, nullptr, kControlTimeoutMs, std::move(done));
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
    Unary(STUB_CALL(Reset), req, resp, nullptr, kControlTimeoutMs, std::move(done));
  }
  void JobCompleteAsync(const proto::JobCompleteRequest* req, proto::JobCompleteResponse* resp, CallOptions* opts,
                        StatusCallback done) override {
    Unary(STUB_CALL(JobComplete), req, resp, opts, kDefaultJobCompleteTimeoutMs, std::move(done));
  }
  void RecvTensorAsync(const proto::RecvTensorRequest* req, RecvTensorResult* result, CallOptions* opts,
                       StatusCallback done) override {
    // Which path the next call for this key takes depends on this one's size.
    auto record = [keys = small_keys_, key = req->rendezvous_key(), result, done = std::move(done)](const Status& s) {
      if (s.ok()) keys->Record(key, FitsInOneChunk(*result));
      done(s);
    };
    if (small_keys_->Contains(req->rendezvous_key())) {
      auto* call = new RecvTensorUnaryCall(Where(), *req, result, opts, std::move(record));
      call->Start(&generic_);
    } else {
      auto* reader = new RecvTensorReader(Where(), *req, result, opts, std::move(record));
      reader->Start(&generic_);
    }
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
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<proto::rpc::WorkerService::Stub> stub_;
  grpc::GenericStub generic_;
  // Shared with the calls in flight.
  std::shared_ptr<SmallKeys> small_keys_ = std::make_shared<SmallKeys>();
};

#undef STUB_CALL

}  // namespace

std::shared_ptr<WorkerInterface> NewGrpcRemoteWorker(const std::string& address, const std::string& task,
                                                     const ClusterCredentials& creds) {
  return std::make_shared<GrpcRemoteWorker>(address, task, creds);
}

RecvTensorCallCounts GetRecvTensorCallCounts() { return {unary_calls.load(), streamed_calls.load()}; }

GrpcWorkerCache::GrpcWorkerCache(ClusterSpec cluster, std::string local_task, std::shared_ptr<WorkerInterface> local,
                                 ClusterCredentials creds)
    : cluster_(std::move(cluster)),
      local_task_(std::move(local_task)),
      local_(std::move(local)),
      creds_(std::move(creds)) {}

GrpcWorkerCache::~GrpcWorkerCache() = default;

StatusOr<std::shared_ptr<WorkerInterface>> GrpcWorkerCache::GetWorker(const std::string& task) {
  if (task == local_task_ && local_ != nullptr) return local_;
  std::lock_guard<std::mutex> l(mu_);
  auto it = remote_.find(task);
  if (it != remote_.end()) return it->second;
  ASSIGN_OR_RETURN(DeviceName n, DeviceName::Parse(task));
  if (!n.has_job || !n.has_task) return errors::InvalidArgument("'", task, "' is not a task name");
  ASSIGN_OR_RETURN(std::string address, cluster_.TaskAddress(n.job, n.task));
  auto w = NewGrpcRemoteWorker(address, task, creds_);
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
