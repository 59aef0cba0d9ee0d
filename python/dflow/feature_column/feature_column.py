"""tf.feature_column over dflow's C++ feature columns.

Each column is the C++ column (`_cc`: ids, dense tensors and variables are built by the C++
InputLayer / LinearModel) described by a namedtuple of TensorFlow's fields, so that columns
print, compare and hash as TensorFlow's do. `input_layer` and `linear_model` build in the current
graph and name scope; the variables the C++ side makes (embedding tables, linear weights) are
added to TensorFlow's collections as Variables.

Inputs are dense tensors (a SparseTensor, as parse_example gives for a VarLenFeature, is made
dense first): a categorical feature is [batch] or
[batch, k] with "" or -1 marking absent values, which is what TensorFlow does with a dense input.
"""
import collections
import collections.abc

import numpy as np

from dflow import _dflow
from dflow.data.scope_graph import adopt_cc_variables, building_in
from dflow.framework import dtypes
from dflow.framework import errors
from dflow.framework import ops


def _cc(fn, *args):
    try:
        return fn(*args)
    except errors.InvalidArgumentError as e:
        raise ValueError(e.message) from None


class _FeatureColumn:
    """The base of every column: `name`, and the C++ column in `_cc`."""

    __slots__ = ()

    @property
    def name(self):
        return self._cc.name

    @property
    def _is_dense(self):
        return self._cc.is_dense

    @property
    def _is_categorical(self):
        return self._cc.is_categorical

    @property
    def num_buckets(self):
        return self._cc.num_buckets

    @property
    def _num_buckets(self):
        return self._cc.num_buckets

    @property
    def variable_shape(self):
        from dflow.framework import tensor_shape
        return tensor_shape.TensorShape([self._cc.dense_dimension])

    @property
    def _variable_shape(self):
        return self.variable_shape

    @property
    def parents(self):
        return [getattr(self, f) for f in ("source_column", "categorical_column") if hasattr(self, f)]

    def __reduce__(self):
        raise TypeError("dflow's feature columns cannot be pickled")


def _make(cls, cc, *values):
    obj = cls(*values)
    object.__setattr__(obj, "_cc_obj", cc)
    return obj


class _Column(_FeatureColumn):
    __slots__ = ()

    @property
    def _cc(self):
        return self._cc_obj


def _namedtuple_column(name, fields):
    base = collections.namedtuple(name, fields)
    # No __slots__: the instance keeps its C++ column in __dict__.
    return type(name, (base, _Column), {})


NumericColumn = _namedtuple_column("NumericColumn", ["key", "shape", "default_value", "dtype", "normalizer_fn"])
BucketizedColumn = _namedtuple_column("BucketizedColumn", ["source_column", "boundaries"])
VocabularyListCategoricalColumn = _namedtuple_column(
    "VocabularyListCategoricalColumn", ["key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"])
