"""TensorArrayV3 and its ops, and tf.nn.dynamic_rnn, against real TensorFlow.

The first part runs TensorFlow's own GraphDefs (tf.TensorArray and tf.while_loop built by
TensorFlow in 1.x graph mode) in TensorFlow and in dflow: forward values, TensorFlow's errors, and
the gradients (tf.gradients in TensorFlow; dflow.gradients on the imported forward graph). The
second part builds the same programs with dflow's Python tf.TensorArray and tf.nn.dynamic_rnn and
with TensorFlow's, and compares the results."""
import numpy as np
import pytest

import dflow
from conftest import assert_same, real_tf, run_both
from tfref import run_dflow, run_tf, tf_graph_def

RNG = np.random.RandomState(0)
X = RNG.randn(5, 3, 4).astype(np.float32)      # [time, batch, depth]
W = RNG.randn(4, 6).astype(np.float32) * 0.5
U = RNG.randn(6, 6).astype(np.float32) * 0.5


def _graphs(build):
    """(forward GraphDef, names, TensorFlow's gradients of names['loss'] wrt names['xs'] run there).

    `build(tf)` returns {"loss": tensor, "xs": [tensors], "fetch": [tensors], "feeds": {tensor: value},
    "init": an op to run first (optional)}."""
    tf = real_tf()
    g = tf.Graph()
    with g.as_default():
        out = build(tf)
        gd = g.as_graph_def().SerializeToString()
        grads = tf.gradients(out["loss"], out["xs"]) if out.get("xs") else []
        with tf.Session() as s:
            feeds = out.get("feeds", {})
            if out.get("init") is not None:
                s.run(out["init"])
            ref_fwd, ref_grads = s.run([out["fetch"], grads], feeds)
    names = {"loss": out["loss"].name, "xs": [x.name for x in out.get("xs", [])],
             "fetch": [t.name for t in out["fetch"]], "feeds": {k.name: v for k, v in out.get("feeds", {}).items()},
             "init": out["init"].name if out.get("init") is not None else None}
    return gd, names, ref_fwd, ref_grads


def _dflow_run(gd, names):
    g = dflow.Graph()
    with g.as_default():
        dflow.import_graph_def(dflow.GraphDef.FromString(gd), name="")
        loss = g.get_tensor_by_name(names["loss"])
        xs = [g.get_tensor_by_name(n) for n in names["xs"]]
        grads = dflow.gradients(loss, xs) if xs else []
        with dflow.Session() as s:
            if names["init"]:
                s.run(names["init"])
            return s.run([names["fetch"], grads], names["feeds"])


def _compare(build, rtol=1e-5, atol=1e-5):
    gd, names, ref_fwd, ref_grads = _graphs(build)
    fwd, grads = _dflow_run(gd, names)
    assert_same(fwd, ref_fwd, rtol, atol, "forward")
    assert_same(grads, ref_grads, rtol, atol, "gradients")
    return fwd, grads


def _rnn_loop(tf, x, w, u, dynamic=False):
    """An RNN written with tf.while_loop over TensorArrays, as dynamic_rnn does."""
    steps = tf.shape(x)[0]
    inp = tf.TensorArray(tf.float32, size=steps, name="inp").unstack(x)
    out = tf.TensorArray(tf.float32, size=0 if dynamic else steps, dynamic_size=dynamic, name="out")
    h0 = tf.zeros([tf.shape(x)[1], 6])

    def body(t, h, ta):
        h = tf.tanh(tf.matmul(inp.read(t), w) + tf.matmul(h, u))
        return t + 1, h, ta.write(t, h)

    _, h, out = tf.while_loop(lambda t, *_: t < steps, body, [tf.constant(0), h0, out])
    return h, out.stack()


def test_rnn_while_loop_forward_and_gradients():
    def build(tf):
        x = tf.placeholder(tf.float32, [None, 3, 4], name="x")
        w = tf.placeholder(tf.float32, [4, 6], name="w")
        u = tf.placeholder(tf.float32, [6, 6], name="u")
        h, ys = _rnn_loop(tf, x, w, u)
        loss = tf.reduce_sum(ys * ys) + tf.reduce_sum(h)
        return {"loss": loss, "xs": [x, w, u], "fetch": [h, ys, loss], "feeds": {x: X, w: W, u: U}}
    _compare(build)


