// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter (TensorFlow's inputs and attrs: strides,
// padding SAME/VALID/EXPLICIT with explicit_paddings, data_format NHWC/NCHW, dilations; filters
// HWIO), and the gradients of all three.
//
// float runs through oneDNN (conv_dnnl.h); double, empty tensors and anything oneDNN rejects
// run the reference loops (conv_reference.h).
#include <type_traits>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/nn/conv_dnnl.h"
#include "ops/nn/conv_reference.h"
#include "ops/nn/nn_grad_util.h"
#include "ops/nn/nn_ops.h"

namespace dflow {
namespace {

// oneDNN takes only non-empty problems.
bool NonEmpty(const Conv2DDims& d) {
  return d.batch > 0 && d.in_depth > 0 && d.out_depth > 0 && d.rows.in > 0 && d.cols.in > 0 && d.rows.out > 0 &&
         d.cols.out > 0;
}

class ConvOpBase : public OpKernel {
 public:
  explicit ConvOpBase(OpKernelConstruction* c) : OpKernel(c) {
    Status s = ParseConvAttrs(c->node().attrs, &attrs_);
    if (!s.ok()) c->SetStatus(errors::Annotate(s, absl::StrCat(c->node().op, " '", c->node().name, "': ")));
  }
  bool IsExpensive() const override { return true; }

 protected:
  std::string Prefix() const { return absl::StrCat(type_string(), " '", name(), "': "); }

  ConvAttrs attrs_;
  DnnlConv2D dnnl_;
};

template <typename T>
class Conv2DOp : public ConvOpBase {
 public:
  using ConvOpBase::ConvOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    OP_REQUIRES_ASSIGN(ctx, Conv2DDims d, MakeConv2DDims(attrs_, input.shape(), filter.shape(), type_string(), name()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, d.OutputShape(), &out));
    if (out->NumElements() == 0) return;
    if constexpr (std::is_same_v<T, float>) {
      if (NonEmpty(d) && dnnl_.Forward(d, input.data<float>(), filter.data<float>(), out->data<float>()).ok()) return;
    }
    ReferenceConv2D<T>(d, input.data<T>(), filter.data<T>(), out->data<T>());
  }
};

template <typename T>
class Conv2DBackpropInputOp : public ConvOpBase {
 public:
  using ConvOpBase::ConvOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& sizes = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    const Tensor& out_backprop = ctx->input(2);
    OP_REQUIRES_ASSIGN(ctx, TensorShape input_shape, ShapeFromSizesTensor(sizes, Prefix() + "input_sizes"));
    OP_REQUIRES_ASSIGN(ctx, Conv2DDims d, MakeConv2DDims(attrs_, input_shape, filter.shape(), type_string(), name()));
    OP_REQUIRES(ctx, out_backprop.shape() == d.OutputShape(),
                errors::InvalidArgument(Prefix(), "out_backprop has shape ", out_backprop.shape().DebugString(),
                                        " but the convolution of input ", input_shape.DebugString(), " with filter ",
                                        filter.shape().DebugString(), " has output shape ",
                                        d.OutputShape().DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input_shape, &out));
    if (out->NumElements() == 0) return;
    if constexpr (std::is_same_v<T, float>) {
      if (NonEmpty(d) &&
          dnnl_.BackwardData(d, filter.data<float>(), out_backprop.data<float>(), out->data<float>()).ok()) {
        return;
      }
    }
    ReferenceConv2DBackpropInput<T>(d, filter.data<T>(), out_backprop.data<T>(), out->data<T>());
  }
};

