// _FusedConv2D and _FusedMatMul: a convolution or matrix product, its BiasAdd and an optional
// activation (Relu, Relu6, Elu, LeakyRelu) in one kernel. TensorFlow's op names, inputs (the
// contraction's, then num_args = 1 bias) and attrs (fused_ops, leakyrelu_alpha; epsilon is
// accepted for its batch-norm fusions, which dflow does not build). graph/op_fusion.h creates
// them from the graphs steps run; graphs TensorFlow optimized may hold them too.
//
// float: the convolution runs through oneDNN with the bias and activation as part of the
// primitive (conv_dnnl.h), the product through gemm.h with the bias and activation applied to
// each finished block of the output while it is in cache. double, empty tensors and anything
// oneDNN rejects: the reference loops, then one pass of bias and activation.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_join.h"
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "ops/matrix/gemm.h"
#include "ops/nn/conv_dnnl.h"
#include "ops/nn/conv_reference.h"
#include "ops/nn/nn_ops.h"

namespace dflow {
namespace {

template <typename T>
T Activate(FusedActivation a, T alpha, T x) {
  switch (a) {
    case FusedActivation::kRelu: return x < T(0) ? T(0) : x;
    case FusedActivation::kRelu6: return x < T(0) ? T(0) : (x > T(6) ? T(6) : x);
    case FusedActivation::kElu: return x < T(0) ? std::exp(x) - T(1) : x;
    case FusedActivation::kLeakyRelu: return x > T(0) ? x : x * alpha;
    case FusedActivation::kNone: break;
  }
  return x;
}

// out[r, c] = act(out[r, c] + bias[c]) for `rows` rows of `cols` channels, `stride` apart.
template <typename T>
void BiasActivateRows(FusedActivation a, T alpha, const T* bias, int64_t rows, int64_t cols, int64_t stride, T* out) {
  for (int64_t r = 0; r < rows; ++r) {
    T* row = out + r * stride;
    switch (a) {  // the common cases as their own vectorizable loops
      case FusedActivation::kNone:
#pragma omp simd
        for (int64_t c = 0; c < cols; ++c) row[c] += bias[c];
        break;
      case FusedActivation::kRelu:
#pragma omp simd
        for (int64_t c = 0; c < cols; ++c) {
          const T v = row[c] + bias[c];
          row[c] = v < T(0) ? T(0) : v;
        }
        break;
      default:
        for (int64_t c = 0; c < cols; ++c) row[c] = Activate(a, alpha, row[c] + bias[c]);
    }
  }
}

// What fused_ops asks for, checked: "BiasAdd", then at most one activation.
Status ParseFusedOps(OpKernelConstruction* c, FusedActivation* act, float* alpha) {
  std::vector<std::string> ops;
  int64_t num_args = 0;
  RETURN_IF_ERROR(c->GetAttr("fused_ops", &ops));
  RETURN_IF_ERROR(c->GetAttr("num_args", &num_args));
  RETURN_IF_ERROR(c->GetAttr("leakyrelu_alpha", alpha));
  const std::string what = absl::StrCat(c->node().op, " '", c->node().name, "': ");
  if (ops.empty() || ops[0] != "BiasAdd" || ops.size() > 2) {
    return errors::Unimplemented(what, "fuses BiasAdd followed by at most one activation, not [",
                                 absl::StrJoin(ops, ", "), "]");
  }
  if (num_args != 1) return errors::InvalidArgument(what, "BiasAdd takes num_args = 1, got ", num_args);
  *act = FusedActivation::kNone;
  if (ops.size() == 2) {
    if (ops[1] == "Relu") *act = FusedActivation::kRelu;
    else if (ops[1] == "Relu6") *act = FusedActivation::kRelu6;
    else if (ops[1] == "Elu") *act = FusedActivation::kElu;
    else if (ops[1] == "LeakyRelu") *act = FusedActivation::kLeakyRelu;
    else return errors::Unimplemented(what, "cannot fuse the activation ", ops[1], " (Relu, Relu6, Elu, LeakyRelu)");
  }
  return absl::OkStatus();
}

// The operations this kernel stands for, for its error messages: "_FusedConv2D 'relu' (Conv2D
// 'conv', BiasAdd 'bias', Relu 'relu')" when graph/op_fusion.h built it.
std::string FusedName(OpKernelConstruction* c, const std::vector<std::string>& ops, const char* contraction) {
  std::string s = absl::StrCat(c->node().op, " '", c->node().name, "'");
  std::vector<std::string> nodes;
  if (c->GetAttr("_fused_nodes", &nodes).ok() && nodes.size() == ops.size() + 1) {
    absl::StrAppend(&s, " (", contraction, " '", nodes[0], "'");
    for (size_t i = 0; i < ops.size(); ++i) absl::StrAppend(&s, ", ", ops[i], " '", nodes[i + 1], "'");
    absl::StrAppend(&s, ")");
  }
  return s;
}

class FusedBase : public OpKernel {
 public:
  FusedBase(OpKernelConstruction* c, const char* contraction) : OpKernel(c) {
    c->SetStatus(ParseFusedOps(c, &activation_, &alpha_));
    std::vector<std::string> ops;
    if (c->GetAttr("fused_ops", &ops).ok()) prefix_ = FusedName(c, ops, contraction) + ": ";
  }
  bool IsExpensive() const override { return true; }

