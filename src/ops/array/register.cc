#include "ops/array/array_ops.h"
#include "ops/register_all.h"

namespace dflow {

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
}

}  // namespace dflow
