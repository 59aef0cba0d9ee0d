// SyncReplicasOptimizer: synchronous data-parallel training over between-graph replicas, as
// TensorFlow's tf.train.SyncReplicasOptimizer.
//
//   train::GradientDescentOptimizer sgd(0.1f);
//   train::SyncReplicasOptimizer sync(sgd, /*replicas_to_aggregate=*/2, /*total_num_replicas=*/3);
//   Output step = train::CreateGlobalStep(s);
//   Operation train_op = sync.Minimize(s, loss, {}, step);         // every worker builds this
//   auto hook = sync.MakeSessionRunHook(s, is_chief);              // for MonitoredTrainingSession
//   // without a MonitoredTrainingSession:
//   hook->AfterCreateSession(&session, &coord);   // after the variables are initialized
//   while (...) session.Run({train_op});
//   hook->End(&session);
//
// How a step works (TensorFlow's algorithm):
//   - Every trainable variable gets a gradient accumulator on the variable's device (its ps
//     task), shared by name ("<var>/grad_accum") by every replica.
//   - A worker's train op applies its gradients to the accumulators, tagged with its local
//     step, then dequeues a token from the sync token queue ("sync_token_q", on the global
//     step's device) and makes the token its new local step. A worker waits there until the
//     chief has finished the step.
//   - The chief's queue runner runs the sync op in a loop: take the mean of exactly
//     replicas_to_aggregate gradients from every accumulator (waiting for them), apply it with
//     the wrapped optimizer, add 1 to global_step, and enqueue max(total_num_replicas,
//     replicas_to_aggregate) tokens carrying the new global step.
//   - A gradient computed from an older step than the accumulator's (a slow replica) is dropped
//     and counted (NumDroppedGradients), and so is one that arrives when replicas_to_aggregate
//     gradients are already there for the step (the accumulators' max_gradients_per_step); so
//     each global step applies exactly replicas_to_aggregate fresh gradients, once. Workers beyond replicas_to_aggregate are
//     backup workers: the step goes on with the first gradients to arrive, and a worker that
//     dies does not stop training while replicas_to_aggregate replicas remain.
//
// The chief must, once per session (the hook does it): run chief_init_op() (sets each
// accumulator's global step and the chief's local step from global_step), run
// GetInitTokensOp() (tokens for the first step), and start the chief queue runner. Other
// workers run local_step_init_op(). local_step is a variable of the worker's own task
// ("sync_rep_local_step", not in GlobalVariablesInitializer): those ops initialize it.
//
// Errors are recorded in the scope, as everywhere in the client API. Not thread-safe: build
// from one thread.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "dflow/queue_runner.h"
#include "dflow/session_run_hook.h"
#include "dflow/train.h"

namespace dflow::train {

class SyncReplicasOptimizer {
 public:
  // `opt` applies the aggregated gradients (it is copied; its state is shared with the copy).
  // total_num_replicas < 0 means replicas_to_aggregate. Both must be >= 1 (an error of the first
  // ApplyGradients otherwise).
  SyncReplicasOptimizer(const Optimizer& opt, int replicas_to_aggregate, int total_num_replicas = -1);

  std::vector<std::pair<Output, Output>> ComputeGradients(const Scope& scope, Output loss,
                                                          std::vector<Output> var_list = {});
  // Builds the accumulators, the token queue, the chief's sync op and the worker's train op, and
  // returns the train op ("<name of the wrapped optimizer's op>" plus the accumulate-and-wait
  // ops). global_step (CreateGlobalStep) is required. Call once.
  Operation ApplyGradients(const Scope& scope, const std::vector<std::pair<Output, Output>>& grads_and_vars,
                           Output global_step);
  Operation Minimize(const Scope& scope, Output loss, std::vector<Output> var_list, Output global_step);

  // Enqueues `num_tokens` tokens (-1: replicas_to_aggregate) holding global_step, for the first
  // step; with fewer than replicas_to_aggregate - total_num_replicas tokens the first step could
  // never finish: InvalidArgument. A NoOp for 0 tokens. After ApplyGradients.
  Operation GetInitTokensOp(const Scope& scope, int num_tokens = -1);
  // Runs the sync op in a loop (chief only); a new runner per call. After ApplyGradients.
  std::shared_ptr<QueueRunner> GetChiefQueueRunner() const;
  // The hook that does the chief's or a worker's per-session work (see above), and at End stops
  // the chief's queue runner and closes the token queue so that workers waiting for a token end
  // with OutOfRange. Builds its ops in `scope`. After ApplyGradients; null otherwise (the error
  // is recorded in the scope). The chief's queue runner uses the session given to
  // AfterCreateSession until End, the next AfterCreateSession or the hook's destruction: the
  // session must stay alive until then (closing it is fine: the runner then ends with its error,
  // reported to the coordinator).
  std::unique_ptr<SessionRunHook> MakeSessionRunHook(const Scope& scope, bool is_chief, int num_tokens = -1);

  Operation chief_init_op() const { return chief_init_op_; }
  Operation local_step_init_op() const { return local_step_init_op_; }
  Output local_step() const { return local_step_; }
  Output sync_token_queue() const { return token_queue_; }
  Operation sync_op() const { return sync_op_; }
  // The accumulator handles, one per variable with a gradient, in the order of grads_and_vars.
  const std::vector<Output>& accumulators() const { return accumulators_; }
  // The stale gradients the accumulators dropped, summed (int64 scalar). After ApplyGradients.
  Output NumDroppedGradients(const Scope& scope) const;

  int replicas_to_aggregate() const { return replicas_to_aggregate_; }
  int total_num_replicas() const { return total_num_replicas_; }

 private:
  Optimizer opt_;
  const int replicas_to_aggregate_;
  const int total_num_replicas_;
  bool applied_ = false;
  Output global_step_, local_step_, token_queue_;
  Operation sync_op_, chief_init_op_, local_step_init_op_;
  std::vector<Output> accumulators_;
};

}  // namespace dflow::train
