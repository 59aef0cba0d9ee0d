"""tf.train.replica_device_setter: the C++ ReplicaDeviceSetter (include/dflow/replica_device_setter.h).

    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        w = tf.Variable(...)        # /job:ps/task:0, the next one /job:ps/task:1, ...
        y = tf.matmul(x, w)         # /job:worker

The setter is the C++ device function itself: `tf.device(setter)` hands it to the graph's
C++ scope, so ops get their devices while they are built, as C++ programs get theirs (a
variable's initializer, Assign and read follow the variable to its ps task). Calling the setter
with an op (TensorFlow's device-function protocol) returns the device it chooses for that op.
A `ps_strategy` is any callable(op) -> task index, TensorFlow's protocol; it is called with a
view of the op being built (type, name, device, node_def.op, get_attr) once per ps op.
"""
from dflow import _dflow
from dflow.framework import ops
from dflow.training import server_lib

STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable", "MutableHashTableV2",
                   "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
                   "MutableDenseHashTableV2", "VarHandleOp", "BoostedTreesEnsembleResourceHandleOp",
                   "BoostedTreesQuantileStreamResourceHandleOp", "ResourceConditionalAccumulator",
                   "DecisionTreeResource")


class _OpView(ops._OpView):
    """What a ps_strategy sees of the op being built (TensorFlow passes the op): string attrs as str."""

    __slots__ = ()

    def get_attr(self, name):
        v = self._attrs[name]
        return v.decode() if isinstance(v, bytes) else v


class _RoundRobinStrategy:
    """Returns the next ps task index for placement in round-robin order (TensorFlow's)."""

    def __init__(self, num_tasks):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op):
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


class _ReplicaDeviceSetter:
    """A device function over the C++ ReplicaDeviceSetter."""

    def __init__(self, handle, description):
        self._handle = handle
        self._description = description

    def _apply_to_scope(self, scope):
        return self._handle.apply(scope)

    def device_function(self, op):
        return self(op)

    def __call__(self, op):
        node = getattr(op, "_node", None)
        if node is None:
            raise TypeError("replica_device_setter's device function takes a tf.Operation, got %r" % (op,))
        return self._handle.device_for(node)

    def __repr__(self):
        return "<replica_device_setter %s>" % self._description


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker", merge_devices=True,
                          cluster=None, ps_ops=None, ps_strategy=None):
    """A device function placing variables on the ps tasks and other ops on `worker_device`.

    Returns None when there are no ps tasks (TensorFlow's behaviour), so `tf.device(None)` is a
    no-op."""
    if cluster is not None:
        if isinstance(cluster, server_lib.ClusterSpec):
            cluster_spec = cluster.as_dict()
        else:
            cluster_spec = server_lib.ClusterSpec(cluster).as_dict()
        ps_job_name = _job_of(ps_device) or "ps"
        if ps_job_name not in cluster_spec or cluster_spec[ps_job_name] is None:
            return None
        ps_tasks = len(cluster_spec[ps_job_name])
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if ps_strategy is None:
        cpp_strategy = None
    else:
        if not callable(ps_strategy):
            raise TypeError("ps_strategy must be callable")

        def cpp_strategy(op_type, name, device, attrs, _s=ps_strategy):
            return int(_s(_OpView(ops.get_default_graph(), op_type, name, device, attrs)))
    handle = _dflow.replica_device_setter(int(ps_tasks), ps_device or "", worker_device or "", bool(merge_devices),
                                          [str(o) for o in ps_ops], cpp_strategy)
    return _ReplicaDeviceSetter(handle, "ps_tasks=%d ps_device=%r worker_device=%r" % (ps_tasks, ps_device,
                                                                                        worker_device))


def _job_of(device):
    for part in (device or "").split("/"):
        if part.startswith("job:"):
            return part[4:]
    return None


# tf.contrib.training's strategies over the same protocol.
class GreedyLoadBalancingStrategy:
    """The ps task with the least load so far (byte size of the variable by default)."""

    def __init__(self, num_tasks, load_fn=None):
        self._num_tasks = num_tasks
        self._load_fn = load_fn or byte_size_load_fn
        self._ps_loads = [0] * num_tasks

    def __call__(self, op):
        task = min(range(self._num_tasks), key=lambda i: (self._ps_loads[i], i))
        self._ps_loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op):
    """The byte size of a variable op's value (its "shape" and "dtype" attrs)."""
    shape = op.get_attr("shape")
    if shape is None or any(d is None or d < 0 for d in shape):
        raise ValueError("The byte size of %s is unknown: its shape is not fully defined" % op.name)
    from dflow.framework import dtypes
    dtype = dtypes.as_dtype(op.get_attr("dtype"))
    n = 1
    for d in shape:
        n *= d
    size = 8 if dtype == dtypes.string else max(dtype.size, 1)
    return n * size