 protected:
  // The bias (input 2) checked against `channels`.
  Status CheckBias(const Tensor& bias, int64_t channels) const {
    if (bias.dims() == 1 && bias.dim_size(0) == channels) return absl::OkStatus();
    return errors::InvalidArgument(prefix_, "bias must be 1-D with ", channels, " elements (the output's channels), ",
                                   "got shape ", bias.shape().DebugString());
  }

  FusedActivation activation_ = FusedActivation::kNone;
  float alpha_ = 0.2f;
  std::string prefix_;
};

template <typename T>
class FusedConv2DOp : public FusedBase {
 public:
  explicit FusedConv2DOp(OpKernelConstruction* c) : FusedBase(c, "Conv2D") {
    if (c->status().ok()) c->SetStatus(ParseConvAttrs(c->node().attrs, &attrs_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    const Tensor& bias = ctx->input(2);
    OP_REQUIRES_ASSIGN(ctx, Conv2DDims d, MakeConv2DDims(attrs_, input.shape(), filter.shape(), type_string(), name()));
    OP_REQUIRES_OK(ctx, CheckBias(bias, d.out_depth));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, d.OutputShape(), &out));
    if (out->NumElements() == 0) return;
    const bool non_empty = d.batch > 0 && d.in_depth > 0 && d.rows.in > 0 && d.cols.in > 0;
    if constexpr (std::is_same_v<T, float>) {
      ConvPostOps post{bias.data<float>(), activation_, alpha_};
      if (non_empty && dnnl_.Forward(d, input.data<float>(), filter.data<float>(), out->data<float>(), post).ok()) {
        return;
      }
    }
    T* o = out->data<T>();
    ReferenceConv2D<T>(d, input.data<T>(), filter.data<T>(), o);
    const T* b = bias.data<T>();
    const int64_t pixels = d.rows.out * d.cols.out;
    if (d.format == DataFormat::kNHWC) {
      BiasActivateRows<T>(activation_, static_cast<T>(alpha_), b, d.batch * pixels, d.out_depth, d.out_depth, o);
      return;
    }
    for (int64_t i = 0; i < d.batch * d.out_depth; ++i) {  // NCHW: one channel's plane at a time
      T* plane = o + i * pixels;
      const T bc = b[i % d.out_depth];
      for (int64_t p = 0; p < pixels; ++p) plane[p] = Activate(activation_, static_cast<T>(alpha_), plane[p] + bc);
    }
  }

