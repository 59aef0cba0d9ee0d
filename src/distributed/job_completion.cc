#include "distributed/job_completion.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <mutex>
#include <vector>

#include "absl/strings/match.h"
#include "base/notification.h"

namespace dflow {
namespace {
constexpr char kMarker[] = "Job is complete";

// The task's host answered that nothing serves on its port: the connection was refused, or reset
// (a process that died). A cut link answers nothing: calls time out, or fail at once while the
// channel waits to reconnect, with the last connection attempt's timeout as their message. (How
// fast a call failed says nothing: a channel between connection attempts fails calls at once.)
bool NothingServes(const Status& s) {
  return absl::IsUnavailable(s) &&
         (absl::StrContains(s.message(), "Connection refused") || absl::StrContains(s.message(), "Connection reset"));
}

// Sends JobComplete to the tasks of a cluster for BroadcastJobComplete: one wave of calls at a
// time, with the tasks not told kept for RetryMissed.
class JobCompleteBroadcast {
 public:
  JobCompleteBroadcast(WorkerCache* workers, const std::string& local_task, const proto::CompleteJobRequest& req,
                       proto::CompleteJobResponse* resp)
      : workers_(workers),
        local_task_(local_task),
        timeout_ms_(req.timeout_ms() > 0 ? req.timeout_ms() : kDefaultJobCompleteTimeoutMs),
        drain_ms_(req.drain_ms() >= 0 ? req.drain_ms() : 0),
        retry_ms_(req.retry_ms() == 0 ? kDefaultJobCompleteRetryMs : std::max<int64_t>(req.retry_ms(), 0)),
        resp_(resp) {}

  void Run() {
    // Three waves: the tasks that run training steps, then the ps tasks, then this one. A ps task
    // that stops fails the steps that still need it; told first, their tasks already know why.
    std::vector<std::string> others, ps;
    bool has_local = false;
    for (const std::string& task : workers_->ListTasks()) {
      if (task == local_task_) {
        has_local = true;
      } else {
        (absl::StartsWith(task, "/job:ps/") ? ps : others).push_back(task);
      }
    }
    for (const std::vector<std::string>* wave : {&others, &ps}) RunWave(*wave, {}, &missed_);
    RetryMissed(has_local);
    for (const Missed& m : missed_) {
      std::string where = workers_->TaskAddress(m.task);
      resp_->add_unreachable_tasks(absl::StrCat(m.task, where.empty() ? "" : absl::StrCat(" (", where, ")"), ": ",
                                                m.error.ToString()));
    }
    if (has_local) {
      Status s = Finish(Start(local_task_));
      if (s.ok()) resp_->add_notified_tasks(local_task_);
      else resp_->add_unreachable_tasks(absl::StrCat(local_task_, ": ", s.ToString()));
    }
  }

 private:
  struct Call {
    std::string task;
    std::shared_ptr<WorkerInterface> worker;
    proto::JobCompleteRequest req;
    proto::JobCompleteResponse resp;
    CallOptions opts;  // the call's deadline
    Status status;
    Notification done;
  };
  // A task not told yet, with its last error and since when every try found nothing serving
  // there (NothingServes).
  struct Missed {
    std::string task;
    Status error;
    std::chrono::steady_clock::time_point refused_since;
    bool refused = false;
  };

  std::shared_ptr<Call> Start(const std::string& task, bool record_only = false) {
    auto c = std::make_shared<Call>();
    c->task = task;
    c->req.set_source_task(local_task_);
    c->req.set_drain_ms(drain_ms_);
    c->req.set_record_only(record_only);
    c->opts.timeout_ms = timeout_ms_;
    StatusOr<std::shared_ptr<WorkerInterface>> w = workers_->GetWorker(task);
    if (!w.ok()) {
      c->status = w.status();
      c->done.Notify();
      return c;
    }
    c->worker = *w;
    c->worker->JobCompleteAsync(&c->req, &c->resp, &c->opts, [c](const Status& s) {
      c->status = s;
      c->done.Notify();
    });
    return c;
  }

