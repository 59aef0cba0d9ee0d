// The client API of training (dflow/train.h): optimizers over src/train's, the global step,
// learning-rate schedules, the Apply* op functions and the losses.
#include "dflow/train.h"

#include <cmath>
#include <limits>

#include "api/scope_internal.h"
#include "train/optimizers.h"

namespace dflow {
namespace {

Output Out(const Operation& op, int i = 0) { return op.valid() ? Output(op, i) : Output(); }
NodeOut ToNodeOut(const Output& o) { return NodeOut{o.node(), o.index()}; }

// A scope for one composite op: its helpers under "<name>/", the result named "<name>" exactly.
struct OpScope {
  Scope inner;
  Scope result;
};
OpScope MakeOpScope(const Scope& scope, const std::string& name) {
  Scope inner = scope.NewSubScope(name);
  std::string full = inner.name_prefix();
  full.pop_back();  // "a/ExponentialDecay_1/" -> "a/ExponentialDecay_1"
  return {inner, ScopeAccess::WithPrefix(scope, "").WithOpName(full)};
}

// An Input as an Output: literals become Consts (of `dtype` when given and they are numbers).
Output AsOutput(const Scope& s, const Input& in, DType dtype = DT_INVALID) {
  if (!in.is_initializer()) return in.output();
  if (!in.initializer().status.ok()) {
    s.UpdateStatus(in.initializer().status);
    return Output();
  }
  if (dtype == DT_INVALID) return ops::Const(s, in.initializer());
  auto t = in.initializer().AsType(dtype);
  if (!t.ok()) {
    s.UpdateStatus(t.status());
    return Output();
  }
  return ops::Const(s, *t);
}

// Reads optimizer hyperparameters; the first bad one is kept.
struct HyperReader {
  Status status;
  optimizers::HyperParam operator()(const Input& in, const char* what) {
    if (!in.is_initializer()) {
      if (!in.output().valid() && status.ok()) {
        status = errors::InvalidArgument("Optimizer hyperparameter '", what, "' is an invalid Output");
      }
      return optimizers::HyperParam(ToNodeOut(in.output()));
    }
    const Input::Initializer& init = in.initializer();
    double v = 0;
    bool ok = init.status.ok() && init.tensor.IsInitialized() && init.tensor.dims() == 0 &&
              VisitNumeric(init.tensor.dtype(),
                           [&]<typename T>() { v = static_cast<double>(init.tensor.scalar<T>()); });
    if (!ok && status.ok()) {
      status = errors::InvalidArgument("Optimizer hyperparameter '", what, "' must be a scalar number or a tensor");
    }
    return optimizers::HyperParam(v);
  }
};

}  // namespace

namespace train {

Optimizer::~Optimizer() = default;

void Optimizer::Init(std::shared_ptr<optimizers::Optimizer> impl, Status status) {
  impl_ = std::move(impl);
  status_ = std::move(status);
}

std::vector<std::pair<Output, Output>> Optimizer::ComputeGradients(const Scope& scope, Output loss,
                                                                   std::vector<Output> var_list) {
  if (!scope.ok()) return {};
  if (!status_.ok()) {
    scope.UpdateStatus(status_);
    return {};
  }
  if (!loss.valid()) {
    scope.UpdateStatus(errors::InvalidArgument(impl_->name(), ": the loss is an invalid Output"));
    return {};
  }
  if (var_list.empty()) {
    for (const Output& v : scope.collections()->trainable_variables)
      if (v.valid() && IsFloating(BaseType(v.dtype()))) var_list.push_back(v);
  }
  std::vector<NodeOut> vars;
  for (const Output& v : var_list) vars.push_back(ToNodeOut(v));
  auto r = impl_->ComputeGradients(scope.graph(), ToNodeOut(loss), vars, scope.name_prefix() + "gradients");
  if (!r.ok()) {
    scope.UpdateStatus(r.status());
    return {};
  }
  std::vector<std::pair<Output, Output>> out;
  for (const optimizers::GradAndVar& gv : *r) {
    out.emplace_back(gv.grad.node ? Output(gv.grad.node, gv.grad.index) : Output(), Output(gv.var.node, gv.var.index));
  }
  return out;
}

Operation Optimizer::ApplyGradients(const Scope& scope, const std::vector<std::pair<Output, Output>>& grads_and_vars,
                                    Output global_step) {
  if (!scope.ok()) return Operation();
  if (!status_.ok()) {
    scope.UpdateStatus(status_);
    return Operation();
  }
  std::vector<optimizers::GradAndVar> gvs;
  for (const auto& [g, v] : grads_and_vars) gvs.push_back({g.valid() ? ToNodeOut(g) : NodeOut{}, ToNodeOut(v)});
  const std::string name = scope.GetUniqueNameForOp(impl_->name());
  auto r = impl_->ApplyGradients(scope.graph(), gvs, global_step.valid() ? ToNodeOut(global_step) : NodeOut{}, name);
  // Slots made before a failure still get initializers.
  for (const optimizers::CreatedVariable& c : impl_->TakeCreatedVariables()) {
    if (c.initializer != nullptr) scope.collections()->initializers.push_back(Operation(c.initializer));
    if (c.variable != nullptr) scope.collections()->global_variables.push_back(Output(c.variable, 0));
  }
  if (!r.ok()) {
    scope.UpdateStatus(r.status());
    return Operation();
  }
  return Operation(*r);
}

Operation Optimizer::Minimize(const Scope& scope, Output loss, std::vector<Output> var_list, Output global_step) {
  std::vector<std::pair<Output, Output>> gvs = ComputeGradients(scope, loss, std::move(var_list));
  if (!scope.ok()) return Operation();
  return ApplyGradients(scope, gvs, global_step);
}

Output Optimizer::GetSlot(const Output& var, const std::string& slot) const {
  if (impl_ == nullptr || !var.valid()) return Output();
  NodeOut s = impl_->GetSlot(ToNodeOut(var), slot);
  return s.node ? Output(s.node, s.index) : Output();
}

GradientDescentOptimizer::GradientDescentOptimizer(Input learning_rate, bool use_locking) {
  HyperReader h;
  auto lr = h(learning_rate, "learning_rate");
  Init(std::make_shared<optimizers::GradientDescentOptimizer>(lr, use_locking), h.status);
}

MomentumOptimizer::MomentumOptimizer(Input learning_rate, Input momentum, bool use_nesterov, bool use_locking) {
  HyperReader h;
  auto lr = h(learning_rate, "learning_rate");
  auto m = h(momentum, "momentum");
  Init(std::make_shared<optimizers::MomentumOptimizer>(lr, m, use_nesterov, use_locking), h.status);
}

AdagradOptimizer::AdagradOptimizer(Input learning_rate, double initial_accumulator_value, bool use_locking) {
  HyperReader h;
  auto lr = h(learning_rate, "learning_rate");
  Init(std::make_shared<optimizers::AdagradOptimizer>(lr, initial_accumulator_value, use_locking), h.status);
}

AdamOptimizer::AdamOptimizer(Input learning_rate, double beta1, double beta2, double epsilon, bool use_locking) {
  HyperReader h;
  auto lr = h(learning_rate, "learning_rate");
  Init(std::make_shared<optimizers::AdamOptimizer>(lr, beta1, beta2, epsilon, use_locking), h.status);
}

RMSPropOptimizer::RMSPropOptimizer(Input learning_rate, double decay, double momentum, double epsilon, bool use_locking,
                                   bool centered) {
  HyperReader h;
  auto lr = h(learning_rate, "learning_rate");
  Init(std::make_shared<optimizers::RMSPropOptimizer>(lr, decay, momentum, epsilon, use_locking, centered), h.status);
}

FtrlOptimizer::FtrlOptimizer(Input learning_rate, double learning_rate_power, double initial_accumulator_value,
                             double l1_regularization_strength, double l2_regularization_strength, bool use_locking) {
  HyperReader h;
  auto lr = h(learning_rate, "learning_rate");
  Init(std::make_shared<optimizers::FtrlOptimizer>(lr, learning_rate_power, initial_accumulator_value,
                                                   l1_regularization_strength, l2_regularization_strength, use_locking),
       h.status);
}

Output CreateGlobalStep(const Scope& scope) {
  if (!scope.ok()) return Output();
  const std::string name = scope.GetUniqueNameForOp("global_step");
  Output ref = ops::VariableV2(ScopeAccess::WithPrefix(scope, "").WithOpName(name).WithDevice(scope.device()),
                               PartialTensorShape::Scalar(), DT_INT64);
  if (!ref.valid()) return Output();
  Scope own = ScopeAccess::ColocatedWith(scope, ref.node());  // as Variable::Create's ops
  Output zero = ops::Const(ScopeAccess::WithPrefix(own, name + "/Initializer/").WithOpName("zeros"),
                           Input::Initializer(int64_t{0}));
  Output assign = ops::Assign(ScopeAccess::WithPrefix(own, name + "/").WithOpName("Assign"), ref, zero);
  if (!assign.valid()) return Output();
  scope.collections()->initializers.push_back(assign.op());
  scope.collections()->global_variables.push_back(ref);
  return ref;
}

Output ExponentialDecay(const Scope& scope, Input learning_rate, Output global_step, int64_t decay_steps,
                        double decay_rate, bool staircase) {
  if (!scope.ok()) return Output();
  if (decay_steps <= 0) {
    scope.UpdateStatus(errors::InvalidArgument("ExponentialDecay: decay_steps must be positive, got ", decay_steps));
    return Output();
  }
  if (!global_step.valid()) {
    scope.UpdateStatus(errors::InvalidArgument("ExponentialDecay: global_step is an invalid Output"));
    return Output();
  }
  OpScope os = MakeOpScope(scope, "ExponentialDecay");
  const Scope& s = os.inner;
  // An integer literal learning rate is taken as float, as TensorFlow's schedules do.
  DType dtype = DT_INVALID;
  if (learning_rate.is_initializer() && !IsFloating(learning_rate.initializer().tensor.dtype())) dtype = DT_FLOAT;
  Output lr = AsOutput(s.WithOpName("learning_rate"), learning_rate, dtype);
  if (!lr.valid()) return Output();
  dtype = BaseType(lr.dtype());
  if (!IsFloating(dtype)) {
    scope.UpdateStatus(errors::InvalidArgument("ExponentialDecay: the learning rate must be float or double, not ",
                                               DTypeString(dtype)));
    return Output();
  }
  Output step = ops::Cast(s, global_step, dtype);
  Output steps = AsOutput(s.WithOpName("decay_steps"), static_cast<double>(decay_steps), dtype);
  Output rate = AsOutput(s.WithOpName("decay_rate"), decay_rate, dtype);
  Output p = ops::RealDiv(s.WithOpName("truediv"), step, steps);
  if (staircase) p = Out(ops::BuildOp(s, "Floor", {p}));
  Output factor = ops::Pow(s, rate, p);
  return ops::Mul(os.result, lr, factor);
}

Output PiecewiseConstant(const Scope& scope, Output x, const std::vector<double>& boundaries,
                         const std::vector<double>& values, DType dtype) {
  if (!scope.ok()) return Output();
  auto fail = [&](const std::string& msg) {
    scope.UpdateStatus(errors::InvalidArgument("PiecewiseConstant: ", msg));
    return Output();
  };
  if (!x.valid()) return fail("x is an invalid Output");
  if (values.size() != boundaries.size() + 1) {
    return fail(absl::StrCat("needs one more value than boundaries, got ", values.size(), " values and ",
                             boundaries.size(), " boundaries"));
  }
  for (size_t i = 1; i < boundaries.size(); ++i) {
    if (!(boundaries[i] > boundaries[i - 1])) return fail("boundaries must be increasing");
  }
  if (dtype != DT_FLOAT && dtype != DT_DOUBLE && dtype != DT_INT32 && dtype != DT_INT64) {
    return fail(absl::StrCat("values of type ", DTypeString(dtype), " are not supported"));
  }
  const DType xt = BaseType(x.dtype());
  if (xt != DT_FLOAT && xt != DT_DOUBLE && xt != DT_INT32 && xt != DT_INT64) {
    return fail(absl::StrCat("x of type ", DTypeString(xt), " is not supported"));
  }
  OpScope os = MakeOpScope(scope, "PiecewiseConstant");
  const Scope& s = os.inner;
  // A scalar of type t holding v exactly (an integer type needs an integral v in its range).
  auto constant = [&](double v, DType t) -> Output {
    const double limit = t == DT_INT32 ? 2147483648.0 : 9223372036854775808.0;
    if (!IsFloating(t) && !(std::abs(v) < limit)) {
      s.UpdateStatus(errors::InvalidArgument("PiecewiseConstant: ", v, " does not fit in ", DTypeString(t)));
      return Output();
    }
    return AsOutput(s, Input::Initializer(v), t);
  };
  // above[i] = 1 when x > boundaries[i]: exactly one of 1 - above[0], above[i-1] - above[i] and
  // above[n-1] is 1, so the sum of values times them is exactly one value.
  std::vector<Output> above;
  for (double b : boundaries) {
    Output bt = constant(b, xt);
    if (!bt.valid()) return Output();
    above.push_back(ops::Cast(s, ops::Greater(s, x, bt), dtype));
  }
  if (boundaries.empty()) return ops::Identity(os.result, constant(values[0], dtype));
  Output result;
  for (size_t i = 0; i < values.size(); ++i) {
    Output indicator;
    if (i == 0) {
      indicator = ops::Sub(s, constant(1, dtype), above[0]);
    } else if (i == boundaries.size()) {
      indicator = above[i - 1];
    } else {
      indicator = ops::Sub(s, above[i - 1], above[i]);
    }
    Output term = ops::Mul(s, constant(values[i], dtype), indicator);
    if (i + 1 == values.size()) {
      return result.valid() ? ops::AddV2(os.result, result, term) : ops::Identity(os.result, term);
    }
    result = result.valid() ? ops::AddV2(s, result, term) : term;
  }
  return Output();
}

}  // namespace train

namespace ops {

Output ApplyGradientDescent(const Scope& s, Input var, Input alpha, Input delta, const ApplyAttrs& a) {
  return Out(BuildOp(s, "ApplyGradientDescent", {var, alpha, delta}, {{"use_locking", a.use_locking}}));
}
Output ApplyMomentum(const Scope& s, Input var, Input accum, Input lr, Input grad, Input momentum,
                     const ApplyAttrs& a) {
  return Out(BuildOp(s, "ApplyMomentum", {var, accum, lr, grad, momentum},
                     {{"use_locking", a.use_locking}, {"use_nesterov", a.use_nesterov}}));
}
Output ApplyAdagrad(const Scope& s, Input var, Input accum, Input lr, Input grad, const ApplyAttrs& a) {
  return Out(BuildOp(s, "ApplyAdagrad", {var, accum, lr, grad},
                     {{"use_locking", a.use_locking}, {"update_slots", a.update_slots}}));
}
Output ApplyAdam(const Scope& s, Input var, Input m, Input v, Input beta1_power, Input beta2_power, Input lr,
                 Input beta1, Input beta2, Input epsilon, Input grad, const ApplyAttrs& a) {
  return Out(BuildOp(s, "ApplyAdam", {var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad},
                     {{"use_locking", a.use_locking}, {"use_nesterov", a.use_nesterov}}));
}
Output ApplyRMSProp(const Scope& s, Input var, Input ms, Input mom, Input lr, Input rho, Input momentum, Input epsilon,
                    Input grad, const ApplyAttrs& a) {
  return Out(BuildOp(s, "ApplyRMSProp", {var, ms, mom, lr, rho, momentum, epsilon, grad},
                     {{"use_locking", a.use_locking}}));
}
Output ApplyCenteredRMSProp(const Scope& s, Input var, Input mg, Input ms, Input mom, Input lr, Input rho,
                            Input momentum, Input epsilon, Input grad, const ApplyAttrs& a) {
  return Out(BuildOp(s, "ApplyCenteredRMSProp", {var, mg, ms, mom, lr, rho, momentum, epsilon, grad},
                     {{"use_locking", a.use_locking}}));
}
Output ApplyFtrl(const Scope& s, Input var, Input accum, Input linear, Input grad, Input lr, Input l1, Input l2,
                 Input lr_power, const ApplyAttrs& a) {
  return Out(BuildOp(s, "ApplyFtrl", {var, accum, linear, grad, lr, l1, l2, lr_power},
                     {{"use_locking", a.use_locking}, {"multiply_linear_by_lr", a.multiply_linear_by_lr}}));
}

}  // namespace ops

namespace losses {
namespace {

// The mean of every element of x, named `name` in s.
Output MeanAll(const Scope& s, const Output& x, const std::string& name) {
  if (!x.valid()) return Output();
  PartialTensorShape shape = x.shape();
  Output axes;
  if (!shape.unknown_rank()) {
    std::vector<int32_t> dims(shape.dims());
    for (int i = 0; i < shape.dims(); ++i) dims[i] = i;
    axes = ops::Const(s.WithOpName("Const"), Input::Initializer(dims));
  } else {
    axes = Out(ops::BuildOp(s, "Range", {0, ops::Rank(s, x), 1}));
  }
  return Out(ops::BuildOp(s.WithOpName(name), "Mean", {x, axes}));
}

}  // namespace

Output MeanSquaredError(const Scope& scope, Input labels, Input predictions) {
  if (!scope.ok()) return Output();
  Scope s = scope.NewSubScope("mean_squared_error");
  Output d = Out(ops::BuildOp(s, "SquaredDifference", {predictions, labels}));
  return MeanAll(s, d, "value");
}

Output SoftmaxCrossEntropy(const Scope& scope, Input onehot_labels, Input logits) {
  if (!scope.ok()) return Output();
  Scope s = scope.NewSubScope("softmax_cross_entropy_loss");
  Output xent = Out(ops::BuildOp(s, "SoftmaxCrossEntropyWithLogits", {logits, onehot_labels}));
  return MeanAll(s, xent, "value");
}

Output SparseSoftmaxCrossEntropy(const Scope& scope, Input labels, Input logits) {
  if (!scope.ok()) return Output();
  Scope s = scope.NewSubScope("sparse_softmax_cross_entropy_loss");
  Output xent = Out(ops::BuildOp(s, "SparseSoftmaxCrossEntropyWithLogits", {logits, labels}));
  return MeanAll(s, xent, "value");
}

Output SigmoidCrossEntropy(const Scope& scope, Input multi_class_labels, Input logits) {
  if (!scope.ok()) return Output();
  Scope s = scope.NewSubScope("sigmoid_cross_entropy_loss");
  Output x = AsOutput(s.WithOpName("logits"), logits);
  if (!x.valid()) return Output();
  Output z = AsOutput(s.WithOpName("labels"), multi_class_labels, BaseType(x.dtype()));
  if (!z.valid()) return Output();
  // TensorFlow's stable form: max(x, 0) - x * z + log1p(exp(-|x|)), with the branches chosen by
  // x >= 0 so that the gradient at x = 0 is sigmoid(0) - z.
  Output cond = Out(ops::BuildOp(s, "GreaterEqual", {x, 0}));
  Output relu_logits = Out(ops::BuildOp(s, "SelectV2", {cond, x, 0}));
  Output neg_abs_logits = Out(ops::BuildOp(s, "SelectV2", {cond, ops::Neg(s, x), x}));
  Output log1p = Out(ops::BuildOp(s, "Log1p", {ops::Exp(s, neg_abs_logits)}));
  Output elementwise = ops::AddV2(s, ops::Sub(s, relu_logits, ops::Mul(s, x, z)), log1p);
  return MeanAll(s, elementwise, "value");
}

Output L2Regularization(const Scope& scope, const std::vector<Output>& weights, double scale) {
  if (!scope.ok()) return Output();
  if (weights.empty()) {
    scope.UpdateStatus(errors::InvalidArgument("L2Regularization: no weights"));
    return Output();
  }
  Scope s = scope.NewSubScope("l2_regularization");
  std::vector<Input> terms;
  for (const Output& w : weights) terms.push_back(Out(ops::BuildOp(s, "L2Loss", {w})));
  Output sum = terms.size() == 1 ? terms[0].output() : Out(ops::BuildOp(s, "AddN", terms));
  if (!sum.valid()) return Output();
  Output scale_t = AsOutput(s.WithOpName("scale"), scale, BaseType(sum.dtype()));
  return ops::Mul(s.WithOpName("value"), sum, scale_t);
}

}  // namespace losses
}  // namespace dflow
