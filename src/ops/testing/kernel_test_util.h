// Test helper: runs one op's CPU kernel on given input values, without a session.
//
// The node is built through Graph::AddNode (so attrs, dtypes and the shape function are checked
// too) with each input a Const. Errors from building, kernel construction or Compute are
// returned as they are.
#pragma once

#include <vector>

#include "framework/attr_value.h"
#include "tensor/tensor.h"

namespace dflow {
class Device;
}

namespace dflow::testing {

StatusOr<std::vector<Tensor>> RunOpKernel(const std::string& op, const std::vector<Tensor>& inputs, AttrMap attrs = {});
// The same on `device` (its resources and file policy).
StatusOr<std::vector<Tensor>> RunOpKernelOn(Device* device, const std::string& op, const std::vector<Tensor>& inputs,
                                            AttrMap attrs = {});

// The static output shapes that the op's shape function infers for these inputs.
StatusOr<std::vector<PartialTensorShape>> InferShapes(const std::string& op, const std::vector<Tensor>& inputs,
                                                      AttrMap attrs = {});

// Convenience constructors for expected values.
template <typename T>
Tensor MakeTensor(const std::vector<T>& values, const TensorShape& shape) {
  return Tensor::FromValues<T>(values, shape).value();
}

}  // namespace dflow::testing
