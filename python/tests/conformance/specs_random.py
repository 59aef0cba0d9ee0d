"""Differential specs: random ops. dflow follows TensorFlow's seed rules but does not claim
TensorFlow's numbers (docs/PYTHON.md), so the samples themselves are not compared: each case
computes, inside the graph, properties that both sides must agree on exactly — the shape and dtype
of the samples, that every sample lies in its range, that two ops with the same nonzero
(seed, seed2) give the same samples and ops with different seeds different ones, that an op gives
new samples on each evaluation within a run (two reads of one op through different paths are one
evaluation), and that the sample moments lie within statistical bounds (five standard errors,
for a few thousand samples: a false failure has probability below 1e-6 per bound). Errors for bad
shapes and arguments are compared as usual. (Format: see diffsuite's docstring.)"""
import numpy as np

from diffsuite import Case, Const, Spec

SPECS = []
N = 4000  # samples for the moment checks


def _all(tf, c):  # All/Any are not dflow ops: Min/Max of the condition cast to int32
    return tf.equal(tf.reduce_min(tf.cast(tf.reshape(c, [-1]), tf.int32)), 1)


def _any(tf, c):
    return tf.equal(tf.reduce_max(tf.cast(tf.reshape(c, [-1]), tf.int32)), 1)


def _props(tf, a, b, c, lo=None, hi=None, mean=None, std=None):
    """a, b: two ops with the same seeds; c: an op with other seeds. Returns exact properties."""
    out = [tf.shape(a), _all(tf, tf.equal(a, b)), _any(tf, tf.not_equal(a, c))]
    x = tf.cast(tf.reshape(a, [-1]), tf.float64)
    if lo is not None:
        out.append(_all(tf, x >= lo))
    if hi is not None:
        out.append(_all(tf, x < hi))
    n = tf.cast(tf.size(x), tf.float64)
    if mean is not None:
        m = tf.reduce_mean(x)
        out.append(tf.abs(m - mean) < 5 * std / tf.sqrt(n))
    if std is not None:
        v = tf.reduce_mean(tf.square(x - tf.reduce_mean(x)))
        # the variance of a sample variance is about 2 sigma^4 / n for these light-tailed laws
        out.append(tf.abs(v - std * std) < 5 * std * std * tf.sqrt(2.0 / n) + 1e-12)
    return out


def _float_random(op, lo=None, hi=None, mean=None, std=None):
    def cases(dtype):
        out = []
        for st in (np.int32, np.int64):
            for shape in [(N,), (40, 100), (2, 25, 80)]:
                def fn(tf, s, dt=dtype):
                    mk = lambda s1, s2: getattr(tf.raw_ops, op)(shape=s, dtype=tf.as_dtype(dt),  # noqa: E731
                                                                seed=s1, seed2=s2)
                    return _props(tf, mk(7, 3), mk(7, 3), mk(7, 4), lo, hi, mean, std)
                out.append(Case("%s shape %s" % (np.dtype(st).name, shape), fn, [Const(shape, st)]))

        def small(tf, s, dt=dtype):
            a = getattr(tf.raw_ops, op)(shape=s, dtype=tf.as_dtype(dt), seed=1, seed2=2)
            return [tf.shape(a), tf.size(a)]
        out.append(Case("empty", small, [Const((0, 3), np.int32)]))
        out.append(Case("scalar", small, [Const(np.zeros((0,), np.int32))]))
        out.append(Case("fed shape", small, [np.array([3, 2], np.int32)]))
        out.append(Case("negative dim", small, [np.array([3, -2], np.int32)]))
        out.append(Case("shape not a vector", small, [np.array([[3, 2]], np.int32)]))

        def unseeded(tf, s, dt=dtype):  # seed 0, seed2 0: random seeds; only the shape and range
            a = getattr(tf.raw_ops, op)(shape=s, dtype=tf.as_dtype(dt))
            return _props(tf, a, a, a + 1, lo, hi)[:1] + _props(tf, a, a, a + 1, lo, hi)[3:]
        out.append(Case("unseeded", unseeded, [Const((50,), np.int32)]))

        def twice(tf, s, dt=dtype):  # one op read twice in a run: one evaluation
            a = getattr(tf.raw_ops, op)(shape=s, dtype=tf.as_dtype(dt), seed=5, seed2=6)
            return _all(tf, tf.equal(tf.identity(a), tf.identity(a)))
        out.append(Case("one evaluation", twice, [Const((20,), np.int32)]))
        return out
    return cases


