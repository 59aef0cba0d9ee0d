"""tf.layers against TensorFlow's own tf.layers code (the legacy layers TensorFlow still ships):
node and variable names, collections, shapes, and output values with the same initial values."""
import types

import numpy as np
import pytest

from conftest import assert_same, real_tf, run_both

import dflow

RNG = np.random.RandomState(11)
X2 = RNG.randn(5, 3).astype(np.float32)
X3 = RNG.randn(2, 4, 3).astype(np.float32)
IMG = RNG.randn(2, 8, 7, 3).astype(np.float32)
W = RNG.randn(3, 4).astype(np.float32)
B = RNG.randn(4).astype(np.float32)
K = RNG.randn(3, 3, 3, 5).astype(np.float32)
KB = RNG.randn(5).astype(np.float32)


def layers_of(tf):
    """tf.layers: dflow's, or TensorFlow's legacy layer modules (tf.compat.v1.layers itself now
    needs Keras 2)."""
    if tf is dflow:
        return dflow.layers
    real_tf()
    from tensorflow.python.keras.legacy_tf_layers import convolutional, core, pooling
    ns = types.SimpleNamespace()
    for mod in (core, convolutional, pooling):
        for name in dir(mod):
            if not name.startswith("_"):
                setattr(ns, name, getattr(mod, name))
    return ns


