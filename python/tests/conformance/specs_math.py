"""Differential specs: element-wise math, comparisons, logical ops, reductions, arg min/max, cast,
select, matmul and matrix ops, AddN, BroadcastGradientArgs, Bucketize, segment sums, Range.
(Format: see diffsuite's docstring.)"""
import numpy as np

from diffsuite import FLOATS, PAIRS, SHAPES, Case, Const, Spec, binary_cases, gen, unary_cases

SPECS = []


# ---- element-wise unary ----------------------------------------------------------------------

# op → (input argument name, input kinds for floats or None for the default set)
UNARY = {
    "Abs": None, "Neg": None, "Sign": None, "Square": None, "Floor": None, "Ceil": None, "Round": None,
    "Exp": None, "Sigmoid": None, "Tanh": None, "Reciprocal": None,
    "Sqrt": ["positive", "special"], "Rsqrt": ["positive", "special"], "Log": ["positive", "special"],
    "Log1p": ["unit", "positive", "special"],
}


def _unary(op, kinds):
    def cases(dtype):
        k = kinds if dtype in FLOATS else None
        if op in ("Sqrt", "Rsqrt", "Log", "Log1p") and dtype in FLOATS:
            k = kinds
        return unary_cases(lambda tf, x: getattr(tf.raw_ops, op)(x=x), dtype, kinds=k)
    return cases


for _op, _kinds in UNARY.items():
    SPECS.append(Spec(_op, _unary(_op, _kinds)))

SPECS.append(Spec("LogicalNot", lambda dt: unary_cases(lambda tf, x: tf.raw_ops.LogicalNot(x=x), "bool",
                                                       kinds=["normal"]), dtypes=["bool"]))

# ---- element-wise binary with broadcasting ---------------------------------------------------

BINARY = ["Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "FloorDiv", "FloorMod", "Pow", "Maximum", "Minimum",
          "SquaredDifference", "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"]


def _binary(op):
    def cases(dtype):
        fn = lambda tf, x, y: getattr(tf.raw_ops, op)(x=x, y=y)  # noqa: E731
        if dtype == "string":
            out = binary_cases(fn, dtype, kinds=["normal"])
            if op in ("Equal", "NotEqual"):
                out += binary_cases(lambda tf, x, y: getattr(tf.raw_ops, op)(x=x, y=y, incompatible_shape_error=False),
                                    dtype, kinds=["normal"], label="lenient ", pairs=[((3, 4), (3,)), ((3,), (3,))])
            return out
        if dtype in FLOATS:
            out = binary_cases(fn, dtype)
            if op == "Pow":
                out += binary_cases(fn, dtype, kinds=["positive"], label="positive base ")
            return out
        if op in ("Div", "FloorDiv", "FloorMod"):
            out = binary_cases(fn, dtype, kinds=["normal", "extreme"], second="positive")
            # Division by zero: TensorFlow's integer kernels fail the run.
            out.append(Case("by zero", fn, [np.array([1, 2], dtype), np.array([1, 0], dtype)]))
            return out
        if op == "Pow":
            out = []
            for sa, sb in PAIRS:
                x = gen(dtype, sa, "small", len(out))
                y = gen(dtype, sb, "small", len(out) + 7)
                out.append(Case("%s, %s small" % (sa, sb), fn, [x, y]))
            if dtype != "uint8":
                out.append(Case("negative exponent", fn, [np.array([2, 3], dtype), np.array([1, -1], dtype)]))
            return out
        out = binary_cases(fn, dtype)
        if op in ("Equal", "NotEqual"):  # the attr variant: shapes that do not broadcast give a scalar
            lenient = lambda tf, x, y: getattr(tf.raw_ops, op)(x=x, y=y, incompatible_shape_error=False)  # noqa: E731
            out += binary_cases(lenient, dtype, kinds=["normal"], label="lenient ",
                                pairs=[((3, 4), (3,)), ((2, 3), (0, 3)), ((3, 4), (4,)), ((), (2,))])
        return out
    return cases


for _op in BINARY:
    SPECS.append(Spec(_op, _binary(_op)))

for _op in ("LogicalAnd", "LogicalOr"):
    SPECS.append(Spec(_op, (lambda op: lambda dt: binary_cases(
        lambda tf, x, y: getattr(tf.raw_ops, op)(x=x, y=y), "bool", kinds=["normal"]))(_op), dtypes=["bool"]))

