// Heads of the canned estimators: logits -> predictions, loss, train op and metrics.
#include <limits>

#include "absl/strings/str_cat.h"
#include "dflow/array_ops.h"
#include "dflow/feature_ops.h"
#include "dflow/math_ops.h"
#include "dflow/model_fn.h"
#include "dflow/nn_ops.h"
#include "graph/graph.h"

namespace dflow::estimator {

const char* ModeKeyName(ModeKeys mode) {
  switch (mode) {
    case ModeKeys::kTrain: return "train";
    case ModeKeys::kEval: return "eval";
    case ModeKeys::kPredict: return "infer";
  }
  return "?";
}

Output GetOrCreateGlobalStep(const Scope& scope) {
  if (!scope.ok()) return Output();
  Node* n = scope.graph()->FindNode("global_step");
  if (n == nullptr) return train::CreateGlobalStep(scope);
  if (n->op() != "VariableV2" || n->output_type(0) != MakeRefType(DT_INT64)) {
    scope.UpdateStatus(errors::InvalidArgument("The graph's node 'global_step' is a ", n->op(), " of type ",
                                               DTypeString(n->output_type(0)),
                                               ", not the int64 variable a global step must be"));
    return Output();
  }
  return Output(n, 0);
}

namespace {

Status Check(const Scope& s) { return s.status(); }

Status CheckLogits(const Output& logits, int64_t dimension) {
  if (!logits.valid()) return errors::InvalidArgument("Head: logits is an invalid Output");
  if (BaseType(logits.dtype()) != DT_FLOAT) {
    return errors::InvalidArgument("Head: logits must be float32, got ", DTypeString(logits.dtype()), " (",
                                   logits.name(), ")");
  }
  const PartialTensorShape& s = logits.shape();
  if (!s.unknown_rank() && (s.dims() != 2 || (s.dim_size(1) >= 0 && s.dim_size(1) != dimension))) {
    return errors::InvalidArgument("Head: logits shape must be [D0, ", dimension, "], got ", s.DebugString(), " (",
                                   logits.name(), ")");
  }
  return absl::OkStatus();
}

Status CheckLabels(const Output& labels, ModeKeys mode) {
  if (mode == ModeKeys::kPredict) return absl::OkStatus();
  if (!labels.valid()) {
    return errors::InvalidArgument("Head: labels are required in ", ModeKeyName(mode), " mode, got an invalid Output");
  }
  if (BaseType(labels.dtype()) == DT_STRING) {
    return errors::InvalidArgument("Head: labels must be numbers, got strings (", labels.name(), ")");
  }
  return absl::OkStatus();
}

// The training loss from per-example (per-element) losses.
Output Reduce(const Scope& s, const Output& unreduced, LossReduction reduction) {
  Output flat = ops::Reshape(s, unreduced, {-1});
  return reduction == LossReduction::kSum ? ops::Sum(s.WithOpName("loss"), flat, 0)
                                          : ops::Mean(s.WithOpName("loss"), flat, 0);
}

// Loss, train op and metrics common to every head, given the per-example losses.
StatusOr<EstimatorSpec> Finish(const Scope& scope, EstimatorSpec spec, const Output& unreduced, ModeKeys mode,
                               LossReduction reduction, train::Optimizer* optimizer,
                               const std::function<void(const Scope&, EstimatorSpec*)>& more_metrics) {
  spec.mode = mode;
  if (mode == ModeKeys::kPredict) {
    RETURN_IF_ERROR(Check(scope));
    return spec;
  }
  spec.loss = Reduce(scope.NewSubScope("head"), unreduced, reduction);
  RETURN_IF_ERROR(Check(scope));
  if (mode == ModeKeys::kTrain) {
    if (optimizer == nullptr) return errors::InvalidArgument("Head: TRAIN mode needs an optimizer");
    Output step = GetOrCreateGlobalStep(scope);
    RETURN_IF_ERROR(Check(scope));
    spec.train_op = optimizer->Minimize(scope, spec.loss, {}, step);
  } else {
    Scope ms = scope.NewSubScope("metrics");
    spec.eval_metric_ops["average_loss"] = metrics::Mean(ms, unreduced, Output(), "average_loss");
    spec.eval_metric_ops["loss"] = metrics::Mean(ms, spec.loss, Output(), "loss");
    more_metrics(ms, &spec);
  }
  RETURN_IF_ERROR(Check(scope));
  return spec;
}

// A control dependency that fails the step unless lo <= every label <= hi.
Output CheckedRange(const Scope& s, const Output& labels, double lo, double hi, const std::string& what) {
  Output flat = ops::Reshape(s, labels, {-1});
  const DType t = BaseType(labels.dtype());
  auto lit = [&](double v) { return ops::Cast(s, ops::Const(s, v), t); };
  Operation below = ops::Assert(s.WithOpName("assert_range"), ops::LessEqual(s, ops::Max(s, flat, 0), lit(hi)),
                                {Input(absl::StrCat("Labels must be <= ", what)), flat});
  Operation above = ops::Assert(s.WithOpName("assert_non_negative"),
                                ops::GreaterEqual(s, ops::Min(s, flat, 0), lit(lo)),
                                {Input(absl::StrCat("Labels must be >= ", lo)), flat});
  return ops::Identity(s.WithControlDependencies({below, above}).WithOpName("labels"), labels);
}

class MultiClassHeadImpl : public Head {
 public:
  MultiClassHeadImpl(int64_t n, LossReduction r) : n_(n), reduction_(r) {}
  int64_t logits_dimension() const override { return n_; }

