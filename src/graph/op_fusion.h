// Op fusion: a graph rewrite, run on the placed graph a step runs (DirectSession, and the
// master before it partitions), that turns
//
//   Conv2D -> BiasAdd [-> Relu | Relu6 | Elu | LeakyRelu]   into   _FusedConv2D
//   MatMul -> BiasAdd [-> Relu | Relu6 | Elu | LeakyRelu]   into   _FusedMatMul
//
// (TensorFlow's op names, inputs and attrs: the contraction's inputs, then the bias; fused_ops
// lists "BiasAdd" and the activation). One kernel then writes the activation once instead of
// three kernels each making a pass over it. TensorFlow's remapper does the same.
//
// A chain is fused only when that changes nothing a user can see:
//  - every op is float, and all of them are assigned the same device;
//  - each intermediate (the contraction's output, the BiasAdd's when an activation follows) has
//    exactly one consumer, the next op of the chain: a fetched, otherwise shared or
//    control-depended-on intermediate keeps the chain apart. Training graphs still fuse: the
//    gradients of these ops read their inputs and the activation's output, never the
//    intermediates;
//  - the BiasAdd's data_format is the convolution's (any for MatMul, whose output is 2-D).
// The fused node takes the last op's name and device, so tensor names ("relu:0"), fetches,
// partition edges and placement are unchanged; it waits for the control inputs of all the ops it
// replaces and keeps the last op's consumers.
#pragma once

#include "graph/graph.h"

namespace dflow {

// Rewrites `g` in place; returns how many chains were fused. Errors only if the graph is broken
// in a way that AddNode rejects (the fused ops are registered with the nn ops).
StatusOr<int> FuseOps(Graph* g);

}  // namespace dflow
