"""tf.gradients over the C++ symbolic gradients, checked against TensorFlow's values."""
import pytest

from conftest import assert_same, run_both


def test_gradients_of_expressions():
    def run(tf):
        x = tf.placeholder(tf.float32, [3])
        w = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        y = tf.reduce_sum(tf.tanh(tf.matmul(tf.reshape(x, [1, 3]), w)) ** 2) + tf.reduce_mean(tf.exp(x) * x)
        z = tf.nn.softmax(tf.stack([x, x * 2.0])) if hasattr(tf, "nn") and hasattr(tf.nn, "softmax") else tf.sigmoid(x)
        gs = tf.gradients([y, tf.reduce_sum(z * z)], [x, w])
        g2 = tf.gradients(y, x, grad_ys=tf.constant(3.0))
        g3 = tf.gradients([tf.reduce_sum(x * x), tf.reduce_sum(x)], x, grad_ys=[None, tf.constant(2.0)])
        with tf.Session() as sess:
            return sess.run([gs, g2, g3], {x: [0.5, -1.0, 2.0]})
    ours, theirs = run_both(run)
    assert_same(ours, theirs, rtol=1e-5, atol=1e-5)


def test_gradients_of_variables_and_unconnected():
    def run(tf):
        w = tf.Variable([[1.0, -2.0], [0.5, 3.0]], name="w")
        b = tf.Variable([0.1, 0.2], name="b")
        unused = tf.Variable(1.0, name="unused")
        i = tf.Variable(3, name="i")
        x = tf.constant([[1.0, 2.0]])
        loss = tf.reduce_sum(tf.square(tf.matmul(x, w) + b))
        gs = tf.gradients(loss, [w, b, unused])
        stopped = tf.gradients(tf.stop_gradient(loss) * 2.0, [w])
        zero = tf.gradients(loss, [unused], unconnected_gradients="zero")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return [g is None for g in gs + stopped], sess.run([gs[0], gs[1], zero[0]]), [gs[0].name.split("/")[0]]
    ours, theirs = run_both(run)
    assert ours[0] == theirs[0] == [False, False, True, True]
    assert_same(ours[1], theirs[1])
    assert ours[2] == theirs[2] == ["gradients"]


def test_gradient_name_scopes():
    def run(tf):
        x = tf.constant(1.0)
        a = tf.gradients(x * x, x)[0]
        b = tf.gradients(x * x, x)[0]
        with tf.name_scope("outer"):
            c = tf.gradients(x * x, x, name="grads")[0]
        return [t.name.split("/")[0] + "/" + t.name.split("/")[1] if t.name.startswith("outer") else
                t.name.split("/")[0] for t in (a, b, c)]
    ours, theirs = run_both(run)
    assert ours == theirs


def test_no_gradient_defined_is_lookup_error(tf):
    x = tf.placeholder(tf.float32, [2])
    y = tf.cast(tf.argmax(x), tf.float32)
    # argmax has no gradient in TensorFlow either: the path is cut, not an error.
    assert tf.gradients(y, x) == [None]


def test_gradients_through_cond_and_while():
    def run(tf):
        x = tf.placeholder(tf.float32, [])
        y = tf.cond(x > 0, lambda: x * x * 3.0, lambda: tf.exp(x) * 2.0)
        i = tf.constant(0)
        _, p = tf.while_loop(lambda i, p: i < 4, lambda i, p: (i + 1, p * x), [i, tf.constant(1.0)])
        gy = tf.gradients(y, x)
        gp = tf.gradients(p, x)
        gboth = tf.gradients(y + p, x)
        out = []
        with tf.Session() as sess:
            for v in (2.0, -1.5):
                out.append(sess.run([y, gy, p, gp, gboth], {x: v}))
        return out
    ours, theirs = run_both(run)
    assert_same(ours, theirs, rtol=1e-5)


def test_second_order_gradients():
    def run(tf):
        x = tf.placeholder(tf.float32, [2])
        y = tf.reduce_sum(x * x * x)
        (g,) = tf.gradients(y, x)
        (gg,) = tf.gradients(tf.reduce_sum(g), x)
        with tf.Session() as sess:
            return sess.run([g, gg], {x: [1.0, -2.0]})
    ours, theirs = run_both(run)
    assert_same(ours, theirs)


def test_gradients_wrong_graph_raises(tf):
    x = tf.constant(1.0)
    with tf.Graph().as_default():
        y = tf.constant(2.0)
        with pytest.raises(ValueError):
            tf.gradients(y, x)


def test_hessians():
    def run(tf):
        x = tf.Variable([1.0, 2.0, 3.0])
        y = tf.reduce_sum(x * x * x) + x[0] * x[1]
        h = tf.hessians(y, x)
        with tf.Session() as sess:
            sess.run(x.initializer)
            return sess.run(h)
    ours, theirs = run_both(run)
    assert_same(ours, theirs)
