"""Differential specs: variables and their state ops — VariableV2/Variable, Assign, AssignAdd/Sub,
Scatter{Update,Add,Sub}, CountUpTo, IsVariableInitialized, and resource variables (VarHandleOp,
AssignVariableOp, ReadVariableOp, Assign{Add,Sub}VariableOp, ResourceGather, VarIsInitializedOp,
VariableShape). A case runs in one Session.run: the variable is created and initialized, then
updated in a chain of control dependencies, and the values along the chain are fetched (each
fetch under a control dependency on the step it follows). Resource variables get a shared_name
of their own per case. (Format: see diffsuite's docstring.)"""
import numpy as np

from diffsuite import Case, Spec, gen

SPECS = []
ALL = ["float32", "float64", "int32", "int64", "uint8", "bool", "string"]
NUMERIC = ["float32", "float64", "int32", "int64", "uint8"]
_N = [0]


def _name(prefix):
    _N[0] += 1
    return "%s%d" % (prefix, _N[0])


def _ref(tf, value, op="VariableV2", shape=None):
    v = getattr(tf.raw_ops, op)(shape=value.shape if shape is None else shape, dtype=value.dtype)
    return v, tf.raw_ops.Assign(ref=v, value=value)


def _chain(tf, first, steps):
    """Runs each step (a function of nothing returning an op's output) after the one before;
    returns every step's output read after it."""
    deps, outs = [first], []
    for step in steps:
        with tf.control_dependencies(deps):
            t = step()
        with tf.control_dependencies([t]):
            # a copy: TensorFlow's Identity of a reference forwards the variable's buffer, so a
            # fetched identity would show the value at the end of the run
            r = tf.stack([t, t])[0]  # (Pack of one input forwards its buffer too)
        outs.append(r)
        deps = [r]  # the next step waits for this read
    return outs


# ---- reference variables ---------------------------------------------------------------------

def _variable(op):
    def cases(dtype):
        out = []
        for shape in [(3, 4), (), (0, 2)]:
            def fn(tf, x, op=op):
                v, init = _ref(tf, x, op)
                with tf.control_dependencies([init]):
                    return tf.identity(v)
            out.append(Case("%s" % (shape,), fn, [gen(dtype, shape, "normal", len(out))]))
        out.append(Case("uninitialized", lambda tf, x: tf.identity(getattr(tf.raw_ops, op)(
            shape=[2], dtype=x.dtype)), [gen(dtype, (2,))]))
        return out
    return cases


SPECS.append(Spec("VariableV2", _variable("VariableV2"), dtypes=ALL, type_attr="dtype", grad=False))
SPECS.append(Spec("Variable", _variable("Variable"), dtypes=ALL, type_attr="dtype", grad=False))


def _assign(dtype):
    out = []
    for shape in [(3, 4), (), (0, 2)]:
        def fn(tf, a, b):
            v, init = _ref(tf, a)
            return _chain(tf, init, [lambda: tf.raw_ops.Assign(ref=v, value=b)])
        out.append(Case("%s" % (shape,), fn, [gen(dtype, shape, "normal", len(out)),
                                              gen(dtype, shape, "normal", len(out) + 9)]))

    def reshape(tf, a, b):
        v, init = _ref(tf, a)
        return _chain(tf, init, [lambda: tf.raw_ops.Assign(ref=v, value=b, validate_shape=False)])
    out.append(Case("validate_shape=False", reshape, [gen(dtype, (3,)), gen(dtype, (2, 2))]))

    def bad(tf, a, b):
        v, init = _ref(tf, a)
        return _chain(tf, init, [lambda: tf.raw_ops.Assign(ref=v, value=b)])
    out.append(Case("shape differs", bad, [gen(dtype, (3,)), gen(dtype, (2, 2))]))

    def unknown(tf, a, b):  # a variable of unknown shape initialized by validate_shape=False
        v = tf.raw_ops.VariableV2(shape=tf.TensorShape(None), dtype=a.dtype)
        init = tf.raw_ops.Assign(ref=v, value=a, validate_shape=False)
        return _chain(tf, init, [lambda: tf.raw_ops.Assign(ref=v, value=b, validate_shape=False)])
    out.append(Case("unknown shape", unknown, [gen(dtype, (2, 3)), gen(dtype, (4,))]))
    return out


