"""Whole models: graphs built by TensorFlow (tf.compat.v1 graph mode) — forward pass, gradients and
the optimizer's Apply* update ops — trained in TensorFlow and, from the same GraphDef bytes, in
dflow, with the same feed batches. Every variable starts from a constant written into the graph, so
both sides start from identical values; the loss of every step and every variable at the end
(weights and optimizer slots) are compared.

Tolerances (float32). One step of these models is a few hundred float32 operations whose results
may differ in the last bits between the two (summation order of MatMul/Conv2D/reductions,
TensorFlow's vectorized tanh/sigmoid/exp approximations against the C library's): about 1e-7
relative, a few ulps. Training feeds such differences back through the weights, so they grow with
the number of steps and with how chaotic the model is; these are small, well-conditioned models at
moderate learning rates, trained STEPS steps. Measured: losses agree to ~1e-6 relative at every
step (the largest, 1.4e-5, a near-zero L1 loss), and the final variables and slots use at most 4%
of the allowance |dflow - tf| <= ATOL + RTOL |tf|. So: the first steps and one-step updates at
rtol 1e-5 (every op, gradient and Apply* update of the graph checked once, before any
accumulation), the loss curve and final variables at rtol 1e-4, atol 1e-5 (values near zero: slots
such as RMSProp's mean square). A wrong gradient, optimizer formula or missing update moves the
losses in the second or third digit within a few steps, far outside these.
"""
import os
import subprocess

import numpy as np
import pytest

import dflow
from conftest import BUILD
from tfref import real_tf, run_tf, tf_graph_def

STEPS = 200
FIRST_RTOL = 1e-5
RTOL = 1e-4
ATOL = 1e-5


# ---- layers written with variables and tf.nn ops (tf.compat.v1.layers needs Keras 2) ----

def _var(tf, name, value, trainable=True):
    return tf.compat.v1.get_variable(name, initializer=tf.constant(np.asarray(value, np.float32)),
                                     trainable=trainable)


def _dense(tf, rng, name, x, n_in, n_out):
    w = _var(tf, name + "/kernel", rng.uniform(-1, 1, (n_in, n_out)) / np.sqrt(n_in))
    b = _var(tf, name + "/bias", rng.uniform(-0.1, 0.1, (n_out,)))
    return tf.matmul(x, w) + b


def _lstm_step(tf, x, h, c, w, b):
    """One step of an LSTM (TensorFlow's BasicLSTMCell: gates i, j, f, o; forget bias 1)."""
    i, j, f, o = tf.split(tf.matmul(tf.concat([x, h], 1), w) + b, 4, axis=1)
    c = tf.sigmoid(f + 1.0) * c + tf.sigmoid(i) * tf.tanh(j)
    return tf.sigmoid(o) * tf.tanh(c), c


def _result(tf, loss, train):
    return dict(init=tf.compat.v1.global_variables_initializer(), train=train, loss=loss,
                variables={v.op.name: v.name if v.dtype._is_ref_dtype else v.read_value().name
                           for v in tf.compat.v1.global_variables()})


# ---- the models: build(tf) -> names; batches(rng, step) -> feed dict ----

def mlp(tf):
    """Two dense layers, tf.compat.v1.losses.sparse_softmax_cross_entropy (DivNoNan), Adam."""
    rng = np.random.RandomState(10)
    x = tf.compat.v1.placeholder(tf.float32, [None, 10], name="x")
    y = tf.compat.v1.placeholder(tf.int32, [None], name="y")
    h = tf.nn.relu(_dense(tf, rng, "d1", x, 10, 16))
    logits = _dense(tf, rng, "d2", h, 16, 3)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(y, logits)
    train = tf.compat.v1.train.AdamOptimizer(0.01).minimize(loss)
    return _result(tf, loss, train)


_TEACHER = np.random.RandomState(1).normal(size=(10, 3))


def mlp_batch(rng, step):
    x = rng.normal(size=(32, 10)).astype(np.float32)
    return {"x:0": x, "y:0": np.argmax(x @ _TEACHER, axis=1).astype(np.int32)}


