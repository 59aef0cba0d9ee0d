#include "ops/register_all.h"

#include <mutex>


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
    RegisterTrainingOps();
    RegisterQueueOps();
    RegisterDataOps();
    RegisterSummaryOps();
    RegisterFeatureOps();
    RegisterParsingOps();
    RegisterLoggingOps();
    RegisterAccumulatorOps();
    RegisterCheckpointOps();
  });
}

}  // namespace dflow
