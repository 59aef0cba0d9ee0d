// MaxPool, AvgPool, their gradient kernels MaxPoolGrad and AvgPoolGrad, and MaxPoolGradGrad (the
// gradient of MaxPoolGrad), with TensorFlow's inputs and attrs (ksize, strides, padding
// SAME/VALID, data_format NHWC/NCHW), and their gradients.
//
// float runs through oneDNN (pool_dnnl.h); double, empty tensors and anything oneDNN rejects
// run the reference loops (pooling_reference.h).
#include <type_traits>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/nn/nn_grad_util.h"
#include "ops/nn/nn_ops.h"
#include "ops/nn/pool_dnnl.h"
#include "ops/nn/pooling_reference.h"

namespace dflow {
namespace {

bool NonEmpty(const PoolDims& d) {
  return d.batch > 0 && d.depth > 0 && d.rows.in > 0 && d.cols.in > 0 && d.rows.out > 0 && d.cols.out > 0;
}

class PoolOpBase : public OpKernel {
 public:
  PoolOpBase(OpKernelConstruction* c, bool max) : OpKernel(c), dnnl_(max) {
    Status s = ParsePoolAttrs(c->node().attrs, &attrs_);
    if (!s.ok()) c->SetStatus(errors::Annotate(s, absl::StrCat(c->node().op, " '", c->node().name, "': ")));
  }
  bool IsExpensive() const override { return true; }

 protected:
  std::string Prefix() const { return absl::StrCat(type_string(), " '", name(), "': "); }
  Status CheckOutputShaped(const Tensor& t, const char* what, const PoolDims& d) const {
    if (t.shape() == d.OutputShape()) return absl::OkStatus();
    return errors::InvalidArgument(Prefix(), what, " has shape ", t.shape().DebugString(), " but pooling input ",
                                   d.InputShape().DebugString(), " gives ", d.OutputShape().DebugString());
  }

  PoolAttrs attrs_;
  DnnlPool dnnl_;
};

template <typename T, bool kMax>
class PoolOp : public PoolOpBase {
 public:
  explicit PoolOp(OpKernelConstruction* c) : PoolOpBase(c, kMax) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    OP_REQUIRES_ASSIGN(ctx, PoolDims d, MakePoolDims(attrs_, in.shape(), type_string(), name()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, d.OutputShape(), &out));
    if (out->NumElements() == 0) return;
    if constexpr (std::is_same_v<T, float>) {
      if (NonEmpty(d) && dnnl_.Forward(d, in.data<float>(), out->data<float>()).ok()) return;
    }
    if constexpr (kMax) {
      ReferenceMaxPool<T>(d, in.data<T>(), out->data<T>());
    } else {
      ReferenceAvgPool<T>(d, in.data<T>(), out->data<T>());
    }
  }
};

template <typename T>
class MaxPoolGradOp : public PoolOpBase {
 public:
  explicit MaxPoolGradOp(OpKernelConstruction* c) : PoolOpBase(c, true) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    OP_REQUIRES_ASSIGN(ctx, PoolDims d, MakePoolDims(attrs_, in.shape(), type_string(), name()));
    OP_REQUIRES_OK(ctx, CheckOutputShaped(ctx->input(1), "orig_output", d));
    const Tensor& grad = ctx->input(2);
    OP_REQUIRES_OK(ctx, CheckOutputShaped(grad, "grad", d));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in.shape(), &out));
    if (out->NumElements() == 0) return;
    if constexpr (std::is_same_v<T, float>) {
      if (NonEmpty(d) && dnnl_.Backward(d, in.data<float>(), grad.data<float>(), out->data<float>()).ok()) return;
    }
    ReferenceMaxPoolGrad<T>(d, in.data<T>(), grad.data<T>(), out->data<T>());
  }
};

// The gradient of MaxPoolGrad with respect to its `grad`: picks, per window, the element of
// `grad` (shaped like orig_input) at the window's maximum. Reference loop only: it runs in
// second derivatives, not in training steps.
template <typename T>
class MaxPoolGradGradOp : public PoolOpBase {
 public:
  explicit MaxPoolGradGradOp(OpKernelConstruction* c) : PoolOpBase(c, true) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    OP_REQUIRES_ASSIGN(ctx, PoolDims d, MakePoolDims(attrs_, in.shape(), type_string(), name()));
    OP_REQUIRES_OK(ctx, CheckOutputShaped(ctx->input(1), "orig_output", d));
    const Tensor& grad = ctx->input(2);
    OP_REQUIRES(ctx, grad.shape() == in.shape(),
                errors::InvalidArgument(Prefix(), "grad has shape ", grad.shape().DebugString(),
                                        " but orig_input has shape ", in.shape().DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, d.OutputShape(), &out));
    if (out->NumElements() == 0) return;
    ReferenceMaxPoolGradGrad<T>(d, in.data<T>(), grad.data<T>(), out->data<T>());
  }
};

