// The Coordinator of dflow/coordinator.h.
#include "dflow/coordinator.h"

#include <algorithm>
#include <chrono>

namespace dflow::train {

Coordinator::Coordinator() : Coordinator({absl::StatusCode::kOutOfRange}) {}

Coordinator::Coordinator(std::vector<absl::StatusCode> clean_stop_codes)
    : clean_stop_codes_(std::move(clean_stop_codes)) {}

Coordinator::~Coordinator() {
  RequestStop();
  Join().IgnoreError();
}

void Coordinator::RegisterRunner(std::shared_ptr<RunnerInterface> runner) {
  if (runner == nullptr) return;
  bool stop;
  {
    std::lock_guard<std::mutex> l(mu_);
    runners_.push_back(runner);
    stop = stop_;
  }
  if (stop) runner->RequestStop();
}

void Coordinator::RequestStop() {
  std::vector<std::shared_ptr<RunnerInterface>> runners;
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    runners = runners_;
  }
  cv_.notify_all();
  // Outside the lock: a runner's RequestStop may report back (ReportStatus) or run an op.
  for (auto& r : runners) r->RequestStop();
}

bool Coordinator::ShouldStop() const {
  std::lock_guard<std::mutex> l(mu_);
  return stop_;
}

bool Coordinator::WaitForStop(int64_t timeout_ms) const {
  std::unique_lock<std::mutex> l(mu_);
  if (timeout_ms < 0) {
    cv_.wait(l, [&] { return stop_; });
    return true;
  }
  return cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), [&] { return stop_; });
}

void Coordinator::ReportStatus(const Status& status) {
  if (status.ok()) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    bool clean = std::find(clean_stop_codes_.begin(), clean_stop_codes_.end(), status.code()) !=
                 clean_stop_codes_.end();
    if (!clean && status_.ok()) status_ = status;
  }
  RequestStop();
}

Status Coordinator::GetStatus() const {
  std::lock_guard<std::mutex> l(mu_);
  return status_;
}

Status Coordinator::Join() {
  std::vector<std::shared_ptr<RunnerInterface>> runners;
  {
    std::lock_guard<std::mutex> l(mu_);
    runners = runners_;
  }
  Status first;
  for (auto& r : runners) {
    Status s = r->Join();
    bool clean = std::find(clean_stop_codes_.begin(), clean_stop_codes_.end(), s.code()) != clean_stop_codes_.end();
    if (first.ok() && !s.ok() && !clean) first = s;
  }
  std::lock_guard<std::mutex> l(mu_);
  return status_.ok() ? first : status_;
}

bool Coordinator::AllRunnersStopped() const {
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& r : runners_)
    if (r->IsRunning()) return false;
  return true;
}

}  // namespace dflow::train
