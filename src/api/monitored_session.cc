// MonitoredSession and MonitoredTrainingSession (dflow/monitored_session.h): hooks around every
// step and recovery from failed tasks. The session creators are in session_manager.cc.
#include "dflow/monitored_session.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "base/env.h"
#include "base/logging.h"
#include "dflow/basic_session_run_hooks.h"
#include "dflow/coordinator.h"
#include "dflow/server.h"
#include "dflow/summary.h"
#include "distributed/local_master.h"
#include "graph/graph.h"

namespace dflow::train {

// A task died or restarted (a ps lost its variables, a peer's graphs are gone), or a task that
// was stopped (SIGTERM, job completion) cancelled the step: a new session can continue from the
// latest checkpoint. Nothing else cancels this session's steps: only Close does, after them.
bool IsRecoverableError(const Status& s) {
  return absl::IsAborted(s) || absl::IsUnavailable(s) || absl::IsCancelled(s);
}

MonitoredSession::MonitoredSession(std::unique_ptr<SessionCreator> creator,
                                   std::vector<std::shared_ptr<SessionRunHook>> hooks, const RecoveryOptions& recovery)
    : creator_(std::move(creator)), hooks_(std::move(hooks)), recovery_(recovery) {}

MonitoredSession::~MonitoredSession() { Close().IgnoreError(); }

StatusOr<std::unique_ptr<MonitoredSession>> MonitoredSession::Create(std::unique_ptr<SessionCreator> creator,
                                                                     std::vector<std::shared_ptr<SessionRunHook>> hooks,
                                                                     const RecoveryOptions& recovery) {
  if (creator == nullptr) return errors::InvalidArgument("MonitoredSession needs a session creator");
  for (size_t i = 0; i < hooks.size(); ++i) {
    if (hooks[i] == nullptr) return errors::InvalidArgument("MonitoredSession: hook #", i, " is null");
  }
  std::unique_ptr<MonitoredSession> ms(new MonitoredSession(std::move(creator), std::move(hooks), recovery));
  for (const auto& hook : ms->hooks_) RETURN_IF_ERROR(hook->Begin());
  if (recovery.job_complete && recovery.job_complete()) {
    LOG(INFO) << "The job is complete; this training session has nothing to do";
    ms->EndOfJob(errors::OutOfRange("the job completed before the session was created")).IgnoreError();
    return ms;
  }
  while (true) {
    Status s = ms->CreateOnce();
    if (s.ok()) break;
    if (!ms->BackOff(s)) {
      if (ms->job_complete_) {
        // The job ended before this session could start (a worker that came up late, or was
        // cut off): nothing to train, which is not an error.
        LOG(INFO) << "The job is complete; this training session has nothing to do (" << s << ")";
        ms->EndOfJob(s).IgnoreError();
        return ms;
      }
      ms->status_ = s;
      ms->closed_ = true;  // nothing to end: no session was ever ready
      return s;
    }
  }
  ms->failed_attempts_ = 0;
  return ms;
}

Status MonitoredSession::StopCoordinator() {
  if (coord_ == nullptr) return absl::OkStatus();
  // The runners use the session: they end before it does.
  coord_->RequestStop();
  Status s = coord_->Join();
  coord_.reset();
  return s;
}

void MonitoredSession::DropSession() {
  StopCoordinator().IgnoreError();  // the failure being recovered from is what counts
  session_.reset();
}

Status MonitoredSession::CreateOnce() {
  DropSession();
  ASSIGN_OR_RETURN(session_, creator_->CreateSession());
  ++sessions_created_;
  coord_ = std::make_shared<Coordinator>();
  for (const auto& hook : hooks_) {
    Status s = hook->AfterCreateSession(session_.get(), coord_.get());
    if (!s.ok()) {
      DropSession();
      return s;
    }
  }
  return absl::OkStatus();
}

bool MonitoredSession::ShouldStop() const {
  return stop_requested_ || !status_.ok() || closed_ || (coord_ != nullptr && coord_->ShouldStop());
}

bool MonitoredSession::BackOff(const Status& error) {
  // Once the job is complete every failure is its end (a new session is refused with OutOfRange,
  // steps fail because the ps tasks are gone), never something to recover from.
  if (recovery_.job_complete && recovery_.job_complete()) {
    job_complete_ = true;
    return false;
  }
  if (!IsRecoverableError(error)) return false;
  if (failed_attempts_ >= recovery_.max_recovery_attempts) return false;
  ++failed_attempts_;
  int64_t wait = std::max<int64_t>(recovery_.initial_backoff_ms, 0);
  for (int i = 1; i < failed_attempts_ && wait < recovery_.max_backoff_ms; ++i) wait *= 2;
  wait = std::min(wait, std::max<int64_t>(recovery_.max_backoff_ms, 0));
  LOG(WARNING) << "A task failed or restarted (" << error << "); creating a new session in " << wait
               << " ms (recovery attempt " << failed_attempts_ << " of " << recovery_.max_recovery_attempts << ")";
  DropSession();
  Env::Default()->SleepForMicros(wait * 1000);
  return true;
}

Status MonitoredSession::EndOfJob(const Status& error) {
  DropSession();  // its tasks are gone; End cannot run on it
  stop_requested_ = true;
  return errors::OutOfRange("Job is complete (", error.message(), ")");
}

StatusOr<std::vector<Tensor>> MonitoredSession::Run(const ClientSession::FeedDict& feeds,
                                                    const std::vector<Output>& fetches,
                                                    const std::vector<Operation>& targets) {
  if (closed_) return errors::FailedPrecondition("Run on a closed MonitoredSession");
  if (!status_.ok()) return errors::FailedPrecondition("Training already ended with an error: ", status_.ToString());
  // The tasks may be gone: nothing more can run.
  if (job_complete_) return errors::OutOfRange("Job is complete: no more steps run");
  while (true) {
    if (session_ == nullptr) {
      Status s = CreateOnce();
      if (!s.ok()) {
        if (BackOff(s)) continue;
        if (job_complete_) return EndOfJob(s);
        status_ = s;
        return s;
      }
    }
    StatusOr<std::vector<Tensor>> r = HookedRun(feeds, fetches, targets);
    if (r.ok()) {
      failed_attempts_ = 0;
      return r;
    }
    if (absl::IsOutOfRange(r.status())) {
      // An input pipeline ran out: the end of training, not a failure.
      stop_requested_ = true;
      return r.status();
    }
    if (BackOff(r.status())) continue;
    if (job_complete_) return EndOfJob(r.status());
    status_ = r.status();
    return r.status();
  }
}

StatusOr<std::vector<Tensor>> MonitoredSession::HookedRun(const ClientSession::FeedDict& feeds,
                                                          const std::vector<Output>& fetches,
                                                          const std::vector<Operation>& targets) {
  SessionRunContext ctx(SessionRunArgs{fetches, feeds, targets}, session_.get());
  // One run of the union: each distinct fetch once, feeds that agree on nobody feeding twice.
  std::vector<Output> all_fetches;
  std::unordered_map<Output, size_t> fetch_index;
  auto add_fetch = [&](const Output& o) {
    auto [it, inserted] = fetch_index.emplace(o, all_fetches.size());
    if (inserted) all_fetches.push_back(o);
    return it->second;
  };
  std::vector<size_t> caller_slots;
  for (const Output& o : fetches) caller_slots.push_back(add_fetch(o));
  ClientSession::FeedDict all_feeds = feeds;
  std::vector<Operation> all_targets = targets;
  std::vector<std::vector<size_t>> hook_slots(hooks_.size());
  for (size_t h = 0; h < hooks_.size(); ++h) {
    ASSIGN_OR_RETURN(SessionRunArgs args, hooks_[h]->BeforeRun(&ctx));
    for (const Output& o : args.fetches) hook_slots[h].push_back(add_fetch(o));
    for (auto& [out, value] : args.feeds) {
      if (!all_feeds.emplace(out, value).second) {
        return errors::InvalidArgument("Same tensor is fed twice (by a SessionRunHook and the caller, or two hooks): ",
                                       out.name());
      }
    }
    for (const Operation& t : args.targets) {
      if (std::find(all_targets.begin(), all_targets.end(), t) == all_targets.end()) all_targets.push_back(t);
    }
  }
  ASSIGN_OR_RETURN(std::vector<Tensor> outs, session_->Run(all_feeds, all_fetches, all_targets));
  for (size_t h = 0; h < hooks_.size(); ++h) {
    SessionRunValues values;
    for (size_t slot : hook_slots[h]) values.results.push_back(outs[slot]);
    RETURN_IF_ERROR(hooks_[h]->AfterRun(&ctx, values));
  }
  if (ctx.stop_requested()) stop_requested_ = true;
  // A thread a hook started (a queue runner) failed.
  if (coord_ != nullptr) RETURN_IF_ERROR(coord_->GetStatus());
  std::vector<Tensor> result;
  for (size_t slot : caller_slots) result.push_back(outs[slot]);
  return result;
}

void MonitoredSession::Abandon(const Status& error) {
  if (closed_ || !status_.ok() || error.ok()) return;
  status_ = error;
}

Status MonitoredSession::Close() {
  if (closed_) return status_;
  closed_ = true;
  Status s = status_;
  if (s.ok() && session_ != nullptr) {
    for (const auto& hook : hooks_) {
      s = hook->End(session_.get());
      if (!s.ok()) break;
    }
    // The chief ended the job while this worker was finishing: its last reads may fail because
    // the tasks are gone, which is the end of training, not an error.
    if (!s.ok() && recovery_.job_complete && recovery_.job_complete()) {
      LOG(INFO) << "The job completed while the training session closed (" << s << ")";
      s = absl::OkStatus();
    }
  }
  Status runners = StopCoordinator();
  if (s.ok()) s = runners;
  session_.reset();
  status_ = s;
  return s;
}

namespace {

// The chief's last hook: once every other hook's End ran (the final checkpoint is saved), tells
// every task of the cluster that the job is complete.
class JobCompletionHook : public SessionRunHook {
 public:
  JobCompletionHook(std::shared_ptr<LocalMaster> master, std::string target, int64_t drain_ms)
      : master_(std::move(master)), target_(std::move(target)), drain_ms_(drain_ms) {}
  Status End(ClientSession*) override {
    if (master_->job_complete() || master_->num_tasks() <= 1) return absl::OkStatus();
    JobCompleteOptions o;
    o.drain_ms = drain_ms_;
    JobCompleteResult r;
    RETURN_IF_ERROR(NotifyJobComplete(target_, o, &r));
    LOG(INFO) << "Training is over: the job is complete (" << r.notified_tasks.size() << " tasks told"
              << (r.unreachable_tasks.empty() ? "" : absl::StrCat(", ", r.unreachable_tasks.size(), " gone")) << ")";
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<LocalMaster> master_;
  std::string target_;
  int64_t drain_ms_;
};

}  // namespace

StatusOr<Output> GetGlobalStep(const Scope& scope) {
  Node* n = scope.graph()->FindNode("global_step");
  if (n == nullptr || (n->op() != "VariableV2" && n->op() != "Variable" && n->op() != "VarHandleOp")) {
    return errors::NotFound("The graph has no global step (a variable 'global_step': train::CreateGlobalStep)");
  }
  return Output(n, 0);
}

StatusOr<std::unique_ptr<MonitoredSession>> MonitoredTrainingSession(const Scope& scope,
                                                                     MonitoredTrainingSessionOptions options) {
  RETURN_IF_ERROR(scope.status());
  Output global_step = options.global_step;
  if (!global_step.valid()) {
    StatusOr<Output> g = GetGlobalStep(scope);
    if (g.ok()) global_step = *g;
  }
  auto scaffold = std::make_shared<Scaffold>(std::move(options.scaffold));
  RETURN_IF_ERROR(scaffold->Finalize(scope));
  SessionOptions session_options = options.config;
  session_options.target = options.master;
  std::vector<std::shared_ptr<SessionRunHook>> hooks;
  std::unique_ptr<SessionCreator> creator;
  if (options.is_chief) {
    hooks = options.chief_only_hooks;
    const std::string summary_dir = options.summary_dir.empty() ? options.checkpoint_dir : options.summary_dir;
    if (options.summary_writer == nullptr && !summary_dir.empty() &&
        (options.save_summaries_steps > 0 || options.log_step_count_steps > 0)) {
      auto file = std::make_shared<summary::FileWriter>(summary_dir);
      Status graph = file->AddGraph(*scope.graph());  // TensorBoard's graph tab
      // A file error is not a dead task: no recovery should retry it.
      if (absl::IsUnavailable(graph)) return errors::FailedPrecondition(graph.message());
      RETURN_IF_ERROR(graph);
      options.summary_writer = NewSummaryWriter(std::move(file));
    }
    const bool checkpoints = !options.checkpoint_dir.empty() &&
                             (options.save_checkpoint_steps > 0 || options.save_checkpoint_secs > 0);
    if (checkpoints && !global_step.valid()) {
      return errors::NotFound("Saving checkpoints needs a global step (train::CreateGlobalStep)");
    }
    if (options.log_step_count_steps > 0 && global_step.valid()) {
      hooks.push_back(std::make_shared<StepCounterHook>(global_step, options.log_step_count_steps, 0,
                                                        options.summary_writer));
    }
    if (options.save_summaries_steps > 0 && options.summary_writer != nullptr && scaffold->summary_op.valid() &&
        global_step.valid()) {
      hooks.push_back(std::make_shared<SummarySaverHook>(scaffold->summary_op, options.summary_writer, global_step,
                                                         options.save_summaries_steps));
    }
    if (checkpoints) {
      const bool by_steps = options.save_checkpoint_steps > 0;
      hooks.push_back(std::make_shared<CheckpointSaverHook>(options.checkpoint_dir, scaffold->saver, global_step,
                                                            by_steps ? 0 : options.save_checkpoint_secs,
                                                            by_steps ? options.save_checkpoint_steps : 0, "model.ckpt",
                                                            options.max_consecutive_save_failures));
    }
    creator = std::make_unique<ChiefSessionCreator>(scope, scaffold, session_options, options.checkpoint_dir);
  } else {
    creator = std::make_unique<WorkerSessionCreator>(scope, scaffold, session_options, options.max_wait_secs);
  }
  hooks.insert(hooks.end(), options.hooks.begin(), options.hooks.end());
  RecoveryOptions recovery = options.recovery;
  std::shared_ptr<LocalMaster> local = LocalMaster::FindTarget(session_options.target);
  // (Or one that stopped already because the job is complete: this worker came up too late.)
  std::shared_ptr<LocalMaster> known = local != nullptr ? local
                                                        : LocalMaster::FindCompletedTarget(session_options.target);
  if (!recovery.job_complete && known != nullptr) {
    // A session on a server of this process (a between-graph trainer's own task) knows when that
    // task is told the job is complete; after that, a step that fails because the ps tasks are
    // gone is the end of training.
    recovery.job_complete = [known] { return known->job_complete(); };
  }
  if (options.is_chief && options.notify_job_complete && local != nullptr) {
    if (options.job_complete_drain_ms < 0) {
      return errors::InvalidArgument("job_complete_drain_ms must be >= 0, got ", options.job_complete_drain_ms);
    }
    hooks.push_back(std::make_shared<JobCompletionHook>(local, session_options.target, options.job_complete_drain_ms));
  }
  return MonitoredSession::Create(std::move(creator), std::move(hooks), recovery);
}

}  // namespace dflow::train
