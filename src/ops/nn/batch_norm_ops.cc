// FusedBatchNorm, FusedBatchNormV2, FusedBatchNormV3 and their gradient kernels
// FusedBatchNormGrad, FusedBatchNormGradV2, FusedBatchNormGradV3 (TensorFlow's names, inputs,
// outputs and attrs), and the gradients of the forward ops (TensorFlow's _BaseFusedBatchNormGrad;
// those of the gradient kernels are in batch_norm_grad_grad.cc).
//
// Semantics (TensorFlow's CPU kernels):
//   training:  y = (x - m) * rsqrt(v + epsilon) * scale + offset with m, v the batch mean and the
//              biased batch variance over every axis but the channel's. batch_mean = m and
//              batch_variance = v * n / (n - 1) (Bessel-corrected; v when n == 1) when
//              exponential_avg_factor is 1, else (1 - f) * running + f * that. reserve_space_1 = m,
//              reserve_space_2 = v (biased). An empty x gives NaN batch statistics and zero
//              reserve spaces.
//   inference: y with the given mean and variance; batch_mean / batch_variance and both reserve
//              spaces are the given mean and variance (NaN statistics for an empty x).
// reserve_space_3 (V3) is an empty [0] tensor. The gradient kernels' reserve_space_3/4 (/4/5)
// outputs are zero scalars.
// Accumulations run in double; x is viewed as [outer, C, inner] (channels-last: inner = 1).
#include <cmath>
#include <limits>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/nn/nn_grad_util.h"
#include "ops/nn/nn_ops.h"

