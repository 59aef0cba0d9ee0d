"""Differential specs: array ops — shapes, reshape/transpose, concat/split, pack/unpack, gather,
slices (and StridedSliceGrad), pad, tile, fill, zeros/ones_like, one_hot, partition/stitch,
broadcast_to, identity and placeholders. (Format: see diffsuite's docstring.)"""
import numpy as np

from diffsuite import FLOATS, SHAPES, Case, Const, Spec, gen

SPECS = []
ALL = ["float32", "float64", "int32", "int64", "uint8", "bool", "string"]


def _x(dtype, shape, seed=0):
    return gen(dtype, shape, "normal", seed)


# ---- shape ops -------------------------------------------------------------------------------

def _shape_op(op, out_types):
    def cases(dtype):
        out = []
        for sname, shape in SHAPES.items():
            for ot in out_types:
                kw = {"out_type": ot} if ot else {}
                out.append(Case("%s %s" % (sname, ot or ""), lambda tf, x, kw=kw: getattr(tf.raw_ops, op)(
                    input=x, **{k: tf.as_dtype(v) for k, v in kw.items()}), [_x(dtype, shape, len(out))]))
        return out
    return cases


SPECS.append(Spec("Shape", _shape_op("Shape", ["int32", "int64"])))
SPECS.append(Spec("Size", _shape_op("Size", ["int32", "int64"])))
SPECS.append(Spec("Rank", _shape_op("Rank", [None])))


def _like(op):
    def cases(dtype):
        return [Case(sname, lambda tf, x: getattr(tf.raw_ops, op)(x=x), [_x(dtype, shape, i)])
                for i, (sname, shape) in enumerate(SHAPES.items())]
    return cases


SPECS.append(Spec("ZerosLike", _like("ZerosLike")))
SPECS.append(Spec("OnesLike", _like("OnesLike")))


def _identity(op):
    def cases(dtype):
        return [Case(sname, lambda tf, x: getattr(tf.raw_ops, op)(input=x), [_x(dtype, shape, i)])
                for i, (sname, shape) in enumerate(SHAPES.items())]
    return cases


SPECS.append(Spec("Identity", _identity("Identity")))
SPECS.append(Spec("StopGradient", _identity("StopGradient")))


def _placeholder_with_default(dtype):
    out = []
    for sname, shape in SHAPES.items():
        d = _x(dtype, shape, len(out))
        out.append(Case(sname + " default", lambda tf, d=d: tf.raw_ops.PlaceholderWithDefault(
            input=tf.constant(d), shape=d.shape), []))
        # Fed through a Placeholder: the input tensor is the default, the output is what runs.
        out.append(Case(sname + " fed default", lambda tf, x: tf.raw_ops.PlaceholderWithDefault(
            input=x, shape=[None] * len(x.shape)), [d]))
    return out


SPECS.append(Spec("PlaceholderWithDefault", _placeholder_with_default, type_attr="dtype"))


def _placeholder(dtype):
    # Every case feeds Placeholders; here they are fetched directly.
    return [Case(sname, lambda tf, x: x, [_x(dtype, shape, i)])
            for i, (sname, shape) in enumerate(SHAPES.items())]


SPECS.append(Spec("Placeholder", _placeholder, type_attr="dtype", grad=False,
                  note="fed in every case of every op; here fetched directly"))


def _const(dtype):
    return [Case(sname, lambda tf, x=_x(dtype, shape, i): tf.constant(x), [])
            for i, (sname, shape) in enumerate(SHAPES.items())] + \
           [Case("splat", lambda tf: tf.constant(_x(dtype, (), 3), shape=[2, 3]), [])]


SPECS.append(Spec("Const", _const, type_attr="dtype"))


def _noop(dtype):
    return [Case("no-op", lambda tf: tf.raw_ops.NoOp(), [])]


SPECS.append(Spec("NoOp", _noop, dtypes=[None]))

def _identity_n(dtype):
    out = []
    for shapes in ([(3,)], [(2, 3), ()], [(0, 2), (4,), (1, 1)]):
        xs = [_x(dtype, s, len(out) + i) for i, s in enumerate(shapes)]
        out.append(Case(str(shapes), lambda tf, *xs: tf.raw_ops.IdentityN(input=list(xs)), xs))
    mixed = [gen("float32", (2,)), gen("int64", (3,)), gen("string", ())]
    out.append(Case("mixed dtypes", lambda tf, *xs: tf.raw_ops.IdentityN(input=list(xs)), mixed))
    return out


