// Training: optimizers, the global step, learning-rate schedules and losses — TensorFlow 1.x's
// tf.train and tf.losses.
//
//   Scope root = Scope::NewRootScope();
//   Variable w = Variable::Create(root.WithOpName("w"), {1}, DT_FLOAT, init::RandomUniform(-1, 1));
//   Output loss = losses::MeanSquaredError(root, y, w * x);
//   Output step = train::CreateGlobalStep(root);
//   Output lr = train::ExponentialDecay(root, 0.5f, step, 100, 0.96, /*staircase=*/true);
//   Operation train_op = train::GradientDescentOptimizer(lr).Minimize(root, loss, {}, step);
//   Operation init = GlobalVariablesInitializer(root);   // after Minimize: it includes the slots
//   session.Run({init});
//   for (...) session.Run({{x, xs}, {y, ys}}, {}, {train_op});
//
// Optimizers update reference variables (Variable::ref(), VariableV2) with the Apply* ops. The
// variables they create (slots such as "<var>/Momentum", Adam's "beta1_power") are added to the
// scope's initializers, so GlobalVariablesInitializer built after Minimize/ApplyGradients
// initializes them. Errors are recorded in the scope (scope.status()); the functions then return
// invalid Outputs/Operations. An optimizer object is used by one thread at a time.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "dflow/ops.h"
#include "dflow/variable.h"

namespace dflow::optimizers {
class Optimizer;
}

namespace dflow::train {

class Optimizer {
 public:
  virtual ~Optimizer();

  // (gradient, variable) pairs: d loss / d var for each variable of var_list — by default every
  // trainable variable of the scope's graph (those made by Variable::Create, of float or double
  // type). A variable is its ref() or its read(). A variable the loss does not depend on gets
  // an invalid gradient. Gradients are built under "<scope prefix>gradients/".
  std::vector<std::pair<Output, Output>> ComputeGradients(const Scope& scope, Output loss,
                                                          std::vector<Output> var_list = {});
  // Applies every pair with a valid gradient (in the name scope "<Name>/", on each variable's
  // device) and returns the op that runs them all, named "<Name>" (or the scope's WithOpName).
  // With a global_step (CreateGlobalStep), that op also adds 1 to it after the updates.
  Operation ApplyGradients(const Scope& scope, const std::vector<std::pair<Output, Output>>& grads_and_vars,
                           Output global_step = {});
  // ComputeGradients, then ApplyGradients.
  Operation Minimize(const Scope& scope, Output loss, std::vector<Output> var_list = {}, Output global_step = {});

  // The slot variable `slot` of `var` ("momentum", "accumulator", "m", "v", "rms", "accum",
  // "linear"), invalid when there is none (yet).
  Output GetSlot(const Output& var, const std::string& slot) const;

 protected:
  Optimizer() = default;
  // Called once by each subclass's constructor; `status` is a bad hyperparameter, which every
  // later call reports.
  void Init(std::shared_ptr<optimizers::Optimizer> impl, Status status);

