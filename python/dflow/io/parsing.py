"""tf.io.parse_example / parse_single_example and the feature specs (FixedLenFeature, VarLenFeature,
FixedLenSequenceFeature): serialized tf.train.Example protos into a dict of Tensors and
SparseTensors, as TensorFlow 1.x returns them.

The graph is TensorFlow's: one ParseExampleV2 op (what TensorFlow 1.15 and 2.x emit) under the
name scope "ParseExample" ("ParseSingleExample/ParseExample" for one example), keys in sorted
order, defaults reshaped to the dense shape, so a serving signature built here runs in TensorFlow
and one of TensorFlow's runs here."""
import collections
import re

from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.framework.sparse_tensor import SparseTensor


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any number of values: parsed into a SparseTensor."""


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature of a fixed shape: parsed into a dense Tensor of that shape (per example);
    `default_value` for examples without it (else the feature is required)."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature of any number of rows of `shape`: parsed into [batch, longest, shape...] padded
    with `default_value` (0 or "")."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """TensorFlow's SparseFeature spec (parsing one is not supported by dflow yet)."""

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


class RaggedFeature:
    """TensorFlow's RaggedFeature spec (dflow has no RaggedTensor: parsing one is not supported)."""

    def __init__(self, dtype, value_key=None, partitions=(), row_splits_dtype=dtypes.int32, validate=False):
        self.dtype = dtype
        self.value_key = value_key
        self.partitions = partitions
        self.row_splits_dtype = row_splits_dtype
        self.validate = validate


_SUPPORTED = (dtypes.float32, dtypes.int64, dtypes.string)


def _check_dtype(key, dtype, feature):
    if dtype is None:
        raise ValueError("Missing type for feature %s. Received feature=%s." % (key, feature))
    d = dtypes.as_dtype(dtype)
    if d not in _SUPPORTED:
        raise ValueError("Unsupported dtype %s for feature %s: only float32, int64 and string" % (d.name, key))
    return d


class _Params:
    """The op's arguments for a features dict (TensorFlow's _ParseOpParams)."""

    def __init__(self, features):
        if not features:
            raise ValueError("Missing: features was %s." % features)
        self.sparse_keys, self.sparse_types = [], []
        self.dense_keys, self.dense_types, self.dense_shapes, self.dense_defaults = [], [], [], {}
        for key in sorted(features.keys()):
            if not isinstance(features[key], (VarLenFeature, FixedLenFeature, FixedLenSequenceFeature,
                                              SparseFeature, RaggedFeature)):
                raise ValueError("Unsupported %s %s for key '%s'" % (type(features[key]).__name__, features[key], key))
            f = features[key]
            if isinstance(f, VarLenFeature):
                self.sparse_keys.append(key)
                self.sparse_types.append(_check_dtype(key, f.dtype, f))
            elif isinstance(f, FixedLenFeature):
                d = _check_dtype(key, f.dtype, f)
                if f.shape is None:
                    raise ValueError("Missing shape for feature %s. Received feature=%s." % (key, f))
                shape = tensor_shape.as_shape(f.shape)
                if f.shape and shape.ndims and shape.as_list()[0] is None:
                    raise ValueError("First dimension of shape for feature %s unknown. Consider using "
                                     "FixedLenSequenceFeature. Received feature=%s." % (key, f))
                if not shape.is_fully_defined():
                    raise ValueError("All dimensions of shape for feature %s need to be known but received %s."
                                     % (key, str(f.shape)))
                self.dense_keys.append(key)
                self.dense_types.append(d)
                self.dense_shapes.append(shape)
                if f.default_value is not None:
                    self.dense_defaults[key] = f.default_value
            elif isinstance(f, FixedLenSequenceFeature):
                d = _check_dtype(key, f.dtype, f)
                if f.shape is None:
                    raise ValueError("Missing shape for feature %s. Received feature=%s." % (key, f))
                shape = tensor_shape.as_shape(f.shape)
                if not shape.is_fully_defined():
                    raise ValueError("All dimensions of shape for feature %s need to be known but received %s."
                                     % (key, str(f.shape)))
                if not f.allow_missing:
                    raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to be True.")
                self.dense_keys.append(key)
                self.dense_types.append(d)
                self.dense_shapes.append(tensor_shape.TensorShape([None]).concatenate(shape))
                if f.default_value is not None:
                    self.dense_defaults[key] = f.default_value
            elif isinstance(f, SparseFeature):
                raise NotImplementedError("SparseFeature (feature %s): dflow parses VarLenFeature and "
                                          "FixedLenFeature; SparseFeature is not supported yet" % key)
            elif isinstance(f, RaggedFeature):
                raise NotImplementedError("RaggedFeature (feature %s): dflow has no RaggedTensor; use "
                                          "VarLenFeature" % key)
            else:
                raise ValueError("Invalid feature %s:%s." % (key, f))