SPECS.append(Spec("Assign", _assign, dtypes=ALL, grad=False))


def _assign_update(op):
    def cases(dtype):
        out = []
        for shape in [(3, 4), (), (0, 2)]:
            def fn(tf, a, b, c):
                v, init = _ref(tf, a)
                return _chain(tf, init, [lambda: getattr(tf.raw_ops, op)(ref=v, value=b),
                                         lambda: getattr(tf.raw_ops, op)(ref=v, value=c)])
            out.append(Case("%s" % (shape,), fn, [gen(dtype, shape, "normal", len(out) + i) for i in range(3)]))

        def bad(tf, a, b):
            v, init = _ref(tf, a)
            return _chain(tf, init, [lambda: getattr(tf.raw_ops, op)(ref=v, value=b)])
        out.append(Case("shape differs", bad, [gen(dtype, (3,)), gen(dtype, (2,))]))
        out.append(Case("broadcast scalar", bad, [gen(dtype, (3,)), gen(dtype, ())]))
        if dtype not in ("float32", "float64"):
            out.append(Case("wraps", bad, [gen(dtype, (6,), "extreme"), gen(dtype, (6,), "extreme", 1)]))
        return out
    return cases


SPECS.append(Spec("AssignAdd", _assign_update("AssignAdd"), grad=False))
SPECS.append(Spec("AssignSub", _assign_update("AssignSub"), grad=False))


def _scatter(op):
    def cases(dtype):
        out = []
        for it in (np.int32, np.int64):
            for shape, idx, ushape in [((5, 3), [0, 4, 2], (3, 3)), ((5,), [1, 1, 3], (3,)), ((4, 2), [], (0, 2)),
                                       ((4, 2), 2, (2,)), ((4, 2, 2), [[0, 1], [3, 1]], (2, 2, 2, 2))]:
                if op == "ScatterUpdate" and isinstance(idx, list) and len(idx) != len(set(
                        map(str, idx))):
                    continue  # duplicate indices: which update wins is unspecified

                def fn(tf, a, i, u, c):
                    v, init = _ref(tf, a)
                    return _chain(tf, init, [lambda: getattr(tf.raw_ops, op)(ref=v, indices=i, updates=u),
                                             lambda: getattr(tf.raw_ops, op)(ref=v, indices=i, updates=c)])
                out.append(Case("%s %s %s" % (shape, idx, np.dtype(it).name), fn,
                                [gen(dtype, shape, "normal", len(out)), np.array(idx, it),
                                 gen(dtype, ushape, "normal", len(out) + 1),
                                 gen(dtype, ushape, "normal", len(out) + 2)]))

        def one(tf, a, i, u):
            v, init = _ref(tf, a)
            return _chain(tf, init, [lambda: getattr(tf.raw_ops, op)(ref=v, indices=i, updates=u)])
        out.append(Case("index out of range", one, [gen(dtype, (4, 2)), np.array([1, 4], np.int32),
                                                    gen(dtype, (2, 2))]))
        out.append(Case("negative index", one, [gen(dtype, (4, 2)), np.array([-1], np.int64), gen(dtype, (1, 2))]))
        out.append(Case("updates shape wrong", one, [gen(dtype, (4, 2)), np.array([1, 2], np.int32),
                                                     gen(dtype, (2, 3))]))
        out.append(Case("scalar updates", one, [gen(dtype, (4, 2)), np.array([1, 2], np.int32), gen(dtype, ())]))
        return out
    return cases


for _op in ("ScatterUpdate", "ScatterAdd", "ScatterSub"):
    SPECS.append(Spec(_op, _scatter(_op), grad=False))


def _count_up_to(dtype):
    out = []
    for start, limit, n in [(0, 5, 3), (3, 5, 2), (4, 5, 2), (5, 5, 1), (-2, 0, 2)]:
        def fn(tf, a, limit=limit, n=n):
            v, init = _ref(tf, a)
            return _chain(tf, init, [lambda: tf.raw_ops.CountUpTo(ref=v, limit=limit)] * n)
        out.append(Case("start=%d limit=%d steps=%d" % (start, limit, n), fn, [np.array(start, dtype)]))
    return out