template <typename T>
class Conv2DBackpropFilterOp : public ConvOpBase {
 public:
  using ConvOpBase::ConvOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& sizes = ctx->input(1);
    const Tensor& out_backprop = ctx->input(2);
    OP_REQUIRES_ASSIGN(ctx, TensorShape filter_shape, ShapeFromSizesTensor(sizes, Prefix() + "filter_sizes"));
    OP_REQUIRES_ASSIGN(ctx, Conv2DDims d, MakeConv2DDims(attrs_, input.shape(), filter_shape, type_string(), name()));
    OP_REQUIRES(ctx, out_backprop.shape() == d.OutputShape(),
                errors::InvalidArgument(Prefix(), "out_backprop has shape ", out_backprop.shape().DebugString(),
                                        " but the convolution of input ", input.shape().DebugString(), " with filter ",
                                        filter_shape.DebugString(), " has output shape ",
                                        d.OutputShape().DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, filter_shape, &out));
    if (out->NumElements() == 0) return;
    if constexpr (std::is_same_v<T, float>) {
      if (NonEmpty(d) &&
          dnnl_.BackwardWeights(d, input.data<float>(), out_backprop.data<float>(), out->data<float>()).ok()) {
        return;
      }
    }
    ReferenceConv2DBackpropFilter<T>(d, input.data<T>(), out_backprop.data<T>(), out->data<T>());
  }
};

// ---- shape functions ----

// The output shape of a convolution from partially known input and filter shapes.
Status Conv2DShape(InferenceContext* c) {
  ConvAttrs a;
  RETURN_IF_ERROR(ParseConvAttrs(c->node().attrs, &a));
  PartialTensorShape in, f;
  Status s = c->WithRank(c->input(0), 4, &in);
  if (s.ok()) s = c->WithRank(c->input(1), 4, &f);
  if (!s.ok()) {
    return errors::InvalidArgument("Conv2D needs a 4-D input and a 4-D filter, got ", c->input(0).DebugString(),
                                   " and ", c->input(1).DebugString());
  }
  const DimIndex d = Dims4(a.format);
  const int64_t in_depth = in.dim_size(d.c), filter_depth = f.dim_size(2);
  if (in_depth >= 0 && filter_depth >= 0 && in_depth != filter_depth) {
    return errors::InvalidArgument("Conv2D: input depth ", in_depth, " must equal the filter's in_depth ", filter_depth,
                                   " (input ", in.DebugString(), ", filter ", f.DebugString(), ")");
  }
  WindowDim rows{in.dim_size(d.h), 0, f.dim_size(0), a.stride_rows, a.dilation_rows, a.pad_top, a.pad_bottom};
  WindowDim cols{in.dim_size(d.w), 0, f.dim_size(1), a.stride_cols, a.dilation_cols, a.pad_left, a.pad_right};
  for (WindowDim* w : {&rows, &cols}) {
    if (w->window == 0)
      return errors::InvalidArgument("Conv2D: the filter window must not be empty: ", f.DebugString());
    if (w->window < 0) {
      w->out = -1;
      continue;
    }
    Status ws = ComputeWindowDim(a.padding, w);
    if (ws.ok()) ws = CheckValidWindowFits(a.padding, *w);
    if (!ws.ok()) {
      return errors::InvalidArgument("Conv2D (input ", in.DebugString(), ", filter ", f.DebugString(),
                                     "): ", ws.message());
    }
  }
  const int64_t n = in.dim_size(d.n), oc = f.dim_size(3);
  c->set_output(0, a.format == DataFormat::kNHWC ? PartialTensorShape{n, rows.out, cols.out, oc}
                                                 : PartialTensorShape{n, oc, rows.out, cols.out});
  return absl::OkStatus();
}

// Conv2DBackpropInput / Conv2DBackpropFilter: the shape given by the sizes input `i`.
Status ShapeFromSizes(InferenceContext* c, int i) {
  ConvAttrs attrs;
  RETURN_IF_ERROR(ParseConvAttrs(c->node().attrs, &attrs));
  return ShapeFromSizesInput(c, i, i == 0 ? "input_sizes" : "filter_sizes");
}

// ---- gradients ----

AttrMap ConvAttrMap(const Node* n) {
  return CopyAttrs(n, {"strides", "padding", "explicit_paddings", "data_format", "dilations", "use_cudnn_on_gpu"});
}

