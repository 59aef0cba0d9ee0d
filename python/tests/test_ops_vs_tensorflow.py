"""A differential test of the Python op layer: the same Python bodies run under dflow and under
real TensorFlow on generated inputs (several dtypes, empty tensors, scalars, NaN and inf); values
must agree (exactly for integers and bools, within a tolerance for floats), and where TensorFlow
raises, dflow must raise the same exception class."""
import numpy as np
import pytest

from conftest import real_tf

import dflow

FLOATS = ["float32", "float64"]
INTS = ["int32", "int64"]


def _gen(dtype, shape, seed, kind="normal"):
    r = np.random.RandomState(seed)
    if dtype == "bool":
        return r.rand(*shape) > 0.5
    if dtype in INTS or dtype == "uint8":
        lo = 1 if kind == "positive" else (0 if dtype == "uint8" else -9)
        return r.randint(lo, 10, size=shape).astype(dtype)
    x = np.asarray(r.randn(*shape))
    if kind == "positive":
        x = np.abs(x) + 0.1
    elif kind == "special" and x.size:
        flat = x.reshape(-1)
        specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e-30]
        for i in range(min(len(specials), flat.size)):
            flat[(i * 7) % flat.size] = specials[i]
    return x.astype(dtype)


def _run(m, exprs, isolate=False):
    """Builds the expressions in one graph and runs each alone: label → ("value", v) or ("error",
    class, message). An expression that fails is built and run again in a graph of its own: in
    TensorFlow a node without a kernel fails every run of its graph."""
    out = {}
    with m.Graph().as_default():
        built = []
        for label, fn in exprs:
            try:
                built.append((label, fn(m), None))
            except Exception as e:  # noqa: BLE001 - the class is what is compared
                built.append((label, None, e))
        with m.Session() as sess:
            for label, t, err in built:
                if err is None:
                    try:
                        out[label] = ("value", sess.run(t))
                        continue
                    except Exception as e:  # noqa: BLE001
                        out[label] = ("error", type(e).__name__, str(e), "run")
                        continue
                out[label] = ("error", type(err).__name__, str(err), "build")
    if not isolate:
        again = [(label, fn) for label, fn in exprs if out[label][0] == "error"]
        if len(again) > 1:
            for label, fn in again:
                out.update(_run(m, [(label, fn)], isolate=True))
    return out


def _tolerance(dtype):
    return (2e-6, 1e-7) if dtype == np.float32 else (1e-12, 1e-14)


# Where dflow knowingly differs (label pattern → why). Each is checked to still match a case.
KNOWN = {
    # C++ kernels
    r"^(reduce_\w+|count_nonzero)\((int|float)\d\d vector, axis=\[0, -1\]|^reduce_(any|all)\(vector, \[0, -1\]":
        "dflow's reductions accept an axis named twice; TensorFlow's fail the run",
    r"^(softmax|log_softmax|softmax axis 0) \(float": "dflow's Softmax kernel: a row holding +inf gives 0 "
        "elsewhere and NaN at the inf (TensorFlow's: NaN across the row)",
    r"^(conv2d [\w ]+|max_pool) \(int": "dflow's Conv2D and MaxPool kernels are float-only "
        "(an int tensor raises TypeError; numpy ints are taken as float32, the attr's default)",
}


def _known(label):
    import re
    return any(re.search(p, label) for p in KNOWN)


def _checked_earlier(ours, theirs):
    """dflow's shape functions check constant arguments while building (ValueError, as
    TensorFlow's own shape functions raise) where TensorFlow's leave it to the kernel
    (InvalidArgumentError when run): reshape to [-1, -1], a slice or an axis out of range."""
    return (ours[1] == "ValueError" and ours[3] == "build" and theirs[1] == "InvalidArgumentError"
            and theirs[3] == "run")


def _superset(ours, theirs):
    """TensorFlow has no kernel for the dtype; dflow computes it (RealDiv on integers)."""
    return ours[0] == "value" and "No OpKernel was registered" in theirs[2]


def check(exprs, rtol=None, atol=None):
    """exprs: [(label, fn(tf))]; dflow's results must be TensorFlow's."""
    ours = _run(dflow, exprs)
    theirs = _run(real_tf(), exprs)
    problems = []
    for label, _ in exprs:
        a, b = ours[label], theirs[label]
        if _known(label):
            continue
        if b[0] == "error":
            if a[0] == "error" and (a[1] == b[1] or _both_reject_dtype(a, b) or _checked_earlier(a, b)) or \
                    _superset(a, b):
                continue
            problems.append("%s: TensorFlow raises %s, dflow %s" % (label, b[1], a[1] if a[0] == "error" else
                                                                     "returns a value"))
            continue
        if a[0] == "error":
            problems.append("%s: dflow raises %s (%s), TensorFlow returns a value" % (label, a[1], a[2][:200]))
            continue
        problems += _compare(label, a[1], b[1], rtol, atol)
    assert not problems, "\n".join(problems)