SPECS.append(Spec("CountUpTo", _count_up_to, grad=False,
                  note="several steps chained; the step that reaches the limit fails (OutOfRange)"))


def _is_initialized(dtype):
    def init(tf, a):
        v, i = _ref(tf, a)
        with tf.control_dependencies([i]):
            return tf.raw_ops.IsVariableInitialized(ref=v)

    def fresh(tf, a):
        v, _ = _ref(tf, a)
        return tf.raw_ops.IsVariableInitialized(ref=v)
    return [Case("after Assign", init, [gen(dtype, (2, 3))]), Case("never assigned", fresh, [gen(dtype, (2,))])]


SPECS.append(Spec("IsVariableInitialized", _is_initialized, dtypes=ALL, type_attr="dtype", grad=False))

# ---- resource variables ----------------------------------------------------------------------


def _handle(tf, dtype, shape):
    return tf.raw_ops.VarHandleOp(dtype=dtype, shape=shape, shared_name=_name("res_var_"))


def _res_init(tf, x, shape=None):
    h = _handle(tf, x.dtype, x.shape if shape is None else shape)
    return h, tf.raw_ops.AssignVariableOp(resource=h, value=x)


def _read(tf, h, dtype, deps):
    with tf.control_dependencies(deps):
        return tf.raw_ops.ReadVariableOp(resource=h, dtype=dtype)


def _resource_basic(op):
    def cases(dtype):
        out = []
        for shape in [(3, 4), (), (0, 2)]:
            def fn(tf, a):
                h, init = _res_init(tf, a)
                return _read(tf, h, a.dtype, [init])
            out.append(Case("write, read %s" % (shape,), fn, [gen(dtype, shape, "normal", len(out))]))

        def twice(tf, a, b):
            h, init = _res_init(tf, a)
            with tf.control_dependencies([init]):
                r1 = tf.raw_ops.ReadVariableOp(resource=h, dtype=a.dtype)
                r1 = tf.identity(r1)
            with tf.control_dependencies([r1]):
                w2 = tf.raw_ops.AssignVariableOp(resource=h, value=b)
            return [r1, _read(tf, h, a.dtype, [w2])]
        out.append(Case("write, read, write, read", twice, [gen(dtype, (2, 3)), gen(dtype, (2, 3), "normal", 1)]))

        def reshape(tf, a, b):  # a resource variable of unknown shape takes any shape
            h = _handle(tf, a.dtype, tf.TensorShape(None))
            w1 = tf.raw_ops.AssignVariableOp(resource=h, value=a)
            with tf.control_dependencies([w1]):
                w2 = tf.raw_ops.AssignVariableOp(resource=h, value=b)
            return _read(tf, h, a.dtype, [w2])
        out.append(Case("unknown shape, new shape", reshape, [gen(dtype, (2, 3)), gen(dtype, (4,))]))

        def uninit(tf, a):
            h = _handle(tf, a.dtype, a.shape)
            return tf.raw_ops.ReadVariableOp(resource=h, dtype=a.dtype)
        out.append(Case("read uninitialized", uninit, [gen(dtype, (2,))]))

        def wrong_dtype(tf, a):
            h, init = _res_init(tf, a)
            other = tf.float64 if a.dtype != tf.float64 else tf.int32
            return _read(tf, h, other, [init])
        out.append(Case("read as another dtype", wrong_dtype, [gen(dtype, (2,))]))
        return out
    return cases


SPECS.append(Spec("ReadVariableOp", _resource_basic("ReadVariableOp"), dtypes=ALL, type_attr="dtype", grad=False))
SPECS.append(Spec("VarHandleOp", lambda dt: _resource_basic("VarHandleOp")(dt)[:3], dtypes=["float32", "int64"],
                  type_attr="dtype", grad=False))
SPECS.append(Spec("AssignVariableOp", lambda dt: _resource_basic("AssignVariableOp")(dt)[3:5], dtypes=ALL,
                  type_attr="dtype", grad=False))


