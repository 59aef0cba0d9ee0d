// The math op family, one registration function per file; RegisterMathOps calls them all.
#pragma once

namespace dflow {

// Add, AddV2, Sub, Mul, Div, RealDiv, Pow, FloorDiv, FloorMod, Maximum, Minimum, SquaredDifference
void RegisterArithmeticOps();
void RegisterComparisonOps();  // Greater, Less, GreaterEqual, LessEqual, Equal, NotEqual
void RegisterLogicalOps();     // LogicalAnd, LogicalOr, LogicalNot
// Neg, Exp, Log, Abs, Sign, Square, Sqrt, Rsqrt, Reciprocal, Log1p, Tanh, Sigmoid, Floor, Ceil, Round
void RegisterUnaryMathOps();
void RegisterCastOp();                   // Cast
void RegisterSelectOps();                // Select, SelectV2
void RegisterAddNOp();                   // AddN
void RegisterReductionOps();             // Sum, Mean, Max, Min, Prod
void RegisterArgMinMaxOps();             // ArgMax, ArgMin
void RegisterBroadcastGradientArgsOp();  // BroadcastGradientArgs
void RegisterCompatMathOps();            // DivNoNan, MulNoNan, Xdivy, Xlogy (with their gradients)
// TanhGrad, SigmoidGrad, SqrtGrad, RsqrtGrad, ReciprocalGrad (with their gradients)
void RegisterUnaryGradOps();

// Gradient functions (and RegisterNoGradient declarations) of the ops above.
void RegisterElementwiseGradients();  // element-wise ops, Cast, Select, AddN, comparisons
void RegisterReductionGradients();    // Sum, Mean, Max, Min, Prod, ArgMax, ArgMin

}  // namespace dflow
