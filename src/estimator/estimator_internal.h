// Pieces of the Estimator shared by its files and its tests: how an input function becomes graph
// tensors, the progress hook, and reading results and checkpoints.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/logging.h"
#include "base/status.h"
#include "dflow/estimator.h"
#include "dflow/monitored_session.h"

namespace dflow::estimator {

// An input function's tensors in one graph: features, labels (invalid when there are none) and,
// for a dataset, the initializer of its iterator (to run as part of the local init op).
struct BuiltInput {
  feature_column::Features features;
  Output labels;
  Operation initializer;
};

// Calls input_fn in `scope`; a dataset is read through an initializable iterator shared under
// `iterator_name`. InvalidArgument for an empty function, no features, or more than one unnamed
// dataset component.
StatusOr<BuiltInput> BuildInput(const Scope& scope, const InputFn& input_fn, const std::string& iterator_name);

// Writes "step N: loss = X (Y steps/sec)" at the first step and then whenever the global step has
// advanced by every_n_steps since the last line (the rate counts every worker's steps). `log`
// empty: LOG(INFO). `step_after_train` is the global step read after the train op (a plain read
// fetched with the step may see it before or after the increment). Keeps the last step it saw.
class ProgressHook : public train::SessionRunHook {
 public:
  ProgressHook(Output loss, Output step_after_train, int64_t every_n_steps,
               std::function<void(const std::string&)> log);
  StatusOr<train::SessionRunArgs> BeforeRun(train::SessionRunContext* ctx) override;
  Status AfterRun(train::SessionRunContext* ctx, const train::SessionRunValues& values) override;
  int64_t last_global_step() const { return last_step_; }
  float last_loss() const { return last_loss_; }
  // Writes a line where the progress lines go.
  void Log(const std::string& line) const;

 private:
  Output loss_, global_step_;
  int64_t every_;
  std::function<void(const std::string&)> log_;
  int64_t last_step_ = 0;
  float last_loss_ = 0;
  std::optional<int64_t> printed_step_;
  std::chrono::steady_clock::time_point printed_time_;
};

// The training session of one Train call, ready for its steps (the Estimator's loop, and the
// benchmark of a training step, run it).
struct TrainingRun {
  Scope root = Scope::NewRootScope();
  Output global_step, loss;
  Operation train_op;
  std::shared_ptr<ProgressHook> progress;
  // Null when there is nothing to train (max_steps reached, or the job ended before this worker
  // joined); skipped_at is then the global step found.
  std::unique_ptr<train::MonitoredSession> session;
  int64_t skipped_at = 0;
};

struct EstimatorAccess {
  // Everything Train does before its loop: checks the options, builds the TRAIN graph and creates
  // the MonitoredTrainingSession (restoring model_dir's latest checkpoint).
  static StatusOr<std::unique_ptr<TrainingRun>> StartTraining(Estimator& e, const InputFn& input_fn,
                                                              const TrainOptions& options);
};

// The global step saved in the latest checkpoint of `dir`; nothing when there is no checkpoint
// or it has no "global_step". DataLoss / NotFound for a damaged or missing checkpoint file.
StatusOr<std::optional<int64_t>> CheckpointGlobalStep(const std::string& dir);

// A one-element number tensor (float, double, int32, int64, bool) as a double; InvalidArgument
// naming the metric otherwise.
StatusOr<double> ScalarAsDouble(const Tensor& t, const std::string& name);

// "accuracy = 0.967, average_loss = 0.07, global_step = 1000"
std::string FormatEvalResult(const EvalResult& result);

// Appends one Prediction per row of the batch: key i -> row of tensors[i]. Every tensor must have
// a batch dimension of the same size (InvalidArgument naming the keys otherwise).
Status SplitBatch(const std::vector<std::string>& keys, const std::vector<Tensor>& tensors,
                  std::vector<Prediction>* out);

}  // namespace dflow::estimator
