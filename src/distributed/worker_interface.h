// WorkerInterface: what a master and peer tasks ask of a task's worker, transport-neutral. The
// Worker itself implements it (the in-process transport); the gRPC adapter (src/rpc/) forwards
// it over the network. WorkerCache finds the interface of any task of the cluster.
//
// Every call completes by calling `done` exactly once, possibly on another thread, possibly
// before the call returns. The request and response must outlive the call (until `done` has
// run); `opts`, where given, must also stay valid until the call has returned, since a callee may
// register its cancel action on it after handing the work on.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/worker.pb.h"
#include "tensor/tensor.h"

namespace dflow {

using StatusCallback = std::function<void(const Status&)>;

// Per-call options: a deadline and a way to cancel a call in flight.
class CallOptions {
 public:
  // 0: no deadline beyond the transport's own.
  int64_t timeout_ms = 0;
  // Registers the transport's cancel action (replacing any); runs it now if already cancelled.
  void SetCancelCallback(std::function<void()> fn);
  void ClearCancelCallback();
  void StartCancel();

 private:
  std::mutex mu_;
  bool cancelled_ = false;
  std::function<void()> cancel_;
};

struct RecvTensorResult {
  Tensor tensor;
  bool is_dead = false;
};

class WorkerInterface {
 public:
  virtual ~WorkerInterface() = default;
  virtual void GetStatusAsync(const proto::GetStatusRequest* req, proto::GetStatusResponse* resp, CallOptions* opts,
                              StatusCallback done) = 0;
  virtual void RegisterGraphAsync(const proto::RegisterGraphRequest* req, proto::RegisterGraphResponse* resp,
                                  StatusCallback done) = 0;
  virtual void DeregisterGraphAsync(const proto::DeregisterGraphRequest* req, proto::DeregisterGraphResponse* resp,
                                    StatusCallback done) = 0;
  virtual void RunGraphAsync(const proto::RunGraphRequest* req, proto::RunGraphResponse* resp, CallOptions* opts,
                             StatusCallback done) = 0;
  // RunGraphAsync, waited for on the calling thread. A transport may do it without handing the
  // completion to another thread (gRPC: a blocking call), which saves a thread switch.
  virtual Status RunGraph(const proto::RunGraphRequest* req, proto::RunGraphResponse* resp, CallOptions* opts);
  virtual void AbortStepAsync(const proto::AbortStepRequest* req, proto::AbortStepResponse* resp,
                              StatusCallback done) = 0;
  // The tensor sent under req->rendezvous_key in step req->step_id on this task.
  virtual void RecvTensorAsync(const proto::RecvTensorRequest* req, RecvTensorResult* result, CallOptions* opts,
                               StatusCallback done) = 0;
  virtual void ResetAsync(const proto::ResetRequest* req, proto::ResetResponse* resp, StatusCallback done) = 0;
  // The job is complete (distributed/job_completion.h). `opts` (may be null) bounds the call.
  // Unimplemented by default.
  virtual void JobCompleteAsync(const proto::JobCompleteRequest* req, proto::JobCompleteResponse* resp,
                                CallOptions* opts, StatusCallback done) {
    done(errors::Unimplemented("JobComplete is not supported by this transport"));
  }
  // In process only (the master's own task): puts a tensor another task sent into step
  // `step_id`'s rendezvous, for a key the step's RunGraph listed in pushed_keys.
  virtual Status Deposit(int64_t step_id, const std::string& key, const Tensor& value, bool is_dead) {
    return errors::Unimplemented("Deposit is only for the in-process worker");
  }
};

class WorkerCache {
 public:
  virtual ~WorkerCache() = default;
  // The worker of `task` ("/job:ps/replica:0/task:0"). InvalidArgument for a task the cluster
  // does not have.
  virtual StatusOr<std::shared_ptr<WorkerInterface>> GetWorker(const std::string& task) = 0;
  // Every task of the cluster, "/job:<job>/replica:0/task:<i>".
  virtual std::vector<std::string> ListTasks() const = 0;
  // "host:port" of a task, for messages ("" when in-process).
  virtual std::string TaskAddress(const std::string& task) const = 0;
};

// The task part of a device name: "/job:ps/replica:0/task:1/device:CPU:0" -> "/job:ps/replica:0/task:1".
StatusOr<std::string> TaskOfDevice(const std::string& device);

// Synchronous helpers: wait for `done` (bounded only by the call's own deadline).
Status CallAndWait(const std::function<void(StatusCallback)>& call);

}  // namespace dflow
