// DepthwiseConv2dNative, DepthwiseConv2dNativeBackpropInput and
// DepthwiseConv2dNativeBackpropFilter (TensorFlow's inputs and attrs: strides, padding
// SAME/VALID/EXPLICIT with explicit_paddings, data_format NHWC/NCHW, dilations), and the
// gradients of all three (TensorFlow's nn_grad.py).
//
// input [batch, rows, cols, in_depth] (NHWC), filter [filter_rows, filter_cols, in_depth,
// multiplier]; output channel c * multiplier + m is input channel c convolved with filter[..., c, m].
// float runs through oneDNN (a grouped convolution: depthwise_dnnl.h); double, empty tensors and
// anything oneDNN rejects run the loops here, over output pixels with the channels innermost
// (contiguous in NHWC); their forward pass is spread over the cores when it is large and the
// cores are free (dnnl_util.h).
#include <algorithm>
#include <type_traits>
#include <vector>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/nn/conv_reference.h"
#include "ops/nn/depthwise_dnnl.h"
#include "ops/nn/dnnl_util.h"
#include "ops/nn/nn_grad_util.h"
#include "ops/nn/nn_ops.h"
#include "ops/nn/sliding_window.h"

namespace dflow {
namespace {

// TensorFlow answers strides in the batch or depth dimension with Unimplemented.
Status CheckBatchDepthStrides(const AttrMap& attrs) {
  std::vector<int64_t> strides;
  std::string format = "NHWC";
  RETURN_IF_ERROR(GetAttr(attrs, "strides", &strides));
  (void)GetAttr(attrs, "data_format", &format);
  if (strides.size() == 4) {
    const int c = format == "NCHW" ? 1 : 3;
    if (strides[0] != 1 || strides[c] != 1) {
      return errors::Unimplemented("Current implementation does not yet support strides in the batch and depth "
                                   "dimensions.");
    }
  }
  return absl::OkStatus();
}

// The geometry, with out_depth = the depth multiplier (filter dim 3).
StatusOr<Conv2DDims> MakeDims(const ConvAttrs& a, const TensorShape& input, const TensorShape& filter,
                              absl::string_view op, absl::string_view node) {
  return MakeConv2DDims(a, input, filter, op, node);
}

TensorShape OutShape(const Conv2DDims& d) {
  auto s = Shape4(d.format, d.batch, d.rows.out, d.cols.out, d.in_depth * d.out_depth);
  return s.ok() ? *s : TensorShape();
}

template <typename T>
void DepthwiseForward(const Conv2DDims& d, const T* input, const T* filter, T* out) {
  const Strides4 is = StridesOf(d.format, d.rows.in, d.cols.in, d.in_depth);
  const int64_t C = d.in_depth, M = d.out_depth, OC = C * M;
  const Strides4 os = StridesOf(d.format, d.rows.out, d.cols.out, OC);
  const int64_t rows = d.batch * d.rows.out;
  DnnlThreads threads(d.Work());  // multiply-adds, saturated
#pragma omp parallel num_threads(threads.threads())
  {
    std::vector<T> acc(static_cast<size_t>(OC));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = r / d.rows.out, oh = r % d.rows.out;
      for (int64_t ow = 0; ow < d.cols.out; ++ow) {
        std::fill(acc.begin(), acc.end(), T(0));
        T* a = acc.data();
        for (int64_t kh = 0; kh < d.rows.window; ++kh) {
          const int64_t ih = oh * d.rows.stride - d.rows.pad_before + kh * d.rows.dilation;
          if (ih < 0 || ih >= d.rows.in) continue;
          for (int64_t kw = 0; kw < d.cols.window; ++kw) {
            const int64_t iw = ow * d.cols.stride - d.cols.pad_before + kw * d.cols.dilation;
            if (iw < 0 || iw >= d.cols.in) continue;
            const T* in = input + n * is.n + ih * is.h + iw * is.w;
            const T* f = filter + (kh * d.cols.window + kw) * OC;
            if (M == 1 && is.c == 1) {
#pragma omp simd
              for (int64_t c = 0; c < C; ++c) a[c] += in[c] * f[c];
            } else {
              for (int64_t c = 0; c < C; ++c) {
                const T x = in[c * is.c];
                for (int64_t m = 0; m < M; ++m) a[c * M + m] += x * f[c * M + m];
              }
            }
          }
        }
        T* o = out + n * os.n + oh * os.h + ow * os.w;
        if (os.c == 1) {
          std::copy(a, a + OC, o);
        } else {
          for (int64_t oc = 0; oc < OC; ++oc) o[oc * os.c] = a[oc];
        }
      }
    }
  }
}

// Calls f(in_offset, out_offset, filter_offset) for every output pixel and filter tap that reads
// a real input pixel; offsets are of the pixel (channel 0) and of the tap's [C, M] block.
template <typename F>
void ForEachTap(const Conv2DDims& d, const Strides4& is, const Strides4& os, F f) {
  const int64_t OC = d.in_depth * d.out_depth;
  conv_internal::ForEachTap(d, [&](int64_t n, int64_t oh, int64_t ow, int64_t ih, int64_t iw, int64_t kh, int64_t kw) {
    f(n * is.n + ih * is.h + iw * is.w, n * os.n + oh * os.h + ow * os.w, (kh * d.cols.window + kw) * OC);
  });
}

template <typename T>
void DepthwiseBackpropInput(const Conv2DDims& d, const T* filter, const T* dy, T* dx) {
  const int64_t C = d.in_depth, M = d.out_depth;
  const Strides4 is = StridesOf(d.format, d.rows.in, d.cols.in, C);
  const Strides4 os = StridesOf(d.format, d.rows.out, d.cols.out, C * M);
  std::fill(dx, dx + d.InputShape().num_elements(), T(0));
  ForEachTap(d, is, os, [&](int64_t io, int64_t oo, int64_t fo) {
    const T* g = dy + oo;
    const T* f = filter + fo;
    T* a = dx + io;
    if (M == 1 && is.c == 1 && os.c == 1) {
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) a[c] += g[c] * f[c];
      return;
    }
    for (int64_t c = 0; c < C; ++c) {
      T s = 0;
      for (int64_t m = 0; m < M; ++m) s += g[(c * M + m) * os.c] * f[c * M + m];
      a[c * is.c] += s;
    }
  });
}

