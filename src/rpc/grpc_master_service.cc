#include "rpc/grpc_master_service.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "distributed/master.h"
#include "proto/rpc/services.grpc.pb.h"
#include "rpc/grpc_auth.h"
#include "rpc/grpc_util.h"

namespace dflow::rpc {
namespace {

// One thread that watches the steps in progress and cancels those whose client went away (the
// synchronous API has no cancellation callback; a thread per step would cost every step).
class CancelWatcher {
 public:
  CancelWatcher() : thread_([this] { Loop(); }) {}
  ~CancelWatcher() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Add(grpc::ServerContext* ctx, CallOptions* opts) {
    std::lock_guard<std::mutex> l(mu_);
    watched_.emplace(ctx, opts);
  }
  void Remove(grpc::ServerContext* ctx) {
    std::lock_guard<std::mutex> l(mu_);
    watched_.erase(ctx);
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> l(mu_);
    while (!stop_) {
      cv_.wait_for(l, std::chrono::milliseconds(200));
      for (auto& [ctx, opts] : watched_) {
        // StartCancel only runs the registered callback, which does not take mu_.
        if (ctx->IsCancelled()) opts->StartCancel();
      }
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::map<grpc::ServerContext*, CallOptions*> watched_;
  std::thread thread_;
};

class MasterServiceImpl final : public proto::rpc::MasterService::Service {
 public:
  MasterServiceImpl(Master* master, const RpcAuthenticator* auth) : master_(master), auth_(auth) {}

  grpc::Status CreateSession(grpc::ServerContext* ctx, const proto::CreateSessionRequest* req,
                             proto::CreateSessionResponse* resp) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kMember, "CreateSession"); !a.ok()) return a;
    return ToGrpc(master_->CreateSession(*req, resp, ctx->peer()));
  }
  grpc::Status ExtendSession(grpc::ServerContext* ctx, const proto::ExtendSessionRequest* req,
                             proto::ExtendSessionResponse* resp) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kMember, "ExtendSession"); !a.ok()) return a;
    return ToGrpc(master_->ExtendSession(*req, resp));
  }
  grpc::Status RunStep(grpc::ServerContext* ctx, const proto::RunStepRequest* req,
                       proto::RunStepResponse* resp) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kMember, "RunStep"); !a.ok()) return a;
    // A client that goes away cancels its step.
    CallOptions opts;
    watcher_.Add(ctx, &opts);
    Status s = master_->RunStep(*req, resp, &opts);
    watcher_.Remove(ctx);
    return ToGrpc(s);
  }
  grpc::Status CloseSession(grpc::ServerContext* ctx, const proto::CloseSessionRequest* req,
                            proto::CloseSessionResponse* resp) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kMember, "CloseSession"); !a.ok()) return a;
    return ToGrpc(master_->CloseSession(*req, resp));
  }
  grpc::Status ListDevices(grpc::ServerContext* ctx, const proto::ListDevicesRequest* req,
                           proto::ListDevicesResponse* resp) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kMember, "ListDevices"); !a.ok()) return a;
    return ToGrpc(master_->ListDevices(*req, resp));
  }
  grpc::Status Reset(grpc::ServerContext* ctx, const proto::MasterResetRequest* req,
                     proto::MasterResetResponse* resp) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kChief, "Reset"); !a.ok()) return a;
    return ToGrpc(master_->Reset(*req, resp));
  }
  grpc::Status CompleteJob(grpc::ServerContext* ctx, const proto::CompleteJobRequest* req,
                           proto::CompleteJobResponse* resp) override {
    if (grpc::Status a = auth_->Check(*ctx, RpcAuthenticator::Role::kChief, "CompleteJob"); !a.ok()) return a;
    return ToGrpc(master_->CompleteJob(*req, resp));
  }

 private:
  Master* master_;
  const RpcAuthenticator* auth_;
  CancelWatcher watcher_;
};

}  // namespace

std::unique_ptr<grpc::Service> NewGrpcMasterService(Master* master, const RpcAuthenticator* auth) {
  return std::make_unique<MasterServiceImpl>(master, auth);
}

}  // namespace dflow::rpc