  StatusOr<EstimatorSpec> CreateEstimatorSpec(const Scope& scope, const Output& logits, const Output& labels,
                                              ModeKeys mode, train::Optimizer* optimizer) const override {
    RETURN_IF_ERROR(Check(scope));
    if (n_ < 3 || n_ > (int64_t{1} << 31) - 1) {
      return errors::InvalidArgument("MultiClassHead: n_classes must be > 2, got ", n_, " (use BinaryClassHead for 2)");
    }
    RETURN_IF_ERROR(CheckLogits(logits, n_));
    RETURN_IF_ERROR(CheckLabels(labels, mode));
    Scope h = scope.NewSubScope("head");
    Scope p = h.NewSubScope("predictions");
    EstimatorSpec spec;
    Output class_ids = ops::ExpandDims(p.WithOpName("class_ids"), ops::ArgMax(p, logits, 1, DT_INT64), -1);
    spec.predictions["logits"] = logits;
    spec.predictions["probabilities"] = ops::Softmax(p.WithOpName("probabilities"), logits);
    spec.predictions["class_ids"] = class_ids;
    spec.predictions["classes"] = ops::AsString(p.WithOpName("str_classes"), class_ids);
    Output unreduced, ids;
    if (mode != ModeKeys::kPredict) {
      const DType t = BaseType(labels.dtype());
      if (t != DT_INT32 && t != DT_INT64) {
        return errors::InvalidArgument("MultiClassHead: labels must be int32 or int64 class ids, got ", DTypeString(t),
                                       " (", labels.name(), ")");
      }
      const PartialTensorShape& ls = labels.shape();
      if (!ls.unknown_rank() && !(ls.dims() == 1 || (ls.dims() == 2 && ls.dim_size(1) == 1))) {
        return errors::InvalidArgument("MultiClassHead: labels shape must be [D0] or [D0, 1], got ", ls.DebugString());
      }
      ids = CheckedRange(h, ops::Reshape(h, labels, {-1}), 0, static_cast<double>(n_ - 1),
                         absl::StrCat("n_classes - 1 = ", n_ - 1));
      auto ce = ops::SparseSoftmaxCrossEntropyWithLogits(h, logits, ids);
      unreduced = ops::ExpandDims(h.WithOpName("unreduced_loss"), ce.loss, -1);  // [batch, 1], as TensorFlow
    }
    return Finish(scope, std::move(spec), unreduced, mode, reduction_, optimizer,
                  [&](const Scope& ms, EstimatorSpec* s) {
                    s->eval_metric_ops["accuracy"] = metrics::Accuracy(ms, ids, class_ids, Output(), "accuracy");
                  });
  }

 private:
  int64_t n_;
  LossReduction reduction_;
};

class BinaryClassHeadImpl : public Head {
 public:
  explicit BinaryClassHeadImpl(LossReduction r) : reduction_(r) {}
  int64_t logits_dimension() const override { return 1; }