VocabularyFileCategoricalColumn = _namedtuple_column(
    "VocabularyFileCategoricalColumn",
    ["key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "dtype", "default_value"])
HashedCategoricalColumn = _namedtuple_column("HashedCategoricalColumn", ["key", "hash_bucket_size", "dtype"])
IdentityCategoricalColumn = _namedtuple_column("IdentityCategoricalColumn", ["key", "number_buckets", "default_value"])
IndicatorColumn = _namedtuple_column("IndicatorColumn", ["categorical_column"])
EmbeddingColumn = _namedtuple_column(
    "EmbeddingColumn", ["categorical_column", "dimension", "combiner", "initializer", "ckpt_to_load_from",
                        "tensor_name_in_ckpt", "max_norm", "trainable"])


def _unary_in_scope(fn):
    """fn(tensor) -> tensor as the C++ side calls it: (scope, Output) -> Output."""
    def call(scope, out):
        with building_in(scope) as g:
            return ops.convert_to_tensor(fn(g._tensor_of(out)))._out
    return call


def _check_key(key):
    if not isinstance(key, str):
        raise ValueError("key must be a string. Given: %s" % (key,))


# ---- columns ----

def numeric_column(key, shape=(1,), default_value=None, dtype=dtypes.float32, normalizer_fn=None):
    _check_key(key)
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    for d in shape:
        if not isinstance(d, (int, np.integer)) or d < 1:
            raise ValueError("shape dimensions must be greater than 0. shape: %s, key: %s" % (shape, key))
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError("dtype must be convertible to float. dtype: %s, key: %s" % (dtype, key))
    defaults = []
    if default_value is not None:
        flat = np.asarray(default_value, dtype=np.float64).ravel()
        if flat.size not in (1, int(np.prod(shape))):
            raise ValueError("The shape of default_value must be equal to given shape. default_value: %s, "
                             "shape: %s, key: %s" % (default_value, shape, key))
        defaults = [float(x) for x in flat]
        if flat.size == 1 and np.prod(shape) > 1:
            default_value = tuple([default_value if np.ndim(default_value) == 0 else flat[0]] * int(np.prod(shape)))
        elif np.ndim(default_value) == 0:
            default_value = (default_value,) if len(shape) == 1 and shape[0] == 1 else default_value
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError("normalizer_fn must be a callable. Given: %s" % (normalizer_fn,))
    cc = _cc(_dflow.numeric_column, key, [int(d) for d in shape], defaults, dtype.base_dtype._enum,
             None if normalizer_fn is None else _unary_in_scope(normalizer_fn))
    return _make(NumericColumn, cc, key, shape, default_value, dtype, normalizer_fn)


def bucketized_column(source_column, boundaries):
    if not isinstance(source_column, NumericColumn):
        raise ValueError("source_column must be a column generated with numeric_column(). Given: %s"
                         % (source_column,))
    if len(source_column.shape) > 1:
        raise ValueError("source_column must be one-dimensional column. Given: %s" % (source_column,))
    if not boundaries or not isinstance(boundaries, (list, tuple)):
        raise ValueError("boundaries must be a sorted list.")
    for i in range(len(boundaries) - 1):
        if boundaries[i] >= boundaries[i + 1]:
            raise ValueError("boundaries must be a sorted list.")
    cc = _cc(_dflow.bucketized_column, source_column._cc, [float(b) for b in boundaries])
    return _make(BucketizedColumn, cc, source_column, tuple(boundaries))


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1, num_oov_buckets=0):
    _check_key(key)
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError("vocabulary_list %s must be non-empty, column_name: %s" % (vocabulary_list, key))
    vocab = tuple(vocabulary_list)
    if len(set(vocab)) != len(vocab):
        raise ValueError("Duplicate keys in vocabulary_list %s, column_name: %s" % (vocabulary_list, key))
    if num_oov_buckets:
        if default_value != -1:
            raise ValueError("Can't specify both num_oov_buckets and default_value in %s." % key)
        if num_oov_buckets < 0:
            raise ValueError("Invalid num_oov_buckets %s in %s." % (num_oov_buckets, key))
    strings = all(isinstance(v, (str, bytes)) for v in vocab)
    ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in vocab)
    if not (strings or ints):
        raise ValueError("Invalid vocabulary dtype in %s: mixed or unsupported values %s" % (key, vocab))
    if dtype is None:
        dtype = dtypes.string if strings else dtypes.int64
    dtype = dtypes.as_dtype(dtype)
    if strings and dtype != dtypes.string:
        raise ValueError("dtype %s and vocabulary dtype string do not match, column_name: %s" % (dtype, key))
    if ints and not dtype.is_integer:
        raise ValueError("dtype %s and vocabulary dtype int64 do not match, column_name: %s" % (dtype, key))
    if strings:
        cc = _cc(_dflow.categorical_column_with_vocabulary_list_str, key,
                 [v.decode() if isinstance(v, bytes) else v for v in vocab], int(num_oov_buckets), int(default_value))
    else:
        if dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError("dflow's integer vocabularies take int32 or int64 features, not %s" % dtype)
        cc = _cc(_dflow.categorical_column_with_vocabulary_list_int, key, [int(v) for v in vocab],
                 int(num_oov_buckets), int(default_value), dtype._enum)
    return _make(VocabularyListCategoricalColumn, cc, key, vocab, dtype, default_value, num_oov_buckets)


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None, num_oov_buckets=0,
                                            default_value=None, dtype=dtypes.string):
    """The vocabulary is read from the file (one entry per line) when the column is made."""
    _check_key(key)
    if not vocabulary_file:
        raise ValueError("Missing vocabulary_file in %s." % key)
    with open(vocabulary_file, "r", encoding="utf-8") as f:
        vocab = [line.rstrip("\r\n") for line in f]
    if vocabulary_size is not None:
        if vocabulary_size < 1:
            raise ValueError("Invalid vocabulary_size in %s." % key)
        vocab = vocab[:vocabulary_size]
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer:
        vocab = [int(v) for v in vocab]
    col = categorical_column_with_vocabulary_list(key, vocab, dtype=dtype,
                                                  default_value=-1 if default_value is None else default_value,
                                                  num_oov_buckets=num_oov_buckets)
    return _make(VocabularyFileCategoricalColumn, col._cc, key, vocabulary_file, vocabulary_size, num_oov_buckets,
                 dtype, default_value)


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=dtypes.string):
    _check_key(key)
    if hash_bucket_size is None:
        raise ValueError("hash_bucket_size must be set. key: %s" % key)
    if hash_bucket_size < 1:
        raise ValueError("hash_bucket_size must be at least 1. hash_bucket_size: %s, key: %s"
                         % (hash_bucket_size, key))
    dtype = dtypes.as_dtype(dtype)
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError("dtype must be string or integer. dtype: %s, column_name: %s" % (dtype, key))
    cc = _cc(_dflow.categorical_column_with_hash_bucket, key, int(hash_bucket_size), dtype._enum)
    return _make(HashedCategoricalColumn, cc, key, hash_bucket_size, dtype)