def cnn(tf):
    """conv2d, fused batch norm in training mode with moving-average updates, max_pool, dense,
    sparse softmax cross entropy, Momentum."""
    rng = np.random.RandomState(11)
    x = tf.compat.v1.placeholder(tf.float32, [None, 8, 8, 1], name="x")
    y = tf.compat.v1.placeholder(tf.int32, [None], name="y")
    k = _var(tf, "conv/kernel", rng.uniform(-0.3, 0.3, (3, 3, 1, 4)))
    c = tf.nn.conv2d(x, k, strides=[1, 1, 1, 1], padding="SAME")
    gamma = _var(tf, "bn/gamma", np.ones(4))
    beta = _var(tf, "bn/beta", np.zeros(4))
    moving_mean = _var(tf, "bn/moving_mean", np.zeros(4), trainable=False)
    moving_var = _var(tf, "bn/moving_variance", np.ones(4), trainable=False)
    bn, mean, var = tf.compat.v1.nn.fused_batch_norm(c, gamma, beta, epsilon=1e-3, is_training=True)
    updates = [tf.compat.v1.assign_sub(moving_mean, (moving_mean - mean) * 0.1),
               tf.compat.v1.assign_sub(moving_var, (moving_var - var) * 0.1)]
    h = tf.nn.max_pool2d(tf.nn.relu(bn), ksize=2, strides=2, padding="VALID")
    logits = _dense(tf, rng, "fc", tf.reshape(h, [-1, 64]), 64, 3)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    with tf.control_dependencies(updates):
        train = tf.compat.v1.train.MomentumOptimizer(0.05, 0.9).minimize(loss)
    return _result(tf, loss, train)


def cnn_batch(rng, step):
    x = rng.normal(size=(16, 8, 8, 1)).astype(np.float32)
    # class: which third of the image (left, middle, right columns) has the largest sum
    thirds = [x[:, :, :3].sum(axis=(1, 2, 3)), x[:, :, 3:5].sum(axis=(1, 2, 3)), x[:, :, 5:].sum(axis=(1, 2, 3))]
    return {"x:0": x, "y:0": np.argmax(np.stack(thirds, 1), axis=1).astype(np.int32)}


def cnn_training_script(tf):
    """What TensorFlow 1.x training scripts add around a model: batch norm written with
    tf.nn.moments and tf.nn.batch_normalization (Rsqrt, RsqrtGrad), avg_pool, elu, softplus,
    dense-label softmax and sigmoid cross entropy, L2 weight decay, an exponentially decayed
    learning rate on the global step, clip_by_global_norm, and an ExponentialMovingAverage of the
    weights (its slots initialized through RefSwitch).

    The moving averages are updated by a run of their own after each training step. (Under
    `control_dependencies([train])`, TensorFlow's averages see the weights after the update only
    because the `<var>/read` snapshot they read shares its buffer with the variable that the Apply
    op updates in place; dflow's snapshots keep the value they were taken with, so there the
    averages trail by one step. See the notes on reference variables in docs/COMPATIBILITY.md.)"""
    rng = np.random.RandomState(18)
    x = tf.compat.v1.placeholder(tf.float32, [None, 8, 8, 2], name="x")
    y = tf.compat.v1.placeholder(tf.float32, [None, 3], name="y")
    k = _var(tf, "conv/kernel", rng.uniform(-0.3, 0.3, (3, 3, 2, 4)))
    c = tf.nn.conv2d(x, k, [1, 2, 2, 1], "VALID")
    mean, var = tf.nn.moments(c, [0, 1, 2])
    bn = tf.nn.batch_normalization(c, mean, var, _var(tf, "bn/beta", np.zeros(4)), _var(tf, "bn/gamma", np.ones(4)),
                                   1e-3)
    h = tf.reshape(tf.nn.avg_pool2d(tf.nn.elu(bn), 2, 1, "SAME"), [-1, 36])
    logits = _dense(tf, rng, "d2", tf.nn.softplus(_dense(tf, rng, "d1", h, 36, 10)), 10, 3)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
    loss += 0.1 * tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    loss += 1e-3 * tf.add_n([tf.nn.l2_loss(v) for v in tf.compat.v1.trainable_variables()])
    step = tf.compat.v1.train.get_or_create_global_step()
    optimizer = tf.compat.v1.train.MomentumOptimizer(
        tf.compat.v1.train.exponential_decay(0.1, step, 50, 0.5, staircase=True), 0.9)
    grads, variables = zip(*optimizer.compute_gradients(loss))
    grads, _ = tf.clip_by_global_norm(grads, 1.0)
    train = optimizer.apply_gradients(zip(grads, variables), global_step=step)
    averages = tf.compat.v1.train.ExponentialMovingAverage(0.9).apply(tf.compat.v1.trainable_variables())
    return dict(_result(tf, loss, train), after=averages)


