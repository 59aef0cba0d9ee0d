#include "ops/array/array_ops.h"
#include "ops/register_all.h"

namespace dflow {

void RegisterReverseOps();  // reverse_ops.cc: ReverseV2, ReverseSequence

void RegisterArrayOps() {
  RegisterConstOps();
  RegisterShapeOps();
  RegisterConcatSplitOps();
  RegisterSlicePadOps();
  RegisterStridedSliceOps();
  RegisterPackOps();
  RegisterTransposeOps();
  RegisterTileOps();
  RegisterGatherOps();
  RegisterPartitionOps();
  RegisterValueOps();
  RegisterIdentityNOp();
  RegisterShapeNOp();
  RegisterUniqueOp();
  RegisterReverseOps();
}

}  // namespace dflow
