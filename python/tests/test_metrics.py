"""tf.metrics against real TensorFlow: values after several update_op runs (with and without
weights), the names of values, update ops and variables, and the collections."""
import numpy as np
import pytest

from conftest import assert_same, run_both

RNG = np.random.RandomState(5)
BATCHES = 4
N = 6


def _batches(kind):
    out = []
    for i in range(BATCHES):
        r = np.random.RandomState(100 + i)
        if kind == "classes":
            out.append((r.randint(0, 3, N).astype(np.int64), r.randint(0, 3, N).astype(np.int64)))
        elif kind == "binary":
            out.append((r.rand(N) > 0.5, r.rand(N) > 0.4))
        elif kind == "probs":
            out.append(((r.rand(N) > 0.5).astype(np.float32), r.rand(N).astype(np.float32)))
        else:
            out.append((r.randn(N).astype(np.float32), r.randn(N).astype(np.float32)))
    return out


WEIGHTS = [np.random.RandomState(200 + i).rand(N).astype(np.float32) * (np.arange(N) % 3 != 0)
           for i in range(BATCHES)]

METRICS = {
    "accuracy": ("classes", lambda tf, l, p, w: tf.metrics.accuracy(l, p, weights=w)),
    "mean": ("reals", lambda tf, l, p, w: tf.metrics.mean(p, weights=w)),
    "mean_tensor": ("reals", lambda tf, l, p, w: tf.metrics.mean_tensor(p, weights=w)),
    "mean_squared_error": ("reals", lambda tf, l, p, w: tf.metrics.mean_squared_error(l, p, weights=w)),
    "root_mean_squared_error": ("reals", lambda tf, l, p, w: tf.metrics.root_mean_squared_error(l, p, weights=w)),
    "mean_absolute_error": ("reals", lambda tf, l, p, w: tf.metrics.mean_absolute_error(l, p, weights=w)),
    "mean_relative_error": ("reals", lambda tf, l, p, w: tf.metrics.mean_relative_error(l, p, l + 3.0, weights=w)),
    "percentage_below": ("reals", lambda tf, l, p, w: tf.metrics.percentage_below(p, 0.2, weights=w)),
    "precision": ("binary", lambda tf, l, p, w: tf.metrics.precision(l, p, weights=w)),
    "recall": ("binary", lambda tf, l, p, w: tf.metrics.recall(l, p, weights=w)),
    "true_positives": ("binary", lambda tf, l, p, w: tf.metrics.true_positives(l, p, weights=w)),
    "false_positives": ("binary", lambda tf, l, p, w: tf.metrics.false_positives(l, p, weights=w)),
    "true_negatives": ("binary", lambda tf, l, p, w: tf.metrics.true_negatives(l, p, weights=w)),
    "false_negatives": ("binary", lambda tf, l, p, w: tf.metrics.false_negatives(l, p, weights=w)),
    "auc": ("probs", lambda tf, l, p, w: tf.metrics.auc(l, p, weights=w)),
    "auc_pr": ("probs", lambda tf, l, p, w: tf.metrics.auc(l, p, weights=w, curve="PR", num_thresholds=50,
                                                          summation_method="careful_interpolation")),
    "auc_minoring": ("probs", lambda tf, l, p, w: tf.metrics.auc(l, p, weights=w, summation_method="minoring",
                                                                thresholds=[0.2, 0.5, 0.7])),
    "precision_at_thresholds": ("probs", lambda tf, l, p, w: tf.metrics.precision_at_thresholds(
        l, p, [0.3, 0.5, 0.8], weights=w)),
    "recall_at_thresholds": ("probs", lambda tf, l, p, w: tf.metrics.recall_at_thresholds(
        l, p, [0.3, 0.5, 0.8], weights=w)),
    "true_positives_at_thresholds": ("probs", lambda tf, l, p, w: tf.metrics.true_positives_at_thresholds(
        l, p, [0.1, 0.5], weights=w)),
    "false_negatives_at_thresholds": ("probs", lambda tf, l, p, w: tf.metrics.false_negatives_at_thresholds(
        l, p, [0.1, 0.5], weights=w)),
    "mean_per_class_accuracy": ("classes", lambda tf, l, p, w: tf.metrics.mean_per_class_accuracy(l, p, 3,
                                                                                                 weights=w)),
    "mean_iou": ("classes", lambda tf, l, p, w: tf.metrics.mean_iou(l, p, 3, weights=w)),
}


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("metric", sorted(METRICS))
def test_metric_streams(metric, weighted):
    kind, fn = METRICS[metric]
    data = _batches(kind)

    def run(tf):
        dt = {"classes": tf.int64, "binary": tf.bool, "probs": tf.float32, "reals": tf.float32}[kind]
        shape = [N] if metric == "mean_tensor" else [None]  # mean_tensor's totals need a known shape
        labels = tf.placeholder(dt if kind != "probs" else tf.float32, shape)
        preds = tf.placeholder(dt, shape)
        w = tf.placeholder(tf.float32, shape) if weighted else None
        value, update = fn(tf, labels, preds, w)
        info = {"names": [value.name, update.name],
                "local": [v.name for v in tf.local_variables()],
                "metric_vars": [v.name for v in tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)],
                "global": [v.name for v in tf.global_variables()]}
        seen = []
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            seen.append(sess.run(value))
            for i, (lab, pre) in enumerate(data):
                feed = {labels: lab, preds: pre}
                if weighted:
                    feed[w] = WEIGHTS[i]
                seen.append(sess.run(update, feed))
                seen.append(sess.run(value))
            sess.run(tf.local_variables_initializer())
            seen.append(sess.run(value))  # re-initialized: back to the empty metric
        info["values"] = seen
        return info
    ours, theirs = run_both(run)
    # The names of a metric's value and variables are TensorFlow's; update ops that are the
    # variables' AssignAdd (the counts) are named by the op's default in each.
    if metric.startswith(("true_", "false_")):
        ours["names"] = ours["names"][:1]
        theirs["names"] = theirs["names"][:1]
    assert_same(ours, theirs, rtol=1e-5, atol=1e-6)