def script_batch(rng, step):
    x = rng.normal(size=(16, 8, 8, 2)).astype(np.float32)
    label = np.argmax(np.stack([x[..., 0].mean(axis=(1, 2)), x[..., 1].mean(axis=(1, 2)), np.full(16, 0.05)], 1), 1)
    return {"x:0": x, "y:0": np.eye(3, dtype=np.float32)[label]}


def lstm(tf):
    """An LSTM unrolled over 5 steps (one op per gate and step), mean_squared_error, RMSProp."""
    rng = np.random.RandomState(12)
    T, D, H = 5, 3, 8
    x = tf.compat.v1.placeholder(tf.float32, [None, T, D], name="x")
    y = tf.compat.v1.placeholder(tf.float32, [None, 1], name="y")
    w = _var(tf, "lstm/kernel", rng.uniform(-1, 1, (D + H, 4 * H)) / np.sqrt(D + H))
    b = _var(tf, "lstm/bias", np.zeros(4 * H))
    h = tf.zeros(tf.stack([tf.shape(x)[0], H]))
    c = h
    for t in range(T):
        h, c = _lstm_step(tf, x[:, t, :], h, c, w, b)
    pred = _dense(tf, rng, "out", h, H, 1)
    loss = tf.compat.v1.losses.mean_squared_error(y, pred)
    train = tf.compat.v1.train.RMSPropOptimizer(0.005).minimize(loss)
    return _result(tf, loss, train)


def seq_batch(rng, step, T=5):
    x = rng.uniform(-1, 1, size=(16, T, 3)).astype(np.float32)
    y = (x[:, :, 0].mean(axis=1, keepdims=True) - 0.5 * x[:, -1:, 1]).astype(np.float32)
    return {"x:0": x, "y:0": y}


class _Cell:
    """An LSTM cell for tf.compat.v1.nn.dynamic_rnn written with raw ops (TensorFlow's own
    rnn_cell classes need Keras 2)."""

    def __init__(self, tf, rng, D, H):
        self._tf, self._h = tf, H
        self.w = _var(tf, "rnn/kernel", rng.uniform(-1, 1, (D + H, 4 * H)) / np.sqrt(D + H))
        self.b = _var(tf, "rnn/bias", np.zeros(4 * H))

    state_size = property(lambda self: (self._h, self._h))
    output_size = property(lambda self: self._h)

    def zero_state(self, batch_size, dtype):
        z = self._tf.zeros(self._tf.stack([batch_size, self._h]), dtype)
        return (z, z)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        return self.zero_state(batch_size, dtype)

    def __call__(self, x, state, scope=None):
        h, c = _lstm_step(self._tf, x, state[0], state[1], self.w, self.b)
        return h, (h, c)


def dyn_rnn(tf):
    """tf.compat.v1.nn.dynamic_rnn over 6 steps (while_loop, TensorArrayV3 ops, and their
    gradients), GradientDescent."""
    rng = np.random.RandomState(13)
    x = tf.compat.v1.placeholder(tf.float32, [None, 6, 3], name="x")
    y = tf.compat.v1.placeholder(tf.float32, [None, 1], name="y")
    out, (h, _) = tf.compat.v1.nn.dynamic_rnn(_Cell(tf, rng, 3, 8), x, dtype=tf.float32)
    pred = _dense(tf, rng, "out", tf.reduce_mean(out, axis=1) + h, 8, 1)
    loss = tf.reduce_mean(tf.square(pred - y))
    train = tf.compat.v1.train.GradientDescentOptimizer(0.2).minimize(loss)
    return _result(tf, loss, train)


