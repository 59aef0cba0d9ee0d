// TanhGrad, SigmoidGrad, SqrtGrad, RsqrtGrad, ReciprocalGrad: the ops TensorFlow's gradient
// functions of Tanh, Sigmoid, Sqrt, Rsqrt and Reciprocal write into its graphs, each computing
// d loss / d x from the forward output y and dy = d loss / d y (TensorFlow's formulas, in its
// order of operations), with TensorFlow's gradients of their own (second derivatives).
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "ops/math/grad_util.h"
#include "ops/math/math_ops.h"

namespace dflow {
namespace {

struct TanhGradF {
  template <typename T>
  static T Apply(T y, T dy) {
    return dy * (T{1} - y * y);
  }
};
struct SigmoidGradF {
  template <typename T>
  static T Apply(T y, T dy) {
    return dy * y * (T{1} - y);
  }
};
struct SqrtGradF {
  template <typename T>
  static T Apply(T y, T dy) {
    return T{0.5} * dy / y;
  }
};
struct RsqrtGradF {
  template <typename T>
  static T Apply(T y, T dy) {
    return T{-0.5} * (dy * y) * (y * y);
  }
};
struct ReciprocalGradF {
  template <typename T>
  static T Apply(T y, T dy) {
    return -dy * y * y;
  }
};

// Both inputs have the same number of elements (TensorFlow's rule for these ops: no broadcasting);
// the output has y's shape.
template <typename F, typename T>
class OutputGradKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& y = ctx->input(0);
    const Tensor& dy = ctx->input(1);
    OP_REQUIRES(ctx, y.NumElements() == dy.NumElements(),
                errors::InvalidArgument(type_string(), " '", name(),
                                        "': The two arguments to a cwise op must have same number of elements, got ",
                                        y.NumElements(), " and ", dy.NumElements()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, y.shape(), &out));
    const T* yd = y.data<T>();
    const T* gd = dy.data<T>();
    T* o = out->data<T>();
    const int64_t n = y.NumElements();
    for (int64_t i = 0; i < n; ++i) o[i] = F::Apply(yd[i], gd[i]);
  }
};

// Output 0 has the shape of y merged with dy's (either may be the better known).
Status OutputGradShape(InferenceContext* c) {
  const PartialTensorShape& y = c->input(0);
  const PartialTensorShape& dy = c->input(1);
  StatusOr<PartialTensorShape> merged = y.MergeWith(dy);
  c->set_output(0, merged.ok() ? *merged : y);
  return absl::OkStatus();
}

template <typename F>
void RegisterOutputGradOp(const char* name, const char* doc) {
  RegisterOp(OpDefBuilder(name)
                 .Input("y: T")
                 .Input("dy: T")
                 .Output("z: T")
                 .Attr("T: {float, double}")
                 .SetShapeFn(OutputGradShape)
                 .Doc(doc));
  RegisterKernel<OutputGradKernel<F, float>>(KernelBuilder(name).TypeConstraint<float>("T"));
  RegisterKernel<OutputGradKernel<F, double>>(KernelBuilder(name).TypeConstraint<double>("T"));
}

NodeOut Scalar(GradContext* c, double v) { return c->b->Scalar(ValueType(c->inputs[0]), v); }

// TensorFlow's second derivatives (math_grad.py: _TanhGradGrad, _SigmoidGradGrad, ...); inputs
// are (a, b) = (y, dy), g the gradient flowing into the op's output.
void RegisterOutputGradGradients() {
  RegisterGradient("TanhGrad", [](GradContext* c) {
    NodeOut g = c->grad_outputs[0];
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    const NodeOut& a = c->inputs[0];
    const NodeOut& bb = c->inputs[1];
    c->grad_inputs[0] = b->Op("Mul", {b->Op("Mul", {b->Op("Mul", {g, Scalar(c, -2.0)}), bb}), a});
    c->grad_inputs[1] = b->Op("TanhGrad", {a, g});
    return absl::OkStatus();
  });
  RegisterGradient("SigmoidGrad", [](GradContext* c) {
    NodeOut g = c->grad_outputs[0];
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    const NodeOut& a = c->inputs[0];
    NodeOut gb = b->Op("Mul", {g, c->inputs[1]});
    c->grad_inputs[0] = b->Op("Sub", {gb, b->Op("Mul", {b->Op("Mul", {Scalar(c, 2.0), gb}), a})});
    c->grad_inputs[1] = b->Op("SigmoidGrad", {a, g});
    return absl::OkStatus();
  });
  RegisterGradient("SqrtGrad", [](GradContext* c) {
    NodeOut g = c->grad_outputs[0];
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    NodeOut ga = b->Op("RealDiv", {g, c->inputs[0]});
    c->grad_inputs[0] = b->Op("Mul", {b->Op("Neg", {ga}), c->outputs[0]});
    c->grad_inputs[1] = b->Op("Mul", {Scalar(c, 0.5), ga});
    return absl::OkStatus();
  });
  RegisterGradient("RsqrtGrad", [](GradContext* c) {
    NodeOut g = c->grad_outputs[0];
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    const NodeOut& a = c->inputs[0];
    c->grad_inputs[0] = b->Op("Mul",
                              {b->Op("Mul", {b->Op("Mul", {Scalar(c, -1.5), g}), c->inputs[1]}), b->Op("Square", {a})});
    c->grad_inputs[1] = b->Op("RsqrtGrad", {a, g});
    return absl::OkStatus();
  });
  RegisterGradient("ReciprocalGrad", [](GradContext* c) {
    NodeOut g = c->grad_outputs[0];
    if (g.node == nullptr) return absl::OkStatus();
    GraphBuilder* b = c->b;
    const NodeOut& a = c->inputs[0];
    c->grad_inputs[0] = b->Op("Mul", {b->Op("Mul", {b->Op("Mul", {g, Scalar(c, -2.0)}), c->inputs[1]}), a});
    c->grad_inputs[1] = b->Op("ReciprocalGrad", {a, g});
    return absl::OkStatus();
  });
}

}  // namespace

void RegisterUnaryGradOps() {
  RegisterOutputGradOp<TanhGradF>("TanhGrad", "dy * (1 - y * y): the gradient of Tanh from its output y.");
  RegisterOutputGradOp<SigmoidGradF>("SigmoidGrad", "dy * y * (1 - y): the gradient of Sigmoid from its output y.");
  RegisterOutputGradOp<SqrtGradF>("SqrtGrad", "0.5 * dy / y: the gradient of Sqrt from its output y.");
  RegisterOutputGradOp<RsqrtGradF>("RsqrtGrad", "-0.5 * dy * y^3: the gradient of Rsqrt from its output y.");
  RegisterOutputGradOp<ReciprocalGradF>("ReciprocalGrad", "-dy * y * y: the gradient of Reciprocal from its output y.");
  RegisterOutputGradGradients();
}

}  // namespace dflow
