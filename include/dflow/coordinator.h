// Coordinator: stops a set of threads together, as TensorFlow's tf.train.Coordinator (and its
// C++ tensorflow::Coordinator).
//
//   train::Coordinator coord;
//   auto runner = std::make_shared<train::QueueRunner>(...);
//   runner->Start(&session, &coord);          // registers itself with coord
//   while (!coord.ShouldStop()) { ... }
//   coord.RequestStop();                      // every registered runner is asked to stop
//   Status s = coord.Join();                  // waits for them; the first error any reported
//
// A runner (or anyone) reports an error with ReportStatus: the first non-OK status that is not
// a clean-stop code is kept and stop is requested. Clean-stop codes (OutOfRange by default: an
// input ran out, training is over) request stop without being an error. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "dflow/core.h"

namespace dflow::train {

// Something that runs threads and can be told to stop.
class RunnerInterface {
 public:
  virtual ~RunnerInterface() = default;
  // Asks the threads to stop soon; must not block for long and may be called more than once.
  virtual void RequestStop() = 0;
  // Waits until the threads ended; returns the runner's first error (OK when none).
  virtual Status Join() = 0;
  virtual bool IsRunning() const = 0;
};

// A MonitoredSession owns its coordinators through std::shared_ptr: a coordinator given to a
// hook's AfterCreateSession can be shared (weak_from_this) by code that must outlive the call.
class Coordinator : public std::enable_shared_from_this<Coordinator> {
 public:
  Coordinator();
  explicit Coordinator(std::vector<absl::StatusCode> clean_stop_codes);
  // Requests stop and joins the runners.
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Adds a runner; if stop was already requested, it is asked to stop at once.
  void RegisterRunner(std::shared_ptr<RunnerInterface> runner);
  // Asks every registered runner to stop. Idempotent.
  void RequestStop();
  bool ShouldStop() const;
  // Blocks until stop is requested or `timeout_ms` (< 0: no limit) passes; true when requested.
  bool WaitForStop(int64_t timeout_ms = -1) const;
  // Keeps the first error that is not a clean stop, and requests stop (for every status that is
  // not OK).
  void ReportStatus(const Status& status);
  // The first error reported (OK when none).
  Status GetStatus() const;
  // Waits for every registered runner; returns the first error reported or joined (clean-stop
  // codes are not errors).
  Status Join();
  bool AllRunnersStopped() const;

 private:
  std::vector<absl::StatusCode> clean_stop_codes_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool stop_ = false;
  Status status_;
  std::vector<std::shared_ptr<RunnerInterface>> runners_;
};

}  // namespace dflow::train