def while_model(tf):
    """A tf.compat.v1.while_loop in the forward pass (4 iterations of h = tanh(h W + b)), the
    gradient through it (stacks of the loop's values), Adagrad."""
    rng = np.random.RandomState(14)
    x = tf.compat.v1.placeholder(tf.float32, [None, 6], name="x")
    y = tf.compat.v1.placeholder(tf.float32, [None, 6], name="y")
    w = _var(tf, "w", rng.uniform(-1, 1, (6, 6)) / np.sqrt(6))
    b = _var(tf, "b", rng.uniform(-0.1, 0.1, (6,)))
    _, h = tf.compat.v1.while_loop(lambda i, h: i < 4, lambda i, h: (i + 1, tf.tanh(tf.matmul(h, w) + b)),
                                   [tf.constant(0), x])
    loss = tf.reduce_mean(tf.square(h - y))
    train = tf.compat.v1.train.AdagradOptimizer(0.1).minimize(loss)
    return _result(tf, loss, train)


def while_cond_model(tf):
    """A while_loop whose body holds a tf.cond (even iterations tanh, odd ones relu), the gradient
    through both, Momentum."""
    rng = np.random.RandomState(19)
    x = tf.compat.v1.placeholder(tf.float32, [None, 6], name="x")
    y = tf.compat.v1.placeholder(tf.float32, [None, 6], name="y")
    w = _var(tf, "w", rng.uniform(-1, 1, (6, 6)) / np.sqrt(6))
    b = _var(tf, "b", rng.uniform(-0.1, 0.1, (6,)))

    def body(i, h):
        z = tf.matmul(h, w) + b
        return i + 1, tf.compat.v1.cond(tf.equal(i % 2, 0), lambda: tf.tanh(z), lambda: tf.nn.relu(z))

    _, h = tf.compat.v1.while_loop(lambda i, h: i < 4, body, [tf.constant(0), x])
    loss = tf.reduce_mean(tf.square(h - y))
    train = tf.compat.v1.train.MomentumOptimizer(0.2, 0.9).minimize(loss)
    return _result(tf, loss, train)


_ROT = np.linalg.qr(np.random.RandomState(2).normal(size=(6, 6)))[0]


def while_batch(rng, step):
    x = rng.uniform(-1, 1, size=(16, 6)).astype(np.float32)
    return {"x:0": x, "y:0": (0.8 * np.tanh(x @ _ROT)).astype(np.float32)}


def while_cond_batch(rng, step):
    x = rng.uniform(-1, 1, size=(16, 6)).astype(np.float32)
    return {"x:0": x, "y:0": (0.5 * np.maximum(x @ _ROT, 0)).astype(np.float32)}


def cond_model(tf):
    """tf.compat.v1.cond choosing between two branches by a fed bool, absolute_difference loss
    (DivNoNan), Ftrl; the branch not taken gets no gradient that step."""
    rng = np.random.RandomState(15)
    x = tf.compat.v1.placeholder(tf.float32, [None, 5], name="x")
    y = tf.compat.v1.placeholder(tf.float32, [None, 1], name="y")
    p = tf.compat.v1.placeholder(tf.bool, [], name="p")
    w1 = _var(tf, "w1", rng.uniform(-1, 1, (5, 1)))
    w2 = _var(tf, "w2", rng.uniform(-1, 1, (5, 1)))
    pred = tf.compat.v1.cond(p, lambda: tf.nn.relu(tf.matmul(x, w1)), lambda: tf.tanh(tf.matmul(x, w2)) * 2.0)
    loss = tf.compat.v1.losses.absolute_difference(y, pred)
    train = tf.compat.v1.train.FtrlOptimizer(0.1).minimize(loss)
    return _result(tf, loss, train)


_V = np.random.RandomState(3).normal(size=(2, 5, 1))


def cond_batch(rng, step):
    x = rng.normal(size=(16, 5)).astype(np.float32)
    p = step % 3 != 0
    y = np.maximum(x @ _V[0], 0) if p else 2 * np.tanh(x @ _V[1])
    return {"x:0": x, "y:0": y.astype(np.float32), "p:0": np.bool_(p)}