def _resource_update(op):
    def cases(dtype):
        out = []
        for shape in [(3, 4), (), (0, 2)]:
            def fn(tf, a, b, c):
                h, init = _res_init(tf, a)
                with tf.control_dependencies([init]):
                    u1 = getattr(tf.raw_ops, op)(resource=h, value=b)
                r1 = _read(tf, h, a.dtype, [u1])
                with tf.control_dependencies([r1]):
                    u2 = getattr(tf.raw_ops, op)(resource=h, value=c)
                return [r1, _read(tf, h, a.dtype, [u2])]
            out.append(Case("%s" % (shape,), fn, [gen(dtype, shape, "normal", len(out) + i) for i in range(3)]))

        def bad(tf, a, b):
            h, init = _res_init(tf, a)
            with tf.control_dependencies([init]):
                u = getattr(tf.raw_ops, op)(resource=h, value=b)
            return _read(tf, h, a.dtype, [u])
        out.append(Case("shape differs", bad, [gen(dtype, (3,)), gen(dtype, (2,))]))

        def uninit(tf, a):
            h = _handle(tf, a.dtype, a.shape)
            u = getattr(tf.raw_ops, op)(resource=h, value=a)
            return _read(tf, h, a.dtype, [u])
        out.append(Case("uninitialized", uninit, [gen(dtype, (2,))]))
        return out
    return cases


SPECS.append(Spec("AssignAddVariableOp", _resource_update("AssignAddVariableOp"), dtypes=NUMERIC, type_attr="dtype",
                  grad=False))
SPECS.append(Spec("AssignSubVariableOp", _resource_update("AssignSubVariableOp"), dtypes=NUMERIC, type_attr="dtype",
                  grad=False))


def _resource_gather(dtype):
    out = []
    for it in (np.int32, np.int64):
        for shape, idx in [((5, 3), [0, 4, 2, 4]), ((5,), [[1, 1], [3, 0]]), ((4, 2), []), ((4, 2), 3),
                           ((4, 2), [4]), ((4, 2), [-1])]:
            def fn(tf, a, i):
                h, init = _res_init(tf, a)
                with tf.control_dependencies([init]):
                    return tf.raw_ops.ResourceGather(resource=h, indices=i, dtype=a.dtype)
            out.append(Case("%s %s %s" % (shape, idx, np.dtype(it).name), fn,
                            [gen(dtype, shape, "normal", len(out)), np.array(idx, it)]))

    def batch(tf, a, i, bd=1):
        h, init = _res_init(tf, a)
        with tf.control_dependencies([init]):
            return tf.raw_ops.ResourceGather(resource=h, indices=i, dtype=a.dtype, batch_dims=bd)
    out.append(Case("batch_dims=1", batch, [gen(dtype, (2, 4, 3)), np.array([[0, 3], [1, 1]], np.int32)]))
    out.append(Case("batch_dims=1, 3-D indices", batch, [gen(dtype, (2, 4)), np.array([[[0], [3]], [[1], [2]]],
                                                                                  np.int64)]))
    out.append(Case("batch_dims=2", lambda tf, a, i: batch(tf, a, i, 2),
                    [gen(dtype, (2, 2, 3)), np.array([[0, 2], [1, 1]], np.int32)]))
    out.append(Case("batch_dims=-1 (rejected)", lambda tf, a, i: batch(tf, a, i, -1),
                    [gen(dtype, (2, 4, 3)), np.array([[0, 3], [1, 1]], np.int32)]))
    # (batch sizes that differ abort TensorFlow's process: not compared)
    out.append(Case("batch_dims=1, index out of range", batch, [gen(dtype, (2, 4)), np.array([[0], [4]], np.int32)]))
    return out


SPECS.append(Spec("ResourceGather", _resource_gather, dtypes=ALL, type_attr="dtype", grad=False,
                  note="gradient (IndexedSlices into a resource) not compared: the fed inputs reach it through state"))


