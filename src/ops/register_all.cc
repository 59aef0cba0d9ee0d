#include "ops/register_all.h"

#include <mutex>

#include "ops/image/image_ops.h"

namespace dflow {

void RegisterAllOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterFunctionOps();
    RegisterSendRecvOps();
    RegisterArrayOps();
    RegisterMathOps();
    RegisterMatrixOps();
    RegisterRandomOps();
    RegisterStateOps();
    RegisterControlFlowOps();
    RegisterNNOps();
    RegisterImageOps();
    RegisterTrainingOps();
    RegisterQueueOps();
    RegisterDataOps();
    RegisterSummaryOps();
    RegisterFeatureOps();
    RegisterParsingOps();
    RegisterLoggingOps();
    RegisterAccumulatorOps();
    RegisterCheckpointOps();
    RegisterLookupOps();
  });
}

}  // namespace dflow