SPECS.append(Spec("IdentityN", _identity_n, dtypes=ALL))


def _shape_n(dtype):
    out = []
    for shapes in ([(3,)], [(2, 3), (), (0, 4)], [(1, 1, 1), (5,)]):
        for ot in ("int32", "int64"):
            xs = [_x(dtype, s, len(out) + i) for i, s in enumerate(shapes)]
            out.append(Case("%s %s" % (shapes, ot), lambda tf, *xs, ot=ot: tf.raw_ops.ShapeN(
                input=list(xs), out_type=tf.as_dtype(ot)), xs))
    return out


SPECS.append(Spec("ShapeN", _shape_n))

# ---- reshape, expand/squeeze, transpose ------------------------------------------------------


def _reshape(dtype):
    out = []
    f = lambda tf, x, s: tf.raw_ops.Reshape(tensor=x, shape=s)  # noqa: E731
    for shape, to in [((2, 3, 4), [4, 6]), ((2, 3, 4), [-1]), ((2, 3, 4), [-1, 4]), ((2, 3, 4), [2, -1, 2]),
                      ((), [1, 1]), ((1,), []), ((0, 4), [-1, 2]), ((0, 4), [4, 0]), ((2, 3, 4), [5, -1]),
                      ((2, 3, 4), [-1, -1]), ((2, 3), [7]), ((0, 4), [0, -1])]:
        for it in (np.int32, np.int64):
            out.append(Case("%s to %s const %s" % (shape, to, np.dtype(it).name), f,
                            [_x(dtype, shape, len(out)), Const(to, it)]))
        out.append(Case("%s to %s fed" % (shape, to), f, [_x(dtype, shape, len(out)), np.array(to, np.int32)]))
    return out


SPECS.append(Spec("Reshape", _reshape))


def _expand_dims(dtype):
    out = []
    f = lambda tf, x, a: tf.raw_ops.ExpandDims(input=x, axis=a)  # noqa: E731
    for shape, axes in [((), [0, -1, 1, -2]), ((3,), [0, 1, -1, -2, 2, -3]), ((2, 3), [0, 2, -1, -3, 3]),
                        ((0, 4), [1])]:
        for a in axes:
            out.append(Case("%s axis=%d const" % (shape, a), f, [_x(dtype, shape, len(out)), Const(a, np.int32)]))
            out.append(Case("%s axis=%d fed" % (shape, a), f, [_x(dtype, shape, len(out)), np.array(a, np.int64)]))
    out.append(Case("axis vector of one", f, [_x(dtype, (3,)), Const([1], np.int32)]))
    return out


SPECS.append(Spec("ExpandDims", _expand_dims))


def _squeeze(dtype):
    out = []
    for shape, dims in [((1, 3, 1), []), ((1, 3, 1), [0]), ((1, 3, 1), [-1]), ((1, 3, 1), [0, 2]),
                        ((1, 3, 1), [1]), ((1, 1), []), ((1,), []), ((0, 1), [1]), ((1, 3, 1), [3]),
                        ((2, 1, 1, 3), [-2, 1])]:
        out.append(Case("%s dims=%s" % (shape, dims), lambda tf, x, d=dims: tf.raw_ops.Squeeze(
            input=x, axis=d), [_x(dtype, shape, len(out))]))
    return out


SPECS.append(Spec("Squeeze", _squeeze))


def _transpose(dtype):
    out = []
    f = lambda tf, x, p: tf.raw_ops.Transpose(x=x, perm=p)  # noqa: E731
    for shape, perm in [((2, 3), [1, 0]), ((2, 3), [0, 1]), ((2, 3, 4), [2, 0, 1]), ((2, 3, 4), [1, 2, 0]),
                        ((2, 3, 4, 5), [3, 1, 0, 2]), ((), []), ((0, 3), [1, 0]), ((5,), [0]),
                        ((2, 3), [0, 0]), ((2, 3), [0, 2]), ((2, 3), [1, 0, 2]), ((2, 3), [-1, 0])]:
        for it in (np.int32, np.int64):
            out.append(Case("%s perm=%s %s" % (shape, perm, np.dtype(it).name), f,
                            [_x(dtype, shape, len(out)), Const(perm, it)]))
        out.append(Case("%s perm=%s fed" % (shape, perm), f, [_x(dtype, shape, len(out)), np.array(perm, np.int32)]))
    return out


