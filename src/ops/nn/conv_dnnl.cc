#include "ops/nn/conv_dnnl.h"

#include <cstring>
#include <utility>
#include <vector>

namespace dflow {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

enum Kind : int64_t { kForward = 0, kBackwardData = 1, kBackwardWeights = 2 };

// The caller's layouts (src, weights, dst) and the ones the primitive is created with (`any`
// lets oneDNN pick). Measured here (oneDNN 2.6, AVX-512, one thread, 64x32x28x28 -> 64, 3x3):
// NHWC activations with HWIO weights select a gemm implementation at 33 GFLOP/s, with weights
// in oneDNN's own layout (reordered per call) brgconv at 108; NCHW with HWIO weights has only
// the reference implementation (0.04 GFLOP/s!), NCHW with oneDNN's layouts for activations and
// weights (reordered in and out) 85, against 74 for plain NCHW activations. Hence: weights
// always `any`; activations NHWC as they are, NCHW `any`. Depthwise convolutions (grouped, one
// group per input channel, out_depth = the multiplier) take the same choices: oneDNN's blocked
// depthwise weight layouts.
struct ConvDescs {
  memory::desc src, weights, dst;           // the caller's
  memory::desc pd_src, pd_weights, pd_dst;  // for creating the primitive
  memory::dims strides, dilates, pad_l, pad_r;
};

// `depthwise`: TensorFlow's [rows, cols, in_depth, multiplier] filter is oneDNN's `hwigo`.
ConvDescs MakeDescs(const Conv2DDims& d, bool depthwise) {
  const bool nhwc = d.format == DataFormat::kNHWC;
  const tag act = nhwc ? tag::nhwc : tag::nchw;
  const auto f32 = memory::data_type::f32;
  const int64_t out_channels = depthwise ? d.in_depth * d.out_depth : d.out_depth;
  const memory::dims src{d.batch, d.in_depth, d.rows.in, d.cols.in};
  const memory::dims weights = depthwise ? memory::dims{d.in_depth, d.out_depth, 1, d.rows.window, d.cols.window}
                                         : memory::dims{d.out_depth, d.in_depth, d.rows.window, d.cols.window};
  const memory::dims dst{d.batch, out_channels, d.rows.out, d.cols.out};
  ConvDescs c;
  c.src = memory::desc(src, f32, act);
  c.weights = memory::desc(weights, f32, depthwise ? tag::hwigo : tag::hwio);
  c.dst = memory::desc(dst, f32, act);
  c.pd_src = nhwc ? c.src : memory::desc(src, f32, tag::any);
  c.pd_weights = memory::desc(weights, f32, tag::any);
  c.pd_dst = nhwc ? c.dst : memory::desc(dst, f32, tag::any);
  c.strides = {d.rows.stride, d.cols.stride};
  c.dilates = {d.rows.dilation - 1, d.cols.dilation - 1};  // oneDNN counts the gaps
  c.pad_l = {d.rows.pad_before, d.cols.pad_before};
  c.pad_r = {d.rows.pad_after, d.cols.pad_after};
  return c;
}

std::vector<int64_t> Key(Kind kind, const Conv2DDims& d, int threads) {
  return {kind,
          static_cast<int64_t>(d.format),
          d.batch,
          d.in_depth,
          d.out_depth,
          d.rows.in,
          d.rows.window,
          d.rows.stride,
          d.rows.dilation,
          d.rows.pad_before,
          d.rows.pad_after,
          d.cols.in,
          d.cols.window,
          d.cols.stride,
          d.cols.dilation,
          d.cols.pad_before,
          d.cols.pad_after,
          threads};
}

// Whether backward data along `w` is a forward convolution of the output gradient (see
// BackwardData): stride and dilation 1 and padding below the window. oneDNN 2.6 runs backward
// data of NHWC activations with its jit implementation but the forward one with brgconv, faster
// here (one thread, 5x5 SAME 14x14, 64 x 64 -> 32 channels: 5.6 ms against 6.0-6.7 ms for
// backward data 64 x 32 <- 64).
bool FlipsIntoForward(const WindowDim& w) {
  return w.stride == 1 && w.dilation == 1 && w.pad_before < w.window && w.pad_after < w.window;
}

// Elements per image of the input and of the output.
int64_t InputImage(const Conv2DDims& d) { return d.in_depth * d.rows.in * d.cols.in; }
int64_t OutputImage(const Conv2DDims& d, bool depthwise) {
  return (depthwise ? d.in_depth * d.out_depth : d.out_depth) * d.rows.out * d.cols.out;
}

Conv2DDims WithBatch(Conv2DDims d, int64_t batch) {
  d.batch = batch;
  return d;
}

// `user` reordered once into the layout `p` wants for `arg` (or `user` itself when it already has
// it), so that the pieces of a sharded call share it.
memory PrepareInput(const DnnlPrimitive& p, int arg, const memory& user) {
  auto want = p.arg_descs.find(arg);
  if (want == p.arg_descs.end() || want->second == user.get_desc()) return user;
  memory tmp(want->second, CpuEngine());
  dnnl::stream s(CpuEngine());
  dnnl::reorder(user, tmp).execute(s, const_cast<memory&>(user), tmp);
  s.wait();
  return tmp;
}

dnnl::convolution_forward::primitive_desc ForwardPd(const ConvDescs& c, dnnl::prop_kind kind,
                                                    const dnnl::primitive_attr& attr, bool bias = false) {
  if (bias) {
    const memory::desc bias_md({c.dst.dims()[1]}, memory::data_type::f32, tag::a);
    dnnl::convolution_forward::desc desc(kind, dnnl::algorithm::convolution_direct, c.pd_src, c.pd_weights, bias_md,
                                         c.pd_dst, c.strides, c.dilates, c.pad_l, c.pad_r);
    return dnnl::convolution_forward::primitive_desc(desc, attr, CpuEngine());
  }
  dnnl::convolution_forward::desc desc(kind, dnnl::algorithm::convolution_direct, c.pd_src, c.pd_weights, c.pd_dst,
                                       c.strides, c.dilates, c.pad_l, c.pad_r);
  return dnnl::convolution_forward::primitive_desc(desc, attr, CpuEngine());
}

// The primitive attrs of a forward convolution with `post`'s activation as an eltwise post-op
// (applied by the convolution to each block of output it has just written).
dnnl::primitive_attr ForwardAttr(const ConvPostOps& post) {
  dnnl::primitive_attr attr = DnnlAttr();
  if (post.activation == FusedActivation::kNone) return attr;
  dnnl::post_ops ops;
  switch (post.activation) {
    case FusedActivation::kRelu: ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f); break;
    case FusedActivation::kRelu6: ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, 6.0f); break;
    case FusedActivation::kElu: ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_elu, 1.0f, 0.0f); break;
    case FusedActivation::kLeakyRelu: ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, post.alpha, 0.0f); break;
    case FusedActivation::kNone: break;
  }
  attr.set_post_ops(ops);
  return attr;
}

}  // namespace