template <typename T>
void DepthwiseBackpropFilter(const Conv2DDims& d, const T* input, const T* dy, T* df) {
  const int64_t C = d.in_depth, M = d.out_depth;
  const Strides4 is = StridesOf(d.format, d.rows.in, d.cols.in, C);
  const Strides4 os = StridesOf(d.format, d.rows.out, d.cols.out, C * M);
  const int64_t size = d.rows.window * d.cols.window * C * M;
  std::vector<double> acc(static_cast<size_t>(size), 0.0);
  ForEachTap(d, is, os, [&](int64_t io, int64_t oo, int64_t fo) {
    const T* x = input + io;
    const T* g = dy + oo;
    double* a = acc.data() + fo;
    for (int64_t c = 0; c < C; ++c) {
      const double xv = x[c * is.c];
      for (int64_t m = 0; m < M; ++m) a[c * M + m] += xv * g[(c * M + m) * os.c];
    }
  });
  for (int64_t i = 0; i < size; ++i) df[i] = static_cast<T>(acc[i]);
}

class DepthwiseBase : public OpKernel {
 public:
  explicit DepthwiseBase(OpKernelConstruction* c) : OpKernel(c) {
    Status s = CheckBatchDepthStrides(c->node().attrs);
    if (s.ok()) s = ParseConvAttrs(c->node().attrs, &attrs_);
    if (!s.ok()) c->SetStatus(errors::Annotate(s, absl::StrCat(c->node().op, " '", c->node().name, "': ")));
  }
  bool IsExpensive() const override { return true; }

 protected:
  std::string Prefix() const { return absl::StrCat(type_string(), " '", name(), "': "); }
  Status CheckOutBackprop(const Tensor& g, const Conv2DDims& d) const {
    if (g.shape() == OutShape(d)) return absl::OkStatus();
    return errors::InvalidArgument(Prefix(), "out_backprop has shape ", g.shape().DebugString(),
                                   " but the depthwise convolution's output has shape ", OutShape(d).DebugString());
  }
  ConvAttrs attrs_;
  DnnlDepthwiseConv2D dnnl_;
};

// oneDNN takes only non-empty problems.
bool NonEmpty(const Conv2DDims& d) {
  return d.batch > 0 && d.in_depth > 0 && d.out_depth > 0 && d.rows.in > 0 && d.cols.in > 0 && d.rows.out > 0 &&
         d.cols.out > 0;
}

template <typename T>
class DepthwiseConv2dNativeOp : public DepthwiseBase {
 public:
  using DepthwiseBase::DepthwiseBase;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    OP_REQUIRES_ASSIGN(ctx, Conv2DDims d, MakeDims(attrs_, input.shape(), filter.shape(), type_string(), name()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, OutShape(d), &out));
    if (out->NumElements() == 0) return;
    if constexpr (std::is_same_v<T, float>) {
      if (NonEmpty(d) && dnnl_.Forward(d, input.data<float>(), filter.data<float>(), out->data<float>()).ok()) return;
    }
    DepthwiseForward<T>(d, input.data<T>(), filter.data<T>(), out->data<T>());
  }
};

