"""tf.train optimizers over the C++ optimizers: a linear regression and a small MLP trained from the
same initial values under dflow and TensorFlow, losses compared step by step."""
import numpy as np
import pytest

from conftest import assert_same, run_both

OPTIMIZERS = {
    "sgd": lambda tf: tf.train.GradientDescentOptimizer(0.1),
    "momentum": lambda tf: tf.train.MomentumOptimizer(0.05, 0.9),
    "nesterov": lambda tf: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    "adagrad": lambda tf: tf.train.AdagradOptimizer(0.3),
    "adam": lambda tf: tf.train.AdamOptimizer(0.05),
    "rmsprop": lambda tf: tf.train.RMSPropOptimizer(0.003),
    "rmsprop_centered": lambda tf: tf.train.RMSPropOptimizer(0.002, momentum=0.5, centered=True),
    "ftrl": lambda tf: tf.train.FtrlOptimizer(0.5, l1_regularization_strength=0.001, l2_regularization_strength=0.01),
}

RNG = np.random.RandomState(0)
X = RNG.randn(64, 3).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
W1 = (RNG.randn(3, 8) * 0.5).astype(np.float32)
W2 = (RNG.randn(8, 1) * 0.5).astype(np.float32)


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_linear_regression(kind):
    def run(tf):
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.get_variable("w", initializer=tf.constant(np.full((3, 1), 0.1, np.float32)))
        b = tf.get_variable("b", initializer=tf.constant([0.0]))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        step = tf.train.get_or_create_global_step()
        opt = OPTIMIZERS[kind](tf)
        train = opt.minimize(loss, global_step=step)
        names = sorted(v.name for v in tf.global_variables())
        slots = sorted(v.name for v in opt.variables())
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(120):
                losses.append(sess.run([loss, train], {x: X, y: Y})[0])
            final = sess.run([w, b, step])
        return names, slots, train.name, train.type, np.array(losses), final
    ours, theirs = run_both(run)
    assert ours[:4] == theirs[:4]
    assert_same(ours[4:], theirs[4:], rtol=2e-4, atol=1e-5)
    assert ours[4][-1] < ours[4][0] * 0.7


@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam", "rmsprop", "adagrad", "ftrl"])
def test_mlp(kind):
    def run(tf):
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None, 1])
        with tf.variable_scope("mlp"):
            w1 = tf.get_variable("w1", initializer=tf.constant(W1))
            b1 = tf.get_variable("b1", [8], initializer=tf.zeros_initializer())
            w2 = tf.get_variable("w2", initializer=tf.constant(W2))
            b2 = tf.get_variable("b2", [1], initializer=tf.zeros_initializer())
        h = tf.tanh(tf.matmul(x, w1) + b1)
        pred = tf.matmul(h, w2) + b2
        loss = tf.reduce_mean(tf.square(pred - y))
        opt = OPTIMIZERS[kind](tf)
        train = opt.minimize(loss)
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(150):
                losses.append(sess.run([loss, train], {x: X, y: Y})[0])
            return np.array(losses), sess.run([w1, b2])
    ours, theirs = run_both(run)
    assert_same(ours[0], theirs[0], rtol=5e-4, atol=1e-5)
    # Weights whose gradients nearly cancel take steps of lr * g / sqrt(ms) under RMSProp: their
    # rounding (a different summation order) shows more there than in the loss.
    assert_same(ours[1], theirs[1], rtol=1e-3, atol=1e-3 if kind == "rmsprop" else 2e-5)


@pytest.mark.parametrize("kind", ["sgd", "momentum", "nesterov", "adagrad", "adam", "rmsprop", "rmsprop_centered",
                                  "ftrl"])
def test_embedding_lookups_train_like_tensorflow(kind):
    # TensorFlow updates an embedding from IndexedSlices: only the rows looked up, repeated ids
    # added up first. Rows looked up in one step and not the next must not move in the next (with
    # momentum or RMSProp a dense update would keep moving them; Ftrl would reset them).
    table0 = RNG.randn(10, 4).astype(np.float32)
    batches = [np.array([[3, 1, 3], [7, 3, 0]], np.int32), np.array([[2, 2, 5], [5, 9, 2]], np.int32),
               np.array([[3, 0, 8], [1, 1, 1]], np.int32)]
    target = RNG.randn(2, 4).astype(np.float32)

    def run(tf):
        ids = tf.placeholder(tf.int32, [2, 3])
        table = tf.get_variable("table", initializer=tf.constant(table0))
        rows = tf.nn.embedding_lookup(table, ids)
        loss = tf.reduce_mean(tf.square(tf.reduce_sum(rows, 1) - target))
        train = OPTIMIZERS[kind](tf).minimize(loss)
        tables = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = []
            for step in range(12):
                losses.append(sess.run([loss, train], {ids: batches[step % 3]})[0])
                tables.append(sess.run(table))
            return np.array(losses), np.array(tables)
    ours, theirs = run_both(run)
    assert_same(ours[0], theirs[0], rtol=1e-4, atol=1e-5)
    assert_same(ours[1], theirs[1], rtol=1e-4, atol=1e-5)
    # Row 4 is never looked up.
    np.testing.assert_array_equal(ours[1][-1][4], table0[4])