def _both_reject_dtype(ours, theirs):
    """TensorFlow's OpDef may allow a dtype its kernels lack (the run fails with InvalidArgument);
    dflow's OpDef lists only the dtypes it computes (TypeError while building, as TensorFlow
    raises for dtypes its OpDef leaves out)."""
    return (theirs[1] == "InvalidArgumentError" and "No OpKernel was registered" in theirs[2]
            and ours[1] == "TypeError" and "not in list of allowed values" in ours[2])


def _compare(label, a, b, rtol, atol):
    if isinstance(b, (list, tuple)):
        if not isinstance(a, (list, tuple)) or len(a) != len(b):
            return ["%s: structure %r vs %r" % (label, type(a), type(b))]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += _compare("%s[%d]" % (label, i), x, y, rtol, atol)
        return out
    x, y = np.asarray(a), np.asarray(b)
    if x.dtype != y.dtype or x.shape != y.shape:
        return ["%s: %s%s vs TensorFlow's %s%s" % (label, x.dtype, x.shape, y.dtype, y.shape)]
    if x.dtype.kind == "f":
        rt, at = _tolerance(x.dtype)
        try:
            np.testing.assert_allclose(x, y, rtol=rtol or rt, atol=atol or at)
        except AssertionError as e:
            return ["%s: %s" % (label, str(e).strip().splitlines()[-3:])]
        return []
    if not np.array_equal(x, y):
        return ["%s: %r vs TensorFlow's %r" % (label, x, y)]
    return []


SHAPES = {"scalar": (), "vector": (5,), "matrix": (3, 4), "empty": (0, 4), "rank3": (2, 3, 4)}

# ---- element-wise unary ----------------------------------------------------------------------

UNARY = ["abs", "negative", "sign", "square", "sqrt", "rsqrt", "exp", "log", "log1p", "floor", "ceil", "round",
         "reciprocal", "sigmoid", "tanh", "logical_not", "nn.relu", "nn.relu6", "nn.elu", "nn.selu", "nn.softplus",
         "zeros_like", "ones_like", "identity", "stop_gradient", "shape", "size", "rank"]


def _fn(tf, name):
    obj = tf
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("dtype", FLOATS + INTS + ["bool"])
def test_unary(dtype):
    exprs = []
    for op in UNARY:
        for sname, shape in SHAPES.items():
            for kind in (["normal", "special", "positive"] if dtype in FLOATS else ["normal"]):
                x = _gen(dtype, shape, len(exprs), kind)
                exprs.append(("%s(%s %s %s)" % (op, dtype, sname, kind),
                              lambda tf, op=op, x=x: _fn(tf, op)(tf.constant(x))))
    check(exprs)


# ---- element-wise binary with broadcasting ---------------------------------------------------

BINARY = ["add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod", "pow", "maximum", "minimum",
          "squared_difference", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
          "logical_and", "logical_or", "realdiv"]
PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), ()), ((3, 1), (1, 4)), ((0, 4), (4,)), ((), ()),
         ((2, 3, 4), (3, 1)), ((3, 4), (3,)), ((2, 3), (0, 3))]


@pytest.mark.parametrize("dtype", FLOATS + INTS + ["bool"])
def test_binary_broadcasting(dtype):
    exprs = []
    for op in BINARY:
        for sa, sb in PAIRS:
            for kind in (["normal", "special"] if dtype in FLOATS else ["normal", "positive"]):
                x = _gen(dtype, sa, len(exprs), kind)
                y = _gen(dtype, sb, len(exprs) + 1000, "positive" if op in ("floordiv", "floormod") and
                         dtype in INTS else kind)
                if op == "pow" and dtype in INTS:
                    x, y = x % 4, np.abs(y) % 4
                exprs.append(("%s(%s %s, %s %s)" % (op, dtype, sa, sb, kind),
                              lambda tf, op=op, x=x, y=y: _fn(tf, op)(tf.constant(x), tf.constant(y))))
    check(exprs)


