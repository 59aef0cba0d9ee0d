// The canned estimators' networks (DNN, linear) and model functions.
#include "dflow/canned.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dflow/nn_ops.h"

namespace dflow::estimator {
namespace {

// A dense layer as TensorFlow's: kernel [in, units] Glorot-uniform, bias [units] zero, named
// "<scope>/kernel" and "<scope>/bias".
Output Dense(const Scope& s, const Output& x, int64_t in, int64_t units) {
  Variable kernel = Variable::Create(s.WithOpName("kernel"), TensorShape({in, units}), DT_FLOAT, init::GlorotUniform());
  Variable bias = Variable::Create(s.WithOpName("bias"), TensorShape({units}), DT_FLOAT, init::Zeros());
  if (!s.ok()) return Output();
  return ops::BiasAdd(s.WithOpName("BiasAdd"), ops::MatMul(s.WithOpName("MatMul"), x, kernel.read()), bias.read());
}

}  // namespace

StatusOr<Output> DNNLogits(const Scope& scope, const feature_column::Features& features, const DNNOptions& options,
                           int64_t logits_dimension, ModeKeys mode) {
  RETURN_IF_ERROR(scope.status());
  for (size_t i = 0; i < options.hidden_units.size(); ++i) {
    if (options.hidden_units[i] < 1 || options.hidden_units[i] > (int64_t{1} << 31)) {
      return errors::InvalidArgument("DNN: hidden_units[", i, "] must be positive, got ", options.hidden_units[i]);
    }
  }
  if (!(options.dropout >= 0 && options.dropout < 1)) {
    return errors::InvalidArgument("DNN: dropout must be in [0, 1), got ", options.dropout);
  }
  if (logits_dimension < 1) return errors::InvalidArgument("DNN: logits_dimension must be positive");
  Scope d = scope.NewSubScope("dnn");
  Output net = feature_column::InputLayer(d.NewSubScope("input_from_feature_columns"), features,
                                          options.feature_columns);
  RETURN_IF_ERROR(scope.status());
  int64_t in = 0;
  for (const auto& c : options.feature_columns) in += c->dense_dimension();
  for (size_t i = 0; i < options.hidden_units.size(); ++i) {
    Scope hs = d.NewSubScope(absl::StrCat("hiddenlayer_", i));
    const int64_t units = options.hidden_units[i];
    net = Dense(hs, net, in, units);
    if (!scope.ok()) return scope.status();
    net = options.activation_fn ? options.activation_fn(hs, net) : ops::Relu(hs.WithOpName("Relu"), net);
    if (options.dropout > 0 && mode == ModeKeys::kTrain) {
      net = ops::Dropout(hs, net, static_cast<float>(1.0 - options.dropout), options.dropout_seed);
    }
    RETURN_IF_ERROR(scope.status());
    if (!net.valid()) return errors::InvalidArgument("DNN: the activation of hiddenlayer_", i, " returned nothing");
    in = units;
  }
  Output logits = Dense(d.NewSubScope("logits"), net, in, logits_dimension);
  RETURN_IF_ERROR(scope.status());
  return logits;
}

StatusOr<Output> LinearLogits(const Scope& scope, const feature_column::Features& features,
                              const LinearOptions& options, int64_t logits_dimension) {
  RETURN_IF_ERROR(scope.status());
  Output logits = feature_column::LinearModel(scope.NewSubScope("linear"), features, options.feature_columns,
                                              logits_dimension, options.sparse_combiner);
  RETURN_IF_ERROR(scope.status());
  return logits;
}

std::unique_ptr<train::Optimizer> DefaultDNNOptimizer() { return std::make_unique<train::AdagradOptimizer>(0.05); }

std::unique_ptr<train::Optimizer> DefaultLinearOptimizer(size_t num_feature_columns) {
  const double n = static_cast<double>(std::max<size_t>(num_feature_columns, 1));
  return std::make_unique<train::FtrlOptimizer>(std::min(0.2, 1.0 / std::sqrt(n)));
}

ModelFn MakeModelFn(LogitsFn logits_fn, std::shared_ptr<const Head> head, OptimizerFn optimizer) {
  return [logits_fn = std::move(logits_fn), head = std::move(head),
          optimizer = std::move(optimizer)](const Scope& scope, const feature_column::Features& features,
                                            const Output& labels, ModeKeys mode,
                                            const Params& params) -> StatusOr<EstimatorSpec> {
    if (!head) return errors::InvalidArgument("MakeModelFn: head is null");
    if (!logits_fn) return errors::InvalidArgument("MakeModelFn: logits_fn is empty");
    ASSIGN_OR_RETURN(Output logits, logits_fn(scope, features, mode, head->logits_dimension()));
    std::unique_ptr<train::Optimizer> opt;
    if (mode == ModeKeys::kTrain) {
      if (!optimizer) return errors::InvalidArgument("MakeModelFn: TRAIN mode needs an optimizer");
      opt = optimizer();
      if (!opt) return errors::InvalidArgument("MakeModelFn: the optimizer function returned null");
    }
    return head->CreateEstimatorSpec(scope, logits, labels, mode, opt.get());
  };
}

namespace {

ModelFn Failing(Status s) {
  return [s](const Scope&, const feature_column::Features&, const Output&, ModeKeys,
             const Params&) -> StatusOr<EstimatorSpec> { return s; };
}

ModelFn DNNModelFn(DNNOptions options, StatusOr<std::shared_ptr<const Head>> head) {
  if (!head.ok()) return Failing(head.status());
  OptimizerFn opt = options.optimizer ? options.optimizer : OptimizerFn(DefaultDNNOptimizer);
  LogitsFn logits = [options = std::move(options)](const Scope& s, const feature_column::Features& f, ModeKeys mode,
                                                   int64_t dim) { return DNNLogits(s, f, options, dim, mode); };
  return MakeModelFn(std::move(logits), *std::move(head), std::move(opt));
}

ModelFn LinearModelFn(LinearOptions options, StatusOr<std::shared_ptr<const Head>> head) {
  if (!head.ok()) return Failing(head.status());
  const size_t n = options.feature_columns.size();
  OptimizerFn opt = options.optimizer ? options.optimizer : OptimizerFn([n] { return DefaultLinearOptimizer(n); });
  LogitsFn logits = [options = std::move(options)](const Scope& s, const feature_column::Features& f, ModeKeys,
                                                   int64_t dim) { return LinearLogits(s, f, options, dim); };
  return MakeModelFn(std::move(logits), *std::move(head), std::move(opt));
}

StatusOr<std::shared_ptr<const Head>> Regression(int64_t label_dimension, LossReduction r) {
  if (label_dimension < 1 || label_dimension > (int64_t{1} << 31)) {
    return errors::InvalidArgument("Invalid label_dimension ", label_dimension);
  }
  return RegressionHead(label_dimension, r);
}

}  // namespace

ModelFn DNNClassifierModelFn(DNNOptions options, int64_t n_classes) {
  auto head = ClassificationHead(n_classes, options.loss_reduction);
  return DNNModelFn(std::move(options), std::move(head));
}

ModelFn DNNRegressorModelFn(DNNOptions options, int64_t label_dimension) {
  auto head = Regression(label_dimension, options.loss_reduction);
  return DNNModelFn(std::move(options), std::move(head));
}

ModelFn LinearClassifierModelFn(LinearOptions options, int64_t n_classes) {
  auto head = ClassificationHead(n_classes, options.loss_reduction);
  return LinearModelFn(std::move(options), std::move(head));
}

ModelFn LinearRegressorModelFn(LinearOptions options, int64_t label_dimension) {
  auto head = Regression(label_dimension, options.loss_reduction);
  return LinearModelFn(std::move(options), std::move(head));
}

}  // namespace dflow::estimator