def embedding(tf):
    """tf.nn.embedding_lookup of bags of ids (its gradient is IndexedSlices), mean over each bag,
    a dense layer, Adam's sparse update (Unique, UnsortedSegmentSum, ScatterAdd)."""
    rng = np.random.RandomState(16)
    ids = tf.compat.v1.placeholder(tf.int32, [None, 4], name="ids")
    y = tf.compat.v1.placeholder(tf.int32, [None], name="y")
    table = _var(tf, "embedding", rng.uniform(-0.5, 0.5, (20, 8)))
    h = tf.reduce_mean(tf.nn.embedding_lookup(table, ids), axis=1)
    logits = _dense(tf, rng, "fc", h, 8, 2)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(y, logits)
    train = tf.compat.v1.train.AdamOptimizer(0.02).minimize(loss)
    return _result(tf, loss, train)


def embedding_batch(rng, step):
    ids = rng.randint(0, 20, size=(16, 4)).astype(np.int32)
    return {"ids:0": ids, "y:0": ((ids < 8).sum(axis=1) >= 2).astype(np.int32)}


MODELS = {
    "embedding": (embedding, embedding_batch),
    "mlp": (mlp, mlp_batch),
    "cnn": (cnn, cnn_batch),
    "lstm": (lstm, seq_batch),
    "dyn_rnn": (dyn_rnn, lambda rng, step: seq_batch(rng, step, T=6)),
    "while_loop": (while_model, while_batch),
    "while_loop_with_cond": (while_cond_model, while_cond_batch),
    "cond": (cond_model, cond_batch),
    "cnn_training_script": (cnn_training_script, script_batch),
}


# ---- training in both ----

def _train(module, graph_def, names, feeds):
    """Imports the GraphDef into a fresh graph of `module` (TensorFlow or dflow), runs the
    initializer, then one (loss, train) step per feed, and `after` (when the model has one) after
    each; returns (losses, {variable: value})."""
    g = module.Graph()
    with g.as_default():
        module.import_graph_def(module.GraphDef.FromString(graph_def), name="")
        with module.Session() as s:
            s.run(names["init"])
            losses = []
            for feed in feeds:
                losses.append(s.run([names["loss"], names["train"]], feed)[0])
                if "after" in names:
                    s.run(names["after"])
            values = s.run(names["variables"])
    return np.array(losses), values


@pytest.mark.parametrize("model", sorted(MODELS))
def test_model_trains_the_same(model):
    build, batch = MODELS[model]
    graph_def, names = tf_graph_def(build)
    rng = np.random.RandomState(100)
    feeds = [batch(rng, step) for step in range(STEPS)]

    tf_losses, tf_vars = _train(real_tf(), graph_def, names, feeds)
    df_losses, df_vars = _train(dflow, graph_def, names, feeds)

    assert np.all(np.isfinite(tf_losses))
    # The model learns (else agreement would say little): the last 20 steps' mean loss is below
    # 80% of the first 20 steps'.
    assert tf_losses[-20:].mean() < 0.8 * tf_losses[:20].mean(), tf_losses[::20]
    # Step 0's loss comes from the initial values alone; step 1's from one update of every variable.
    np.testing.assert_allclose(df_losses[:2], tf_losses[:2], rtol=FIRST_RTOL, atol=ATOL,
                               err_msg="%s: first steps" % model)
    np.testing.assert_allclose(df_losses, tf_losses, rtol=RTOL, atol=ATOL, err_msg="%s: loss curve" % model)
    assert sorted(df_vars) == sorted(tf_vars)
    for name in tf_vars:
        assert df_vars[name].dtype == tf_vars[name].dtype, name
        np.testing.assert_allclose(df_vars[name], tf_vars[name], rtol=RTOL, atol=ATOL,
                                   err_msg="%s: variable %s after %d steps" % (model, name, STEPS))


