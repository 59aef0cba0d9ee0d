#include "distributed/master.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "absl/strings/match.h"

#include "distributed/job_completion.h"
#include "distributed/master_session.h"

namespace dflow {

namespace {

constexpr size_t kIdleClosedKept = 4096;

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Master::Master(std::string local_task, WorkerCache* workers, MasterOptions options)
    : local_task_(std::move(local_task)), workers_(workers), options_(options) {
  if (options_.session_idle_timeout_ms > 0) reaper_ = std::thread([this] { IdleLoop(); });
}

Master::~Master() { Stop(); }

std::string Master::ClientHost(const std::string& peer) {
  // "ipv6:[::1]:41234": the host is in brackets.
  if (absl::StartsWith(peer, "ipv6:")) {
    size_t close = peer.rfind(']');
    return close == std::string::npos ? peer : peer.substr(0, close + 1);
  }
  if (absl::StartsWith(peer, "ipv4:")) {
    size_t colon = peer.rfind(':');
    return colon <= 4 ? peer : peer.substr(0, colon);
  }
  return peer;
}

Status Master::NotFoundLocked(const std::string& handle) const {
  auto idle = idle_closed_.find(handle);
  if (idle != idle_closed_.end()) {
    return errors::Aborted("Session '", handle, "' on ", local_task_, " was closed after it was idle for ",
                           idle->second, " ms (session_idle_timeout_ms = ", options_.session_idle_timeout_ms,
                           "); create a new session");
  }
  return errors::Aborted("Session '", handle, "' is not found on ", local_task_,
                         ": it was closed, or the task restarted");
}

StatusOr<std::shared_ptr<MasterSession>> Master::Acquire(const std::string& handle) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) return NotFoundLocked(handle);
  ++it->second.active;
  it->second.last_used_us = NowUs();
  return it->second.session;
}

void Master::Release(const std::string& handle) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) return;  // closed meanwhile
  --it->second.active;
  it->second.last_used_us = NowUs();
  // The idle thread sleeps until its earliest deadline; this one is later unless it sleeps
  // without one.
  if (it->second.active == 0 && reaper_wake_us_ == INT64_MAX) reaper_cv_.notify_all();
}

std::shared_ptr<MasterSession> Master::EraseLocked(std::map<std::string, Entry>::iterator it) {
  if (!it->second.client.empty()) {
    auto c = per_client_.find(it->second.client);
    if (c != per_client_.end() && --c->second <= 0) per_client_.erase(c);
  }
  std::shared_ptr<MasterSession> s = std::move(it->second.session);
  sessions_.erase(it);
  return s;
}

Status Master::CreateSession(const proto::CreateSessionRequest& req, proto::CreateSessionResponse* resp,
                             const std::string& client) {
  // Limits that need nothing built are checked first: a refused request costs nothing more.
  RETURN_IF_ERROR(MasterSession::CheckGraphLimits(req.graph_def(), 0, 0, options_.max_graph_bytes,
                                                  options_.max_graph_nodes, local_task_));
  const std::string host = ClientHost(client);
  const bool counted = !host.empty() && options_.max_sessions_per_client > 0;
  std::string handle;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (counted) {
      int& n = per_client_[host];
      if (n >= options_.max_sessions_per_client) {
        return errors::ResourceExhausted("Client ", host, " already has ", n, " open sessions on ", local_task_,
                                         ", the limit per client (max_sessions_per_client = ",
                                         options_.max_sessions_per_client, "); close the sessions it no longer uses");
      }
      ++n;  // held while the session is made, so that concurrent creations count
    }
    // 64 random bits: workers keep each session's private state under its handle, and
    // sessions of different masters meet on the same ps tasks.
    std::random_device rd;
    handle = absl::StrCat("session", next_session_++, "_", absl::Hex((static_cast<uint64_t>(rd()) << 32) ^ rd()));
  }
  auto give_back = [&] {
    if (!counted) return;
    std::lock_guard<std::mutex> l(mu_);
    auto c = per_client_.find(host);
    if (c != per_client_.end() && --c->second <= 0) per_client_.erase(c);
  };
  StatusOr<std::shared_ptr<MasterSession>> made = MasterSession::Create(handle, local_task_, workers_, req.config(),
                                                                        options_.startup_wait_ms,
                                                                        options_.probe_timeout_ms);
  if (!made.ok()) {
    give_back();
    return made.status();
  }
  std::shared_ptr<MasterSession> s = *std::move(made);
  s->SetGraphLimits(options_.max_graph_bytes, options_.max_graph_nodes);
  Status st = s->Extend(req.graph_def());
  if (!st.ok()) {
    give_back();
    return st;
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    Entry& e = sessions_[handle];
    e.session = s;
    e.client = counted ? host : std::string();
    e.last_used_us = NowUs();
    if (reaper_wake_us_ == INT64_MAX) reaper_cv_.notify_all();
  }
  resp->set_session_handle(handle);
  return absl::OkStatus();
}