namespace dflow {
namespace {

// The layout of x: [outer, channels, inner].
struct BNLayout {
  int64_t outer = 0, channels = 0, inner = 1;
  int64_t PerChannel() const { return outer * inner; }
};

bool ChannelsFirst(const std::string& f) { return f == "NCHW" || f == "NCDHW"; }

// Validates data_format for op version `v3` and the rank of x; returns the layout.
StatusOr<BNLayout> MakeLayout(const std::string& format, bool v3, const TensorShape& x, absl::string_view prefix) {
  const bool ok4 = format == "NHWC" || format == "NCHW";
  const bool ok5 = v3 && (format == "NDHWC" || format == "NCDHW");
  if (!ok4 && !ok5) {
    return errors::InvalidArgument(prefix, "invalid data_format '", format, "'",
                                   v3 ? " (NHWC, NCHW, NDHWC or NCDHW)" : " (NHWC or NCHW)");
  }
  const int rank = ok4 ? 4 : 5;
  if (x.dims() != rank) {
    return errors::InvalidArgument(prefix, "input must be ", rank, "-dimensional", x.DebugString());
  }
  BNLayout l;
  if (ChannelsFirst(format)) {
    l.outer = x.dim_size(0);
    l.channels = x.dim_size(1);
    for (int i = 2; i < rank; ++i) l.inner *= x.dim_size(i);
  } else {
    l.outer = 1;
    for (int i = 0; i < rank - 1; ++i) l.outer *= x.dim_size(i);
    l.channels = x.dim_size(rank - 1);
  }
  return l;
}

Status CheckVector(const Tensor& t, const char* what, int64_t depth, absl::string_view prefix) {
  if (t.shape().dims() != 1) {
    return errors::InvalidArgument(prefix, what, " must be 1-dimensional", t.shape().DebugString());
  }
  if (t.NumElements() != depth) {
    return errors::InvalidArgument(prefix, what, " must have the same number of elements as the channels of x, got ",
                                   t.NumElements(), " and ", depth);
  }
  return absl::OkStatus();
}

struct BNAttrs {
  float epsilon = 1e-4f;
  float factor = 1.0f;
  std::string format = "NHWC";
  bool is_training = true;
};

void ParseBNAttrs(OpKernelConstruction* c, bool forward, BNAttrs* a) {
  c->SetStatus(c->GetAttr("epsilon", &a->epsilon));
  if (forward) c->SetStatus(c->GetAttr("exponential_avg_factor", &a->factor));
  c->SetStatus(c->GetAttr("data_format", &a->format));
  c->SetStatus(c->GetAttr("is_training", &a->is_training));
}

// Forward: inputs x, scale, offset, mean, variance; outputs y, batch_mean, batch_variance,
// reserve_space_1, reserve_space_2 (and reserve_space_3 when v3).
template <bool kV3>
class FusedBatchNormOp : public OpKernel {
 public:
  explicit FusedBatchNormOp(OpKernelConstruction* c) : OpKernel(c) { ParseBNAttrs(c, true, &a_); }
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    const std::string prefix = absl::StrCat(type_string(), " '", name(), "': ");
    const Tensor& x = ctx->input(0);
    OP_REQUIRES_ASSIGN(ctx, BNLayout l, MakeLayout(a_.format, kV3, x.shape(), prefix));
    const int64_t C = l.channels;
    OP_REQUIRES_OK(ctx, CheckVector(ctx->input(1), "scale", C, prefix));
    OP_REQUIRES_OK(ctx, CheckVector(ctx->input(2), "offset", C, prefix));
    const bool use_running = !a_.is_training || a_.factor != 1.0f;
    if (use_running) {
      OP_REQUIRES_OK(ctx, CheckVector(ctx->input(3), "mean", C, prefix));
      OP_REQUIRES_OK(ctx, CheckVector(ctx->input(4), "variance", C, prefix));
    } else {
      for (int i : {3, 4}) {
        OP_REQUIRES(ctx, ctx->input(i).shape().dims() == 1,
                    errors::InvalidArgument(prefix, i == 3 ? "mean" : "variance", " must be 1-dimensional",
                                            ctx->input(i).shape().DebugString()));
      }
    }
    Tensor *y, *bm, *bv, *r1, *r2;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({C}), &bm));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({C}), &bv));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(3, TensorShape({C}), &r1));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(4, TensorShape({C}), &r2));
    if constexpr (kV3) {
      Tensor* r3;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(5, TensorShape({0}), &r3));
    }
    const float* xd = x.data<float>();
    const float* scale = ctx->input(1).data<float>();
    const float* offset = ctx->input(2).data<float>();
    float* yd = y->data<float>();
    float *bmd = bm->data<float>(), *bvd = bv->data<float>(), *r1d = r1->data<float>(), *r2d = r2->data<float>();
    const int64_t n = l.PerChannel();
    if (n == 0) {
      for (int64_t c = 0; c < C; ++c) {
        bmd[c] = bvd[c] = std::numeric_limits<float>::quiet_NaN();
        r1d[c] = r2d[c] = 0;
      }
      return;
    }
    std::vector<double> mean(C, 0.0), var(C, 0.0);
    if (a_.is_training) {
      BatchMoments(l, xd, &mean, &var);
    } else {
      const float* m = ctx->input(3).data<float>();
      const float* v = ctx->input(4).data<float>();
      for (int64_t c = 0; c < C; ++c) {
        mean[c] = m[c];
        var[c] = v[c];
      }
    }
    // y = (x - mean) * mul + offset per channel: centred first, as TensorFlow does, so that a
    // mean far from zero costs no precision.
    std::vector<float> centre(C), mul(C);
    for (int64_t c = 0; c < C; ++c) {
      centre[c] = float(mean[c]);
      mul[c] = float(double(scale[c]) / std::sqrt(var[c] + double(a_.epsilon)));
    }
    Apply(l, xd, centre.data(), mul.data(), offset, yd);
    if (a_.is_training) {
      const double adjust = n > 1 ? double(n) / double(n - 1) : 1.0;
      const double f = a_.factor;
      const float* rm = use_running ? ctx->input(3).data<float>() : nullptr;
      const float* rv = use_running ? ctx->input(4).data<float>() : nullptr;
      for (int64_t c = 0; c < C; ++c) {
        r1d[c] = float(mean[c]);
        r2d[c] = float(var[c]);
        const double unbiased = var[c] * adjust;
        if (a_.factor == 1.0f) {
          bmd[c] = float(mean[c]);
          bvd[c] = float(unbiased);
        } else {
          bmd[c] = float((1 - f) * rm[c] + f * mean[c]);
          bvd[c] = float((1 - f) * rv[c] + f * unbiased);
        }
      }
    } else {
      for (int64_t c = 0; c < C; ++c) {
        bmd[c] = r1d[c] = float(mean[c]);
        bvd[c] = r2d[c] = float(var[c]);
      }
    }
  }

 private:
  static void BatchMoments(const BNLayout& l, const float* x, std::vector<double>* mean, std::vector<double>* var) {
    const int64_t C = l.channels;
    std::vector<double>& m = *mean;
    std::vector<double>& v = *var;
    const double inv_n = 1.0 / double(l.PerChannel());
    if (l.inner == 1) {  // channels last: whole rows of channels at a time
      double* mp = m.data();
      double* vp = v.data();
      for (int64_t o = 0; o < l.outer; ++o) {
        const float* p = x + o * C;
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) mp[c] += p[c];
      }
      for (int64_t c = 0; c < C; ++c) mp[c] *= inv_n;
      for (int64_t o = 0; o < l.outer; ++o) {
        const float* p = x + o * C;
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) vp[c] += (p[c] - mp[c]) * (p[c] - mp[c]);
      }
      for (int64_t c = 0; c < C; ++c) vp[c] *= inv_n;
      return;
    }
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t c = 0; c < C; ++c) {
        const float* p = x + (o * C + c) * l.inner;
        double s = 0;
        for (int64_t i = 0; i < l.inner; ++i) s += p[i];
        m[c] += s;
      }
    }
    for (int64_t c = 0; c < C; ++c) m[c] *= inv_n;
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t c = 0; c < C; ++c) {
        const float* p = x + (o * C + c) * l.inner;
        const double mc = m[c];
        double s = 0;
        for (int64_t i = 0; i < l.inner; ++i) s += (p[i] - mc) * (p[i] - mc);
        v[c] += s;
      }
    }
    for (int64_t c = 0; c < C; ++c) v[c] *= inv_n;
  }

  static void Apply(const BNLayout& l, const float* x, const float* centre, const float* mul, const float* add,
                    float* y) {
    const int64_t C = l.channels;
    if (l.inner == 1) {
      for (int64_t o = 0; o < l.outer; ++o) {
        const float* xp = x + o * C;
        float* yp = y + o * C;
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) yp[c] = (xp[c] - centre[c]) * mul[c] + add[c];
      }
      return;
    }
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t c = 0; c < C; ++c) {
        const float* xp = x + (o * C + c) * l.inner;
        float* yp = y + (o * C + c) * l.inner;
        const float m = centre[c], k = mul[c], b = add[c];
#pragma omp simd
        for (int64_t i = 0; i < l.inner; ++i) yp[i] = (xp[i] - m) * k + b;
      }
    }
  }

  BNAttrs a_;
};

