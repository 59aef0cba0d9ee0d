// Estimators: TensorFlow's tf.estimator — a model function plus a RunConfig, with
// train / evaluate / predict driven by input functions, on one process or as one task of a
// cluster.
//
//   namespace est = dflow::estimator;
//   namespace fc = dflow::feature_column;
//   est::DNNClassifierOptions o;
//   o.hidden_units = {10, 10};
//   o.feature_columns = {fc::NumericColumn("SepalLength"), ...};
//   o.n_classes = 3;
//   est::DNNClassifier classifier(o, est::RunConfig());            // a fresh temporary model_dir
//   auto train_input = [&](const Scope& s) -> StatusOr<est::InputFnResult> {
//     return data::Dataset::Csv(s, "iris_training.csv", ...).Shuffle(1000).Repeat().Batch(100);
//   };
//   Status st = classifier.Train(train_input, {.steps = 1000});
//   auto metrics = classifier.Evaluate(eval_input);     // {"accuracy": 0.967, "loss": .., "global_step": 1000}
//   auto predictions = classifier.Predict(predict_input);   // one map per example: class_ids, probabilities, logits
//
// Graphs and checkpoints. Every call builds a fresh graph for its mode (TRAIN, EVAL, PREDICT), as
// TensorFlow does: the global step, then the input function's tensors, then the model function.
// Weights travel between the calls through V2 checkpoints in model_dir: Train restores the latest
// checkpoint (so training resumes where an earlier Train, or an earlier process, stopped) and
// saves as RunConfig says and at the end; Evaluate and Predict restore the latest checkpoint (or a
// given one). Without a checkpoint, Evaluate and Predict run on freshly initialized weights and
// log a warning (TensorFlow's behaviour). Evaluate with steps = 0 reads its input to the end: an
// input that repeats forever needs `steps`.
//
// Input functions return a dataset (its named components are the features, its one unnamed
// component, if any, the labels) or tensors (features and labels). Datasets are read through an
// initializable iterator that the session's local init op (re)starts. Training ends at the step
// limit or when the input ends (OutOfRange); evaluation ends when the input ends or after
// `steps` batches; prediction when the input ends.
//
// On a cluster (RunConfig from TF_CONFIG or the four cluster flags) a chief or worker task starts
// its own Server on its first Train, places the variables on the ps tasks
// (train::ReplicaDeviceSetter) and the rest of the step on itself, and trains through
// MonitoredTrainingSession on its server: the chief initializes or restores the model and writes
// checkpoints and summaries to model_dir (which the ps tasks must see: a shared file system);
// the other workers wait for the model. Evaluate and Predict always run in this process, from
// the checkpoint. When the chief calls NotifyJobComplete, every task of the cluster stops (the ps
// tasks' `dflow server` exits 0); a worker whose training is cut short that way ends Train
// normally.
//
// Errors: building errors of the input or model function, and bad options, are returned by the
// call (InvalidArgument naming what is wrong); so are the errors of a step (with their node) and
// of checkpoints (NotFound, DataLoss naming the file). Thread-safety: an Estimator is used by one
// thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dflow/canned.h"
#include "dflow/dataset.h"
#include "dflow/model_fn.h"
#include "dflow/cluster.h"
#include "dflow/session_run_hook.h"

namespace dflow {
class Server;
}

namespace dflow::estimator {

struct EstimatorAccess;

// Where and how an estimator runs (TensorFlow's tf.estimator.RunConfig).
struct RunConfig {
  // Checkpoints and summaries. Empty: a fresh temporary directory per estimator, removed with it.
  std::string model_dir;
  // The graph-level random seed of every graph the estimator builds (Scope::SetRandomSeed); 0:
  // none (weights and shuffles differ from run to run). With a seed, single-process training is
  // reproducible.
  int64_t tf_random_seed = 0;
  // The chief saves a checkpoint every save_checkpoints_steps steps when that is > 0, else every
  // save_checkpoints_secs seconds; and always when training ends.
  int64_t save_checkpoints_steps = 0;
  int64_t save_checkpoints_secs = 600;
  // How many recent checkpoints to keep (older ones are deleted).
  int keep_checkpoint_max = 5;
  // The chief writes summaries (the graph, every summary op, global_step/sec) to model_dir every
  // this many steps; <= 0: none.
  int64_t save_summary_steps = 100;
  // A progress line "step N: loss = X (Y steps/sec)" every this many global steps while
  // training; <= 0: none.
  int64_t log_step_count_steps = 100;
  // Where progress lines go; empty: the log at info level (DFLOW_LOG_LEVEL=0).
  std::function<void(const std::string&)> log;