def test_dynamic_size_array_in_a_loop():
    def build(tf):
        x = tf.placeholder(tf.float32, [None, 3, 4], name="x")
        w = tf.constant(W)
        u = tf.constant(U)
        h, ys = _rnn_loop(tf, x, w, u, dynamic=True)
        loss = tf.reduce_sum(tf.tanh(ys) * ys)
        return {"loss": loss, "xs": [x], "fetch": [ys], "feeds": {x: X}}
    _compare(build)


def test_gather_scatter_concat_split_and_their_gradients():
    def build(tf):
        x = tf.placeholder(tf.float32, [6, 2], name="x")
        ta = tf.TensorArray(tf.float32, size=6, clear_after_read=False).unstack(x * 2.0)
        g = ta.gather([4, 0, 2])
        sc = tf.TensorArray(tf.float32, size=3).scatter([2, 0, 1], g * g).stack()
        sp = tf.TensorArray(tf.float32, size=3, infer_shape=False, clear_after_read=False).split(x, [1, 2, 3])
        cat = sp.concat()
        r1 = sp.read(2)
        loss = tf.reduce_sum(sc * 3.0) + tf.reduce_sum(tf.exp(cat * 0.1)) + tf.reduce_sum(r1)
        return {"loss": loss, "xs": [x], "fetch": [g, sc, cat, loss], "feeds": {x: X[0, :, :2].repeat(2, 0)}}
    _compare(build)


def test_reading_one_index_twice_adds_the_gradients():
    def build(tf):
        x = tf.placeholder(tf.float32, [3, 2], name="x")
        ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False).unstack(x)
        a, b = ta.read(1), ta.read(1)
        loss = tf.reduce_sum(a * 2.0 + b * b)
        return {"loss": loss, "xs": [x], "fetch": [a, loss], "feeds": {x: X[0, :, :2]}}
    _, grads = _compare(build)
    assert np.all(grads[0][0] == 0)


def test_array_made_in_each_iteration_and_size():
    def build(tf):
        x = tf.placeholder(tf.float32, [4], name="x")

        def body(i, acc):
            ta = tf.TensorArray(tf.float32, size=i + 1, element_shape=[4])
            ta = ta.write(i, x * tf.cast(i, tf.float32))
            return i + 1, acc + tf.reduce_sum(ta.stack(), 0) + tf.cast(ta.size(), tf.float32)
        _, acc = tf.while_loop(lambda i, a: i < 3, body, [tf.constant(0), tf.zeros([4])])
        loss = tf.reduce_sum(acc * acc)
        return {"loss": loss, "xs": [x], "fetch": [acc], "feeds": {x: X[0, 0]}}
    _compare(build)


def test_nested_loops_write_one_array():
    def build(tf):
        x = tf.placeholder(tf.float32, [3, 2], name="x")
        ta0 = tf.TensorArray(tf.float32, size=6)

        def outer(i, ta):
            def inner(j, ta):
                return j + 1, ta.write(i * 2 + j, x[i] * tf.cast(j + 1, tf.float32))
            _, ta = tf.while_loop(lambda j, _: j < 2, inner, [tf.constant(0), ta])
            return i + 1, ta
        _, ta = tf.while_loop(lambda i, _: i < 3, outer, [tf.constant(0), ta0])
        y = ta.stack()
        loss = tf.reduce_sum(y * y)
        return {"loss": loss, "xs": [x], "fetch": [y], "feeds": {x: X[0, :, :2]}}
    _compare(build)


def _error_class(run, gd, fetch):
    try:
        run(gd, fetch)
    except Exception as e:  # noqa: BLE001: the class is what is compared
        return type(e).__name__
    return None


@pytest.mark.parametrize("case", ["write_twice", "read_twice", "out_of_range", "unwritten", "closed",
                                  "split_sizes", "scatter_index", "empty_stack", "unwritten_zeros"])
