"""Variables, variable scopes, get_variable, initializers and random ops, against TensorFlow."""
import numpy as np
import pytest

from conftest import assert_same, run_both


def test_variable_names_types_and_values():
    def build(tf):
        v = tf.Variable(1.5, name="v")
        v2 = tf.Variable([[1, 2], [3, 4]], name="v")
        w = tf.Variable(tf.zeros([2, 3]))
        with tf.name_scope("outer"):
            u = tf.Variable(lambda: tf.ones([4]), name="u")
        local = tf.Variable(7, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="loc")
        info = [(x.name, x.op.name, x.dtype.name, str(x.shape), x.initializer.name, x.value().name,
                 x.initial_value.name, x.op.type) for x in (v, v2, w, u, local)]
        coll = [[x.name for x in c] for c in (tf.global_variables(), tf.trainable_variables(),
                                              tf.local_variables())]
        ops_ = sorted(op.name for op in tf.get_default_graph().get_operations())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.local_variables_initializer())
            vals = sess.run([v, v2, w, u, local, v + 1, 2 * v, v2 * v2, -v, v[()] if False else v.read_value()])
            a = sess.run(v.assign(3.0))
            b = sess.run(v.assign_add(1.0))
            c = sess.run(v.assign_sub(0.5))
            d = sess.run(tf.assign(v2, [[5, 6], [7, 8]]))
            e = sess.run(tf.assign_add(v2, [[1, 1], [1, 1]]))
            v.load(10.0, sess)
            f = v.eval(session=sess)
            g = sess.run(v2[1])
        return info, coll, ops_, vals, a, b, c, d, e, f, g
    ours, theirs = run_both(build)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    assert ours[2] == theirs[2]
    assert_same(ours[3:], theirs[3:])


def test_variable_errors_and_uninitialized():
    def build(tf):
        out = []
        v = tf.Variable(1.0, name="v")
        w = tf.Variable(2.0, name="w")
        with tf.Session() as sess:
            try:
                sess.run(v)
            except tf.errors.FailedPreconditionError:
                out.append("FailedPrecondition")
            out.append(list(sess.run(tf.report_uninitialized_variables())))
            sess.run(v.initializer)
            out.append(list(sess.run(tf.report_uninitialized_variables())))
            out.append(sess.run(tf.is_variable_initialized(w)))
        for bad in (lambda: tf.Variable(None), lambda: tf.Variable(1.0, collections="x")):
            try:
                bad()
            except ValueError:
                out.append("ValueError")
        return out
    ours, theirs = run_both(build)
    assert ours == theirs


