// Float depthwise 2-D convolution and its gradients through oneDNN: a grouped convolution with
// one group per input channel (groups = in_depth, multiplier outputs each), which orders the
// output channels as TensorFlow does (c * multiplier + m). TensorFlow's [rows, cols, in_depth,
// multiplier] filter is oneDNN's `hwigo` layout; activations NHWC or NCHW. Primitives are cached
// per geometry and thread count (the implementation is conv_dnnl.cc's).
//
// Thread-safe. Each call returns Internal when oneDNN fails (the caller falls back to its loops);
// callers route empty tensors to the loops.
#pragma once

#include "ops/nn/conv_dnnl.h"

namespace dflow {

// Forward / BackwardData / BackwardWeights take `d` as for Conv2D with out_depth = the depth
// multiplier.
class DnnlDepthwiseConv2D : public DnnlConvolution {
 public:
  DnnlDepthwiseConv2D();
};

}  // namespace dflow
