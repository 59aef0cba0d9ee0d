// The op functions of include/dflow/math_ops.h.
#include "dflow/math_ops.h"

namespace dflow::ops {
namespace {

Output Out(const Operation& op, int i = 0) { return op.valid() ? Output(op, i) : Output(); }
Output Binary(const Scope& s, const char* op, Input x, Input y) {
  return Out(BuildOp(s, op, {std::move(x), std::move(y)}));
}
Output Unary(const Scope& s, const char* op, Input x) { return Out(BuildOp(s, op, {std::move(x)})); }
Output Reduce(const Scope& s, const char* op, Input x, Input axis, bool keep_dims) {
  return Out(BuildOp(s, op, {std::move(x), std::move(axis)}, {{"keep_dims", keep_dims}}));
}

}  // namespace

Output FloorDiv(const Scope& s, Input x, Input y) { return Binary(s, "FloorDiv", std::move(x), std::move(y)); }
Output FloorMod(const Scope& s, Input x, Input y) { return Binary(s, "FloorMod", std::move(x), std::move(y)); }
Output Maximum(const Scope& s, Input x, Input y) { return Binary(s, "Maximum", std::move(x), std::move(y)); }
Output Minimum(const Scope& s, Input x, Input y) { return Binary(s, "Minimum", std::move(x), std::move(y)); }
Output SquaredDifference(const Scope& s, Input x, Input y) {
  return Binary(s, "SquaredDifference", std::move(x), std::move(y));
}
Output GreaterEqual(const Scope& s, Input x, Input y) { return Binary(s, "GreaterEqual", std::move(x), std::move(y)); }
Output LessEqual(const Scope& s, Input x, Input y) { return Binary(s, "LessEqual", std::move(x), std::move(y)); }
Output NotEqual(const Scope& s, Input x, Input y) { return Binary(s, "NotEqual", std::move(x), std::move(y)); }
Output LogicalAnd(const Scope& s, Input x, Input y) { return Binary(s, "LogicalAnd", std::move(x), std::move(y)); }
Output LogicalOr(const Scope& s, Input x, Input y) { return Binary(s, "LogicalOr", std::move(x), std::move(y)); }

Output Abs(const Scope& s, Input x) { return Unary(s, "Abs", std::move(x)); }
Output Sign(const Scope& s, Input x) { return Unary(s, "Sign", std::move(x)); }
Output Square(const Scope& s, Input x) { return Unary(s, "Square", std::move(x)); }
Output Sqrt(const Scope& s, Input x) { return Unary(s, "Sqrt", std::move(x)); }
Output Rsqrt(const Scope& s, Input x) { return Unary(s, "Rsqrt", std::move(x)); }
Output Reciprocal(const Scope& s, Input x) { return Unary(s, "Reciprocal", std::move(x)); }
Output Log1p(const Scope& s, Input x) { return Unary(s, "Log1p", std::move(x)); }
Output Tanh(const Scope& s, Input x) { return Unary(s, "Tanh", std::move(x)); }
Output Sigmoid(const Scope& s, Input x) { return Unary(s, "Sigmoid", std::move(x)); }
Output Floor(const Scope& s, Input x) { return Unary(s, "Floor", std::move(x)); }
Output Ceil(const Scope& s, Input x) { return Unary(s, "Ceil", std::move(x)); }
Output Round(const Scope& s, Input x) { return Unary(s, "Round", std::move(x)); }
Output LogicalNot(const Scope& s, Input x) { return Unary(s, "LogicalNot", std::move(x)); }

Output Select(const Scope& s, Input condition, Input t, Input e) {
  return Out(BuildOp(s, "Select", {std::move(condition), std::move(t), std::move(e)}));
}
Output SelectV2(const Scope& s, Input condition, Input t, Input e) {
  return Out(BuildOp(s, "SelectV2", {std::move(condition), std::move(t), std::move(e)}));
}
Output AddN(const Scope& s, const std::vector<Output>& inputs) {
  if (inputs.empty()) {
    if (s.ok()) s.UpdateStatus(errors::InvalidArgument("AddN needs at least one input"));
    return Output();
  }
  std::vector<Input> in(inputs.begin(), inputs.end());
  return Out(BuildOp(s, "AddN", in));
}

Output Sum(const Scope& s, Input x, Input axis, bool keep_dims) {
  return Reduce(s, "Sum", std::move(x), std::move(axis), keep_dims);
}
Output Mean(const Scope& s, Input x, Input axis, bool keep_dims) {
  return Reduce(s, "Mean", std::move(x), std::move(axis), keep_dims);
}
Output Max(const Scope& s, Input x, Input axis, bool keep_dims) {
  return Reduce(s, "Max", std::move(x), std::move(axis), keep_dims);
}
Output Min(const Scope& s, Input x, Input axis, bool keep_dims) {
  return Reduce(s, "Min", std::move(x), std::move(axis), keep_dims);
}
Output Prod(const Scope& s, Input x, Input axis, bool keep_dims) {
  return Reduce(s, "Prod", std::move(x), std::move(axis), keep_dims);
}
Output ArgMax(const Scope& s, Input x, Input dimension, DType output_type) {
  return Out(BuildOp(s, "ArgMax", {std::move(x), std::move(dimension)}, {{"output_type", output_type}}));
}
Output ArgMin(const Scope& s, Input x, Input dimension, DType output_type) {
  return Out(BuildOp(s, "ArgMin", {std::move(x), std::move(dimension)}, {{"output_type", output_type}}));
}

BroadcastGradientArgsOutputs BroadcastGradientArgs(const Scope& s, Input s0, Input s1) {
  Operation op = BuildOp(s, "BroadcastGradientArgs", {std::move(s0), std::move(s1)});
  return {Out(op, 0), Out(op, 1)};
}

Output BatchMatMul(const Scope& s, Input x, Input y, const BatchMatMulAttrs& attrs) {
  return Out(BuildOp(s, "BatchMatMulV2", {std::move(x), std::move(y)}, {{"adj_x", attrs.adj_x}, {"adj_y", attrs.adj_y}},
                     "BatchMatMulV2"));
}
Output MatrixInverse(const Scope& s, Input input, bool adjoint) {
  return Out(BuildOp(s, "MatrixInverse", {std::move(input)}, {{"adjoint", adjoint}}));
}
Output MatrixDeterminant(const Scope& s, Input input) { return Unary(s, "MatrixDeterminant", std::move(input)); }

}  // namespace dflow::ops
