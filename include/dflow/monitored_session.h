// MonitoredTrainingSession: a training loop's session that initializes or restores the model,
// runs hooks around every step, saves checkpoints and summaries, and recovers when a task of the
// cluster dies — TensorFlow 1.x's tf.train.MonitoredTrainingSession.
//
//   Output step = train::CreateGlobalStep(root.WithDevice("/job:ps/task:0"));
//   Operation train_op = train::GradientDescentOptimizer(0.1f).Minimize(root, loss, {}, step);
//   train::MonitoredTrainingSessionOptions o;
//   o.master = server->target();
//   o.is_chief = task_index == 0;
//   o.checkpoint_dir = "/tmp/model";
//   o.save_checkpoint_steps = 100;
//   o.hooks = {std::make_shared<train::StopAtStepHook>(step, /*num_steps=*/0, /*last_step=*/1000)};
//   auto sess = train::MonitoredTrainingSession(root, o);      // StatusOr<unique_ptr<...>>
//   while (!(*sess)->ShouldStop()) {
//     auto r = (*sess)->Run({}, {loss}, {train_op});
//     if (!r.ok()) { if (absl::IsOutOfRange(r.status())) break; return r.status(); }
//   }
//   Status s = (*sess)->Close();     // hooks' End: the final checkpoint
//
// Session creation (SessionManager logic):
// - the chief restores the latest checkpoint of checkpoint_dir when there is one, otherwise runs
//   the scaffold's init op; then the model must be ready (ready op empty), else
//   FailedPrecondition naming the variables still uninitialized. A damaged checkpoint (its
//   restore fails with DataLoss: a file truncated, changed or missing) is logged and the one
//   before it, from the state file's list, restored instead; when every recorded checkpoint is
//   damaged, DataLoss names each. Other restore errors (a variable missing from the checkpoint:
//   a different model) are returned as they are;
// - other workers poll the ready op (backoff from 100 ms to 2 s) and log, every 5 s, the
//   variables they wait for; after max_wait_secs, DeadlineExceeded names them;
// - then everybody runs the local init op, and the hooks' AfterCreateSession.
//
// Recovery: a step (or a session creation) that fails with Aborted or Unavailable — a ps task or
// a peer died or restarted — or Cancelled (a task was stopped during the step) closes the
// session, waits (exponential backoff), creates a new one as above (the chief restores the
// latest checkpoint; a worker waits for the model again), and runs the step again. At most RecoveryOptions::max_recovery_attempts consecutive failures; then
// the last error is returned. A successful step resets the count. Any other error ends training:
// Run returns it and Close skips the hooks' End. OutOfRange (an input ran out) ends training
// cleanly: ShouldStop() becomes true, Run returns the OutOfRange status, and Close calls End.
// So does a failure once RecoveryOptions::job_complete says the job is over (the chief told every
// task; Run returns OutOfRange "Job is complete (...)"): Create then returns a session that
// already ShouldStop() (a worker that comes up after the job ended has nothing to do), and Close
// returns OK when a hook's End fails after the job completed.
//
// Job completion: a MonitoredTrainingSession on the chief whose master is a server of this
// process with other tasks in its cluster (a between-graph trainer's own task) tells every task
// that the job is complete when it closes after training ended without an error (after the
// hooks' End: the final checkpoint): ps tasks in Server::Join return, other workers' steps end
// with OutOfRange and their sessions stop. A trainer written as in TensorFlow's guide (a
// StopAtStepHook, ps tasks in Join) thus ends with every task exiting 0.
//
// Thread-safety: a MonitoredSession is used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dflow/saver.h"
#include "dflow/session.h"
#include "dflow/session_run_hook.h"

