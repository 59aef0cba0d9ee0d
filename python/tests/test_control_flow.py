"""tf.cond, tf.while_loop, tf.case, tf.group, tf.tuple and assertions, against TensorFlow."""
import collections

import pytest

from conftest import assert_same, run_both


def test_cond_values_and_structures():
    def run(tf):
        x = tf.placeholder(tf.float32, [])
        a = tf.cond(x > 0, lambda: x * 2, lambda: -x)
        b = tf.cond(x > 0, lambda: (x, {"k": [x + 1.0]}), lambda: (x - 1.0, {"k": [x * 10.0]}))
        c = tf.cond(x > 0, lambda: [x], lambda: [x + 5.0])            # a singleton is unpacked
        d = tf.cond(x > 0, lambda: [x], lambda: [x + 5.0], strict=True)
        e = tf.cond(x < 0, lambda: tf.constant(1), lambda: tf.constant(2))
        f = tf.cond(tf.constant(True), lambda: 3.0, lambda: 4.0)     # Python values in branches
        types = [type(t).__name__.replace("Symbolic", "") for t in (b, b[1], b[1]["k"], c, d)]
        out = []
        with tf.Session() as sess:
            for v in (2.0, -3.0):
                out.append(sess.run([a, b, c, d, e, f], {x: v}))
        return types, out
    ours, theirs = run_both(run)
    assert ours[0] == theirs[0]
    assert_same(ours[1], theirs[1])


def test_cond_runs_only_the_taken_branch():
    def run(tf):
        v = tf.Variable(0, name="v")
        p = tf.placeholder(tf.bool, [])
        r = tf.cond(p, lambda: tf.assign_add(v, 1), lambda: tf.assign_add(v, 100))
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(r, {p: True})
            sess.run(r, {p: True})
            sess.run(r, {p: False})
            return sess.run(v)
    ours, theirs = run_both(run)
    assert ours == theirs == 102


def test_cond_errors():
    def run(tf):
        out = []
        x = tf.constant(1.0)
        for call in (lambda: tf.cond(True, lambda: x, lambda: x),
                     lambda: tf.cond(x > 0, 1.0, lambda: x),
                     lambda: tf.cond(x > 0, lambda: (x, x), lambda: x),
                     lambda: tf.cond(x > 0, lambda: x, lambda: tf.constant(1))):
            try:
                call()
                out.append(None)
            except (TypeError, ValueError) as e:
                out.append(type(e).__name__)
        return out
    ours, theirs = run_both(run)
    assert ours == theirs


def test_python_exception_in_branch_or_body_reaches_caller(tf):
    class Boom(Exception):
        pass

    def fail():
        raise Boom("from the branch")

    x = tf.constant(1.0)
    with pytest.raises(Boom, match="from the branch"):
        tf.cond(x > 0, fail, lambda: x)
    with pytest.raises(Boom):
        tf.cond(x > 0, lambda: x, fail)
    with pytest.raises(Boom):
        tf.while_loop(lambda i: i < 3, lambda i: fail(), [tf.constant(0)])
    with pytest.raises(Boom):
        tf.while_loop(lambda i: fail(), lambda i: i + 1, [tf.constant(0)])
    with pytest.raises(ZeroDivisionError):
        tf.cond(x > 0, lambda: 1 / 0, lambda: x)
    # The graph still works afterwards.
    y = tf.cond(x > 0, lambda: x + 1, lambda: x)
    with tf.Session() as sess:
        assert sess.run(y) == 2.0


def test_while_loop_values_and_structures():
    def run(tf):
        n = tf.placeholder(tf.int32, [])
        r1 = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), [tf.constant(0), tf.constant(0)])
        r2 = tf.while_loop(lambda i: i < 10, lambda i: i * 2, [tf.constant(1)])
        Pair = collections.namedtuple("Pair", "a b")
        r3 = tf.while_loop(lambda p, c: p.a < 50.0, lambda p, c: (Pair(p.a * 3.0, p.b + 1.0), [c[0] - 1]),
                           (Pair(tf.constant(1.0), tf.constant(0.0)), [tf.constant(100)]))
        r4 = tf.while_loop(lambda i: i < 1000, lambda i: i + 1, [tf.constant(0)], maximum_iterations=7)
        r5 = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2.0), (0, tf.constant([1.0, 2.0])),
                           maximum_iterations=10)
        # Loops nest, and a loop body may hold a cond.
        r6 = tf.while_loop(lambda i, acc: i < 4,
                           lambda i, acc: (i + 1, acc + tf.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + j),
                                                                      [0, 0])[1]
                                           + tf.cond(i > 1, lambda: 100, lambda: 0)),
                           [0, 0])
        types = [type(r).__name__.replace("Symbolic", "") for r in (r1, r2, r3, r3[0], r4, r5)]
        with tf.Session() as sess:
            return types, sess.run([r1, r2, r3, r4, r5, r6], {n: 5})
    ours, theirs = run_both(run)
    assert ours[0] == theirs[0]
    assert_same(ours[1], theirs[1])


