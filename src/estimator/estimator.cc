// Estimator: train / evaluate / predict, each in a fresh graph, with weights carried by the
// checkpoints of model_dir.
#include "dflow/estimator.h"

#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/env.h"
#include "base/logging.h"
#include "dflow/basic_session_run_hooks.h"
#include "dflow/monitored_session.h"
#include "dflow/lookup_ops.h"
#include "dflow/ops.h"
#include "dflow/replica_device_setter.h"
#include "dflow/saver.h"
#include "dflow/server.h"
#include "dflow/summary.h"
#include "estimator/estimator_internal.h"
#include "graph/graph.h"

namespace dflow::estimator {
namespace {

using Clock = std::chrono::steady_clock;

// Makes a fresh directory for an estimator without a model_dir.
StatusOr<std::string> MakeTempModelDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = absl::StrCat(base != nullptr && *base != '\0' ? base : "/tmp", "/dflow_model_XXXXXX");
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    return errors::Internal("Estimator: could not make a temporary model_dir ", tmpl, ": ", std::strerror(errno));
  }
  return std::string(buf.data());
}

std::string Absolute(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(dir, ec);
  return ec ? dir : p.lexically_normal().string();
}

// The device of this task's computation: "/job:worker/task:1".
std::string WorkerDevice(const RunConfig& c) { return absl::StrCat("/job:", c.task_type(), "/task:", c.task_id()); }

// Opens a session for evaluation or prediction: restores `checkpoint` (or initializes the model
// when it is empty), then runs the local init op (metrics, the input iterator).
class RestoringSessionCreator : public train::SessionCreator {
 public:
  RestoringSessionCreator(const Scope& scope, train::Saver saver, std::string checkpoint, Operation init,
                          Operation local_init)
      : scope_(scope),
        saver_(std::move(saver)),
        checkpoint_(std::move(checkpoint)),
        init_(init),
        local_init_(local_init) {}

  StatusOr<std::unique_ptr<ClientSession>> CreateSession() override {
    auto session = std::make_unique<ClientSession>(scope_);
    if (!checkpoint_.empty()) {
      RETURN_IF_ERROR(saver_.Restore(*session, checkpoint_));
    } else {
      RETURN_IF_ERROR(session->Run({init_}));
    }
    if (local_init_.valid()) RETURN_IF_ERROR(session->Run({local_init_}));
    return session;
  }

 private:
  Scope scope_;
  train::Saver saver_;
  std::string checkpoint_;
  Operation init_, local_init_;
};

// The checkpoint an evaluation or prediction reads: the one asked for, else the latest in
// model_dir, else none (the model is initialized, with a warning).
StatusOr<std::string> CheckpointToRead(const std::string& asked, const std::string& model_dir, const char* what) {
  if (!asked.empty()) {
    if (!train::CheckpointExists(asked)) {
      return errors::NotFound("The checkpoint to ", what, " does not exist: ", asked, ".index is missing");
    }
    return asked;
  }
  StatusOr<std::string> latest = train::LatestCheckpoint(model_dir);
  if (latest.ok()) return latest;
  if (!absl::IsNotFound(latest.status())) return latest.status();
  LOG(WARNING) << "Could not find trained model in model_dir: " << model_dir << ", running initialization to " << what
               << ".";
  return std::string();
}

// The op that initializes a graph's local state: the input iterator and the local variables
// (metrics). Invalid when there is none.
Operation LocalInitOp(const Scope& root, const BuiltInput& in) {
  std::vector<Operation> local;
  if (in.initializer.valid()) local.push_back(in.initializer);
  if (!LocalVariables(root).empty()) local.push_back(LocalVariablesInitializer(root));
  for (const Operation& t : TableInitializers(root)) local.push_back(t);  // as TensorFlow's Scaffold
  return local.empty() ? Operation() : ops::Group(root.WithOpName("local_init"), local);
}

