"""PartitionedCall and StatefulPartitionedCall against real TensorFlow: graphs that TensorFlow 2
writes when a tf.function is called in a tf.compat.v1 graph (a function library in the GraphDef,
call nodes naming a function), run from the same GraphDef bytes in TensorFlow and in dflow:
plain calls, nested functions, a function reading a resource variable passed in as a captured
input, a wrapper graph calling a concrete function's graph, and an error raised inside a
function. dflow does not differentiate through a call: gradients raise an error naming the op."""
import numpy as np
import pytest

import dflow
from conftest import assert_same
from tfref import run_dflow, run_tf, tf_graph_def

RNG = np.random.RandomState(0)
A = RNG.randn(3, 4).astype(np.float32)
B = RNG.randn(4, 2).astype(np.float32)


def _both(gd, fetches, feeds=None, targets=()):
    ref = run_tf(gd, fetches, feeds, targets)
    got = run_dflow(gd, fetches, feeds, targets)
    assert_same(got, ref)
    return ref


def _ops(gd):
    g = dflow.GraphDef.FromString(gd)
    return [n.op for n in g.node], [f.signature.name for f in g.library.function]


def test_call_of_a_tf_function():
    def build(tf):
        @tf.function
        def f(x, y):
            return tf.matmul(x, y) + 1, tf.reduce_sum(x)
        x = tf.placeholder(tf.float32, [3, 4], name="x")
        y = tf.placeholder(tf.float32, [4, 2], name="y")
        p, s = f(x, y)
        return [tf.identity(p, name="p"), tf.identity(s, name="s")]
    gd, fetches = tf_graph_def(build)
    ops, fns = _ops(gd)
    assert "PartitionedCall" in ops and fns
    _both(gd, fetches, {"x:0": A, "y:0": B})


def test_nested_functions():
    def build(tf):
        @tf.function
        def inner(a):
            return a * 2.0 - 1.0

        @tf.function
        def middle(a, b):
            return inner(tf.matmul(a, b)) + inner(tf.ones_like(tf.matmul(a, b)))

        @tf.function
        def outer(a, b):
            return tf.nn.relu(middle(a, b)), tf.cast(tf.shape(a), tf.int64)
        x = tf.placeholder(tf.float32, [3, 4], name="x")
        y = tf.placeholder(tf.float32, [4, 2], name="y")
        r, sh = outer(x, y)
        return [tf.identity(r, name="r"), tf.identity(sh, name="sh")]
    gd, fetches = tf_graph_def(build)
    g = dflow.GraphDef.FromString(gd)
    assert len(g.library.function) == 3
    assert any(n.op.endswith("PartitionedCall") for f in g.library.function for n in f.node_def)
    _both(gd, fetches, {"x:0": A, "y:0": B})


def test_function_reading_a_resource_variable():
    def build(tf):
        v = tf.Variable([[1.0, 2.0], [3.0, -4.0]], use_resource=True, name="v")

        @tf.function
        def f(a):
            return tf.matmul(a, v.read_value()) + v.read_value()[0]
        x = tf.placeholder(tf.float32, [3, 2], name="x")
        out = tf.identity(f(x), name="out")
        bump = v.assign_add(tf.ones([2, 2]), name="bump")
        return [out, v.initializer, bump]
    gd, (out, init, bump) = tf_graph_def(build)
    ops, _ = _ops(gd)
    assert "StatefulPartitionedCall" in ops
    x = RNG.randn(3, 2).astype(np.float32)
    _both(gd, out, {"x:0": x}, targets=[init])
    _both(gd, out, {"x:0": x}, targets=[init, bump])  # the function sees the variable's new value


def test_wrapper_graph_calling_a_concrete_function():
    import tensorflow as tf2

    concrete = tf2.function(lambda a, b: tf2.matmul(a, b) * 3.0).get_concrete_function(
        tf2.TensorSpec([3, 4], tf2.float32), tf2.TensorSpec([4, 2], tf2.float32))

    def build(tf):
        x = tf.placeholder(tf.float32, [3, 4], name="x")
        y = tf.placeholder(tf.float32, [4, 2], name="y")
        return tf.identity(concrete(x, y), name="out")
    gd, fetches = tf_graph_def(build)
    assert "PartitionedCall" in _ops(gd)[0] or "StatefulPartitionedCall" in _ops(gd)[0]
    _both(gd, fetches, {"x:0": A, "y:0": B})


def test_error_inside_a_function():
    def build(tf):
        @tf.function
        def f(a, shape):
            return tf.reshape(a, shape) * 2.0
        x = tf.placeholder(tf.float32, [3, 4], name="x")
        s = tf.placeholder(tf.int32, [2], name="s")
        return tf.identity(f(x, s), name="out")
    gd, out = tf_graph_def(build)
    good = {"x:0": A, "s:0": np.array([4, 3], np.int32)}
    _both(gd, out, good)
    bad = {"x:0": A, "s:0": np.array([5, 3], np.int32)}
    import tensorflow as tf2
    with pytest.raises(tf2.errors.InvalidArgumentError):
        run_tf(gd, out, bad)
    with pytest.raises(dflow.errors.InvalidArgumentError) as e:
        run_dflow(gd, out, bad)
    fn = [f.signature.name for f in dflow.GraphDef.FromString(gd).library.function][0]
    assert fn in str(e.value) and "Reshape" in str(e.value)


def test_gradients_through_a_call_raise_naming_the_op():
    def build(tf):
        @tf.function
        def f(a):
            return a * a
        x = tf.placeholder(tf.float32, [3], name="x")
        return tf.identity(f(x), name="out")
    gd, out = tf_graph_def(build)
    g = dflow.Graph()
    with g.as_default():
        dflow.import_graph_def(dflow.GraphDef.FromString(gd), name="")
        with pytest.raises(LookupError, match="PartitionedCall"):
            dflow.gradients(g.get_tensor_by_name(out), g.get_tensor_by_name("x:0"))