template <typename T>
class DepthwiseBackpropInputOp : public DepthwiseBase {
 public:
  using DepthwiseBase::DepthwiseBase;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& filter = ctx->input(1);
    const Tensor& g = ctx->input(2);
    OP_REQUIRES_ASSIGN(ctx, TensorShape in_shape, ShapeFromSizesTensor(ctx->input(0), Prefix() + "input_sizes"));
    OP_REQUIRES_ASSIGN(ctx, Conv2DDims d, MakeDims(attrs_, in_shape, filter.shape(), type_string(), name()));
    OP_REQUIRES_OK(ctx, CheckOutBackprop(g, d));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, in_shape, &out));
    if (out->NumElements() == 0) return;
    if constexpr (std::is_same_v<T, float>) {
      if (NonEmpty(d) && dnnl_.BackwardData(d, filter.data<float>(), g.data<float>(), out->data<float>()).ok()) {
        return;
      }
    }
    DepthwiseBackpropInput<T>(d, filter.data<T>(), g.data<T>(), out->data<T>());
  }
};

template <typename T>
class DepthwiseBackpropFilterOp : public DepthwiseBase {
 public:
  using DepthwiseBase::DepthwiseBase;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& g = ctx->input(2);
    OP_REQUIRES_ASSIGN(ctx, TensorShape f_shape, ShapeFromSizesTensor(ctx->input(1), Prefix() + "filter_sizes"));
    OP_REQUIRES_ASSIGN(ctx, Conv2DDims d, MakeDims(attrs_, input.shape(), f_shape, type_string(), name()));
    OP_REQUIRES_OK(ctx, CheckOutBackprop(g, d));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, f_shape, &out));
    if (out->NumElements() == 0) return;
    if constexpr (std::is_same_v<T, float>) {
      if (NonEmpty(d) && dnnl_.BackwardWeights(d, input.data<float>(), g.data<float>(), out->data<float>()).ok()) {
        return;
      }
    }
    DepthwiseBackpropFilter<T>(d, input.data<T>(), g.data<T>(), out->data<T>());
  }
};

// ---- shape functions ----

Status DepthwiseShape(InferenceContext* c) {
  ConvAttrs a;
  RETURN_IF_ERROR(CheckBatchDepthStrides(c->node().attrs));
  RETURN_IF_ERROR(ParseConvAttrs(c->node().attrs, &a));
  PartialTensorShape in, f;
  Status s = c->WithRank(c->input(0), 4, &in);
  if (s.ok()) s = c->WithRank(c->input(1), 4, &f);
  if (!s.ok()) {
    return errors::InvalidArgument("DepthwiseConv2dNative needs a 4-D input and a 4-D filter, got ",
                                   c->input(0).DebugString(), " and ", c->input(1).DebugString());
  }
  if (in.unknown_rank()) in = PartialTensorShape({-1, -1, -1, -1});
  if (f.unknown_rank()) f = PartialTensorShape({-1, -1, -1, -1});
  const DimIndex d = Dims4(a.format);
  const int64_t in_depth = in.dim_size(d.c), filter_depth = f.dim_size(2);
  if (in_depth >= 0 && filter_depth >= 0 && in_depth != filter_depth) {
    return errors::InvalidArgument("Dimensions must be equal, but are ", in_depth, " and ", filter_depth, " (input ",
                                   in.DebugString(), ", filter ", f.DebugString(), ")");
  }
  const int64_t depth = in_depth >= 0 ? in_depth : filter_depth;
  WindowDim rows{in.dim_size(d.h), 0, f.dim_size(0), a.stride_rows, a.dilation_rows, a.pad_top, a.pad_bottom};
  WindowDim cols{in.dim_size(d.w), 0, f.dim_size(1), a.stride_cols, a.dilation_cols, a.pad_left, a.pad_right};
  for (WindowDim* w : {&rows, &cols}) {
    if (w->window < 0 || w->in < 0) {
      w->out = -1;
      continue;
    }
    Status ws = ComputeWindowDim(a.padding, w);
    if (!ws.ok()) return errors::InvalidArgument("DepthwiseConv2dNative: ", ws.message());
  }
  const int64_t n = in.dim_size(d.n), mult = f.dim_size(3);
  const int64_t oc = depth >= 0 && mult >= 0 ? depth * mult : -1;
  c->set_output(0, a.format == DataFormat::kNHWC ? PartialTensorShape{n, rows.out, cols.out, oc}
                                                 : PartialTensorShape{n, oc, rows.out, cols.out});
  return absl::OkStatus();
}