  // The task this process is, in its cluster; empty: training in this process.
  std::optional<TaskConfig> task;
  // How long a new session waits for the other tasks, and a worker for the chief's model.
  int64_t startup_wait_secs = 60;
  int64_t max_wait_secs = 600;

  bool distributed() const { return task.has_value(); }
  bool is_chief() const { return !task || task->is_chief; }
  // "worker", "chief", "ps", "evaluator" ("" for a local run) and its index.
  std::string task_type() const { return task ? task->job_name : ""; }
  int task_id() const { return task ? task->task_index : 0; }
  int num_ps_replicas() const { return task ? task->cluster.num_tasks("ps") : 0; }
  int num_worker_replicas() const;

  // The cluster from command-line arguments (--ps_hosts, --worker_hosts, --job_name,
  // --task_index), or else from TF_CONFIG's JSON (`tf_config`; empty when unset); neither: a
  // local config. Arguments it does not know go to *rest (may be null). InvalidArgument naming
  // the flag or what is malformed.
  static StatusOr<RunConfig> FromArgs(const std::vector<std::string>& args, const std::string& tf_config,
                                      std::vector<std::string>* rest);
  // From the TF_CONFIG environment variable (a local config when it is unset).
  static StatusOr<RunConfig> FromEnvironment();
};

// What an input function gives: features (and labels), or a dataset of them.
struct InputFnResult {
  InputFnResult(data::Dataset dataset) : dataset(std::move(dataset)) {}       // NOLINT: the common case
  InputFnResult(feature_column::Features features, Output labels = Output())  // NOLINT
      : features(std::move(features)), labels(labels) {}
  std::optional<data::Dataset> dataset;
  feature_column::Features features;
  Output labels;
};
// Builds the input of one graph in `scope` (the estimator's graph, with its device). Called once
// per Train / Evaluate / Predict.
using InputFn = std::function<StatusOr<InputFnResult>(const Scope& scope)>;

struct TrainOptions {
  // Train this many steps more (from where the checkpoint is) or up to global step max_steps; at
  // most one of them > 0 (InvalidArgument otherwise). Neither: until the input ends. When the
  // latest checkpoint is already at max_steps, Train does nothing.
  int64_t steps = 0;
  int64_t max_steps = 0;
  std::vector<std::shared_ptr<train::SessionRunHook>> hooks;
  std::vector<std::shared_ptr<train::SessionRunHook>> chief_only_hooks;
};

struct EvalOptions {
  // Batches to evaluate; 0: until the input ends.
  int64_t steps = 0;
  // The metrics are also written (as scalars at the checkpoint's global step) to an event file
  // in model_dir/eval, or model_dir/eval_<name>, for TensorBoard.
  std::string name;
  // A checkpoint prefix to evaluate; empty: the latest in model_dir.
  std::string checkpoint_path;
  std::vector<std::shared_ptr<train::SessionRunHook>> hooks;
};

// Metric name -> value: the model's metrics ("accuracy", "average_loss", "loss", ...) and
// "global_step" (of the checkpoint evaluated).
using EvalResult = std::map<std::string, double>;

struct PredictOptions {
  // The prediction keys to return ("class_ids", "probabilities", ...); empty: all.
  std::vector<std::string> predict_keys;
  // Predictions are returned all at once, so an input that repeats forever must not run
  // forever: more examples than this is InvalidArgument.
  int64_t max_examples = int64_t{1} << 24;
  std::string checkpoint_path;  // empty: the latest in model_dir
  std::vector<std::shared_ptr<train::SessionRunHook>> hooks;
};

// One example's predictions: key -> that example's row of the prediction tensor.
using Prediction = std::map<std::string, Tensor>;

// What a serving input function builds (TensorFlow's ServingInputReceiver): the features the
// model_fn receives and the tensors a client feeds (the signatures' inputs: "examples", the
// serialized tf.Examples a parsing receiver parses into the features).
struct ServingInputReceiver {
  feature_column::Features features;
  std::map<std::string, Output> receiver_tensors;
};
using ServingInputReceiverFn = std::function<StatusOr<ServingInputReceiver>(const Scope& scope)>;

struct ExportOptions {
  std::string checkpoint_path;  // empty: the latest in model_dir
  bool as_text = false;         // saved_model.pbtxt instead of saved_model.pb
};

class Estimator {
 public:
  // `model_fn` builds each mode's graph (see dflow/model_fn.h); `params` is handed to it.
  Estimator(ModelFn model_fn, RunConfig config = RunConfig(), Params params = Params());
  virtual ~Estimator();
  Estimator(const Estimator&) = delete;
  Estimator& operator=(const Estimator&) = delete;