def test_operators_and_python_numbers():
    xf = _gen("float32", (3, 4), 1)
    xi = _gen("int32", (3, 4), 2, "positive")
    exprs = []
    for name, fx in [("float", xf), ("int", xi)]:
        for opname, f in [("+", lambda a, b: a + b), ("-", lambda a, b: a - b), ("*", lambda a, b: a * b),
                          ("/", lambda a, b: a / b), ("//", lambda a, b: a // b), ("%", lambda a, b: a % b),
                          ("**", lambda a, b: a ** b), ("<", lambda a, b: a < b), (">=", lambda a, b: a >= b)]:
            for other in (2, 2.5, -3, np.float64(1.5), np.int64(2)):
                exprs.append(("t %s %r (%s)" % (opname, other, name),
                              lambda tf, f=f, fx=fx, o=other: f(tf.constant(fx), o)))
                exprs.append(("%r %s t (%s)" % (other, opname, name),
                              lambda tf, f=f, fx=fx, o=other: f(o, tf.constant(fx))))
        exprs.append(("-t (%s)" % name, lambda tf, fx=fx: -tf.constant(fx)))
        exprs.append(("abs(t) (%s)" % name, lambda tf, fx=fx: abs(tf.constant(fx))))
        exprs.append(("add(t, list) (%s)" % name, lambda tf, fx=fx: tf.add(tf.constant(fx), [1, 2, 3, 4])))
        exprs.append(("add(list, list) (%s)" % name, lambda tf: tf.add([1, 2], [3, 4])))
        exprs.append(("multiply(t, 0.5) (%s)" % name, lambda tf, fx=fx: tf.multiply(tf.constant(fx), 0.5)))
    exprs.append(("int32 + float32", lambda tf: tf.constant(xi) + tf.constant(xf)))
    exprs.append(("int32 + int64", lambda tf: tf.add(tf.constant(xi), tf.constant(xi.astype(np.int64)))))
    exprs.append(("bool & bool", lambda tf: tf.constant([True, False]) & tf.constant([True, True])))
    exprs.append(("bool | bool", lambda tf: tf.constant([True, False]) | tf.constant([False, False])))
    exprs.append(("~bool", lambda tf: ~tf.constant([True, False])))
    exprs.append(("logical_xor", lambda tf: tf.logical_xor([True, False, True], [True, True, False])))
    exprs.append(("int division by zero", lambda tf: tf.constant([1, 2]) // tf.constant([1, 0])))
    exprs.append(("int mod by zero", lambda tf: tf.constant([1, 2]) % tf.constant([1, 0])))
    exprs.append(("float division by zero", lambda tf: tf.constant([1., -1., 0.]) / tf.constant(0.)))
    exprs.append(("add_n", lambda tf: tf.add_n([xf, xf * 2, tf.constant(xf)])))
    exprs.append(("add_n one", lambda tf: tf.add_n([tf.constant(xf)])))
    exprs.append(("add_n mixed", lambda tf: tf.add_n([tf.constant(xf), tf.constant(xi)])))
    exprs.append(("scalar_mul", lambda tf: tf.scalar_mul(3, tf.constant(xf))))
    exprs.append(("clip_by_value", lambda tf: tf.clip_by_value(tf.constant(xf), -0.5, 0.5)))
    exprs.append(("clip_by_value int", lambda tf: tf.clip_by_value(tf.constant(xi), 2, 5)))
    check(exprs)


# ---- reductions ------------------------------------------------------------------------------

REDUCE = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_logsumexp",
          "count_nonzero"]
AXES = [None, 0, -1, [0, -1], (), [-2], 2]


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_reductions(dtype):
    exprs = []
    for op in REDUCE:
        for sname, shape in SHAPES.items():
            x = _gen(dtype, shape, len(exprs), "special" if dtype in FLOATS and sname == "matrix" else "normal")
            for axis in AXES:
                for keep in (False, True):
                    exprs.append(("%s(%s %s, axis=%r, keepdims=%s)" % (op, dtype, sname, axis, keep),
                                  lambda tf, op=op, x=x, a=axis, k=keep: _fn(tf, op)(tf.constant(x), axis=a,
                                                                                     keepdims=k)))
    check(exprs, rtol=1e-5 if dtype == "float32" else None)


def test_bool_reductions_and_arg_reductions():
    exprs = []
    for sname, shape in SHAPES.items():
        b = _gen("bool", shape, 1)
        x = _gen("float32", shape, 2)
        xi = _gen("int64", shape, 3)
        for axis in AXES:
            for keep in (False, True):
                exprs.append(("reduce_any(%s, %r, %s)" % (sname, axis, keep),
                              lambda tf, b=b, a=axis, k=keep: tf.reduce_any(b, axis=a, keepdims=k)))
                exprs.append(("reduce_all(%s, %r, %s)" % (sname, axis, keep),
                              lambda tf, b=b, a=axis, k=keep: tf.reduce_all(b, axis=a, keepdims=k)))
        for axis in (0, 1, -1, 2):
            for src in ("f", "i"):
                v = x if src == "f" else xi
                exprs.append(("argmax(%s %s, %d)" % (src, sname, axis),
                              lambda tf, v=v, a=axis: tf.argmax(v, axis=a)))
                exprs.append(("argmin(%s %s, %d)" % (src, sname, axis),
                              lambda tf, v=v, a=axis: tf.argmin(v, axis=a, output_type=tf.int32)))
    exprs.append(("reduce_sum(reduction_indices)", lambda tf: tf.reduce_sum(np.ones((2, 3)), reduction_indices=[1])))
    exprs.append(("reduce_mean(keep_dims)", lambda tf: tf.reduce_mean(np.ones((2, 3)), 1, keep_dims=True)))
    exprs.append(("reduce_mean(int)", lambda tf: tf.reduce_mean([1, 2], 0)))
    check(exprs)


# ---- matmul ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_matmul(dtype):
    exprs = []
    for ta in (False, True):
        for tb in (False, True):
            a = _gen(dtype, (4, 3) if ta else (3, 4), 1)
            b = _gen(dtype, (5, 4) if tb else (4, 5), 2)
            exprs.append(("matmul(ta=%s, tb=%s)" % (ta, tb),
                          lambda tf, a=a, b=b, ta=ta, tb=tb: tf.matmul(a, b, transpose_a=ta, transpose_b=tb)))
            exprs.append(("matmul adjoint(ta=%s, tb=%s)" % (ta, tb),
                          lambda tf, a=a, b=b, ta=ta, tb=tb: tf.matmul(tf.constant(a), tf.constant(b), adjoint_a=ta,
                                                                       adjoint_b=tb)))
            ba = _gen(dtype, (2, 4, 3) if ta else (2, 3, 4), 3)
            bb = _gen(dtype, (2, 5, 4) if tb else (2, 4, 5), 4)
            exprs.append(("batch matmul(ta=%s, tb=%s)" % (ta, tb),
                          lambda tf, a=ba, b=bb, ta=ta, tb=tb: tf.matmul(a, b, transpose_a=ta, transpose_b=tb)))
    exprs.append(("matmul @", lambda tf: tf.constant(_gen(dtype, (3, 4), 5)) @ _gen(dtype, (4, 2), 6)))
    exprs.append(("matmul empty", lambda tf: tf.matmul(_gen(dtype, (0, 4), 5), _gen(dtype, (4, 2), 6))))
    exprs.append(("matmul empty inner", lambda tf: tf.matmul(_gen(dtype, (3, 0), 5), _gen(dtype, (0, 2), 6))))
    exprs.append(("matmul broadcast batch", lambda tf: tf.matmul(_gen(dtype, (2, 3, 4), 5), _gen(dtype, (1, 4, 2), 6))))
    exprs.append(("matmul bad inner", lambda tf: tf.matmul(_gen(dtype, (3, 4), 5), _gen(dtype, (3, 2), 6))))
    exprs.append(("matmul vector", lambda tf: tf.matmul(_gen(dtype, (4,), 5), _gen(dtype, (4, 2), 6))))
    check(exprs, rtol=1e-5 if dtype == "float32" else None)


def test_matmul_mixed_dtypes():
    check([("matmul f32 @ f64", lambda tf: tf.matmul(tf.constant(np.ones((2, 2), np.float32)),
                                                    tf.constant(np.ones((2, 2)))))])


# ---- array ops -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "bool", "float64"])
def test_array_ops(dtype):
    x = _gen(dtype, (2, 3, 4), 1)
    m = _gen(dtype, (3, 4), 2)
    e = _gen(dtype, (0, 4), 3)
    s = _gen(dtype, (), 4)
    E = [
        ("reshape", lambda tf: tf.reshape(x, [6, 4])),
        ("reshape -1", lambda tf: tf.reshape(x, [-1, 2])),
        ("reshape scalar", lambda tf: tf.reshape(s, [1, 1])),
        ("reshape to scalar", lambda tf: tf.reshape(tf.constant([s]), [])),
        ("reshape empty", lambda tf: tf.reshape(e, [-1, 2, 2])),
        ("reshape bad", lambda tf: tf.reshape(x, [5, 5])),
        ("reshape two -1", lambda tf: tf.reshape(x, [-1, -1])),
        ("reshape tensor shape", lambda tf: tf.reshape(x, tf.constant([4, 6]))),
        ("transpose", lambda tf: tf.transpose(x)),
        ("transpose perm", lambda tf: tf.transpose(x, [1, 0, 2])),
        ("transpose empty", lambda tf: tf.transpose(e)),
        ("transpose bad perm", lambda tf: tf.transpose(x, [0, 1])),
        ("concat 0", lambda tf: tf.concat([m, m], 0)),
        ("concat -1", lambda tf: tf.concat([m, m[:, :2]], -1)),
        ("concat empty", lambda tf: tf.concat([e, m], 0)),
        ("concat one", lambda tf: tf.concat([m], 1)),
        ("concat bad", lambda tf: tf.concat([m, x], 0)),
        ("concat axis out of range", lambda tf: tf.concat([m, m], 2)),
        ("stack", lambda tf: tf.stack([m, m, m])),
        ("stack axis", lambda tf: tf.stack([m, m], axis=2)),
        ("stack -1", lambda tf: tf.stack([m, m], axis=-1)),
        ("stack scalars", lambda tf: tf.stack([s, s])),
        ("stack bad", lambda tf: tf.stack([m, x])),
        ("unstack", lambda tf: tf.unstack(x)),
        ("unstack axis", lambda tf: tf.unstack(x, axis=2)),
        ("unstack -1", lambda tf: tf.unstack(m, axis=-1)),
        ("split num", lambda tf: tf.split(x, 2, axis=0)),
        ("split sizes", lambda tf: tf.split(x, [1, 3], axis=2)),
        ("split sizes -1", lambda tf: tf.split(x, [1, -1], axis=-1)),
        ("split uneven", lambda tf: tf.split(x, 3, axis=2)),
        ("slice", lambda tf: tf.slice(x, [0, 1, 1], [2, 2, -1])),
        ("slice empty", lambda tf: tf.slice(x, [1, 0, 0], [0, 3, 4])),
        ("slice out of range", lambda tf: tf.slice(x, [0, 0, 0], [3, 1, 1])),
        ("getitem int", lambda tf: tf.constant(x)[1]),
        ("getitem -1", lambda tf: tf.constant(x)[-1]),
        ("getitem slices", lambda tf: tf.constant(x)[:, 1:, ::2]),
        ("getitem negative step", lambda tf: tf.constant(x)[::-1, :, -2:]),
        ("getitem ellipsis", lambda tf: tf.constant(x)[..., 0]),
        ("getitem newaxis", lambda tf: tf.constant(m)[:, None, 1]),
        ("getitem tensor", lambda tf: tf.constant(x)[tf.constant(1)]),
        ("getitem out of range", lambda tf: tf.constant(m)[5]),
        ("expand_dims", lambda tf: tf.expand_dims(m, 1)),
        ("expand_dims -1", lambda tf: tf.expand_dims(m, -1)),
        ("expand_dims scalar", lambda tf: tf.expand_dims(s, 0)),
        ("squeeze", lambda tf: tf.squeeze(tf.expand_dims(m, 0))),
        ("squeeze axis", lambda tf: tf.squeeze(tf.reshape(m, [1, 3, 1, 4]), [2])),
        ("squeeze bad axis", lambda tf: tf.squeeze(m, [0])),
        ("pad", lambda tf: tf.pad(m, [[1, 0], [2, 3]])),
        ("pad constant", lambda tf: tf.pad(m, [[1, 1], [0, 1]], constant_values=1)),
        ("pad empty", lambda tf: tf.pad(e, [[1, 1], [0, 0]])),
        ("tile", lambda tf: tf.tile(m, [2, 3])),
        ("tile zero", lambda tf: tf.tile(m, [0, 1])),
        ("gather", lambda tf: tf.gather(m, [2, 0, 2])),
        ("gather axis", lambda tf: tf.gather(x, [[0, 3], [1, 1]], axis=2)),
        ("gather -1", lambda tf: tf.gather(x, [1], axis=-1)),
        ("gather empty", lambda tf: tf.gather(m, np.zeros((0,), np.int32))),
        ("gather out of range", lambda tf: tf.gather(m, [3])),
        ("gather int64 ids", lambda tf: tf.gather(m, np.array([1, 0], np.int64))),
        ("fill", lambda tf: tf.fill([2, 3], s)),
        ("zeros", lambda tf: tf.zeros([2, 3], dtype=dtype)),
        ("ones", lambda tf: tf.ones((3,), dtype=dtype)),
        ("zeros_like", lambda tf: tf.zeros_like(m)),
        ("ones_like dtype", lambda tf: tf.ones_like(m, dtype=tf.float32)),
        ("shape", lambda tf: tf.shape(x)),
        ("shape int64", lambda tf: tf.shape(x, out_type=tf.int64)),
        ("size", lambda tf: tf.size(e)),
        ("rank", lambda tf: tf.rank(s)),
        ("broadcast_to", lambda tf: tf.broadcast_to(m[0], [2, 3, 4])),
        ("broadcast_to bad", lambda tf: tf.broadcast_to(m, [2, 4])),
        ("where", lambda tf: tf.where(_gen("bool", (3, 4), 9), m, tf.zeros_like(m))),
        ("where rows", lambda tf: tf.where([True, False, True], m, tf.ones_like(m))),
        ("where_v2 broadcast", lambda tf: tf.where_v2(_gen("bool", (3, 1), 9), m, m[0])),
        ("identity", lambda tf: tf.identity(x)),
        ("constant shape", lambda tf: tf.constant(s, shape=[2, 2])),
        ("constant fill", lambda tf: tf.constant([s, s], shape=[2, 3])),
    ]
    if dtype != "bool":
        E += [
            ("one_hot", lambda tf: tf.one_hot([0, 2, -1, 5], 3)),
            ("one_hot values", lambda tf: tf.one_hot([[0, 1], [2, 0]], 3, on_value=5, off_value=-1)),
            ("one_hot axis", lambda tf: tf.one_hot([0, 2], 3, axis=0, dtype=tf.float64)),
            ("one_hot int64", lambda tf: tf.one_hot(np.array([1, 0], np.int64), 2)),
            ("sequence_mask", lambda tf: tf.sequence_mask([1, 3, 0], 4)),
            ("sequence_mask no maxlen", lambda tf: tf.sequence_mask([1, 3, 2])),
            ("range", lambda tf: tf.range(5)),
            ("range start limit delta", lambda tf: tf.range(1, 10, 3)),
            ("range negative", lambda tf: tf.range(5, 0, -2)),
            ("range float", lambda tf: tf.range(0., 1., 0.25)),
            ("range dtype", lambda tf: tf.range(4, dtype=tf.int64)),
            ("range empty", lambda tf: tf.range(3, 1)),
        ]
    check([("%s (%s)" % (label, dtype), fn) for label, fn in E])


CASTS = ["float32", "float64", "int32", "int64", "bool", "uint8"]


def test_casts():
    exprs = []
    for src in CASTS:
        for dst in CASTS:
            for kind in (["normal", "special"] if src in FLOATS else ["normal"]):
                x = _gen(src, (3, 4), len(exprs), kind)
                if kind == "special" and dst not in FLOATS + ["bool"]:
                    continue  # NaN/inf to an integer is undefined behaviour in C++ and in TensorFlow
                if src in FLOATS and dst == "uint8":
                    x = np.abs(x)
                exprs.append(("cast %s → %s (%s)" % (src, dst, kind),
                              lambda tf, x=x, d=dst: tf.cast(tf.constant(x), getattr(tf, d))))
    exprs.append(("cast python", lambda tf: tf.cast([1.7, -1.7, 2.5], tf.int32)))
    exprs.append(("to_float", lambda tf: tf.to_float([1, 2])))
    exprs.append(("to_int64", lambda tf: tf.to_int64([1.5, 2.])))
    exprs.append(("cast same dtype", lambda tf: tf.cast(tf.constant([1., 2.]), tf.float32)))
    check(exprs)


# ---- nn ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_nn_ops(dtype):
    x = _gen(dtype, (3, 4), 1, "special" if dtype in FLOATS else "normal")
    img = _gen(dtype, (2, 6, 5, 3), 2)
    filt = _gen(dtype, (3, 2, 3, 2), 3)
    E = [
        ("softmax", lambda tf: tf.nn.softmax(x)),
        ("softmax axis 0", lambda tf: tf.nn.softmax(x, axis=0)),
        ("log_softmax", lambda tf: tf.nn.log_softmax(x)),
        ("softmax empty", lambda tf: tf.nn.softmax(_gen(dtype, (0, 3), 4))),
        ("relu", lambda tf: tf.nn.relu(x)),
        ("leaky_relu", lambda tf: tf.nn.leaky_relu(x)),
        ("bias_add", lambda tf: tf.nn.bias_add(x, _gen(dtype, (4,), 5))),
        ("conv2d SAME", lambda tf: tf.nn.conv2d(img, filt, [1, 1, 1, 1], "SAME")),
        ("conv2d VALID strides", lambda tf: tf.nn.conv2d(img, filt, [1, 2, 2, 1], "VALID")),
        ("conv2d empty batch", lambda tf: tf.nn.conv2d(_gen(dtype, (0, 6, 5, 3), 6), filt, 1, "SAME")),
        ("max_pool", lambda tf: tf.nn.max_pool(img, 2, 2, "SAME")),
        ("avg_pool", lambda tf: tf.nn.avg_pool(img, [1, 3, 2, 1], [1, 1, 2, 1], "VALID")),
        ("l2_loss", lambda tf: tf.nn.l2_loss(x)),
        ("l2_normalize", lambda tf: tf.nn.l2_normalize(x, 1)),
        ("moments", lambda tf: tf.nn.moments(tf.constant(x), [0])),
        ("sigmoid xent", lambda tf: tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.zeros_like(x), logits=x)),
    ]
    check([("%s (%s)" % (label, dtype), fn) for label, fn in E], rtol=1e-5 if dtype == "float32" else None)


# ---- gradients ------------------------------------------------------------------------------


def _grad(fn, *xs, seed=0):
    """fn's gradients at xs: d sum(fn(xs) * c)/d xs for a fixed random cotangent c (dense)."""
    def build(tf):
        ts = [tf.constant(x) for x in xs]
        y = fn(tf, *ts)
        c = np.random.RandomState(seed).randn(*[d for d in y.shape.as_list()]).astype(y.dtype.as_numpy_dtype)
        grads = tf.gradients(tf.reduce_sum(y * c), ts)
        return [tf.zeros_like(t) if g is None else tf.convert_to_tensor(g) for g, t in zip(grads, ts)]
    return build


def _pos(shape, seed):
    return _gen("float64", shape, seed, "positive")


def _val(shape, seed):
    return _gen("float64", shape, seed)


def test_gradients_elementwise():
    exprs = []
    for op in ["abs", "negative", "square", "sqrt", "rsqrt", "exp", "log", "log1p", "reciprocal", "sigmoid", "tanh",
               "nn.relu", "nn.relu6", "nn.elu", "nn.selu", "nn.softplus", "nn.softsign", "nn.leaky_relu", "identity",
               "sign", "floor", "round"]:
        x = _pos((3, 4), 1) if op in ("sqrt", "rsqrt", "log", "reciprocal") else _val((3, 4), 2) * 3
        exprs.append(("d %s" % op, _grad(lambda tf, t, op=op: _fn(tf, op)(t), x)))
    for op in ["add", "subtract", "multiply", "divide", "maximum", "minimum", "squared_difference", "pow",
               "truediv", "realdiv"]:
        for sa, sb in [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), ()), ((), (3, 4))]:
            a = _pos(sa, 3) + 0.5
            b = _pos(sb, 4)
            exprs.append(("d %s %s %s" % (op, sa, sb), _grad(lambda tf, x, y, op=op: _fn(tf, op)(x, y), a, b)))
    exprs.append(("d operators", _grad(lambda tf, x, y: (x * 2 + y) / (y + 1) - x ** 2, _val((3, 4), 5),
                                       _pos((3, 4), 6))))
    exprs.append(("d clip_by_value", _grad(lambda tf, x: tf.clip_by_value(x, -0.5, 0.5), _val((3, 4), 7))))
    exprs.append(("d cast", _grad(lambda tf, x: tf.cast(tf.cast(x, tf.float32), tf.float64) * 2, _val((3, 4), 8))))
    exprs.append(("d where", _grad(lambda tf, x, y: tf.where(x > 0, x * 3, y), _val((3, 4), 9), _val((3, 4), 10))))
    exprs.append(("d add_n", _grad(lambda tf, x, y: tf.add_n([x, y, x * y]), _val((3, 4), 9), _val((3, 4), 10))))
    check(exprs, rtol=1e-10, atol=1e-12)


