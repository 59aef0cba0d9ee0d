// The parts of the state family; RegisterStateOps (ops/register_all.h) calls each once.
#pragma once

namespace dflow {

void RegisterResourceVariableOps();  // VarHandleOp, ReadVariableOp, AssignVariableOp, ...
void RegisterScatterOps();           // ScatterUpdate, ScatterAdd, ScatterSub, CountUpTo
void RegisterResourceScatterOps();   // ResourceScatterUpdate, ResourceScatterAdd, ResourceScatterSub
void RegisterMutexOps();             // MutexV2, MutexLock, ConsumeMutexLock

}  // namespace dflow