 private:
  ConvAttrs attrs_;
  DnnlConv2D dnnl_;
};

template <typename T>
class FusedMatMulOp : public FusedBase {
 public:
  explicit FusedMatMulOp(OpKernelConstruction* c) : FusedBase(c, "MatMul") {
    if (c->status().ok()) c->SetStatus(c->GetAttr("transpose_a", &transpose_a_));
    if (c->status().ok()) c->SetStatus(c->GetAttr("transpose_b", &transpose_b_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    const Tensor& bias = ctx->input(2);
    OP_REQUIRES(ctx, a.dims() == 2 && b.dims() == 2,
                errors::InvalidArgument(prefix_, "In[0] and In[1] must be matrices (rank 2), got ",
                                        a.shape().DebugString(), " and ", b.shape().DebugString()));
    const int64_t m = a.dim_size(transpose_a_ ? 1 : 0);
    const int64_t k = a.dim_size(transpose_a_ ? 0 : 1);
    const int64_t kb = b.dim_size(transpose_b_ ? 1 : 0);
    const int64_t n = b.dim_size(transpose_b_ ? 0 : 1);
    OP_REQUIRES(ctx, k == kb,
                errors::InvalidArgument(prefix_, "Matrix size-incompatible: In[0]: ", a.shape().DebugString(),
                                        ", In[1]: ", b.shape().DebugString()));
    OP_REQUIRES_OK(ctx, CheckBias(bias, n));
    StatusOr<TensorShape> out_shape = TensorShape::FromDims({m, n});
    OP_REQUIRES(ctx, out_shape.ok(), errors::Annotate(out_shape.status(), prefix_));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *out_shape, &out));
    if (m == 0 || n == 0) return;
    T* c = out->data<T>();
    const T* bv = bias.data<T>();
    const T alpha = static_cast<T>(alpha_);
    if (k == 0) {
      for (int64_t i = 0; i < m * n; ++i) c[i] = T{0};
      BiasActivateRows<T>(activation_, alpha, bv, m, n, n, c);
      return;
    }
    if constexpr (std::is_same_v<T, float>) {
      const GemmEpilogue epilogue = [&](int64_t row0, int64_t rows, int64_t col0, int64_t cols) {
        BiasActivateRows<float>(activation_, alpha, bv + col0, rows, cols, n, c + row0 * n + col0);
      };
      Status s = FloatGemm(transpose_a_, transpose_b_, m, n, k, a.data<float>(), b.data<float>(), c, &epilogue);
      OP_REQUIRES(ctx, s.ok(), errors::Annotate(s, prefix_));
    } else {
      NaiveGemm<T>(transpose_a_, transpose_b_, m, n, k, a.data<T>(), b.data<T>(), c);
      BiasActivateRows<T>(activation_, alpha, bv, m, n, n, c);
    }
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

// The contraction's output shape (its registered shape function reads the inputs and attrs it
// shares with the fused op), with the bias checked against its channels.
Status FusedShape(InferenceContext* c, const char* contraction, bool channels_last) {
  RETURN_IF_ERROR(OpRegistry::Global()->LookUp(contraction)->shape_fn(c));
  if (c->num_inputs() < 3) return absl::OkStatus();  // num_args = 0: the kernel reports it
  const PartialTensorShape& out = c->output(0);
  const PartialTensorShape& bias = c->input(2);
  if (bias.dims() >= 0 && bias.dims() != 1) {
    return errors::InvalidArgument(c->node().op, ": bias must be 1-D, got ", bias.DebugString());
  }
  if (out.dims() > 0 && bias.dims() == 1) {
    const int64_t ch = out.dim_size(channels_last ? out.dims() - 1 : 1);
    if (ch >= 0 && bias.dim_size(0) >= 0 && ch != bias.dim_size(0)) {
      return errors::InvalidArgument(c->node().op, ": bias has ", bias.dim_size(0), " elements but the output ",
                                     out.DebugString(), " has ", ch, " channels");
    }
  }
  return absl::OkStatus();
}

OpDefBuilder WithFusionAttrs(OpDefBuilder b) {
  return b.Attr("num_args: int >= 0")
      .Attr("fused_ops: list(string) = []")
      .Attr("epsilon: float = 0.0001")
      .Attr("leakyrelu_alpha: float = 0.2");
}

}  // namespace

void RegisterFusedOps() {
  RegisterOp(WithFusionAttrs(OpDefBuilder("_FusedConv2D")
                                 .Input("input: T")
                                 .Input("filter: T")
                                 .Input("args: num_args * T")
                                 .Output("output: T")
                                 .Attr("T: {float, double}")
                                 .Attr("strides: list(int)")
                                 .Attr("padding: string")
                                 .Attr("explicit_paddings: list(int) = []")
                                 .Attr("data_format: string = 'NHWC'")
                                 .Attr("dilations: list(int) = [1, 1, 1, 1]")
                                 .Attr("use_cudnn_on_gpu: bool = true"))
                 .SetShapeFn([](InferenceContext* c) {
                   std::string format = "NHWC";
                   (void)c->GetAttr("data_format", &format);
                   return FusedShape(c, "Conv2D", format == "NHWC");
                 })
                 .Doc("Conv2D, then BiasAdd with args[0], then the activation fused_ops names."));
  RegisterOp(WithFusionAttrs(OpDefBuilder("_FusedMatMul")
                                 .Input("a: T")
                                 .Input("b: T")
                                 .Input("args: num_args * T")
                                 .Output("product: T")
                                 .Attr("T: {float, double}")
                                 .Attr("transpose_a: bool = false")
                                 .Attr("transpose_b: bool = false"))
                 .SetShapeFn([](InferenceContext* c) { return FusedShape(c, "MatMul", true); })
                 .Doc("MatMul, then BiasAdd with args[0], then the activation fused_ops names."));
  RegisterKernel<FusedConv2DOp<float>>(KernelBuilder("_FusedConv2D").TypeConstraint<float>("T"));
  RegisterKernel<FusedConv2DOp<double>>(KernelBuilder("_FusedConv2D").TypeConstraint<double>("T"));
  RegisterKernel<FusedMatMulOp<float>>(KernelBuilder("_FusedMatMul").TypeConstraint<float>("T"));
  RegisterKernel<FusedMatMulOp<double>>(KernelBuilder("_FusedMatMul").TypeConstraint<double>("T"));
}

}  // namespace dflow