# ---- the NoNan/xlogy family, and the gradient ops of unary functions --------------------------

ZERO_PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((), (3,)), ((0, 4), (4,))]


def _no_nan(op):
    def cases(dtype):
        fn = lambda tf, x, y: getattr(tf.raw_ops, op)(x=x, y=y)  # noqa: E731
        out = binary_cases(fn, dtype)
        for sa, sb in ZERO_PAIRS:  # zeros among the second operand (and the first)
            x = gen(dtype, sa, "special", len(out))
            y = gen(dtype, sb, "normal", len(out) + 3)
            y.reshape(-1)[::2] = 0
            out.append(Case("%s, %s zeros" % (sa, sb), fn, [x, y]))
            out.append(Case("%s, %s zeros swapped" % (sa, sb), fn, [y.copy(), gen(dtype, sa, "normal", 9)]
                            if sa == sb else [x, y]))
        return out
    return cases


for _op in ("DivNoNan", "MulNoNan", "Xdivy", "Xlogy"):
    SPECS.append(Spec(_op, _no_nan(_op)))

# op → input kind of y (the forward output) that keeps the derivative finite
UNARY_GRAD = {"TanhGrad": "unit", "SigmoidGrad": "unit", "SqrtGrad": "positive", "RsqrtGrad": "positive",
              "ReciprocalGrad": "normal"}


def _unary_grad(op, kind):
    def cases(dtype):
        fn = lambda tf, y, dy: getattr(tf.raw_ops, op)(y=y, dy=dy)  # noqa: E731
        out = []
        for sname, shape in SHAPES.items():
            for k in (kind, "special"):
                out.append(Case("%s %s" % (sname, k), fn, [gen(dtype, shape, k, len(out)),
                                                           gen(dtype, shape, "normal", len(out) + 5)]))
        out.append(Case("shapes differ", fn, [gen(dtype, (3,)), gen(dtype, (4,))]))
        return out
    return cases


for _op, _kind in UNARY_GRAD.items():
    SPECS.append(Spec(_op, _unary_grad(_op, _kind)))

# ---- reductions ------------------------------------------------------------------------------

AXES = [0, 1, -1, 2, -3, [0, 2], [-1, 0], [], [0, 1, 2], [1, -2], [3], [-4]]


def _reduce(op):
    def fn(tf, x, a, keep=False):
        return getattr(tf.raw_ops, op)(input=x, axis=a, keep_dims=keep)

    def cases(dtype):
        out = []
        kinds = ["normal", "special"] if dtype in FLOATS else ["normal", "extreme"]
        for kind in kinds:
            x = gen(dtype, (2, 3, 4), kind, len(out))
            for axis in AXES:
                for keep in (False, True):
                    out.append(Case("rank3 axis=%s keep=%s %s" % (axis, keep, kind),
                                    lambda tf, x, a, keep=keep: fn(tf, x, a, keep), [x, Const(axis, np.int32)]))
        for axis in (0, 1, [0, 1], []):
            out.append(Case("empty axis=%s" % axis, fn, [gen(dtype, (0, 4)), Const(axis, np.int64)]))
        out.append(Case("scalar axis=[]", fn, [gen(dtype, ()), Const([], np.int32)]))
        out.append(Case("scalar axis=0", fn, [gen(dtype, ()), Const(0, np.int32)]))
        out.append(Case("vector axis=0 int64", fn, [gen(dtype, (5,)), Const(0, np.int64)]))
        # The axes fed: the shape function cannot see them.
        out.append(Case("fed axis [1, 2]", fn, [gen(dtype, (2, 3, 4)), np.array([1, 2], np.int32)]))
        out.append(Case("fed axis -1 keep", lambda tf, x, a: fn(tf, x, a, True),
                        [gen(dtype, (2, 3, 4)), np.array(-1, np.int64)]))
        out.append(Case("fed axis duplicate", fn, [gen(dtype, (2, 3, 4)), np.array([1, 1], np.int32)]))
        out.append(Case("fed axis out of range", fn, [gen(dtype, (2, 3, 4)), np.array([3], np.int32)]))
        return out
    return cases


for _op in ("Sum", "Mean", "Prod", "Max", "Min"):
    SPECS.append(Spec(_op, _reduce(_op)))