namespace dflow::train {

// What a training session needs of a saver.
class SaverInterface {
 public:
  virtual ~SaverInterface() = default;
  // Writes the variables to "<prefix>-<global_step>" and records it as the latest checkpoint of
  // the prefix's directory (atomically: a crash leaves the previous checkpoint readable). A
  // failed save leaves no files behind and the record as it was. Returns the path written.
  virtual StatusOr<std::string> Save(const ClientSession& session, const std::string& prefix, int64_t global_step) = 0;
  // Gives every variable its value from the checkpoint at `path`. DataLoss when the checkpoint is
  // damaged (a file missing, truncated or failing its checksum; the chief then falls back to an
  // older one); a variable missing from the checkpoint is NotFound naming it.
  virtual Status Restore(const ClientSession& session, const std::string& path) = 0;
  // The latest checkpoint recorded in `dir` ("" when there is none).
  virtual StatusOr<std::string> LatestCheckpoint(const std::string& dir) = 0;
  // The checkpoints recorded in `dir`, newest first: the ones a restore may fall back to. Empty
  // when there are none. The default is LatestCheckpoint's alone.
  virtual StatusOr<std::vector<std::string>> Checkpoints(const std::string& dir);
};

// A SaverInterface over a train::Saver (dflow/saver.h): TensorFlow's V2 checkpoints. Its first
// Save adopts the checkpoints already listed in the directory (so max_to_keep counts those of an
// earlier run); LatestCheckpoint is "" when the directory names none; Checkpoints lists the state
// file's latest checkpoint, then the others it records (all_model_checkpoint_paths) from the
// newest. Restore of a path without an index file is DataLoss: the state file recorded it, so
// its files were lost.
std::shared_ptr<SaverInterface> NewSaver(Saver saver);

// The pieces of the graph a training session uses; Finalize fills in what was left unset.
struct Scaffold {
  // Runs on the chief when there is no checkpoint. Default: GlobalVariablesInitializer.
  Operation init_op;
  // A 1-D string tensor of the variables still uninitialized (empty: the model is ready).
  // Default: ReportUninitializedVariables over the global variables (those GlobalVariablesInitializer
  // and the Saver cover; not the local ones, which the local init op sets once the model is ready).
  Output ready_op;
  // Runs on every task once the model is ready. Default: LocalVariablesInitializer when the
  // graph has local variables (Variable::CreateLocal), else none.
  Operation local_init_op;
  // Default: NewSaver of a sharded Saver of every global variable (each ps task writes its own
  // variables); none when the graph has no global variables.
  std::shared_ptr<SaverInterface> saver;
  // A serialized Summary proto per step for SummarySaverHook. Default: summary::MergeAll (none
  // when the graph has no summaries).
  Output summary_op;
  // Fed to init_op when the chief runs it.
  ClientSession::FeedDict init_feed_dict;
  // Called on the chief after init_op, when there was no checkpoint to restore (to load
  // pretrained values, say); its error fails the session creation. Empty: nothing.
  std::function<Status(ClientSession*)> init_fn;

  // Builds the defaults into the scope's graph (idempotent). Call it before the session is
  // created (MonitoredTrainingSession does); ops added to the graph afterwards are not part of
  // the model the ready op checks. Returns the scope's error if building failed.
  Status Finalize(const Scope& scope);
  bool finalized() const { return finalized_; }

 private:
  bool finalized_ = false;
};

// Makes ready sessions for a MonitoredSession (and again after a failure).
class SessionCreator {
 public:
  virtual ~SessionCreator() = default;
  virtual StatusOr<std::unique_ptr<ClientSession>> CreateSession() = 0;
};

// The chief: restore the latest checkpoint of checkpoint_dir, or run the init op.
class ChiefSessionCreator : public SessionCreator {
 public:
  // `scaffold` must be finalized. `checkpoint_dir` may be empty (never restore).
  // `options.target` is the master ("" for this process).
  ChiefSessionCreator(const Scope& scope, std::shared_ptr<const Scaffold> scaffold, SessionOptions options,
                      std::string checkpoint_dir);
  StatusOr<std::unique_ptr<ClientSession>> CreateSession() override;
  // The checkpoint the last CreateSession restored ("" when it initialized).
  const std::string& restored_checkpoint() const { return restored_; }

 private:
  Scope scope_;
  std::shared_ptr<const Scaffold> scaffold_;
  SessionOptions options_;
  std::string checkpoint_dir_, restored_;
};

// Any other worker: wait until the chief made the model ready.
class WorkerSessionCreator : public SessionCreator {
 public:
  // `max_wait_secs`: how long to wait for the model (DeadlineExceeded after).
  WorkerSessionCreator(const Scope& scope, std::shared_ptr<const Scaffold> scaffold, SessionOptions options,
                       int64_t max_wait_secs = 7200);
  StatusOr<std::unique_ptr<ClientSession>> CreateSession() override;