@pytest.mark.parametrize("model", sorted(MODELS))
def test_one_step_updates_every_variable_the_same(model):
    """One training step from the initial values: every variable (weights, optimizer slots,
    batch-norm moving averages) compared tightly, before any drift can accumulate. Checks each
    Apply* op and gradient of TensorFlow's graph as dflow runs it."""
    build, batch = MODELS[model]
    graph_def, names = tf_graph_def(build)
    feeds = [batch(np.random.RandomState(7), 0)]
    _, tf_vars = _train(real_tf(), graph_def, names, feeds)
    _, df_vars = _train(dflow, graph_def, names, feeds)
    for name in tf_vars:
        np.testing.assert_allclose(df_vars[name], tf_vars[name], rtol=FIRST_RTOL, atol=1e-6,
                                   err_msg="%s: variable %s after one step" % (model, name))


# ---- every optimizer of tf.compat.v1.train on one small model ----

_OPTIMIZERS = {
    "GradientDescent": lambda t: t.GradientDescentOptimizer(0.1),
    "Momentum": lambda t: t.MomentumOptimizer(0.05, 0.9),
    "Momentum_nesterov": lambda t: t.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    "Adagrad": lambda t: t.AdagradOptimizer(0.1),
    "AdagradDA": lambda t: t.AdagradDAOptimizer(0.1, t.get_or_create_global_step(), l1_regularization_strength=0.001,
                                                l2_regularization_strength=0.01),
    "Adam": lambda t: t.AdamOptimizer(0.01),
    "RMSProp": lambda t: t.RMSPropOptimizer(0.01),
    "RMSProp_centered_momentum": lambda t: t.RMSPropOptimizer(0.005, momentum=0.5, centered=True),
    "Ftrl_l1_l2": lambda t: t.FtrlOptimizer(0.1, l1_regularization_strength=0.001, l2_regularization_strength=0.01),
    "Ftrl_shrinkage": lambda t: t.FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=0.01),
    "Adadelta": lambda t: t.AdadeltaOptimizer(1.0),
    "ProximalGradientDescent": lambda t: t.ProximalGradientDescentOptimizer(
        0.1, l1_regularization_strength=0.001, l2_regularization_strength=0.01),
    "ProximalAdagrad": lambda t: t.ProximalAdagradOptimizer(
        0.1, l1_regularization_strength=0.001, l2_regularization_strength=0.01),
}


def _regression(make_optimizer, mode="dense"):
    """A tanh layer and a linear one; "sparse": x is added to the mean of embedding rows picked by
    fed ids (the table's gradient is IndexedSlices: the optimizer's SparseApply* op, or its scatter
    updates); "resource": resource variables (VarHandleOp; ResourceApply* updates);
    "resource_sparse": both (ResourceSparseApply*, ResourceScatterAdd)."""
    sparse = mode in ("sparse", "resource_sparse")

    def build(tf):
        if mode.startswith("resource"):
            with tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope(), use_resource=True):
                return _build(tf)
        return _build(tf)

    def _build(tf):
        rng = np.random.RandomState(17)
        x = tf.compat.v1.placeholder(tf.float32, [None, 6], name="x")
        y = tf.compat.v1.placeholder(tf.float32, [None, 2], name="y")
        if sparse:
            ids = tf.compat.v1.placeholder(tf.int64, [None, 3], name="ids")
            table = _var(tf, "table", rng.uniform(-0.5, 0.5, (12, 6)))
            x = x + tf.reduce_mean(tf.nn.embedding_lookup(table, ids), axis=1)
        h = tf.tanh(_dense(tf, rng, "hidden", x, 6, 8))
        loss = tf.reduce_mean(tf.square(_dense(tf, rng, "out", h, 8, 2) - y))
        optimizer = make_optimizer(tf.compat.v1.train)
        return _result(tf, loss, optimizer.minimize(loss, global_step=tf.compat.v1.train.get_or_create_global_step()))
    return build


_W = np.random.RandomState(4).normal(size=(6, 2))


def _regression_batch(rng, step, sparse=False):
    x = rng.normal(size=(16, 6)).astype(np.float32)
    feed = {"x:0": x, "y:0": np.sin(x @ _W).astype(np.float32)}
    if sparse:
        # repeated ids within a batch: the optimizers sum them (Unique, UnsortedSegmentSum) first
        feed["ids:0"] = rng.randint(0, 12, size=(16, 3)).astype(np.int64)
    return feed


