"""Partitioned variables: tf.get_variable(..., partitioner=...) makes "<name>/part_0", ... along one
axis (TensorFlow's rule for the sizes), each a slice of the whole in checkpoints (registered in
the C++ Scope so that savers write the slices under the whole's name, as TensorFlow does); and
the partitioners tf.fixed_size_partitioner, tf.min_max_variable_partitioner and
tf.variable_axis_size_partitioner."""
import math

from dflow import _dflow
from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.ops import array_ops


class _PartitionInfo:
    """Where a part lies in the whole (what initializers get as partition_info)."""

    def __init__(self, full_shape, var_offset):
        self._full_shape = list(full_shape)
        self._var_offset = list(var_offset)

    @property
    def full_shape(self):
        return self._full_shape

    @property
    def var_offset(self):
        return self._var_offset

    def single_offset(self, shape):
        dim = self.single_slice_dim(shape)
        return 0 if dim is None else self._var_offset[dim]

    def single_slice_dim(self, shape):
        for i, (a, b) in enumerate(zip(shape, self._full_shape)):
            if a != b:
                return i
        return None


class PartitionedVariable:
    """A variable stored as parts along one axis; used as a tensor, it is their concatenation."""

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not isinstance(variable_list, (list, tuple)):
            raise TypeError("variable_list is not a list or tuple: %s" % variable_list)
        if not isinstance(partitions, (list, tuple)):
            raise TypeError("partitions is not a list or tuple: %s" % partitions)
        if not all(p >= 1 for p in partitions):
            raise ValueError("partition values must be positive: %s" % partitions)
        if not variable_list:
            raise ValueError("variable_list may not be empty")
        self._variable_list = sorted(variable_list, key=lambda v: v._get_save_slice_info().var_offset)
        self._name = name
        self._shape = tensor_shape.as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._partitions = list(partitions)

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self):
        if len(self._partition_axes()) > 1:
            raise ValueError("Cannot get a length for %d > 1 partition axes" % len(self._partition_axes()))
        return len(self._variable_list)

    def _partition_axes(self):
        if all(p == 1 for p in self._partitions):
            return [0]
        return [i for i, p in enumerate(self._partitions) if p > 1]

    def _concat(self):
        if len(self._variable_list) == 1:
            with ops.name_scope(None):
                return array_ops.identity(self._variable_list[0], name=self._name)
        axis = self._partition_axes()[0]
        with ops.name_scope(self._name + "/ConcatPartitions/"):
            concatenated = array_ops.concat([v.value() for v in self._variable_list], axis)
        with ops.name_scope(None):
            return array_ops.identity(concatenated, name=self._name)

    def as_tensor(self):
        g = ops.get_default_graph()
        with g.control_dependencies(None):
            return self._concat()

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def graph(self):
        return self._variable_list[0].graph

    def _get_variable_list(self):
        return self._variable_list

    def _get_partitions(self):
        return self._partitions

    def __repr__(self):
        return "<tf.PartitionedVariable '%s' shape=%s dtype=%s parts=%d>" % (
            self._name, self._shape, self._dtype.name, len(self._variable_list))


def _to_tensor(v, dtype=None, name=None, as_ref=False):
    if as_ref:
        raise NotImplementedError("PartitionedVariable doesn't support being used as a reference.")
    return v.as_tensor()


ops.register_tensor_conversion_function(PartitionedVariable, _to_tensor)


def call_partitioner(partitioner, shape, dtype):
    if not shape.is_fully_defined():
        raise ValueError("Shape of a new partitioned variable must be fully defined, but instead was %s." % (shape,))
    if shape.ndims < 1:
        raise ValueError("A partitioned Variable must have rank at least 1, shape: %s" % shape)
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, (list, tuple)):
        raise ValueError("Partitioner must return a sequence, but saw: %s" % slicing)
    if len(slicing) != shape.ndims:
        raise ValueError("Partitioner returned a partition list that does not match the Variable's rank: %s vs. %s"
                         % (slicing, shape))
    if any(p < 1 for p in slicing):
        raise ValueError("Partitioner returned zero partitions for some axes: %s" % slicing)
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError("Can only slice a variable along one dimension: shape: %s, partitioning: %s"
                         % (shape, slicing))
    return list(slicing)