def test_slots_compute_apply_and_schedules():
    def run(tf):
        w = tf.Variable([1.0, 2.0], name="w")
        v = tf.Variable(3.0, name="v")
        unused = tf.Variable(0.0, name="unused")
        loss = tf.reduce_sum(w * w) + v * 2.0
        step = tf.train.create_global_step()
        lr = tf.train.exponential_decay(0.1, step, 10, 0.5, staircase=True)
        opt = tf.train.MomentumOptimizer(lr, 0.9)
        gvs = opt.compute_gradients(loss, var_list=[w, v, unused])
        none_for = [var.name for g, var in gvs if g is None]
        clipped = [(g * 0.5, var) for g, var in gvs if g is not None]
        train = opt.apply_gradients(clipped, global_step=step, name="train")
        info = [none_for, train.name, opt.get_slot(w, "momentum").name, opt.get_slot_names(), opt.get_name(),
                opt.get_slot(unused, "momentum") is None, train in tf.get_collection(tf.GraphKeys.TRAIN_OP)]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            vals = []
            for _ in range(25):
                sess.run(train)
                vals.append(sess.run([w, v, lr, step]))
        return info, vals
    ours, theirs = run_both(run)
    assert ours[0] == theirs[0]
    assert_same(ours[1], theirs[1], rtol=1e-5)


def test_adam_beta_accumulators_and_names():
    def run(tf):
        w = tf.Variable([1.0, 2.0], name="w")
        opt = tf.train.AdamOptimizer(0.1, name="MyAdam")
        train = opt.minimize(tf.reduce_sum(w * w))
        b1, b2 = opt._get_beta_accumulators()
        return [b1.name, b2.name, train.name, sorted(v.name for v in opt.variables()),
                opt.get_slot(w, "m").name, opt.get_slot(w, "v").name]
    ours, theirs = run_both(run)
    assert ours == theirs


def test_learning_rate_schedules():
    def run(tf):
        step = tf.placeholder(tf.int64, [])
        ts = [tf.train.exponential_decay(0.5, step, 7, 0.9), tf.train.exponential_decay(0.5, step, 7, 0.9, True),
              tf.train.piecewise_constant(step, [5, 10], [1.0, 0.5, 0.1]),
              tf.train.piecewise_constant(tf.cast(step, tf.int32), [5, 10], [1, 2, 3]),
              tf.train.polynomial_decay(0.1, step, 20, 0.01, power=2.0),
              tf.train.polynomial_decay(0.1, step, 8, 0.01, cycle=True),
              tf.train.natural_exp_decay(0.1, step, 5, 0.3), tf.train.inverse_time_decay(0.1, step, 5, 0.5, True)]
        with tf.Session() as sess:
            return [sess.run(ts, {step: s}) for s in (0, 3, 5, 6, 10, 11, 25)]
    ours, theirs = run_both(run)
    assert_same(ours, theirs, rtol=1e-5)


def test_optimizer_errors():
    def run(tf):
        out = []
        x = tf.constant(1.0)
        i = tf.Variable(1, name="i")
        w = tf.Variable(1.0, name="w")
        for call in (lambda: tf.train.GradientDescentOptimizer(0.1).minimize(x * 2.0),        # no variables
                     lambda: tf.train.GradientDescentOptimizer(0.1).minimize(x * 2.0, var_list=[w]),
                     lambda: tf.train.GradientDescentOptimizer(0.1).minimize(tf.cast(i, tf.float32), var_list=[i]),
                     lambda: tf.train.GradientDescentOptimizer(0.1).apply_gradients([]),
                     lambda: tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0),
                     lambda: tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5)):
            try:
                call()
                out.append(None)
            except (ValueError, TypeError, NotImplementedError) as e:
                out.append((type(e).__name__, str(e).split(" [")[0].split(", check")[0]))
        return out
    ours, theirs = run_both(run)
    assert [o[0] if o else o for o in ours] == [o[0] if o else o for o in theirs]
    assert ours[1] == theirs[1]


def test_global_step_functions():
    def run(tf):
        assert tf.train.get_global_step() is None
        gs = tf.train.get_or_create_global_step()
        same = tf.train.get_or_create_global_step() is gs
        try:
            tf.train.create_global_step()
            err = None
        except ValueError as e:
            err = str(e)
        info = [gs.name, gs.dtype.name, str(gs.shape), gs.trainable, same, err,
                [v.name for v in tf.get_collection(tf.GraphKeys.GLOBAL_STEP)], tf.train.get_global_step() is gs]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign_add(gs, 5))
            info.append(tf.train.global_step(sess, gs))
        return info
    ours, theirs = run_both(run)
    assert ours == theirs


def test_cpp_optimizer_is_exposed(tf):
    from dflow import _dflow
    opt = tf.train.GradientDescentOptimizer(0.1)
    tf.Variable(1.0)
    assert isinstance(opt._cpp_optimizer(), _dflow.Optimizer)
    assert opt._cpp_optimizer() is opt._cpp_optimizer()


def test_exponential_moving_average():
    def run(tf):
        w = tf.Variable([1.0, 2.0], name="w")
        b = tf.Variable(0.5, name="b")
        step = tf.train.get_or_create_global_step()
        loss = tf.reduce_sum(w * w) + b * b
        opt = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step)
        with tf.control_dependencies([opt]):
            train = ema.apply([w, b])
        info = [train.name, ema.average(w).name, ema.average_name(b), sorted(ema.variables_to_restore()),
                [v.name for v in tf.moving_average_variables()], sorted(v.name for v in tf.global_variables())]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            vals = [sess.run([ema.average(w), ema.average(b)])]
            for _ in range(5):
                sess.run(train)
                vals.append(sess.run([ema.average(w), ema.average(b), w]))
        return info, vals
    ours, theirs = run_both(run)
    assert ours[0] == theirs[0]
    assert_same(ours[1], theirs[1])


def test_one_optimizer_in_two_graphs(tf):
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    results = []
    for _ in range(2):
        with tf.Graph().as_default():
            w = tf.Variable([1.0], name="w")
            train = opt.minimize(tf.reduce_sum(w * w))
            assert opt.get_slot(w, "momentum").name == "w/Momentum:0"
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(train)
                results.append(sess.run(w))
    assert_same(results[0], results[1])