 private:
  std::shared_ptr<optimizers::Optimizer> impl_;
  Status status_;  // a bad hyperparameter, reported by every call
};

// var -= learning_rate * grad.
class GradientDescentOptimizer : public Optimizer {
 public:
  explicit GradientDescentOptimizer(Input learning_rate, bool use_locking = false);
};

// accum = momentum * accum + grad; var -= learning_rate * accum (Nesterov: see ApplyMomentum).
class MomentumOptimizer : public Optimizer {
 public:
  MomentumOptimizer(Input learning_rate, Input momentum, bool use_nesterov = false, bool use_locking = false);
};

// accum += grad^2; var -= learning_rate * grad / sqrt(accum); accum starts at
// initial_accumulator_value (> 0).
class AdagradOptimizer : public Optimizer {
 public:
  explicit AdagradOptimizer(Input learning_rate, double initial_accumulator_value = 0.1, bool use_locking = false);
};

// Adam (Kingma & Ba) in TensorFlow's form: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t).
class AdamOptimizer : public Optimizer {
 public:
  explicit AdamOptimizer(Input learning_rate = 0.001, double beta1 = 0.9, double beta2 = 0.999, double epsilon = 1e-8,
                         bool use_locking = false);
};

// RMSProp: ms = decay * ms + (1 - decay) * grad^2 (ms starts at 1);
// mom = momentum * mom + lr * grad / sqrt(ms + epsilon); var -= mom. Centered, as TensorFlow's
// `centered=True`: also mg = decay * mg + (1 - decay) * grad (mg starts at 0), and the step
// divides by sqrt(ms - mg^2 + epsilon), an estimate of the gradient's variance.
class RMSPropOptimizer : public Optimizer {
 public:
  explicit RMSPropOptimizer(Input learning_rate, double decay = 0.9, double momentum = 0.0, double epsilon = 1e-10,
                            bool use_locking = false, bool centered = false);
};

// FTRL-proximal (McMahan et al.), as TensorFlow's FtrlOptimizer.
class FtrlOptimizer : public Optimizer {
 public:
  explicit FtrlOptimizer(Input learning_rate, double learning_rate_power = -0.5, double initial_accumulator_value = 0.1,
                         double l1_regularization_strength = 0.0, double l2_regularization_strength = 0.0,
                         bool use_locking = false);
};

// The int64 scalar variable "global_step" (not trainable), initialized to 0 by
// GlobalVariablesInitializer. Returns its reference output.
Output CreateGlobalStep(const Scope& scope);

// learning_rate * decay_rate ^ (global_step / decay_steps), with the exponent floored when
// staircase (learning_rate's dtype; float by default). Built under "ExponentialDecay/".
// decay_steps must be positive.
Output ExponentialDecay(const Scope& scope, Input learning_rate, Output global_step, int64_t decay_steps,
                        double decay_rate, bool staircase = false);

// values[0] while x <= boundaries[0], values[i] while boundaries[i-1] < x <= boundaries[i], and
// values.back() after the last boundary. boundaries are increasing and of x's dtype (an integer x
// needs integral boundaries); there is one more value than boundaries. Built under
// "PiecewiseConstant/".
Output PiecewiseConstant(const Scope& scope, Output x, const std::vector<double>& boundaries,
                         const std::vector<double>& values, DType dtype = DT_FLOAT);

}  // namespace dflow::train

namespace dflow::ops {

// TensorFlow's Apply* ops on reference variables (var, accum, ... are Variable::ref() or
// VariableV2 outputs). Each returns the reference to var.
struct ApplyAttrs {
  bool use_locking = false;
  bool use_nesterov = false;           // ApplyMomentum, ApplyAdam
  bool update_slots = true;            // ApplyAdagrad
  bool multiply_linear_by_lr = false;  // ApplyFtrl
};
Output ApplyGradientDescent(const Scope& scope, Input var, Input alpha, Input delta, const ApplyAttrs& attrs = {});
Output ApplyMomentum(const Scope& scope, Input var, Input accum, Input lr, Input grad, Input momentum,
                     const ApplyAttrs& attrs = {});
Output ApplyAdagrad(const Scope& scope, Input var, Input accum, Input lr, Input grad, const ApplyAttrs& attrs = {});
Output ApplyAdam(const Scope& scope, Input var, Input m, Input v, Input beta1_power, Input beta2_power, Input lr,
                 Input beta1, Input beta2, Input epsilon, Input grad, const ApplyAttrs& attrs = {});
Output ApplyRMSProp(const Scope& scope, Input var, Input ms, Input mom, Input lr, Input rho, Input momentum,
                    Input epsilon, Input grad, const ApplyAttrs& attrs = {});
Output ApplyCenteredRMSProp(const Scope& scope, Input var, Input mg, Input ms, Input mom, Input lr, Input rho,
                            Input momentum, Input epsilon, Input grad, const ApplyAttrs& attrs = {});
Output ApplyFtrl(const Scope& scope, Input var, Input accum, Input linear, Input grad, Input lr, Input l1, Input l2,
                 Input lr_power, const ApplyAttrs& attrs = {});

}  // namespace dflow::ops

namespace dflow::losses {

// Each loss is a scalar: the mean over every element (tf.losses with its default reduction and
// weights 1). Errors (shapes, dtypes, a missing op) are recorded in the scope.

// mean((predictions - labels)^2).
Output MeanSquaredError(const Scope& scope, Input labels, Input predictions);
// mean over the batch of -sum(onehot_labels * log_softmax(logits)), logits [batch, classes].
Output SoftmaxCrossEntropy(const Scope& scope, Input onehot_labels, Input logits);
// The same with integer class labels [batch] (int32 or int64).
Output SparseSoftmaxCrossEntropy(const Scope& scope, Input labels, Input logits);
// mean(max(x, 0) - x * z + log(1 + exp(-|x|))) for logits x and labels z in [0, 1].
Output SigmoidCrossEntropy(const Scope& scope, Input multi_class_labels, Input logits);
// scale * sum over the weights of sum(w^2) / 2 (L2Loss), for weight decay.
Output L2Regularization(const Scope& scope, const std::vector<Output>& weights, double scale);

}  // namespace dflow::losses
