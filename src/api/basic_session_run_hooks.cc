// The hooks of dflow/basic_session_run_hooks.h.
#include "dflow/basic_session_run_hooks.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/env.h"
#include "base/logging.h"
#include "dflow/summary.h"

namespace dflow::train {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The value of a fetched global step: an int64 (or int32) scalar.
StatusOr<int64_t> StepValue(const Tensor& t) {
  if (t.NumElements() != 1) {
    return errors::InvalidArgument("The global step must be a scalar, got shape ", t.shape().DebugString());
  }
  if (t.dtype() == DT_INT64) return t.data<int64_t>()[0];
  if (t.dtype() == DT_INT32) return static_cast<int64_t>(t.data<int32_t>()[0]);
  return errors::InvalidArgument("The global step must be int64 or int32, got ", DTypeString(t.dtype()));
}

StatusOr<int64_t> ReadStep(const ClientSession* session, const Output& global_step) {
  ASSIGN_OR_RETURN(std::vector<Tensor> r, session->Run({global_step}));
  return StepValue(r[0]);
}

Status NeedGlobalStep(const Output& global_step, const char* hook) {
  if (!global_step.valid()) {
    return errors::FailedPrecondition("Global step should be created to use ", hook, ".");
  }
  return absl::OkStatus();
}

// The first (only) result of a hook that fetched the global step.
StatusOr<int64_t> FetchedStep(const SessionRunValues& values) {
  if (values.results.empty()) return errors::Internal("The step did not return the global step");
  return StepValue(values.results[0]);
}

// File errors as FailedPrecondition: Env reports most of them as Unavailable, which a training
// session would take for a dead task and retry.
Status FileError(Status s) {
  if (absl::IsUnavailable(s)) return errors::FailedPrecondition(s.message());
  return s;
}

class FileSummaryWriter : public SummaryWriterInterface {
 public:
  explicit FileSummaryWriter(std::shared_ptr<summary::FileWriter> w) : w_(std::move(w)) {}
  Status AddSummary(const std::string& serialized, int64_t step) override {
    return FileError(w_->AddSummary(absl::string_view(serialized), step));
  }
  Status AddScalar(const std::string& tag, double value, int64_t step) override {
    return FileError(w_->AddScalar(tag, value, step));
  }
  Status Flush() override { return FileError(w_->Flush()); }

 private:
  std::shared_ptr<summary::FileWriter> w_;
};

}  // namespace

std::shared_ptr<SummaryWriterInterface> NewSummaryWriter(std::shared_ptr<summary::FileWriter> writer) {
  return std::make_shared<FileSummaryWriter>(std::move(writer));
}

bool SecondOrStepTimer::ShouldTriggerForStep(int64_t step) const {
  if (!last_step_) return true;
  if (*last_step_ == step) return false;
  if (every_secs_ > 0 && SecondsSince(last_time_) >= every_secs_) return true;
  if (every_steps_ > 0 && step >= *last_step_ + every_steps_) return true;
  return false;
}

std::optional<std::pair<double, int64_t>> SecondOrStepTimer::UpdateLastTriggeredStep(int64_t step) {
  auto now = std::chrono::steady_clock::now();
  std::optional<std::pair<double, int64_t>> elapsed;
  if (last_step_) elapsed.emplace(std::chrono::duration<double>(now - last_time_).count(), step - *last_step_);
  last_step_ = step;
  last_time_ = now;
  return elapsed;
}

// ---- StopAtStepHook ----

StopAtStepHook::StopAtStepHook(Output global_step, int64_t num_steps, int64_t last_step)
    : global_step_(global_step), num_steps_(num_steps), last_step_(last_step) {}

Status StopAtStepHook::Begin() {
  if ((num_steps_ > 0) == (last_step_ > 0)) {
    return errors::InvalidArgument("StopAtStepHook: exactly one of num_steps and last_step must be positive, got ",
                                   num_steps_, " and ", last_step_);
  }
  return NeedGlobalStep(global_step_, "StopAtStepHook");
}

Status StopAtStepHook::AfterCreateSession(ClientSession* session, Coordinator* coord) {
  if (num_steps_ > 0) {
    ASSIGN_OR_RETURN(int64_t step, ReadStep(session, global_step_));
    // Counted from the first session only: a recreated session continues toward the same step.
    last_step_ = step + num_steps_;
    num_steps_ = 0;
  }
  return absl::OkStatus();
}

