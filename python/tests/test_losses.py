"""tf.losses: values under every reduction and kind of weights, names and collections, against
real TensorFlow."""
import numpy as np
import pytest

from conftest import assert_same, real_tf, run_both

import dflow

RNG = np.random.RandomState(3)
LABELS = RNG.rand(4, 3).astype(np.float32)
PREDS = RNG.rand(4, 3).astype(np.float32)
LOGITS = RNG.randn(4, 3).astype(np.float32)
ONEHOT = np.eye(3, dtype=np.float32)[[0, 2, 1, 2]]
CLASSES = np.array([0, 2, 1, 2], np.int32)
BINARY = (RNG.rand(4, 3) > 0.5).astype(np.float32)

REDUCTIONS = ["none", "weighted_sum", "weighted_mean", "weighted_sum_over_batch_size",
              "weighted_sum_by_nonzero_weights"]
WEIGHTS = {
    "default": None,
    "scalar": 2.5,
    "zero": 0.0,
    "per_example": np.array([[1.], [0.], [2.], [0.5]], np.float32),
    "per_column": np.array([[0., 1., 3.]], np.float32),
    "full": RNG.rand(4, 3).astype(np.float32) * (RNG.rand(4, 3) > 0.3),
    "all_zero": np.zeros((4, 3), np.float32),
}


def _losses(tf, kw):
    L = tf.losses
    out = [L.mean_squared_error(LABELS, PREDS, **kw), L.absolute_difference(LABELS, PREDS, **kw),
           L.log_loss(BINARY, PREDS, **kw), L.hinge_loss(BINARY, LOGITS, **kw),
           L.huber_loss(LABELS, LOGITS, **kw), L.huber_loss(LABELS, LOGITS, delta=0.3, **kw),
           L.sigmoid_cross_entropy(BINARY, LOGITS, **kw),
           L.sigmoid_cross_entropy(BINARY, LOGITS, label_smoothing=0.2, **kw)]
    return out


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weights", sorted(WEIGHTS))
def test_elementwise_losses(reduction, weights):
    w = WEIGHTS[weights]

    def run(tf):
        kw = {"reduction": reduction}
        if w is not None:
            kw["weights"] = w
        outs = _losses(tf, kw)
        with tf.Session() as sess:
            return [o.name for o in outs], sess.run(outs), len(tf.get_collection(tf.GraphKeys.LOSSES))
    ours, theirs = run_both(run)
    assert ours[0] == theirs[0]
    assert_same(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_example_losses(reduction):
    per_example = np.array([1., 0., 2., 0.5], np.float32)

    def run(tf):
        L = tf.losses
        outs = [L.softmax_cross_entropy(ONEHOT, LOGITS, reduction=reduction),
                L.softmax_cross_entropy(ONEHOT, LOGITS, weights=per_example, reduction=reduction),
                L.softmax_cross_entropy(ONEHOT, LOGITS, label_smoothing=0.1, weights=3.0, reduction=reduction),
                L.sparse_softmax_cross_entropy(CLASSES, LOGITS, reduction=reduction),
                L.sparse_softmax_cross_entropy(CLASSES[:, None], LOGITS, weights=per_example[:, None],
                                               reduction=reduction),
                L.sparse_softmax_cross_entropy(CLASSES.astype(np.int64), LOGITS, weights=per_example,
                                               reduction=reduction),
                L.cosine_distance(ONEHOT, LOGITS / np.linalg.norm(LOGITS, axis=1, keepdims=True), axis=1,
                                  reduction=reduction),
                L.cosine_distance(ONEHOT, LOGITS, dim=1, weights=per_example[:, None], reduction=reduction)]
        with tf.Session() as sess:
            return [o.name for o in outs], sess.run(outs)
    ours, theirs = run_both(run)
    assert ours[0] == theirs[0]
    assert_same(ours[1], theirs[1], rtol=1e-5, atol=1e-6)


def test_mean_pairwise_squared_error():
    def run(tf):
        L = tf.losses
        outs = [L.mean_pairwise_squared_error(LABELS, PREDS),
                L.mean_pairwise_squared_error(LABELS, PREDS, weights=np.array([1., 0., 2., 3.], np.float32)[:, None]),
                L.mean_pairwise_squared_error(LABELS, PREDS, weights=0.0)]
        with tf.Session() as sess:
            return sess.run(outs)
    ours, theirs = run_both(run)
    assert_same(ours, theirs, rtol=1e-5, atol=1e-6)


def test_placeholders_and_dtypes():
    def run(tf):
        y = tf.placeholder(tf.float32, [None, 3])
        p = tf.placeholder(tf.float32, [None, 3])
        w = tf.placeholder(tf.float32, [None, 1])
        d = tf.placeholder(tf.float64, [None])
        outs = [tf.losses.mean_squared_error(y, p, w), tf.losses.absolute_difference(y, p, weights=w,
                                                                                     reduction="weighted_mean"),
                tf.losses.mean_squared_error(d, d * 2), tf.losses.compute_weighted_loss(d, 2.0),
                tf.losses.compute_weighted_loss(d, reduction="none")]
        with tf.Session() as sess:
            vals = sess.run(outs, {y: LABELS, p: PREDS, w: [[1.], [2.], [0.], [1.]], d: [1., 2., 3.]})
        return [o.dtype.name for o in outs], vals
    ours, theirs = run_both(run)
    assert_same(ours, theirs)


def _error_names(build, feed=None):
    names = []
    for m in (dflow, real_tf()):
        with m.Graph().as_default():
            try:
                out, fd = build(m)
                with m.Session() as sess:
                    sess.run(out, fd)
            except Exception as e:  # noqa: BLE001 - the class is compared
                names.append(type(e).__name__)
            else:
                names.append(None)
    return names


def test_errors():
    # weights that cannot broadcast: at once when the shapes are known, else when run
    assert _error_names(lambda tf: (tf.losses.mean_squared_error(LABELS, PREDS, weights=[1., 2.]), None)) == \
        ["ValueError"] * 2
    assert _error_names(lambda tf: (tf.losses.mean_squared_error(LABELS, PREDS, weights=[[1.], [2.]]), None)) == \
        ["ValueError"] * 2

    def runtime(tf):
        w = tf.placeholder(tf.float32)
        return tf.losses.mean_squared_error(LABELS, PREDS, weights=w), {w: [1., 2.]}
    assert _error_names(runtime) == ["InvalidArgumentError"] * 2

    def runtime_ok(tf):
        w = tf.placeholder(tf.float32)
        return tf.losses.mean_squared_error(LABELS, PREDS, weights=w), {w: [[1.], [2.], [3.], [4.]]}
    assert _error_names(runtime_ok) == [None, None]
    assert _error_names(lambda tf: (tf.losses.mean_squared_error(LABELS, PREDS[:2]), None)) == ["ValueError"] * 2
    assert _error_names(lambda tf: (tf.losses.mean_squared_error(LABELS, PREDS, reduction="avg"), None)) == \
        ["ValueError"] * 2
    assert _error_names(lambda tf: (tf.losses.mean_squared_error(None, PREDS), None)) == ["ValueError"] * 2
    assert _error_names(lambda tf: (tf.losses.cosine_distance(LABELS, PREDS), None)) == ["ValueError"] * 2


def test_collections_and_totals():
    def run(tf):
        a = tf.losses.mean_squared_error(LABELS, PREDS)
        b = tf.losses.absolute_difference(LABELS, PREDS, loss_collection="mine")
        c = tf.losses.log_loss(BINARY, PREDS, loss_collection=None)
        with tf.name_scope("tower"):
            d = tf.losses.hinge_loss(BINARY, LOGITS)
        tf.losses.add_loss(tf.constant(0.25))
        tf.losses.add_loss(tf.constant(100.), loss_collection=None)
        tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.constant(2.0))
        tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.constant(3.0))
        total = tf.losses.get_total_loss()
        total_noreg = tf.losses.get_total_loss(add_regularization_losses=False, name="t2")
        reg = tf.losses.get_regularization_loss()
        info = {"losses": [t.name for t in tf.losses.get_losses()],
                "mine": [t.name for t in tf.losses.get_losses(loss_collection="mine")],
                "scoped": [t.name for t in tf.losses.get_losses(scope="tower")],
                "reg": [t.name for t in tf.losses.get_regularization_losses()],
                "names": [total.name, total_noreg.name, reg.name, a.name, b.name, c.name, d.name]}
        with tf.Session() as sess:
            info["values"] = sess.run([total, total_noreg, reg])
        return info
    ours, theirs = run_both(run)
    assert_same(ours, theirs)


