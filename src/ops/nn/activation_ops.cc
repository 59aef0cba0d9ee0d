// Relu, Relu6, Elu, Selu, Softplus; their gradient kernels ReluGrad, Relu6Grad, EluGrad,
// SeluGrad, SoftplusGrad (TensorFlow's names, inputs and formulas); and their gradients.
#include <cmath>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/nn/nn_grad_util.h"
#include "ops/nn/nn_ops.h"

namespace dflow {
namespace {

// SELU's constants (Klambauer et al. 2017), as TensorFlow uses them.
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

struct Relu {
  template <typename T>
  static T Apply(T x) {
    return x < T(0) ? T(0) : x;
  }
};
struct Relu6 {
  template <typename T>
  static T Apply(T x) {
    return x < T(0) ? T(0) : (x > T(6) ? T(6) : x);
  }
};
// exp(x) - 1 rather than expm1(x), as TensorFlow's kernels compute it: a tiny negative input
// gives an output of 0 (not a tiny negative one), which the gradient kernels (outputs < 0) see.
struct Elu {
  template <typename T>
  static T Apply(T x) {
    return x < T(0) ? std::exp(x) - T(1) : x;
  }
};
struct Selu {
  template <typename T>
  static T Apply(T x) {
    return x < T(0) ? T(kSeluScale * kSeluAlpha) * (std::exp(x) - T(1)) : T(kSeluScale) * x;
  }
};
struct Softplus {  // log(1 + e^x) without overflow
  template <typename T>
  static T Apply(T x) {
    return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
};

// Gradient kernels: (incoming gradient g, the forward input or output v) -> backprop.
struct ReluGrad {
  template <typename T>
  static T Apply(T g, T features) {
    return features > T(0) ? g : T(0);
  }
};
struct Relu6Grad {
  template <typename T>
  static T Apply(T g, T features) {
    return features > T(0) && features < T(6) ? g : T(0);
  }
};
struct EluGrad {
  template <typename T>
  static T Apply(T g, T outputs) {
    return outputs < T(0) ? g * (outputs + T(1)) : g;
  }
};
struct SeluGrad {
  template <typename T>
  static T Apply(T g, T outputs) {
    return outputs < T(0) ? g * (outputs + T(kSeluScale * kSeluAlpha)) : g * T(kSeluScale);
  }
};
struct SoftplusGrad {
  template <typename T>
  static T Apply(T g, T features) {
    return g / (T(1) + std::exp(-features));
  }
};

template <typename F, typename T>
class ActivationOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &out));
    const T* in = x.data<T>();
    T* o = out->data<T>();  // may be `in`: element i is read before it is written
    const int64_t n = x.NumElements();
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) o[i] = F::Apply(in[i]);
  }
};

template <typename F, typename T>
class ActivationGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    const Tensor& v = ctx->input(1);
    OP_REQUIRES(ctx, g.shape() == v.shape(),
                errors::InvalidArgument(type_string(), " '", name(), "': gradients and ", node().op_def->inputs[1].name,
                                        " must have the same shape, got ", g.shape().DebugString(), " and ",
                                        v.shape().DebugString()));
    Tensor* out = nullptr;
    // The incoming gradient's buffer, if nobody else holds it, else the forward value's.
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, g.shape(), &out));
    const T* gd = g.data<T>();
    const T* vd = v.data<T>();
    T* o = out->data<T>();  // may be gd or vd: element i of both is read before it is written
    const int64_t n = g.NumElements();
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) o[i] = F::Apply(gd[i], vd[i]);
  }
};

// Both inputs have one shape: merge what is known of each.
Status SameShapeBinary(InferenceContext* c) {
  auto merged = c->input(0).MergeWith(c->input(1));
  if (!merged.ok()) {
    return errors::InvalidArgument("gradients and ", c->node().op_def->inputs[1].name,
                                   " must have the same shape, got ", c->input(0).DebugString(), " and ",
                                   c->input(1).DebugString());
  }
  c->set_output(0, *merged);
  return absl::OkStatus();
}

template <typename F>
void RegisterActivation(const char* op, const char* doc) {
  RegisterOp(OpDefBuilder(op)
                 .Input("features: T")
                 .Output("activations: T")
                 .Attr("T: {float, double}")
                 .SetShapeFn(UnchangedShape)
                 .Doc(doc));
  RegisterKernel<ActivationOp<F, float>>(KernelBuilder(op).TypeConstraint<float>("T"));
  RegisterKernel<ActivationOp<F, double>>(KernelBuilder(op).TypeConstraint<double>("T"));
}

// `second` names the forward tensor the gradient kernel reads: "features" or "outputs".
template <typename F>
void RegisterActivationGrad(const char* op, const char* second, const char* doc) {
  RegisterOp(OpDefBuilder(op)
                 .Input("gradients: T")
                 .Input(absl::StrCat(second, ": T"))
                 .Output("backprops: T")
                 .Attr("T: {float, double}")
                 .SetShapeFn(SameShapeBinary)
                 .Doc(doc));
  RegisterKernel<ActivationGradOp<F, float>>(KernelBuilder(op).TypeConstraint<float>("T"));
  RegisterKernel<ActivationGradOp<F, double>>(KernelBuilder(op).TypeConstraint<double>("T"));
}