  Status Train(const InputFn& input_fn, const TrainOptions& options = TrainOptions());
  StatusOr<EvalResult> Evaluate(const InputFn& input_fn, const EvalOptions& options = EvalOptions());
  StatusOr<std::vector<Prediction>> Predict(const InputFn& input_fn, const PredictOptions& options = PredictOptions());
  // TensorFlow's export_saved_model: builds the PREDICT graph on the receiver's features,
  // restores the checkpoint and writes a SavedModel (tag "serve") to export_dir_base/<seconds
  // since the epoch>, whose path it returns. Signatures as TensorFlow's canned heads make them:
  // a classifier's "serving_default" and "classification" (classify: serialized examples
  // "inputs" -> "classes", "scores"; only when the receiver has one string tensor), a binary
  // classifier's "regression", a regressor's regress signatures, and "predict" (the receiver
  // tensors -> every prediction); a custom model_fn's predictions as "serving_default".
  // FailedPrecondition without a checkpoint.
  StatusOr<std::string> ExportSavedModel(const std::string& export_dir_base, const ServingInputReceiverFn& input_fn,
                                         const ExportOptions& options = ExportOptions());

  // The latest checkpoint in model_dir ("" when there is none).
  StatusOr<std::string> LatestCheckpoint() const;
  // model_dir (the temporary one when none was configured; "" when it could not be made).
  const std::string& model_dir() const { return model_dir_; }
  const RunConfig& config() const { return config_; }
  // The global step of the last Train call's final step (0 before).
  int64_t global_step() const { return global_step_; }

  // On a cluster: this task's server (started by the first Train; null before, and locally).
  Server* server() const { return server_.get(); }
  // The chief tells every task of the cluster that the job is complete (dflow/server.h);
  // nothing to do locally. FailedPrecondition before the server started.
  Status NotifyJobComplete();

 private:
  friend struct EstimatorAccess;
  Status StartServer();
  Status status_;  // a failure of the constructor (the temporary model_dir)
  ModelFn model_fn_;
  RunConfig config_;
  Params params_;
  std::string model_dir_;
  bool owns_model_dir_ = false;
  std::unique_ptr<Server> server_;
  int64_t global_step_ = 0;
  int64_t calls_ = 0;  // makes iterator names unique per graph on a server
};

// ---- canned estimators (dflow/canned.h) ----

struct DNNClassifierOptions : DNNOptions {
  int64_t n_classes = 2;
};
struct DNNRegressorOptions : DNNOptions {
  int64_t label_dimension = 1;
};
struct LinearClassifierOptions : LinearOptions {
  int64_t n_classes = 2;
};
struct LinearRegressorOptions : LinearOptions {
  int64_t label_dimension = 1;
};

// Bad options (no hidden units, no feature columns, n_classes < 2) are returned by the first call.
class DNNClassifier : public Estimator {
 public:
  explicit DNNClassifier(const DNNClassifierOptions& options, RunConfig config = RunConfig());
};
class DNNRegressor : public Estimator {
 public:
  explicit DNNRegressor(const DNNRegressorOptions& options, RunConfig config = RunConfig());
};
class LinearClassifier : public Estimator {
 public:
  explicit LinearClassifier(const LinearClassifierOptions& options, RunConfig config = RunConfig());
};
class LinearRegressor : public Estimator {
 public:
  explicit LinearRegressor(const LinearRegressorOptions& options, RunConfig config = RunConfig());
};

// ---- train_and_evaluate ----

struct TrainSpec {
  InputFn input_fn;
  int64_t max_steps = 0;  // 0: until the input ends
  std::vector<std::shared_ptr<train::SessionRunHook>> hooks;
};

struct EvalSpec {
  InputFn input_fn;
  int64_t steps = 0;  // batches per evaluation; 0: until the input ends
  // The evaluator checks model_dir for a new checkpoint this often, and gives up
  // (DeadlineExceeded) when none came for checkpoint_timeout_secs.
  int64_t throttle_secs = 1;
  int64_t checkpoint_timeout_secs = 600;
  std::vector<std::shared_ptr<train::SessionRunHook>> hooks;
};

// TensorFlow's train_and_evaluate, by the task this process is (RunConfig::task):
// - local: Train to max_steps, then Evaluate; returns the evaluation;
// - chief / worker: Train on the cluster; the chief then tells the cluster the job is complete
//   (NotifyJobComplete); returns an empty result;
// - ps: serves until the job is complete; returns an empty result;
// - evaluator: evaluates each new checkpoint in model_dir (which must be given) until one at
//   max_steps; returns the last evaluation.
StatusOr<EvalResult> TrainAndEvaluate(Estimator& estimator, const TrainSpec& train_spec, const EvalSpec& eval_spec);

// What a ps task of an estimator job does: serves its variables until the job is complete (the
// chief's NotifyJobComplete). FailedPrecondition when `config` is not a ps task.
Status RunParameterServer(const RunConfig& config);

}  // namespace dflow::estimator