def _key_name(prefix, key):
    return prefix + re.sub(r"[^A-Za-z0-9_.\-/]", "_", key)


def _parse_raw(serialized, names, params, name):
    from dflow.ops import array_ops
    from dflow.ops import gen_ops  # noqa: F401  (registers the op functions)
    with ops.name_scope(name, "ParseExample", [serialized, names]):
        names = [] if names is None else names
        defaults = []
        for i, key in enumerate(params.dense_keys):
            d = params.dense_types[i]
            shape = params.dense_shapes[i]
            value = params.dense_defaults.get(key)
            if shape.ndims and shape.as_list()[0] is None:  # variable length: a scalar padding value
                if value is None:
                    value = ops.convert_to_tensor("" if d == dtypes.string else 0, dtype=d)
                else:
                    value = ops.convert_to_tensor(value, dtype=d, name=_key_name("padding_", key))
                    value = array_ops.reshape(value, [])
            elif value is None:
                value = ops.convert_to_tensor([], dtype=d)
            elif not isinstance(value, ops.Tensor):
                value = ops.convert_to_tensor(value, dtype=d, name=_key_name("key_", key))
                value = array_ops.reshape(value, shape.as_list())
            defaults.append(value)
        serialized = ops.convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        outs = ops.apply_op("ParseExampleV2", None,
                            [serialized, list(names), list(params.sparse_keys), list(params.dense_keys), [], defaults],
                            {"num_sparse": len(params.sparse_keys),
                             "sparse_types": [t._enum for t in params.sparse_types],
                             "Tdense": [t._enum for t in params.dense_types],
                             "ragged_value_types": [], "ragged_split_types": [],
                             "dense_shapes": [s.as_proto() for s in params.dense_shapes]})
        if isinstance(outs, ops.Tensor):
            outs = [outs]
        outs = list(outs)
        ns = len(params.sparse_keys)
        result = {}
        for i, key in enumerate(params.sparse_keys):
            result[key] = SparseTensor(outs[i], outs[ns + i], outs[2 * ns + i])
        for i, key in enumerate(params.dense_keys):
            result[key] = outs[3 * ns + i]
        return result


def parse_example(serialized, features, name=None, example_names=None):
    """Parses a batch of serialized Example protos: {key: Tensor or SparseTensor} for `features`."""
    if not features:
        raise ValueError("Missing: features was %s." % features)
    return _parse_raw(serialized, example_names, _Params(features), name)


def parse_single_example(serialized, features, name=None, example_names=None):
    """Parses one serialized Example (a scalar): the same dict without the batch dimension."""
    if not features:
        raise ValueError("Invalid argument: features cannot be None.")
    with ops.name_scope(name, "ParseSingleExample", [serialized, example_names]):
        serialized = ops.convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        if serialized.shape.ndims is not None and serialized.shape.ndims != 0:
            raise ValueError("Input serialized must be a scalar")
        return _parse_raw(serialized, None, _Params(features), None)


# TensorFlow 1.x's spellings.
parse_example_v2 = parse_example
parse_single_example_v2 = parse_single_example
