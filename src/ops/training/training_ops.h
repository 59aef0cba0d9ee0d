// Internal to the training op family: the parts that training_ops.cc registers.
#pragma once

namespace dflow {

// The CPU kernels (float, double) of the Apply* ops; see apply_kernels.cc.
void RegisterApplyKernels();
// ApplyAdadelta, ApplyProximalGradientDescent, ApplyProximalAdagrad, ApplyFtrlV2, ApplyAdagradDA
// (OpDefs and kernels).
void RegisterProximalApplyOps();
// The SparseApply* ops (OpDefs and kernels); see sparse_apply_ops.cc.
void RegisterSparseApplyOps();

}  // namespace dflow