StatusOr<SessionRunArgs> StopAtStepHook::BeforeRun(SessionRunContext* ctx) {
  return SessionRunArgs{{global_step_}, {}, {}};
}

Status StopAtStepHook::AfterRun(SessionRunContext* ctx, const SessionRunValues& values) {
  ASSIGN_OR_RETURN(int64_t stale, FetchedStep(values));
  // The fetched value may have been read before this step's increment: read it again when the
  // increment could have reached the last step.
  if (stale + 1 >= last_step_) {
    ASSIGN_OR_RETURN(int64_t step, ReadStep(ctx->session(), global_step_));
    if (step >= last_step_) ctx->RequestStop();
  }
  return absl::OkStatus();
}

// ---- CheckpointSaverHook ----

CheckpointSaverHook::CheckpointSaverHook(std::string checkpoint_dir, std::shared_ptr<SaverInterface> saver,
                                         Output global_step, int64_t save_secs, int64_t save_steps,
                                         std::string checkpoint_basename, int max_consecutive_save_failures)
    : dir_(std::move(checkpoint_dir)),
      basename_(std::move(checkpoint_basename)),
      saver_(std::move(saver)),
      global_step_(global_step),
      timer_(static_cast<double>(std::max<int64_t>(save_secs, 0)), std::max<int64_t>(save_steps, 0)),
      max_failures_(max_consecutive_save_failures),
      bad_args_((save_secs > 0) == (save_steps > 0)) {}

Status CheckpointSaverHook::Begin() {
  if (bad_args_)
    return errors::InvalidArgument("CheckpointSaverHook: exactly one of save_secs and save_steps must be positive");
  if (max_failures_ < 1) {
    return errors::InvalidArgument("CheckpointSaverHook: max_consecutive_save_failures must be at least 1, got ",
                                   max_failures_);
  }
  if (saver_ == nullptr) return errors::InvalidArgument("CheckpointSaverHook: no saver");
  if (dir_.empty()) return errors::InvalidArgument("CheckpointSaverHook: no checkpoint_dir");
  return NeedGlobalStep(global_step_, "CheckpointSaverHook");
}

Status CheckpointSaverHook::Save(ClientSession* session, int64_t step, bool at_end) {
  const std::string prefix = JoinPath(dir_, basename_);
  StatusOr<std::string> path = saver_->Save(*session, prefix, step);
  if (path.ok()) {
    failures_ = 0;
    last_saved_step_ = step;
    LOG(INFO) << "Saved checkpoint " << *path;
    if (saved_.empty() || saved_.back() != *path) saved_.push_back(*path);
    return absl::OkStatus();
  }
  ++failures_;
  const std::string what = absl::StrCat("Saving the checkpoint ", prefix, "-", step, " failed (", failures_,
                                        " of at most ", max_failures_, " failed saves in a row): ");
  if (!at_end && failures_ < max_failures_) {
    LOG(WARNING) << what << path.status() << "; training goes on and the next save tries again";
    return absl::OkStatus();
  }
  Status error = errors::Annotate(path.status(), what);
  // Retrying in a new session would fail the same way, and restore an older checkpoint first.
  if (IsRecoverableError(error)) return errors::FailedPrecondition(error.message());
  return error;
}

Status CheckpointSaverHook::AfterCreateSession(ClientSession* session, Coordinator* coord) {
  ASSIGN_OR_RETURN(int64_t step, ReadStep(session, global_step_));
  RETURN_IF_ERROR(Save(session, step, /*at_end=*/false));
  timer_.UpdateLastTriggeredStep(step);
  return absl::OkStatus();
}

StatusOr<SessionRunArgs> CheckpointSaverHook::BeforeRun(SessionRunContext* ctx) {
  return SessionRunArgs{{global_step_}, {}, {}};
}

Status CheckpointSaverHook::AfterRun(SessionRunContext* ctx, const SessionRunValues& values) {
  ASSIGN_OR_RETURN(int64_t stale, FetchedStep(values));
  if (!timer_.ShouldTriggerForStep(stale + 1)) return absl::OkStatus();
  ASSIGN_OR_RETURN(int64_t step, ReadStep(ctx->session(), global_step_));
  if (!timer_.ShouldTriggerForStep(step)) return absl::OkStatus();
  timer_.UpdateLastTriggeredStep(step);
  return Save(ctx->session(), step, /*at_end=*/false);
}