FLOAT_TYPES = ["float32", "float64"]
SPECS.append(Spec("RandomUniform", _float_random("RandomUniform", 0.0, 1.0, 0.5, np.sqrt(1 / 12.0)),
                  dtypes=FLOAT_TYPES, type_attr="dtype", grad=False))
SPECS.append(Spec("RandomStandardNormal", _float_random("RandomStandardNormal", None, None, 0.0, 1.0),
                  dtypes=FLOAT_TYPES, type_attr="dtype", grad=False))
# Truncated at two standard deviations: variance 1 - 2 * 2 phi(2) / (2 Phi(2) - 1) = 0.7737.
SPECS.append(Spec("TruncatedNormal", _float_random("TruncatedNormal", -2.0, 2.0 + 1e-9, 0.0, np.sqrt(0.77372)),
                  dtypes=FLOAT_TYPES, type_attr="dtype", grad=False))


def _uniform_int(dtype):
    out = []
    for lo, hi in [(0, 10), (-5, 5), (-2 ** 31 if dtype == "int32" else -2 ** 40, 2 ** 30), (3, 4)]:
        def fn(tf, s, a, b, lo=lo, hi=hi):
            mk = lambda s1, s2: tf.raw_ops.RandomUniformInt(shape=s, minval=a, maxval=b, seed=s1, seed2=s2)  # noqa
            x, y, z = mk(7, 3), mk(7, 3), mk(9, 3)
            span = float(hi) - float(lo)
            props = _props(tf, x, y, z, float(lo), float(hi), (float(lo) + hi - 1) / 2.0,
                           np.sqrt((span * span - 1) / 12.0))
            if hi - lo == 1:  # one value: all samples equal; "differs" is False on both
                props = props[:2] + props[3:5]
            elif hi - lo > 2 ** 24:  # a range that is not a power of two this wide: TensorFlow's
                props = props[:5]  # samples carry a modulo bias; the moments are not compared
            return props + [tf.reduce_min(x) if hi - lo <= 10 else tf.constant(0, x.dtype)]
        out.append(Case("[%d, %d)" % (lo, hi), fn, [Const((N,), np.int32), np.array(lo, dtype), np.array(hi, dtype)]))
    small = lambda tf, s, a, b: tf.shape(tf.raw_ops.RandomUniformInt(shape=s, minval=a, maxval=b, seed=1))  # noqa
    out.append(Case("empty range", small, [Const((3,), np.int32), np.array(4, dtype), np.array(4, dtype)]))
    out.append(Case("empty range, empty shape", small, [Const((0,), np.int32), np.array(4, dtype),
                                                        np.array(4, dtype)]))
    out.append(Case("minval not a scalar", small, [Const((3,), np.int32), np.array([0], dtype), np.array(4, dtype)]))
    return out


SPECS.append(Spec("RandomUniformInt", _uniform_int, type_attr="Tout", grad=False))