template <typename T>
class AvgPoolGradOp : public PoolOpBase {
 public:
  explicit AvgPoolGradOp(OpKernelConstruction* c) : PoolOpBase(c, false) {}

  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, TensorShape in_shape, ShapeFromSizesTensor(ctx->input(0), Prefix() + "orig_input_shape"));
    OP_REQUIRES_ASSIGN(ctx, PoolDims d, MakePoolDims(attrs_, in_shape, type_string(), name()));
    const Tensor& grad = ctx->input(1);
    OP_REQUIRES_OK(ctx, CheckOutputShaped(grad, "grad", d));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in_shape, &out));
    if (out->NumElements() == 0) return;
    if constexpr (std::is_same_v<T, float>) {
      if (NonEmpty(d) && dnnl_.Backward(d, nullptr, grad.data<float>(), out->data<float>()).ok()) return;
    }
    ReferenceAvgPoolGrad<T>(d, grad.data<T>(), out->data<T>());
  }
};

// ---- shape functions ----

Status PoolShape(InferenceContext* c) {
  PoolAttrs a;
  RETURN_IF_ERROR(ParsePoolAttrs(c->node().attrs, &a));
  PartialTensorShape in;
  if (!c->WithRank(c->input(0), 4, &in).ok()) {
    return errors::InvalidArgument(c->node().op, " needs a 4-D input, got ", c->input(0).DebugString());
  }
  const DimIndex d = Dims4(a.format);
  WindowDim rows{in.dim_size(d.h), 0, a.window_rows, a.stride_rows, 1, 0, 0};
  WindowDim cols{in.dim_size(d.w), 0, a.window_cols, a.stride_cols, 1, 0, 0};
  for (WindowDim* w : {&rows, &cols}) {
    Status s = ComputeWindowDim(a.padding, w);
    if (s.ok()) s = CheckValidWindowFits(a.padding, *w);
    if (!s.ok()) return errors::InvalidArgument(c->node().op, " (input ", in.DebugString(), "): ", s.message());
  }
  const int64_t n = in.dim_size(d.n), depth = in.dim_size(d.c);
  c->set_output(0, a.format == DataFormat::kNHWC ? PartialTensorShape{n, rows.out, cols.out, depth}
                                                 : PartialTensorShape{n, depth, rows.out, cols.out});
  return absl::OkStatus();
}

Status MaxPoolGradShape(InferenceContext* c) {
  PoolAttrs a;
  RETURN_IF_ERROR(ParsePoolAttrs(c->node().attrs, &a));
  PartialTensorShape in;
  if (!c->WithRank(c->input(0), 4, &in).ok()) {
    return errors::InvalidArgument("MaxPoolGrad needs a 4-D orig_input, got ", c->input(0).DebugString());
  }
  c->set_output(0, in);
  return absl::OkStatus();
}

Status MaxPoolGradGradShape(InferenceContext* c) {
  PoolAttrs a;
  RETURN_IF_ERROR(ParsePoolAttrs(c->node().attrs, &a));
  PartialTensorShape in, out;
  if (!c->WithRank(c->input(0), 4, &in).ok() || !c->WithRank(c->input(1), 4, &out).ok()) {
    return errors::InvalidArgument("MaxPoolGradGrad needs a 4-D orig_input and orig_output, got ",
                                   c->input(0).DebugString(), " and ", c->input(1).DebugString());
  }
  c->set_output(0, out);
  return absl::OkStatus();
}

Status AvgPoolGradShape(InferenceContext* c) {
  PoolAttrs a;
  RETURN_IF_ERROR(ParsePoolAttrs(c->node().attrs, &a));
  return ShapeFromSizesInput(c, 0, "orig_input_shape");
}

// ---- gradients ----

AttrMap PoolAttrMap(const Node* n) { return CopyAttrs(n, {"ksize", "strides", "padding", "data_format"}); }

template <typename T>
void RegisterIntegerMaxPoolKernels() {
  RegisterKernel<PoolOp<T, true>>(KernelBuilder("MaxPool").TypeConstraint<T>("T"));
  RegisterKernel<MaxPoolGradOp<T>>(KernelBuilder("MaxPoolGrad").TypeConstraint<T>("T"));
  RegisterKernel<MaxPoolGradGradOp<T>>(KernelBuilder("MaxPoolGradGrad").TypeConstraint<T>("T"));
}

OpDefBuilder WithPoolAttrs(OpDefBuilder b) {
  return b.Attr("ksize: list(int) >= 4")
      .Attr("strides: list(int) >= 4")
      .Attr("padding: string")
      .Attr("data_format: string = 'NHWC'");
}

}  // namespace

