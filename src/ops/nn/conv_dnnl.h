// Float 2-D convolution and its gradients through oneDNN, with the primitives cached per
// geometry. A big call is cut along the batch for the cores (BatchShards, dnnl_util.h), each
// piece run by a single-threaded primitive. The caller's tensors are in TensorFlow's layouts (NHWC or NCHW
// activations, HWIO filters); filters (and NCHW activations) are reordered into the layouts the
// fast implementations need (see conv_dnnl.cc for the measurements behind that).
//
// Thread-safe: one instance serves concurrent Compute calls of its kernel. Each call returns
// Internal when oneDNN fails, and the caller falls back to the reference loops. Callers route
// empty tensors to the reference loops (oneDNN rejects zero-sized dims).
#pragma once

#include "ops/nn/dnnl_util.h"
#include "ops/nn/sliding_window.h"

namespace dflow {

// The activation a fused kernel applies after its bias (TensorFlow's fused_ops names).
enum class FusedActivation { kNone, kRelu, kRelu6, kElu, kLeakyRelu };

// What a fused forward convolution does to its output: adds `bias` (one value per output
// channel; null: none), then applies `activation` (`alpha` is LeakyRelu's slope).
struct ConvPostOps {
  const float* bias = nullptr;
  FusedActivation activation = FusedActivation::kNone;
  float alpha = 0;
};

// What DnnlConv2D and DnnlDepthwiseConv2D (depthwise_dnnl.h) share: everything but the filter's
// shape and layout, which `depthwise` picks.
class DnnlConvolution {
 public:
  Status Forward(const Conv2DDims& d, const float* input, const float* filter, float* out,
                 const ConvPostOps& post = {});
  Status BackwardData(const Conv2DDims& d, const float* filter, const float* out_backprop, float* in_backprop);
  Status BackwardWeights(const Conv2DDims& d, const float* input, const float* out_backprop, float* filter_backprop);

 protected:
  explicit DnnlConvolution(bool depthwise) : depthwise_(depthwise) {}

 private:
  // The single-threaded primitive of `kind` (forward, backward data, backward weights) for `d`.
  // `post` matters for the forward kind only.
  std::shared_ptr<const DnnlPrimitive> Primitive(int kind, const Conv2DDims& d, const ConvPostOps& post = {});

  const bool depthwise_;
  PrimitiveCache<DnnlPrimitive> cache_;
};

class DnnlConv2D : public DnnlConvolution {
 public:
  DnnlConv2D() : DnnlConvolution(/*depthwise=*/false) {}
};

}  // namespace dflow
