"""Differential specs: control flow v1 — Enter, Exit, Merge, Switch, RefSwitch, NextIteration,
LoopCond, ControlTrigger. The graphs are TensorFlow's own tf.while_loop / tf.cond (control flow v1: frames,
dead tensors), with their gradients built by TensorFlow into the same graph (tf.gradients: the
stacks and the gradient loops run in dflow too) and fetched as outputs; plus raw Switch/Merge and
ControlTrigger nodes. The suite's own gradient comparison is off for these ops: a GraphDef does not
carry the while-loop contexts that either side's `gradients` needs. (Format: see diffsuite's
docstring.)"""
import numpy as np

from diffsuite import FLOATS, Case, Const, Spec, gen

SPECS = []
TYPES = ["float32", "float64", "int32", "int64"]
TOL = {"float32": (1e-4, 1e-5), "float64": (1e-10, 1e-12)}


def _with_grads(tf, outs, xs, dtype):
    """outs, plus the gradients of their weighted sum with respect to xs (float dtypes)."""
    outs = list(outs)
    if dtype not in FLOATS:
        return outs
    loss = tf.add_n([tf.reduce_sum(o * (1.0 + i)) for i, o in enumerate(outs)])
    return outs + [g if g is not None else tf.zeros_like(x) for g, x in zip(tf.gradients(loss, xs), xs)]


def _while_cases(dtype):
    f = dtype in FLOATS
    out = []

    def simple(tf, x, n):
        i0 = tf.constant(0)
        _, y = tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * (1.5 if f else 2) + 1), [i0, x])
        return _with_grads(tf, [y], [x], dtype)
    for n in (0, 1, 4):
        out.append(Case("while y = y*c + 1, %d iterations" % n, simple, [gen(dtype, (3, 2), "small" if not f else
                                                                             "normal", n), Const(n, np.int32)]))
    out.append(Case("while, iterations fed", simple, [gen(dtype, (4,), "small" if not f else "normal", 9),
                                                      np.array(3, np.int32)]))

    def captured(tf, x, w):  # w enters the frame as a loop constant (Enter is_constant)
        _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.matmul(y, w) + (0.5 if f else 1)),
                             [tf.constant(0), x])
        return _with_grads(tf, [y], [x, w], dtype)
    out.append(Case("while with a captured weight", captured,
                    [gen(dtype, (2, 3), "small" if not f else "normal", 1),
                     (gen(dtype, (3, 3), "normal", 2) * 0.5).astype(dtype) if f else gen(dtype, (3, 3), "small", 2)]))

    def nested(tf, x):
        def outer(i, y):
            _, z = tf.while_loop(lambda j, z: j < i, lambda j, z: (j + 1, z + y * (0.5 if f else 1)),
                                 [tf.constant(0), y])
            return i + 1, z
        _, y = tf.while_loop(lambda i, y: i < 3, outer, [tf.constant(1), x])
        return _with_grads(tf, [y], [x], dtype)
    out.append(Case("nested while", nested, [gen(dtype, (3,), "small" if not f else "normal", 3)]))

    def data_dependent(tf, x):  # the number of iterations depends on the data
        y = tf.while_loop(lambda y: tf.reduce_sum(y) < (100 if f else 100), lambda y: y * 2 + 1, [x])
        return _with_grads(tf, [y], [x], dtype)
    out.append(Case("while until sum >= 100", data_dependent, [np.abs(gen(dtype, (3,), "small", 4)).astype(dtype)]))

    def max_iters(tf, x):
        y = tf.while_loop(lambda y: tf.constant(True), lambda y: y + 1, [x], maximum_iterations=5,
                          parallel_iterations=1)
        return _with_grads(tf, [y], [x], dtype)
    out.append(Case("maximum_iterations=5 parallel_iterations=1", max_iters, [gen(dtype, (2,), "small", 5)]))

    def shape_changes(tf, x):  # a loop variable whose shape grows (shape invariant)
        _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.concat([y, y[:1]], 0)),
                             [tf.constant(0), x], shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])])
        return _with_grads(tf, [y], [x], dtype)
    out.append(Case("growing loop variable", shape_changes, [gen(dtype, (2,), "small", 6)]))

    def cond_in_while(tf, x):
        def body(i, y):
            return i + 1, tf.cond(tf.equal(i % 2, 0), lambda: y * 2, lambda: y - 1)
        _, y = tf.while_loop(lambda i, y: i < 4, body, [tf.constant(0), x])
        return _with_grads(tf, [y], [x], dtype)
    out.append(Case("cond inside while", cond_in_while, [gen(dtype, (3,), "small" if not f else "normal", 7)]))
    return out