void RegisterPoolingOps() {
  // MaxPool and its gradients take integers too, as TensorFlow's CPU kernels (AvgPool: floats).
  RegisterOp(WithPoolAttrs(OpDefBuilder("MaxPool").Input("input: T").Output("output: T"))
                 .Attr("T: {float, double, int32, int64, uint8} = DT_FLOAT")
                 .Attr("explicit_paddings: list(int) = []")  // TensorFlow's; used only by padding EXPLICIT
                 .SetShapeFn(PoolShape)
                 .Doc("The maximum of each ksize window of input, windows strides apart."));
  RegisterOp(WithPoolAttrs(OpDefBuilder("AvgPool").Input("value: T").Output("output: T"))
                 .Attr("T: {float, double}")
                 .SetShapeFn(PoolShape)
                 .Doc("The mean of each ksize window of value (padding excluded), windows strides apart."));
  RegisterOp(WithPoolAttrs(OpDefBuilder("MaxPoolGrad")
                               .Input("orig_input: T")
                               .Input("orig_output: T")
                               .Input("grad: T")
                               .Output("output: T"))
                 .Attr("T: {float, double, int32, int64, uint8} = DT_FLOAT")
                 .Attr("explicit_paddings: list(int) = []")
                 .SetShapeFn(MaxPoolGradShape)
                 .Doc("The gradient of MaxPool: grad routed to the maximum of each window of orig_input."));
  RegisterOp(WithPoolAttrs(OpDefBuilder("MaxPoolGradGrad")
                               .Input("orig_input: T")
                               .Input("orig_output: T")
                               .Input("grad: T")
                               .Output("output: T"))
                 .Attr("T: {float, double, int32, int64, uint8}")
                 .SetShapeFn(MaxPoolGradGradShape)
                 .Doc("The gradient of MaxPoolGrad: grad (shaped like orig_input) at the maximum of each window."));
  RegisterOp(
      WithPoolAttrs(OpDefBuilder("AvgPoolGrad").Input("orig_input_shape: int32").Input("grad: T").Output("output: T"))
          .Attr("T: {float, double}")
          .SetShapeFn(AvgPoolGradShape)
          .Doc("The gradient of AvgPool: grad spread evenly over each window."));
  RegisterKernel<PoolOp<float, true>>(KernelBuilder("MaxPool").TypeConstraint<float>("T"));
  RegisterKernel<PoolOp<double, true>>(KernelBuilder("MaxPool").TypeConstraint<double>("T"));
  RegisterKernel<PoolOp<float, false>>(KernelBuilder("AvgPool").TypeConstraint<float>("T"));
  RegisterKernel<PoolOp<double, false>>(KernelBuilder("AvgPool").TypeConstraint<double>("T"));
  RegisterKernel<MaxPoolGradOp<float>>(KernelBuilder("MaxPoolGrad").TypeConstraint<float>("T"));
  RegisterKernel<MaxPoolGradOp<double>>(KernelBuilder("MaxPoolGrad").TypeConstraint<double>("T"));
  RegisterKernel<MaxPoolGradGradOp<float>>(KernelBuilder("MaxPoolGradGrad").TypeConstraint<float>("T"));
  RegisterKernel<MaxPoolGradGradOp<double>>(KernelBuilder("MaxPoolGradGrad").TypeConstraint<double>("T"));
  RegisterIntegerMaxPoolKernels<int32_t>();
  RegisterIntegerMaxPoolKernels<int64_t>();
  RegisterIntegerMaxPoolKernels<uint8_t>();
  RegisterKernel<AvgPoolGradOp<float>>(KernelBuilder("AvgPoolGrad").TypeConstraint<float>("T"));
  RegisterKernel<AvgPoolGradOp<double>>(KernelBuilder("AvgPoolGrad").TypeConstraint<double>("T"));

  RegisterGradient("MaxPool", [](GradContext* c) {
    c->grad_inputs[0] = c->b->Op("MaxPoolGrad", {c->inputs[0], c->outputs[0], c->GradOrZeros(0)}, PoolAttrMap(c->node));
    return c->b->status();
  });
  RegisterGradient("AvgPool", [](GradContext* c) {
    c->grad_inputs[0] = c->b->Op("AvgPoolGrad", {ShapeOf(c->b, c->inputs[0]), c->GradOrZeros(0)}, PoolAttrMap(c->node));
    return c->b->status();
  });
  // MaxPoolGrad is linear in its gradient input with a routing that is piecewise constant in
  // orig_input: MaxPoolGradGrad and MaxPoolGrad are each other's adjoints (TensorFlow's choice).
  auto max_pool_grad_grad = [](const char* adjoint) {
    return [adjoint](GradContext* c) {
      c->grad_inputs[0] = ZerosLike(c->b, c->inputs[0]);
      c->grad_inputs[1] = ZerosLike(c->b, c->inputs[1]);
      c->grad_inputs[2] = c->b->Op(adjoint, {c->inputs[0], c->inputs[1], c->GradOrZeros(0)}, PoolAttrMap(c->node));
      return c->b->status();
    };
  };
  RegisterGradient("MaxPoolGrad", max_pool_grad_grad("MaxPoolGradGrad"));
  RegisterGradient("MaxPoolGradGrad", max_pool_grad_grad("MaxPoolGrad"));
  // AvgPoolGrad is AvgPool's adjoint, so its own adjoint is AvgPool.
  RegisterGradient("AvgPoolGrad", [](GradContext* c) {
    c->grad_inputs[1] = c->b->Op("AvgPool", {c->GradOrZeros(0)}, PoolAttrMap(c->node));
    return c->b->status();
  });
}

}  // namespace dflow
