// Float max and average pooling and their gradients through oneDNN (pooling_max and
// pooling_avg_exclude_padding, TensorFlow's SAME semantics), primitives cached per geometry; a
// big call is cut along the batch for the cores (BatchShards, dnnl_util.h). Activations are used in place as NHWC or NCHW.
//
// Thread-safe. Each call returns Internal when oneDNN fails, and the caller falls back to the
// reference loops; callers route empty tensors there too.
#pragma once

#include "ops/nn/dnnl_util.h"
#include "ops/nn/sliding_window.h"

namespace dflow {

class DnnlPool {
 public:
  explicit DnnlPool(bool max) : max_(max) {}
  Status Forward(const PoolDims& d, const float* in, float* out);
  // Max pooling recomputes the forward pass (for its workspace of argmax positions) from `in`;
  // average pooling ignores `in`.
  Status Backward(const PoolDims& d, const float* in, const float* grad, float* in_backprop);

 private:
  bool max_;
  PrimitiveCache<DnnlPrimitive> cache_;
};

}  // namespace dflow
