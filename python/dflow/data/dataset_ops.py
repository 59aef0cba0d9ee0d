"""tf.data.Dataset (TensorFlow 1.x's DatasetV1) over dflow's C++ data::Dataset.

A Dataset holds the C++ dataset (a variant tensor of the graph plus the dtype and shape of each
component) and the nested structure of its elements (tuples, namedtuples and dicts; see
dflow.data.nest). Every transformation is the C++ one; `map` and `filter` trace their Python
function into a graph function through the C++ builder (dflow.data.scope_graph), so it runs
inside the pipeline like any other op. The function is called once, at trace time: an exception
it raises reaches the caller unchanged.

Element order, seeds and errors are the C++ pipeline's: the end of input is OutOfRangeError
"End of sequence".
"""
import sys

from dflow import _dflow
from dflow.data import nest
from dflow.data.scope_graph import building_in
from dflow.framework import dtypes
from dflow.framework import errors
from dflow.framework import ops
from dflow.framework import tensor_shape

AUTOTUNE = -1


class TensorSpec:
    """The dtype and static shape of one component of an element (tf.TensorSpec)."""

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype=dtypes.float32, name=None):
        self._shape = tensor_shape.as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._name = name

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        return cls(tensor.shape, tensor.dtype, name)

    def is_compatible_with(self, other):
        if isinstance(other, ops.Tensor):
            other = TensorSpec.from_tensor(other)
        return self._dtype.is_compatible_with(other.dtype) and self._shape.is_compatible_with(other.shape)

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and self._dtype == other._dtype and self._shape == other._shape

    def __hash__(self):
        return hash((self._dtype, tuple(self._shape.as_list()) if self._shape.ndims is not None else None))

    def __repr__(self):
        return "TensorSpec(shape=%s, dtype=%r, name=%r)" % (self._shape, self._dtype, self._name)


def _building_error(e):
    """Errors of building a dataset are ValueErrors in TensorFlow (graph-building time)."""
    return ValueError(e.message)


def _cc_call(fn, *args):
    try:
        return fn(*args)
    except errors.InvalidArgumentError as e:
        raise _building_error(e) from None


def _int_arg(v, name="value"):
    """A count or size: a Python int passes as a literal (so static shapes know it), a tensor as it is."""
    if isinstance(v, ops.Tensor):
        if v.dtype.base_dtype not in (dtypes.int64, dtypes.int32):
            raise TypeError("%s must be an int64 tensor, got %s" % (name, v.dtype.name))
        if v.dtype.base_dtype != dtypes.int64:
            from dflow.ops import math_ops
            v = math_ops.cast(v, dtypes.int64)
        return v._out
    if hasattr(v, "_as_graph_element") or ops._convertible(v) is not None:
        return _int_arg(ops.convert_to_tensor(v), name)
    try:
        import numpy as np
        if isinstance(v, np.generic):
            v = v.item()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("%s must be an integer, got %r" % (name, v))
    return v


def _normalize(value, what):
    """A function's result as a structure of tensors: lists become tuples, as tf.data does."""
    if isinstance(value, list):
        value = tuple(value)
    return nest.map_structure(lambda x: ops.convert_to_tensor(x), value)


def _unpack_call(fn, element):
    # TensorFlow: a plain tuple element is passed as separate arguments.
    if type(element) is tuple:
        return fn(*element)
    return fn(element)


def _trace(fn, outer_graph, structure, fs, args, what):
    """Calls `fn` on tensors standing for an element, in the function graph of Scope `fs`."""
    with building_in(fs) as g:
        g._seed = outer_graph.seed
        element = nest.pack_sequence_as(structure, [g._tensor_of(a) for a in args])
        try:
            result = _normalize(_unpack_call(fn, element), what)
        except ValueError as e:
            if "belongs to another graph" not in str(e):
                raise
            raise ValueError("The %s uses a tensor of the enclosing graph (%s). dflow's dataset functions cannot "
                             "capture tensors: make it inside the function (Python and numpy values may be "
                             "used directly)." % (what, e)) from None
        flat = nest.flatten(result)
        for t in flat:
            if t.graph is not g:
                raise ValueError("The %s returned %s, a tensor of another graph" % (what, t.name))
        stateful = any(op._node.is_stateful for op in g.get_operations())
    return result, [t._out for t in flat], stateful