  StatusOr<EstimatorSpec> CreateEstimatorSpec(const Scope& scope, const Output& logits, const Output& labels,
                                              ModeKeys mode, train::Optimizer* optimizer) const override {
    RETURN_IF_ERROR(Check(scope));
    RETURN_IF_ERROR(CheckLogits(logits, 1));
    RETURN_IF_ERROR(CheckLabels(labels, mode));
    Scope h = scope.NewSubScope("head");
    Scope p = h.NewSubScope("predictions");
    EstimatorSpec spec;
    Output logistic = ops::Sigmoid(p.WithOpName("logistic"), logits);
    Output class_ids = ops::Cast(p.WithOpName("class_ids"), ops::Greater(p, logits, 0.0f), DT_INT64);
    spec.predictions["logits"] = logits;
    spec.predictions["logistic"] = logistic;
    spec.predictions["probabilities"] = ops::Concat(p.WithOpName("probabilities"),
                                                    {ops::Sub(p, 1.0f, logistic), logistic}, 1);
    spec.predictions["class_ids"] = class_ids;
    spec.predictions["classes"] = ops::AsString(p.WithOpName("str_classes"), class_ids);
    Output unreduced, y;
    if (mode != ModeKeys::kPredict) {
      const PartialTensorShape& ls = labels.shape();
      if (!ls.unknown_rank() && !(ls.dims() == 1 || (ls.dims() == 2 && ls.dim_size(1) == 1))) {
        return errors::InvalidArgument("BinaryClassHead: labels shape must be [D0] or [D0, 1], got ", ls.DebugString());
      }
      Output checked = CheckedRange(h, labels, 0, 1, "n_classes - 1 = 1");
      y = ops::Reshape(h, BaseType(labels.dtype()) == DT_FLOAT ? checked : ops::Cast(h, checked, DT_FLOAT), {-1, 1});
      // max(x, 0) - x * z + log(1 + exp(-|x|)): TensorFlow's stable sigmoid cross-entropy.
      Output x = logits;
      unreduced = ops::Add(h.WithOpName("unreduced_loss"), ops::Sub(h, ops::Relu(h, x), ops::Mul(h, x, y)),
                           ops::Log1p(h, ops::Exp(h, ops::Neg(h, ops::Abs(h, x)))));
    }
    return Finish(scope, std::move(spec), unreduced, mode, reduction_, optimizer,
                  [&](const Scope& ms, EstimatorSpec* s) {
                    s->eval_metric_ops["accuracy"] = metrics::Accuracy(ms, y, class_ids, Output(), "accuracy");
                    s->eval_metric_ops["prediction/mean"] = metrics::Mean(ms, logistic, Output(), "prediction/mean");
                    metrics::Metric label_mean = metrics::Mean(ms, y, Output(), "label/mean");
                    s->eval_metric_ops["label/mean"] = label_mean;
                    Scope b = ms.NewSubScope("accuracy_baseline");
                    if (label_mean.value.valid()) {
                      s->eval_metric_ops["accuracy_baseline"] = {ops::Maximum(b.WithOpName("value"), label_mean.value,
                                                                              ops::Sub(b, 1.0f, label_mean.value)),
                                                                 ops::Maximum(b.WithOpName("update_op"),
                                                                              label_mean.update_op,
                                                                              ops::Sub(b, 1.0f, label_mean.update_op))};
                    }
                  });
  }

 private:
  LossReduction reduction_;
};

class RegressionHeadImpl : public Head {
 public:
  RegressionHeadImpl(int64_t d, LossReduction r) : d_(d), reduction_(r) {}
  int64_t logits_dimension() const override { return d_; }

  StatusOr<EstimatorSpec> CreateEstimatorSpec(const Scope& scope, const Output& logits, const Output& labels,
                                              ModeKeys mode, train::Optimizer* optimizer) const override {
    RETURN_IF_ERROR(Check(scope));
    if (d_ < 1) return errors::InvalidArgument("RegressionHead: Invalid label_dimension ", d_);
    RETURN_IF_ERROR(CheckLogits(logits, d_));
    RETURN_IF_ERROR(CheckLabels(labels, mode));
    Scope h = scope.NewSubScope("head");
    EstimatorSpec spec;
    Output predictions = ops::Identity(h.NewSubScope("predictions").WithOpName("predictions"), logits);
    spec.predictions["predictions"] = predictions;
    Output unreduced, y;
    if (mode != ModeKeys::kPredict) {
      const PartialTensorShape& ls = labels.shape();
      const bool ok_shape = ls.unknown_rank() || (ls.dims() == 2 && (ls.dim_size(1) < 0 || ls.dim_size(1) == d_)) ||
                            (ls.dims() == 1 && d_ == 1);
      if (!ok_shape) {
        return errors::InvalidArgument("RegressionHead: labels shape must be [D0, ", d_, "]", d_ == 1 ? " or [D0]" : "",
                                       ", got ", ls.DebugString());
      }
      y = ops::Reshape(h, BaseType(labels.dtype()) == DT_FLOAT ? labels : ops::Cast(h, labels, DT_FLOAT),
                       {int64_t{-1}, d_});
      unreduced = ops::SquaredDifference(h.WithOpName("unreduced_loss"), logits, y);
    }
    return Finish(scope, std::move(spec), unreduced, mode, reduction_, optimizer,
                  [&](const Scope& ms, EstimatorSpec* s) {
                    s->eval_metric_ops["prediction/mean"] = metrics::Mean(ms, predictions, Output(), "prediction/mean");
                    s->eval_metric_ops["label/mean"] = metrics::Mean(ms, y, Output(), "label/mean");
                  });
  }

 private:
  int64_t d_;
  LossReduction reduction_;
};

}  // namespace

std::shared_ptr<const Head> MultiClassHead(int64_t n_classes, LossReduction reduction) {
  return std::make_shared<MultiClassHeadImpl>(n_classes, reduction);
}
std::shared_ptr<const Head> BinaryClassHead(LossReduction reduction) {
  return std::make_shared<BinaryClassHeadImpl>(reduction);
}
std::shared_ptr<const Head> RegressionHead(int64_t label_dimension, LossReduction reduction) {
  return std::make_shared<RegressionHeadImpl>(label_dimension, reduction);
}

StatusOr<std::shared_ptr<const Head>> ClassificationHead(int64_t n_classes, LossReduction reduction) {
  if (n_classes < 2 || n_classes > (int64_t{1} << 31) - 1) {
    return errors::InvalidArgument("n_classes must be > 1: ", n_classes);
  }
  if (n_classes == 2) return BinaryClassHead(reduction);
  return MultiClassHead(n_classes, reduction);
}

}  // namespace dflow::estimator