Status CheckpointSaverHook::End(ClientSession* session) {
  ASSIGN_OR_RETURN(int64_t step, ReadStep(session, global_step_));
  if (last_saved_step_ == step) return absl::OkStatus();  // (a failed save of this step is retried)
  timer_.UpdateLastTriggeredStep(step);
  return Save(session, step, /*at_end=*/true);
}

// ---- SummarySaverHook ----

SummarySaverHook::SummarySaverHook(Output summary_op, std::shared_ptr<SummaryWriterInterface> writer,
                                   Output global_step, int64_t save_steps, int64_t save_secs)
    : summary_op_(summary_op),
      global_step_(global_step),
      writer_(std::move(writer)),
      timer_(static_cast<double>(std::max<int64_t>(save_secs, 0)), std::max<int64_t>(save_steps, 0)),
      bad_args_((save_secs > 0) == (save_steps > 0)) {}

Status SummarySaverHook::Begin() {
  if (bad_args_)
    return errors::InvalidArgument("SummarySaverHook: exactly one of save_steps and save_secs must be positive");
  if (writer_ == nullptr) return errors::InvalidArgument("SummarySaverHook: no summary writer");
  if (!summary_op_.valid()) return errors::InvalidArgument("SummarySaverHook: no summary op");
  if (BaseType(summary_op_.dtype()) != DT_STRING) {
    return errors::InvalidArgument("SummarySaverHook: the summary op ", summary_op_.name(), " is ",
                                   DTypeString(summary_op_.dtype()), ", not a serialized Summary (string)");
  }
  return NeedGlobalStep(global_step_, "SummarySaverHook");
}

StatusOr<SessionRunArgs> SummarySaverHook::BeforeRun(SessionRunContext* ctx) {
  request_summary_ = !next_step_ || timer_.ShouldTriggerForStep(*next_step_);
  SessionRunArgs args{{global_step_}, {}, {}};
  if (request_summary_) args.fetches.push_back(summary_op_);
  return args;
}

Status SummarySaverHook::AfterRun(SessionRunContext* ctx, const SessionRunValues& values) {
  ASSIGN_OR_RETURN(int64_t step, FetchedStep(values));
  step += 1;
  if (!next_step_ || request_summary_) {
    ASSIGN_OR_RETURN(step, ReadStep(ctx->session(), global_step_));
  }
  if (request_summary_) {
    timer_.UpdateLastTriggeredStep(step);
    if (values.results.size() < 2) return errors::Internal("The step did not return the summary");
    const Tensor& summaries = values.results[1];
    for (int64_t i = 0; i < summaries.NumElements(); ++i) {
      RETURN_IF_ERROR(writer_->AddSummary(summaries.data<std::string>()[i], step));
    }
  }
  next_step_ = step + 1;
  return absl::OkStatus();
}

Status SummarySaverHook::End(ClientSession* session) { return writer_->Flush(); }

// ---- StepCounterHook ----

StepCounterHook::StepCounterHook(Output global_step, int64_t every_n_steps, double every_n_secs,
                                 std::shared_ptr<SummaryWriterInterface> writer)
    : global_step_(global_step),
      timer_(every_n_secs > 0 ? every_n_secs : 0, every_n_secs > 0 ? 0 : every_n_steps),
      writer_(std::move(writer)) {}

Status StepCounterHook::Begin() { return NeedGlobalStep(global_step_, "StepCounterHook"); }

StatusOr<SessionRunArgs> StepCounterHook::BeforeRun(SessionRunContext* ctx) {
  return SessionRunArgs{{global_step_}, {}, {}};
}

Status StepCounterHook::AfterRun(SessionRunContext* ctx, const SessionRunValues& values) {
  ASSIGN_OR_RETURN(int64_t stale, FetchedStep(values));
  if (!timer_.ShouldTriggerForStep(stale + 1)) return absl::OkStatus();
  ASSIGN_OR_RETURN(int64_t step, ReadStep(ctx->session(), global_step_));
  if (!timer_.ShouldTriggerForStep(step)) return absl::OkStatus();
  auto elapsed = timer_.UpdateLastTriggeredStep(step);
  if (!elapsed || elapsed->first <= 0) return absl::OkStatus();
  last_rate_ = static_cast<double>(elapsed->second) / elapsed->first;
  LOG(INFO) << "global_step/sec: " << last_rate_;
  if (writer_ != nullptr) RETURN_IF_ERROR(writer_->AddScalar("global_step/sec", last_rate_, step));
  return absl::OkStatus();
}

