// The SyncReplicasOptimizer of dflow/sync_replicas_optimizer.h. It lives in the client API, not
// in src/train, because it wraps the client Optimizer and builds through Scopes, so that device
// functions (ReplicaDeviceSetter) place the worker-side ops as they place the model.
#include "dflow/sync_replicas_optimizer.h"

#include "api/scope_internal.h"
#include "dflow/math_ops.h"
#include "dflow/state_ops.h"
#include "graph/graph.h"

namespace dflow::train {
namespace {

// The variable node behind `v`: itself, or the VariableV2 an Identity ("w/read") reads.
const Node* VariableNode(const Output& v) {
  const Node* n = v.node();
  if (n != nullptr && n->op() == "Identity" && !n->data_inputs().empty() && n->data_inputs()[0] != nullptr) {
    const Node* in = n->data_inputs()[0]->src;
    if (in != nullptr && (in->op() == "VariableV2" || in->op() == "Variable")) return in;
  }
  return n;
}

// Runs `op` once: the hook's session calls.
Status RunOnce(ClientSession* session, const Operation& op, const char* what) {
  Status s = session->Run({op});
  if (!s.ok()) return errors::Annotate(s, absl::StrCat("SyncReplicasOptimizer: running ", what, ": "));
  return absl::OkStatus();
}

class SyncReplicasHook : public SessionRunHook {
 public:
  SyncReplicasHook(bool is_chief, Operation local_init, Operation init_tokens, Operation sync_op, Operation close_queue)
      : is_chief_(is_chief),
        local_init_(std::move(local_init)),
        init_tokens_(std::move(init_tokens)),
        sync_op_(std::move(sync_op)),
        close_queue_(std::move(close_queue)) {}
  ~SyncReplicasHook() override { StopRunner().IgnoreError(); }

  Status AfterCreateSession(ClientSession* session, Coordinator* coord) override {
    RETURN_IF_ERROR(RunOnce(session, local_init_, is_chief_ ? "the chief's init op" : "the local step's init op"));
    if (!is_chief_) return absl::OkStatus();
    RETURN_IF_ERROR(RunOnce(session, init_tokens_, "the init tokens op"));
    StopRunner().IgnoreError();  // a session made again after a failure gets a new runner
    runner_ = std::make_shared<QueueRunner>(std::vector<Operation>{sync_op_});
    return runner_->Start(session, coord);
  }

  Status End(ClientSession* session) override {
    if (!is_chief_) return absl::OkStatus();
    Status s = StopRunner();
    // Workers that wait for a token of a step that will not come end with OutOfRange.
    session->Run({close_queue_}).IgnoreError();
    return s;
  }

 private:
  Status StopRunner() {
    if (runner_ == nullptr) return absl::OkStatus();
    runner_->RequestStop();
    Status s = runner_->Join();
    runner_.reset();
    return s;
  }