def _cond_cases(dtype):
    f = dtype in FLOATS
    out = []

    def simple(tf, p, x):
        y = tf.cond(p, lambda: x * 2, lambda: (tf.tanh(x) if f else x - 3))
        return _with_grads(tf, [y], [x], dtype)
    for pv in (True, False):
        out.append(Case("cond pred=%s" % pv, simple, [np.array(pv), gen(dtype, (3, 2), "normal", int(pv))]))

    def two_outputs(tf, p, x, z):
        a, b = tf.cond(p, lambda: (x + z, x * z), lambda: (x - z, z))
        return _with_grads(tf, [a, b], [x, z], dtype)
    for pv in (True, False):
        out.append(Case("cond with two outputs pred=%s" % pv, two_outputs,
                        [np.array(pv), gen(dtype, (4,), "normal", 2), gen(dtype, (4,), "normal", 3)]))

    def nested(tf, p, q, x):
        y = tf.cond(p, lambda: tf.cond(q, lambda: x + 1, lambda: x * 3), lambda: x - 2)
        return _with_grads(tf, [y], [x], dtype)
    for pv, qv in ((True, True), (True, False), (False, True)):
        out.append(Case("nested cond %s %s" % (pv, qv), nested, [np.array(pv), np.array(qv),
                                                                 gen(dtype, (3,), "normal", 4)]))

    def raw(tf, p, x):  # Switch and Merge as nodes of their own
        f_out, t_out = tf.raw_ops.Switch(data=x, pred=p)
        m = tf.raw_ops.Merge(inputs=[tf.identity(f_out), tf.identity(t_out)])
        return [m[0], m[1]]
    for pv in (True, False):
        out.append(Case("raw Switch/Merge pred=%s" % pv, raw, [np.array(pv), gen(dtype, (2, 2), "normal", 5)]))

    def dead(tf, p, x):  # fetching the untaken branch of a Switch: no value (an error on both sides)
        return tf.raw_ops.Switch(data=x, pred=p)[1]
    out.append(Case("fetch a dead output", dead, [np.array(False), gen(dtype, (2,), "normal", 6)]))

    def pred_not_scalar(tf, p, x):
        return tf.raw_ops.Switch(data=x, pred=p)[1]
    out.append(Case("pred not a scalar", pred_not_scalar, [np.array([True, False]), gen(dtype, (2,), "normal", 7)]))
    return out


def _trigger_cases(dtype):
    def fn(tf, x):
        t = tf.raw_ops.ControlTrigger()
        with tf.control_dependencies([t]):
            return tf.identity(x) * 2

    def in_loop(tf, x):  # TensorFlow's while loops place ControlTrigger-like control inputs too
        def body(i, y):
            with tf.control_dependencies([tf.raw_ops.ControlTrigger()]):
                return i + 1, y + 1.0
        return tf.while_loop(lambda i, y: i < 3, body, [tf.constant(0), x])[1]
    return [Case("control input", fn, [gen("float32", (3,))]),
            Case("in a loop body", in_loop, [gen("float32", (2,))])]


def _ref_switch_cases(dtype):
    """RefSwitch forwards a reference variable (tf.cond on a VariableV2) to the taken branch."""
    out = []

    def fn(tf, p, x, y):
        v = tf.raw_ops.VariableV2(shape=x.shape, dtype=x.dtype)
        init = tf.raw_ops.Assign(ref=v, value=x)
        with tf.control_dependencies([init]):
            f_out, t_out = tf.raw_ops.RefSwitch(data=v, pred=p)
            # the taken branch assigns through the forwarded reference; the untaken one is dead
            a = tf.raw_ops.Assign(ref=t_out, value=y)
            b = tf.raw_ops.Assign(ref=f_out, value=x)
        m = tf.raw_ops.Merge(inputs=[tf.identity(b), tf.identity(a)])
        with tf.control_dependencies([m[0]]):
            return [m[0], m[1], tf.identity(v)]
    for pv in (True, False):
        out.append(Case("pred=%s" % pv, fn, [np.array(pv), gen(dtype, (2, 3), "normal", 1),
                                              gen(dtype, (2, 3), "normal", 2)]))
    out.append(Case("pred not a scalar", fn, [np.array([True]), gen(dtype, (2,), "normal", 3),
                                              gen(dtype, (2,), "normal", 4)]))
    return out


SPECS.append(Spec("RefSwitch", _ref_switch_cases, dtypes=["float32", "int64", "string"], grad=False))

for _op, _types in (("Enter", TYPES), ("Exit", ["float64", "int32"]), ("NextIteration", ["float32", "int64"])):
    SPECS.append(Spec(_op, _while_cases, dtypes=_types, grad=False, tol=TOL,
                      note="tf.while_loop graphs (with their tf.gradients loops for floats)"))
SPECS.append(Spec("LoopCond", _while_cases, dtypes=["float32"], grad=False, tol=TOL,
                  note="tf.while_loop graphs with their gradient loops"))
for _op, _types in (("Switch", TYPES), ("Merge", ["float64", "int32"])):
    SPECS.append(Spec(_op, _cond_cases, dtypes=_types, grad=False, tol=TOL,
                      note="tf.cond graphs (with their tf.gradients) and raw Switch/Merge nodes"))
SPECS.append(Spec("ControlTrigger", _trigger_cases, grad=False))

EXCLUDED = {}
KNOWN = {}
