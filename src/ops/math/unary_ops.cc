// Element-wise unary math: Neg, Exp, Log, Abs, Sign, Square, Sqrt, Rsqrt, Reciprocal, Log1p, Tanh,
// Sigmoid, Floor, Ceil, Round. Functions that only make sense on real numbers (Sqrt, Tanh,
// Floor, ...) have float and double kernels; the others also have integer kernels.
#include "framework/shape_inference.h"
#include "ops/math/cwise_ops.h"
#include "ops/math/math_ops.h"

namespace dflow {
namespace {

void RegisterUnaryOpDef(const char* name, const char* types, const char* doc) {
  RegisterOp(OpDefBuilder(name)
                 .Input("x: T")
                 .Output("y: T")
                 .Attr(absl::StrCat("T: {", types, "}"))
                 .SetShapeFn(UnchangedShape)
                 .Doc(doc));
}

template <typename F, typename... Ts>
void RegisterUnaryKernels(const char* op) {
  (RegisterKernel<UnaryOpKernel<F, Ts>>(KernelBuilder(op).TypeConstraint<Ts>("T")), ...);
}

// An op on real numbers only.
template <typename F>
void RegisterRealUnaryOp(const char* name, const char* doc) {
  RegisterUnaryOpDef(name, "float, double", doc);
  RegisterUnaryKernels<F, float, double>(name);
}

// An op on real numbers and signed integers.
template <typename F>
void RegisterSignedUnaryOp(const char* name, const char* doc) {
  RegisterUnaryOpDef(name, "float, double, int32, int64", doc);
  RegisterUnaryKernels<F, float, double, int32_t, int64_t>(name);
}

}  // namespace

void RegisterUnaryMathOps() {
  RegisterSignedUnaryOp<functor::Neg>("Neg", "-x element-wise.");
  RegisterRealUnaryOp<functor::Exp>("Exp", "e ** x element-wise.");
  RegisterRealUnaryOp<functor::Log>("Log", "The natural logarithm of x element-wise.");
  RegisterSignedUnaryOp<functor::Abs>("Abs", "|x| element-wise (the most negative integer stays as it is).");
  RegisterSignedUnaryOp<functor::Sign>("Sign", "-1, 0 or 1 by the sign of x element-wise; NaN stays NaN.");
  RegisterSignedUnaryOp<functor::Square>("Square", "x * x element-wise.");
  RegisterSignedUnaryOp<functor::Round>("Round", "x rounded to the nearest integer element-wise, halves to even.");
  RegisterRealUnaryOp<functor::Sqrt>("Sqrt", "The square root of x element-wise.");
  RegisterRealUnaryOp<functor::Rsqrt>("Rsqrt", "1 / sqrt(x) element-wise.");
  RegisterRealUnaryOp<functor::Reciprocal>("Reciprocal", "1 / x element-wise.");
  RegisterRealUnaryOp<functor::Log1p>("Log1p", "log(1 + x) element-wise, accurate for small x.");
  RegisterRealUnaryOp<functor::Tanh>("Tanh", "The hyperbolic tangent of x element-wise.");
  RegisterRealUnaryOp<functor::Sigmoid>("Sigmoid", "1 / (1 + exp(-x)) element-wise.");
  RegisterRealUnaryOp<functor::Floor>("Floor", "The largest integer not greater than x, element-wise.");
  RegisterRealUnaryOp<functor::Ceil>("Ceil", "The smallest integer not less than x, element-wise.");
}

}  // namespace dflow