def test_errors_as_tensorflow(case):
    def build(tf):
        ta = tf.TensorArray(tf.float32, size=2)
        one = tf.constant([1.0])
        if case == "write_twice":
            return ta.write(0, one).write(0, one).stack()
        if case == "read_twice":
            t = ta.write(0, one)
            return tf.stack([t.read(0), t.read(0)])
        if case == "out_of_range":
            return ta.write(2, one).stack()
        if case == "unwritten":
            return tf.TensorArray(tf.float32, size=2, infer_shape=False).read(1)
        if case == "closed":
            with tf.control_dependencies([ta.close()]):
                return ta.write(0, one).flow
        if case == "split_sizes":
            return tf.TensorArray(tf.float32, size=3).split(tf.constant([1.0, 2.0]), [1, 1]).flow
        if case == "scatter_index":
            return ta.scatter([0, 5], tf.constant([[1.0], [2.0]])).flow
        if case == "empty_stack":
            return tf.TensorArray(tf.float32, size=0).stack()
        if case == "unwritten_zeros":
            return ta.write(1, one).stack()
    gd, fetch = tf_graph_def(build)
    want = _error_class(run_tf, gd, fetch)
    got = _error_class(run_dflow, gd, fetch)
    assert got == want, "%s: dflow %s, TensorFlow %s" % (case, got, want)
    if want is None:
        assert_same(run_dflow(gd, fetch), run_tf(gd, fetch))


def _constant_getter(getter, name, shape=None, initializer=None, **kwargs):
    """Variables start from values fixed by their names (the same in TensorFlow and dflow)."""
    import zlib
    r = np.random.RandomState(zlib.crc32(name.encode()) % (2 ** 31))
    value = r.uniform(-0.5, 0.5, size=shape).astype(np.float32)
    return getter(name, shape=shape, initializer=real_tf().constant_initializer(value), **kwargs)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_tensorflow_dynamic_rnn_graph(cell):
    """TensorFlow's own tf.nn.dynamic_rnn graph (sequence lengths, an LSTM or GRU cell): the
    forward values and the gradients with respect to the inputs and the cell's variables."""
    def build(tf):
        from tensorflow.python.keras.layers.legacy_rnn import rnn_cell_impl
        x = tf.placeholder(tf.float32, [3, 5, 4], name="x")
        seq = tf.placeholder(tf.int32, [3], name="seq")
        with tf.variable_scope("model", custom_getter=_constant_getter):
            c = rnn_cell_impl.BasicLSTMCell(6) if cell == "lstm" else rnn_cell_impl.GRUCell(6)
            out, state = tf.nn.dynamic_rnn(c, x, sequence_length=seq, dtype=tf.float32)
        flat = list(state) if isinstance(state, tuple) else [state]
        loss = tf.reduce_sum(out * out) + tf.add_n([tf.reduce_sum(s) for s in flat])
        variables = tf.trainable_variables()
        return {"loss": loss, "xs": [x] + [v.value() for v in variables], "fetch": [out] + flat,
                "feeds": {x: np.transpose(X, (1, 0, 2)), seq: np.array([5, 2, 0], np.int32)},
                "init": tf.global_variables_initializer()}
    _compare(build, rtol=1e-4, atol=1e-5)


def test_all_any_reductions():
    """All and Any (in TensorFlow's dynamic_rnn sequence_length checks)."""
    b = np.array([[[True, False], [True, True]], [[False, False], [True, True]]])

    def build(tf):
        x = tf.constant(b)
        return [tf.reduce_all(x), tf.reduce_any(x), tf.reduce_all(x, 1), tf.reduce_any(x, [0, -1], keepdims=True),
                tf.reduce_all(x, []), tf.reduce_any(tf.zeros([0, 2], tf.bool), 0), tf.reduce_all(x, [2, 0])]
    gd, fetch = tf_graph_def(build)
    assert_same(run_dflow(gd, fetch), run_tf(gd, fetch))
    gd, fetch = tf_graph_def(lambda tf: tf.reduce_all(tf.constant(b), tf.placeholder_with_default(3, [])))
    assert _error_class(run_dflow, gd, fetch) == _error_class(run_tf, gd, fetch) == "InvalidArgumentError"


def test_gradient_of_the_final_state_only_with_unknown_batch():
    """No gradient reaches the output array: its gradient array is never written, and the
    backward loop reads zeros from it (the element shape is known from the forward writes)."""
    def build(tf):
        x = tf.placeholder(tf.float32, [None, None, 4], name="x")
        h, ys = _rnn_loop(tf, x, tf.constant(W), tf.constant(U))
        loss = tf.reduce_sum(h * h)
        return {"loss": loss, "xs": [x], "fetch": [h, ys], "feeds": {x: X}}
    _compare(build)