SPECS.append(Spec("Transpose", _transpose))


def _invert_permutation(dtype):
    f = lambda tf, x: tf.raw_ops.InvertPermutation(x=x)  # noqa: E731
    return [Case(str(p), f, [np.array(p, dtype)]) for p in
            ([2, 0, 1], [0], [], [3, 1, 0, 2], [0, 0], [1, 2], [-1, 0])]


SPECS.append(Spec("InvertPermutation", _invert_permutation))

# ---- concat, split, pack, unpack -------------------------------------------------------------


def _concat(dtype):
    out = []
    f = lambda tf, a, *xs: tf.raw_ops.ConcatV2(values=list(xs), axis=a)  # noqa: E731
    for shapes, axis in [([(2, 3), (4, 3)], 0), ([(2, 3), (2, 1), (2, 0)], 1), ([(2, 3), (2, 5)], -1),
                         ([(2, 3, 4), (2, 1, 4)], -2), ([(3,), (0,), (2,)], 0), ([(2, 3), (2, 3)], -2),
                         ([(0, 3), (0, 3)], 0), ([(2, 3), (3, 3)], 1), ([(2, 3), (2, 3)], 2), ([(2, 3), (2, 3)], -3),
                         ([(2,), (2, 1)], 0), ([(), ()], 0), ([(4, 1)], 0)]:
        xs = [_x(dtype, s, len(out) + i) for i, s in enumerate(shapes)]
        out.append(Case("%s axis=%d" % (shapes, axis), f, [Const(axis, np.int32)] + xs))
        out.append(Case("%s axis=%d fed int64" % (shapes, axis), f, [np.array(axis, np.int64)] + xs))
    return out


SPECS.append(Spec("ConcatV2", _concat))


def _concat_offset(dtype):
    f = lambda tf, d, *s: tf.raw_ops.ConcatOffset(concat_dim=d, shape=list(s))  # noqa: E731
    out = []
    for shapes, d in [([[2, 3], [2, 5], [2, 0]], 1), ([[2, 3], [4, 3]], 0), ([[2, 3, 4], [2, 1, 4]], -2),
                      ([[2, 3], [3, 3]], 1), ([[2, 3], [2, 3]], 2)]:
        out.append(Case("%s dim=%d" % (shapes, d), f, [Const(d, np.int32)] + [np.array(s, dtype) for s in shapes]))
    return out


SPECS.append(Spec("ConcatOffset", _concat_offset, type_attr="shape_type",
                  dtypes=None))


def _split(dtype):
    out = []
    f = lambda tf, a, x, n: tf.raw_ops.Split(axis=a, value=x, num_split=n)  # noqa: E731
    for shape, axis, n in [((4, 3), 0, 2), ((4, 6), 1, 3), ((4, 6), -1, 2), ((2, 3, 4), -3, 2), ((6,), 0, 1),
                           ((0, 4), 1, 2), ((0, 4), 0, 2), ((4, 3), 1, 2), ((4, 3), 2, 2), ((4,), 0, 4)]:
        out.append(Case("%s axis=%d n=%d" % (shape, axis, n), lambda tf, a, x, n=n: f(tf, a, x, n),
                        [Const(axis, np.int32), _x(dtype, shape, len(out))]))
        out.append(Case("%s axis=%d n=%d fed axis" % (shape, axis, n), lambda tf, a, x, n=n: f(tf, a, x, n),
                        [np.array(axis, np.int32), _x(dtype, shape, len(out))]))
    return out


SPECS.append(Spec("Split", _split))