def categorical_column_with_identity(key, num_buckets, default_value=None):
    _check_key(key)
    if num_buckets < 1:
        raise ValueError("num_buckets %s < 1, column_name %s" % (num_buckets, key))
    if default_value is not None and (default_value < 0 or default_value >= num_buckets):
        raise ValueError("default_value %s not in range [0, %s), column_name %s" % (default_value, num_buckets, key))
    cc = _cc(_dflow.categorical_column_with_identity, key, int(num_buckets),
             -1 if default_value is None else int(default_value))
    return _make(IdentityCategoricalColumn, cc, key, num_buckets, default_value)


def _check_categorical(c, what):
    if not isinstance(c, _FeatureColumn) or not c._cc.is_categorical:
        raise ValueError("Unsupported input type. Input must be a CategoricalColumn. Given: %s" % (c,))


def indicator_column(categorical_column):
    _check_categorical(categorical_column, "indicator_column")
    return _make(IndicatorColumn, _cc(_dflow.indicator_column, categorical_column._cc), categorical_column)


def _initializer_spec(init):
    """A Python initializer as the C++ kinds: zeros, ones, constant, uniform, normal, truncated
    normal, Glorot uniform."""
    kind = type(init).__name__.lower().replace("_", "")
    get = lambda *names: next((getattr(init, n) for n in names if hasattr(init, n)), None)  # noqa: E731
    seed = get("seed")
    if kind in ("zeros", "zerosinitializer"):
        return {"kind": "zeros"}
    if kind in ("ones", "onesinitializer"):
        return {"kind": "ones"}
    if kind in ("constant", "constantinitializer"):
        return {"kind": "constant", "value": np.asarray(get("value"), dtype=np.float32)}
    if kind in ("truncatednormal", "truncatednormalinitializer"):
        return {"kind": "truncated_normal", "a": float(get("mean")), "b": float(get("stddev")), "seed": seed}
    if kind in ("randomnormal", "randomnormalinitializer"):
        return {"kind": "random_normal", "a": float(get("mean")), "b": float(get("stddev")), "seed": seed}
    if kind in ("randomuniform", "randomuniforminitializer"):
        return {"kind": "random_uniform", "a": float(get("minval")), "b": float(get("maxval")), "seed": seed}
    if kind in ("glorotuniform", "glorotuniforminitializer"):
        return {"kind": "glorot_uniform", "seed": seed}
    raise NotImplementedError("embedding_column(initializer=%r): dflow's embedding columns take zeros, ones, "
                              "constant, random uniform/normal, truncated normal or Glorot uniform initializers"
                              % (init,))


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None, ckpt_to_load_from=None,
                     tensor_name_in_ckpt=None, max_norm=None, trainable=True, use_safe_embedding_lookup=True):
    if dimension is None or dimension < 1:
        raise ValueError("Invalid dimension %s." % dimension)
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or none of them.")
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified. Embedding of column_name: %s"
                         % categorical_column.name)
    if ckpt_to_load_from is not None:
        raise NotImplementedError("embedding_column(ckpt_to_load_from=...): not supported by dflow")
    if max_norm is not None:
        raise NotImplementedError("embedding_column(max_norm=...): not supported by dflow's embedding columns")
    if not trainable:
        raise NotImplementedError("embedding_column(trainable=False): dflow's embedding tables are trainable")
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError("combiner must be one of 'mean', 'sqrtn', 'sum'; got %r" % (combiner,))
    _check_categorical(categorical_column, "embedding_column")
    spec = None if initializer is None else _initializer_spec(initializer)
    cc = _cc(_dflow.embedding_column, categorical_column._cc, int(dimension), combiner, spec)
    return _make(EmbeddingColumn, cc, categorical_column, dimension, combiner, initializer, ckpt_to_load_from,
                 tensor_name_in_ckpt, max_norm, trainable)


