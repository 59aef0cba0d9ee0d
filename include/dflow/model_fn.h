// What an estimator is made of: the model function contract (TensorFlow's model_fn and
// EstimatorSpec) and heads, which turn a network's logits into predictions, a loss, a train op
// and evaluation metrics (TensorFlow's canned-estimator heads).
//
//   auto head = estimator::MultiClassHead(3);
//   Output logits = ...;                                          // [batch, 3]
//   auto spec = head->CreateEstimatorSpec(root, logits, labels, estimator::ModeKeys::kTrain,
//                                         std::make_unique<train::AdagradOptimizer>(0.05).get());
//   // spec->train_op, spec->loss, spec->predictions["class_ids"], ...
//
// A model function builds one mode's graph: TRAIN (loss and train_op; predictions too), EVAL
// (loss and eval_metric_ops, whose update ops the evaluation loop runs per batch after
// LocalVariablesInitializer, then reads their values) or PREDICT (predictions only; labels are
// not needed). Variables get the same names in every mode, so a checkpoint written while
// training restores into the evaluation and prediction graphs.
//
// Errors: building errors (a bad logits or labels shape, a bad dtype, an error recorded in the
// scope before) come back as the StatusOr's status; label values that are wrong (a class id
// outside [0, n_classes)) fail the step with InvalidArgument when the graph runs.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "dflow/feature_column.h"
#include "dflow/metrics.h"
#include "dflow/train.h"

namespace dflow::estimator {

// TensorFlow's tf.estimator.ModeKeys ("train", "eval", "infer").
enum class ModeKeys { kTrain, kEval, kPredict };
const char* ModeKeyName(ModeKeys mode);

struct EstimatorSpec {
  ModeKeys mode = ModeKeys::kTrain;
  // Named prediction tensors, batch first ("class_ids", "probabilities", "logits", ...).
  std::map<std::string, Output> predictions;
  // The scalar float training loss (TRAIN and EVAL).
  Output loss;
  // Runs one optimization step and increments the global step (TRAIN).
  Operation train_op;
  // Streaming metrics by TensorFlow's keys ("accuracy", "loss", "average_loss", ...) (EVAL).
  std::map<std::string, metrics::Metric> eval_metric_ops;
};

// Hyperparameters by name (TensorFlow's `params` dict).
using Params = AttrMap;

// TensorFlow's model_fn(features, labels, mode, params): builds the mode's graph in `scope`.
// labels is an invalid Output in PREDICT mode.
using ModelFn = std::function<StatusOr<EstimatorSpec>(const Scope& scope, const feature_column::Features& features,
                                                      const Output& labels, ModeKeys mode, const Params& params)>;

// Makes a fresh optimizer for one graph (optimizers keep per-graph slots).
using OptimizerFn = std::function<std::unique_ptr<train::Optimizer>()>;

// The graph's global step: the int64 variable named "global_step" when the graph has one, else a
// new one (train::CreateGlobalStep): TensorFlow's get_or_create_global_step. Errors (a node named
// global_step that is not an int64 scalar variable) are recorded in the scope.
Output GetOrCreateGlobalStep(const Scope& scope);

// How the per-example losses become the training loss: their mean (TensorFlow 2's canned
// estimators, SUM_OVER_BATCH_SIZE: the loss does not grow with the batch) or their sum
// (TensorFlow 1's).
enum class LossReduction { kSumOverBatchSize, kSum };

class Head {
 public:
  virtual ~Head() = default;
  // The width of the logits the head expects: [batch, logits_dimension()].
  virtual int64_t logits_dimension() const = 0;
  // Builds predictions (under "head/"), and by mode the loss, the train op (`optimizer`
  // minimizing the loss over every trainable variable, incrementing the global step; TRAIN only,
  // where it must not be null) and the metrics (under "metrics/"; EVAL only).
  virtual StatusOr<EstimatorSpec> CreateEstimatorSpec(const Scope& scope, const Output& logits, const Output& labels,
                                                      ModeKeys mode, train::Optimizer* optimizer) const = 0;
};

// Softmax over n_classes >= 3 classes. labels: int32/int64 class ids [batch] or [batch, 1] in
// [0, n_classes). Per-example loss: sparse softmax cross-entropy. Predictions: "logits",
// "probabilities" (softmax), "class_ids" (int64 [batch, 1]), "classes" (class_ids as strings).
// Metrics: "accuracy", "average_loss" (mean per-example loss), "loss" (mean of the batch losses).
std::shared_ptr<const Head> MultiClassHead(int64_t n_classes,
                                           LossReduction reduction = LossReduction::kSumOverBatchSize);

// Logistic regression over two classes: logits [batch, 1]; labels 0 or 1 (any number type,
// [batch] or [batch, 1]). Per-example loss: sigmoid cross-entropy. Predictions: "logits",
// "logistic" (sigmoid), "probabilities" ([1 - p, p]), "class_ids" (logits > 0, int64 [batch, 1]),
// "classes". Metrics: "accuracy", "average_loss", "loss", "prediction/mean", "label/mean",
// "accuracy_baseline" (max(label mean, 1 - label mean)).
std::shared_ptr<const Head> BinaryClassHead(LossReduction reduction = LossReduction::kSumOverBatchSize);

// Regression of label_dimension >= 1 values: logits [batch, label_dimension]; float labels of that
// shape ([batch] when label_dimension is 1). Per-element loss: squared error. Predictions:
// "predictions". Metrics: "average_loss", "loss", "prediction/mean", "label/mean".
std::shared_ptr<const Head> RegressionHead(int64_t label_dimension = 1,
                                           LossReduction reduction = LossReduction::kSumOverBatchSize);

// MultiClassHead for n_classes >= 3, BinaryClassHead for 2 (as TensorFlow's classifiers pick);
// an error for fewer than 2.
StatusOr<std::shared_ptr<const Head>> ClassificationHead(int64_t n_classes,
                                                         LossReduction reduction = LossReduction::kSumOverBatchSize);

}  // namespace dflow::estimator
