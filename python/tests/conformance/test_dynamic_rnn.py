"""tf.TensorArray, tf.nn.dynamic_rnn, tf.nn.static_rnn and tf.nn.rnn_cell against real TensorFlow:
the same program under dflow and under TensorFlow 1.x (its legacy rnn_cell classes, which run
without Keras 2), the same weights (set by variable name, so the names must agree too), and the
outputs, final states and gradients compared."""
import zlib

import numpy as np
import pytest

from conftest import assert_same, real_tf, run_both

RNG = np.random.RandomState(1)
X = RNG.randn(3, 5, 4).astype(np.float32)  # [batch, time, depth]
LENGTHS = np.array([5, 2, 0], np.int32)


def _cells(m):
    if m is real_tf():
        from tensorflow.python.keras.layers.legacy_rnn import rnn_cell_impl
        return rnn_cell_impl
    return m.nn.rnn_cell


def _value_for(name, shape):
    r = np.random.RandomState(zlib.crc32(name.encode()) % (2 ** 31))
    return (r.uniform(-0.6, 0.6, size=shape)).astype(np.float32)


CELLS = {
    "basic_rnn": lambda c: c.BasicRNNCell(6),
    "basic_lstm": lambda c: c.BasicLSTMCell(6, forget_bias=0.5),
    "basic_lstm_concat_state": lambda c: c.BasicLSTMCell(5, state_is_tuple=False),
    "lstm_peepholes_projection": lambda c: c.LSTMCell(6, use_peepholes=True, num_proj=3, cell_clip=0.8,
                                                      proj_clip=0.5),
    "gru": lambda c: c.GRUCell(5),
    "multi": lambda c: c.MultiRNNCell([c.BasicLSTMCell(4), c.GRUCell(3)]),
    "wrappers": lambda c: c.MultiRNNCell([c.DropoutWrapper(c.BasicLSTMCell(4), 1.0, 1.0, 1.0),
                                          c.ResidualWrapper(c.DeviceWrapper(c.GRUCell(4), "/cpu:0"))]),
}


def _run_rnn(m, cell_name, time_major=False, lengths=False, initial_state=False, static=False, bidi=False):
    cell = CELLS[cell_name](_cells(m))
    x = m.placeholder(m.float32, [3, 5, 4], name="x")
    feeds = {x: X}
    seq = None
    if lengths:
        seq = m.placeholder(m.int32, [3], name="seq")
        feeds[seq] = LENGTHS
    init = None
    if initial_state:
        init = m.nest.map_structure(lambda t: t + 0.25, cell.zero_state(3, m.float32)) if hasattr(m, "nest") else \
            _add(m, cell.zero_state(3, m.float32))
    if bidi:
        inp = m.transpose(x, [1, 0, 2]) if time_major else x
        (fw, bw), (s_fw, s_bw) = m.nn.bidirectional_dynamic_rnn(
            cell, CELLS["gru"](_cells(m)), inp, sequence_length=seq, dtype=m.float32, time_major=time_major)
        out = m.concat([fw, bw], 2)
        state = (s_fw, s_bw)
    elif static:
        inputs = [x[:, t] for t in range(5)]
        outs, state = m.nn.static_rnn(cell, inputs, initial_state=init, sequence_length=seq, dtype=m.float32)
        out = m.stack(outs, 1)
    else:
        inp = m.transpose(x, [1, 0, 2]) if time_major else x
        out, state = m.nn.dynamic_rnn(cell, inp, sequence_length=seq, initial_state=init, dtype=m.float32,
                                      time_major=time_major)
    flat_state = _flatten(state)
    loss = m.reduce_sum(out * out) + sum(m.reduce_sum(s * 1.5) for s in flat_state)
    variables = sorted(m.trainable_variables(), key=lambda v: v.name)
    grads = m.gradients(loss, [x] + variables)
    sets = [m.assign(v, _value_for(v.name, v.shape.as_list())) for v in variables]
    with m.Session() as s:
        s.run(m.global_variables_initializer())
        s.run(sets)
        r = s.run({"out": out, "state": flat_state, "grads": grads}, feeds)
    r["variables"] = [v.name for v in variables]
    r["out_shape"] = str(out.shape)
    return r


def _flatten(x):
    if isinstance(x, (tuple, list)):
        return [y for e in x for y in _flatten(e)]
    return [x]


def _add(m, state):
    if isinstance(state, tuple):
        return type(state)(*[_add(m, s) for s in state]) if hasattr(state, "_fields") else \
            tuple(_add(m, s) for s in state)
    return state + 0.25


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_dynamic_rnn_cells(cell):
    d, t = run_both(lambda m: _run_rnn(m, cell))
    assert_same(d, t, rtol=1e-4, atol=1e-5)