def _split_v(dtype):
    out = []
    f = lambda tf, x, s, a, n: tf.raw_ops.SplitV(value=x, size_splits=s, axis=a, num_split=n)  # noqa: E731
    for shape, sizes, axis in [((5, 3), [2, 3], 0), ((4, 6), [1, -1, 2], 1), ((4, 6), [6], -1), ((4, 6), [0, 6], 1),
                               ((4, 6), [2, 2], 1), ((4, 6), [-1, -1], 1), ((4, 6), [7, -1], 1), ((0, 3), [0, 0], 0),
                               ((4, 6), [3, 3], 2)]:
        for st in (np.int32, np.int64):
            out.append(Case("%s sizes=%s axis=%d %s" % (shape, sizes, axis, np.dtype(st).name),
                            lambda tf, x, s, a, n=len(sizes): f(tf, x, s, a, n),
                            [_x(dtype, shape, len(out)), Const(sizes, st), Const(axis, np.int32)]))
        out.append(Case("%s sizes=%s axis=%d fed" % (shape, sizes, axis),
                        lambda tf, x, s, a, n=len(sizes): f(tf, x, s, a, n),
                        [_x(dtype, shape, len(out)), np.array(sizes, np.int32), np.array(axis, np.int32)]))
    return out


SPECS.append(Spec("SplitV", _split_v))


def _pack(dtype):
    out = []
    for shapes, axis in [([(2, 3)] * 3, 0), ([(2, 3)] * 2, 1), ([(2, 3)] * 2, 2), ([(2, 3)] * 2, -1),
                         ([(2, 3)] * 2, -3), ([()] * 4, 0), ([(0, 2)] * 2, 1), ([(2,)], 0), ([(2, 3), (3, 2)], 0),
                         ([(2, 3)] * 2, 3), ([(2, 3)] * 2, -4)]:
        xs = [_x(dtype, s, len(out) + i) for i, s in enumerate(shapes)]
        out.append(Case("%s axis=%d" % (shapes, axis), lambda tf, *xs, a=axis: tf.raw_ops.Pack(values=list(xs), axis=a),
                        xs))
    return out


SPECS.append(Spec("Pack", _pack))


def _unpack(dtype):
    out = []
    for shape, axis in [((3, 2), 0), ((3, 2), 1), ((3, 2), -1), ((2, 3, 4), -2), ((4,), 0), ((0, 2), 1),
                        ((2, 0), 0), ((3, 2), 2), ((3, 2), -3)]:
        n = shape[axis] if -len(shape) <= axis < len(shape) else 2
        out.append(Case("%s axis=%d" % (shape, axis), lambda tf, x, a=axis, n=n: tf.raw_ops.Unpack(value=x, num=n, axis=a),
                        [_x(dtype, shape, len(out))]))
    out.append(Case("num differs", lambda tf, x: tf.raw_ops.Unpack(value=x, num=2, axis=0), [_x(dtype, (3, 2))]))
    return out


SPECS.append(Spec("Unpack", _unpack))

# ---- gather, partition, stitch, one_hot ------------------------------------------------------


def _gather(dtype):
    out = []
    f = lambda tf, p, i, a, b=0: tf.raw_ops.GatherV2(params=p, indices=i, axis=a, batch_dims=b)  # noqa: E731
    for pshape, idx, axis in [((5, 3), [0, 4, 2, 2], 0), ((5, 3), [[0, 1], [2, 2]], 1), ((5, 3), 2, 0),
                              ((5, 3), [2, 0], -1), ((2, 3, 4), [3, 0], 2), ((5,), [], 0), ((0, 3), [], 0),
                              ((5, 3), [5], 0), ((5, 3), [-1], 0), ((5, 3), [0], 2), ((5, 3), [[1]], -2)]:
        for it in (np.int32, np.int64):
            out.append(Case("%s idx=%s axis=%d %s" % (pshape, idx, axis, np.dtype(it).name), f,
                            [_x(dtype, pshape, len(out)), np.array(idx, it), Const(axis, it)]))
    out.append(Case("fed axis", f, [_x(dtype, (4, 3)), np.array([1, 0], np.int32), np.array(1, np.int32)]))
    out.append(Case("batch_dims=1", lambda tf, p, i, a: f(tf, p, i, a, 1),
                    [_x(dtype, (2, 3, 4)), np.array([[0, 2], [1, 1]], np.int32), Const(1, np.int32)]))
    return out


SPECS.append(Spec("GatherV2", _gather, type_attr="Tparams"))


