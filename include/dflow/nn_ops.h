// Public op functions of the neural-net family (see dflow/ops.h for the conventions): each adds
// one node (Dropout a few) to the scope's graph. Names, inputs and attrs are TensorFlow's; float
// and double tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dflow/ops.h"

namespace dflow::ops {

// Element-wise activations.
Output Relu(const Scope& scope, Input features);
Output Relu6(const Scope& scope, Input features);
Output Elu(const Scope& scope, Input features);
Output Selu(const Scope& scope, Input features);
Output Softplus(const Scope& scope, Input features);

// Over the last dimension of logits (rank >= 1).
Output Softmax(const Scope& scope, Input logits);
Output LogSoftmax(const Scope& scope, Input logits);

// value + bias along the channel dimension: the last for "NHWC", dimension 1 for "NCHW".
Output BiasAdd(const Scope& scope, Input value, Input bias, const std::string& data_format = "NHWC");

// Conv2D's attrs. strides and dilations list 4 entries in data_format order (1 for batch and
// depth); padding is "SAME", "VALID" or "EXPLICIT" (then explicit_paddings lists 8 entries,
// before and after for each dimension in data_format order).
struct Conv2DAttrs {
  std::vector<int64_t> strides = {1, 1, 1, 1};
  std::string padding = "SAME";
  std::string data_format = "NHWC";
  std::vector<int64_t> dilations = {1, 1, 1, 1};
  std::vector<int64_t> explicit_paddings;
};
// input [batch, rows, cols, in_depth] (NHWC) or [batch, in_depth, rows, cols] (NCHW); filter
// [filter_rows, filter_cols, in_depth, out_depth].
Output Conv2D(const Scope& scope, Input input, Input filter, const Conv2DAttrs& attrs = {});

// Pooling over ksize windows (4 entries in data_format order, 1 for batch and depth), strides
// apart; padding "SAME" or "VALID". AvgPool leaves padded positions out of each mean.
Output MaxPool(const Scope& scope, Input input, const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
               const std::string& padding, const std::string& data_format = "NHWC");
Output AvgPool(const Scope& scope, Input value, const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
               const std::string& padding, const std::string& data_format = "NHWC");

// Per-example losses [batch] and their gradients with respect to features [batch, classes].
struct SoftmaxCrossEntropy {
  Output loss;
  Output backprop;
};
// labels: a probability distribution per example, shaped like features.
SoftmaxCrossEntropy SoftmaxCrossEntropyWithLogits(const Scope& scope, Input features, Input labels);
// labels: int32 or int64 class indices [batch] in [0, classes); others fail the run with
// InvalidArgument.
SoftmaxCrossEntropy SparseSoftmaxCrossEntropyWithLogits(const Scope& scope, Input features, Input labels);

// sum(t ** 2) / 2, a scalar.
Output L2Loss(const Scope& scope, Input t);

// TensorFlow's dropout: x / keep_prob * mask with mask = floor(keep_prob + RandomUniform(shape(x)))
// (computed as 1 - (keep_prob + uniform < 1), which stays 0 or 1 under rounding): each element is
// kept and scaled by 1 / keep_prob with probability keep_prob, else zeroed.
// keep_prob is a scalar of x's dtype; a literal must lie in (0, 1] (else the scope records
// InvalidArgument), and keep_prob 1 returns x's values exactly. `seed` follows the graph seed
// rule of RandomUniform. Ops are named under "dropout/".
Output Dropout(const Scope& scope, Input x, Input keep_prob, int64_t seed = 0);

}  // namespace dflow::ops