VARIANTS = {"time_major": dict(time_major=True), "sequence_length": dict(lengths=True),
            "initial_state": dict(initial_state=True), "static": dict(static=True),
            "static_sequence_length": dict(static=True, lengths=True), "bidirectional": dict(bidi=True),
            "bidirectional_sequence_length_time_major": dict(bidi=True, lengths=True, time_major=True)}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_dynamic_rnn_variants(variant):
    kw = VARIANTS[variant]
    d, t = run_both(lambda m: _run_rnn(m, "basic_lstm", **kw))
    assert_same(d, t, rtol=1e-4, atol=1e-5)


def test_tensor_array_python_api():
    def fn(m):
        x = m.constant(X[0])  # [5, 4]
        ta = m.TensorArray(m.float32, size=5, clear_after_read=False)
        ta = ta.unstack(x)
        shapes = [str(ta.element_shape)]
        g = ta.gather([4, 1])
        r = ta.read(2)
        ta2 = m.TensorArray(m.float32, size=0, dynamic_size=True)
        ta2 = ta2.write(0, r).write(3, r * 2.0)
        st = ta2.stack()
        sp = m.TensorArray(m.float32, size=3, infer_shape=False).split(x, [1, 3, 1])
        cat = sp.concat()
        sc = m.TensorArray(m.float32, size=2, element_shape=[4]).scatter([1, 0], g).identity()
        sc_st = sc.stack()
        shapes += [str(g.shape), str(r.shape), str(st.shape), str(cat.shape), str(sc.element_shape),
                   str(sc_st.shape)]
        loss = m.reduce_sum(st * st) + m.reduce_sum(cat * 3.0) + m.reduce_sum(sc_st * g)
        grad = m.gradients(loss, x)[0]
        with m.Session() as s:
            out = s.run([g, r, st, ta2.size(), cat, sc_st, grad])
        return out, shapes
    d, t = run_both(fn)
    assert_same(d, t)


def test_tensor_array_in_while_loop_python():
    def fn(m):
        x = m.constant(X[:, :, 0])  # [3, 5]

        def body(i, acc, ta):
            return i + 1, acc + ta.read(i), ta

        ta = m.TensorArray(m.float32, size=3, clear_after_read=False).unstack(x)
        out = m.TensorArray(m.float32, size=3)

        def body2(i, acc, ta_out):
            acc = acc * 0.5 + ta.read(i)
            return i + 1, acc, ta_out.write(i, m.tanh(acc))
        _, acc, out = m.while_loop(lambda i, *_: i < 3, body2, [m.constant(0), m.zeros([5]), out])
        y = out.stack()
        grad = m.gradients(m.reduce_sum(y * y), x)[0]
        with m.Session() as s:
            return s.run([acc, y, grad]), str(y.shape)
    d, t = run_both(fn)
    assert_same(d, t)


def test_reverse_and_reverse_sequence():
    def fn(m):
        x = m.constant(X)
        lens = m.constant([5, 2, 0], m.int64)
        outs = [m.reverse(x, [1]), m.reverse(x, [0, -1]), m.reverse_sequence(x, lens, seq_axis=1, batch_axis=0),
                m.reverse_sequence(m.transpose(x, [1, 0, 2]), [4, 1, 3], seq_axis=0, batch_axis=1)]
        loss = sum(m.reduce_sum(o * m.constant(X)) for o in outs[:3])
        with m.Session() as s:
            return s.run(outs + m.gradients(loss, [x]))
    d, t = run_both(fn)
    assert_same(d, t)


def test_tensor_array_through_cond_and_grad_method():
    def fn(m):
        x = m.constant(X[0])  # [5, 4]
        p = m.placeholder(m.bool, [])
        ta = m.TensorArray(m.float32, size=6).unstack(x)
        ta = m.cond(p, lambda: ta.write(5, x[1] * 2.0), lambda: ta.identity())
        y = ta.stack()
        g = ta.grad("manual")  # the gradient array of the same handle
        gflow = g.write(1, x[0]).flow
        with m.control_dependencies([gflow]):
            got = g.identity().read(1)
        grad = m.gradients(m.reduce_sum(y * y), x)[0]
        with m.Session() as s:
            return [s.run([y, grad], {p: v}) for v in (True, False)] + [s.run(got, {p: False})]
    d, t = run_both(fn)
    assert_same(d, t)


def test_dropout_wrapper_drops_and_scales():
    import dflow as tf
    with tf.Graph().as_default():
        x = tf.constant(np.tile(X, (20, 1, 1)))  # [60, 5, 4]
        cell = tf.nn.rnn_cell.BasicLSTMCell(6)
        ref, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        drop, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.DropoutWrapper(cell, output_keep_prob=0.5, seed=3), x,
                                    dtype=tf.float32)
        assert len(tf.trainable_variables()) == 2  # the wrapper uses the cell's variables
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            r, d = s.run([ref, drop])
    kept = d != 0
    np.testing.assert_allclose(d[kept], 2 * r[kept], rtol=1e-5, atol=1e-6)
    assert 0.35 < kept.mean() < 0.65