def _dynamic_partition(dtype):
    out = []
    for shape, parts, n in [((5,), [0, 1, 0, 2, 1], 3), ((4, 2), [1, 1, 0, 0], 2), ((0,), [], 2),
                            ((2, 3), [[0, 1, 0], [1, 1, 1]], 2), ((3,), [0, 3, 1], 3), ((3,), [0, 1], 2),
                            ((3,), [0, -1, 1], 2)]:
        out.append(Case("%s parts=%s n=%d" % (shape, parts, n), lambda tf, d, p, n=n: tf.raw_ops.DynamicPartition(
            data=d, partitions=p, num_partitions=n), [_x(dtype, shape, len(out)), np.array(parts, np.int32)]))
    return out


SPECS.append(Spec("DynamicPartition", _dynamic_partition))


def _dynamic_stitch(dtype):
    out = []
    for idx, shapes in [([[0, 2], [1, 3]], [(2,), (2,)]), ([[0, 2], [1, 2]], [(2, 3), (2, 3)]),
                        ([[4], [0, 1]], [(1, 2), (2, 2)]), ([[], [0]], [(0,), (1,)]), ([[0, 1]], [(2,)]),
                        ([[0, -1]], [(2,)]), ([[0, 1]], [(3,)])]:
        ids = [np.array(i, np.int32) for i in idx]
        xs = [_x(dtype, s, len(out) + k) for k, s in enumerate(shapes)]
        n = len(idx)
        out.append(Case("idx=%s %s" % (idx, shapes), lambda tf, *a, n=n: tf.raw_ops.DynamicStitch(
            indices=list(a[:n]), data=list(a[n:])), ids + xs))
    return out


SPECS.append(Spec("DynamicStitch", _dynamic_stitch))


def _one_hot(dtype):
    out = []
    f = lambda tf, i, d, on, off, a: tf.raw_ops.OneHot(indices=i, depth=d, on_value=on, off_value=off, axis=a)  # noqa: E731
    for idx, depth, axis in [([0, 2, 1, 5, -1], 4, -1), ([[0, 2], [1, 3]], 3, 0), ([[0, 2], [1, 3]], 3, 1),
                             (2, 3, -1), ([], 3, -1), ([1, 0], 0, -1), ([1], -1, -1), ([1], 2, 2), ([1], 2, -2)]:
        for it in ("int32", "int64", "uint8"):
            if it == "uint8" and np.min(np.array(idx, np.int64), initial=0) < 0:
                continue
            on, off = gen(dtype, (), "normal", 1), gen(dtype, (), "normal", 2)
            out.append(Case("idx=%s depth=%d axis=%d %s" % (idx, depth, axis, it),
                            lambda tf, i, d, on, off, a=axis: f(tf, i, d, on, off, a),
                            [np.array(idx, it), Const(depth, np.int32), on, off]))
    return out


SPECS.append(Spec("OneHot", _one_hot))

# ---- slices ----------------------------------------------------------------------------------


def _slice(dtype):
    out = []
    f = lambda tf, x, b, s: tf.raw_ops.Slice(input=x, begin=b, size=s)  # noqa: E731
    for shape, begin, size in [((4, 5), [1, 2], [2, 3]), ((4, 5), [0, 0], [-1, -1]), ((4, 5), [1, 0], [-1, 2]),
                               ((4, 5), [4, 5], [0, 0]), ((2, 3, 4), [1, 1, 1], [1, 2, 3]), ((), [], []),
                               ((0, 5), [0, 1], [0, 2]), ((4, 5), [3, 0], [2, 1]), ((4, 5), [-1, 0], [1, 1]),
                               ((4, 5), [0], [1]), ((4, 5), [0, 0], [1, -2])]:
        for it in (np.int32, np.int64):
            out.append(Case("%s begin=%s size=%s const %s" % (shape, begin, size, np.dtype(it).name), f,
                            [_x(dtype, shape, len(out)), Const(begin, it), Const(size, it)]))
        out.append(Case("%s begin=%s size=%s fed" % (shape, begin, size), f,
                        [_x(dtype, shape, len(out)), np.array(begin, np.int32), np.array(size, np.int32)]))
    return out


SPECS.append(Spec("Slice", _slice))

