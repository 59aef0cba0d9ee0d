// The optimizer update ops on reference variables (TensorFlow's Apply* family): their OpDefs and
// shape functions. The kernels are in apply_kernels.cc.
//
// Every op takes its state variables (var, accum, m, v, ...) as Ref(T) inputs first, then value
// inputs that are either scalars (hyperparameters) or tensors of var's shape (the gradient), and
// outputs the reference to var. None of them is differentiable.
#include "ops/training/training_ops.h"

#include "absl/strings/str_cat.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/register_all.h"
#include "ops/training/apply_util.h"

namespace dflow {
namespace {

constexpr char kTypes[] = "T: {float, double}";
constexpr char kLocking[] = "use_locking: bool = false";

}  // namespace

void RegisterTrainingOps() {
  RegisterOp(OpDefBuilder("ApplyGradientDescent")
                 .Input("var: Ref(T)")
                 .Input("alpha: T")
                 .Input("delta: T")
                 .Output("out: Ref(T)")
                 .Attr(kTypes)
                 .Attr(kLocking)
                 .SetShapeFn(ApplyShape({2}, {1}))
                 .Doc("var -= alpha * delta."));
  RegisterOp(OpDefBuilder("ApplyMomentum")
                 .Input("var: Ref(T)")
                 .Input("accum: Ref(T)")
                 .Input("lr: T")
                 .Input("grad: T")
                 .Input("momentum: T")
                 .Output("out: Ref(T)")
                 .Attr(kTypes)
                 .Attr(kLocking)
                 .Attr("use_nesterov: bool = false")
                 .SetShapeFn(ApplyShape({1, 3}, {2, 4}))
                 .Doc("accum = accum * momentum + grad; var -= lr * accum (Nesterov: var -= lr * grad + "
                      "lr * momentum * accum)."));
  RegisterOp(OpDefBuilder("ApplyAdagrad")
                 .Input("var: Ref(T)")
                 .Input("accum: Ref(T)")
                 .Input("lr: T")
                 .Input("grad: T")
                 .Output("out: Ref(T)")
                 .Attr(kTypes)
                 .Attr(kLocking)
                 .Attr("update_slots: bool = true")
                 .SetShapeFn(ApplyShape({1, 3}, {2}))
                 .Doc("accum += grad * grad (when update_slots); var -= lr * grad / sqrt(accum)."));
  RegisterOp(OpDefBuilder("ApplyAdam")
                 .Input("var: Ref(T)")
                 .Input("m: Ref(T)")
                 .Input("v: Ref(T)")
                 .Input("beta1_power: T")
                 .Input("beta2_power: T")
                 .Input("lr: T")
                 .Input("beta1: T")
                 .Input("beta2: T")
                 .Input("epsilon: T")
                 .Input("grad: T")
                 .Output("out: Ref(T)")
                 .Attr(kTypes)
                 .Attr(kLocking)
                 .Attr("use_nesterov: bool = false")
                 .SetShapeFn(ApplyShape({1, 2, 9}, {3, 4, 5, 6, 7, 8}))
                 .Doc("lr_t = lr * sqrt(1 - beta2_power) / (1 - beta1_power); m += (grad - m) * (1 - beta1); "
                      "v += (grad^2 - v) * (1 - beta2); var -= lr_t * m / (sqrt(v) + epsilon)."));
  RegisterOp(OpDefBuilder("ApplyRMSProp")
                 .Input("var: Ref(T)")
                 .Input("ms: Ref(T)")
                 .Input("mom: Ref(T)")
                 .Input("lr: T")
                 .Input("rho: T")
                 .Input("momentum: T")
                 .Input("epsilon: T")
                 .Input("grad: T")
                 .Output("out: Ref(T)")
                 .Attr(kTypes)
                 .Attr(kLocking)
                 .SetShapeFn(ApplyShape({1, 2, 7}, {3, 4, 5, 6}))
                 .Doc("ms = rho * ms + (1 - rho) * grad^2; mom = momentum * mom + lr * grad / sqrt(ms + epsilon); "
                      "var -= mom."));
  RegisterOp(OpDefBuilder("ApplyCenteredRMSProp")
                 .Input("var: Ref(T)")
                 .Input("mg: Ref(T)")
                 .Input("ms: Ref(T)")
                 .Input("mom: Ref(T)")
                 .Input("lr: T")
                 .Input("rho: T")
                 .Input("momentum: T")
                 .Input("epsilon: T")
                 .Input("grad: T")
                 .Output("out: Ref(T)")
                 .Attr(kTypes)
                 .Attr(kLocking)
                 .SetShapeFn(ApplyShape({1, 2, 3, 8}, {4, 5, 6, 7}))
                 .Doc("mg = rho * mg + (1 - rho) * grad; ms = rho * ms + (1 - rho) * grad^2; "
                      "mom = momentum * mom + lr * grad / sqrt(ms - mg^2 + epsilon); var -= mom."));
  RegisterOp(OpDefBuilder("ApplyFtrl")
                 .Input("var: Ref(T)")
                 .Input("accum: Ref(T)")
                 .Input("linear: Ref(T)")
                 .Input("grad: T")
                 .Input("lr: T")
                 .Input("l1: T")
                 .Input("l2: T")
                 .Input("lr_power: T")
                 .Output("out: Ref(T)")
                 .Attr(kTypes)
                 .Attr(kLocking)
                 .Attr("multiply_linear_by_lr: bool = false")
                 .SetShapeFn(ApplyShape({1, 2, 3}, {4, 5, 6, 7}))
                 .Doc("The FTRL-proximal update of var, accum and linear."));
  for (const char* op : {"ApplyGradientDescent", "ApplyMomentum", "ApplyAdagrad", "ApplyAdam", "ApplyRMSProp",
                         "ApplyCenteredRMSProp", "ApplyFtrl"}) {
    RegisterNoGradient(op);
  }
  RegisterApplyKernels();
  RegisterProximalApplyOps();
  RegisterSparseApplyOps();
}

}  // namespace dflow
