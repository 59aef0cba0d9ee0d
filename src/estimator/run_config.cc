// RunConfig (the task from TF_CONFIG or the cluster flags), the canned estimators and
// train_and_evaluate.
#include <cstdlib>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/env.h"
#include "base/logging.h"
#include "dflow/estimator.h"
#include "dflow/server.h"
#include "estimator/estimator_internal.h"

namespace dflow::estimator {

int RunConfig::num_worker_replicas() const {
  if (!task) return 1;
  return task->cluster.num_tasks("worker") + task->cluster.num_tasks("chief");
}

StatusOr<RunConfig> RunConfig::FromArgs(const std::vector<std::string>& args, const std::string& tf_config,
                                        std::vector<std::string>* rest) {
  RunConfig c;
  StatusOr<TaskConfig> task = TaskConfigFromArgs(args, tf_config, rest);
  if (task.ok()) {
    c.task = *std::move(task);
  } else if (!absl::IsNotFound(task.status())) {
    return task.status();
  }
  return c;
}

StatusOr<RunConfig> RunConfig::FromEnvironment() {
  const char* env = std::getenv("TF_CONFIG");
  return FromArgs({}, env == nullptr ? "" : env, nullptr);
}

// ---- canned estimators ----

DNNClassifier::DNNClassifier(const DNNClassifierOptions& o, RunConfig config)
    : Estimator(DNNClassifierModelFn(o, o.n_classes), std::move(config)) {}
DNNRegressor::DNNRegressor(const DNNRegressorOptions& o, RunConfig config)
    : Estimator(DNNRegressorModelFn(o, o.label_dimension), std::move(config)) {}
LinearClassifier::LinearClassifier(const LinearClassifierOptions& o, RunConfig config)
    : Estimator(LinearClassifierModelFn(o, o.n_classes), std::move(config)) {}
LinearRegressor::LinearRegressor(const LinearRegressorOptions& o, RunConfig config)
    : Estimator(LinearRegressorModelFn(o, o.label_dimension), std::move(config)) {}

// ---- train_and_evaluate ----

namespace {

// The evaluator: evaluates every new checkpoint until one reaches max_steps.
StatusOr<EvalResult> RunEvaluator(Estimator& est, const TrainSpec& train_spec, const EvalSpec& eval_spec) {
  if (est.config().model_dir.empty()) {
    return errors::InvalidArgument(
        "train_and_evaluate: the evaluator needs RunConfig::model_dir, shared with the chief");
  }
  const int64_t throttle_ms = std::max<int64_t>(eval_spec.throttle_secs, 0) * 1000 + 10;
  const int64_t timeout_us = std::max<int64_t>(eval_spec.checkpoint_timeout_secs, 1) * 1000000;
  std::string last_evaluated;
  EvalResult result;
  Env* env = Env::Default();
  int64_t waited_since = env->NowMonotonicMicros();
  while (true) {
    ASSIGN_OR_RETURN(std::string latest, est.LatestCheckpoint());
    if (!latest.empty() && latest != last_evaluated) {
      EvalOptions eo;
      eo.steps = eval_spec.steps;
      eo.checkpoint_path = latest;
      eo.hooks = eval_spec.hooks;
      StatusOr<EvalResult> r = est.Evaluate(eval_spec.input_fn, eo);
      // The chief may delete an old checkpoint while it is read: take the next one.
      if (!r.ok() && !absl::IsNotFound(r.status())) return r.status();
      last_evaluated = latest;
      waited_since = env->NowMonotonicMicros();
      if (r.ok()) {
        result = *std::move(r);
        LOG(INFO) << "Evaluated " << latest << ": " << FormatEvalResult(result);
        if (train_spec.max_steps > 0 && result["global_step"] >= static_cast<double>(train_spec.max_steps)) {
          return result;
        }
      }
    } else if (env->NowMonotonicMicros() - waited_since > timeout_us) {
      return errors::DeadlineExceeded("train_and_evaluate: no new checkpoint in ", est.model_dir(), " for ",
                                      eval_spec.checkpoint_timeout_secs,
                                      " s (the last evaluated: ", last_evaluated.empty() ? "none" : last_evaluated,
                                      ")");
    }
    env->SleepForMicros(throttle_ms * 1000);
  }
}

}  // namespace

Status RunParameterServer(const RunConfig& config) {
  if (config.task_type() != "ps") {
    return errors::FailedPrecondition("RunParameterServer on a '", config.task_type(), "' task; it is for ps tasks");
  }
  ServerOptions so;
  so.cluster = config.task->cluster;
  so.job_name = "ps";
  so.task_index = config.task_id();
  so.startup_wait_ms = config.startup_wait_secs * 1000;
  ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create(so));
  server->Join();
  return absl::OkStatus();
}

StatusOr<EvalResult> TrainAndEvaluate(Estimator& est, const TrainSpec& train_spec, const EvalSpec& eval_spec) {
  const RunConfig& c = est.config();
  const std::string type = c.task_type();
  if (type == "ps") {
    RETURN_IF_ERROR(RunParameterServer(c));
    return EvalResult();
  }
  if (type == "evaluator") return RunEvaluator(est, train_spec, eval_spec);
  TrainOptions to;
  to.max_steps = train_spec.max_steps;
  to.hooks = train_spec.hooks;
  RETURN_IF_ERROR(est.Train(train_spec.input_fn, to));
  if (c.distributed()) {
    if (c.is_chief()) RETURN_IF_ERROR(est.NotifyJobComplete());
    return EvalResult();
  }
  EvalOptions eo;
  eo.steps = eval_spec.steps;
  eo.hooks = eval_spec.hooks;
  return est.Evaluate(eval_spec.input_fn, eo);
}

}  // namespace dflow::estimator