# (shape, begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)
STRIDED = [
    ((5,), [1], [4], [1], 0, 0, 0, 0, 0), ((5,), [4], [0], [-1], 0, 0, 0, 0, 0), ((5,), [0], [0], [2], 1, 1, 0, 0, 0),
    ((5,), [-2], [0], [1], 0, 1, 0, 0, 0), ((5,), [2], [0], [1], 0, 0, 0, 0, 1), ((5,), [-1], [0], [1], 0, 0, 0, 0, 1),
    ((4, 5), [1, 0], [3, 5], [1, 2], 0, 0, 0, 0, 0), ((4, 5), [0, 1], [0, 0], [1, 1], 1, 3, 0, 0, 0),
    ((4, 5), [0, 0], [0, 0], [-1, -2], 3, 3, 0, 0, 0), ((4, 5), [1, 0, 0], [2, 0, 0], [1, 1, 1], 0, 0, 0, 2, 1),
    ((2, 3, 4), [0, 1], [0, 2], [1, 1], 0, 0, 1, 0, 0), ((2, 3, 4), [1, 0, 1], [2, 0, 3], [1, 1, 1], 0, 0, 2, 0, 1),
    ((2, 3, 4), [0, 0, 0], [0, 0, 0], [1, 1, 1], 0, 0, 0, 3, 0), ((4, 5), [10, -10], [20, 10], [1, 1], 0, 0, 0, 0, 0),
    ((4, 5), [-10, 10], [10, -10], [1, -1], 0, 0, 0, 0, 0), ((0, 5), [0, 1], [0, 3], [1, 1], 0, 0, 0, 0, 0),
    ((), [], [], [], 0, 0, 0, 0, 0), ((4, 5), [0, 0], [2, 2], [1, 0], 0, 0, 0, 0, 0),
    ((4, 5), [4], [5], [1], 0, 0, 0, 0, 1), ((4, 5), [1, 2], [2, 3], [1, 1], 0, 0, 0, 0, 3),
    ((2, 3, 4), [0, 0], [1, 1], [1, 1], 0, 0, 3, 0, 0), ((4, 5), [1], [3], [1], 0, 0, 0, 1, 0),
]


def _strided(dtype):
    out = []
    for shape, b, e, s, bm, em, elm, nam, sam in STRIDED:
        kw = dict(begin_mask=bm, end_mask=em, ellipsis_mask=elm, new_axis_mask=nam, shrink_axis_mask=sam)
        label = "%s [%s:%s:%s] masks=%d,%d,%d,%d,%d" % (shape, b, e, s, bm, em, elm, nam, sam)
        fn = lambda tf, x, b, e, s, kw=kw: tf.raw_ops.StridedSlice(input=x, begin=b, end=e, strides=s, **kw)  # noqa: E731
        for it in (np.int32, np.int64):
            out.append(Case(label + " const " + np.dtype(it).name, fn,
                            [_x(dtype, shape, len(out)), Const(b, it), Const(e, it), Const(s, it)]))
        out.append(Case(label + " fed", fn, [_x(dtype, shape, len(out)), np.array(b, np.int32).reshape(-1),
                                             np.array(e, np.int32).reshape(-1), np.array(s, np.int32).reshape(-1)]))
    return out


SPECS.append(Spec("StridedSlice", _strided))


def _strided_grad(dtype):
    out = []
    for shape, b, e, s, bm, em, elm, nam, sam in STRIDED:
        if 0 in s or any(abs(v) >= 10 for v in b):
            continue
        x = _x("float64", shape, len(out))
        # The slice's own output shape gives dy's shape.
        sl = _numpy_strided(x, b, e, s, bm, em, elm, nam, sam)
        if sl is None:
            continue
        dy = gen(dtype, sl.shape, "normal", len(out))
        kw = dict(begin_mask=bm, end_mask=em, ellipsis_mask=elm, new_axis_mask=nam, shrink_axis_mask=sam)
        fn = lambda tf, sh, b, e, s, dy, kw=kw: tf.raw_ops.StridedSliceGrad(  # noqa: E731
            shape=sh, begin=b, end=e, strides=s, dy=dy, **kw)
        out.append(Case("%s [%s:%s:%s] masks=%d,%d,%d,%d,%d" % (shape, b, e, s, bm, em, elm, nam, sam), fn,
                        [Const(list(shape), np.int32), Const(b, np.int32), Const(e, np.int32), Const(s, np.int32), dy]))
    out.append(Case("dy shape differs", lambda tf, sh, b, e, s, dy: tf.raw_ops.StridedSliceGrad(
        shape=sh, begin=b, end=e, strides=s, dy=dy), [Const([5], np.int32), Const([1], np.int32), Const([4], np.int32),
                                                      Const([1], np.int32), gen(dtype, (2,))]))
    return out


