// The hooks a training loop usually wants, with TensorFlow's semantics
// (tf.train.StopAtStepHook, CheckpointSaverHook, SummarySaverHook, StepCounterHook,
// LoggingTensorHook, NanTensorHook, FinalOpsHook).
//
//   auto stop = std::make_shared<train::StopAtStepHook>(global_step, /*num_steps=*/0, /*last_step=*/1000);
//   auto nan = std::make_shared<train::NanTensorHook>(loss);
//   auto log = std::make_shared<train::LoggingTensorHook>(
//       std::vector<std::pair<std::string, Output>>{{"loss", loss}, {"step", global_step}}, 100);
//   auto sess = train::MonitoredSession::Create(creator, {stop, nan, log});
//
// Hooks that act "every N steps" read the global step (an int64 scalar, CreateGlobalStep) with
// each step and, when it is due, read it again after the step, so that steps taken by other
// workers count. A hook object belongs to one MonitoredSession at a time; it is called from one
// thread at a time. Errors of a hook end training (see dflow/session_run_hook.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dflow/monitored_session.h"
#include "dflow/session_run_hook.h"

namespace dflow::summary {
class FileWriter;
}

namespace dflow::train {

// Where summaries go (an event-file writer).
class SummaryWriterInterface {
 public:
  virtual ~SummaryWriterInterface() = default;
  // A serialized Summary proto (a summary op's output) recorded at `global_step`.
  virtual Status AddSummary(const std::string& serialized_summary, int64_t global_step) = 0;
  // One scalar (a Summary with one simple_value) at `global_step`.
  virtual Status AddScalar(const std::string& tag, double value, int64_t global_step) = 0;
  virtual Status Flush() = 0;
};

// A SummaryWriterInterface over an event-file writer (dflow/summary.h). File errors are returned
// as FailedPrecondition (a disk is not a task that a new session brings back).
std::shared_ptr<SummaryWriterInterface> NewSummaryWriter(std::shared_ptr<summary::FileWriter> writer);

// Triggers every `every_secs` seconds or `every_steps` steps (either may be 0: off), as
// TensorFlow's SecondOrStepTimer: the first query always triggers, the same step never twice.
class SecondOrStepTimer {
 public:
  SecondOrStepTimer(double every_secs, int64_t every_steps) : every_secs_(every_secs), every_steps_(every_steps) {}
  bool ShouldTriggerForStep(int64_t step) const;
  // Records a trigger at `step`; returns (seconds, steps) since the previous trigger, or nothing
  // for the first one.
  std::optional<std::pair<double, int64_t>> UpdateLastTriggeredStep(int64_t step);
  std::optional<int64_t> last_triggered_step() const { return last_step_; }
  double every_secs() const { return every_secs_; }
  int64_t every_steps() const { return every_steps_; }

 private:
  double every_secs_;
  int64_t every_steps_;
  std::optional<int64_t> last_step_;
  std::chrono::steady_clock::time_point last_time_;
};

// Requests stop once the global step reaches last_step, or num_steps after the step the session
// started at (exactly one of them > 0, else every call fails with InvalidArgument). With several
// workers training asynchronously the global step may end a little past last_step (by at most
// the steps that ran concurrently with the last one).
class StopAtStepHook : public SessionRunHook {
 public:
  StopAtStepHook(Output global_step, int64_t num_steps, int64_t last_step);
  Status Begin() override;
  Status AfterCreateSession(ClientSession* session, Coordinator* coord) override;
  StatusOr<SessionRunArgs> BeforeRun(SessionRunContext* ctx) override;
  Status AfterRun(SessionRunContext* ctx, const SessionRunValues& values) override;
  int64_t last_step() const { return last_step_; }

 private:
  Output global_step_;
  int64_t num_steps_, last_step_;
};

// Saves a checkpoint "<checkpoint_dir>/<basename>-<global step>" when a session is created (so
// there is always one to restore), every save_secs seconds or save_steps steps (exactly one
// > 0), and at the end (unless that step was just saved).
//
// A save that fails (a full disk, an I/O error, a ps task lost during the save) is logged — a
// warning naming the checkpoint and the error — and training goes on: the next save (at the
// next trigger, or at the end) is the retry; the saver has removed what the failed one wrote,
// and the previous checkpoint stays the latest. A successful save resets the count. When
// max_consecutive_save_failures saves in a row have failed, the last one's error ends training
// (an error that MonitoredSession would recover from — Unavailable, which most file errors are,
// Aborted, Cancelled — as FailedPrecondition with the same message: a new session would only
// fail its saves again). The save at the end has no later retry: its failure is returned by
// End (so by MonitoredSession::Close), whatever the count.
class CheckpointSaverHook : public SessionRunHook {
 public:
  // max_consecutive_save_failures >= 1 (else Begin fails with InvalidArgument); 1 ends training
  // at the first failed save.
  CheckpointSaverHook(std::string checkpoint_dir, std::shared_ptr<SaverInterface> saver, Output global_step,
                      int64_t save_secs, int64_t save_steps, std::string checkpoint_basename = "model.ckpt",
                      int max_consecutive_save_failures = 3);
  Status Begin() override;
  Status AfterCreateSession(ClientSession* session, Coordinator* coord) override;
  StatusOr<SessionRunArgs> BeforeRun(SessionRunContext* ctx) override;
  Status AfterRun(SessionRunContext* ctx, const SessionRunValues& values) override;
  Status End(ClientSession* session) override;
  // The paths saved so far, oldest first.
  const std::vector<std::string>& saved() const { return saved_; }
  // Saves that failed since the last one that succeeded.
  int consecutive_save_failures() const { return failures_; }

