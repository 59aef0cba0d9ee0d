"""Differential specs: ParseExample, ParseExampleV2, ParseSingleExample on serialized
tf.train.Example protos (made with TensorFlow's own proto classes): dense features with and
without defaults, variable-length dense (FixedLenSequence), sparse (VarLen) and ragged features,
all three value types, empty batches, missing and malformed features, bytes that are not an
Example. (Format: see diffsuite's docstring.)"""
import numpy as np

from diffsuite import Case, Const, Spec

SPECS = []


def _example(feats):
    """Serialized tf.train.Example: feats {key: list of float | int | bytes}."""
    from conftest import real_tf
    tf = real_tf()
    ex = tf.train.Example()
    for k, vals in feats.items():
        f = ex.features.feature[k]
        if vals and isinstance(vals[0], float):
            f.float_list.value.extend(vals)
        elif vals and isinstance(vals[0], bytes):
            f.bytes_list.value.extend(vals)
        elif vals:
            f.int64_list.value.extend(vals)
        else:
            f.float_list.value.extend([])
    return ex.SerializeToString()


def _batch():
    return [
        _example({"a": [1.5, -2.0], "b": [7], "s": [b"x", b"yz"], "v": [3, 4, 5], "r": [1.0, 2.0, 3.0]}),
        _example({"a": [0.25, 4.0], "s": [b""], "v": [], "r": [5.0]}),
        _example({"a": [9.0, 8.0], "b": [-3], "v": [2 ** 40], "r": []}),
    ]


def _strings(xs):
    return np.array(xs, dtype=object)


def _parse_v1(tf, ser, names, dense_defaults_b, sparse=True, shapes=None):
    res = tf.raw_ops.ParseExample(
        serialized=ser, names=names, sparse_keys=[tf.constant("v"), tf.constant("s")] if sparse else [],
        dense_keys=[tf.constant("a"), tf.constant("b")],
        dense_defaults=[tf.constant([], tf.float32), dense_defaults_b],
        sparse_types=[tf.int64, tf.string] if sparse else [], dense_shapes=shapes or [[2], []])
    return [t for group in res for t in group]


def _parse_example(dtype):
    out = []
    batch = _batch()
    names = _strings([])
    d7 = Const(np.array(0, np.int64))
    out.append(Case("batch of 3", lambda tf, s, n, d: _parse_v1(tf, s, n, d), [_strings(batch), names, d7]))
    out.append(Case("names given", lambda tf, s, n, d: _parse_v1(tf, s, n, d),
                    [_strings(batch), _strings([b"e0", b"e1", b"e2"]), d7]))
    out.append(Case("empty batch", lambda tf, s, n, d: _parse_v1(tf, s, n, d),
                    [_strings([]).astype(object), names, d7]))
    out.append(Case("dense only", lambda tf, s, n, d: _parse_v1(tf, s, n, d, sparse=False),
                    [_strings(batch[:1]), names, d7]))
    out.append(Case("required feature missing", lambda tf, s, n, d: _parse_v1(tf, s, n, d),
                    [_strings([_example({"b": [1]})]), names, d7]))
    out.append(Case("wrong type", lambda tf, s, n, d: _parse_v1(tf, s, n, d),
                    [_strings([_example({"a": [1, 2], "b": [1]})]), names, d7]))
    out.append(Case("wrong count", lambda tf, s, n, d: _parse_v1(tf, s, n, d),
                    [_strings([_example({"a": [1.0, 2.0, 3.0], "b": [1]})]), names, d7]))
    out.append(Case("not an Example", lambda tf, s, n, d: _parse_v1(tf, s, n, d),
                    [_strings([b"\x0a\x05garbage"]), names, d7]))
    out.append(Case("default of the wrong shape", lambda tf, s, n, d: _parse_v1(tf, s, n, d),
                    [_strings(batch), names, Const(np.array([1, 2], np.int64))]))
    return out


def _parse_v2(tf, ser, names, keys, d_b, ragged=True, var_len=False):
    sparse_keys, dense_keys, ragged_keys = keys
    res = tf.raw_ops.ParseExampleV2(
        serialized=ser, names=names, sparse_keys=sparse_keys, dense_keys=dense_keys,
        ragged_keys=ragged_keys if ragged else tf.constant([], tf.string),
        dense_defaults=[tf.constant([], tf.float32) if not var_len else tf.constant(-1.0), d_b],
        num_sparse=2, sparse_types=[tf.int64, tf.string],
        ragged_value_types=[tf.float32] if ragged else [], ragged_split_types=[tf.int64] if ragged else [],
        dense_shapes=[[2] if not var_len else [-1], []])
    return [t for group in res for t in group]


def _parse_example_v2(dtype):
    out = []
    batch = _batch()
    keys = [Const(_strings([b"v", b"s"])), Const(_strings([b"a", b"b"])), Const(_strings([b"r"]))]
    d = Const(np.array(-1, np.int64))
    f = lambda tf, s, n, k1, k2, k3, d: _parse_v2(tf, s, n, (k1, k2, k3), d)  # noqa: E731
    out.append(Case("batch of 3, ragged", f, [_strings(batch), _strings([])] + keys + [d]))
    out.append(Case("scalar serialized", f, [np.array(batch[0], dtype=object), _strings([])] + keys + [d]))
    out.append(Case("2-D batch", f, [_strings([batch[:2], batch[1:]]), _strings([])] + keys + [d]))
    out.append(Case("empty batch", f, [_strings([]).astype(object), _strings([])] + keys + [d]))
    out.append(Case("variable-length dense", lambda tf, s, n, k1, k2, k3, d: _parse_v2(
        tf, s, n, (k1, k2, k3), d, ragged=False, var_len=True),
        [_strings([_example({"a": [1.0], "b": [2]}), _example({"a": [3.0, 4.0, 5.0]})]), _strings([])] + keys + [d]))
    out.append(Case("required feature missing", f, [_strings([_example({"b": [1]})]), _strings([])] + keys + [d]))
    out.append(Case("ragged of the wrong type", f,
                    [_strings([_example({"a": [1.0, 2.0], "r": [1, 2]})]), _strings([])] + keys + [d]))
    out.append(Case("not an Example", f, [_strings([b"\x0a\x05garbage"]), _strings([])] + keys + [d]))
    return out


def _parse_single(dtype):
    out = []
    batch = _batch()

    def f(tf, s, d):
        res = tf.raw_ops.ParseSingleExample(
            serialized=s, dense_defaults=[tf.constant([], tf.float32), d], num_sparse=2, sparse_keys=["v", "s"],
            dense_keys=["a", "b"], sparse_types=[tf.int64, tf.string], dense_shapes=[[2], []])
        return [t for group in res for t in group]
    for i, ex in enumerate(batch):
        out.append(Case("example %d" % i, f, [np.array(ex, dtype=object), Const(np.array(5, np.int64))]))
    out.append(Case("required feature missing", f, [np.array(_example({"b": [1]}), dtype=object),
                                                    Const(np.array(5, np.int64))]))
    out.append(Case("not an Example", f, [np.array(b"\x0a", dtype=object), Const(np.array(5, np.int64))]))
    out.append(Case("serialized not a scalar", f, [_strings(batch[:2]), Const(np.array(5, np.int64))]))
    return out


SPECS.append(Spec("ParseExample", _parse_example, grad=False))
SPECS.append(Spec("ParseExampleV2", _parse_example_v2, grad=False))
SPECS.append(Spec("ParseSingleExample", _parse_single, grad=False))

EXCLUDED = {}
KNOWN = {}