def _bool_reduce(op):
    def fn(tf, x, a, keep=False):
        return getattr(tf.raw_ops, op)(input=x, axis=a, keep_dims=keep)

    def cases(dtype):
        out = []
        for density in (0.1, 0.5, 0.9):
            x = np.random.RandomState(len(out)).rand(2, 3, 4) < density
            for axis in AXES:
                for keep in (False, True):
                    out.append(Case("rank3 p=%s axis=%s keep=%s" % (density, axis, keep),
                                    lambda tf, x, a, keep=keep: fn(tf, x, a, keep), [x, Const(axis, np.int32)]))
        for axis in (0, 1, [0, 1], []):
            out.append(Case("empty axis=%s" % axis, fn, [np.zeros((0, 4), bool), Const(axis, np.int64)]))
        out.append(Case("scalar", fn, [np.array(True), Const([], np.int32)]))
        out.append(Case("fed axis duplicate", fn, [gen("bool", (2, 3, 4)), np.array([1, 1], np.int32)]))
        out.append(Case("fed axis", fn, [gen("bool", (2, 3, 4)), np.array([-1, 0], np.int64)]))
        return out
    return cases


for _op in ("All", "Any"):
    SPECS.append(Spec(_op, _bool_reduce(_op), dtypes=["bool"]))


def _argminmax(op):
    def cases(dtype):
        out = []
        kinds = ["normal", "special"] if dtype in FLOATS else ["normal", "extreme"]
        for kind in kinds:
            x = gen(dtype, (2, 3, 4), kind, len(out))
            for axis in (0, 1, 2, -1, -3, 3, -4):
                for ot in (np.int32, np.int64):
                    out.append(Case("rank3 axis=%d %s %s" % (axis, np.dtype(ot).name, kind),
                                    lambda tf, x, a, ot=ot: getattr(tf.raw_ops, op)(
                                        input=x, dimension=a, output_type=tf.as_dtype(ot)),
                                    [x, Const(axis, np.int32)]))
        f = lambda tf, x, a: getattr(tf.raw_ops, op)(input=x, dimension=a)  # noqa: E731
        ties = np.array([[1, 1, 0], [2, 3, 3]]).astype(dtype)
        out.append(Case("ties", f, [ties, Const(1, np.int64)]))
        out.append(Case("vector", f, [gen(dtype, (5,)), Const(0, np.int32)]))
        out.append(Case("empty reduced dim", f, [gen(dtype, (3, 0)), Const(1, np.int32)]))
        out.append(Case("empty other dim", f, [gen(dtype, (0, 3)), Const(1, np.int32)]))
        out.append(Case("fed axis", f, [gen(dtype, (3, 4)), np.array(-1, np.int32)]))
        out.append(Case("fed axis out of range", f, [gen(dtype, (3, 4)), np.array(2, np.int32)]))
        return out
    return cases


SPECS.append(Spec("ArgMax", _argminmax("ArgMax")))
SPECS.append(Spec("ArgMin", _argminmax("ArgMin")))

# ---- cast, select ----------------------------------------------------------------------------

CAST_TO = ["float32", "float64", "int32", "uint8", "int64", "bool"]


def _cast(dtype):
    out = []
    kinds = ["normal", "extreme"] + (["special"] if dtype in FLOATS else [])
    for dst in CAST_TO:
        for kind in kinds:
            x = gen(dtype, (3, 4), kind, len(out))
            if dtype in FLOATS and dst not in FLOATS and dst != "bool":
                if kind != "normal":
                    continue  # out of range: the "out of range" cases below
                if dst == "uint8":
                    x = np.abs(x)
            out.append(Case("to %s %s" % (dst, kind), lambda tf, x, d=dst: tf.raw_ops.Cast(x=x, DstT=tf.as_dtype(d)),
                            [x]))
        out.append(Case("to %s empty" % dst, lambda tf, x, d=dst: tf.raw_ops.Cast(x=x, DstT=tf.as_dtype(d)),
                        [gen(dtype, (0, 2))]))
        out.append(Case("to %s scalar truncate" % dst,
                        lambda tf, x, d=dst: tf.raw_ops.Cast(x=x, DstT=tf.as_dtype(d), Truncate=True),
                        [gen(dtype, ())]))
    if dtype in FLOATS:
        x = np.array([-2.7, -1.5, -0.5, 0.5, 1.5, 2.5, 200.7, 255.9, -0.0], dtype)
        for dst in ("int32", "int64", "uint8"):
            out.append(Case("fractions to %s" % dst, lambda tf, x, d=dst: tf.raw_ops.Cast(x=x, DstT=tf.as_dtype(d)),
                            [np.abs(x) if dst == "uint8" else x]))
            bad = np.array([-1.5, 300.0, -300.0, 1e10, -1e10, np.inf, -np.inf, np.nan], dtype)
            out.append(Case("out of range to %s" % dst, lambda tf, x, d=dst: tf.raw_ops.Cast(x=x, DstT=tf.as_dtype(d)),
                            [bad]))
    return out


