#include "rpc/grpc_worker_service.h"

#include <algorithm>
#include <chrono>

#include "base/notification.h"
#include "distributed/worker.h"
#include "proto/rpc/services.grpc.pb.h"
#include "rpc/grpc_auth.h"
#include "rpc/grpc_util.h"
#include "tensor/tensor_proto.h"

namespace dflow::rpc {
namespace {

bool TravelsAsBytes(DType t) { return t != DT_STRING && t != DT_RESOURCE && t != DT_VARIANT; }

// Runs an asynchronous worker call and waits for it. With `opts` (whose call then owns all it
// uses), the client going away cancels the call and the handler returns at once.
template <typename Fn>
Status Wait(grpc::ServerContext* ctx, CallOptions* opts, Fn&& call) {
  auto done = std::make_shared<Notification>();
  auto status = std::make_shared<Status>();
  call([done, status](const Status& s) {
    *status = s;
    done->Notify();
  });
  while (!done->WaitFor(std::chrono::milliseconds(50))) {
    if (opts != nullptr && ctx->IsCancelled()) {
      opts->StartCancel();
      return errors::Cancelled("The caller went away");
    }
  }
  return *status;
}

// A raw RecvTensorRequest, parsed.
bool ParseRecvRequest(const grpc::ByteBuffer* request, proto::RecvTensorRequest* req) {
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (request->Dump(&slices).ok()) {
    for (const grpc::Slice& sl : slices) bytes.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
  }
  return req->ParseFromString(bytes);
}

// `msg` followed by field 5 (data) holding [data, data + n) of `tensor`'s buffer, without copying
// the data: the slice holds a reference to the tensor.
grpc::ByteBuffer ChunkBuffer(const proto::RecvTensorChunk& msg, const Tensor& tensor, const char* data, size_t n) {
  std::string head = msg.SerializeAsString();
  if (n > 0) {
    // Tag of field 5, wire type 2, then the length as a varint.
    head.push_back(static_cast<char>((5 << 3) | 2));
    for (uint64_t v = n;; v >>= 7) {
      if (v < 0x80) {
        head.push_back(static_cast<char>(v));
        break;
      }
      head.push_back(static_cast<char>((v & 0x7f) | 0x80));
    }
  }
  grpc::Slice slices[2] = {grpc::Slice(head), grpc::Slice()};
  if (n > 0) {
    auto* keep = new Tensor(tensor);
    slices[1] = grpc::Slice(
        const_cast<char*>(data), n, [](void* t) { delete static_cast<Tensor*>(t); }, keep);
  }
  return grpc::ByteBuffer(slices, n > 0 ? 2 : 1);
}

// The first (or only) chunk of `r` without its bytes; `*total` is how many bytes of the tensor's
// buffer follow (0: none, the chunk says it all).
proto::RecvTensorChunk FirstChunk(const RecvTensorResult& r, size_t* total) {
  proto::RecvTensorChunk first;
  first.set_is_dead(r.is_dead);
  *total = 0;
  if (r.is_dead || !r.tensor.IsInitialized()) return first;
  first.set_dtype(static_cast<proto::DataType>(r.tensor.dtype()));
  ShapeToProto(r.tensor.shape(), first.mutable_shape());
  if (!TravelsAsBytes(r.tensor.dtype())) {
    TensorToProto(r.tensor, first.mutable_proto());
    return first;
  }
  *total = r.tensor.TotalBytes();
  first.set_total_bytes(static_cast<int64_t>(*total));
  return first;
}

// Streams one tensor without copying its bytes: each chunk is a serialized RecvTensorChunk whose
// `data` field points into the tensor's buffer. The wait for the value does not hold a thread:
// the reactor writes when the worker calls back. The last chunk goes with the call's status.
class RecvTensorWriter : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  // A call refused before it started.
  explicit RecvTensorWriter(const grpc::Status& refused) { Finish(refused); }
  RecvTensorWriter(Worker* worker, const grpc::ByteBuffer* request) {
    auto req = std::make_shared<proto::RecvTensorRequest>();
    if (!ParseRecvRequest(request, req.get())) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Malformed RecvTensorRequest"));
      return;
    }
    auto result = std::make_shared<RecvTensorResult>();
    // The callback may run at once, on this thread; Start() is called by then.
    worker->RecvTensorAsync(req.get(), result.get(), &opts_, [this, req, result](const Status& s) {
      if (!s.ok()) {
        Finish(ToGrpc(s));
        return;
      }
      Begin(*result);
    });
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "The receiver went away"));
      return;
    }
    WriteNext();
  }
  void OnCancel() override { opts_.StartCancel(); }
  void OnDone() override { delete this; }

 private:
  void Begin(const RecvTensorResult& r) {
    tensor_ = r.tensor;
    proto::RecvTensorChunk first = FirstChunk(r, &total_);
    size_t n = std::min(total_, kChunkBytes);
    // State first: OnWriteDone may run on another thread before StartWrite returns.
    offset_ = n;
    Write(first, static_cast<const char*>(n > 0 ? tensor_.raw_data() : nullptr), n);
  }

  void WriteNext() {
    size_t n = std::min(total_ - offset_, kChunkBytes);
    const char* data = static_cast<const char*>(tensor_.raw_data()) + offset_;
    offset_ += n;
    Write(proto::RecvTensorChunk(), data, n);
  }

  void Write(const proto::RecvTensorChunk& msg, const char* data, size_t n) {
    buffer_ = ChunkBuffer(msg, tensor_, data, n);
    if (offset_ >= total_) {
      StartWriteAndFinish(&buffer_, grpc::WriteOptions(), grpc::Status::OK);
    } else {
      StartWrite(&buffer_);
    }
  }

  CallOptions opts_;
  Tensor tensor_;
  grpc::ByteBuffer buffer_;
  size_t total_ = 0, offset_ = 0;
};

