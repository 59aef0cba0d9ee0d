// DivNoNan, MulNoNan, Xdivy, Xlogy: TensorFlow's guarded arithmetic (the losses of
// tf.compat.v1.losses divide with DivNoNan), with NumPy broadcasting and TensorFlow's gradients.
#include <cmath>

#include "framework/shape_inference.h"
#include "ops/math/cwise_ops.h"
#include "ops/math/grad_util.h"
#include "ops/math/math_ops.h"

namespace dflow {
namespace {

// 0 where y == 0 (even when x is inf or NaN), x / y elsewhere.
struct DivNoNanF {
  template <typename T>
  static T Apply(const T& x, const T& y) {
    return y == T{0} ? T{0} : x / y;
  }
};
// 0 where y == 0 (even when x is inf or NaN), x * y elsewhere.
struct MulNoNanF {
  template <typename T>
  static T Apply(const T& x, const T& y) {
    return y == T{0} ? T{0} : x * y;
  }
};
// 0 where x == 0, x / y elsewhere.
struct XdivyF {
  template <typename T>
  static T Apply(const T& x, const T& y) {
    return x == T{0} ? T{0} : x / y;
  }
};
// 0 where x == 0, x * log(y) elsewhere.
struct XlogyF {
  template <typename T>
  static T Apply(const T& x, const T& y) {
    return x == T{0} ? T{0} : x * std::log(y);
  }
};

template <typename F>
void RegisterGuardedOp(const char* name, const char* doc) {
  RegisterOp(OpDefBuilder(name)
                 .Input("x: T")
                 .Input("y: T")
                 .Output("z: T")
                 .Attr("T: {float, double}")
                 .SetShapeFn(BroadcastBinaryShape)
                 .Doc(doc));
  RegisterKernel<BinaryOpKernel<F, float, float>>(KernelBuilder(name).TypeConstraint<float>("T"));
  RegisterKernel<BinaryOpKernel<F, double, double>>(KernelBuilder(name).TypeConstraint<double>("T"));
}

using namespace math_grad;  // NOLINT: the helpers of this family's gradients

void RegisterGuardedGradients() {
  // TensorFlow's _DivNoNanGrad: dx = div_no_nan(g, y), dy = g * div_no_nan(div_no_nan(-x, y), y).
  RegisterGradient("DivNoNan", [](GradContext* c) {
    NodeOut g = c->grad_outputs[0];
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    const NodeOut& x = c->inputs[0];
    const NodeOut& y = c->inputs[1];
    NodeOut gx = b->Op("DivNoNan", {g, y});
    NodeOut gy = b->Op("Mul", {g, b->Op("DivNoNan", {b->Op("DivNoNan", {b->Op("Neg", {x}), y}), y})});
    SetBroadcastGrads(c, gx, gy);
    return absl::OkStatus();
  });
  // _MulNoNanGrad: dx = mul_no_nan(g, y), dy = mul_no_nan(x, g).
  RegisterGradient("MulNoNan", [](GradContext* c) {
    NodeOut g = c->grad_outputs[0];
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    SetBroadcastGrads(c, b->Op("MulNoNan", {g, c->inputs[1]}), b->Op("MulNoNan", {c->inputs[0], g}));
    return absl::OkStatus();
  });
  // _XdivyGrad: dx = xdivy(x != 0, y) * g, dy = xdivy(-x, y^2) * g.
  RegisterGradient("Xdivy", [](GradContext* c) {
    NodeOut g = c->grad_outputs[0];
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    const NodeOut& x = c->inputs[0];
    const NodeOut& y = c->inputs[1];
    const DType t = ValueType(x);
    NodeOut not_zero = b->Op("Cast", {b->Op("NotEqual", {x, b->Scalar(t, 0)})}, {{"DstT", t}});
    NodeOut gx = b->Op("Mul", {b->Op("Xdivy", {not_zero, y}), g});
    NodeOut gy = b->Op("Mul", {b->Op("Xdivy", {b->Op("Neg", {x}), b->Op("Square", {y})}), g});
    SetBroadcastGrads(c, gx, gy);
    return absl::OkStatus();
  });
  // _XLogyGrad: dx = xlogy(x != 0, y) * g, dy = xdivy(x, y) * g.
  RegisterGradient("Xlogy", [](GradContext* c) {
    NodeOut g = c->grad_outputs[0];
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    const NodeOut& x = c->inputs[0];
    const NodeOut& y = c->inputs[1];
    const DType t = ValueType(x);
    NodeOut not_zero = b->Op("Cast", {b->Op("NotEqual", {x, b->Scalar(t, 0)})}, {{"DstT", t}});
    NodeOut gx = b->Op("Mul", {b->Op("Xlogy", {not_zero, y}), g});
    NodeOut gy = b->Op("Mul", {b->Op("Xdivy", {x, y}), g});
    SetBroadcastGrads(c, gx, gy);
    return absl::OkStatus();
  });
}

}  // namespace

void RegisterCompatMathOps() {
  RegisterGuardedOp<DivNoNanF>("DivNoNan", "x / y element-wise with broadcasting, 0 where y is 0.");
  RegisterGuardedOp<MulNoNanF>("MulNoNan",
                               "x * y element-wise with broadcasting, 0 where y is 0 (even for inf/NaN x).");
  RegisterGuardedOp<XdivyF>("Xdivy", "x / y element-wise with broadcasting, 0 where x is 0.");
  RegisterGuardedOp<XlogyF>("Xlogy", "x * log(y) element-wise with broadcasting, 0 where x is 0.");
  RegisterGuardedGradients();
}

}  // namespace dflow