std::shared_ptr<const DnnlPrimitive> DnnlConvolution::Primitive(int kind, const Conv2DDims& d,
                                                                const ConvPostOps& post) {
  std::vector<int64_t> key = Key(static_cast<Kind>(kind), d, 1);
  if (kind == kForward) {
    int32_t alpha_bits;
    static_assert(sizeof(alpha_bits) == sizeof(post.alpha));
    std::memcpy(&alpha_bits, &post.alpha, sizeof(alpha_bits));
    key.insert(key.end(), {post.bias != nullptr, static_cast<int64_t>(post.activation), alpha_bits});
  }
  return cache_.GetOrCreate(key, [&] {
    const ConvDescs c = MakeDescs(d, depthwise_);
    if (kind == kForward) {
      auto pd = ForwardPd(c, dnnl::prop_kind::forward_inference, ForwardAttr(post), post.bias != nullptr);
      std::unordered_map<int, memory::desc> args{{DNNL_ARG_SRC, pd.src_desc()},
                                                 {DNNL_ARG_WEIGHTS, pd.weights_desc()},
                                                 {DNNL_ARG_DST, pd.dst_desc()}};
      if (post.bias != nullptr) args.emplace(DNNL_ARG_BIAS, pd.bias_desc());
      return DnnlPrimitive{dnnl::convolution_forward(pd), std::move(args), pd.scratchpad_desc(), {}};
    }
    auto hint = ForwardPd(c, dnnl::prop_kind::forward_training, dnnl::primitive_attr());
    if (kind == kBackwardData) {
      dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, c.pd_src, c.pd_weights, c.pd_dst,
                                                 c.strides, c.dilates, c.pad_l, c.pad_r);
      dnnl::convolution_backward_data::primitive_desc pd(desc, DnnlAttr(), CpuEngine(), hint);
      return DnnlPrimitive{dnnl::convolution_backward_data(pd),
                           {{DNNL_ARG_DIFF_SRC, pd.diff_src_desc()},
                            {DNNL_ARG_WEIGHTS, pd.weights_desc()},
                            {DNNL_ARG_DIFF_DST, pd.diff_dst_desc()}},
                           pd.scratchpad_desc(),
                           {}};
    }
    dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, c.pd_src, c.pd_weights, c.pd_dst,
                                                  c.strides, c.dilates, c.pad_l, c.pad_r);
    dnnl::convolution_backward_weights::primitive_desc pd(desc, DnnlAttr(), CpuEngine(), hint);
    return DnnlPrimitive{dnnl::convolution_backward_weights(pd),
                         {{DNNL_ARG_SRC, pd.src_desc()},
                          {DNNL_ARG_DIFF_WEIGHTS, pd.diff_weights_desc()},
                          {DNNL_ARG_DIFF_DST, pd.diff_dst_desc()}},
                         pd.scratchpad_desc(),
                         {}};
  });
}

