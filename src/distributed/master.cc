#include "distributed/master.h"

#include <chrono>
#include <random>

#include "distributed/job_completion.h"
#include "distributed/master_session.h"

namespace dflow {

Master::Master(std::string local_task, WorkerCache* workers, MasterOptions options)
    : local_task_(std::move(local_task)), workers_(workers), options_(options) {}

Master::~Master() { Stop(); }

StatusOr<std::shared_ptr<MasterSession>> Master::Find(const std::string& handle) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) {
    return errors::Aborted("Session '", handle, "' is not found on ", local_task_,
                           ": it was closed, or the task restarted");
  }
  return it->second;
}

Status Master::CreateSession(const proto::CreateSessionRequest& req, proto::CreateSessionResponse* resp) {
  std::string handle;
  {
    std::lock_guard<std::mutex> l(mu_);
    // 64 random bits: workers keep each session's private state under its handle, and
    // sessions of different masters meet on the same ps tasks.
    std::random_device rd;
    handle = absl::StrCat("session", next_session_++, "_", absl::Hex((static_cast<uint64_t>(rd()) << 32) ^ rd()));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<MasterSession> s,
                   MasterSession::Create(handle, local_task_, workers_, req.config(), options_.startup_wait_ms,
                                         options_.probe_timeout_ms));
  RETURN_IF_ERROR(s->Extend(req.graph_def()));
  {
    std::lock_guard<std::mutex> l(mu_);
    sessions_[handle] = s;
  }
  resp->set_session_handle(handle);
  return absl::OkStatus();
}

Status Master::ExtendSession(const proto::ExtendSessionRequest& req, proto::ExtendSessionResponse*) {
  ASSIGN_OR_RETURN(std::shared_ptr<MasterSession> s, Find(req.session_handle()));
  return s->Extend(req.graph_def());
}

Status Master::RunStep(const proto::RunStepRequest& req, proto::RunStepResponse* resp, CallOptions* opts) {
  ASSIGN_OR_RETURN(std::shared_ptr<MasterSession> s, Find(req.session_handle()));
  {
    std::lock_guard<std::mutex> l(mu_);
    ++running_;
  }
  Status st = s->Run(req, resp, opts);
  {
    std::lock_guard<std::mutex> l(mu_);
    if (--running_ == 0) idle_cv_.notify_all();
  }
  return st;
}

bool Master::WaitUntilIdle(int64_t timeout_ms) {
  std::unique_lock<std::mutex> l(mu_);
  return idle_cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), [&] { return running_ == 0; });
}

Status Master::CloseSession(const proto::CloseSessionRequest& req, proto::CloseSessionResponse*) {
  std::shared_ptr<MasterSession> s;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = sessions_.find(req.session_handle());
    if (it == sessions_.end()) return absl::OkStatus();
    s = it->second;
    sessions_.erase(it);
  }
  return s->Close();
}

Status Master::ListDevices(const proto::ListDevicesRequest& req, proto::ListDevicesResponse* resp) {
  if (!req.session_handle().empty()) {
    ASSIGN_OR_RETURN(std::shared_ptr<MasterSession> s, Find(req.session_handle()));
    s->ListDevices(resp);
    return absl::OkStatus();
  }
  proto::CreateSessionRequest creq;
  ASSIGN_OR_RETURN(std::shared_ptr<MasterSession> s,
                   MasterSession::Create("list_devices", local_task_, workers_, creq.config(),
                                         options_.startup_wait_ms, options_.probe_timeout_ms));
  s->ListDevices(resp);
  return absl::OkStatus();
}

Status Master::Reset(const proto::MasterResetRequest& req, proto::MasterResetResponse*) {
  proto::ResetRequest wreq;
  for (const std::string& c : req.container()) wreq.add_container(c);
  Status first;
  for (const std::string& task : workers_->ListTasks()) {
    ASSIGN_OR_RETURN(std::shared_ptr<WorkerInterface> w, workers_->GetWorker(task));
    proto::ResetResponse wresp;
    Status s = CallAndWait([&](StatusCallback done) { w->ResetAsync(&wreq, &wresp, std::move(done)); });
    if (!s.ok() && first.ok()) first = errors::Annotate(s, absl::StrCat("Reset on ", task, ": "));
  }
  return first;
}

Status Master::CompleteJob(const proto::CompleteJobRequest& req, proto::CompleteJobResponse* resp) {
  BroadcastJobComplete(workers_, local_task_, req, resp);
  return absl::OkStatus();
}

void Master::Stop() {
  std::map<std::string, std::shared_ptr<MasterSession>> sessions;
  {
    std::lock_guard<std::mutex> l(mu_);
    sessions.swap(sessions_);
  }
  for (auto& [h, s] : sessions) s->Close().IgnoreError();
}

}  // namespace dflow
