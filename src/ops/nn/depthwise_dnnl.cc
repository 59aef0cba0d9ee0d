#include "ops/nn/depthwise_dnnl.h"

namespace dflow {

DnnlDepthwiseConv2D::DnnlDepthwiseConv2D() : DnnlConvolution(/*depthwise=*/true) {}

}  // namespace dflow