Status DnnlConvolution::Forward(const Conv2DDims& d, const float* input, const float* filter, float* out,
                                const ConvPostOps& post) {
  BatchShards shards(d.Work(), d.batch);
  return RunDnnl(depthwise_ ? "depthwise convolution forward" : "convolution forward", [&] {
    const ConvDescs c = MakeDescs(d, depthwise_);
    // The filter is reordered once for all pieces.
    const memory weights = PrepareInput(*Primitive(kForward, WithBatch(d, shards.size(0)), post), DNNL_ARG_WEIGHTS,
                                        UserMemory(c.weights, filter));
    const memory::desc bias_md({c.dst.dims()[1]}, memory::data_type::f32, tag::a);
    shards.Run([&](int i) {
      const Conv2DDims di = WithBatch(d, shards.size(i));
      const ConvDescs ci = MakeDescs(di, depthwise_);
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, UserMemory(ci.src, input + shards.begin(i) * InputImage(d))},
                                           {DNNL_ARG_WEIGHTS, weights},
                                           {DNNL_ARG_DST,
                                            UserMemory(ci.dst, out + shards.begin(i) * OutputImage(d, depthwise_))}};
      if (post.bias != nullptr) args.emplace(DNNL_ARG_BIAS, UserMemory(bias_md, post.bias));
      ExecuteDnnl(*Primitive(kForward, di, post), std::move(args));
    });
  });
}