class _HasStructure:
    """What a dataset and its iterators share: the structure of their elements (`_structure`, a
    nest of TensorSpec) and TensorFlow's views of it."""

    __slots__ = ()

    @property
    def element_spec(self):
        return self._structure

    @property
    def output_types(self):
        return nest.map_structure(lambda s: s.dtype, self._structure)

    @property
    def output_shapes(self):
        return nest.map_structure(lambda s: s.shape, self._structure)

    @property
    def output_classes(self):
        return nest.map_structure(lambda s: ops.Tensor, self._structure)


class DatasetV1(_HasStructure):
    """A sequence of elements, each a nested structure of tensors."""

    def __init__(self, cc, structure, graph, stateful=False):
        # `structure`: the element's nesting with None at each component (filled from `cc`).
        self._cc = cc
        self._graph = graph
        self._stateful = stateful
        specs = [TensorSpec(s, dtypes._BY_ENUM[t]) for t, s in zip(cc.output_types, cc.output_shapes)]
        self._structure = nest.pack_sequence_as(structure, specs)

    # ---- construction helpers ----
    @staticmethod
    def _scope():
        return ops.get_default_graph()._scope

    def _derived(self, cc, structure=None, stateful=None):
        return DatasetV1(cc, self._structure if structure is None else structure, self._graph,
                         self._stateful if stateful is None else stateful)

    def _variant_tensor(self):
        return self._graph._tensor_of(self._cc.variant)

    @property
    def _variant(self):
        return self._variant_tensor()

    def __repr__(self):
        def fmt(s):
            if nest.is_sequence(s):
                return repr(s)
            return str(s)
        return "<DatasetV1Adapter shapes: %s, types: %s>" % (
            fmt(nest.map_structure(str, self.output_shapes)).replace("'", ""),
            fmt(nest.map_structure(lambda d: "tf." + d.name, self.output_types)).replace("'", ""))

    def __iter__(self):
        raise RuntimeError("dataset.__iter__() is only supported when eager execution is enabled.")

    # ---- sources ----
    @staticmethod
    def _components(tensors, what):
        if isinstance(tensors, list):
            tensors = ops.convert_to_tensor(tensors)
        flat = nest.flatten(tensors)
        if not flat:
            raise ValueError("%s needs at least one component" % what)
        g = ops.get_default_graph()
        out = []
        with g.name_scope("tensors"):
            for i, v in enumerate(flat):
                out.append(ops.convert_to_tensor(v, name="component_%d" % i))
        return tensors, out

    @staticmethod
    def from_tensor_slices(tensors):
        tensors, flat = DatasetV1._components(tensors, "from_tensor_slices")
        for t in flat:
            if t.shape.ndims == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        cc = _cc_call(_dflow.Dataset.from_tensor_slices, DatasetV1._scope(), [t._out for t in flat])
        return DatasetV1(cc, tensors, ops.get_default_graph())

    @staticmethod
    def from_tensors(tensors):
        tensors, flat = DatasetV1._components(tensors, "from_tensors")
        cc = _cc_call(_dflow.Dataset.from_tensors, DatasetV1._scope(), [t._out for t in flat])
        return DatasetV1(cc, tensors, ops.get_default_graph())

    @staticmethod
    def range(*args, **kwargs):
        output_type = kwargs.pop("output_type", dtypes.int64)
        if kwargs:
            raise TypeError("range() got unexpected keyword arguments %s" % sorted(kwargs))
        if len(args) == 1:
            start, stop, step = 0, args[0], 1
        elif len(args) == 2:
            start, stop, step = args[0], args[1], 1
        elif len(args) == 3:
            start, stop, step = args
        else:
            raise ValueError("Invalid arguments to RangeDataset: %s" % (args,))
        if dtypes.as_dtype(output_type) != dtypes.int64:
            raise ValueError("dflow's Dataset.range gives int64 elements (output_type=%s)" % output_type)
        cc = _cc_call(_dflow.Dataset.range, DatasetV1._scope(), _int_arg(start, "start"), _int_arg(stop, "stop"),
                      _int_arg(step, "step"))
        return DatasetV1(cc, None, ops.get_default_graph())

    @staticmethod
    def zip(datasets):
        flat = nest.flatten(datasets)
        for d in flat:
            if not isinstance(d, DatasetV1):
                raise TypeError("The argument to `Dataset.zip()` must be a (nested) structure of `Dataset` objects.")
        if not flat:
            raise ValueError("zip needs at least one dataset")
        cc = _cc_call(_dflow.Dataset.zip, [d._cc for d in flat])
        structure = nest.pack_sequence_as(datasets, [d._structure for d in flat])
        return DatasetV1(cc, structure, flat[0]._graph, any(d._stateful for d in flat))

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        """The files matching the pattern(s), matched now (TensorFlow matches when the graph runs)."""
        import glob
        patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
        names = []
        for p in patterns:
            if isinstance(p, ops.Tensor):
                raise TypeError("dflow's list_files takes file patterns as Python strings, not tensors")
            p = p.decode() if isinstance(p, bytes) else p
            names.extend(sorted(glob.glob(p)))
        if not names:
            raise errors.InvalidArgumentError(None, None, "Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be "
                                              "true. Summarized data: b'No files matched pattern: %s'"
                                              % ", ".join(map(str, patterns)))
        ds = DatasetV1.from_tensor_slices(ops.convert_to_tensor(names, dtype=dtypes.string))
        if shuffle is None:
            shuffle = True
        if shuffle:
            ds = ds.shuffle(len(names), seed=seed)
        return ds

    @staticmethod
    def from_generator(*args, **kwargs):
        raise NotImplementedError("Dataset.from_generator needs Python functions in the running graph (py_func), "
                                  "which dflow does not have")

    # ---- transformations ----
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        holder = {}
        graph = self._graph

        def body(fs, args):
            result, outs, stateful = _trace(map_func, graph, self._structure, fs, args, "function given to map")
            holder["structure"] = result
            holder["stateful"] = stateful
            return outs
        n = 0 if num_parallel_calls is None else int(num_parallel_calls)
        if n == AUTOTUNE:
            n = 2
        cc = _cc_call(self._cc.map, body, n)
        return self._derived(cc, holder["structure"], self._stateful or holder["stateful"])

    map_with_legacy_function = map

    def filter(self, predicate, name=None):
        holder = {}
        graph = self._graph

        def body(fs, args):
            result, outs, stateful = _trace(predicate, graph, self._structure, fs, args, "predicate given to filter")
            if len(outs) != 1 or result.dtype != dtypes.bool or result.shape.ndims not in (None, 0):
                raise ValueError("`predicate` return type must be convertible to a scalar boolean tensor. Was %s."
                                 % (nest.map_structure(lambda t: TensorSpec.from_tensor(t), result),))
            holder["stateful"] = stateful
            return outs
        cc = _cc_call(self._cc.filter, body)
        return self._derived(cc, stateful=self._stateful or holder["stateful"])

    filter_with_legacy_function = filter

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        if isinstance(drop_remainder, ops.Tensor):
            raise TypeError("dflow's batch takes drop_remainder as a Python bool")
        cc = _cc_call(self._cc.batch, _int_arg(batch_size, "batch_size"), bool(drop_remainder))
        return self._derived(cc)

    def padded_batch(self, *args, **kwargs):
        raise NotImplementedError("Dataset.padded_batch: dflow has no PaddedBatchDataset op")

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        if reshuffle_each_iteration is None:
            reshuffle_each_iteration = True
        seed = 0 if seed is None else int(_int_arg(seed, "seed"))
        cc = _cc_call(self._cc.shuffle, _int_arg(buffer_size, "buffer_size"), seed, bool(reshuffle_each_iteration))
        return self._derived(cc, stateful=True)

    def repeat(self, count=None, name=None):
        cc = _cc_call(self._cc.repeat, -1 if count is None else _int_arg(count, "count"))
        return self._derived(cc)

    def take(self, count, name=None):
        return self._derived(_cc_call(self._cc.take, _int_arg(count, "count")))

    def skip(self, count, name=None):
        return self._derived(_cc_call(self._cc.skip, _int_arg(count, "count")))

    def shard(self, num_shards, index, name=None):
        return self._derived(_cc_call(self._cc.shard, _int_arg(num_shards, "num_shards"), _int_arg(index, "index")))

    def prefetch(self, buffer_size, name=None):
        return self._derived(_cc_call(self._cc.prefetch, _int_arg(buffer_size, "buffer_size")))

    def cache(self, filename="", name=None):
        # dflow has no CacheDataset. Caching only changes what a later epoch reads when the
        # pipeline before it is random (a shuffle, a random op in a map): elsewhere the cached
        # elements are the elements, and the dataset itself serves.
        if filename:
            raise NotImplementedError("Dataset.cache(filename): dflow has no CacheDataset op")
        if self._stateful:
            raise NotImplementedError("Dataset.cache() after a shuffle or a stateful map: dflow has no CacheDataset "
                                      "op, and without it later epochs would not repeat the first")
        return self

    def enumerate(self, start=0, name=None):
        return DatasetV1.zip((DatasetV1.range(start, sys.maxsize), self))

    def apply(self, transformation_func):
        ds = transformation_func(self)
        if not isinstance(ds, DatasetV1):
            raise TypeError("`transformation_func` must return a Dataset. Got %s." % (ds,))
        return ds

    def with_options(self, options, name=None):
        return self

    def options(self):
        return Options()

    def concatenate(self, dataset, name=None):
        raise NotImplementedError("Dataset.concatenate: dflow has no ConcatenateDataset op")

    def flat_map(self, map_func, name=None):
        raise NotImplementedError("Dataset.flat_map: dflow has no FlatMapDataset op")

    def interleave(self, *args, **kwargs):
        raise NotImplementedError("Dataset.interleave: dflow has no InterleaveDataset op")

    def window(self, *args, **kwargs):
        raise NotImplementedError("Dataset.window: dflow has no WindowDataset op")

    def unbatch(self, name=None):
        raise NotImplementedError("Dataset.unbatch: dflow has no UnbatchDataset op")

    def reduce(self, initial_state, reduce_func, name=None):
        raise NotImplementedError("Dataset.reduce: dflow has no ReduceDataset op")

    # ---- iterators ----
    def make_one_shot_iterator(self):
        from dflow.data import iterator_ops
        return iterator_ops.Iterator._from_cc(_cc_call(self._cc.make_one_shot_iterator), self)

    def make_initializable_iterator(self, shared_name=None):
        from dflow.data import iterator_ops
        return iterator_ops.Iterator._from_cc(_cc_call(self._cc.make_initializable_iterator, shared_name or ""), self)

    # ---- for estimators ----
    def _with_names(self, names):
        return DatasetV1(self._cc.with_names(list(names)), self._structure, self._graph, self._stateful)


Dataset = DatasetV1
DatasetV2 = DatasetV1


class Options:
    """tf.data.Options: accepted and kept; dflow's pipelines have no tunable options."""

    def __init__(self):
        self.experimental_deterministic = None
        self.experimental_optimization = None
        self.experimental_threading = None

    def merge(self, options):
        return self