// y = conv(x, f): dx = BackpropInput(shape(x), f, g), df = BackpropFilter(x, shape(f), g).
Status Conv2DGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const AttrMap attrs = ConvAttrMap(c->node);
  NodeOut g = c->GradOrZeros(0);
  c->grad_inputs[0] = b->Op("Conv2DBackpropInput", {ShapeOf(b, c->inputs[0]), c->inputs[1], g}, attrs);
  c->grad_inputs[1] = b->Op("Conv2DBackpropFilter", {c->inputs[0], ShapeOf(b, c->inputs[1]), g}, attrs);
  return b->status();
}

// dx = BackpropInput(sizes, f, dy) is bilinear in (f, dy): d/df = BackpropFilter(g, shape(f), dy),
// d/d dy = conv(g, f).
Status Conv2DBackpropInputGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const AttrMap attrs = ConvAttrMap(c->node);
  NodeOut g = c->GradOrZeros(0);
  c->grad_inputs[1] = b->Op("Conv2DBackpropFilter", {g, ShapeOf(b, c->inputs[1]), c->inputs[2]}, attrs);
  c->grad_inputs[2] = b->Op("Conv2D", {g, c->inputs[1]}, attrs);
  return b->status();
}

// df = BackpropFilter(x, sizes, dy) is bilinear in (x, dy): d/dx = BackpropInput(shape(x), g, dy),
// d/d dy = conv(x, g).
Status Conv2DBackpropFilterGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const AttrMap attrs = ConvAttrMap(c->node);
  NodeOut g = c->GradOrZeros(0);
  c->grad_inputs[0] = b->Op("Conv2DBackpropInput", {ShapeOf(b, c->inputs[0]), g, c->inputs[2]}, attrs);
  c->grad_inputs[2] = b->Op("Conv2D", {c->inputs[0], g}, attrs);
  return b->status();
}

OpDefBuilder WithConvAttrs(OpDefBuilder b) {
  return b.Attr("T: {float, double}")
      .Attr("strides: list(int)")
      .Attr("use_cudnn_on_gpu: bool = true")
      .Attr("padding: string")
      .Attr("explicit_paddings: list(int) = []")
      .Attr("data_format: string = 'NHWC'")
      .Attr("dilations: list(int) = [1, 1, 1, 1]");
}

template <template <typename> class K>
void RegisterConvKernels(const char* op) {
  RegisterKernel<K<float>>(KernelBuilder(op).TypeConstraint<float>("T"));
  RegisterKernel<K<double>>(KernelBuilder(op).TypeConstraint<double>("T"));
}

}  // namespace

void RegisterConvOps() {
  RegisterOp(WithConvAttrs(OpDefBuilder("Conv2D").Input("input: T").Input("filter: T").Output("output: T"))
                 .SetShapeFn(Conv2DShape)
                 .Doc("2-D convolution of input [batch, rows, cols, in_depth] (NHWC) or [batch, in_depth, rows, "
                      "cols] (NCHW) with filter [filter_rows, filter_cols, in_depth, out_depth]."));
  RegisterOp(WithConvAttrs(OpDefBuilder("Conv2DBackpropInput")
                               .Input("input_sizes: int32")
                               .Input("filter: T")
                               .Input("out_backprop: T")
                               .Output("output: T"))
                 .SetShapeFn([](InferenceContext* c) { return ShapeFromSizes(c, 0); })
                 .Doc("The gradient of Conv2D with respect to its input."));
  RegisterOp(WithConvAttrs(OpDefBuilder("Conv2DBackpropFilter")
                               .Input("input: T")
                               .Input("filter_sizes: int32")
                               .Input("out_backprop: T")
                               .Output("output: T"))
                 .SetShapeFn([](InferenceContext* c) { return ShapeFromSizes(c, 1); })
                 .Doc("The gradient of Conv2D with respect to its filter."));
  RegisterConvKernels<Conv2DOp>("Conv2D");
  RegisterConvKernels<Conv2DBackpropInputOp>("Conv2DBackpropInput");
  RegisterConvKernels<Conv2DBackpropFilterOp>("Conv2DBackpropFilter");

  RegisterGradient("Conv2D", Conv2DGrad);
  RegisterGradient("Conv2DBackpropInput", Conv2DBackpropInputGrad);
  RegisterGradient("Conv2DBackpropFilter", Conv2DBackpropFilterGrad);
}

}  // namespace dflow
