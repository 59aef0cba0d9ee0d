"""Graphs, tensors, operators and sessions: the core of the binding, checked against TensorFlow."""
import collections

import numpy as np
import pytest

from conftest import assert_same, run_both


def test_printed_tensor_is_tensorflows(tf):
    assert str(tf.add(3, 5)) == 'Tensor("Add:0", shape=(), dtype=int32)'
    assert str(tf.add(3, 5)) == 'Tensor("Add_1:0", shape=(), dtype=int32)'
    p = tf.placeholder(tf.float32, [None, 3], name="x")
    assert str(p) == 'Tensor("x:0", shape=(?, 3), dtype=float32)'


def test_names_match_tensorflow():
    def build(tf):
        c = tf.constant(2.0)
        ts = [tf.add(3, 5), c + 1, 1 + c, c - 1, 2 * c, c / 2, c // 2, c % 2, c ** 2, -c, abs(c), c < 1,
              tf.multiply(c, c), tf.subtract(c, c), tf.divide(c, c), tf.pow(c, 2.), tf.reduce_sum([1., 2.]),
              tf.matmul([[1.]], [[2.]]), tf.cast(c, tf.int32), tf.square(c), tf.maximum(c, 1.), tf.add_n([c, c]),
              tf.fill([2], 3), tf.equal(c, c), tf.zeros([2]), tf.ones([2, 2])]
        with tf.name_scope("outer"):
            with tf.name_scope("inner"):
                ts.append(tf.add(1, 2))
            with tf.name_scope("inner"):
                ts.append(tf.add(1, 2, name="named"))
            ts.append(tf.add(1, 2, name="named"))
        # Reductions' axis inputs are built differently (a Const here, a Range in TensorFlow).
        return [(t.name, t.op.type, [i.name for i in t.op.inputs][:1 if t.op.type == "Sum" else None]) for t in ts]
    ours, theirs = run_both(build)
    assert ours == theirs


def test_seed_graph_basics(tf):
    x, y = 2, 3
    op1 = tf.add(x, y)
    op2 = tf.multiply(x, y)
    useless = tf.multiply(x, op1)
    op3 = tf.pow(op2, op1)
    with tf.Session() as sess:
        assert sess.run(op3) == 7776
        z, not_useless = sess.run([op3, useless])
        assert (z, not_useless) == (7776, 10)
    a = tf.constant([1.0, 2.0])
    b = tf.placeholder(tf.float32, [2])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(a + b, {b: [2.0, 5.0]}), np.array([3.0, 7.0], np.float32))


def test_unneeded_nodes_do_not_run(tf):
    # A node that would fail if run is not needed by the fetch: pruning leaves it out.
    x = tf.placeholder(tf.float32, [])
    bad = tf.sqrt(x)  # needs x fed
    ok = tf.constant(5) * 3
    with tf.Session() as sess:
        assert sess.run(ok) == 15
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(bad)


def test_fetch_structures():
    def run(tf):
        a = tf.constant(1)
        b = tf.constant([2.0, 3.0])
        noop = tf.no_op()
        Pair = collections.namedtuple("Pair", "x y")
        with tf.Session() as sess:
            return sess.run({"a": a, "nested": [b, (a, Pair(a, b))], "op": noop, "name": "Const:0"})
    ours, theirs = run_both(run)
    assert type(ours["nested"][1][1]).__name__ == "Pair"
    assert_same(ours, theirs)


def test_fetch_types_match_tensorflow():
    def run(tf):
        vals = [tf.constant(1), tf.constant(1.5), tf.constant(2.5, tf.float64), tf.constant(True),
                tf.constant(b"abc"), tf.constant(["x", "yz"]), tf.constant(7, tf.int64), tf.constant([[1, 2]], tf.uint8)]
        with tf.Session() as sess:
            out = sess.run(vals)
        return [(type(v).__name__, getattr(v, "dtype", None) and str(v.dtype), v.tolist() if hasattr(v, "tolist") else v)
                for v in out]
    ours, theirs = run_both(run)
    assert ours == theirs


def test_feeds_convert_like_tensorflow():
    def run(tf):
        p = tf.placeholder(tf.float32)
        q = tf.placeholder(tf.int64, [2])
        s = tf.placeholder(tf.string)
        with tf.Session() as sess:
            return sess.run([p * 2, q + 1, tf.identity(s)], {p: [[1, 2]], q: np.array([1, 2], np.int32), s: ["a", b"b"]})
    ours, theirs = run_both(run)
    assert_same(ours, theirs)


def test_feed_by_name_and_eval(tf):
    x = tf.placeholder(tf.int32, name="x")
    y = x * 2
    with tf.Session() as sess:
        assert sess.run(y, {"x:0": 4}) == 8
        assert y.eval({x: 5}) == 10
        assert y.eval(feed_dict={x: 6}, session=sess) == 12


def test_interactive_session(tf):
    sess = tf.InteractiveSession()
    try:
        assert (tf.constant(3) + 4).eval() == 7
        tf.no_op().run()
    finally:
        sess.close()
    with pytest.raises(ValueError):
        tf.constant(1).eval()


