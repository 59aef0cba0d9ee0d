// The neural-net op family, one registration function per file; RegisterNNOps calls them all.
// Each registers its OpDefs, CPU kernels (float and double) and gradient functions.
#pragma once

namespace dflow {

void RegisterActivationOps();     // Relu, Relu6, Elu, Selu, Softplus and their *Grad kernels
void RegisterSoftmaxOps();        // Softmax, LogSoftmax
void RegisterLossOps();           // SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits, L2Loss
void RegisterBiasOps();           // BiasAdd, BiasAddGrad
void RegisterConvOps();           // Conv2D, Conv2DBackpropInput, Conv2DBackpropFilter
void RegisterPoolingOps();        // MaxPool, AvgPool, MaxPoolGrad, AvgPoolGrad
void RegisterBatchNormOps();      // FusedBatchNorm{,V2,V3}, FusedBatchNormGrad{,V2,V3}
void RegisterDepthwiseConvOps();  // DepthwiseConv2dNative and its BackpropInput / BackpropFilter
void RegisterLeakyReluOps();      // LeakyRelu, LeakyReluGrad
void RegisterFusedOps();          // _FusedConv2D, _FusedMatMul (graph/op_fusion.h)

}  // namespace dflow