def test_empty_regularization_loss():
    def run(tf):
        r = tf.losses.get_regularization_loss()
        with tf.Session() as sess:
            return r.op.type, sess.run(r)
    ours, theirs = run_both(run)
    assert_same(ours, theirs)
    assert dflow.losses.Reduction.all() == real_tf().losses.Reduction.all()
    assert dflow.losses.Reduction.SUM_OVER_NONZERO_WEIGHTS == real_tf().losses.Reduction.SUM_OVER_NONZERO_WEIGHTS


def test_loss_gradients():
    def run(tf):
        p = tf.constant(PREDS)
        lg = tf.constant(LOGITS)
        w = WEIGHTS["full"]
        losses = [tf.losses.mean_squared_error(LABELS, p, w), tf.losses.absolute_difference(LABELS, p),
                  tf.losses.log_loss(BINARY, p, w, reduction="weighted_mean"), tf.losses.hinge_loss(BINARY, lg),
                  tf.losses.huber_loss(LABELS, lg, delta=0.5), tf.losses.sigmoid_cross_entropy(BINARY, lg, w),
                  tf.losses.softmax_cross_entropy(ONEHOT, lg, label_smoothing=0.1),
                  tf.losses.sparse_softmax_cross_entropy(CLASSES, lg, weights=[1., 0., 2., 1.]),
                  tf.losses.cosine_distance(ONEHOT, lg, axis=1)]
        grads = []
        for loss in losses:
            grads += [g for g in tf.gradients(loss, [p, lg]) if g is not None]
        with tf.Session() as sess:
            return sess.run(grads)
    ours, theirs = run_both(run)
    assert_same(ours, theirs, rtol=1e-5, atol=1e-6)
