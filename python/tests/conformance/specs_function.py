"""Function calls: PartitionedCall and StatefulPartitionedCall need a function library in the
graph, which the generated single-op cases cannot give; test_function_call.py compares them on
graphs TensorFlow writes with tf.function."""

SPECS = []

EXCLUDED = {
    "PartitionedCall": "needs a function library; compared in test_function_call.py",
    "StatefulPartitionedCall": "needs a function library; compared in test_function_call.py",
}