// The gradient of an activation is its *Grad kernel on g and the forward input or output.
GradFn ActivationGradient(const char* grad_op, bool from_output) {
  return [grad_op, from_output](GradContext* c) {
    const NodeOut& v = from_output ? c->outputs[0] : c->inputs[0];
    c->grad_inputs[0] = c->b->Op(grad_op, {c->GradOrZeros(0), v});
    return c->b->status();
  };
}

// ReluGrad and Relu6Grad are linear in `gradients` with a piecewise-constant mask of
// `features`: d/d gradients = the same kernel on the incoming gradient, d/d features = 0.
GradFn MaskGradGradient(const char* grad_op) {
  return [grad_op](GradContext* c) {
    c->grad_inputs[0] = c->b->Op(grad_op, {c->GradOrZeros(0), c->inputs[1]});
    c->grad_inputs[1] = ZerosLike(c->b, c->inputs[1]);
    return c->b->status();
  };
}

// EluGrad(g, y) and SeluGrad(g, y) are linear in g with a factor that depends on y only where
// y < 0 (y + 1, resp. y + scale * alpha): d/dg is the same kernel on the incoming gradient,
// d/dy = g * incoming where y < 0, else 0 (TensorFlow's _EluGradGrad and _SeluGradGrad).
Status OutputGradGradient(const char* grad_op, GradContext* c) {
  GraphBuilder* b = c->b;
  const NodeOut gg = c->GradOrZeros(0), g = c->inputs[0], y = c->inputs[1];
  c->grad_inputs[0] = b->Op(grad_op, {gg, y});
  NodeOut negative = b->Op("Less", {y, b->Scalar(ValueType(y), 0)});
  c->grad_inputs[1] = b->Op("Select", {negative, b->Op("Mul", {g, gg}), ZerosLike(b, y)});
  return b->status();
}

// SoftplusGrad(g, x) = g * sigmoid(x): d/dg = SoftplusGrad(incoming, x), d/dx = incoming * g *
// sigmoid'(x), with sigmoid'(x) = 1 / (exp(-x) + 2 + exp(x)).
Status SoftplusGradGradient(GradContext* c) {
  GraphBuilder* b = c->b;
  const NodeOut gg = c->GradOrZeros(0), g = c->inputs[0], x = c->inputs[1];
  c->grad_inputs[0] = b->Op("SoftplusGrad", {gg, x});
  NodeOut denom = b->Op("AddV2", {b->Op("AddV2", {b->Op("Exp", {b->Op("Neg", {x})}), b->Scalar(ValueType(x), 2)}),
                                  b->Op("Exp", {x})});
  c->grad_inputs[1] = b->Op("RealDiv", {b->Op("Mul", {gg, g}), denom});
  return b->status();
}

}  // namespace

void RegisterActivationOps() {
  RegisterActivation<Relu>("Relu", "max(features, 0) element-wise.");
  RegisterActivation<Relu6>("Relu6", "min(max(features, 0), 6) element-wise.");
  RegisterActivation<Elu>("Elu", "exp(features) - 1 where features < 0, else features.");
  RegisterActivation<Selu>("Selu", "scale * alpha * (exp(features) - 1) where features < 0, else scale * features.");
  RegisterActivation<Softplus>("Softplus", "log(exp(features) + 1) element-wise.");

  RegisterActivationGrad<ReluGrad>("ReluGrad", "features", "gradients * (features > 0).");
  RegisterActivationGrad<Relu6Grad>("Relu6Grad", "features", "gradients * (0 < features < 6).");
  RegisterActivationGrad<EluGrad>("EluGrad", "outputs", "gradients * (outputs + 1) where outputs < 0, else gradients.");
  RegisterActivationGrad<SeluGrad>("SeluGrad", "outputs",
                                   "gradients * (outputs + scale * alpha) where outputs < 0, else gradients * scale.");
  RegisterActivationGrad<SoftplusGrad>("SoftplusGrad", "features", "gradients / (1 + exp(-features)).");

  // TensorFlow's choices of forward tensor: Relu, Relu6, Elu and Selu read the output.
  RegisterGradient("Relu", ActivationGradient("ReluGrad", /*from_output=*/true));
  RegisterGradient("Relu6", ActivationGradient("Relu6Grad", /*from_output=*/true));
  RegisterGradient("Elu", ActivationGradient("EluGrad", /*from_output=*/true));
  RegisterGradient("Selu", ActivationGradient("SeluGrad", /*from_output=*/true));
  RegisterGradient("Softplus", ActivationGradient("SoftplusGrad", /*from_output=*/false));
  RegisterGradient("ReluGrad", MaskGradGradient("ReluGrad"));
  RegisterGradient("Relu6Grad", MaskGradGradient("Relu6Grad"));
  RegisterGradient("EluGrad", [](GradContext* c) { return OutputGradGradient("EluGrad", c); });
  RegisterGradient("SeluGrad", [](GradContext* c) { return OutputGradGradient("SeluGrad", c); });
  RegisterGradient("SoftplusGrad", SoftplusGradGradient);
}

}  // namespace dflow