SPECS.append(Spec("Cast", _cast, type_attr="SrcT"))


def _select(op):
    def cases(dtype):
        if op == "Select":
            shapes = [((3, 4), (3, 4)), ((3,), (3, 4)), ((), (3, 4)), ((), ()), ((0,), (0, 4)), ((2,), (2, 3, 4)),
                      ((4,), (3, 4)), ((2, 4), (3, 4))]
        else:
            shapes = [((3, 4), (3, 4)), ((4,), (3, 4)), ((), (3, 4)), ((3, 1), (1, 4)), ((), ()), ((0, 4), (4,)),
                      ((3,), (3, 4)), ((2, 3, 4), (3, 1))]
        out = []
        for cs, xs in shapes:
            c = gen("bool", cs, seed=len(out))
            x = gen(dtype, xs, "normal", len(out))
            y = gen(dtype, xs, "normal", len(out) + 50)
            if op == "Select":
                fn = lambda tf, c, x, y: tf.raw_ops.Select(condition=c, x=x, y=y)  # noqa: E731
            else:
                fn = lambda tf, c, x, y: tf.raw_ops.SelectV2(condition=c, t=x, e=y)  # noqa: E731
            out.append(Case("cond %s, %s" % (cs, xs), fn, [c, x, y]))
        if op == "SelectV2":
            out.append(Case("all broadcast", lambda tf, c, x, y: tf.raw_ops.SelectV2(condition=c, t=x, e=y),
                            [gen("bool", (3, 1)), gen(dtype, (1, 4)), gen(dtype, (2, 1, 1))]))
        return out
    return cases


SPECS.append(Spec("Select", _select("Select")))
SPECS.append(Spec("SelectV2", _select("SelectV2")))

# ---- matmul, matrix ops ----------------------------------------------------------------------

MATMUL_TOL = {"float32": (1e-4, 1e-5)}


def _matmul(dtype):
    out = []
    k = "small" if dtype not in FLOATS else "normal"
    for (sa, sb) in [((2, 3), (3, 4)), ((1, 1), (1, 1)), ((0, 3), (3, 4)), ((2, 0), (0, 4)), ((5, 7), (7, 6)),
                     ((2, 3), (4, 5))]:
        for ta in (False, True):
            for tb in (False, True):
                a = gen(dtype, sa[::-1] if ta else sa, k, len(out))
                b = gen(dtype, sb[::-1] if tb else sb, k, len(out) + 9)
                out.append(Case("%s x %s ta=%s tb=%s" % (sa, sb, ta, tb),
                                lambda tf, a, b, ta=ta, tb=tb: tf.raw_ops.MatMul(a=a, b=b, transpose_a=ta,
                                                                                 transpose_b=tb), [a, b]))
    if dtype in FLOATS:
        out.append(Case("special", lambda tf, a, b: tf.raw_ops.MatMul(a=a, b=b),
                        [gen(dtype, (3, 4), "special"), gen(dtype, (4, 2))]))
    return out


SPECS.append(Spec("MatMul", _matmul, tol=MATMUL_TOL))