def _shuffle(dtype):
    out = []
    for shape in [(50,), (30, 2), (1,), (0, 3), ()]:
        def fn(tf, x, shape=shape):
            a = tf.raw_ops.RandomShuffle(value=x, seed=4, seed2=1)
            b = tf.raw_ops.RandomShuffle(value=x, seed=4, seed2=1)
            c = tf.raw_ops.RandomShuffle(value=x, seed=4, seed2=2)
            # a permutation of the rows keeps the multiset of values (distinct integers here)
            same_set = tf.logical_and(
                tf.equal(tf.reduce_sum(tf.cast(a, tf.float64)), tf.reduce_sum(tf.cast(x, tf.float64))),
                tf.equal(tf.reduce_sum(tf.square(tf.cast(a, tf.float64))),
                         tf.reduce_sum(tf.square(tf.cast(x, tf.float64)))))
            props = [tf.shape(a), _all(tf, tf.equal(a, b)), same_set]
            if shape and shape[0] >= 30:
                props.append(_any(tf, tf.not_equal(a, c)))
                props.append(_any(tf, tf.not_equal(a, x)))
            return props
        x = np.arange(int(np.prod(shape)) if shape else 1).reshape(shape)
        out.append(Case("%s" % (shape,), fn, [x.astype(dtype) if dtype != "string" else
                                             np.array([str(v).encode() for v in x.reshape(-1)],
                                                      dtype=object).reshape(shape)]))
    return out


SPECS.append(Spec("RandomShuffle", _shuffle, dtypes=["float32", "float64", "int32", "int64"], grad=False,
                  note="values of the permutation are not compared (not TensorFlow's numbers); the multiset is"))


def _multinomial(dtype):
    out = []
    for ot in ("int32", "int64"):
        def fn(tf, logits, n, ot=ot):
            mk = lambda s1, s2: tf.raw_ops.Multinomial(logits=logits, num_samples=n, seed=s1, seed2=s2,  # noqa
                                                       output_dtype=tf.as_dtype(ot))
            a, b, c = mk(3, 1), mk(3, 1), mk(3, 2)
            # frequencies of each class in row 0 against the probabilities (5 standard errors)
            probs = tf.nn.softmax(tf.cast(logits, tf.float64))
            counts = tf.reduce_sum(tf.one_hot(a, tf.shape(logits)[1], dtype=tf.float64), 1)
            freq = counts / tf.cast(n, tf.float64)
            se = tf.sqrt(probs * (1 - probs) / tf.cast(n, tf.float64))
            ok = _all(tf, tf.abs(freq - probs) <= 5 * se + 1e-12)
            return [tf.shape(a), _all(tf, tf.equal(a, b)), _any(tf, tf.not_equal(a, c)), ok,
                    _all(tf, a >= 0), _all(tf, a < tf.cast(tf.shape(logits)[1], a.dtype))]
        logits = np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1], [0.25, 0.25, 0.25, 0.25]]))
        out.append(Case("%s" % ot, fn, [logits.astype(dtype), Const(N, np.int32)]))
    small = lambda tf, l, n: tf.shape(tf.raw_ops.Multinomial(logits=l, num_samples=n, seed=1))  # noqa: E731
    out.append(Case("zero samples", small, [np.zeros((2, 3), dtype), Const(0, np.int32)]))
    out.append(Case("no batch", small, [np.zeros((0, 3), dtype), Const(5, np.int32)]))
    out.append(Case("no classes", small, [np.zeros((2, 0), dtype), Const(5, np.int32)]))
    out.append(Case("negative samples", small, [np.zeros((2, 3), dtype), np.array(-1, np.int32)]))
    out.append(Case("logits a vector", small, [np.zeros((3,), dtype), Const(5, np.int32)]))

    def certain(tf, l, n):  # one class has all the mass (the others -inf)
        return tf.raw_ops.Multinomial(logits=l, num_samples=n, seed=2)
    out.append(Case("certain", certain, [np.array([[-np.inf, 0.0, -np.inf], [0.0, -np.inf, -np.inf]], dtype),
                                         Const(10, np.int32)]))
    return out


SPECS.append(Spec("Multinomial", _multinomial, grad=False))

EXCLUDED = {}
KNOWN = {}