// Gradient kernel: inputs y_backprop, x, scale, reserve_space_1 (mean), reserve_space_2
// (variance) [, reserve_space_3]; outputs x_backprop, scale_backprop, offset_backprop and two
// zero scalars.
//   training:  dx = scale * rsqrt(v + eps) * (dy - mean(dy) - (x - m) * mean(dy * (x - m)) / (v + eps))
//   inference: dx = dy * scale * rsqrt(v + eps)
//   dscale = sum(dy * (x - m)) * rsqrt(v + eps), doffset = sum(dy).
template <bool kV3>
class FusedBatchNormGradOp : public OpKernel {
 public:
  explicit FusedBatchNormGradOp(OpKernelConstruction* c) : OpKernel(c) { ParseBNAttrs(c, false, &a_); }
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    const std::string prefix = absl::StrCat(type_string(), " '", name(), "': ");
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    OP_REQUIRES_ASSIGN(ctx, BNLayout l, MakeLayout(a_.format, kV3, x.shape(), prefix));
    OP_REQUIRES(ctx, dy.shape() == x.shape(),
                errors::InvalidArgument(prefix, "x and y_backprop must have same shape, but x has shape ",
                                        x.shape().DebugString(), " and y_backprop has shape ",
                                        dy.shape().DebugString()));
    const int64_t C = l.channels;
    OP_REQUIRES_OK(ctx, CheckVector(ctx->input(2), "scale", C, prefix));
    OP_REQUIRES_OK(ctx, CheckVector(ctx->input(3), "reserve_space_1", C, prefix));
    OP_REQUIRES_OK(ctx, CheckVector(ctx->input(4), "reserve_space_2", C, prefix));
    Tensor *dx, *dscale, *doffset, *p1, *p2;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &dx));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({C}), &dscale));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, TensorShape({C}), &doffset));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(3, TensorShape({}), &p1));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(4, TensorShape({}), &p2));
    p1->data<float>()[0] = 0;
    p2->data<float>()[0] = 0;
    const float* dyd = dy.data<float>();
    const float* xd = x.data<float>();
    const float* scale = ctx->input(2).data<float>();
    const float* m = ctx->input(3).data<float>();
    const float* v = ctx->input(4).data<float>();
    float* dxd = dx->data<float>();
    const int64_t n = l.PerChannel();
    // Per channel: sum(dy), sum(dy * (x - m)).
    std::vector<double> sum_dy(C, 0.0), sum_dyxc(C, 0.0), rstd(C);
    for (int64_t c = 0; c < C; ++c) rstd[c] = 1.0 / std::sqrt(double(v[c]) + double(a_.epsilon));
    for (int64_t o = 0; o < l.outer && l.inner == 1; ++o) {  // channels last
      const float* gp = dyd + o * C;
      const float* xp = xd + o * C;
      double* s = sum_dy.data();
      double* sx = sum_dyxc.data();
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) {
        s[c] += gp[c];
        sx[c] += double(gp[c]) * (double(xp[c]) - double(m[c]));
      }
    }
    for (int64_t o = 0; o < l.outer && l.inner != 1; ++o) {
      for (int64_t c = 0; c < C; ++c) {
        const int64_t base = (o * C + c) * l.inner;
        const double mc = m[c];
        double s = 0, sx = 0;
        for (int64_t i = 0; i < l.inner; ++i) {
          s += dyd[base + i];
          sx += dyd[base + i] * (xd[base + i] - mc);
        }
        sum_dy[c] += s;
        sum_dyxc[c] += sx;
      }
    }
    float* ds = dscale->data<float>();
    float* dof = doffset->data<float>();
    for (int64_t c = 0; c < C; ++c) {
      ds[c] = float(sum_dyxc[c] * rstd[c]);
      dof[c] = float(sum_dy[c]);
    }
    if (n == 0) return;
    // dx = dy * k1 + (x - m) * k2 + k3 per channel.
    std::vector<double> k1(C), k2(C), k3(C);
    for (int64_t c = 0; c < C; ++c) {
      const double coef = double(scale[c]) * rstd[c];
      if (a_.is_training) {
        const double mean_dy = sum_dy[c] / double(n), mean_dyxc = sum_dyxc[c] / double(n);
        k1[c] = coef;
        k2[c] = -coef * mean_dyxc * rstd[c] * rstd[c];
        k3[c] = -coef * mean_dy;
      } else {
        k1[c] = coef;
        k2[c] = 0;
        k3[c] = 0;
      }
    }
    if (l.inner == 1) {
      // The same in float, whole rows of channels at a time.
      std::vector<float> fa(C), fb(C), fd(C);
      for (int64_t c = 0; c < C; ++c) {
        fa[c] = float(k1[c]);
        fb[c] = float(k2[c]);
        fd[c] = float(k3[c]);
      }
      for (int64_t o = 0; o < l.outer; ++o) {
        const float* gp = dyd + o * C;
        const float* xp = xd + o * C;
        float* op = dxd + o * C;
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) op[c] = gp[c] * fa[c] + (xp[c] - m[c]) * fb[c] + fd[c];
      }
      return;
    }
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t c = 0; c < C; ++c) {
        const int64_t base = (o * C + c) * l.inner;
        const double a = k1[c], b = k2[c], d = k3[c], mc = m[c];
        for (int64_t i = 0; i < l.inner; ++i) {
          dxd[base + i] = float(dyd[base + i] * a + (xd[base + i] - mc) * b + d);
        }
      }
    }
  }

 private:
  BNAttrs a_;
};