// ---- LoggingTensorHook ----

LoggingTensorHook::LoggingTensorHook(std::vector<std::pair<std::string, Output>> tensors, int64_t every_n_iter,
                                     double every_n_secs, bool at_end, std::function<void(const std::string&)> log)
    : tensors_(std::move(tensors)),
      timer_(every_n_secs > 0 ? every_n_secs : 0, every_n_iter > 0 ? every_n_iter : 0),
      at_end_(at_end),
      log_(std::move(log)),
      bad_args_(!at_end && (every_n_iter > 0) == (every_n_secs > 0)) {}

Status LoggingTensorHook::Begin() {
  if (bad_args_) {
    return errors::InvalidArgument("LoggingTensorHook: exactly one of every_n_iter and every_n_secs must be "
                                   "positive (or only at_end)");
  }
  for (const auto& [tag, t] : tensors_) {
    if (!t.valid()) return errors::InvalidArgument("LoggingTensorHook: the tensor '", tag, "' is invalid");
  }
  return absl::OkStatus();
}

StatusOr<SessionRunArgs> LoggingTensorHook::BeforeRun(SessionRunContext* ctx) {
  should_trigger_ = !bad_args_ && (timer_.every_steps() > 0 || timer_.every_secs() > 0) &&
                    timer_.ShouldTriggerForStep(iter_);
  SessionRunArgs args;
  if (should_trigger_) {
    for (const auto& [tag, t] : tensors_) args.fetches.push_back(t);
  }
  return args;
}

void LoggingTensorHook::Log(const std::vector<Tensor>& values) {
  std::string line;
  for (size_t i = 0; i < tensors_.size() && i < values.size(); ++i) {
    absl::StrAppend(&line, i ? ", " : "", tensors_[i].first, " = ", values[i].ToString());
  }
  auto now = std::chrono::steady_clock::now();
  if (iter_ > 0 && last_log_.time_since_epoch().count() != 0) {
    absl::StrAppend(&line, absl::StrFormat(" (%.3f sec)", std::chrono::duration<double>(now - last_log_).count()));
  }
  last_log_ = now;
  if (log_) log_(line);
  else LOG(INFO) << line;
}

Status LoggingTensorHook::AfterRun(SessionRunContext* ctx, const SessionRunValues& values) {
  if (should_trigger_) {
    timer_.UpdateLastTriggeredStep(iter_);
    Log(values.results);
  }
  ++iter_;
  return absl::OkStatus();
}

Status LoggingTensorHook::End(ClientSession* session) {
  if (!at_end_) return absl::OkStatus();
  std::vector<Output> fetches;
  for (const auto& [tag, t] : tensors_) fetches.push_back(t);
  ASSIGN_OR_RETURN(std::vector<Tensor> values, session->Run(fetches));
  Log(values);
  return absl::OkStatus();
}

// ---- NanTensorHook ----

StatusOr<SessionRunArgs> NanTensorHook::BeforeRun(SessionRunContext* ctx) { return SessionRunArgs{{loss_}, {}, {}}; }

Status NanTensorHook::AfterRun(SessionRunContext* ctx, const SessionRunValues& values) {
  if (values.results.empty()) return errors::Internal("The step did not return the loss");
  const Tensor& loss = values.results[0];
  bool nan = false;
  if (loss.dtype() == DT_FLOAT) {
    for (int64_t i = 0; i < loss.NumElements(); ++i) nan |= std::isnan(loss.data<float>()[i]);
  } else if (loss.dtype() == DT_DOUBLE) {
    for (int64_t i = 0; i < loss.NumElements(); ++i) nan |= std::isnan(loss.data<double>()[i]);
  } else {
    return errors::InvalidArgument("NanTensorHook: the loss ", loss_.name(), " is ", DTypeString(loss.dtype()),
                                   ", not float or double");
  }
  if (!nan) return absl::OkStatus();
  if (fail_) return errors::InvalidArgument("NaN loss during training.");
  LOG(WARNING) << "Model diverged with loss = NaN.";
  ctx->RequestStop();
  return absl::OkStatus();
}

// ---- FinalOpsHook ----

Status FinalOpsHook::End(ClientSession* session) {
  if (final_ops_.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(values_, session->Run(feeds_, final_ops_));
  return absl::OkStatus();
}

}  // namespace dflow::train
