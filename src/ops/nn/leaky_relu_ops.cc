// LeakyRelu and LeakyReluGrad (TensorFlow's names, inputs and float attr alpha = 0.2), and their
// gradients (TensorFlow's _LeakyReluGrad and _LeakyReluGradGrad).
//   LeakyRelu:     features where features > 0, else features * alpha (any alpha: no max()).
//   LeakyReluGrad: gradients where features > 0, else gradients * alpha.
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/nn/nn_grad_util.h"
#include "ops/nn/nn_ops.h"

namespace dflow {
namespace {

template <typename T>
class LeakyReluOp : public OpKernel {
 public:
  explicit LeakyReluOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("alpha", &alpha_)); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &out));
    const T* in = x.data<T>();
    T* o = out->data<T>();
    const T a = static_cast<T>(alpha_);
    const int64_t n = x.NumElements();
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) o[i] = in[i] > T(0) ? in[i] : in[i] * a;
  }

 private:
  float alpha_ = 0.2f;
};

template <typename T>
class LeakyReluGradOp : public OpKernel {
 public:
  explicit LeakyReluGradOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("alpha", &alpha_)); }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& g = ctx->input(0);
    const Tensor& x = ctx->input(1);
    OP_REQUIRES(ctx, g.shape() == x.shape(),
                errors::InvalidArgument(type_string(), " '", name(),
                                        "': gradients and features must have the same "
                                        "shape, got ",
                                        g.shape().DebugString(), " and ", x.shape().DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, g.shape(), &out));
    const T* gd = g.data<T>();
    const T* xd = x.data<T>();
    T* o = out->data<T>();
    const T a = static_cast<T>(alpha_);
    const int64_t n = g.NumElements();
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) o[i] = xd[i] > T(0) ? gd[i] : gd[i] * a;
  }

 private:
  float alpha_ = 0.2f;
};

Status SameShapeBinary(InferenceContext* c) {
  auto merged = c->input(0).MergeWith(c->input(1));
  if (!merged.ok()) {
    return errors::InvalidArgument("gradients and features must have the same shape, got ", c->input(0).DebugString(),
                                   " and ", c->input(1).DebugString());
  }
  c->set_output(0, *merged);
  return absl::OkStatus();
}

}  // namespace

void RegisterLeakyReluOps() {
  RegisterOp(OpDefBuilder("LeakyRelu")
                 .Input("features: T")
                 .Output("activations: T")
                 .Attr("alpha: float = 0.2")
                 .Attr("T: {float, double} = DT_FLOAT")
                 .SetShapeFn(UnchangedShape)
                 .Doc("features where features > 0, else alpha * features."));
  RegisterOp(OpDefBuilder("LeakyReluGrad")
                 .Input("gradients: T")
                 .Input("features: T")
                 .Output("backprops: T")
                 .Attr("alpha: float = 0.2")
                 .Attr("T: {float, double} = DT_FLOAT")
                 .SetShapeFn(SameShapeBinary)
                 .Doc("gradients where features > 0, else alpha * gradients."));
  RegisterKernel<LeakyReluOp<float>>(KernelBuilder("LeakyRelu").TypeConstraint<float>("T"));
  RegisterKernel<LeakyReluOp<double>>(KernelBuilder("LeakyRelu").TypeConstraint<double>("T"));
  RegisterKernel<LeakyReluGradOp<float>>(KernelBuilder("LeakyReluGrad").TypeConstraint<float>("T"));
  RegisterKernel<LeakyReluGradOp<double>>(KernelBuilder("LeakyReluGrad").TypeConstraint<double>("T"));
  RegisterGradient("LeakyRelu", [](GradContext* c) {
    c->grad_inputs[0] = c->b->Op("LeakyReluGrad", {c->GradOrZeros(0), c->inputs[0]}, CopyAttrs(c->node, {"alpha"}));
    return c->b->status();
  });
  RegisterGradient("LeakyReluGrad", [](GradContext* c) {
    c->grad_inputs[0] = c->b->Op("LeakyReluGrad", {c->GradOrZeros(0), c->inputs[1]}, CopyAttrs(c->node, {"alpha"}));
    c->grad_inputs[1] = ZerosLike(c->b, c->inputs[1]);
    return c->b->status();
  });
}

}  // namespace dflow