 private:
  Scope scope_;
  std::shared_ptr<const Scaffold> scaffold_;
  SessionOptions options_;
  int64_t max_wait_secs_;
};

struct RecoveryOptions {
  // Consecutive failed attempts (a step or a session creation failing with Aborted or
  // Unavailable) before giving up with the last error; 0 disables recovery.
  int max_recovery_attempts = 10;
  // The wait before attempt k is min(initial_backoff_ms * 2^(k-1), max_backoff_ms).
  int64_t initial_backoff_ms = 100;
  int64_t max_backoff_ms = 5000;
  // Asked before each recovery attempt; true means the failure is the end of the job (the chief
  // told every task it is complete, so the ps tasks are gone on purpose: Server::job_complete):
  // training then ends cleanly, as with OutOfRange, instead of recovering. Left unset,
  // MonitoredTrainingSession asks the server of this process whose target is `master` (the
  // between-graph trainer's own task), so trainers need not set it.
  std::function<bool()> job_complete;
};

// The errors MonitoredSession recovers from: Aborted, Unavailable and Cancelled (a task died,
// restarted or was stopped during the step).
bool IsRecoverableError(const Status& s);

class MonitoredSession {
 public:
  // Calls every hook's Begin, creates the session (see above, with recovery) and calls the
  // hooks' AfterCreateSession. The first error of any of them is returned.
  static StatusOr<std::unique_ptr<MonitoredSession>> Create(std::unique_ptr<SessionCreator> creator,
                                                            std::vector<std::shared_ptr<SessionRunHook>> hooks,
                                                            const RecoveryOptions& recovery = {});
  ~MonitoredSession();  // Close() if the caller did not

  // One step: every hook's BeforeRun, one session run of the caller's fetches, feeds and targets
  // plus every hook's, then every hook's AfterRun with its own results. Returns the caller's
  // fetches. A feed given twice with different tensors (by the caller and a hook, or two hooks)
  // is InvalidArgument. FailedPrecondition after Close or after a run ended training with an error.
  StatusOr<std::vector<Tensor>> Run(const ClientSession::FeedDict& feeds, const std::vector<Output>& fetches,
                                    const std::vector<Operation>& targets = {});
  StatusOr<std::vector<Tensor>> Run(const std::vector<Output>& fetches) { return Run({}, fetches, {}); }

  // True once a hook asked to stop, an input ran out (OutOfRange), or training failed.
  // The coordinator given to the hooks' AfterCreateSession asks to stop too (a queue runner hit
  // the end of its input, or failed: then Run returns that error).
  bool ShouldStop() const;
  // Calls every hook's End (when training did not fail) and closes the session. Returns the
  // first error of the hooks (or of training). Idempotent.
  Status Close();

  // Ends training with `error` (not OK): the caller's own loop failed, so Close skips the hooks'
  // End (no final checkpoint; the chief does not end the job) and returns that error; Run
  // fails from then on. Does nothing once training ended with an error or Close ran.
  void Abandon(const Status& error);

  // The session of the current attempt (null between a failure and the next creation): for
  // runs that must not go through the hooks.
  ClientSession* raw_session() const { return session_.get(); }
  // The coordinator of the current session's threads (null when there is no session).
  std::shared_ptr<Coordinator> coordinator() const { return coord_; }
  // How many times a session was (re)created; 1 without failures.
  int sessions_created() const { return sessions_created_; }

 private:
  MonitoredSession(std::unique_ptr<SessionCreator> creator, std::vector<std::shared_ptr<SessionRunHook>> hooks,
                   const RecoveryOptions& recovery);
  // Creates the session and a Coordinator and calls AfterCreateSession; the error of the first
  // failing piece.
  Status CreateOnce();
  // Stops and joins the threads registered with the coordinator; their first error.
  Status StopCoordinator();
  // Stops the coordinator's threads and closes the session (after a failure).
  void DropSession();
  // Ends training cleanly after `error` because the job is complete: OutOfRange.
  Status EndOfJob(const Status& error);
  // Waits before the next attempt; false when the budget is spent.
  bool BackOff(const Status& error);
  StatusOr<std::vector<Tensor>> HookedRun(const ClientSession::FeedDict& feeds, const std::vector<Output>& fetches,
                                          const std::vector<Operation>& targets);