def test_gradients_reductions_and_matmul():
    exprs = []
    x = _val((2, 3, 4), 1)
    for op in ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_logsumexp"]:
        for axis in [None, 0, -1, [0, 2], 1]:
            for keep in (False, True):
                exprs.append(("d %s(%r, %s)" % (op, axis, keep),
                              _grad(lambda tf, t, op=op, a=axis, k=keep: _fn(tf, op)(t, axis=a, keepdims=k), x)))
    for ta in (False, True):
        for tb in (False, True):
            a = _val((4, 3) if ta else (3, 4), 2)
            b = _val((5, 4) if tb else (4, 5), 3)
            exprs.append(("d matmul %s %s" % (ta, tb),
                          _grad(lambda tf, p, q, ta=ta, tb=tb: tf.matmul(p, q, transpose_a=ta, transpose_b=tb), a, b)))
    exprs.append(("d batch matmul", _grad(lambda tf, p, q: tf.matmul(p, q), _val((2, 3, 4), 4), _val((2, 4, 5), 5))))
    exprs.append(("d batch matmul broadcast", _grad(lambda tf, p, q: tf.matmul(p, q, transpose_b=True),
                                                    _val((2, 3, 4), 4), _val((1, 5, 4), 5))))
    check(exprs, rtol=1e-10, atol=1e-12)