def _numpy_strided(x, b, e, s, bm, em, elm, nam, sam):
    """The slice with numpy (no ellipsis/new axes beyond what numpy spells the same way)."""
    idx = []
    for i in range(len(b)):
        if elm & (1 << i):
            idx.append(Ellipsis)
        elif nam & (1 << i):
            idx.append(None)
        elif sam & (1 << i):
            idx.append(b[i])
        else:
            idx.append(slice(None if bm & (1 << i) else b[i], None if em & (1 << i) else e[i], s[i]))
    try:
        return np.asarray(x[tuple(idx)])
    except IndexError:
        return None


SPECS.append(Spec("StridedSliceGrad", _strided_grad))

# ---- pad, tile, fill, broadcast_to -----------------------------------------------------------


def _pad(op):
    def cases(dtype):
        out = []
        for shape, pads in [((2, 3), [[1, 0], [2, 1]]), ((2, 3), [[0, 0], [0, 0]]), ((3,), [[2, 3]]), ((), []),
                            ((0, 2), [[1, 1], [0, 2]]), ((2, 3), [[-1, 0], [0, 0]]), ((2, 3), [[1, 1]]),
                            ((2, 3, 4), [[0, 1], [1, 0], [2, 2]])]:
            for it in (np.int32, np.int64):
                args = [_x(dtype, shape, len(out)), Const(np.array(pads, it).reshape(-1, 2))]
                if op == "Pad":
                    fn = lambda tf, x, p: tf.raw_ops.Pad(input=x, paddings=p)  # noqa: E731
                else:
                    fn = lambda tf, x, p, c: tf.raw_ops.PadV2(input=x, paddings=p, constant_values=c)  # noqa: E731
                    args.append(gen(dtype, (), "normal", 99))
                out.append(Case("%s pads=%s %s" % (shape, pads, np.dtype(it).name), fn, args))
            fed = [_x(dtype, shape, len(out)), np.array(pads, np.int32).reshape(-1, 2)]
            if op == "PadV2":
                fed.append(gen(dtype, (), "normal", 98))
            out.append(Case("%s pads=%s fed" % (shape, pads), fn, fed))
        return out
    return cases


SPECS.append(Spec("Pad", _pad("Pad")))
SPECS.append(Spec("PadV2", _pad("PadV2")))


def _tile(dtype):
    out = []
    f = lambda tf, x, m: tf.raw_ops.Tile(input=x, multiples=m)  # noqa: E731
    for shape, mult in [((2, 3), [2, 1]), ((2, 3), [1, 3]), ((3,), [4]), ((), []), ((2, 3), [0, 2]),
                        ((0, 3), [2, 2]), ((2, 1, 3), [2, 3, 1]), ((2, 3), [2]), ((2, 3), [-1, 1])]:
        for it in (np.int32, np.int64):
            out.append(Case("%s x %s %s" % (shape, mult, np.dtype(it).name), f,
                            [_x(dtype, shape, len(out)), Const(mult, it)]))
        out.append(Case("%s x %s fed" % (shape, mult), f, [_x(dtype, shape, len(out)), np.array(mult, np.int32)]))
    return out


SPECS.append(Spec("Tile", _tile))


def _fill(dtype):
    out = []
    f = lambda tf, d, v: tf.raw_ops.Fill(dims=d, value=v)  # noqa: E731
    for dims in ([2, 3], [], [0, 4], [5], [2, -1], [1, 1, 1]):
        for it in (np.int32, np.int64):
            out.append(Case("%s const %s" % (dims, np.dtype(it).name), f,
                            [Const(dims, it), gen(dtype, (), "normal", len(out))]))
        out.append(Case("%s fed" % dims, f, [np.array(dims, np.int32), gen(dtype, (), "normal", len(out))]))
    out.append(Case("value not scalar", f, [Const([2], np.int32), gen(dtype, (2,))]))
    return out


SPECS.append(Spec("Fill", _fill))