def test_errors_are_tensorflows_classes(both):
    tf = both
    p = tf.placeholder(tf.float32, [2])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(p)  # not fed
        with pytest.raises(ValueError):
            sess.run(p, {p: [1.0, 2.0, 3.0]})  # wrong shape
        with pytest.raises(ValueError):
            sess.run(p, {p: [[1.0], [2.0, 3.0]]})  # ragged
        with pytest.raises(TypeError):
            sess.run(12)  # not a fetch
        with pytest.raises((KeyError, ValueError)):
            sess.run("nope:0")
    with pytest.raises(RuntimeError):
        sess.run(p, {p: [1.0, 2.0]})  # closed
    with pytest.raises(TypeError):
        tf.add(tf.constant(1), tf.constant(1.0))  # dtype mismatch
    with pytest.raises(ValueError):
        tf.matmul(tf.constant([[1.0, 2.0]]), tf.constant([[1.0, 2.0]]))  # shapes


def test_tensor_from_another_graph(tf):
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default():
        a = tf.constant(1)
    with g2.as_default():
        with tf.Session() as sess:
            with pytest.raises(ValueError):
                sess.run(a)


def test_graph_is_reusable_after_a_build_error(tf):
    with pytest.raises(ValueError):
        tf.matmul(tf.constant([[1.0, 2.0]]), tf.constant([[1.0, 2.0]]))
    c = tf.constant(2) * 21
    with tf.Session() as sess:
        assert sess.run(c) == 42


def test_sessions_have_their_own_state(tf):
    # In TensorFlow each local session has its own variable values.
    q = tf.raw_ops.FIFOQueueV2(component_types=[tf.int32], shapes=[[]], capacity=10)
    enq = tf.raw_ops.QueueEnqueueV2(handle=q, components=[tf.constant(1)])
    size = tf.raw_ops.QueueSizeV2(handle=q)
    with tf.Session() as s1, tf.Session() as s2:
        s1.run(enq)
        s1.run(enq)
        assert s1.run(size) == 2
        assert s2.run(size) == 0


def test_zero_copy_fetch_does_not_alias_state(tf):
    c = tf.constant([1.0, 2.0])
    with tf.Session() as sess:
        a = sess.run(c)
        a[0] = 100.0
        np.testing.assert_array_equal(sess.run(c), [1.0, 2.0])


def test_indexing_and_operators():
    def run(tf):
        x = tf.constant(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
        outs = [x[0], x[:, 1], x[..., -1], x[1, 1:3, ::2], x[:, tf.newaxis, 0], x @ tf.ones([4, 2]),
                tf.transpose(x), tf.reshape(x, [6, -1]), tf.concat([x, x], axis=-1), tf.stack([x[0], x[1]], 1),
                tf.unstack(x)[1], tf.split(x, 2, axis=2)[1], tf.expand_dims(x, 0), tf.squeeze(x[:1])]
        with tf.Session() as sess:
            return sess.run(outs)
    ours, theirs = run_both(run)
    assert_same(ours, theirs)


def test_graph_collections_and_lookup(tf):
    g = tf.get_default_graph()
    c = tf.constant(1, name="c")
    tf.add_to_collection("mine", c)
    assert tf.get_collection("mine") == [c]
    assert g.get_tensor_by_name("c:0") is c
    assert g.get_operation_by_name("c") is c.op
    assert [op.name for op in g.get_operations()] == ["c"]
    with pytest.raises(KeyError):
        g.get_tensor_by_name("missing:0")


def test_finalized_graph_refuses_ops(tf):
    g = tf.get_default_graph()
    g.finalize()
    with pytest.raises(RuntimeError):
        tf.constant(1)


def test_every_registered_op_has_a_function(tf):
    from dflow import _dflow
    from dflow.ops import gen_ops
    names = [d["name"] for d in _dflow.op_defs() if not d["name"].startswith("_")]
    assert len(names) > 200
    for n in names:
        assert getattr(tf.raw_ops, n) is gen_ops.OPS[n]
    assert gen_ops.mat_mul is gen_ops.OPS["MatMul"]
    assert gen_ops.to_snake_case("Conv2DBackpropInput") == "conv2d_backprop_input"
    assert gen_ops.to_snake_case("TFRecordDataset") == "tf_record_dataset"
    r = gen_ops.mat_mul([[1.0, 2.0]], [[3.0], [4.0]], transpose_b=False)
    with tf.Session() as sess:
        assert sess.run(r).tolist() == [[11.0]]


def test_set_shape_reaches_the_shape_inference_of_later_ops():
    def run(tf):
        p = tf.placeholder(tf.float32)
        p.set_shape([None, 3])
        q = tf.matmul(p, tf.ones([3, 2]))
        r = tf.reshape(p, [-1])
        with pytest.raises(ValueError):
            p.set_shape([2, 4])
        return [q.shape.as_list(), r.shape.as_list(), p.shape.as_list()]
    ours, theirs = run_both(run)
    assert ours == theirs == [[None, 2], [None], [None, 3]]