def test_gradients_array_ops():
    x = _val((2, 3, 4), 1)
    m = _val((3, 4), 2)
    E = [
        ("reshape", _grad(lambda tf, t: tf.reshape(t, [6, 4]), x)),
        ("transpose", _grad(lambda tf, t: tf.transpose(t, [2, 0, 1]), x)),
        ("concat", _grad(lambda tf, a, b: tf.concat([a, b, a], 0), m, m * 2)),
        ("concat -1", _grad(lambda tf, a, b: tf.concat([a, b], -1), m, m[:, :2])),
        ("stack", _grad(lambda tf, a, b: tf.stack([a, b], axis=1), m, m * 3)),
        ("unstack", _grad(lambda tf, t: tf.unstack(t, axis=1)[1] * 2, x)),
        ("split", _grad(lambda tf, t: tf.split(t, [1, 3], axis=2)[1], x)),
        ("split num", _grad(lambda tf, t: tf.split(t, 2, axis=0)[0] * tf.split(t, 2, axis=0)[1], x)),
        ("slice", _grad(lambda tf, t: tf.slice(t, [0, 1, 1], [2, 2, 2]), x)),
        ("getitem", _grad(lambda tf, t: t[:, 1:, ::2], x)),
        ("getitem shrink", _grad(lambda tf, t: t[1, :, -1], x)),
        ("getitem negative step", _grad(lambda tf, t: t[::-1, 0], x)),
        ("pad", _grad(lambda tf, t: tf.pad(t, [[1, 0], [2, 3]]), m)),
        ("tile", _grad(lambda tf, t: tf.tile(t, [2, 3]), m)),
        ("gather", _grad(lambda tf, t: tf.gather(t, [2, 0, 2]), m)),
        ("gather axis", _grad(lambda tf, t: tf.gather(t, [[0, 3], [1, 1]], axis=2), x)),
        ("expand_dims", _grad(lambda tf, t: tf.expand_dims(t, 1), m)),
        ("squeeze", _grad(lambda tf, t: tf.squeeze(tf.reshape(t, [1, 3, 1, 4])), m)),
        ("broadcast_to", _grad(lambda tf, t: tf.broadcast_to(t, [2, 3, 4]), m)),
        ("one_hot times", _grad(lambda tf, t: tf.one_hot([0, 2, 1], 4, dtype=tf.float64) * t, m)),
        ("zeros_like", _grad(lambda tf, t: tf.zeros_like(t) + t * 2, m)),
        ("stop_gradient", _grad(lambda tf, t: tf.stop_gradient(t) * t, m)),
    ]
    check([("d " + label, fn) for label, fn in E], rtol=1e-10, atol=1e-12)