def _broadcast_to(dtype):
    out = []
    f = lambda tf, x, s: tf.raw_ops.BroadcastTo(input=x, shape=s)  # noqa: E731
    for shape, to in [((3,), [2, 3]), ((1, 3), [4, 3]), ((), [2, 2]), ((2, 1), [2, 5]), ((3,), [3]),
                      ((0,), [2, 0]), ((1,), [0]), ((3,), [2, 4]), ((2, 3), [3])]:
        for it in (np.int32, np.int64):
            out.append(Case("%s to %s %s" % (shape, to, np.dtype(it).name), f,
                            [_x(dtype, shape, len(out)), Const(to, it)]))
        out.append(Case("%s to %s fed" % (shape, to), f, [_x(dtype, shape, len(out)), np.array(to, np.int32)]))
    return out


SPECS.append(Spec("BroadcastTo", _broadcast_to))

# Intended differences: (op, regex over "<dtype> <case label>: <problem>") → why.
KNOWN = {
    ("PadV2", r"gradient\[1\]: a value vs TensorFlow's None"):
        "dflow differentiates PadV2 with respect to constant_values (the sum of the gradient over the padded "
        "elements); TensorFlow's gradient function returns None for it",
}


def _unique(dtype):
    out = []
    f = lambda tf, x, it="int32": tf.raw_ops.Unique(x=x, out_idx=tf.as_dtype(it))  # noqa: E731
    for shape in ((7,), (0,), (1,), (12,)):
        for kind in (("normal", "special") if dtype in FLOATS else ("normal",)):
            x = gen(dtype, shape, kind, len(out))
            if x.size > 3 and dtype not in ("bool",):
                x.reshape(-1)[-2:] = x.reshape(-1)[:2]  # repeats
            for it in ("int32", "int64"):
                out.append(Case("%s %s %s" % (shape, kind, it), lambda tf, x, it=it: f(tf, x, it), [x]))
    out.append(Case("not a vector", f, [_x(dtype, (2, 2))]))
    out.append(Case("scalar", f, [_x(dtype, ())]))
    return out


SPECS.append(Spec("Unique", _unique))

def _reverse_v2(dtype):
    out = []
    f = lambda tf, x, a: tf.raw_ops.ReverseV2(tensor=x, axis=a)  # noqa: E731
    for shape, axes in [((5,), [0]), ((3, 4), [1]), ((3, 4), [-1, 0]), ((2, 3, 4), [0, 2]), ((2, 3, 4), []),
                        ((0, 4), [0, 1]), ((), []), ((3, 4), [2]), ((3, 4), [0, -2]), ((2, 3, 4), [-3])]:
        for it in (np.int32, np.int64):
            out.append(Case("%s axes=%s %s" % (shape, axes, np.dtype(it).name), f,
                            [_x(dtype, shape, len(out)), Const(np.array(axes, it).reshape(-1))]))
        out.append(Case("%s axes=%s fed" % (shape, axes), f,
                        [_x(dtype, shape, len(out)), np.array(axes, np.int32).reshape(-1)]))
    return out


SPECS.append(Spec("ReverseV2", _reverse_v2))


def _reverse_sequence(dtype):
    out = []
    f = lambda tf, x, l, sd, bd: tf.raw_ops.ReverseSequence(input=x, seq_lengths=l, seq_dim=sd, batch_dim=bd)  # noqa: E731
    for shape, lens, sd, bd in [((3, 4), [4, 0, 2], 1, 0), ((4, 3), [1, 4, 3], 0, 1), ((2, 5, 3), [5, 2], 1, 0),
                                ((2, 5, 3), [1, 3, 0], 1, 2), ((3, 4), [5, 1, 1], 1, 0), ((3, 4), [1, 1], 1, 0),
                                ((3, 4), [-1, 1, 1], 1, 0), ((3, 4), [1, 1, 1], 1, 1), ((0, 4), [], 1, 0),
                                ((3, 4), [1, 1, 1], 2, 0)]:
        for lt in (np.int32, np.int64):
            out.append(Case("%s lens=%s seq_dim=%d batch_dim=%d %s" % (shape, lens, sd, bd, np.dtype(lt).name),
                            lambda tf, x, l, sd=sd, bd=bd: f(tf, x, l, sd, bd),
                            [_x(dtype, shape, len(out)), np.array(lens, lt)]))
    return out


SPECS.append(Spec("ReverseSequence", _reverse_sequence))

# Every spec here also runs 6 of its cases with inputs of unknown shape.
for _s in SPECS:
    _s.dynamic = 6
