// Streaming metrics on local variables (tf.metrics).
#include "dflow/metrics.h"

#include "dflow/array_ops.h"
#include "dflow/math_ops.h"

namespace dflow::metrics {
namespace {

Output AsOutput(const Scope& s, const Input& in) {
  return in.is_initializer() ? ops::Const(s, in.initializer()) : in.output();
}

Output ToFloat(const Scope& s, const Output& x) {
  if (!x.valid() || BaseType(x.dtype()) == DT_FLOAT) return x;
  if (BaseType(x.dtype()) == DT_STRING) {
    s.UpdateStatus(errors::InvalidArgument("A metric needs numbers, got the string tensor ", x.name()));
    return Output();
  }
  return ops::Cast(s, x, DT_FLOAT);
}

// total / count, or 0 while count is 0.
Output SafeDiv(const Scope& s, const Output& total, const Output& count) {
  Output positive = ops::Greater(s, count, 0.0f);
  Output ratio = ops::RealDiv(s, total, ops::Maximum(s, count, 1e-30f));
  return ops::Select(s, positive, ratio, 0.0f);
}

// The mean metric built in `s` (the metric's own name scope).
Metric MeanIn(const Scope& s, Output values, Output weights) {
  if (!s.ok()) return {};
  values = ToFloat(s, values);
  Variable total = Variable::CreateLocal(s.WithOpName("total"), TensorShape({}), DT_FLOAT);
  Variable count = Variable::CreateLocal(s.WithOpName("count"), TensorShape({}), DT_FLOAT);
  if (!s.ok()) return {};
  Output num;
  if (weights.valid()) {
    Output w = ToFloat(s, weights);
    if (!s.ok()) return {};
    // Weights broadcast to the values (a [batch] weight per row of [batch, k] values is given as [batch, 1]).
    Output full = ops::Mul(s, ops::OnesLike(s, values), w);
    const PartialTensorShape& vs = values.shape();
    const PartialTensorShape& fs = full.shape();
    if (!vs.unknown_rank() && !fs.unknown_rank() && fs.dims() > vs.dims()) {
      s.UpdateStatus(errors::InvalidArgument("Metric weights of shape ", w.shape().DebugString(),
                                             " do not broadcast to the values' shape ", vs.DebugString()));
      return {};
    }
    values = ops::Mul(s, values, full);
    num = ops::Sum(s, ops::Reshape(s, full, {-1}), 0);
  } else {
    num = ops::Cast(s, ops::Size(s, values), DT_FLOAT);
  }
  Output batch_total = ops::Sum(s, ops::Reshape(s, values, {-1}), 0);
  Output new_total = ops::AssignAdd(s.WithOpName("AssignAdd"), total.ref(), batch_total);
  Output new_count = ops::AssignAdd(s.WithOpName("AssignAdd_1"), count.ref(), num);
  Metric m;
  m.value = SafeDiv(s.NewSubScope("value_div"), total.read(), count.read());
  m.value = ops::Identity(s.WithOpName("value"), m.value);
  m.update_op = ops::Identity(s.WithOpName("update_op"), SafeDiv(s.NewSubScope("update_div"), new_total, new_count));
  if (!s.ok()) return {};
  return m;
}

// Squeezes a trailing dimension of size 1 from whichever of a and b has one more dimension. With
// a rank unknown while building, a is reshaped to b's shape instead, so that [batch] against
// [batch, 1] never broadcasts into [batch, batch] (a step with different sizes fails).
void RemoveSqueezableDimensions(const Scope& s, Output* a, Output* b) {
  const PartialTensorShape& as = a->shape();
  const PartialTensorShape& bs = b->shape();
  if (as.unknown_rank() || bs.unknown_rank()) {
    *a = ops::Reshape(s, *a, ops::Shape(s, *b));
    return;
  }
  if (as.dims() == bs.dims() + 1 && as.dim_size(as.dims() - 1) == 1) *a = ops::Squeeze(s, *a, {-1});
  else if (bs.dims() == as.dims() + 1 && bs.dim_size(bs.dims() - 1) == 1) *b = ops::Squeeze(s, *b, {-1});
}

Status CheckSameShape(const Output& labels, const Output& predictions, const std::string& name) {
  const PartialTensorShape& l = labels.shape();
  const PartialTensorShape& p = predictions.shape();
  if (!l.IsCompatibleWith(p)) {
    return errors::InvalidArgument("Metric '", name, "': labels of shape ", l.DebugString(),
                                   " and predictions of shape ", p.DebugString(), " are not compatible");
  }
  return absl::OkStatus();
}

// The metric over an element-wise loss of (labels, predictions).
template <typename Fn>
Metric PairMetric(const Scope& scope, const Input& labels, const Input& predictions, const Output& weights,
                  const std::string& name, Fn element) {
  if (!scope.ok()) return {};
  Scope s = scope.NewSubScope(name);
  Output l = ToFloat(s, AsOutput(s, labels));
  Output p = ToFloat(s, AsOutput(s, predictions));
  if (!s.ok()) return {};
  RemoveSqueezableDimensions(s, &p, &l);
  Status shapes = CheckSameShape(l, p, name);
  if (!shapes.ok()) {
    s.UpdateStatus(shapes);
    return {};
  }
  return MeanIn(s, element(s, l, p), weights);
}

}  // namespace

Metric Mean(const Scope& scope, Input values, Output weights, const std::string& name) {
  if (!scope.ok()) return {};
  Scope s = scope.NewSubScope(name);
  return MeanIn(s, AsOutput(s, values), weights);
}

Metric Accuracy(const Scope& scope, Input labels, Input predictions, Output weights, const std::string& name) {
  if (!scope.ok()) return {};
  Scope s = scope.NewSubScope(name);
  Output l = AsOutput(s, labels);
  Output p = AsOutput(s, predictions);
  if (!s.ok()) return {};
  RemoveSqueezableDimensions(s, &p, &l);
  Status shapes = CheckSameShape(l, p, name);
  if (!shapes.ok()) {
    s.UpdateStatus(shapes);
    return {};
  }
  if (BaseType(p.dtype()) != BaseType(l.dtype())) p = ops::Cast(s, p, BaseType(l.dtype()));
  Output correct = ops::Cast(s, ops::Equal(s, p, l), DT_FLOAT);
  return MeanIn(s, correct, weights);
}

Metric MeanSquaredError(const Scope& scope, Input labels, Input predictions, Output weights, const std::string& name) {
  return PairMetric(scope, labels, predictions, weights, name,
                    [](const Scope& s, const Output& l, const Output& p) { return ops::SquaredDifference(s, l, p); });
}

Metric MeanAbsoluteError(const Scope& scope, Input labels, Input predictions, Output weights, const std::string& name) {
  return PairMetric(scope, labels, predictions, weights, name,
                    [](const Scope& s, const Output& l, const Output& p) { return ops::Abs(s, ops::Sub(s, l, p)); });
}

Metric RootMeanSquaredError(const Scope& scope, Input labels, Input predictions, Output weights,
                            const std::string& name) {
  if (!scope.ok()) return {};
  Scope s = scope.NewSubScope(name);
  Metric mse = PairMetric(s, labels, predictions, weights, "mean_squared_error",
                          [](const Scope& s, const Output& l, const Output& p) {
                            return ops::SquaredDifference(s, l, p);
                          });
  if (!s.ok()) return {};
  return {ops::Sqrt(s.WithOpName("value"), mse.value), ops::Sqrt(s.WithOpName("update_op"), mse.update_op)};
}

}  // namespace dflow::metrics
