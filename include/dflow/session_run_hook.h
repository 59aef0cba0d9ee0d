// SessionRunHook: code that a training loop (MonitoredTrainingSession) calls around session
// creation and around every step, as TensorFlow's tf.train.SessionRunHook.
//
//   class PrintLoss : public train::SessionRunHook {
//    public:
//     explicit PrintLoss(Output loss) : loss_(loss) {}
//     StatusOr<train::SessionRunArgs> BeforeRun(train::SessionRunContext* ctx) override {
//       return train::SessionRunArgs{{loss_}};                // fetched with the step
//     }
//     Status AfterRun(train::SessionRunContext* ctx, const train::SessionRunValues& v) override {
//       if (v.results[0].scalar<float>() < 0.01f) ctx->RequestStop();
//       return absl::OkStatus();
//     }
//    private:
//     Output loss_;
//   };
//
// The order a training loop calls them in:
//   Begin()                        once, before the session is created; the graph may still grow
//   AfterCreateSession(s, coord)   once per created (or re-created) session, after it is ready
//                                  (variables initialized or restored)
//   per step: BeforeRun(ctx) -> the step runs the caller's fetches plus every hook's
//             SessionRunArgs in one Run -> AfterRun(ctx, values with this hook's results)
//   End(s)                         once, when training ends without an error, before the
//                                  session closes
// A hook that returns an error ends training with that error. Every method defaults to doing
// nothing. A hook object is called from one thread at a time.
#pragma once

#include <vector>

#include "dflow/session.h"

namespace dflow::train {

class Coordinator;

// What a hook asks to add to the next step.
struct SessionRunArgs {
  std::vector<Output> fetches;
  ClientSession::FeedDict feeds;
  std::vector<Operation> targets;
};

// What the step returned for one hook.
struct SessionRunValues {
  // One tensor per fetch of the hook's SessionRunArgs, in order.
  std::vector<Tensor> results;
  // The step's metadata when the loop asked for it (empty otherwise).
  RunMetadata run_metadata;
};

// The step being run: what the caller asked for, the session, and a way to end training after
// this step.
class SessionRunContext {
 public:
  SessionRunContext(SessionRunArgs original_args, ClientSession* session)
      : original_args_(std::move(original_args)), session_(session) {}

  // The caller's own fetches, feeds and targets (not the hooks').
  const SessionRunArgs& original_args() const { return original_args_; }
  ClientSession* session() const { return session_; }
  // Asks the loop to stop after this step (it then reports ShouldStop()).
  void RequestStop() { stop_requested_ = true; }
  bool stop_requested() const { return stop_requested_; }

 private:
  SessionRunArgs original_args_;
  ClientSession* session_;
  bool stop_requested_ = false;
};

class SessionRunHook {
 public:
  virtual ~SessionRunHook() = default;

  // Before the session exists: the hook may add ops to the graph.
  virtual Status Begin() { return absl::OkStatus(); }
  // After a session is created and ready. `coord` (may be null) is the loop's coordinator: a
  // hook that starts threads (a QueueRunner) registers them with it so they stop with the loop.
  virtual Status AfterCreateSession(ClientSession* session, Coordinator* coord) { return absl::OkStatus(); }
  // Before each step: what to add to it (nothing by default).
  virtual StatusOr<SessionRunArgs> BeforeRun(SessionRunContext* run_context) { return SessionRunArgs(); }
  // After each successful step, with the results of what BeforeRun asked for.
  virtual Status AfterRun(SessionRunContext* run_context, const SessionRunValues& run_values) {
    return absl::OkStatus();
  }
  // At the end of training (not after an error), while the session is still open.
  virtual Status End(ClientSession* session) { return absl::OkStatus(); }
};

}  // namespace dflow::train