def _run(tf, fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_dense_names_variables_and_values():
    def build(tf):
        L = layers_of(tf)
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        c = tf.constant_initializer
        outs = [L.dense(x, 4, kernel_initializer=c(W), bias_initializer=c(B)),
                L.dense(x, 4, activation=tf.nn.relu, kernel_initializer=c(W), bias_initializer=c(B)),
                L.dense(x, 4, name="named", use_bias=False, kernel_initializer=c(W)),
                L.dense(x, 4, name="named", reuse=True, use_bias=False),
                L.dense(tf.constant(X3), 4, kernel_initializer=c(W), bias_initializer=c(B), activation="tanh")]
        with tf.variable_scope("outer"):
            outs.append(L.dense(x, 4, kernel_initializer=c(W), bias_initializer=c(B)))
            layer = L.Dense(4, kernel_initializer=c(W), bias_initializer=c(B), activation=tf.nn.sigmoid)
            outs.append(layer(x))
            outs.append(layer(x * 2))
        with tf.variable_scope("outer", reuse=True):
            outs.append(L.dense(x, 4, name="dense"))
        info = {"outputs": [(t.name, str(t.shape)) for t in outs],
                "globals": [v.name for v in tf.global_variables()],
                "trainable": [v.name for v in tf.trainable_variables()],
                "layer": [layer.name, layer.scope_name, [w.name for w in layer.weights], layer.built,
                          [w.name for w in layer.trainable_weights], layer.kernel.name, layer.units]}
        info["values"] = _run(tf, outs, {x: X2})
        return info
    ours, theirs = run_both(build)
    assert_same(ours, theirs)


def test_dense_trainable_regularizers_and_errors():
    def build(tf):
        L = layers_of(tf)
        x = tf.placeholder(tf.float32, [None, 3])
        a = L.dense(x, 2, trainable=False, kernel_initializer=tf.constant_initializer(W[:, :2]))
        b = L.dense(x, 2, kernel_regularizer=lambda w: tf.reduce_sum(tf.abs(w)),
                    bias_regularizer=lambda w: 2. * tf.reduce_sum(w), kernel_initializer=tf.constant_initializer(W[:, 2:]),
                    bias_initializer=tf.constant_initializer([1., 2.]))
        L.dense(x, 2, activity_regularizer=lambda o: tf.reduce_sum(o * o),
                kernel_initializer=tf.constant_initializer(W[:, 1:3]))
        regs = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
        info = {"trainable": [v.name for v in tf.trainable_variables()], "global": [v.name for v in tf.global_variables()],
                "regs": [r.name for r in regs], "names": [a.name, b.name]}
        info["values"] = _run(tf, [a, b] + regs + [tf.losses.get_regularization_loss()], {x: X2})
        return info
    ours, theirs = run_both(build)
    assert_same(ours, theirs)

    for m in (dflow, real_tf()):
        with m.Graph().as_default():
            L = layers_of(m)
            with pytest.raises(ValueError):
                L.dense(m.placeholder(m.float32, [None, None]), 3)  # last dimension unknown
            with pytest.raises(ValueError):
                L.dense(m.placeholder(m.float32, [None, 3]), 3, name="d", reuse=True)  # nothing to reuse
            L.dense(m.placeholder(m.float32, [None, 3]), 3, name="e")
            with pytest.raises(ValueError):
                L.dense(m.placeholder(m.float32, [None, 4]), 3, name="e", reuse=True)  # another shape


def test_conv_pool_flatten():
    def build(tf):
        L = layers_of(tf)
        x = tf.placeholder(tf.float32, [None, 8, 7, 3])
        c = tf.constant_initializer
        # (TensorFlow builds a dilated convolution through space_to_batch: its node names differ)
        dilated = L.conv2d(x, 5, [3, 3], dilation_rate=2, padding="SAME", use_bias=False, kernel_initializer=c(K),
                           name="dil")
        outs = [L.conv2d(x, 5, 3, kernel_initializer=c(K), bias_initializer=c(KB)),
                L.conv2d(x, 5, (3, 3), strides=2, padding="same", activation=tf.nn.relu, kernel_initializer=c(K),
                         bias_initializer=c(KB))]
        conv = L.Conv2D(5, 3, padding="valid", kernel_initializer=c(K), bias_initializer=c(KB))
        outs.append(conv(x))
        outs += [L.max_pooling2d(x, 2, 2), L.max_pooling2d(x, [3, 2], [1, 2], padding="same"),
                 L.average_pooling2d(x, 3, 2, padding="same"), L.AveragePooling2D(2, 1)(x),
                 L.MaxPooling2D((2, 2), (2, 2), name="mp")(x), L.flatten(x), L.Flatten()(outs[0])]
        outs.append(L.conv2d_transpose(outs[0], 3, 3, kernel_initializer=c(np.transpose(K, (0, 1, 3, 2))[:, :, :, :])))
        outs.append(L.conv2d_transpose(outs[1], 3, 3, strides=2, padding="same",
                                       kernel_initializer=c(np.transpose(K, (0, 1, 3, 2)))))
        info = {"outputs": [(t.name, str(t.shape)) for t in outs], "globals": [v.name for v in tf.global_variables()],
                "conv": [conv.name, conv.kernel_size, conv.strides, conv.padding, conv.filters]}
        info["dilated"] = str(dilated.shape)
        info["values"] = _run(tf, outs + [dilated], {x: IMG})
        return info
    ours, theirs = run_both(build)
    assert_same(ours, theirs, rtol=1e-4, atol=1e-5)


def test_conv_pool_errors():
    for m in (dflow, real_tf()):
        with m.Graph().as_default():
            L = layers_of(m)
            x = m.placeholder(m.float32, [None, 8, 8, 3])
            with pytest.raises(ValueError):
                L.conv2d(x, 4, (3, 3, 3))
            with pytest.raises(ValueError):
                L.conv2d(x, 4, 3, padding="full")
            with pytest.raises(ValueError):
                L.max_pooling2d(x, 2, None)
            with pytest.raises(ValueError):
                L.conv2d(m.placeholder(m.float32, [None, 8, 8]), 4, 3)  # rank 3


def test_dropout_layer():
    x = np.ones((300, 20), np.float32)

    def build(tf):
        L = layers_of(tf)
        ph = tf.placeholder(tf.float32, [None, 20])
        training = tf.placeholder(tf.bool, [])
        outs = [L.dropout(ph), L.dropout(ph, 0.25, training=True), L.dropout(ph, rate=0.5, training=training),
                L.Dropout(0.5, noise_shape=[None, 1])(ph, training=True), L.dropout(ph, training=tf.constant(False))]
        names = [(t.name, str(t.shape)) for t in outs]
        with tf.Session() as sess:
            on = sess.run(outs, {ph: x, training: True})
            off = sess.run(outs[2], {ph: x, training: False})
        return names, on, off
    (ours_names, ours, ours_off), (theirs_names, theirs, theirs_off) = run_both(build)
    assert ours_names == theirs_names
    for vals in (ours, theirs):
        np.testing.assert_array_equal(vals[0], x)
        np.testing.assert_array_equal(vals[4], x)
        # kept fractions within about five standard errors (6000 draws; 300 for one per row)
        for out, keep, tol in ((vals[1], 0.75, 0.03), (vals[2], 0.5, 0.035), (vals[3], 0.5, 0.15)):
            np.testing.assert_allclose(out[out != 0], 1 / keep, rtol=1e-6)
            assert abs((out != 0).mean() - keep) < tol
        assert all(len(set(row)) == 1 for row in vals[3])
    np.testing.assert_array_equal(ours_off, x)
    np.testing.assert_array_equal(theirs_off, x)


def test_layer_objects_share_variables():
    def build(tf):
        L = layers_of(tf)
        x = tf.placeholder(tf.float32, [None, 3])
        layer = L.Dense(4, kernel_initializer=tf.constant_initializer(W), name="shared")
        a = layer(x)
        b = layer.apply(x + 1)
        unnamed = [L.Dense(2), L.Dense(2)]
        for u in unnamed:
            u(x)
        info = [layer.name, layer.scope_name, a.name, b.name, [v.name for v in tf.global_variables()],
                [u.name for u in unnamed], [u.scope_name for u in unnamed], len(layer.variables)]
        vals = _run(tf, [a, b], {x: X2})
        return info, vals
    ours, theirs = run_both(build)
    assert_same(ours, theirs)


def test_dense_gradients():
    def build(tf):
        L = layers_of(tf)
        x = tf.placeholder(tf.float32, [None, 3])
        h = L.dense(x, 4, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(W),
                    bias_initializer=tf.constant_initializer(B))
        y = L.dense(h, 1, kernel_initializer=tf.constant_initializer(np.ones((4, 1), np.float32)))
        loss = tf.reduce_mean(tf.square(y - 1.0))
        grads = tf.gradients(loss, tf.trainable_variables())
        return _run(tf, [loss] + grads, {x: X2})
    ours, theirs = run_both(build)
    assert_same(ours, theirs, rtol=1e-5, atol=1e-6)


# ---- batch normalization (TensorFlow's legacy layer needs Keras 2: checked against numpy) --------


def _bn_reference(x, axes, gamma, beta, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta, mean.squeeze(), var.squeeze()


@pytest.mark.parametrize("shape,axis", [((6, 4), -1), ((2, 5, 4, 3), -1), ((2, 3, 4, 5), 1), ((3, 4, 5), 1)])
def test_batch_normalization_training_and_updates(tf, shape, axis):
    x = RNG.randn(*shape).astype(np.float32) * 3 + 1
    nd = len(shape)
    ax = axis % nd
    axes = tuple(i for i in range(nd) if i != ax)
    c = shape[ax]
    gamma = RNG.rand(c).astype(np.float32) + 0.5
    beta = RNG.randn(c).astype(np.float32)
    ph = tf.placeholder(tf.float32, shape)
    y = tf.layers.batch_normalization(ph, axis=axis, training=True, epsilon=1e-3,
                                      gamma_initializer=tf.constant_initializer(gamma),
                                      beta_initializer=tf.constant_initializer(beta))
    assert [v.name for v in tf.global_variables()] == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0", "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0"]
    assert [v.name for v in tf.trainable_variables()] == ["batch_normalization/gamma:0", "batch_normalization/beta:0"]
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    bshape = [1] * nd
    bshape[ax] = c
    want, mean, var = _bn_reference(x, axes, gamma.reshape(bshape), beta.reshape(bshape), 1e-3)
    n = x.size // c
    # 4-D inputs over their channel axis take TensorFlow's fused path: the moving variance gets
    # the unbiased batch variance; other inputs the biased one.
    var_update = var * n / (n - 1) if nd == 4 else var
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = sess.run(y, {ph: x})
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
        sess.run(updates, {ph: x})
        mm, mv = sess.run(["batch_normalization/moving_mean:0", "batch_normalization/moving_variance:0"])
    np.testing.assert_allclose(mm, 0.01 * mean, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mv, 0.99 + 0.01 * var_update, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(6, 4), (2, 5, 4, 3)])
def test_batch_normalization_inference_and_training_tensor(tf, shape):
    x = RNG.randn(*shape).astype(np.float32) * 2 + 3
    ph = tf.placeholder(tf.float32, shape)
    training = tf.placeholder(tf.bool, [])
    layer = tf.layers.BatchNormalization(momentum=0.9, epsilon=0.01)
    y = layer(ph, training=training)
    y_inf = layer(ph)  # training=False: the moving statistics, no update
    assert [v.name for v in layer.variables] == [
        "batch_normalization/gamma:0", "batch_normalization/beta:0", "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0"]
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2 and len(layer.updates) == 2
    axes = tuple(range(len(shape) - 1))
    want_train, mean, var = _bn_reference(x, axes, 1.0, 0.0, 0.01)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(y_inf, {ph: x}), x / np.sqrt(1.01), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(sess.run(y, {ph: x, training: False}), x / np.sqrt(1.01), rtol=1e-5, atol=1e-5)
        sess.run(updates, {ph: x, training: False})  # not training: the moving statistics stay
        np.testing.assert_allclose(sess.run(layer.moving_mean), np.zeros(shape[-1]), atol=1e-7)
        np.testing.assert_allclose(sess.run(y, {ph: x, training: True}), want_train, rtol=1e-4, atol=1e-4)
        sess.run(updates, {ph: x, training: True})
        np.testing.assert_allclose(sess.run(layer.moving_mean), 0.1 * mean, rtol=1e-4, atol=1e-5)


def test_batch_normalization_train_op_with_update_ops(tf):
    x = RNG.randn(8, 3).astype(np.float32)
    ph = tf.placeholder(tf.float32, [None, 3])
    h = tf.layers.batch_normalization(tf.layers.dense(ph, 3), training=True)
    loss = tf.reduce_mean(tf.square(h))
    train_op = tf.group(tf.train.GradientDescentOptimizer(0.1).minimize(loss),
                        *tf.get_collection(tf.GraphKeys.UPDATE_OPS))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, {ph: x})
        mm = sess.run("batch_normalization/moving_mean:0")
    assert np.abs(mm).sum() > 0  # the moving mean moved with the training step


def test_one_dimensional_layers():
    seq = RNG.randn(2, 9, 3).astype(np.float32)
    k1 = RNG.randn(3, 3, 4).astype(np.float32)

    def build(tf):
        L = layers_of(tf)
        x = tf.placeholder(tf.float32, [None, 9, 3])
        c = tf.constant_initializer
        outs = [L.conv1d(x, 4, 3, kernel_initializer=c(k1), bias_initializer=c([1., 2., 3., 4.])),
                L.conv1d(x, 4, 3, strides=2, padding="same", activation=tf.nn.relu, kernel_initializer=c(k1)),
                L.Conv1D(4, 3, dilation_rate=2, padding="same", kernel_initializer=c(k1))(x),
                L.max_pooling1d(x, 2, 2), L.average_pooling1d(x, 3, 1, padding="same"),
                L.MaxPooling1D(3, 2, padding="same")(x)]
        info = {"shapes": [str(t.shape) for t in outs], "globals": [v.name for v in tf.global_variables()]}
        info["values"] = _run(tf, outs, {x: seq})
        return info
    ours, theirs = run_both(build)
    assert_same(ours, theirs, rtol=1e-4, atol=1e-5)