def test_gradients_nn():
    img = _val((2, 6, 5, 3), 1)
    filt = _val((3, 2, 3, 2), 2)
    logits = _val((4, 5), 3)
    probs = np.abs(_val((4, 5), 4))
    probs /= probs.sum(1, keepdims=True)
    E = [
        ("softmax", _grad(lambda tf, t: tf.nn.softmax(t), logits)),
        ("softmax axis 0", _grad(lambda tf, t: tf.nn.softmax(t, axis=0), logits)),
        ("log_softmax", _grad(lambda tf, t: tf.nn.log_softmax(t), logits)),
        ("bias_add", _grad(lambda tf, t, b: tf.nn.bias_add(t, b), img, _val((3,), 5))),
        ("conv2d SAME", _grad(lambda tf, t, f: tf.nn.conv2d(t, f, [1, 1, 1, 1], "SAME"), img, filt)),
        ("conv2d VALID strides", _grad(lambda tf, t, f: tf.nn.conv2d(t, f, [1, 2, 2, 1], "VALID"), img, filt)),
        ("max_pool", _grad(lambda tf, t: tf.nn.max_pool(t, 2, 2, "SAME"), img)),
        ("avg_pool", _grad(lambda tf, t: tf.nn.avg_pool(t, [1, 3, 2, 1], [1, 1, 2, 1], "VALID"), img)),
        ("l2_loss", _grad(lambda tf, t: tf.nn.l2_loss(t), logits)),
        ("l2_normalize", _grad(lambda tf, t: tf.nn.l2_normalize(t, 1), logits)),
        ("softmax xent", _grad(lambda tf, t, p: tf.nn.softmax_cross_entropy_with_logits_v2(labels=p, logits=t),
                               logits, probs)),
        ("softmax xent v1 (labels stopped)", _grad(
            lambda tf, t, p: tf.nn.softmax_cross_entropy_with_logits(labels=p, logits=t), logits, probs)),
        ("sparse xent", _grad(lambda tf, t: tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=[0, 4, 2, 1], logits=t), logits)),
        ("sigmoid xent", _grad(lambda tf, t, p: tf.nn.sigmoid_cross_entropy_with_logits(labels=p, logits=t),
                               logits, probs)),
        ("moments", _grad(lambda tf, t: tf.add_n(list(tf.nn.moments(t, [0]))), logits)),
        ("batch_normalization", _grad(lambda tf, t, s: tf.nn.batch_normalization(
            t, tf.reduce_mean(t, 0), tf.ones([5], tf.float64), None, s, 1e-3), logits, _val((5,), 6))),
        ("embedding_lookup", _grad(lambda tf, t: tf.nn.embedding_lookup(t, [[0, 2], [2, 1]]), logits)),
        ("embedding_lookup shards", _grad(lambda tf, a, b: tf.nn.embedding_lookup([a, b], [0, 3, 1, 2]),
                                          logits[:2], logits[2:])),
        ("xw_plus_b", _grad(lambda tf, t, w, b: tf.nn.xw_plus_b(t, w, b), logits, _val((5, 3), 7), _val((3,), 8))),
    ]
    check([("d " + label, fn) for label, fn in E], rtol=1e-9, atol=1e-11)