// RecvTensorUnary: the whole tensor in one message, its bytes not copied either.
class RecvTensorUnaryReactor : public grpc::ServerUnaryReactor {
 public:
  // A call refused before it started.
  explicit RecvTensorUnaryReactor(const grpc::Status& refused) { Finish(refused); }
  RecvTensorUnaryReactor(Worker* worker, const grpc::ByteBuffer* request, grpc::ByteBuffer* response) {
    auto req = std::make_shared<proto::RecvTensorRequest>();
    if (!ParseRecvRequest(request, req.get())) {
      Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Malformed RecvTensorRequest"));
      return;
    }
    auto result = std::make_shared<RecvTensorResult>();
    // The callback may run at once, on this thread.
    worker->RecvTensorAsync(req.get(), result.get(), &opts_, [this, req, result, response](const Status& s) {
      if (!s.ok()) {
        Finish(ToGrpc(s));
        return;
      }
      size_t total;
      proto::RecvTensorChunk only = FirstChunk(*result, &total);
      *response = ChunkBuffer(only, result->tensor,
                              static_cast<const char*>(total > 0 ? result->tensor.raw_data() : nullptr), total);
      Finish(grpc::Status::OK);
    });
  }
  void OnCancel() override { opts_.StartCancel(); }
  void OnDone() override { delete this; }

 private:
  CallOptions opts_;
};