// ---- shape functions ----

// The channel dim of x (-1 when unknown); validates the rank.
StatusOr<int64_t> ChannelDim(InferenceContext* c, const PartialTensorShape& x, bool v3) {
  std::string format;
  RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  const bool ok4 = format == "NHWC" || format == "NCHW";
  const bool ok5 = v3 && (format == "NDHWC" || format == "NCDHW");
  if (!ok4 && !ok5) return errors::InvalidArgument("invalid data_format '", format, "'");
  const int rank = ok4 ? 4 : 5;
  PartialTensorShape s;
  Status st = c->WithRank(x, rank, &s);
  if (!st.ok()) return errors::InvalidArgument("Shape must be rank ", rank, " but is ", x.DebugString());
  if (s.unknown_rank()) return int64_t{-1};
  return s.dim_size(ChannelsFirst(format) ? 1 : rank - 1);
}

// Merges `depth` with the sizes of the 1-D inputs `inputs`.
Status MergeDepth(InferenceContext* c, std::initializer_list<int> inputs, int64_t* depth) {
  for (int i : inputs) {
    PartialTensorShape v;
    Status st = c->WithRank(c->input(i), 1, &v);
    if (!st.ok()) return errors::InvalidArgument("Shape must be rank 1 but is ", c->input(i).DebugString());
    if (v.unknown_rank()) continue;
    const int64_t d = v.dim_size(0);
    if (d < 0) continue;
    if (*depth >= 0 && d != *depth) {
      return errors::InvalidArgument("Dimensions must be equal, but are ", *depth, " and ", d);
    }
    *depth = d;
  }
  return absl::OkStatus();
}