 private:
  // A failed save is OK (logged) while fewer than max_failures_ failed in a row and `at_end` is
  // false; otherwise its error.
  Status Save(ClientSession* session, int64_t step, bool at_end);

  std::string dir_, basename_;
  std::shared_ptr<SaverInterface> saver_;
  Output global_step_;
  SecondOrStepTimer timer_;
  std::vector<std::string> saved_;
  std::optional<int64_t> last_saved_step_;  // of the last save that succeeded
  int max_failures_;
  int failures_ = 0;
  bool bad_args_;
};

// Fetches `summary_op` (a serialized Summary) every save_steps steps or save_secs seconds and
// adds it to `writer` at the global step; flushes the writer at the end.
class SummarySaverHook : public SessionRunHook {
 public:
  SummarySaverHook(Output summary_op, std::shared_ptr<SummaryWriterInterface> writer, Output global_step,
                   int64_t save_steps, int64_t save_secs = 0);
  Status Begin() override;
  StatusOr<SessionRunArgs> BeforeRun(SessionRunContext* ctx) override;
  Status AfterRun(SessionRunContext* ctx, const SessionRunValues& values) override;
  Status End(ClientSession* session) override;

 private:
  Output summary_op_, global_step_;
  std::shared_ptr<SummaryWriterInterface> writer_;
  SecondOrStepTimer timer_;
  std::optional<int64_t> next_step_;
  bool request_summary_ = false;
  bool bad_args_;
};

// Measures global steps per second every every_n_steps steps (or every_n_secs seconds): logs
// "global_step/sec: X" (info) and, with a writer, adds the scalar "global_step/sec".
class StepCounterHook : public SessionRunHook {
 public:
  StepCounterHook(Output global_step, int64_t every_n_steps = 100, double every_n_secs = 0,
                  std::shared_ptr<SummaryWriterInterface> writer = nullptr);
  Status Begin() override;
  StatusOr<SessionRunArgs> BeforeRun(SessionRunContext* ctx) override;
  Status AfterRun(SessionRunContext* ctx, const SessionRunValues& values) override;
  // The last rate measured (0 before the first).
  double last_steps_per_sec() const { return last_rate_; }

 private:
  Output global_step_;
  SecondOrStepTimer timer_;
  std::shared_ptr<SummaryWriterInterface> writer_;
  double last_rate_ = 0;
};

// Logs the named tensors every every_n_iter steps of this session (or every_n_secs seconds), as
// "tag1 = value1, tag2 = value2 (0.123 sec)", and once more at the end with at_end. The line goes
// to `log` (default: dflow's info log on stderr).
class LoggingTensorHook : public SessionRunHook {
 public:
  LoggingTensorHook(std::vector<std::pair<std::string, Output>> tensors, int64_t every_n_iter, double every_n_secs = 0,
                    bool at_end = false, std::function<void(const std::string&)> log = nullptr);
  Status Begin() override;
  StatusOr<SessionRunArgs> BeforeRun(SessionRunContext* ctx) override;
  Status AfterRun(SessionRunContext* ctx, const SessionRunValues& values) override;
  Status End(ClientSession* session) override;

 private:
  void Log(const std::vector<Tensor>& values);

  std::vector<std::pair<std::string, Output>> tensors_;
  SecondOrStepTimer timer_;
  bool at_end_;
  std::function<void(const std::string&)> log_;
  int64_t iter_ = 0;
  bool should_trigger_ = false;
  bool bad_args_;
  std::chrono::steady_clock::time_point last_log_;
};

// Checks the loss (a float or double scalar) after every step: a NaN ends training with
// InvalidArgument "NaN loss during training." (fail_on_nan_loss), or logs it and requests stop.
class NanTensorHook : public SessionRunHook {
 public:
  explicit NanTensorHook(Output loss, bool fail_on_nan_loss = true) : loss_(loss), fail_(fail_on_nan_loss) {}
  StatusOr<SessionRunArgs> BeforeRun(SessionRunContext* ctx) override;
  Status AfterRun(SessionRunContext* ctx, const SessionRunValues& values) override;

 private:
  Output loss_;
  bool fail_;
};

// Runs `final_ops` (with `feeds`) at the end of training and keeps their values.
class FinalOpsHook : public SessionRunHook {
 public:
  explicit FinalOpsHook(std::vector<Output> final_ops, ClientSession::FeedDict feeds = {})
      : final_ops_(std::move(final_ops)), feeds_(std::move(feeds)) {}
  Status End(ClientSession* session) override;
  // Empty until End ran.
  const std::vector<Tensor>& final_ops_values() const { return values_; }

 private:
  std::vector<Output> final_ops_;
  ClientSession::FeedDict feeds_;
  std::vector<Tensor> values_;
};

}  // namespace dflow::train
