// Registration of the neural-net op family.
#include "ops/nn/nn_ops.h"

#include "ops/register_all.h"

namespace dflow {

void RegisterNNOps() {
  RegisterActivationOps();
  RegisterSoftmaxOps();
  RegisterLossOps();
  RegisterBiasOps();
  RegisterConvOps();
  RegisterPoolingOps();
  RegisterBatchNormOps();
  RegisterDepthwiseConvOps();
  RegisterLeakyReluOps();
  RegisterFusedOps();
}

}  // namespace dflow