def test_collections_and_scopes():
    def run(tf):
        lab = tf.constant([1, 0, 1, 1])
        pre = tf.constant([1, 1, 1, 0])
        a = tf.metrics.accuracy(lab, pre, metrics_collections=["m"], updates_collections=["u"])
        b = tf.metrics.accuracy(lab, pre, name="acc")
        with tf.variable_scope("eval"):
            c = tf.metrics.recall(lab, pre, metrics_collections=["m"], updates_collections=["u"])
            d = tf.metrics.mean(tf.cast(pre, tf.float32))
        e = tf.metrics.root_mean_squared_error(tf.cast(lab, tf.float32), tf.cast(pre, tf.float32),
                                               metrics_collections="m", updates_collections="u")
        tensors = [t for pair in (a, b, c, d, e) for t in pair]
        info = {"names": [t.name for t in tensors],
                "m": [t.name for t in tf.get_collection("m")], "u": [t.name for t in tf.get_collection("u")],
                "local": [v.name for v in tf.local_variables()], "trainable": tf.trainable_variables()}
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run([a[1], b[1], c[1], d[1], e[1]])
            info["values"] = sess.run([a[0], b[0], c[0], d[0], e[0]])
        return info
    ours, theirs = run_both(run)
    assert_same(ours, theirs)


def test_shapes_and_squeezing():
    def run(tf):
        outs = [tf.metrics.accuracy(tf.constant([[1], [2], [3]]), tf.constant([1, 2, 2])),
                tf.metrics.accuracy(tf.constant([1, 2, 3]), tf.constant([[1], [2], [2]]), weights=[[1.], [0.], [1.]]),
                tf.metrics.mean(tf.constant([[1., 2.], [3., 4.]]), weights=tf.constant([1., 0.])),
                tf.metrics.mean_squared_error(tf.constant([1., 2.]), tf.constant([[1.], [3.]])),
                tf.metrics.accuracy(tf.constant([1., 2.]), tf.constant([1, 2]))]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            return sess.run([u for _, u in outs])
    ours, theirs = run_both(run)
    assert_same(ours, theirs)


def test_errors(both):
    tf = both
    with pytest.raises(ValueError):
        tf.metrics.accuracy(tf.constant([1, 2, 3]), tf.constant([1, 2]))
    with pytest.raises(ValueError):
        tf.metrics.mean(tf.constant([1., 2., 3.]), weights=tf.constant([1., 2.]))
    with pytest.raises(ValueError):
        tf.metrics.mean_tensor(tf.placeholder(tf.float32, [None]))  # totals of an unknown shape
    with pytest.raises(ValueError):
        tf.metrics.auc([1, 0], [0.5, 0.5], curve="XY")
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.metrics.auc(tf.constant([1., 0.]), tf.constant([0.5, 1.5]))  # constant predictions outside [0, 1]
    p = tf.placeholder(tf.float32, [None])
    value, update = tf.metrics.auc(tf.constant([1., 0.]), p)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(update, {p: [0.5, 1.5]})  # predictions outside [0, 1]
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(value)  # a new session: the totals were never initialized


def test_metrics_in_a_training_loop(tf):
    """accuracy over a model trained in the same session: the streaming value is the mean over
    every batch seen since the local variables were initialized."""
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.int64, [None])
    logits = tf.layers.dense(x, 2)
    pred = tf.argmax(logits, 1)
    acc, acc_op = tf.metrics.accuracy(y, pred)
    xs = RNG.randn(40, 2).astype(np.float32)
    ys = (xs[:, 0] > 0).astype(np.int64)
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        got = []
        for i in range(4):
            got.append(sess.run([acc_op, pred], {x: xs[i * 10:(i + 1) * 10], y: ys[i * 10:(i + 1) * 10]})[1])
        want = np.mean(np.concatenate(got) == ys)
        np.testing.assert_allclose(sess.run(acc), want, rtol=1e-6)


def test_control_dependency_on_a_fed_placeholder():
    """mean's count waits on its values: when they are a fed placeholder, the wait is on the fed
    value (the placeholder itself does not run), as in TensorFlow."""
    def run(tf):
        p = tf.placeholder(tf.float32, [None])
        with tf.control_dependencies([p]):
            y = tf.constant(2.0) * 3
        with tf.Session() as sess:
            out = [sess.run(y, {p: [1.0]})]
            try:
                sess.run(y)
            except tf.errors.InvalidArgumentError:
                out.append("not fed")
            return out
    ours, theirs = run_both(run)
    assert_same(ours, theirs)
