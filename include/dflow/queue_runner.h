// QueueRunner: threads that run ops over and over in a session — to keep a queue filled, or to
// run the chief's update loop of synchronous training — as TensorFlow's tf.train.QueueRunner.
//
//   train::QueueRunner runner({enqueue_op}, /*close_op=*/close, /*cancel_op=*/cancel);
//   DFLOW_RETURN_IF_ERROR(runner.Start(&session, &coord));   // one thread per enqueue op
//   ...
//   coord.RequestStop();                              // or runner.RequestStop()
//   Status s = runner.Join();                         // the first error a thread met
//
// Each thread runs its op until one of these happens:
//   - the run fails with a "queue closed" code (OutOfRange or Cancelled by default): the input
//     is exhausted or the queue was closed; the thread ends quietly;
//   - the run fails with any other error: the error is kept (GetStatus, Join) and reported to
//     the coordinator, which stops every runner;
//   - stop is requested (RequestStop, or the coordinator's): cancel_op is run if given, the run
//     in progress gets `stop_grace_ms` to end by itself (a run that is not waiting finishes
//     whole), then it is cancelled (RunOptions::cancellation: a waiting dequeue or accumulator
//     wakes up); errors from then on are ignored.
// When the last thread ends, close_op runs (if given). Stopping never hangs: every wait ends
// with the step's cancellation. The session (and the coordinator) must outlive Join, and
// RequestStop must not race with destroying the session; the destructor requests stop and joins.
//
// Thread-safe. Start may be called again after Join (with a new session, e.g. after recovery).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "dflow/coordinator.h"
#include "dflow/session.h"

namespace dflow {
class CancellationManager;
}

namespace dflow::train {

class QueueRunner : public RunnerInterface, public std::enable_shared_from_this<QueueRunner> {
 public:
  QueueRunner(std::vector<Operation> enqueue_ops, Operation close_op = Operation(), Operation cancel_op = Operation(),
              std::vector<absl::StatusCode> queue_closed_codes = {absl::StatusCode::kOutOfRange,
                                                                  absl::StatusCode::kCancelled},
              int64_t stop_grace_ms = 1000);
  ~QueueRunner() override;
  QueueRunner(const QueueRunner&) = delete;
  QueueRunner& operator=(const QueueRunner&) = delete;

  // Starts one thread per enqueue op on `session` (not owned; must outlive Join). With a
  // coordinator, registers with it (it needs this runner to be owned by a shared_ptr then) and
  // stops when it requests stop. InvalidArgument without enqueue ops or with an invalid one;
  // FailedPrecondition while threads of an earlier Start still run.
  Status Start(ClientSession* session, Coordinator* coord = nullptr);
  // Blocks for at most stop_grace_ms plus the cancel op.
  void RequestStop() override;
  // Waits for the threads; the first error (OK when the threads ended quietly).
  Status Join() override;
  bool IsRunning() const override;
  // The first error a thread met so far.
  Status GetStatus() const;
  // Successful runs of the enqueue ops since construction.
  int64_t runs() const { return runs_.load(); }

 private:
  void Loop(size_t i);
  bool IsQueueClosed(const Status& s) const;

  const std::vector<Operation> enqueue_ops_;
  const Operation close_op_, cancel_op_;
  const std::vector<absl::StatusCode> queue_closed_codes_;
  const int64_t stop_grace_ms_;
  std::condition_variable ended_cv_;  // signalled when a thread stops looping

  mutable std::mutex mu_;
  ClientSession* session_ = nullptr;             // guarded by mu_
  Coordinator* coord_ = nullptr;                 // guarded by mu_
  std::shared_ptr<CancellationManager> cancel_;  // of the current Start; guarded by mu_
  std::vector<std::thread> threads_;             // guarded by mu_
  int active_ = 0;                               // threads not yet ended; guarded by mu_
  int looping_ = 0;                              // threads still running their op; guarded by mu_
  bool stop_ = false;                            // guarded by mu_
  Status status_;                                // guarded by mu_
  std::atomic<int64_t> runs_{0};
};

}  // namespace dflow::train