  // OK when the task was told; else why not.
  Status Finish(const std::shared_ptr<Call>& c) {
    // The transport bounds each call; this bound only guards a transport that does not.
    if (!c->done.WaitFor(std::chrono::milliseconds(timeout_ms_ + 5000))) {
      return errors::DeadlineExceeded("no answer within ", timeout_ms_, " ms");
    }
    return c->status;
  }

  // Tells the tasks of `wave` at once; those not told go to `still`. `before`: their earlier
  // failures, if any.
  void RunWave(const std::vector<std::string>& wave, const std::vector<Missed>& before, std::vector<Missed>* still) {
    std::vector<std::shared_ptr<Call>> calls;
    for (const std::string& task : wave) calls.push_back(Start(task));
    for (const auto& c : calls) {
      Status s = Finish(c);
      if (s.ok()) {
        resp_->add_notified_tasks(c->task);
        continue;
      }
      Missed m{c->task, s, std::chrono::steady_clock::now(), NothingServes(s)};
      for (const Missed& b : before) {
        if (b.task == m.task && b.refused && m.refused) m.refused_since = b.refused_since;
      }
      still->push_back(std::move(m));
    }
  }

  // A task that did not answer may be cut off from this one, or busy: it is tried again for
  // retry_ms, so that it learns the job is over once it can be reached (else it would retry its
  // own steps until it gave up, and fail a job that succeeded). One where nothing serves (every
  // try refused or reset: it died, restarts, or learnt the job's end from another task and
  // stopped) is given kJobCompleteGoneMs to come back. Leaves in missed_ the tasks never told.
  void RetryMissed(bool has_local) {
    const auto retry_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(retry_ms_);
    // Meanwhile this task keeps serving, and says the job is complete to a task that asks it (one
    // that reconnects may ask before it is told).
    if (has_local && !missed_.empty() && retry_ms_ > 0) Finish(Start(local_task_, true)).IgnoreError();
    int64_t backoff_ms = 200;
    while (!missed_.empty() && std::chrono::steady_clock::now() < retry_until) {
      std::vector<std::string> again;
      std::vector<Missed> given_up;
      const auto now = std::chrono::steady_clock::now();
      for (const Missed& m : missed_) {
        if (m.refused && now - m.refused_since >= std::chrono::milliseconds(kJobCompleteGoneMs)) {
          given_up.push_back(m);
        } else {
          again.push_back(m.task);
          // Said of a silent task only: one where nothing serves has usually just finished (a
          // worker that left its loop before the chief), which is no news.
          if (backoff_ms == 200 && !m.refused) {
            std::fprintf(stderr, "dflow: the job is complete, but task %s was not told yet; trying again for %lld ms\n",
                         m.task.c_str(), static_cast<long long>(retry_ms_));
          }
        }
      }
      if (again.empty()) {
        missed_ = std::move(given_up);
        break;
      }
      const auto wake = std::min(retry_until, now + std::chrono::milliseconds(backoff_ms));
      std::this_thread::sleep_until(wake);
      backoff_ms = std::min<int64_t>(backoff_ms * 2, 2000);
      std::vector<Missed> next = std::move(given_up);
      RunWave(again, missed_, &next);
      missed_ = std::move(next);
    }
  }

  WorkerCache* const workers_;
  const std::string& local_task_;
  const int64_t timeout_ms_;
  const int64_t drain_ms_;
  const int64_t retry_ms_;
  proto::CompleteJobResponse* const resp_;
  std::vector<Missed> missed_;
};

}  // namespace

Status JobCompleteError(const std::string& task, const std::string& source) {
  return errors::OutOfRange(kMarker, ": ", source.empty() ? std::string("the chief") : source, " ended training; task ",
                            task, " runs no more steps");
}

bool IsJobCompleteError(const Status& s) {
  return s.code() == absl::StatusCode::kOutOfRange && absl::StrContains(s.message(), kMarker);
}

void BroadcastJobComplete(WorkerCache* workers, const std::string& local_task, const proto::CompleteJobRequest& req,
                          proto::CompleteJobResponse* resp) {
  JobCompleteBroadcast(workers, local_task, req, resp).Run();
}

}  // namespace dflow
