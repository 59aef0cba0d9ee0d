// Op functions: each adds one node to the scope's graph and returns its output (or the
// Operation for ops without outputs). Names, inputs and attrs are TensorFlow's.
#pragma once

#include <string>
#include <vector>

#include "dflow/scope.h"
#include "dflow/attr_value.h"

namespace dflow::ops {

// Builds any registered op: inputs in OpDef order, attrs by name (type attrs are inferred).
// Returns the node's Operation, invalid if building failed (see scope.status()).
Operation BuildOp(const Scope& scope, const std::string& op, const std::vector<Input>& inputs,
                  const AttrMap& attrs = {}, const std::string& default_name = "");

// The same with the number of inputs each input arg of the OpDef takes, in OpDef order (1 for a
// single tensor, the list's length for a list): for ops with more than one list input
// (DynamicStitch's indices and data). Null `arg_sizes`: as BuildOp.
Operation BuildOpWithArgSizes(const Scope& scope, const std::string& op, const std::vector<Input>& inputs,
                              const std::vector<int>* arg_sizes, const AttrMap& attrs = {},
                              const std::string& default_name = "");

// The seed and seed2 attrs of a random op, by TensorFlow's rule: a graph seed makes every random
// op deterministic; an op seed alone uses a fixed default graph seed; neither gives fresh
// randomness in every session.
AttrMap RandomSeedAttrs(const Scope& scope, int64_t op_seed);

Output Const(const Scope& scope, const Input::Initializer& value);
Output Placeholder(const Scope& scope, DType dtype, const PartialTensorShape& shape = PartialTensorShape());
Output Identity(const Scope& scope, Input x);
Operation NoOp(const Scope& scope);
// A NoOp that runs after every op in `ops`.
Operation Group(const Scope& scope, const std::vector<Operation>& ops);

// Element-wise, with NumPy broadcasting.
Output Add(const Scope& scope, Input x, Input y);
Output AddV2(const Scope& scope, Input x, Input y);
Output Sub(const Scope& scope, Input x, Input y);
Output Mul(const Scope& scope, Input x, Input y);
Output Div(const Scope& scope, Input x, Input y);
Output RealDiv(const Scope& scope, Input x, Input y);
Output Pow(const Scope& scope, Input x, Input y);
Output Neg(const Scope& scope, Input x);
Output Exp(const Scope& scope, Input x);
Output Log(const Scope& scope, Input x);
Output Greater(const Scope& scope, Input x, Input y);
Output Less(const Scope& scope, Input x, Input y);
Output Equal(const Scope& scope, Input x, Input y);
inline Output Multiply(const Scope& s, Input x, Input y) { return Mul(s, std::move(x), std::move(y)); }
inline Output Subtract(const Scope& s, Input x, Input y) { return Sub(s, std::move(x), std::move(y)); }

Output Cast(const Scope& scope, Input x, DType dtype);
Output Fill(const Scope& scope, Input dims, Input value);
Output Reshape(const Scope& scope, Input tensor, Input shape);
Output Shape(const Scope& scope, Input x, DType out_type = DT_INT32);
Output Rank(const Scope& scope, Input x);
Output Size(const Scope& scope, Input x, DType out_type = DT_INT32);

struct MatMulAttrs {
  bool transpose_a = false;
  bool transpose_b = false;
};
Output MatMul(const Scope& scope, Input a, Input b, const MatMulAttrs& attrs = {});

// Random tensors of `shape`; `seed` 0 takes the graph seed rule (see Scope::SetRandomSeed).
Output RandomUniform(const Scope& scope, Input shape, DType dtype = DT_FLOAT, int64_t seed = 0);
Output RandomNormal(const Scope& scope, Input shape, DType dtype = DT_FLOAT, int64_t seed = 0);
Output TruncatedNormal(const Scope& scope, Input shape, DType dtype = DT_FLOAT, int64_t seed = 0);

// Reference-edge variable ops (see dflow/variable.h for the convenient Variable).
Output VariableV2(const Scope& scope, const PartialTensorShape& shape, DType dtype);
Output Assign(const Scope& scope, Input ref, Input value);
Output AssignAdd(const Scope& scope, Input ref, Input value);
Output AssignSub(const Scope& scope, Input ref, Input value);

}  // namespace dflow::ops

namespace dflow {
// Operators build ops in the graph of their left operand, in its name scope and device:
// AddV2 "add", Sub "sub", Mul "mul", RealDiv "truediv", Neg "Neg" (TensorFlow's names).
Output operator+(const Output& x, const Input& y);
Output operator-(const Output& x, const Input& y);
Output operator*(const Output& x, const Input& y);
Output operator/(const Output& x, const Input& y);
Output operator-(const Output& x);
}  // namespace dflow
