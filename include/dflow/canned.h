// The networks and model functions of TensorFlow's canned estimators: DNNClassifier,
// DNNRegressor, LinearClassifier and LinearRegressor, as ModelFns (dflow/model_fn.h) that an
// estimator's train/evaluate/predict loop calls, with TensorFlow's defaults and variable names.
//
//   namespace est = dflow::estimator;
//   est::DNNOptions opts;
//   opts.hidden_units = {10, 10};
//   opts.feature_columns = {feature_column::NumericColumn("x", {4})};
//   est::ModelFn model_fn = est::DNNClassifierModelFn(opts, /*n_classes=*/3);
//   auto spec = model_fn(root, features, labels, est::ModeKeys::kTrain, {});
//   for (...) session.Run(feeds, {}, {spec->train_op});
//
// Variables (all in the global collections; trainable but the global step):
//   DNN:    dnn/input_from_feature_columns/input_layer/<column>/embedding_weights (embeddings),
//           dnn/hiddenlayer_<i>/kernel [in, units_i], dnn/hiddenlayer_<i>/bias [units_i],
//           dnn/logits/kernel, dnn/logits/bias; kernels Glorot-uniform, biases zero (TensorFlow's
//           dense layers).
//   Linear: linear/linear_model/<column>/weights, linear/linear_model/bias_weights, zero.
//   Both:   global_step (GetOrCreateGlobalStep), the optimizer's slots
//           ("dnn/hiddenlayer_0/kernel/Adagrad", ...).
// Errors of building (bad options, feature columns, features or labels) come back as the
// model function's status.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dflow/model_fn.h"

namespace dflow::estimator {

// An activation of the hidden layers.
using ActivationFn = std::function<Output(const Scope& scope, const Output& x)>;

struct DNNOptions {
  std::vector<int64_t> hidden_units;                    // one entry per hidden layer, each >= 1
  std::vector<feature_column::Column> feature_columns;  // dense columns
  ActivationFn activation_fn;                           // empty: Relu
  // The probability of dropping a hidden unit's output, applied after each hidden layer's
  // activation in TRAIN mode only; 0 (the default) for none. In [0, 1).
  double dropout = 0;
  int64_t dropout_seed = 0;  // 0: the graph seed rule
  OptimizerFn optimizer;     // empty: Adagrad with learning rate 0.05 (TensorFlow's default)
  LossReduction loss_reduction = LossReduction::kSumOverBatchSize;
};

struct LinearOptions {
  std::vector<feature_column::Column> feature_columns;  // dense or categorical columns
  std::string sparse_combiner = "sum";                  // "sum", "mean" or "sqrtn"
  // Empty: FTRL with learning rate min(0.2, 1 / sqrt(number of feature columns)) (TensorFlow's).
  OptimizerFn optimizer;
  LossReduction loss_reduction = LossReduction::kSumOverBatchSize;
};

// The DNN's logits [batch, logits_dimension], built under "dnn/": the input layer of the
// feature columns, the hidden layers (matmul, bias, activation, dropout in TRAIN) and a linear
// logits layer. Errors are returned.
StatusOr<Output> DNNLogits(const Scope& scope, const feature_column::Features& features, const DNNOptions& options,
                           int64_t logits_dimension, ModeKeys mode);

// The linear model's logits [batch, logits_dimension], built under "linear/".
StatusOr<Output> LinearLogits(const Scope& scope, const feature_column::Features& features,
                              const LinearOptions& options, int64_t logits_dimension);

// TensorFlow's default optimizers: Adagrad(0.05) for DNNs; FTRL with learning rate
// min(0.2, 1 / sqrt(num_feature_columns)) for linear models.
std::unique_ptr<train::Optimizer> DefaultDNNOptimizer();
std::unique_ptr<train::Optimizer> DefaultLinearOptimizer(size_t num_feature_columns);

// The canned model functions: network logits through the head of the task. n_classes 2 uses
// BinaryClassHead, more MultiClassHead; the regressors RegressionHead(label_dimension).
ModelFn DNNClassifierModelFn(DNNOptions options, int64_t n_classes = 2);
ModelFn DNNRegressorModelFn(DNNOptions options, int64_t label_dimension = 1);
ModelFn LinearClassifierModelFn(LinearOptions options, int64_t n_classes = 2);
ModelFn LinearRegressorModelFn(LinearOptions options, int64_t label_dimension = 1);

// Any network whose logits fit the head: the model function that builds `logits_fn`'s logits
// and the head's spec, with `optimizer` (TRAIN).
using LogitsFn = std::function<StatusOr<Output>(const Scope& scope, const feature_column::Features& features,
                                                ModeKeys mode, int64_t logits_dimension)>;
ModelFn MakeModelFn(LogitsFn logits_fn, std::shared_ptr<const Head> head, OptimizerFn optimizer);

}  // namespace dflow::estimator
