// Float depthwise 2-D convolution and its gradients through oneDNN: a grouped convolution with
// one group per input channel (groups = in_depth, multiplier outputs each), which orders the
// output channels as TensorFlow does (c * multiplier + m). TensorFlow's [rows, cols, in_depth,
// multiplier] filter is oneDNN's `hwigo` layout; activations NHWC or NCHW. Primitives are cached
// per geometry and thread count.
//
// Thread-safe. Each call returns Internal when oneDNN fails (the caller falls back to its loops);
// callers route empty tensors to the loops.
#pragma once

#include "ops/nn/dnnl_util.h"
#include "ops/nn/sliding_window.h"

namespace dflow {

// `d` as for Conv2D with out_depth = the depth multiplier.
class DnnlDepthwiseConv2D {
 public:
  Status Forward(const Conv2DDims& d, const float* input, const float* filter, float* out);
  Status BackwardData(const Conv2DDims& d, const float* filter, const float* out_backprop, float* in_backprop);
  Status BackwardWeights(const Conv2DDims& d, const float* input, const float* out_backprop,
                         float* filter_backprop);

 private:
  PrimitiveCache<DnnlPrimitive> cache_;
};

}  // namespace dflow
