// Gradient functions of the element-wise math ops, Cast, Select/SelectV2 and AddN, and the
// RegisterNoGradient declarations of the ops that are piecewise constant or not real-valued
// (comparisons, logical ops, Floor, Ceil, Round, FloorDiv, BroadcastGradientArgs); Sign's is zeros.
//
// Binary ops sum their gradients back to the shapes of broadcast operands (grad_util.h).
#include "ops/math/grad_util.h"
#include "ops/math/math_ops.h"

namespace dflow {
namespace {

using namespace math_grad;  // NOLINT: the helpers of this family's gradients

// d loss / d output 0, or null when no gradient reaches the op (its inputs then get none).
NodeOut Grad(GradContext* c) { return c->grad_outputs[0]; }

NodeOut Scalar(GradContext* c, double v) { return c->b->Scalar(ValueType(c->outputs[0]), v); }

void RegisterBinaryGradients() {
  auto add = [](GradContext* c) {
    if (NodeOut g = Grad(c); g.node != nullptr) SetBroadcastGrads(c, g, g);
    return absl::OkStatus();
  };
  RegisterGradient("Add", add);
  RegisterGradient("AddV2", add);
  RegisterGradient("Sub", [](GradContext* c) {
    if (NodeOut g = Grad(c); g.node != nullptr) SetBroadcastGrads(c, g, c->b->Op("Neg", {g}));
    return absl::OkStatus();
  });
  RegisterGradient("Mul", [](GradContext* c) {
    NodeOut g = Grad(c);
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    SetBroadcastGrads(c, b->Op("Mul", {g, c->inputs[1]}), b->Op("Mul", {c->inputs[0], g}));
    return absl::OkStatus();
  });
  // d(x/y) = dx / y - dy * x / y^2, with the forward op's own division (Div or RealDiv).
  auto div = [](GradContext* c) {
    NodeOut g = Grad(c);
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    const std::string& op = c->node->op();
    const NodeOut& x = c->inputs[0];
    const NodeOut& y = c->inputs[1];
    NodeOut gx = b->Op(op, {g, y});
    NodeOut gy = b->Op("Mul", {g, b->Op(op, {b->Op(op, {b->Op("Neg", {x}), y}), y})});
    SetBroadcastGrads(c, gx, gy);
    return absl::OkStatus();
  };
  RegisterGradient("Div", div);
  RegisterGradient("RealDiv", div);
  // d(x^y) = y x^(y-1) dx + x^y log(x) dy; log(x) is taken as 0 where x <= 0 (TensorFlow's rule).
  RegisterGradient("Pow", [](GradContext* c) {
    NodeOut g = Grad(c);
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    const NodeOut& x = c->inputs[0];
    const NodeOut& y = c->inputs[1];
    NodeOut gx = b->Op("Mul", {b->Op("Mul", {g, y}), b->Op("Pow", {x, b->Op("Sub", {y, Scalar(c, 1)})})});
    NodeOut gy;
    if (IsFloating(ValueType(x))) {
      NodeOut positive = b->Op("Greater", {x, Scalar(c, 0)});
      NodeOut safe_x = b->Op("SelectV2", {positive, x, Scalar(c, 1)});
      NodeOut log_x = b->Op("SelectV2", {positive, b->Op("Log", {safe_x}), Scalar(c, 0)});
      gy = b->Op("Mul", {b->Op("Mul", {g, c->outputs[0]}), log_x});
    }
    SetBroadcastGrads(c, gx, gy);
    return absl::OkStatus();
  });
  // x mod y = x - floor(x / y) * y.
  RegisterGradient("FloorMod", [](GradContext* c) {
    NodeOut g = Grad(c);
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    NodeOut q = b->Op("FloorDiv", {c->inputs[0], c->inputs[1]});
    SetBroadcastGrads(c, g, b->Op("Mul", {g, b->Op("Neg", {q})}));
    return absl::OkStatus();
  });
  // The selected input gets the gradient; ties go to x.
  auto select_by = [](const char* compare) {
    return [compare](GradContext* c) {
      NodeOut g = Grad(c);
      if (g.node == nullptr) return absl::OkStatus();
      GraphBuilder* b = c->b;
      NodeOut x_wins = b->Op(compare, {c->inputs[0], c->inputs[1]});
      NodeOut zero = Scalar(c, 0);
      SetBroadcastGrads(c, b->Op("SelectV2", {x_wins, g, zero}), b->Op("SelectV2", {x_wins, zero, g}));
      return absl::OkStatus();
    };
  };
  RegisterGradient("Maximum", select_by("GreaterEqual"));
  RegisterGradient("Minimum", select_by("LessEqual"));
  RegisterGradient("SquaredDifference", [](GradContext* c) {
    NodeOut g = Grad(c);
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    NodeOut d = b->Op("Mul", {Scalar(c, 2), b->Op("Mul", {g, b->Op("Sub", {c->inputs[0], c->inputs[1]})})});
    SetBroadcastGrads(c, d, b->Op("Neg", {d}));
    return absl::OkStatus();
  });
}

// A unary op whose gradient is g * f(x, y), built by `factor`.
template <typename Factor>
void RegisterUnaryGradient(const char* op, Factor factor) {
  RegisterGradient(op, [factor](GradContext* c) {
    NodeOut g = Grad(c);
    if (g.node == nullptr) return absl::OkStatus();
    c->grad_inputs[0] = c->b->Op("Mul", {g, factor(c, c->inputs[0], c->outputs[0])});
    return absl::OkStatus();
  });
}

void RegisterUnaryGradients() {
  RegisterGradient("Neg", [](GradContext* c) {
    if (NodeOut g = Grad(c); g.node != nullptr) c->grad_inputs[0] = c->b->Op("Neg", {g});
    return absl::OkStatus();
  });
  using N = const NodeOut&;
  RegisterUnaryGradient("Exp", [](GradContext*, N, N y) { return y; });
  RegisterUnaryGradient("Log", [](GradContext* c, N x, N) { return c->b->Op("Reciprocal", {x}); });
  RegisterUnaryGradient("Abs", [](GradContext* c, N x, N) { return c->b->Op("Sign", {x}); });
  RegisterUnaryGradient("Square", [](GradContext* c, N x, N) { return c->b->Op("Mul", {Scalar(c, 2), x}); });
  RegisterUnaryGradient("Sqrt", [](GradContext* c, N, N y) { return c->b->Op("RealDiv", {Scalar(c, 0.5), y}); });
  // d(x^-1/2) = -1/2 x^-3/2 = -1/2 y^3
  RegisterUnaryGradient("Rsqrt", [](GradContext* c, N, N y) {
    GraphBuilder* b = c->b;
    return b->Op("Mul", {Scalar(c, -0.5), b->Op("Mul", {b->Op("Square", {y}), y})});
  });
  RegisterUnaryGradient("Reciprocal",
                        [](GradContext* c, N, N y) { return c->b->Op("Neg", {c->b->Op("Square", {y})}); });
  RegisterUnaryGradient("Log1p", [](GradContext* c, N x, N) {
    return c->b->Op("Reciprocal", {c->b->Op("AddV2", {x, Scalar(c, 1)})});
  });
  RegisterUnaryGradient("Tanh", [](GradContext* c, N, N y) {
    return c->b->Op("Sub", {Scalar(c, 1), c->b->Op("Square", {y})});
  });
  RegisterUnaryGradient("Sigmoid", [](GradContext* c, N, N y) {
    return c->b->Op("Mul", {y, c->b->Op("Sub", {Scalar(c, 1), y})});
  });
}

void RegisterOtherGradients() {
  // Between floating types the gradient is cast back; other casts stop the gradient.
  RegisterGradient("Cast", [](GradContext* c) {
    NodeOut g = Grad(c);
    const DType src = ValueType(c->inputs[0]);
    if (g.node != nullptr && IsFloating(src) && IsFloating(ValueType(c->outputs[0]))) {
      c->grad_inputs[0] = c->b->Op("Cast", {g}, {{"DstT", src}});
    }
    return absl::OkStatus();
  });
  RegisterGradient("Select", [](GradContext* c) {
    NodeOut g = Grad(c);
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    NodeOut zeros = ConstantLike(b, c->inputs[1], 0);
    c->grad_inputs[1] = b->Op("Select", {c->inputs[0], g, zeros});
    c->grad_inputs[2] = b->Op("Select", {c->inputs[0], zeros, g});
    return absl::OkStatus();
  });
  RegisterGradient("SelectV2", [](GradContext* c) {
    NodeOut g = Grad(c);
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    NodeOut zero = Scalar(c, 0);
    const PartialTensorShape& full = c->node->output_shape(0);
    NodeOut gt = b->Op("SelectV2", {c->inputs[0], g, zero});
    NodeOut ge = b->Op("SelectV2", {c->inputs[0], zero, g});
    c->grad_inputs[1] = SumToShapeOf(b, gt, c->inputs[1], full);
    c->grad_inputs[2] = SumToShapeOf(b, ge, c->inputs[2], full);
    return absl::OkStatus();
  });
  // As TensorFlow's: zeros of x's shape (a gradient, not an absent one).
  RegisterGradient("Sign", [](GradContext* c) {
    c->grad_inputs[0] = c->b->Op("ZerosLike", {c->inputs[0]});
    return absl::OkStatus();
  });
  RegisterGradient("AddN", [](GradContext* c) {
    if (NodeOut g = Grad(c); g.node != nullptr) {
      for (NodeOut& gi : c->grad_inputs) gi = g;
    }
    return absl::OkStatus();
  });
}

}  // namespace

void RegisterElementwiseGradients() {
  RegisterBinaryGradients();
  RegisterUnaryGradients();
  RegisterOtherGradients();
  for (const char* op : {"FloorDiv", "Greater", "Less", "GreaterEqual", "LessEqual", "Equal", "NotEqual", "LogicalAnd",
                         "LogicalOr", "LogicalNot", "Floor", "Ceil", "Round", "BroadcastGradientArgs"}) {
    RegisterNoGradient(op);
  }
}

}  // namespace dflow