def slice_dim_and_num_slices(slicing):
    for slice_dim, num_slices in enumerate(slicing):
        if num_slices > 1:
            return slice_dim, num_slices
    return 0, 1


def iter_slices(full_shape, num_slices, slice_dim):
    """(offset, shape) of each part: the first size % n parts are one longer (TensorFlow's rule)."""
    excess = full_shape[slice_dim] % num_slices
    offset = [0] * len(full_shape)
    min_len = full_shape[slice_dim] // num_slices
    for i in range(num_slices):
        shape = list(full_shape)
        shape[slice_dim] = min_len + (1 if i < excess else 0)
        yield offset[:], shape
        offset[slice_dim] += shape[slice_dim]


def register_part(var, full_name, full_shape, offset):
    """Marks `var` as the slice of `full_name` at `offset`, for Python and C++ savers."""
    from dflow.ops.variables import Variable
    var._set_save_slice_info(Variable.SaveSliceInfo(full_name, list(full_shape), list(offset),
                                                    var.get_shape().as_list()))
    g = var.graph
    _dflow.register_partition(g._scope, var._ref()._out, full_name, [int(d) for d in full_shape],
                              [int(o) for o in offset])


# ---- partitioners ----

def fixed_size_partitioner(num_shards, axis=0):
    """num_shards parts along `axis` (fewer when that dimension is smaller)."""
    def _partitioner(shape, dtype):
        if not isinstance(shape, tensor_shape.TensorShape):
            raise ValueError("shape is not a TensorShape: %s" % shape)
        if not shape.is_fully_defined():
            raise ValueError("shape is not fully defined: %s" % shape)
        dims = shape.as_list()
        partitions = [1] * len(dims)
        partitions[axis] = min(num_shards, dims[axis])
        return partitions
    return _partitioner


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16, max_shards=None):
    """Parts along `axis` of at most max_shard_bytes each."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive. Currently, "
                         "max_shard_bytes is %d andbytes_per_string_element is %d"
                         % (max_shard_bytes, bytes_per_string_element))
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        if not isinstance(shape, tensor_shape.TensorShape):
            raise ValueError("shape is not a TensorShape: %s" % shape)
        if not shape.is_fully_defined():
            raise ValueError("shape is not fully defined: %s" % shape)
        dtype = dtypes.as_dtype(dtype)
        if dtype.base_dtype == dtypes.string:
            element_size = bytes_per_string_element
        else:
            element_size = dtype.size
        partitions = [1] * shape.ndims
        bytes_per_slice = 1.0 * (shape.num_elements() / shape.as_list()[axis]) * element_size
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        axis_shards = int(math.ceil(1.0 * shape.as_list()[axis] / slices_per_shard))
        if max_shards:
            axis_shards = min(max_shards, axis_shards)
        partitions[axis] = axis_shards
        return partitions
    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10, bytes_per_string_element=16):
    """As many parts along `axis` as make each at least min_slice_size bytes, at most max_partitions."""
    def _partitioner(shape, dtype):
        if axis >= len(shape):
            raise ValueError("Can not partition variable along axis %d when shape is only %s" % (axis, shape))
        dtype = dtypes.as_dtype(dtype)
        if dtype.base_dtype == dtypes.string:
            bytes_per_element = bytes_per_string_element
        else:
            bytes_per_element = dtype.size
        total_size_bytes = shape.num_elements() * bytes_per_element
        partitions = total_size_bytes / min_slice_size
        partitions_list = [1] * len(shape)
        partitions_list[axis] = max(1, min(shape.as_list()[axis], max_partitions, int(math.ceil(partitions))))
        return partitions_list
    return _partitioner