class WorkerServiceImpl final
    : public proto::rpc::WorkerService::WithCallbackMethod_RunGraph<
          proto::rpc::WorkerService::WithRawCallbackMethod_RecvTensor<
              proto::rpc::WorkerService::WithRawCallbackMethod_RecvTensorUnary<proto::rpc::WorkerService::Service>>> {
 public:
  WorkerServiceImpl(Worker* worker, const RpcAuthenticator* auth) : worker_(worker), auth_(auth) {}

  grpc::Status GetStatus(grpc::ServerContext* ctx, const proto::GetStatusRequest* req,
                         proto::GetStatusResponse* resp) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kMember, "GetStatus"); !a.ok()) return a;
    return ToGrpc(Wait(ctx, nullptr, [&](StatusCallback d) { worker_->GetStatusAsync(req, resp, nullptr, d); }));
  }
  grpc::Status RegisterGraph(grpc::ServerContext* ctx, const proto::RegisterGraphRequest* req,
                             proto::RegisterGraphResponse* resp) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kMember, "RegisterGraph"); !a.ok()) return a;
    return ToGrpc(Wait(ctx, nullptr, [&](StatusCallback d) { worker_->RegisterGraphAsync(req, resp, d); }));
  }
  grpc::Status DeregisterGraph(grpc::ServerContext* ctx, const proto::DeregisterGraphRequest* req,
                               proto::DeregisterGraphResponse* resp) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kMember, "DeregisterGraph"); !a.ok()) return a;
    return ToGrpc(Wait(ctx, nullptr, [&](StatusCallback d) { worker_->DeregisterGraphAsync(req, resp, d); }));
  }
  // Asynchronous: no thread waits while the partition runs, and the request is not copied.
  grpc::ServerUnaryReactor* RunGraph(grpc::CallbackServerContext* ctx, const proto::RunGraphRequest* req,
                                     proto::RunGraphResponse* resp) override {
    class Reactor : public grpc::ServerUnaryReactor {
     public:
      void OnCancel() override { opts.StartCancel(); }
      void OnDone() override { delete this; }
      CallOptions opts;
    };
    auto* reactor = new Reactor;
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kMember, "RunGraph"); !a.ok()) {
      reactor->Finish(a);
      return reactor;
    }
    worker_->RunGraphAsync(req, resp, &reactor->opts, [reactor](const Status& s) { reactor->Finish(ToGrpc(s)); });
    return reactor;
  }
  grpc::Status AbortStep(grpc::ServerContext* ctx, const proto::AbortStepRequest* req,
                         proto::AbortStepResponse* resp) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kMember, "AbortStep"); !a.ok()) return a;
    return ToGrpc(Wait(ctx, nullptr, [&](StatusCallback d) { worker_->AbortStepAsync(req, resp, d); }));
  }
  grpc::Status Reset(grpc::ServerContext* ctx, const proto::ResetRequest* req, proto::ResetResponse* resp) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kChief, "Reset"); !a.ok()) return a;
    return ToGrpc(Wait(ctx, nullptr, [&](StatusCallback d) { worker_->ResetAsync(req, resp, d); }));
  }
  grpc::Status JobComplete(grpc::ServerContext* ctx, const proto::JobCompleteRequest* req,
                           proto::JobCompleteResponse* resp) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kChief, "JobComplete"); !a.ok()) return a;
    return ToGrpc(Wait(ctx, nullptr, [&](StatusCallback d) { worker_->JobCompleteAsync(req, resp, nullptr, d); }));
  }

  grpc::ServerWriteReactor<grpc::ByteBuffer>* RecvTensor(grpc::CallbackServerContext* ctx,
                                                         const grpc::ByteBuffer* request) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kMember, "RecvTensor"); !a.ok()) {
      return new RecvTensorWriter(a);
    }
    return new RecvTensorWriter(worker_, request);
  }
  grpc::ServerUnaryReactor* RecvTensorUnary(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* request,
                                            grpc::ByteBuffer* response) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kMember, "RecvTensor"); !a.ok()) {
      return new RecvTensorUnaryReactor(a);
    }
    return new RecvTensorUnaryReactor(worker_, request, response);
  }

 private:
  Worker* worker_;
  const RpcAuthenticator* auth_;
};

}  // namespace

std::unique_ptr<grpc::Service> NewGrpcWorkerService(Worker* worker, const RpcAuthenticator* auth) {
  return std::make_unique<WorkerServiceImpl>(worker, auth);
}

}  // namespace dflow::rpc