// The session of an evaluation or prediction over the finished graph `root`: `checkpoint`
// restored (or the model initialized when it is empty), then the local state initialized.
StatusOr<std::unique_ptr<train::MonitoredSession>> OpenRestoringSession(
    const Scope& root, const BuiltInput& in, const std::string& checkpoint,
    const std::vector<std::shared_ptr<train::SessionRunHook>>& hooks) {
  Operation init = GlobalVariablesInitializer(root);
  Operation local_init = LocalInitOp(root, in);
  train::Saver saver(root);
  RETURN_IF_ERROR(root.status());
  auto creator = std::make_unique<RestoringSessionCreator>(root, saver, checkpoint, init, local_init);
  return train::MonitoredSession::Create(std::move(creator), hooks);
}

}  // namespace

// ---- input ----

StatusOr<BuiltInput> BuildInput(const Scope& scope, const InputFn& input_fn, const std::string& iterator_name) {
  if (!input_fn) return errors::InvalidArgument("Estimator: input_fn is empty");
  ASSIGN_OR_RETURN(InputFnResult result, input_fn(scope));
  RETURN_IF_ERROR(scope.status());
  BuiltInput in;
  if (!result.dataset.has_value()) {
    in.features = std::move(result.features);
    in.labels = result.labels;
    if (in.features.empty()) return errors::InvalidArgument("Estimator: input_fn returned no features");
    return in;
  }
  const data::Dataset& ds = *result.dataset;
  if (!ds.ok()) return errors::InvalidArgument("Estimator: input_fn returned an invalid dataset");
  // An initializable iterator with a name of its own: on a server, resources are shared by name,
  // and a later call must not find the iterator an earlier graph used up.
  data::Iterator it = ds.MakeInitializableIterator(iterator_name);
  data::Element next = it.GetNext();
  RETURN_IF_ERROR(scope.status());
  in.features = next.Named();
  std::vector<Output> unnamed = next.Unnamed();
  if (in.features.empty()) {
    return errors::InvalidArgument(
        "Estimator: the input_fn's dataset has no named components: its elements must be the features by name "
        "(Dataset::FromTensorSlices of a map, or CsvOptions::column_names) and at most one unnamed label");
  }
  if (unnamed.size() > 1) {
    return errors::InvalidArgument("Estimator: the input_fn's dataset has ", unnamed.size(),
                                   " unnamed components; it may have one (the labels)");
  }
  if (!unnamed.empty()) in.labels = unnamed[0];
  in.initializer = it.initializer();
  return in;
}

// ---- the estimator ----

Estimator::Estimator(ModelFn model_fn, RunConfig config, Params params)
    : model_fn_(std::move(model_fn)), config_(std::move(config)), params_(std::move(params)) {
  if (!model_fn_) status_ = errors::InvalidArgument("Estimator: model_fn is empty");
  if (config_.model_dir.empty()) {
    StatusOr<std::string> dir = MakeTempModelDir();
    if (dir.ok()) {
      model_dir_ = *dir;
      owns_model_dir_ = true;
    } else if (status_.ok()) {
      status_ = dir.status();
    }
  } else {
    model_dir_ = Absolute(config_.model_dir);
  }
}

Estimator::~Estimator() {
  server_.reset();
  if (owns_model_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(model_dir_, ec);
  }
}

StatusOr<std::string> Estimator::LatestCheckpoint() const {
  RETURN_IF_ERROR(status_);
  StatusOr<std::string> latest = train::LatestCheckpoint(model_dir_);
  if (absl::IsNotFound(latest.status())) return std::string();
  return latest;
}

Status Estimator::StartServer() {
  if (server_ != nullptr) return absl::OkStatus();
  ServerOptions so;
  so.cluster = config_.task->cluster;
  so.job_name = config_.task->job_name;
  so.task_index = config_.task->task_index;
  so.startup_wait_ms = config_.startup_wait_secs * 1000;
  ASSIGN_OR_RETURN(server_, Server::Create(so));
  return absl::OkStatus();
}

Status Estimator::NotifyJobComplete() {
  if (!config_.distributed()) return absl::OkStatus();
  if (server_ == nullptr) return errors::FailedPrecondition("NotifyJobComplete: this task's server has not started");
  return server_->NotifyJobComplete();
}

