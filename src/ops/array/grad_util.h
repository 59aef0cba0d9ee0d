// Helpers for the gradient functions of the array family: constants, shapes and reductions
// built with a GradContext's GraphBuilder.
#pragma once

#include <string>
#include <vector>

#include "graph/gradients.h"

namespace dflow::array {

// True when `op` is registered (gradients may use ops that other families add later).
bool OpRegistered(absl::string_view op);

// A 1-D int32 or int64 constant.
NodeOut IndexConst(GraphBuilder* b, DType dtype, const std::vector<int64_t>& values, const std::string& name = "Const");

// The shape of `x` as a 1-D tensor of `dtype`: a Const when its static shape is fully known,
// else a Shape node.
NodeOut ShapeOf(GraphBuilder* b, const NodeOut& x, DType dtype = DT_INT32);

// The static shape of `x`.
inline const PartialTensorShape& StaticShape(const NodeOut& x) { return x.node->output_shape(x.index); }

// The value of `x` when it is a Const, else nullptr.
inline const Tensor* ConstValue(const NodeOut& x) { return x.index == 0 ? x.node->const_value() : nullptr; }

// Sum(x, axes, keep_dims). FailedPrecondition when the Sum op is not registered (it belongs
// to the math family).
StatusOr<NodeOut> ReduceSum(GraphBuilder* b, const NodeOut& x, const NodeOut& axes, bool keep_dims = false);
// The sum of every element of `x`, a scalar.
StatusOr<NodeOut> SumAll(GraphBuilder* b, const NodeOut& x);

}  // namespace dflow::array