  const bool is_chief_;
  const Operation local_init_, init_tokens_, sync_op_, close_queue_;
  std::shared_ptr<QueueRunner> runner_;
};

}  // namespace

SyncReplicasOptimizer::SyncReplicasOptimizer(const Optimizer& opt, int replicas_to_aggregate, int total_num_replicas)
    : opt_(opt),
      replicas_to_aggregate_(replicas_to_aggregate),
      total_num_replicas_(total_num_replicas < 0 ? replicas_to_aggregate : total_num_replicas) {}

std::vector<std::pair<Output, Output>> SyncReplicasOptimizer::ComputeGradients(const Scope& scope, Output loss,
                                                                               std::vector<Output> var_list) {
  return opt_.ComputeGradients(scope, loss, std::move(var_list));
}

Operation SyncReplicasOptimizer::Minimize(const Scope& scope, Output loss, std::vector<Output> var_list,
                                          Output global_step) {
  auto gvs = ComputeGradients(scope, loss, std::move(var_list));
  if (!scope.ok()) return Operation();
  return ApplyGradients(scope, gvs, global_step);
}

Operation SyncReplicasOptimizer::ApplyGradients(const Scope& scope,
                                                const std::vector<std::pair<Output, Output>>& grads_and_vars,
                                                Output global_step) {
  if (!scope.ok()) return Operation();
  auto fail = [&](Status s) {
    scope.UpdateStatus(s);
    return Operation();
  };
  if (applied_) return fail(errors::FailedPrecondition("SyncReplicasOptimizer::ApplyGradients was called already"));
  if (replicas_to_aggregate_ < 1 || total_num_replicas_ < 1) {
    return fail(errors::InvalidArgument("SyncReplicasOptimizer: replicas_to_aggregate (", replicas_to_aggregate_,
                                        ") and total_num_replicas (", total_num_replicas_, ") must be >= 1"));
  }
  if (!global_step.valid()) {
    return fail(errors::InvalidArgument("SyncReplicasOptimizer::ApplyGradients needs a global_step "
                                        "(train::CreateGlobalStep)"));
  }
  const DType step_type = BaseType(global_step.dtype());
  if (step_type != DT_INT64) {
    return fail(errors::InvalidArgument("SyncReplicasOptimizer: global_step must be an int64 variable, got ",
                                        DTypeString(global_step.dtype())));
  }
  if (grads_and_vars.empty()) return fail(errors::InvalidArgument("SyncReplicasOptimizer: no gradients to apply"));

  // The local step lives on this worker's task, next to an anchor op that the scope's device
  // functions place there (TensorFlow's local_anchor): not on a ps, where replicas would share it.
  Operation anchor = ops::NoOp(scope.WithOpName(scope.GetUniqueNameForOp("sync_rep_local_anchor")));
  if (!scope.ok()) return Operation();
  Scope local = ScopeAccess::ColocatedWith(scope, anchor.node());
  local_step_ = ops::VariableV2(local.WithOpName(scope.GetUniqueNameForOp("sync_rep_local_step")),
                                PartialTensorShape::Scalar(), DT_INT64);
  Output local_value = ops::Identity(local, local_step_);
  Scope at_step = ScopeAccess::ColocatedWith(scope, global_step.node());
  local_step_init_op_ = ops::Assign(local.WithOpName(scope.GetUniqueNameForOp("local_step_init")), local_step_,
                                    ops::Identity(at_step, global_step))
                            .op();
  if (!scope.ok()) return Operation();

  std::vector<Operation> train_ops, chief_init = {local_step_init_op_};
  std::vector<std::pair<Output, Output>> aggregated;
  Output required = ops::Const(at_step.WithOpName(scope.GetUniqueNameForOp("replicas_to_aggregate")),
                               Input::Initializer(static_cast<int32_t>(replicas_to_aggregate_)));
  for (const auto& [grad, var] : grads_and_vars) {
    if (!var.valid()) return fail(errors::InvalidArgument("SyncReplicasOptimizer: a variable is an invalid Output"));
    if (!grad.valid()) {
      aggregated.emplace_back(Output(), var);
      continue;
    }
    const Node* vn = VariableNode(var);
    Scope at_var = ScopeAccess::ColocatedWith(scope, vn);
    const std::string base = vn->name();
    PartialTensorShape shape = vn->output_shape(0);
    Output acc = ops::ConditionalAccumulator(at_var.WithOpName(scope.GetUniqueNameForOp(base + "/grad_accum")),
                                             BaseType(grad.dtype()), shape,
                                             {.shared_name = base + "/grad_accum",
                                              .max_gradients_per_step = replicas_to_aggregate_});
    train_ops.push_back(ops::AccumulatorApplyGradient(at_var, acc, local_value, grad));
    aggregated.emplace_back(ops::AccumulatorTakeGradient(at_var, acc, required, BaseType(grad.dtype())), var);
    Operation set_step = ops::AccumulatorSetGlobalStep(at_var.WithOpName(scope.GetUniqueNameForOp("SetGlobalStep")),
                                                       acc, ops::Identity(at_step, global_step));
    chief_init.push_back(set_step);
    accumulators_.push_back(acc);
    if (!scope.ok()) return Operation();
  }
  if (accumulators_.empty()) {
    return fail(errors::InvalidArgument("SyncReplicasOptimizer: no variable has a gradient"));
  }
  // No variable is updated before every take has returned: a sync op stopped while it waits for
  // gradients then changes no variable (and not global_step), so a step is applied whole or not.
  std::vector<Operation> takes;
  for (const auto& [g, v] : aggregated)
    if (g.valid()) takes.push_back(g.op());
  for (auto& [g, v] : aggregated) {
    if (g.valid()) g = ops::Identity(ScopeAccess::ColocatedWith(scope, g.node()).WithControlDependencies(takes), g);
  }
  // The chief's part: the wrapped optimizer applies the aggregated gradients and bumps
  // global_step; then tokens carrying the new step release the workers.
  Operation update = opt_.ApplyGradients(scope, aggregated, global_step);
  token_queue_ = ops::FIFOQueue(at_step.WithOpName(scope.GetUniqueNameForOp("sync_token_q")), {DT_INT64},
                                {.shapes = {PartialTensorShape::Scalar()}, .shared_name = "sync_token_q"});
  if (!scope.ok()) return Operation();
  Scope after_update = at_step.WithControlDependencies({update});
  const int tokens_per_step = std::max(total_num_replicas_, replicas_to_aggregate_);
  Output tokens = ops::Fill(after_update,
                            ops::Const(after_update, Input::Initializer(std::vector<int32_t>{tokens_per_step})),
                            ops::Identity(after_update, global_step));
  sync_op_ = ops::QueueEnqueueMany(after_update.WithOpName(scope.GetUniqueNameForOp("sync_op")), token_queue_,
                                   {tokens});
  // The worker's part: accumulate, wait for a token, adopt it as the local step.
  Output token = ops::QueueDequeue(at_step.WithControlDependencies(train_ops), token_queue_, {DT_INT64})[0];
  Output train = ops::Assign(local.WithOpName(scope.GetUniqueNameForOp("sync_replicas_train")), local_step_, token);
  chief_init_op_ = ops::Group(scope.WithOpName(scope.GetUniqueNameForOp("sync_replicas_chief_init")), chief_init);
  global_step_ = global_step;
  if (!scope.ok()) return Operation();
  applied_ = true;
  return train.op();
}

Operation SyncReplicasOptimizer::GetInitTokensOp(const Scope& scope, int num_tokens) {
  if (!scope.ok()) return Operation();
  if (!applied_) {
    scope.UpdateStatus(errors::FailedPrecondition("SyncReplicasOptimizer::GetInitTokensOp must be called after "
                                                  "ApplyGradients"));
    return Operation();
  }
  const int needed = replicas_to_aggregate_ - total_num_replicas_;
  if (num_tokens == -1) {
    num_tokens = replicas_to_aggregate_;
  } else if (num_tokens < needed || num_tokens < 0) {
    scope.UpdateStatus(errors::InvalidArgument("Too few tokens to finish the first step: ", num_tokens, " (given) vs ",
                                               needed, " (needed)"));
    return Operation();
  }
  Scope at_step = ScopeAccess::ColocatedWith(scope, global_step_.node());
  if (num_tokens == 0) return ops::NoOp(at_step.WithOpName(scope.GetUniqueNameForOp("no_init_tokens")));
  Output tokens = ops::Fill(at_step, ops::Const(at_step, Input::Initializer(std::vector<int32_t>{num_tokens})),
                            ops::Identity(at_step, global_step_));
  return ops::QueueEnqueueMany(at_step.WithOpName(scope.GetUniqueNameForOp("init_tokens")), token_queue_, {tokens});
}

std::shared_ptr<QueueRunner> SyncReplicasOptimizer::GetChiefQueueRunner() const {
  if (!applied_) return nullptr;
  return std::make_shared<QueueRunner>(std::vector<Operation>{sync_op_});
}

std::unique_ptr<SessionRunHook> SyncReplicasOptimizer::MakeSessionRunHook(const Scope& scope, bool is_chief,
                                                                          int num_tokens) {
  if (!scope.ok()) return nullptr;
  if (!applied_) {
    scope.UpdateStatus(errors::FailedPrecondition("SyncReplicasOptimizer::MakeSessionRunHook must be called after "
                                                  "ApplyGradients"));
    return nullptr;
  }
  Operation init_tokens, close_queue;
  if (is_chief) {
    init_tokens = GetInitTokensOp(scope, num_tokens);
    Scope at_step = ScopeAccess::ColocatedWith(scope, global_step_.node());
    close_queue = ops::QueueClose(at_step.WithOpName(scope.GetUniqueNameForOp("sync_token_q_close")), token_queue_,
                                  /*cancel_pending_enqueues=*/true);
  }
  if (!scope.ok()) return nullptr;
  return std::make_unique<SyncReplicasHook>(is_chief, is_chief ? chief_init_op_ : local_step_init_op_, init_tokens,
                                            sync_op_, close_queue);
}

Output SyncReplicasOptimizer::NumDroppedGradients(const Scope& scope) const {
  if (!scope.ok()) return Output();
  if (!applied_) {
    scope.UpdateStatus(errors::FailedPrecondition("SyncReplicasOptimizer::NumDroppedGradients must be called after "
                                                  "ApplyGradients"));
    return Output();
  }
  std::vector<Output> counts;
  for (const Output& acc : accumulators_) {
    counts.push_back(ops::AccumulatorNumDropped(ScopeAccess::ColocatedWith(scope, acc.node()), acc));
  }
  return counts.size() == 1 ? counts[0] : ops::AddN(scope, counts);
}

}  // namespace dflow::train