def _resource_scatter(op):
    def cases(dtype):
        out = []
        for it in (np.int32, np.int64):
            for shape, idx, ushape in [((5, 3), [0, 4, 2], (3, 3)), ((5,), [1, 1, 3], (3,)), ((4, 2), [], (0, 2)),
                                       ((4, 2), 2, (2,)), ((4, 2, 2), [[0, 1], [3, 1]], (2, 2, 2, 2))]:
                if op == "ResourceScatterUpdate" and isinstance(idx, list) and len(idx) != len(set(map(str, idx))):
                    continue  # duplicate indices: which update wins is unspecified

                def fn(tf, a, i, u):
                    h, init = _res_init(tf, a)
                    with tf.control_dependencies([init]):
                        w = getattr(tf.raw_ops, op)(resource=h, indices=i, updates=u)
                    return _read(tf, h, a.dtype, [w])
                out.append(Case("%s %s %s" % (shape, idx, np.dtype(it).name), fn,
                                [gen(dtype, shape, "normal", len(out)), np.array(idx, it),
                                 gen(dtype, ushape, "normal", len(out) + 1)]))

        def one(tf, a, i, u):
            h, init = _res_init(tf, a)
            with tf.control_dependencies([init]):
                w = getattr(tf.raw_ops, op)(resource=h, indices=i, updates=u)
            return _read(tf, h, a.dtype, [w])
        out.append(Case("index out of range", one, [gen(dtype, (4, 2)), np.array([1, 4], np.int32),
                                                    gen(dtype, (2, 2))]))
        out.append(Case("scalar updates", one, [gen(dtype, (4, 2)), np.array([1, 2], np.int32), gen(dtype, ())]))
        return out
    return cases


# dflow's ResourceScatter* kernels cover float32, float64, int32, int64 (TensorFlow also uint8, and bool and string
# for ResourceScatterUpdate): those dtypes are left out, named in the note.
_SCATTER_TYPES = ["float32", "float64", "int32", "int64"]
for _op in ("ResourceScatterUpdate", "ResourceScatterAdd", "ResourceScatterSub"):
    SPECS.append(Spec(_op, _resource_scatter(_op), dtypes=_SCATTER_TYPES, type_attr="dtype", grad=False,
                      note="not compared: uint8%s (no dflow kernel)" % (", bool, string" if _op.endswith("Update")
                                                                         else "")))


def _var_is_initialized(dtype):
    def init(tf, a):
        h, i = _res_init(tf, a)
        with tf.control_dependencies([i]):
            return tf.raw_ops.VarIsInitializedOp(resource=h)

    def fresh(tf, a):
        return tf.raw_ops.VarIsInitializedOp(resource=_handle(tf, a.dtype, a.shape))
    return [Case("after AssignVariableOp", init, [gen(dtype, (2, 3))]), Case("never assigned", fresh,
                                                                             [gen(dtype, (2,))])]


SPECS.append(Spec("VarIsInitializedOp", _var_is_initialized, dtypes=["float32", "int32", "string"], grad=False))


def _variable_shape(dtype):
    out = []
    for shape in [(3, 4), (), (0, 2), (2, 1, 3)]:
        for ot in ("int32", "int64"):
            def fn(tf, a, ot=ot):
                h, i = _res_init(tf, a)
                with tf.control_dependencies([i]):
                    return tf.raw_ops.VariableShape(input=h, out_type=tf.as_dtype(ot))
            out.append(Case("%s %s" % (shape, ot), fn, [gen(dtype, shape, "normal", len(out))]))
    out.append(Case("uninitialized", lambda tf, a: tf.raw_ops.VariableShape(input=_handle(tf, a.dtype, a.shape)),
                    [gen(dtype, (2,))]))
    return out


SPECS.append(Spec("VariableShape", _variable_shape, dtypes=["float32", "string"], grad=False))

EXCLUDED = {}
_HANDLE_DATA = ("TensorFlow checks a resource variable's dtype and shape when the graph is built (the handle "
                "carries them); dflow checks them when the op runs (InvalidArgument)")
KNOWN = {
    ("ReadVariableOp", r"read as another dtype"): _HANDLE_DATA,
    ("AssignAddVariableOp", r"shape differs"): _HANDLE_DATA,
    ("AssignSubVariableOp", r"shape differs"): _HANDLE_DATA,
}