@pytest.mark.parametrize("mode", ["dense", "sparse", "resource", "resource_sparse"])
@pytest.mark.parametrize("optimizer", sorted(_OPTIMIZERS))
def test_optimizer_updates_match(optimizer, mode):
    """The optimizer's Apply*, SparseApply* and ResourceApply* ops as TensorFlow writes them
    (hyperparameters, slots, attrs) update the variables as TensorFlow's kernels do: one step
    tightly, 100 steps at RTOL."""
    graph_def, names = tf_graph_def(_regression(_OPTIMIZERS[optimizer], mode))
    rng = np.random.RandomState(101)
    feeds = [_regression_batch(rng, step, mode.endswith("sparse")) for step in range(100)]
    for n in (1, len(feeds)):
        tf_losses, tf_vars = _train(real_tf(), graph_def, names, feeds[:n])
        df_losses, df_vars = _train(dflow, graph_def, names, feeds[:n])
        rtol, atol = (FIRST_RTOL, 1e-6) if n == 1 else (RTOL, ATOL)
        np.testing.assert_allclose(df_losses, tf_losses, rtol=rtol, atol=atol, err_msg=optimizer)
        assert sorted(df_vars) == sorted(tf_vars)
        for name in tf_vars:
            np.testing.assert_allclose(df_vars[name], tf_vars[name], rtol=rtol, atol=atol,
                                       err_msg="%s: %s after %d steps" % (optimizer, name, n))
    assert tf_losses[-10:].mean() < tf_losses[:10].mean()


def test_cli_trains_tensorflow_graph(tmp_path):
    """The C++ importer (`dflow run`, no Python between) takes TensorFlow 2.21's CNN graph (MaxPool's
    explicit_paddings, MatMul's grad_a/grad_b, FusedBatchNormV3...): init, one Momentum step,
    then the loss on the same batch, as TensorFlow computes it."""
    graph_def, names = tf_graph_def(cnn)
    feed = cnn_batch(np.random.RandomState(5), 0)
    (tmp_path / "g.pb").write_bytes(graph_def)
    np.save(tmp_path / "x.npy", feed["x:0"])
    np.save(tmp_path / "y.npy", feed["y:0"])
    env = dict(os.environ, DFLOW_CONFIG_DIR=str(tmp_path / "config"))
    out = subprocess.run([os.path.join(BUILD, "bin", "dflow"), "run", str(tmp_path / "g.pb"),
                          "--feed", "x=@%s" % (tmp_path / "x.npy"), "--feed", "y=@%s" % (tmp_path / "y.npy"),
                          "--target", names["init"], "--target", names["train"], "--fetch", names["loss"],
                          "--out", str(tmp_path / "loss.npy")],
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    want = run_tf(graph_def, names["loss"], feed, targets=[names["init"], names["train"]])
    np.testing.assert_allclose(np.load(tmp_path / "loss.npy"), want, rtol=FIRST_RTOL)


def test_moving_averages_after_the_train_op_as_documented():
    """TensorFlow's documented pattern `with tf.control_dependencies([train]): ema.apply(...)`,
    written in Python under both: the averages follow the updated weights, step for step."""
    from conftest import run_both

    def build(tf):
        v = tf.Variable([1.0, 2.0, -3.0])
        loss = tf.reduce_sum(v * v)
        opt = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        ema = tf.train.ExponentialMovingAverage(0.5)
        with tf.control_dependencies([opt]):
            train = ema.apply([v])
        out = []
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(4):
                s.run(train)
                out.append(s.run([v, ema.average(v)]))
        return out

    ours, theirs = run_both(build)
    # The first average is 0.5 * 1 + 0.5 * 0.8 (the updated weight), not the weight before the step.
    np.testing.assert_allclose(theirs[0][1], [0.9, 1.8, -2.7], rtol=1e-6)
    for (v1, a1), (v2, a2) in zip(ours, theirs):
        np.testing.assert_allclose(v1, v2, rtol=1e-6)
        np.testing.assert_allclose(a1, a2, rtol=1e-6)
