#include "distributed/worker_interface.h"

#include "base/notification.h"
#include "framework/device_name.h"

namespace dflow {

void CallOptions::SetCancelCallback(std::function<void()> fn) {
  bool run_now;
  {
    std::lock_guard<std::mutex> l(mu_);
    run_now = cancelled_;
    if (!run_now) cancel_ = std::move(fn);
  }
  if (run_now) fn();
}

void CallOptions::ClearCancelCallback() {
  std::lock_guard<std::mutex> l(mu_);
  cancel_ = nullptr;
}

void CallOptions::StartCancel() {
  std::function<void()> fn;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    fn = std::move(cancel_);
  }
  if (fn) fn();
}

StatusOr<std::string> TaskOfDevice(const std::string& device) {
  ASSIGN_OR_RETURN(DeviceName n, DeviceName::Parse(device));
  if (!n.has_job || !n.has_task) return errors::InvalidArgument("Device name '", device, "' names no job and task");
  return absl::StrCat("/job:", n.job, "/replica:", n.replica, "/task:", n.task);
}

Status WorkerInterface::RunGraph(const proto::RunGraphRequest* req, proto::RunGraphResponse* resp, CallOptions* opts) {
  return CallAndWait([&](StatusCallback done) { RunGraphAsync(req, resp, opts, std::move(done)); });
}

Status CallAndWait(const std::function<void(StatusCallback)>& call) {
  Notification done;
  Status status;
  call([&](const Status& s) {
    status = s;
    done.Notify();
  });
  done.Wait();
  return status;
}

}  // namespace dflow