StatusOr<std::unique_ptr<TrainingRun>> EstimatorAccess::StartTraining(Estimator& e, const InputFn& input_fn,
                                                                      const TrainOptions& options) {
  RETURN_IF_ERROR(e.status_);
  const RunConfig& config = e.config_;
  if (options.steps > 0 && options.max_steps > 0) {
    return errors::InvalidArgument("Can not provide both steps and max_steps.");
  }
  if (options.steps < 0) return errors::InvalidArgument("Must specify steps > 0, given: ", options.steps);
  if (options.max_steps < 0) return errors::InvalidArgument("Must specify max_steps > 0, given: ", options.max_steps);
  const std::string type = config.task_type();
  if (type == "ps" || type == "evaluator") {
    return errors::InvalidArgument("Train on a '", type, "' task: only chief and worker tasks train");
  }
  auto run = std::make_unique<TrainingRun>();
  if (options.max_steps > 0 && config.is_chief()) {
    ASSIGN_OR_RETURN(std::optional<int64_t> at, CheckpointGlobalStep(e.model_dir_));
    if (at.has_value() && *at >= options.max_steps) {
      LOG(INFO) << "Skipping training since max_steps has already saved (global step " << *at << ").";
      run->skipped_at = *at;
      return run;
    }
  }
  RETURN_IF_ERROR(Env::Default()->CreateDirs(e.model_dir_));
  if (config.distributed()) RETURN_IF_ERROR(e.StartServer());

  Scope root = run->root;
  if (config.tf_random_seed != 0) root.SetRandomSeed(config.tf_random_seed);
  Scope scope = root;
  if (config.distributed()) {
    scope = config.num_ps_replicas() > 0
                ? root.WithDeviceFunction(train::ReplicaDeviceSetter(config.num_ps_replicas(), WorkerDevice(config)))
                : root.WithDevice(WorkerDevice(config));
  }
  Output global_step = GetOrCreateGlobalStep(scope);
  RETURN_IF_ERROR(root.status());
  ASSIGN_OR_RETURN(BuiltInput in, BuildInput(scope, input_fn, absl::StrCat("train_input_", ++e.calls_)));
  if (!in.initializer.valid() && options.steps == 0 && options.max_steps == 0) {
    return errors::InvalidArgument(
        "Estimator: training on an input_fn that returns tensors (not a dataset) never ends by itself; give steps "
        "or max_steps");
  }
  ASSIGN_OR_RETURN(EstimatorSpec spec, e.model_fn_(scope, in.features, in.labels, ModeKeys::kTrain, e.params_));
  if (!spec.train_op.valid() || !spec.loss.valid()) {
    return errors::InvalidArgument("Estimator: the model_fn's TRAIN spec needs a train_op and a loss");
  }
  run->train_op = spec.train_op;
  run->loss = spec.loss;
  run->global_step = global_step;

  train::MonitoredTrainingSessionOptions mts;
  mts.scaffold.local_init_op = LocalInitOp(root, in);
  train::SaverOptions so;
  so.sharded = config.distributed();
  so.max_to_keep = config.keep_checkpoint_max;
  mts.scaffold.saver = train::NewSaver(train::Saver(root, so));
  RETURN_IF_ERROR(root.status());

  mts.is_chief = config.is_chief();
  mts.checkpoint_dir = e.model_dir_;
  mts.save_checkpoint_steps = config.save_checkpoints_steps;
  mts.save_checkpoint_secs = config.save_checkpoints_steps > 0 ? 0 : config.save_checkpoints_secs;
  mts.save_summaries_steps = config.save_summary_steps;
  mts.log_step_count_steps = config.log_step_count_steps;
  mts.global_step = global_step;
  mts.max_wait_secs = config.max_wait_secs;
  if (config.distributed()) {
    mts.master = e.server_->target();
    // This worker's session involves the ps tasks and itself only.
    mts.config.device_filters = {"/job:ps", WorkerDevice(config)};
    // Once the chief completed the job the ps tasks are gone on purpose: a failing step is the
    // end of training, not something to recover from.
    Server* server = e.server_.get();
    mts.recovery.job_complete = [server] { return server->job_complete(); };
  }
  // Read where the global step lives: a read elsewhere would receive the value the step started
  // with, whatever its control dependencies.
  Output step_after = ops::Identity(root.WithDevice(global_step.node()->requested_device())
                                        .WithControlDependencies({spec.train_op})
                                        .WithOpName("global_step_after_train"),
                                    global_step);
  RETURN_IF_ERROR(root.status());
  run->progress = std::make_shared<ProgressHook>(spec.loss, step_after, config.log_step_count_steps, config.log);
  if (options.steps > 0 || options.max_steps > 0) {
    mts.hooks.push_back(std::make_shared<train::StopAtStepHook>(global_step, options.steps, options.max_steps));
  }
  mts.hooks.push_back(std::make_shared<train::NanTensorHook>(spec.loss));
  mts.hooks.push_back(run->progress);
  for (const auto& h : options.hooks) mts.hooks.push_back(h);
  mts.chief_only_hooks = options.chief_only_hooks;

  StatusOr<std::unique_ptr<train::MonitoredSession>> session = train::MonitoredTrainingSession(root, mts);
  if (!session.ok()) {
    // A worker that comes up after the chief ended the job has nothing left to do.
    if (absl::IsOutOfRange(session.status()) && !config.is_chief()) {
      LOG(INFO) << "Training ended before this worker joined: " << session.status().message();
      run->skipped_at = 0;
      return run;
    }
    return session.status();
  }
  run->session = *std::move(session);
  return run;
}

