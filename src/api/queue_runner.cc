// The QueueRunner of dflow/queue_runner.h.
#include "dflow/queue_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "framework/cancellation.h"
#include "graph/graph.h"

namespace dflow::train {
namespace {
// A cancel or close op that blocks (it should not) is given up after this.
constexpr int64_t kControlOpTimeoutMs = 10000;
}  // namespace

QueueRunner::QueueRunner(std::vector<Operation> enqueue_ops, Operation close_op, Operation cancel_op,
                         std::vector<absl::StatusCode> queue_closed_codes, int64_t stop_grace_ms)
    : enqueue_ops_(std::move(enqueue_ops)),
      close_op_(std::move(close_op)),
      cancel_op_(std::move(cancel_op)),
      queue_closed_codes_(std::move(queue_closed_codes)),
      stop_grace_ms_(stop_grace_ms) {}

QueueRunner::~QueueRunner() {
  RequestStop();
  Join().IgnoreError();
}

bool QueueRunner::IsQueueClosed(const Status& s) const {
  return std::find(queue_closed_codes_.begin(), queue_closed_codes_.end(), s.code()) != queue_closed_codes_.end();
}

Status QueueRunner::Start(ClientSession* session, Coordinator* coord) {
  if (session == nullptr) return errors::InvalidArgument("QueueRunner::Start: the session is null");
  if (enqueue_ops_.empty()) return errors::InvalidArgument("QueueRunner has no enqueue ops to run");
  for (size_t i = 0; i < enqueue_ops_.size(); ++i) {
    if (!enqueue_ops_[i].valid()) {
      return errors::InvalidArgument("QueueRunner: enqueue op #", i, " is invalid (it failed to build)");
    }
  }
  std::shared_ptr<QueueRunner> self;
  if (coord != nullptr) {
    self = weak_from_this().lock();
    if (self == nullptr) {
      return errors::InvalidArgument(
          "QueueRunner::Start with a coordinator needs the runner to be owned by a std::shared_ptr");
    }
  }
  std::vector<std::thread> finished;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (active_ > 0) return errors::FailedPrecondition("QueueRunner is already running; Join it before Start");
    finished.swap(threads_);
  }
  for (auto& t : finished) t.join();  // ended loops: returns at once
  {
    std::lock_guard<std::mutex> l(mu_);
    session_ = session;
    coord_ = coord;
    cancel_ = std::make_shared<CancellationManager>();
    stop_ = false;
    status_ = absl::OkStatus();
    active_ = looping_ = static_cast<int>(enqueue_ops_.size());
    for (size_t i = 0; i < enqueue_ops_.size(); ++i) threads_.emplace_back([this, i] { Loop(i); });
  }
  if (coord != nullptr) coord->RegisterRunner(self);
  return absl::OkStatus();
}

void QueueRunner::Loop(size_t i) {
  ClientSession* session;
  Coordinator* coord;
  std::shared_ptr<CancellationManager> cancel;
  {
    std::lock_guard<std::mutex> l(mu_);
    session = session_;
    coord = coord_;
    cancel = cancel_;
  }
  RunOptions options;
  options.cancellation = cancel.get();
  for (;;) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stop_) break;
    }
    Status s = session->Run({}, {}, {enqueue_ops_[i]}, nullptr, options).status();
    if (s.ok()) {
      runs_.fetch_add(1);
      continue;
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stop_) break;  // the cancellation we caused, or an error of a session being shut down
      if (IsQueueClosed(s)) break;
      if (status_.ok()) status_ = s;
    }
    std::fprintf(stderr, "dflow: QueueRunner: %s failed: %s\n", enqueue_ops_[i].node()->name().c_str(),
                 s.ToString().c_str());
    if (coord != nullptr) coord->ReportStatus(s);  // stops every runner of the coordinator
    break;
  }
  bool last;
  {
    std::lock_guard<std::mutex> l(mu_);
    last = --looping_ == 0;
  }
  ended_cv_.notify_all();
  if (last && close_op_.valid()) {
    RunOptions close_options = options;
    close_options.timeout_in_ms = kControlOpTimeoutMs;
    session->Run({}, {}, {close_op_}, nullptr, close_options).IgnoreError();
  }
  std::lock_guard<std::mutex> l(mu_);
  --active_;
}

void QueueRunner::RequestStop() {
  ClientSession* session;
  std::shared_ptr<CancellationManager> cancel;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stop_ || active_ == 0) {  // nothing runs: the session may be gone already
      stop_ = true;
      return;
    }
    stop_ = true;
    session = session_;
    cancel = cancel_;
  }
  if (cancel_op_.valid()) {
    RunOptions o;
    o.timeout_in_ms = kControlOpTimeoutMs;
    session->Run({}, {}, {cancel_op_}, nullptr, o).IgnoreError();
  }
  {
    // A run that is not waiting ends by itself: let it finish whole rather than cut it short.
    std::unique_lock<std::mutex> l(mu_);
    ended_cv_.wait_for(l, std::chrono::milliseconds(stop_grace_ms_), [&] { return looping_ == 0; });
    if (looping_ == 0) return;
  }
  cancel->StartCancel();  // wakes the runs that wait (a dequeue, an accumulator)
}

Status QueueRunner::Join() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> l(mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
  std::lock_guard<std::mutex> l(mu_);
  return status_;
}

bool QueueRunner::IsRunning() const {
  std::lock_guard<std::mutex> l(mu_);
  return active_ > 0;
}

Status QueueRunner::GetStatus() const {
  std::lock_guard<std::mutex> l(mu_);
  return status_;
}

}  // namespace dflow::train
