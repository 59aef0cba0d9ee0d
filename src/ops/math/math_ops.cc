#include "ops/math/math_ops.h"

#include "ops/register_all.h"

namespace dflow {

void RegisterMathOps() {
  RegisterArithmeticOps();
  RegisterComparisonOps();
  RegisterLogicalOps();
  RegisterUnaryMathOps();
  RegisterCastOp();
  RegisterSelectOps();
  RegisterAddNOp();
  RegisterReductionOps();
  RegisterArgMinMaxOps();
  RegisterBroadcastGradientArgsOp();
  RegisterCompatMathOps();
  RegisterUnaryGradOps();
  RegisterElementwiseGradients();
  RegisterReductionGradients();
}

}  // namespace dflow
