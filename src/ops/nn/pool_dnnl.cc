#include "ops/nn/pool_dnnl.h"

#include <vector>

namespace dflow {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

enum Kind : int64_t { kInference = 0, kTraining = 1, kBackward = 2 };

struct PoolDescs {
  memory::desc src, dst;
  memory::dims strides, kernel, pad_l, pad_r;
};

PoolDescs MakeDescs(const PoolDims& d) {
  const tag act = d.format == DataFormat::kNHWC ? tag::nhwc : tag::nchw;
  const auto f32 = memory::data_type::f32;
  PoolDescs p;
  p.src = memory::desc({d.batch, d.depth, d.rows.in, d.cols.in}, f32, act);
  p.dst = memory::desc({d.batch, d.depth, d.rows.out, d.cols.out}, f32, act);
  p.strides = {d.rows.stride, d.cols.stride};
  p.kernel = {d.rows.window, d.cols.window};
  p.pad_l = {d.rows.pad_before, d.cols.pad_before};
  p.pad_r = {d.rows.pad_after, d.cols.pad_after};
  return p;
}

std::vector<int64_t> Key(Kind kind, const PoolDims& d, int threads) {
  return {kind,
          static_cast<int64_t>(d.format),
          d.batch,
          d.depth,
          d.rows.in,
          d.rows.window,
          d.rows.stride,
          d.rows.pad_before,
          d.rows.pad_after,
          d.cols.in,
          d.cols.window,
          d.cols.stride,
          d.cols.pad_before,
          d.cols.pad_after,
          threads};
}

dnnl::pooling_forward::primitive_desc ForwardPd(const PoolDescs& p, dnnl::algorithm alg, dnnl::prop_kind kind) {
  dnnl::pooling_forward::desc desc(kind, alg, p.src, p.dst, p.strides, p.kernel, p.pad_l, p.pad_r);
  return dnnl::pooling_forward::primitive_desc(desc, DnnlAttr(), CpuEngine());
}

PoolDims WithBatch(PoolDims d, int64_t batch) {
  d.batch = batch;
  return d;
}

}  // namespace

Status DnnlPool::Forward(const PoolDims& d, const float* in, float* out) {
  BatchShards shards(d.Work(), d.batch);
  const auto alg = max_ ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
  const int64_t in_image = d.depth * d.rows.in * d.cols.in, out_image = d.depth * d.rows.out * d.cols.out;
  return RunDnnl("pooling forward", [&] {
    shards.Run([&](int i) {
      const PoolDims di = WithBatch(d, shards.size(i));
      const PoolDescs p = MakeDescs(di);
      auto prim = cache_.GetOrCreate(Key(kInference, di, 1), [&] {
        auto pd = ForwardPd(p, alg, dnnl::prop_kind::forward_inference);
        return DnnlPrimitive{dnnl::pooling_forward(pd), {}, pd.scratchpad_desc(), {}};
      });
      ExecuteDnnl(*prim, {{DNNL_ARG_SRC, UserMemory(p.src, in + shards.begin(i) * in_image)},
                          {DNNL_ARG_DST, UserMemory(p.dst, out + shards.begin(i) * out_image)}});
    });
  });
}

Status DnnlPool::Backward(const PoolDims& d, const float* in, const float* grad, float* in_backprop) {
  BatchShards shards(d.Work(), d.batch);
  const auto alg = max_ ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
  const int64_t in_image = d.depth * d.rows.in * d.cols.in, out_image = d.depth * d.rows.out * d.cols.out;
  return RunDnnl("pooling backward", [&] {
    shards.Run([&](int i) {
      const PoolDims di = WithBatch(d, shards.size(i));
      const PoolDescs p = MakeDescs(di);
      std::shared_ptr<const DnnlPrimitive> fwd;
      if (max_) {
        fwd = cache_.GetOrCreate(Key(kTraining, di, 1), [&] {
          auto pd = ForwardPd(p, alg, dnnl::prop_kind::forward_training);
          return DnnlPrimitive{dnnl::pooling_forward(pd), {}, pd.scratchpad_desc(), pd.workspace_desc()};
        });
      }
      auto bwd = cache_.GetOrCreate(Key(kBackward, di, 1), [&] {
        auto hint = ForwardPd(p, alg, dnnl::prop_kind::forward_training);
        dnnl::pooling_backward::desc desc(alg, p.src, p.dst, p.strides, p.kernel, p.pad_l, p.pad_r);
        dnnl::pooling_backward::primitive_desc pd(desc, DnnlAttr(), CpuEngine(), hint);
        return DnnlPrimitive{dnnl::pooling_backward(pd), {}, pd.scratchpad_desc(), pd.workspace_desc()};
      });
      std::unordered_map<int, memory> args{{DNNL_ARG_DIFF_DST, UserMemory(p.dst, grad + shards.begin(i) * out_image)},
                                           {DNNL_ARG_DIFF_SRC,
                                            UserMemory(p.src, in_backprop + shards.begin(i) * in_image)}};
      if (max_) {
        // The forward pass again, for the positions of the maxima (the workspace).
        std::vector<float> out(static_cast<size_t>(di.OutputShape().num_elements()));
        memory workspace(fwd->workspace, CpuEngine());
        ExecuteDnnl(*fwd, {{DNNL_ARG_SRC, UserMemory(p.src, in + shards.begin(i) * in_image)},
                           {DNNL_ARG_DST, UserMemory(p.dst, out.data())},
                           {DNNL_ARG_WORKSPACE, workspace}});
        args.emplace(DNNL_ARG_WORKSPACE, workspace);
      }
      ExecuteDnnl(*bwd, std::move(args));
    });
  });
}

}  // namespace dflow