def test_scatter_and_count_up_to():
    def build(tf):
        v = tf.Variable([1.0, 2.0, 3.0, 4.0], name="v")
        c = tf.Variable(0, name="c")
        up = tf.count_up_to(c, 2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a = sess.run(tf.scatter_update(v, [0, 2], [10.0, 30.0]))
            b = sess.run(tf.scatter_add(v, [1, 1], [1.0, 2.0]))
            d = sess.run(tf.scatter_sub(v, [3], [4.0]))
            counts = [sess.run(up), sess.run(up)]
            try:
                sess.run(up)
            except tf.errors.OutOfRangeError:
                counts.append("OutOfRange")
        return a, b, d, counts
    ours, theirs = run_both(build)
    assert_same(ours, theirs)


def test_variable_scope_and_get_variable_names():
    def build(tf):
        names = []
        with tf.variable_scope("layer1"):
            w = tf.get_variable("w", [2, 3])
            b = tf.get_variable("b", [3], initializer=tf.zeros_initializer())
            names.append(tf.get_variable_scope().name)
            with tf.variable_scope("inner"):
                c = tf.get_variable("c", [1], dtype=tf.int32)
                x = tf.add(1, 2)
            names += [w.name, b.name, c.name, x.name, str(c.dtype.name)]
        with tf.variable_scope("layer1", reuse=True):
            w2 = tf.get_variable("w", [2, 3])
            names.append(w2 is w)
            y = tf.add(1, 2)
            names.append(y.name)
        with tf.variable_scope("layer1") as scope:
            scope.reuse_variables()
            names.append(tf.get_variable("b") is b)
        with tf.variable_scope(None, default_name="dense"):
            names.append(tf.get_variable("k", [1]).name)
        with tf.variable_scope(None, default_name="dense"):
            names.append(tf.get_variable("k", [1]).name)
        with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
            a1 = tf.get_variable("a", [2])
        with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
            a2 = tf.get_variable("a", [2])
        names.append(a1 is a2)
        with tf.variable_scope("layer1") as s1:
            pass
        with tf.variable_scope(s1):
            names.append(tf.get_variable("new", [1]).name)
            names.append(tf.add(1, 1).name)
        with tf.variable_scope(s1, reuse=True):
            names.append(tf.get_variable("new") is not None)
        with tf.name_scope("ns"):
            v = tf.get_variable("in_ns", [1])
            names.append(v.name)
            names.append(tf.Variable(1.0, name="tv").name)
        with tf.variable_scope("vs", auxiliary_name_scope=False):
            names.append(tf.add(1, 1).name)
            names.append(tf.get_variable("q", [1]).name)
        gs = tf.get_variable("step", [], dtype=tf.int64, trainable=False, initializer=tf.zeros_initializer())
        names.append([x.name for x in tf.trainable_variables()])
        names.append([x.name for x in tf.global_variables()])
        names.append(gs.name)
        return names
    ours, theirs = run_both(build)
    assert ours == theirs


def test_get_variable_errors():
    def build(tf):
        msgs = []
        with tf.variable_scope("s"):
            tf.get_variable("w", [1])
            try:
                tf.get_variable("w", [1])
            except ValueError as e:
                msgs.append(str(e).split(" Originally")[0].split("\n")[0])
        with tf.variable_scope("s", reuse=True):
            try:
                tf.get_variable("missing", [1])
            except ValueError as e:
                msgs.append(str(e))
            try:
                tf.get_variable("w", [2])
            except ValueError as e:
                msgs.append(str(e))
            try:
                tf.get_variable("w", [1], dtype=tf.int32)
            except ValueError as e:
                msgs.append(str(e))
        try:
            tf.get_variable("c", [2], initializer=tf.constant([1.0, 2.0]))
        except ValueError as e:
            msgs.append(str(e))
        try:
            with tf.variable_scope(None, default_name="d", reuse=True):
                pass
        except ValueError as e:
            msgs.append(str(e))
        try:
            tf.variable_scope("x", reuse="yes")
        except ValueError as e:
            msgs.append(str(e))
        return msgs
    ours, theirs = run_both(build)
    assert ours == theirs
    assert ours[0] == ("Variable s/w already exists, disallowed. Did you mean to set reuse=True or "
                       "reuse=tf.AUTO_REUSE in VarScope?")


def test_initializer_from_tensor_regularizer_and_scope_initializer():
    def build(tf):
        with tf.variable_scope("s", initializer=tf.constant_initializer(0.5)):
            a = tf.get_variable("a", [2, 2])
            b = tf.get_variable("b", initializer=tf.constant([1.0, 2.0, 3.0]))
            c = tf.get_variable("c", [3], regularizer=lambda v: tf.reduce_sum(v) * 2.0)
        regs = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
        names = [a.name, b.name, c.name, str(b.shape), [r.name for r in regs]]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            vals = sess.run([a, b, c] + regs)
        return names, vals
    ours, theirs = run_both(build)
    assert ours[0] == theirs[0]
    assert_same(ours[1], theirs[1])


@pytest.mark.parametrize("kind", ["constant", "zeros", "ones", "random_uniform", "random_normal", "truncated_normal",
                                  "glorot_uniform", "glorot_normal", "variance_scaling", "he_normal",
                                  "uniform_unit_scaling", "identity"])
def test_initializer_distributions(kind):
    shape = [200, 300]

    def make(tf):
        return {
            "constant": lambda: tf.constant_initializer(0.25),
            "zeros": tf.zeros_initializer,
            "ones": tf.ones_initializer,
            "random_uniform": lambda: tf.random_uniform_initializer(-2.0, 3.0),
            "random_normal": lambda: tf.random_normal_initializer(1.0, 2.0),
            "truncated_normal": lambda: tf.truncated_normal_initializer(0.5, 1.5),
            "glorot_uniform": tf.glorot_uniform_initializer,
            "glorot_normal": tf.glorot_normal_initializer,
            "variance_scaling": lambda: tf.variance_scaling_initializer(2.0, "fan_out", "uniform"),
            "he_normal": lambda: tf.initializers.he_normal(),
            "uniform_unit_scaling": lambda: tf.uniform_unit_scaling_initializer(1.5),
            "identity": lambda: tf.initializers.identity(2.0),
        }[kind]()

    def run(tf):
        v = tf.get_variable("v", shape, initializer=make(tf))
        with tf.Session() as sess:
            sess.run(v.initializer)
            x = sess.run(v)
        return x
    ours, theirs = run_both(run)
    assert ours.dtype == theirs.dtype == np.float32
    # Same distribution: moments and range within sampling error (60,000 samples).
    for q in (0, 1, 10, 50, 90, 99, 100):
        if q in (0, 100) and kind in ("random_normal",):
            continue  # unbounded: the extremes vary too much between samples
        # About five standard errors of each statistic (tails have larger ones).
        tol = (0.1 if q in (1, 99) else 0.04) * np.std(theirs) + 1e-6
        np.testing.assert_allclose(np.percentile(ours, q), np.percentile(theirs, q), atol=tol,
                                   err_msg="percentile %d of %s" % (q, kind))
    np.testing.assert_allclose(np.mean(ours), np.mean(theirs), atol=0.03 * np.std(theirs) + 1e-6)
    np.testing.assert_allclose(np.std(ours), np.std(theirs), rtol=0.02, atol=1e-7)


def test_random_ops_names_shapes_and_moments():
    def run(tf):
        tf.set_random_seed(3)
        ts = [tf.random_normal([1000, 50], 2.0, 0.5), tf.random_uniform([1000, 50], -1, 3),
              tf.truncated_normal([1000, 50], stddev=2.0), tf.random_uniform([1000, 50], 0, 10, dtype=tf.int32),
              tf.random.normal([5]), tf.random.uniform([5]), tf.random_shuffle(tf.range(100))]
        names = [(t.name, str(t.shape), t.dtype.name) for t in ts]
        with tf.Session() as sess:
            vals = sess.run(ts)
            again = sess.run(ts[0])
        return names, vals, again
    ours, theirs = run_both(run)
    # tf.random.uniform of [0, 1) skips the scaling in TensorFlow 2's compat.v1 (not in 1.x): names differ.
    assert ours[0][:5] + ours[0][6:] == theirs[0][:5] + theirs[0][6:]
    for a, b in zip(ours[1][:3], theirs[1][:3]):
        for q in (1, 10, 50, 90, 99):
            tol = (0.1 if q in (1, 99) else 0.04) * np.std(b)
            np.testing.assert_allclose(np.percentile(a, q), np.percentile(b, q), atol=tol)
        np.testing.assert_allclose(np.std(a), np.std(b), rtol=0.02)
    assert sorted(ours[1][6]) == list(range(100))
    assert ours[1][3].dtype == np.int32 and ours[1][3].min() >= 0 and ours[1][3].max() < 10
    np.testing.assert_allclose(np.bincount(ours[1][3].ravel(), minlength=10) / 50000.0, np.full(10, 0.1), atol=0.01)
    # A seeded op gives a different sample on each run (the state advances), as in TensorFlow.
    assert not np.array_equal(ours[1][0], ours[2])


def test_seeds_make_runs_repeatable(tf):
    def sample(seed):
        with tf.Graph().as_default():
            tf.set_random_seed(seed)
            a = tf.random_uniform([4])
            b = tf.random_normal([4], seed=7)
            with tf.Session() as sess:
                return sess.run([a, b])
    x, y, z = sample(1), sample(1), sample(2)
    assert_same(x, y)
    assert not np.array_equal(x[0], z[0])


def test_multinomial_counts(tf):
    logits = tf.log([[0.1, 0.6, 0.3]])
    s = tf.multinomial(logits, 20000, seed=1)
    with tf.Session() as sess:
        x = sess.run(s)
    assert x.shape == (1, 20000) and x.dtype == np.int64
    freq = np.bincount(x[0], minlength=3) / 20000.0
    np.testing.assert_allclose(freq, [0.1, 0.6, 0.3], atol=0.02)


def test_variables_feed_c_collections(tf):
    from dflow import _dflow
    tf.Variable(1.0, name="a")
    tf.Variable(1.0, name="b", trainable=False)
    tf.Variable(1.0, name="c", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    sizes = _dflow.collection_sizes(tf.get_default_graph()._scope)
    assert sizes["global_variables"] == 2
    assert sizes["trainable_variables"] == 1
    assert sizes["local_variables"] == 1
    assert sizes["initializers"] == 2


def test_initialized_value_and_dependent_initial_value():
    def run(tf):
        a = tf.Variable(tf.constant([1.0, 2.0]), name="a")
        b = tf.Variable(a.initialized_value() * 3.0, name="b")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return sess.run([a, b])
    ours, theirs = run_both(run)
    assert_same(ours, theirs)


def test_variable_on_device_and_in_group(tf):
    with tf.device("/cpu:0"):
        v = tf.Variable(1.0, name="v")
    assert v.device.endswith("cpu:0") or "CPU:0" in v.device.upper()
    g = tf.group(v.initializer, name="grp")
    assert g.name == "grp" and g.type == "NoOp"
    with tf.Session() as sess:
        sess.run(g)
        assert sess.run(v) == 1.0


def test_initial_value_reading_another_variable():
    # TensorFlow's guard: b's initializer reads a's initialized_value(), so one run of every
    # initializer works whichever runs first.
    def run(tf):
        a = tf.Variable(tf.random_uniform([3], 1.0, 2.0), name="a")
        b = tf.Variable(a * 2.0 + 1.0, name="b")
        c = tf.Variable(lambda: tf.reduce_sum(a.value()), name="c")
        out = []
        init = tf.global_variables_initializer()
        for _ in range(10):
            with tf.Session() as sess:  # each session starts with no variable initialized
                sess.run(init)
                av, bv, cv = sess.run([a, b, c])
                out.append(bool(np.allclose(bv, av * 2.0 + 1.0)) and bool(np.isclose(cv, av.sum())))
        with tf.Session() as sess:
            sess.run(b.initializer)  # a not initialized: b starts from a's initial value
            out.append(sess.run(tf.report_uninitialized_variables()).tolist())
        return out, b.initial_value.name
    ours, theirs = run_both(run)
    assert ours == theirs
    assert ours[0] == [True] * 10 + [[b"a", b"c"]]


def test_reads_under_control_dependencies_see_the_update():
    def run(tf):
        v = tf.Variable([1.0, 2.0], name="v")
        a = tf.assign(v, [5.0, 6.0])
        b = tf.assign_add(v, [1.0, 1.0])
        with tf.control_dependencies([a]):
            y = v + 0.0
        with tf.control_dependencies([b]):
            z = tf.identity(v)
        with tf.Session() as sess:
            sess.run(v.initializer)
            return sess.run(y), sess.run(z), y.name, z.name
    ours, theirs = run_both(run)
    assert_same(ours, theirs)


def test_custom_getters_and_scope_defaults():
    def run(tf):
        log = []

        def outer(getter, name, *args, **kwargs):
            log.append(("outer", name))
            return getter(name + "_o", *args, **kwargs)

        def inner(getter, name, *args, **kwargs):
            log.append(("inner", name))
            kwargs["trainable"] = False
            return getter(name, *args, **kwargs)

        with tf.variable_scope("a", custom_getter=outer):
            with tf.variable_scope("b", custom_getter=inner, dtype=tf.float64,
                                   initializer=tf.ones_initializer()):
                v = tf.get_variable("v", [2])
        local = tf.get_local_variable("loc", [1])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            val = sess.run(v)
        return (log, v.name, v.dtype.name, [x.name for x in tf.trainable_variables()], local.name,
                [x.name for x in tf.local_variables()], val.tolist())
    ours, theirs = run_both(run)
    assert ours == theirs


def test_partitioned_variables():
    def run(tf):
        init = np.arange(21.0, dtype=np.float32).reshape(7, 3)
        with tf.variable_scope("s"):
            v = tf.get_variable("emb", initializer=tf.constant(init), partitioner=tf.fixed_size_partitioner(3))
            w = tf.get_variable("w", [10, 4], partitioner=tf.min_max_variable_partitioner(4, min_slice_size=64))
            u = tf.get_variable("u", [6, 100], partitioner=tf.variable_axis_size_partitioner(800, axis=1))
        with tf.variable_scope("s", reuse=True):
            same = tf.get_variable("emb", [7, 3], partitioner=tf.fixed_size_partitioner(3)) is v
        t = tf.convert_to_tensor(v)
        loss = tf.reduce_sum(t * t) + tf.reduce_sum(tf.convert_to_tensor(w))
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        info = [[x.name for x in tf.global_variables()], t.name, [str(x.shape) for x in v], len(list(w)),
                [str(x.shape) for x in u], same, len(v)]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(t)
            sess.run(train)
            return info, before, sess.run(t), np.std(sess.run(tf.convert_to_tensor(w))) > 0
    ours, theirs = run_both(run)
    assert ours[0] == theirs[0]
    assert_same(ours[1:], theirs[1:])