Status FusedBatchNormShape(InferenceContext* c, bool v3) {
  ASSIGN_OR_RETURN(int64_t depth, ChannelDim(c, c->input(0), v3));
  bool is_training = true;
  float factor = 1;
  RETURN_IF_ERROR(c->GetAttr("is_training", &is_training));
  RETURN_IF_ERROR(c->GetAttr("exponential_avg_factor", &factor));
  if (!is_training || factor != 1) {
    RETURN_IF_ERROR(MergeDepth(c, {1, 2, 3, 4}, &depth));
  } else {
    RETURN_IF_ERROR(MergeDepth(c, {1, 2}, &depth));
  }
  c->set_output(0, c->input(0));
  for (int i = 1; i <= 4; ++i) c->set_output(i, PartialTensorShape({depth}));
  if (v3) c->set_output(5, PartialTensorShape());  // TensorFlow leaves it unknown
  return absl::OkStatus();
}

Status FusedBatchNormGradShape(InferenceContext* c, bool v3) {
  auto merged = c->input(0).MergeWith(c->input(1));
  if (!merged.ok()) {
    return errors::InvalidArgument("x and y_backprop must have the same shape, got ", c->input(1).DebugString(),
                                   " and ", c->input(0).DebugString());
  }
  ASSIGN_OR_RETURN(int64_t depth, ChannelDim(c, *merged, v3));
  RETURN_IF_ERROR(MergeDepth(c, {2, 3, 4}, &depth));
  c->set_output(0, *merged);
  c->set_output(1, PartialTensorShape({depth}));
  c->set_output(2, PartialTensorShape({depth}));
  c->set_output(3, PartialTensorShape());  // zero scalars at run time
  c->set_output(4, PartialTensorShape());
  return absl::OkStatus();
}

// ---- gradients ----

// TensorFlow's _BaseFusedBatchNormGrad: only the gradient of y flows; training reads the saved
// batch statistics (reserve spaces), inference the population mean and variance inputs.
GradFn FusedBatchNormGradient(const char* grad_op, bool v3) {
  return [grad_op, v3](GradContext* c) {
    GraphBuilder* b = c->b;
    bool is_training = true;
    RETURN_IF_ERROR(GetAttr(c->node->attrs(), "is_training", &is_training));
    AttrMap attrs = CopyAttrs(c->node, {"T", "U", "epsilon", "data_format", "is_training"});
    std::vector<NodeOut> args = {c->GradOrZeros(0), c->inputs[0], c->inputs[1]};
    if (is_training) {
      args.push_back(c->outputs[3]);
      args.push_back(c->outputs[4]);
    } else {
      args.push_back(c->inputs[3]);
      args.push_back(c->inputs[4]);
    }
    if (v3) args.push_back(c->outputs[5]);
    Node* g = b->AddNode(grad_op, args, attrs);
    RETURN_IF_ERROR(b->status());
    c->grad_inputs[0] = NodeOut{g, 0};
    c->grad_inputs[1] = NodeOut{g, 1};
    c->grad_inputs[2] = NodeOut{g, 2};
    return b->status();
  };
}