Status Estimator::Train(const InputFn& input_fn, const TrainOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<TrainingRun> run, EstimatorAccess::StartTraining(*this, input_fn, options));
  if (run->session == nullptr) {  // nothing to train
    global_step_ = std::max(global_step_, run->skipped_at);
    return absl::OkStatus();
  }
  train::MonitoredSession& sess = *run->session;
  while (!sess.ShouldStop()) {
    StatusOr<std::vector<Tensor>> r = sess.Run({}, {}, {run->train_op});
    if (!r.ok()) {
      if (absl::IsOutOfRange(r.status())) break;  // the input ended, or the job is complete
      return r.status();
    }
  }
  global_step_ = run->progress->last_global_step();
  if (config_.log_step_count_steps > 0 && global_step_ > 0) {
    run->progress->Log(absl::StrFormat("Loss for final step: %.6g.", run->progress->last_loss()));
  }
  Status closed = sess.Close();
  if (absl::IsOutOfRange(closed)) return absl::OkStatus();
  return closed;
}

StatusOr<EvalResult> Estimator::Evaluate(const InputFn& input_fn, const EvalOptions& options) {
  RETURN_IF_ERROR(status_);
  if (options.steps < 0) return errors::InvalidArgument("Must specify steps > 0, given: ", options.steps);
  ASSIGN_OR_RETURN(std::string checkpoint, CheckpointToRead(options.checkpoint_path, model_dir_, "evaluate"));
  Scope root = Scope::NewRootScope();
  if (config_.tf_random_seed != 0) root.SetRandomSeed(config_.tf_random_seed);
  Output global_step = GetOrCreateGlobalStep(root);
  RETURN_IF_ERROR(root.status());
  ASSIGN_OR_RETURN(BuiltInput in, BuildInput(root, input_fn, absl::StrCat("eval_input_", ++calls_)));
  ASSIGN_OR_RETURN(EstimatorSpec spec, model_fn_(root, in.features, in.labels, ModeKeys::kEval, params_));
  std::vector<std::string> names;
  std::vector<Output> updates, values;
  for (const auto& [name, metric] : spec.eval_metric_ops) {
    if (!metric.update_op.valid() || !metric.value.valid()) {
      return errors::InvalidArgument("Estimator: the model_fn's eval metric '", name, "' is invalid");
    }
    if (name == "global_step") {
      return errors::InvalidArgument("Estimator: an eval metric may not be named 'global_step'");
    }
    names.push_back(name);
    updates.push_back(metric.update_op);
    values.push_back(metric.value);
  }
  if (spec.loss.valid() && spec.eval_metric_ops.count("loss") == 0) {
    // TensorFlow reports the mean of the batch losses as "loss".
    metrics::Metric loss = metrics::Mean(root.NewSubScope("metrics"), spec.loss, Output(), "loss");
    names.push_back("loss");
    updates.push_back(loss.update_op);
    values.push_back(loss.value);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<train::MonitoredSession> sess,
                   OpenRestoringSession(root, in, checkpoint, options.hooks));
  int64_t batches = 0;
  while (!sess->ShouldStop() && (options.steps == 0 || batches < options.steps)) {
    StatusOr<std::vector<Tensor>> r = sess->Run(updates);
    if (!r.ok()) {
      if (absl::IsOutOfRange(r.status())) break;
      return r.status();
    }
    ++batches;
    if (!in.initializer.valid()) break;  // tensors, not a dataset: one batch
  }
  if (sess->raw_session() == nullptr) return errors::Internal("Evaluate: the session is gone after the last batch");
  values.push_back(global_step);
  ASSIGN_OR_RETURN(std::vector<Tensor> got, sess->raw_session()->Run(values));
  RETURN_IF_ERROR(sess->Close());
  EvalResult result;
  for (size_t i = 0; i < names.size(); ++i) {
    ASSIGN_OR_RETURN(double v, ScalarAsDouble(got[i], names[i]));
    result[names[i]] = v;
  }
  result["global_step"] = static_cast<double>(got.back().scalar<int64_t>());
  // TensorFlow's eval directory: the metrics at the global step they were computed for.
  summary::FileWriter writer(JoinPath(model_dir_, options.name.empty() ? "eval" : "eval_" + options.name));
  for (size_t i = 0; i < names.size(); ++i) {
    RETURN_IF_ERROR(writer.AddScalar(names[i], result[names[i]], got.back().scalar<int64_t>()));
  }
  RETURN_IF_ERROR(writer.Close());
  LOG(INFO) << "Evaluation of " << (checkpoint.empty() ? "an initialized model" : checkpoint) << " over " << batches
            << " batches: " << FormatEvalResult(result);
  return result;
}

