#include "distributed/job_completion.h"

#include <memory>
#include <mutex>
#include <vector>

#include "absl/strings/match.h"
#include "base/notification.h"

namespace dflow {
namespace {
constexpr char kMarker[] = "Job is complete";
}  // namespace

Status JobCompleteError(const std::string& task, const std::string& source) {
  return errors::OutOfRange(kMarker, ": ", source.empty() ? std::string("the chief") : source,
                            " ended training; task ", task, " runs no more steps");
}

bool IsJobCompleteError(const Status& s) {
  return s.code() == absl::StatusCode::kOutOfRange && absl::StrContains(s.message(), kMarker);
}

void BroadcastJobComplete(WorkerCache* workers, const std::string& local_task, const proto::CompleteJobRequest& req,
                          proto::CompleteJobResponse* resp) {
  const int64_t timeout_ms = req.timeout_ms() > 0 ? req.timeout_ms() : kDefaultJobCompleteTimeoutMs;
  const int64_t drain_ms = req.drain_ms() >= 0 ? req.drain_ms() : 0;
  struct Call {
    std::string task;
    std::shared_ptr<WorkerInterface> worker;
    proto::JobCompleteRequest req;
    proto::JobCompleteResponse resp;
    Status status;
    Notification done;
  };
  auto start = [&](const std::string& task) {
    auto c = std::make_shared<Call>();
    c->task = task;
    c->req.set_source_task(local_task);
    c->req.set_drain_ms(drain_ms);
    StatusOr<std::shared_ptr<WorkerInterface>> w = workers->GetWorker(task);
    if (!w.ok()) {
      c->status = w.status();
      c->done.Notify();
      return c;
    }
    c->worker = *w;
    c->worker->JobCompleteAsync(&c->req, &c->resp, [c](const Status& s) {
      c->status = s;
      c->done.Notify();
    });
    return c;
  };
  auto finish = [&](const std::shared_ptr<Call>& c) {
    // The transport bounds each call; this bound only guards a transport that does not.
    if (!c->done.WaitFor(std::chrono::milliseconds(timeout_ms + 5000))) {
      resp->add_unreachable_tasks(absl::StrCat(c->task, ": no answer within ", timeout_ms, " ms"));
      return;
    }
    if (c->status.ok()) {
      resp->add_notified_tasks(c->task);
    } else {
      std::string where = workers->TaskAddress(c->task);
      resp->add_unreachable_tasks(
          absl::StrCat(c->task, where.empty() ? "" : absl::StrCat(" (", where, ")"), ": ", c->status.ToString()));
    }
  };
  // Three waves: the tasks that run training steps, then the ps tasks, then this one. A ps task
  // that stops fails the steps that still need it; told first, their tasks already know why.
  std::vector<std::string> others, ps;
  bool has_local = false;
  for (const std::string& task : workers->ListTasks()) {
    if (task == local_task) {
      has_local = true;
    } else {
      (absl::StartsWith(task, "/job:ps/") ? ps : others).push_back(task);
    }
  }
  for (const std::vector<std::string>* wave : {&others, &ps}) {
    std::vector<std::shared_ptr<Call>> calls;
    for (const std::string& task : *wave) calls.push_back(start(task));
    for (const auto& c : calls) finish(c);
  }
  if (has_local) finish(start(local_task));
}

}  // namespace dflow