OpDefBuilder ForwardDef(const char* op, bool v2plus, bool v3) {
  OpDefBuilder b(op);
  const char* u = v2plus ? "U" : "T";
  b.Input("x: T")
      .Input(absl::StrCat("scale: ", u))
      .Input(absl::StrCat("offset: ", u))
      .Input(absl::StrCat("mean: ", u))
      .Input(absl::StrCat("variance: ", u))
      .Output("y: T")
      .Output(absl::StrCat("batch_mean: ", u))
      .Output(absl::StrCat("batch_variance: ", u))
      .Output(absl::StrCat("reserve_space_1: ", u))
      .Output(absl::StrCat("reserve_space_2: ", u));
  if (v3) b.Output("reserve_space_3: U");
  b.Attr("T: {float}");
  if (v2plus) b.Attr("U: {float}");
  b.Attr("epsilon: float = 0.0001")
      .Attr("exponential_avg_factor: float = 1")
      .Attr("data_format: string = 'NHWC'")
      .Attr("is_training: bool = true")
      .SetShapeFn([v3](InferenceContext* c) { return FusedBatchNormShape(c, v3); })
      .Doc("Batch normalization of a 4-D (V3: also 5-D) input over every axis but the channel's.");
  return b;
}

OpDefBuilder GradDef(const char* op, bool v2plus, bool v3) {
  OpDefBuilder b(op);
  const char* u = v2plus ? "U" : "T";
  b.Input("y_backprop: T")
      .Input("x: T")
      .Input(v2plus ? "scale: float" : "scale: T")
      .Input(absl::StrCat("reserve_space_1: ", u))
      .Input(absl::StrCat("reserve_space_2: ", u));
  if (v3) b.Input("reserve_space_3: U");
  b.Output("x_backprop: T")
      .Output(absl::StrCat("scale_backprop: ", u))
      .Output(absl::StrCat("offset_backprop: ", u))
      .Output(absl::StrCat(v3 ? "reserve_space_4: " : "reserve_space_3: ", u))
      .Output(absl::StrCat(v3 ? "reserve_space_5: " : "reserve_space_4: ", u));
  b.Attr("T: {float}");
  if (v2plus) b.Attr("U: {float}");
  b.Attr("epsilon: float = 0.0001")
      .Attr("data_format: string = 'NHWC'")
      .Attr("is_training: bool = true")
      .SetShapeFn([v3](InferenceContext* c) { return FusedBatchNormGradShape(c, v3); })
      .Doc("The gradients of FusedBatchNorm with respect to x, scale and offset.");
  return b;
}

}  // namespace

void RegisterBatchNormGradGradients();  // batch_norm_grad_grad.cc

void RegisterBatchNormOps() {
  RegisterOp(ForwardDef("FusedBatchNorm", false, false));
  RegisterOp(ForwardDef("FusedBatchNormV2", true, false));
  RegisterOp(ForwardDef("FusedBatchNormV3", true, true));
  RegisterOp(GradDef("FusedBatchNormGrad", false, false));
  RegisterOp(GradDef("FusedBatchNormGradV2", true, false));
  RegisterOp(GradDef("FusedBatchNormGradV3", true, true));
  RegisterKernel<FusedBatchNormOp<false>>(KernelBuilder("FusedBatchNorm").TypeConstraint<float>("T"));
  RegisterKernel<FusedBatchNormOp<false>>(KernelBuilder("FusedBatchNormV2").TypeConstraint<float>("T"));
  RegisterKernel<FusedBatchNormOp<true>>(KernelBuilder("FusedBatchNormV3").TypeConstraint<float>("T"));
  RegisterKernel<FusedBatchNormGradOp<false>>(KernelBuilder("FusedBatchNormGrad").TypeConstraint<float>("T"));
  RegisterKernel<FusedBatchNormGradOp<false>>(KernelBuilder("FusedBatchNormGradV2").TypeConstraint<float>("T"));
  RegisterKernel<FusedBatchNormGradOp<true>>(KernelBuilder("FusedBatchNormGradV3").TypeConstraint<float>("T"));
  RegisterGradient("FusedBatchNorm", FusedBatchNormGradient("FusedBatchNormGrad", false));
  RegisterGradient("FusedBatchNormV2", FusedBatchNormGradient("FusedBatchNormGradV2", false));
  RegisterGradient("FusedBatchNormV3", FusedBatchNormGradient("FusedBatchNormGradV3", true));
  RegisterBatchNormGradGradients();
}

}  // namespace dflow