Status Master::ExtendSession(const proto::ExtendSessionRequest& req, proto::ExtendSessionResponse*) {
  ASSIGN_OR_RETURN(std::shared_ptr<MasterSession> s, Acquire(req.session_handle()));
  Status st = s->Extend(req.graph_def());
  Release(req.session_handle());
  return st;
}

Status Master::RunStep(const proto::RunStepRequest& req, proto::RunStepResponse* resp, CallOptions* opts) {
  ASSIGN_OR_RETURN(std::shared_ptr<MasterSession> s, Acquire(req.session_handle()));
  {
    std::lock_guard<std::mutex> l(mu_);
    ++running_;
  }
  Status st = s->Run(req, resp, opts);
  {
    std::lock_guard<std::mutex> l(mu_);
    if (--running_ == 0) idle_cv_.notify_all();
  }
  Release(req.session_handle());
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
    s = EraseLocked(it);
  }
  return s->Close();
}

size_t Master::num_sessions() {
  std::lock_guard<std::mutex> l(mu_);
  return sessions_.size();
}

void Master::SetIdleCloseCallbackForTest(std::function<void(const std::string&)> fn) {
  std::lock_guard<std::mutex> l(mu_);
  on_idle_close_ = std::move(fn);
}

void Master::IdleLoop() {
  const int64_t timeout_us = options_.session_idle_timeout_ms * 1000;
  std::unique_lock<std::mutex> l(mu_);
  while (!stopping_) {
    const int64_t now = NowUs();
    int64_t next = INT64_MAX;
    std::vector<std::pair<std::string, std::shared_ptr<MasterSession>>> expired;
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      const Entry& e = it->second;
      const int64_t deadline = e.last_used_us + timeout_us;
      if (e.active > 0) {
        ++it;  // in use: its deadline starts when the last call ends
      } else if (deadline > now) {
        next = std::min(next, deadline);
        ++it;
      } else {
        const std::string handle = it->first;
        idle_closed_[handle] = (now - e.last_used_us) / 1000;
        idle_closed_order_.push_back(handle);
        if (idle_closed_order_.size() > kIdleClosedKept) {
          idle_closed_.erase(idle_closed_order_.front());
          idle_closed_order_.pop_front();
        }
        auto next_it = std::next(it);
        expired.emplace_back(handle, EraseLocked(it));
        it = next_it;
      }
    }
    if (!expired.empty()) {
      std::function<void(const std::string&)> notify = on_idle_close_;
      l.unlock();
      for (auto& [handle, s] : expired) {
        std::fprintf(stderr, "dflow: closing session %s on %s: idle for %lld ms\n", handle.c_str(), local_task_.c_str(),
                     static_cast<long long>(options_.session_idle_timeout_ms));
        s->Close().IgnoreError();
        s.reset();
        if (notify) notify(handle);
      }
      l.lock();
      continue;
    }
    // Sleeps until the earliest deadline, or, with none, until a session becomes idle (Release
    // and CreateSession notify when reaper_wake_us_ is INT64_MAX) or Stop.
    reaper_wake_us_ = next;
    if (next == INT64_MAX) {
      reaper_cv_.wait(l);
    } else {
      reaper_cv_.wait_for(l, std::chrono::microseconds(next - now));
    }
    reaper_wake_us_ = 0;
  }
}

Status Master::ListDevices(const proto::ListDevicesRequest& req, proto::ListDevicesResponse* resp) {
  if (!req.session_handle().empty()) {
    ASSIGN_OR_RETURN(std::shared_ptr<MasterSession> s, Acquire(req.session_handle()));
    s->ListDevices(resp);
    Release(req.session_handle());
    return absl::OkStatus();
  }
  proto::CreateSessionRequest creq;
  ASSIGN_OR_RETURN(std::shared_ptr<MasterSession> s,
                   MasterSession::Create("list_devices", local_task_, workers_, creq.config(), options_.startup_wait_ms,
                                         options_.probe_timeout_ms));
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
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
    reaper_cv_.notify_all();
  }
  if (reaper_.joinable() && reaper_.get_id() != std::this_thread::get_id()) reaper_.join();
  std::vector<std::shared_ptr<MasterSession>> sessions;
  {
    std::lock_guard<std::mutex> l(mu_);
    while (!sessions_.empty()) sessions.push_back(EraseLocked(sessions_.begin()));
  }
  for (auto& s : sessions) s->Close().IgnoreError();
}

}  // namespace dflow
