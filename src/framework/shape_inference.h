// Static shape inference while a graph is built: each op's shape function sees its inputs'
// (partial) shapes, the values of constant inputs, and its attrs, and sets its outputs' shapes.
#pragma once

#include <string>
#include <vector>

#include "framework/node_properties.h"

namespace dflow {

class InferenceContext {
 public:
  InferenceContext(const NodeProperties* props, std::vector<PartialTensorShape> input_shapes,
                   std::vector<const Tensor*> input_tensors);

  const NodeProperties& node() const { return *props_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  const PartialTensorShape& input(int i) const { return inputs_[i]; }
  // The value of input i when it is known while building (a Const), else nullptr.
  const Tensor* input_tensor(int i) const { return input_tensors_[i]; }
  DType input_type(int i) const { return props_->input_types[i]; }
  void set_output(int i, PartialTensorShape s) { outputs_[i] = std::move(s); }
  const PartialTensorShape& output(int i) const { return outputs_[i]; }
  std::vector<PartialTensorShape> TakeOutputs() { return std::move(outputs_); }

  template <typename T>
  Status GetAttr(absl::string_view name, T* out) const {
    return dflow::GetAttr(props_->attrs, name, out);
  }

  // Checks that `s` has rank `rank` (or unknown rank, which becomes `rank` unknown dims).
  Status WithRank(const PartialTensorShape& s, int rank, PartialTensorShape* out) const;
  // Reads a shape given as a 1-D int32/int64 tensor input (Reshape, Fill): exact when the
  // value is known, otherwise unknown dims of the rank its own shape implies.
  Status ShapeFromShapeTensor(int input, PartialTensorShape* out) const;

 private:
  const NodeProperties* props_;
  std::vector<PartialTensorShape> inputs_;
  std::vector<const Tensor*> input_tensors_;
  std::vector<PartialTensorShape> outputs_;
};

// Common shape functions.
Status UnknownShape(InferenceContext* c);    // every output of unknown shape
Status UnchangedShape(InferenceContext* c);  // output 0 = input 0
Status ScalarShape(InferenceContext* c);     // every output a scalar
Status NoOutputs(InferenceContext* c);
// NumPy broadcasting of inputs 0 and 1 into output 0.
Status BroadcastBinaryShape(InferenceContext* c);

// NumPy broadcasting of two static shapes.
StatusOr<PartialTensorShape> BroadcastShapes(const PartialTensorShape& a, const PartialTensorShape& b);

}  // namespace dflow
