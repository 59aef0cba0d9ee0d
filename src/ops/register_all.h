// Explicit registration of every op family (OpDefs, CPU kernels). Idempotent and thread-safe.
#pragma once

namespace dflow {

void RegisterAllOps();

// One per family; RegisterAllOps calls each once.
void RegisterArrayOps();
void RegisterMathOps();
void RegisterMatrixOps();
void RegisterRandomOps();
void RegisterStateOps();
void RegisterControlFlowOps();
void RegisterStackOps();  // StackV2 and its push/pop ops (the per-step stacks of loop gradients)
void RegisterFunctionOps();
void RegisterSendRecvOps();     // _Send and _Recv: the ends of an edge cut by graph partitioning
void RegisterNNOps();           // neural-net ops, their gradient kernels and gradients
void RegisterTrainingOps();     // optimizer update kernels (ApplyGradientDescent, ApplyAdam, ...)
void RegisterQueueOps();        // FIFOQueueV2, RandomShuffleQueueV2 and their enqueue/dequeue ops
void RegisterDataOps();         // datasets, iterators and DecodeCSV (input pipelines)
void RegisterSummaryOps();      // ScalarSummary, HistogramSummary, TensorSummaryV2, MergeSummary
void RegisterParsingOps();      // ParseExample, ParseExampleV2, ParseSingleExample (tf.train.Example)
void RegisterFeatureOps();      // Bucketize, StringToHashBucketFast, VocabularyLookup (feature columns)
void RegisterLoggingOps();      // Assert
void RegisterAccumulatorOps();  // ResourceConditionalAccumulator and its apply/take ops (sync replicas)
void RegisterCheckpointOps();   // SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename, StringJoin
void RegisterLookupOps();       // HashTableV2, LookupTableFindV2, InitializeTable*V2 (tf.lookup tables)

}  // namespace dflow