  std::unique_ptr<SessionCreator> creator_;
  std::vector<std::shared_ptr<SessionRunHook>> hooks_;
  RecoveryOptions recovery_;
  std::unique_ptr<ClientSession> session_;
  std::shared_ptr<Coordinator> coord_;  // one per session: its runners use that session
  int failed_attempts_ = 0;
  int sessions_created_ = 0;
  bool stop_requested_ = false;
  bool job_complete_ = false;
  bool closed_ = false;
  Status status_;  // the error that ended training (OutOfRange is not one)
};

class SummaryWriterInterface;

struct MonitoredTrainingSessionOptions {
  // The master: "" for this process, or a server's target ("grpc://localhost:2222").
  std::string master;
  bool is_chief = true;
  // Where the chief saves checkpoints and restores from; empty: no checkpoints.
  std::string checkpoint_dir;
  Scaffold scaffold;
  // Hooks of every task, and hooks only the chief runs. The chief calls chief_only_hooks, then
  // the built-in hooks, then hooks (TensorFlow's order).
  std::vector<std::shared_ptr<SessionRunHook>> hooks;
  std::vector<std::shared_ptr<SessionRunHook>> chief_only_hooks;
  // The chief's CheckpointSaverHook (with checkpoint_dir): every save_checkpoint_steps steps when
  // that is > 0, else every save_checkpoint_secs seconds; both <= 0: no checkpoints are saved
  // (the chief still restores the latest one).
  int64_t save_checkpoint_secs = 600;
  int64_t save_checkpoint_steps = 0;
  // A failed save (a full disk) is logged and retried at the next one; training ends with the
  // save's error only when this many saves in a row have failed (1: the first failure ends it;
  // < 1 is InvalidArgument). See CheckpointSaverHook.
  int max_consecutive_save_failures = 3;
  // The chief's SummarySaverHook (with a summary_writer and a summary op) and StepCounterHook
  // (global_step/sec logged, and written when there is a summary_writer) every this many steps;
  // <= 0 disables them.
  int64_t save_summaries_steps = 100;
  int64_t log_step_count_steps = 100;
  // Where the chief's summaries go. Null: an event file in summary_dir, or in checkpoint_dir when
  // summary_dir is empty (with the graph as its first event); no summaries without either.
  std::shared_ptr<SummaryWriterInterface> summary_writer;
  std::string summary_dir;
  // The global step (CreateGlobalStep); invalid: the graph's node "global_step".
  Output global_step;
  // Session options; `master` overrides their target.
  SessionOptions config;
  // How long a non-chief worker waits for the chief to make the model ready.
  int64_t max_wait_secs = 7200;
  RecoveryOptions recovery;
  // On the chief: when the session closes after training ended without an error, tell every
  // task that the job is complete (NotifyJobComplete on `master`), after every hook's End. Only
  // when `master` is a server of this process whose cluster has other tasks; false: the trainer
  // ends the job itself, or never.
  bool notify_job_complete = true;
  // How long each task lets the steps in progress finish (JobCompleteOptions::drain_ms).
  int64_t job_complete_drain_ms = 5000;
};

// Finalizes the scaffold, adds the chief's built-in hooks (StepCounterHook, SummarySaverHook,
// CheckpointSaverHook, as configured) and creates a MonitoredSession with a ChiefSessionCreator
// (is_chief) or a WorkerSessionCreator. NotFound when the global step is needed and the graph has
// none.
StatusOr<std::unique_ptr<MonitoredSession>> MonitoredTrainingSession(const Scope& scope,
                                                                     MonitoredTrainingSessionOptions options);

// The graph's global step: its node "global_step" (CreateGlobalStep), or NotFound.
StatusOr<Output> GetGlobalStep(const Scope& scope);

}  // namespace dflow::train