// ---- gradients (TensorFlow's nn_grad.py) ----

AttrMap DepthwiseAttrs(const Node* n) {
  return CopyAttrs(n, {"T", "strides", "padding", "explicit_paddings", "data_format", "dilations"});
}

Status DepthwiseGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const AttrMap attrs = DepthwiseAttrs(c->node);
  NodeOut g = c->GradOrZeros(0);
  c->grad_inputs[0] = b->Op("DepthwiseConv2dNativeBackpropInput", {ShapeOf(b, c->inputs[0]), c->inputs[1], g}, attrs);
  c->grad_inputs[1] = b->Op("DepthwiseConv2dNativeBackpropFilter", {c->inputs[0], ShapeOf(b, c->inputs[1]), g}, attrs);
  return b->status();
}

Status DepthwiseBackpropInputGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const AttrMap attrs = DepthwiseAttrs(c->node);
  NodeOut g = c->GradOrZeros(0);
  c->grad_inputs[1] = b->Op("DepthwiseConv2dNativeBackpropFilter", {g, ShapeOf(b, c->inputs[1]), c->inputs[2]}, attrs);
  c->grad_inputs[2] = b->Op("DepthwiseConv2dNative", {g, c->inputs[1]}, attrs);
  return b->status();
}

Status DepthwiseBackpropFilterGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const AttrMap attrs = DepthwiseAttrs(c->node);
  NodeOut g = c->GradOrZeros(0);
  c->grad_inputs[0] = b->Op("DepthwiseConv2dNativeBackpropInput", {ShapeOf(b, c->inputs[0]), g, c->inputs[2]}, attrs);
  c->grad_inputs[2] = b->Op("DepthwiseConv2dNative", {c->inputs[0], g}, attrs);
  return b->status();
}

OpDefBuilder WithDepthwiseAttrs(OpDefBuilder b) {
  return b.Attr("T: {float, double}")
      .Attr("strides: list(int)")
      .Attr("padding: string")
      .Attr("explicit_paddings: list(int) = []")
      .Attr("data_format: string = 'NHWC'")
      .Attr("dilations: list(int) = [1, 1, 1, 1]");
}

template <template <typename> class K>
void RegisterKernels(const char* op) {
  RegisterKernel<K<float>>(KernelBuilder(op).TypeConstraint<float>("T"));
  RegisterKernel<K<double>>(KernelBuilder(op).TypeConstraint<double>("T"));
}

}  // namespace

void RegisterDepthwiseConvOps() {
  RegisterOp(
      WithDepthwiseAttrs(OpDefBuilder("DepthwiseConv2dNative").Input("input: T").Input("filter: T").Output("output: T"))
          .SetShapeFn(DepthwiseShape)
          .Doc("Depthwise 2-D convolution: input channel c with filter[:, :, c, m] gives output channel "
               "c * multiplier + m."));
  RegisterOp(WithDepthwiseAttrs(OpDefBuilder("DepthwiseConv2dNativeBackpropInput")
                                    .Input("input_sizes: int32")
                                    .Input("filter: T")
                                    .Input("out_backprop: T")
                                    .Output("output: T"))
                 .SetShapeFn([](InferenceContext* c) { return ShapeFromSizesInput(c, 0, "input_sizes"); })
                 .Doc("The gradient of DepthwiseConv2dNative with respect to its input."));
  RegisterOp(WithDepthwiseAttrs(OpDefBuilder("DepthwiseConv2dNativeBackpropFilter")
                                    .Input("input: T")
                                    .Input("filter_sizes: int32")
                                    .Input("out_backprop: T")
                                    .Output("output: T"))
                 .SetShapeFn([](InferenceContext* c) { return ShapeFromSizesInput(c, 1, "filter_sizes"); })
                 .Doc("The gradient of DepthwiseConv2dNative with respect to its filter."));
  RegisterKernels<DepthwiseConv2dNativeOp>("DepthwiseConv2dNative");
  RegisterKernels<DepthwiseBackpropInputOp>("DepthwiseConv2dNativeBackpropInput");
  RegisterKernels<DepthwiseBackpropFilterOp>("DepthwiseConv2dNativeBackpropFilter");
  RegisterGradient("DepthwiseConv2dNative", DepthwiseGrad);
  RegisterGradient("DepthwiseConv2dNativeBackpropInput", DepthwiseBackpropInputGrad);
  RegisterGradient("DepthwiseConv2dNativeBackpropFilter", DepthwiseBackpropFilterGrad);
}

}  // namespace dflow
