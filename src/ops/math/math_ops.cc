#include "ops/math/math_ops.h"

#include "ops/register_all.h"

namespace dflow {

void RegisterBoolReductionOps();  // bool_reduction_ops.cc: All, Any

void RegisterMathOps() {
  RegisterArithmeticOps();
  RegisterComparisonOps();
  RegisterLogicalOps();
  RegisterUnaryMathOps();
  RegisterCastOp();
  RegisterSelectOps();
  RegisterAddNOp();
  RegisterReductionOps();
  RegisterBoolReductionOps();
  RegisterArgMinMaxOps();
  RegisterBroadcastGradientArgsOp();
  RegisterCompatMathOps();
  RegisterUnaryGradOps();
  RegisterElementwiseGradients();
  RegisterReductionGradients();
}

}  // namespace dflow