def crossed_column(keys, hash_bucket_size, hash_key=None):
    raise NotImplementedError("crossed_column: dflow has no crossed feature columns")


def weighted_categorical_column(categorical_column, weight_feature_key, dtype=dtypes.float32):
    raise NotImplementedError("weighted_categorical_column: dflow has no weighted categorical columns")


def shared_embedding_columns(*args, **kwargs):
    raise NotImplementedError("shared_embedding_columns: dflow has no shared embedding columns")


def make_parse_example_spec(feature_columns):
    """{feature key: FixedLenFeature / VarLenFeature} for parsing tf.Examples into the features
    the columns read (TensorFlow's rules: a numeric column a FixedLenFeature of its shape, dtype
    and default; a categorical column a VarLenFeature of its dtype)."""
    from dflow.io import parsing
    spec = {}

    def add(key, value):
        if key in spec and spec[key] != value:
            raise ValueError("feature_columns contain different parse_spec for key %s. Given %s and %s"
                             % (key, value, spec[key]))
        spec[key] = value

    def visit(c):
        if isinstance(c, NumericColumn):
            add(c.key, parsing.FixedLenFeature(tuple(c.shape), c.dtype, c.default_value))
        elif isinstance(c, BucketizedColumn):
            visit(c.source_column)
        elif isinstance(c, (IndicatorColumn, EmbeddingColumn)):
            visit(c.categorical_column)
        elif isinstance(c, IdentityCategoricalColumn):
            add(c.key, parsing.VarLenFeature(dtypes.int64))
        elif isinstance(c, (VocabularyListCategoricalColumn, VocabularyFileCategoricalColumn,
                            HashedCategoricalColumn)):
            add(c.key, parsing.VarLenFeature(dtypes.as_dtype(c.dtype)))
        else:
            raise ValueError("All feature_columns must be FeatureColumn instances. Given: %s" % (c,))

    for c in feature_columns:
        visit(c)
    return spec