Status DnnlConvolution::BackwardData(const Conv2DDims& d, const float* filter, const float* out_backprop,
                                     float* in_backprop) {
  if (!depthwise_ && FlipsIntoForward(d.rows) && FlipsIntoForward(d.cols)) {
    // in_backprop is the forward convolution of out_backprop with the filter turned 180 degrees
    // in space and its in/out depths swapped, padded by window - 1 - pad on each side.
    Conv2DDims f = d;
    std::swap(f.in_depth, f.out_depth);
    for (WindowDim* w : {&f.rows, &f.cols}) {
      std::swap(w->in, w->out);
      w->pad_before = w->window - 1 - w->pad_before;
      w->pad_after = w->window - 1 - w->pad_after;
    }
    const int64_t kh = d.rows.window, kw = d.cols.window, ic = d.in_depth, oc = d.out_depth;
    std::vector<float> flipped(static_cast<size_t>(kh * kw * ic * oc));
    for (int64_t h = 0; h < kh; ++h) {
      for (int64_t w = 0; w < kw; ++w) {
        const float* from = filter + ((kh - 1 - h) * kw + (kw - 1 - w)) * ic * oc;  // [ic][oc]
        float* to = flipped.data() + (h * kw + w) * oc * ic;                        // [oc][ic]
        for (int64_t i = 0; i < ic; ++i) {
          for (int64_t o = 0; o < oc; ++o) to[o * ic + i] = from[i * oc + o];
        }
      }
    }
    return Forward(f, out_backprop, flipped.data(), in_backprop);
  }
  BatchShards shards(d.Work(), d.batch);
  return RunDnnl(depthwise_ ? "depthwise convolution backward data" : "convolution backward data", [&] {
    const ConvDescs c = MakeDescs(d, depthwise_);
    const memory weights = PrepareInput(*Primitive(kBackwardData, WithBatch(d, shards.size(0))), DNNL_ARG_WEIGHTS,
                                        UserMemory(c.weights, filter));
    shards.Run([&](int i) {
      const Conv2DDims di = WithBatch(d, shards.size(i));
      const ConvDescs ci = MakeDescs(di, depthwise_);
      ExecuteDnnl(*Primitive(kBackwardData, di),
                  {{DNNL_ARG_DIFF_DST, UserMemory(ci.dst, out_backprop + shards.begin(i) * OutputImage(d, depthwise_))},
                   {DNNL_ARG_WEIGHTS, weights},
                   {DNNL_ARG_DIFF_SRC, UserMemory(ci.src, in_backprop + shards.begin(i) * InputImage(d))}});
    });
  });
}

Status DnnlConvolution::BackwardWeights(const Conv2DDims& d, const float* input, const float* out_backprop,
                                        float* filter_backprop) {
  BatchShards shards(d.Work(), d.batch);
  return RunDnnl(depthwise_ ? "depthwise convolution backward weights" : "convolution backward weights", [&] {
    const ConvDescs c = MakeDescs(d, depthwise_);
    // Piece 0 writes the filter gradient, the others partial sums that are added to it after.
    const size_t filter_size = c.weights.get_size() / sizeof(float);
    std::vector<std::vector<float>> partial(static_cast<size_t>(shards.count() - 1));
    shards.Run([&](int i) {
      const Conv2DDims di = WithBatch(d, shards.size(i));
      const ConvDescs ci = MakeDescs(di, depthwise_);
      float* dw = filter_backprop;
      if (i > 0) {
        partial[i - 1].resize(filter_size);
        dw = partial[i - 1].data();
      }
      ExecuteDnnl(*Primitive(kBackwardWeights, di),
                  {{DNNL_ARG_SRC, UserMemory(ci.src, input + shards.begin(i) * InputImage(d))},
                   {DNNL_ARG_DIFF_DST, UserMemory(ci.dst, out_backprop + shards.begin(i) * OutputImage(d, depthwise_))},
                   {DNNL_ARG_DIFF_WEIGHTS, UserMemory(c.weights, dw)}});
    });
    for (const std::vector<float>& p : partial) {
      const float* src = p.data();
#pragma omp simd
      for (size_t j = 0; j < filter_size; ++j) filter_backprop[j] += src[j];
    }
  });
}

}  // namespace dflow
