// Greater, Less, GreaterEqual, LessEqual, Equal, NotEqual: element-wise comparisons with NumPy
// broadcasting, bool output.
#include <string>

#include "framework/shape_inference.h"
#include "ops/math/cwise_ops.h"
#include "ops/math/math_ops.h"

namespace dflow {
namespace {

template <typename F, typename... Ts>
void RegisterComparisonKernels(const char* op) {
  (RegisterKernel<BinaryOpKernel<F, Ts, bool>>(KernelBuilder(op).TypeConstraint<Ts>("T")), ...);
}

// With incompatible_shape_error = false, shapes that do not broadcast give a scalar `false`
// instead of an error; unless both shapes are fully known the output shape is then unknown.
Status EqualShape(InferenceContext* c) {
  bool incompatible_shape_error = true;
  RETURN_IF_ERROR(c->GetAttr("incompatible_shape_error", &incompatible_shape_error));
  if (incompatible_shape_error) return BroadcastBinaryShape(c);
  const PartialTensorShape& x = c->input(0);
  const PartialTensorShape& y = c->input(1);
  StatusOr<PartialTensorShape> out = BroadcastShapes(x, y);
  if (x.IsFullyDefined() && y.IsFullyDefined()) {
    c->set_output(0, out.ok() ? *out : PartialTensorShape::Scalar());
  } else {
    c->set_output(0, PartialTensorShape());
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterComparisonOps() {
  const std::pair<const char*, const char*> ordered[] = {{"Greater", ">"},
                                                         {"Less", "<"},
                                                         {"GreaterEqual", ">="},
                                                         {"LessEqual", "<="}};
  for (const auto& [name, symbol] : ordered) {
    RegisterOp(OpDefBuilder(name)
                   .Input("x: T")
                   .Input("y: T")
                   .Output("z: bool")
                   .Attr("T: {float, double, int32, int64, uint8}")
                   .SetShapeFn(BroadcastBinaryShape)
                   .Doc(absl::StrCat("The truth value of x ", symbol, " y element-wise with broadcasting.")));
  }
  for (const auto& [name, symbol] : {std::pair{"Equal", "=="}, std::pair{"NotEqual", "!="}}) {
    RegisterOp(OpDefBuilder(name)
                   .Input("x: T")
                   .Input("y: T")
                   .Output("z: bool")
                   .Attr("T: {float, double, int32, int64, uint8, bool, string}")
                   .Attr("incompatible_shape_error: bool = true")
                   .SetShapeFn(EqualShape)
                   .Doc(absl::StrCat("The truth value of x ", symbol, " y element-wise with broadcasting.")));
  }

  RegisterComparisonKernels<functor::Greater, float, double, int32_t, int64_t, uint8_t>("Greater");
  RegisterComparisonKernels<functor::Less, float, double, int32_t, int64_t, uint8_t>("Less");
  RegisterComparisonKernels<functor::Equal, float, double, int32_t, int64_t, uint8_t, bool, std::string>("Equal");
  RegisterComparisonKernels<functor::GreaterEqual, float, double, int32_t, int64_t, uint8_t>("GreaterEqual");
  RegisterComparisonKernels<functor::LessEqual, float, double, int32_t, int64_t, uint8_t>("LessEqual");
  RegisterComparisonKernels<functor::NotEqual, float, double, int32_t, int64_t, uint8_t, bool, std::string>("NotEqual");
}

}  // namespace dflow