# ---- consumers ----

def _columns_of(feature_columns, dense_only):
    if isinstance(feature_columns, _FeatureColumn):
        feature_columns = [feature_columns]
    cols = list(feature_columns)
    if not cols:
        raise ValueError("feature_columns must not be empty.")
    for c in cols:
        if not isinstance(c, _FeatureColumn):
            raise ValueError("Items of feature_columns must be a FeatureColumn. Given (type %s): %s."
                             % (type(c), c))
        if dense_only and not c._cc.is_dense:
            raise ValueError("Items of feature_columns must be a _DenseColumn. You can wrap a categorical column "
                             "with an embedding_column or indicator_column. Given: %s" % (c,))
    return cols


def _features_of(features):
    if not isinstance(features, collections.abc.Mapping):
        raise ValueError("We expected a dictionary here. Instead we got: %s" % (features,))
    out = {}
    for k, v in features.items():
        if not isinstance(k, str):
            continue
        if hasattr(v, "indices") and hasattr(v, "dense_shape"):  # a SparseTensor (parsed VarLenFeature)
            from dflow.framework import sparse_tensor
            v = sparse_tensor.to_dense_for_columns(v)
        out[k] = ops.convert_to_tensor(v)._out
    return out


def _fill_cols_to_vars(cols_to_vars, cols, new_vars, prefix):
    if cols_to_vars is None:
        return
    for c in cols:
        p = "%s%s/" % (prefix, c.name)
        cols_to_vars[c] = [v for v in new_vars if v.op.name.startswith(p)]


def input_layer(features, feature_columns, weight_collections=None, trainable=True, cols_to_vars=None,
                cols_to_output_tensors=None):
    """The dense tensors of the columns (sorted by name) concatenated: [batch, total dimension]."""
    cols = _columns_of(feature_columns, dense_only=True)
    g = ops.get_default_graph()
    feats = _features_of(features)
    out = _cc(_dflow.input_layer, g._scope, feats, [c._cc for c in cols])
    new_vars = adopt_cc_variables(g, trainable=trainable)
    if weight_collections:
        for v in new_vars:
            g.add_to_collections(weight_collections, v)
    _fill_cols_to_vars(cols_to_vars, cols, new_vars, g._scope.name_prefix + "input_layer/")
    if cols_to_output_tensors is not None:
        raise NotImplementedError("input_layer(cols_to_output_tensors=...): not supported by dflow")
    return g._tensor_of(out)


def linear_model(features, feature_columns, units=1, sparse_combiner="sum", weight_collections=None, trainable=True,
                 cols_to_vars=None):
    """Logits [batch, units]: the sum over columns of input times weights, plus bias_weights."""
    cols = _columns_of(feature_columns, dense_only=False)
    if sparse_combiner not in ("sum", "mean", "sqrtn"):
        raise ValueError("sparse_combiner must be one of 'sum', 'mean', 'sqrtn'; got %r" % (sparse_combiner,))
    g = ops.get_default_graph()
    feats = _features_of(features)
    out = _cc(_dflow.linear_model, g._scope, feats, [c._cc for c in cols], int(units), sparse_combiner)
    new_vars = adopt_cc_variables(g, trainable=trainable)
    if weight_collections:
        for v in new_vars:
            g.add_to_collections(weight_collections, v)
    if cols_to_vars is not None:
        prefix = g._scope.name_prefix + "linear_model/"
        _fill_cols_to_vars(cols_to_vars, cols, new_vars, prefix)
        cols_to_vars["bias"] = [v for v in new_vars if v.op.name == prefix + "bias_weights"]
    return g._tensor_of(out)