StatusOr<std::vector<Prediction>> Estimator::Predict(const InputFn& input_fn, const PredictOptions& options) {
  RETURN_IF_ERROR(status_);
  ASSIGN_OR_RETURN(std::string checkpoint, CheckpointToRead(options.checkpoint_path, model_dir_, "predict"));
  Scope root = Scope::NewRootScope();
  if (config_.tf_random_seed != 0) root.SetRandomSeed(config_.tf_random_seed);
  GetOrCreateGlobalStep(root);
  RETURN_IF_ERROR(root.status());
  ASSIGN_OR_RETURN(BuiltInput in, BuildInput(root, input_fn, absl::StrCat("predict_input_", ++calls_)));
  ASSIGN_OR_RETURN(EstimatorSpec spec, model_fn_(root, in.features, Output(), ModeKeys::kPredict, params_));
  std::vector<std::string> keys = options.predict_keys;
  if (keys.empty()) {
    for (const auto& [k, v] : spec.predictions) keys.push_back(k);
  }
  std::vector<Output> fetches;
  for (const std::string& k : keys) {
    auto it = spec.predictions.find(k);
    if (it == spec.predictions.end()) {
      std::vector<std::string> have;
      for (const auto& [name, v] : spec.predictions) have.push_back(name);
      return errors::InvalidArgument("Expected to run at least one output from [", absl::StrJoin(have, ", "),
                                     "], provided ", k);
    }
    fetches.push_back(it->second);
  }
  if (fetches.empty()) return errors::InvalidArgument("Estimator: the model_fn's PREDICT spec has no predictions");
  ASSIGN_OR_RETURN(std::unique_ptr<train::MonitoredSession> sess,
                   OpenRestoringSession(root, in, checkpoint, options.hooks));
  std::vector<Prediction> out;
  while (!sess->ShouldStop()) {
    StatusOr<std::vector<Tensor>> r = sess->Run(fetches);
    if (!r.ok()) {
      if (absl::IsOutOfRange(r.status())) break;
      return r.status();
    }
    RETURN_IF_ERROR(SplitBatch(keys, *r, &out));
    if (static_cast<int64_t>(out.size()) > options.max_examples) {
      return errors::InvalidArgument("Predict: the input gave more than ", options.max_examples,
                                     " examples (PredictOptions::max_examples); does it repeat forever?");
    }
    if (!in.initializer.valid()) break;  // tensors, not a dataset: one batch
  }
  RETURN_IF_ERROR(sess->Close());
  return out;
}

}  // namespace dflow::estimator
