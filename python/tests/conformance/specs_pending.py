"""Ops both sides have that the differential suite does not compare (yet), each with its reason.

`pending: specs_<area>.py` marks an area whose spec file is still to be written: when that file
compares the op, its row here goes (an op that a spec compares and that this table still lists
fails test_excluded_ops_are_listed_once). The other rows are ops compared elsewhere: their state
lives outside the graph (queues, iterators, files, resources), so a run-for-run comparison of one
op says little; the named tests check them."""

EXCLUDED = {}

_ELSEWHERE = {
    "TensorArrays (stateful resources, flows through while loops): python/tests/conformance/test_tensor_array.py "
    "(TensorFlow-built loops: values, errors, gradients)": (
        "TensorArrayCloseV3 TensorArrayConcatV3 TensorArrayGatherV3 TensorArrayGradV3 TensorArrayGradWithShape "
        "TensorArrayReadV3 TensorArrayScatterV3 TensorArraySizeV3 TensorArraySplitV3 TensorArrayV3 "
        "TensorArrayWriteV3"),
    "datasets and iterators (stateful, input pipelines): python/tests/test_data.py": (
        "BatchDatasetV2 CSVDataset FilterDataset MapDataset ParallelMapDataset PrefetchDataset RangeDataset "
        "RepeatDataset ShardDataset ShuffleDataset SkipDataset TFRecordDataset TakeDataset TensorDataset "
        "TensorSliceDataset TextLineDataset ZipDataset IteratorGetNext IteratorV2 MakeIterator OneShotIterator"),
    "queues (stateful): python/tests/test_core.py, src/ops/queue/queue_ops_test.cc": (
        "FIFOQueueV2 RandomShuffleQueueV2 QueueCloseV2 QueueDequeueManyV2 QueueDequeueV2 QueueEnqueueManyV2 "
        "QueueEnqueueV2 QueueIsClosedV2 QueueSizeV2"),
    "accumulators (stateful resources): src/ops/queue/accumulator_ops_test.cc": (
        "ResourceAccumulatorApplyGradient ResourceAccumulatorNumAccumulated ResourceAccumulatorSetGlobalStep "
        "ResourceAccumulatorTakeGradient ResourceConditionalAccumulator"),
    "mutexes (stateful resources): src/ops/state/mutex_ops_test.cc": "ConsumeMutexLock MutexLock MutexV2",
    "stacks (stateful resources used by while-loop gradients): src/ops/control_flow/stack_ops_test.cc": (
        "StackCloseV2 StackPopV2 StackPushV2 StackV2"),
    "checkpoint files: python/tests/test_saver.py (byte-identical V2 checkpoints)": (
        "SaveV2 RestoreV2 MergeV2Checkpoints"),
    "summary protos: python/tests/test_summary.py": "HistogramSummary MergeSummary ScalarSummary TensorSummaryV2",
}
for _why, _names in _ELSEWHERE.items():
    for _op in _names.split():
        EXCLUDED[_op] = _why