def _batch_matmul(dtype):
    out = []
    k = "small" if dtype not in FLOATS else "normal"
    for (sa, sb) in [((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((3, 4), (2, 4, 5)), ((1, 3, 4), (3, 4, 2)),
                     ((0, 3, 4), (4, 5)), ((2, 3, 0), (2, 0, 5)), ((2, 3, 4), (3, 4, 5)), ((2, 3, 4), (2, 5, 6)),
                     ((3, 4), (4, 2))]:
        for ax in (False, True):
            for ay in (False, True):
                a = gen(dtype, sa[:-2] + sa[-2:][::-1] if ax else sa, k, len(out))
                b = gen(dtype, sb[:-2] + sb[-2:][::-1] if ay else sb, k, len(out) + 9)
                out.append(Case("%s x %s adj_x=%s adj_y=%s" % (sa, sb, ax, ay),
                                lambda tf, a, b, ax=ax, ay=ay: tf.raw_ops.BatchMatMulV2(x=a, y=b, adj_x=ax, adj_y=ay),
                                [a, b]))
    return out


SPECS.append(Spec("BatchMatMulV2", _batch_matmul, tol=MATMUL_TOL))

MATRIX_TOL = {"float32": (1e-4, 1e-4), "float64": (1e-9, 1e-10)}


def _well_conditioned(dtype, shape, seed):
    x = gen("float64", shape, "normal", seed) * 0.3
    return (x + np.eye(shape[-1]) * 2).astype(dtype)


def _determinant(dtype):
    f = lambda tf, x: tf.raw_ops.MatrixDeterminant(input=x)  # noqa: E731
    out = [Case(str(s), f, [_well_conditioned(dtype, s, i)]) for i, s in enumerate(
        [(1, 1), (3, 3), (2, 3, 3), (2, 2, 4, 4), (0, 3, 3), (0, 0)])]
    out.append(Case("random", f, [gen(dtype, (4, 4), "normal", 3)]))
    out.append(Case("singular", f, [np.array([[1, 2], [2, 4]], dtype)], grad=[]))
    out.append(Case("not square", f, [gen(dtype, (2, 3))]))
    out.append(Case("vector", f, [gen(dtype, (3,))]))
    out.append(Case("special", f, [gen(dtype, (3, 3), "special")], grad=[]))
    return out


def _inverse(dtype):
    out = []
    for adj in (False, True):
        f = lambda tf, x, adj=adj: tf.raw_ops.MatrixInverse(input=x, adjoint=adj)  # noqa: E731
        out += [Case("%s adjoint=%s" % (s, adj), f, [_well_conditioned(dtype, s, i)]) for i, s in enumerate(
            [(1, 1), (3, 3), (2, 3, 3), (2, 2, 4, 4), (0, 3, 3), (0, 0)])]
        out.append(Case("singular adjoint=%s" % adj, f, [np.array([[1, 2], [2, 4]], dtype)]))
        out.append(Case("not square adjoint=%s" % adj, f, [gen(dtype, (2, 3))]))
    return out


SPECS.append(Spec("MatrixDeterminant", _determinant, tol=MATRIX_TOL, grad_tol=MATRIX_TOL))
SPECS.append(Spec("MatrixInverse", _inverse, tol=MATRIX_TOL, grad_tol=MATRIX_TOL))

# ---- AddN, BroadcastGradientArgs, Bucketize, UnsortedSegmentSum, Range -----------------------


def _add_n(dtype):
    out = []
    for n in (1, 2, 3, 5):
        for sname, shape in SHAPES.items():
            xs = [gen(dtype, shape, "normal", 10 * n + i) for i in range(n)]
            out.append(Case("n=%d %s" % (n, sname), lambda tf, *xs: tf.raw_ops.AddN(inputs=list(xs)), xs))
    if dtype in FLOATS:
        out.append(Case("special", lambda tf, a, b: tf.raw_ops.AddN(inputs=[a, b]),
                        [gen(dtype, (3, 3), "special", 1), gen(dtype, (3, 3), "special", 2)]))
    else:
        out.append(Case("extreme", lambda tf, a, b: tf.raw_ops.AddN(inputs=[a, b]),
                        [gen(dtype, (3, 3), "extreme", 1), gen(dtype, (3, 3), "extreme", 2)]))
    out.append(Case("shapes differ", lambda tf, a, b: tf.raw_ops.AddN(inputs=[a, b]),
                    [gen(dtype, (3,)), gen(dtype, (4,))]))
    return out


SPECS.append(Spec("AddN", _add_n))


def _bga(dtype):
    out = []
    for sa, sb in PAIRS + [((2, 3), (4,)), ((5, 1, 3), (1, 4, 1)), ((1, 1), ()), ((2, 1), (2, 0))]:
        f = lambda tf, a, b: tf.raw_ops.BroadcastGradientArgs(s0=a, s1=b)  # noqa: E731
        out.append(Case("%s, %s" % (sa, sb), f, [np.array(sa, dtype).reshape(-1), np.array(sb, dtype).reshape(-1)]))
    return out


SPECS.append(Spec("BroadcastGradientArgs", _bga))


def _bucketize(dtype):
    out = []
    f = lambda tf, x, b: tf.raw_ops.Bucketize(input=x, boundaries=b)  # noqa: E731
    for bounds in ([0.0], [-1.0, 0.0, 1.5, 3.0], [], [1.0, 1.0, 2.0]):
        for sname, shape in SHAPES.items():
            x = gen(dtype, shape, "normal", len(out))
            out.append(Case("%s bounds=%s" % (sname, bounds), lambda tf, x, b=bounds: f(tf, x, b), [x]))
    if dtype in FLOATS:
        out.append(Case("special", lambda tf, x: f(tf, x, [0.0, 1.0]), [gen(dtype, (9,), "special")]))
    else:
        out.append(Case("extreme", lambda tf, x: f(tf, x, [0.0, 1.0]), [gen(dtype, (9,), "extreme")]))
    out.append(Case("unsorted bounds", lambda tf, x: f(tf, x, [2.0, 1.0]), [gen(dtype, (3,))]))
    return out


SPECS.append(Spec("Bucketize", _bucketize))


def _segment_sum(dtype):
    out = []
    f = lambda tf, d, i, n: tf.raw_ops.UnsortedSegmentSum(data=d, segment_ids=i, num_segments=n)  # noqa: E731
    for ids, dshape, n in [([0, 1, 0, 2], (4,), 3), ([0, 1, 0, 2], (4, 3), 4), ([[0, 1], [1, 0]], (2, 2, 3), 2),
                           ([2, -1, 0], (3, 2), 3), ([], (0, 3), 2), ([0, 0], (2,), 0), ([0, 3], (2,), 3),
                           ([0, 1], (3,), 2), ([1, 1, 1], (3, 2), 1)]:
        for it in (np.int32, np.int64):
            d = gen(dtype, dshape, "normal", len(out))
            out.append(Case("ids=%s data%s n=%d %s" % (ids, dshape, n, np.dtype(it).name), f,
                            [d, np.array(ids, it), Const(n, np.int32)]))
    out.append(Case("fed num_segments", f, [gen(dtype, (4,)), np.array([0, 1, 1, 0], np.int32),
                                            np.array(3, np.int64)]))
    return out


SPECS.append(Spec("UnsortedSegmentSum", _segment_sum))


def _range(dtype):
    out = []
    f = lambda tf, a, b, c: tf.raw_ops.Range(start=a, limit=b, delta=c)  # noqa: E731
    args = [(0, 10, 3), (10, 0, -2), (0, 0, 1), (5, 1, 1), (0, 5, 0), (-3, 4, 2), (0, 10, -1)]
    if dtype in FLOATS:
        args += [(0.0, 1.0, 0.3), (1.5, -1.0, -0.5), (0.0, 1.0, 0.1)]
    for a, b, c in args:
        out.append(Case("%s %s %s fed" % (a, b, c), f, [np.array(v, dtype) for v in (a, b, c)]))
        out.append(Case("%s %s %s const" % (a, b, c), f, [Const(v, dtype) for v in (a, b, c)]))
    return out


SPECS.append(Spec("Range", _range, type_attr="Tidx", grad=False,
                  note="no gradient in TensorFlow (its start/limit/delta are not differentiated)"))

# Every spec here also runs 6 of its cases with inputs of unknown shape.
for _s in SPECS:
    _s.dynamic = 6

EXCLUDED = {}

# Intended differences: (op, regex over "<dtype> <case label>") → why dflow differs on purpose.
KNOWN = {
    ("Cast", r"out of range to"): "a float outside the integer type's range (or NaN): dflow saturates (NaN gives 0); "
                                  "C++ leaves the conversion undefined and TensorFlow's result is whatever the CPU "
                                  "gives (x86: the lowest integer, or the low byte of a 32-bit conversion)",
    ("Prod", r"special.* gradient\[0\]"): "Prod's gradient on inf/NaN or overflowing inputs: dflow divides the "
                                         "product of the nonzero elements by each element (zeros counted exactly); "
                                         "TensorFlow multiplies exclusive cumulative products (dflow has no Cumprod), "
                                         "so where an element is infinite or the product overflows the two differ "
                                         "(inf/inf gives NaN). Finite inputs agree",
    ("Round", r"^int"): "TensorFlow 2.21's Round kernel returns zeros for integer tensors (its tf.round returns "
                        "an integer input unchanged without running the kernel); dflow's kernel returns the input",
}