def test_while_loop_shape_invariants():
    def run(tf):
        x0 = tf.constant([1.0])
        out = []
        try:
            tf.while_loop(lambda x: tf.size(x) < 8, lambda x: tf.concat([x, x], 0), [x0])
        except ValueError as e:
            out.append(str(e).split(" To allow")[0])
        r = tf.while_loop(lambda x: tf.size(x) < 8, lambda x: tf.concat([x, x * 2.0], 0), [x0],
                          shape_invariants=[tf.TensorShape([None])])
        out.append(str(r.shape))
        with tf.Session() as sess:
            out.append(sess.run(r).tolist())
        return out
    ours, theirs = run_both(run)
    assert ours == theirs


def test_while_loop_argument_errors():
    def run(tf):
        out = []
        for call in (lambda: tf.while_loop(1, lambda i: i, [tf.constant(0)]),
                     lambda: tf.while_loop(lambda i: i < 1, 1, [tf.constant(0)]),
                     lambda: tf.while_loop(lambda i: i < 1, lambda i: i, []),
                     lambda: tf.while_loop(lambda i, j: i < 1, lambda i, j: (i + 1, j, j), [1, 2])):
            try:
                call()
                out.append(None)
            except (TypeError, ValueError) as e:
                out.append(type(e).__name__)
        return out
    ours, theirs = run_both(run)
    assert ours == theirs


def test_case():
    def run(tf):
        x = tf.placeholder(tf.int32, [])
        r = tf.case([(tf.equal(x, 1), lambda: tf.constant(10)), (tf.equal(x, 2), lambda: tf.constant(20))],
                    default=lambda: tf.constant(-1))
        r2 = tf.case([(x < 0, lambda: tf.constant(0)), (x >= 0, lambda: tf.constant(1))])
        out = []
        with tf.Session() as sess:
            for v in (1, 2, 3):
                out.append(sess.run([r, r2], {x: v}))
        return out
    ours, theirs = run_both(run)
    assert_same(ours, theirs)


def test_group_tuple_and_dependencies():
    def run(tf):
        a = tf.Variable(0, name="a")
        b = tf.Variable(0, name="b")
        g = tf.group(tf.assign_add(a, 1), tf.assign_add(b, 2), name="both")
        t = tf.tuple([a.read_value(), tf.constant(5)])
        with tf.control_dependencies([g]):
            after = tf.identity(tf.constant(1))
        names = [g.name, g.type, [x.op.type for x in t]]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(g)
            sess.run(after)
            vals = sess.run([a, b] + t)
        return names, vals
    ours, theirs = run_both(run)
    assert ours[0] == theirs[0]
    assert_same(ours[1], theirs[1])


def test_assert_ops():
    def run(tf):
        x = tf.placeholder(tf.float32, [2])
        out = []
        checks = [tf.Assert(tf.reduce_all(x > 0), [x]), tf.assert_equal(x, tf.constant([1.0, 2.0])),
                  tf.debugging.assert_less(x, 10.0), tf.assert_positive(x), tf.debugging.assert_non_negative(x)]
        with tf.Session() as sess:
            for c in checks:
                for v in ([1.0, 2.0], [-1.0, 2.0]):
                    try:
                        sess.run(c, {x: v})
                        out.append("ok")
                    except tf.errors.InvalidArgumentError:
                        out.append("InvalidArgument")
        try:
            tf.assert_equal(tf.constant(1), tf.constant(2))
            out.append("built")
        except tf.errors.InvalidArgumentError:
            out.append("static InvalidArgument")
        return out
    ours, theirs = run_both(run)
    assert ours == theirs


def test_variables_made_in_a_loop_body_live_outside_it():
    def run(tf):
        def body(i, x):
            with tf.variable_scope("cell", reuse=tf.AUTO_REUSE):
                w = tf.get_variable("w", [], initializer=tf.constant_initializer(2.0))
                b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
            return i + 1, x * w + b
        i, x = tf.while_loop(lambda i, x: i < 3, body, [0, tf.constant([1.0, 3.0])])
        w = tf.global_variables()[0]
        g = tf.gradients(tf.reduce_sum(x), tf.global_variables())
        names = sorted(v.name for v in tf.global_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return names, sess.run([i, x, g])
    ours, theirs = run_both(run)
    assert ours[0] == theirs[0] == ["cell/b:0", "cell/w:0"]
    assert_same(ours[1], theirs[1])


def test_variable_reads_in_branches_and_their_gradients():
    def run(tf):
        v = tf.Variable(3.0, name="v")
        p = tf.placeholder(tf.bool, [])
        y = tf.cond(p, lambda: v.read_value() * 2.0, lambda: v * 5.0)
        g = tf.gradients(y, v)
        with tf.Session() as sess:
            sess.run(v.initializer)
            return [sess.run([y, g], {p: val}) for val in (True, False)]
    ours, theirs = run_both(run)
    assert_same(ours, theirs)


def test_loop_and_cond_output_names():
    def run(tf):
        a = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
        b = tf.while_loop(lambda i, j: i < 3, lambda i, j: (i + 1, j), [0, 1], name="foo")
        c = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], maximum_iterations=5)
        d = tf.cond(tf.constant(True), lambda: 1, lambda: 2)
        return [a.name, [t.name for t in b], c.name, d.name]
    ours, theirs = run_both(run)
    assert ours == theirs
