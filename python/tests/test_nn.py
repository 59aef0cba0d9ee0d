"""tf.nn: every function's values (and node names, errors) against real TensorFlow."""
import numpy as np
import pytest

from conftest import assert_same, real_tf, run_both

import dflow

RNG = np.random.RandomState(7)
X = RNG.randn(3, 4).astype(np.float32)
SPECIAL = np.array([[0., -0., 1e-8, -1e-8], [50., -50., 100., -100.], [np.inf, -np.inf, np.nan, 3.]], np.float32)
IMG = RNG.randn(2, 7, 6, 3).astype(np.float32)
FILT = RNG.randn(3, 3, 3, 4).astype(np.float32)


def values(build, rtol=1e-5, atol=1e-6):
    """build(tf) → fetches, run under dflow and TensorFlow; asserts the values agree."""
    def run(tf):
        fetches = build(tf)
        with tf.Session() as sess:
            return sess.run(fetches)
    ours, theirs = run_both(run)
    assert_same(ours, theirs, rtol=rtol, atol=atol)
    return ours


def error_class(build):
    """The exception class build(tf) raises under dflow and under TensorFlow (names compared)."""
    names = []
    for m in (dflow, real_tf()):
        with m.Graph().as_default():
            try:
                out = build(m)
                with m.Session() as sess:
                    sess.run(out)
            except Exception as e:  # noqa: BLE001 - the class is what is compared
                names.append(type(e).__name__)
            else:
                names.append(None)
    return names


@pytest.mark.parametrize("fn", ["relu", "relu6", "elu", "selu", "softplus", "softsign", "sigmoid", "tanh",
                                "leaky_relu", "crelu", "swish"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activations(fn, dtype):
    def build(tf):
        dt = getattr(tf, dtype)
        x = tf.constant(X, dtype=dt)
        s = tf.constant(SPECIAL, dtype=dt)
        f = getattr(tf.nn, fn)
        return [f(x), f(s), f(tf.constant(np.zeros((0, 3)), dt))]
    values(build)


def test_leaky_relu_alpha_and_ints():
    values(lambda tf: [tf.nn.leaky_relu(X, alpha=0.5), tf.nn.leaky_relu(tf.constant([[-3, 2]]), 0.1),
                       tf.nn.leaky_relu(X, alpha=np.float32(0.01))])


def test_activation_names():
    def build(tf):
        x = tf.constant(X)
        outs = [tf.nn.relu(x), tf.nn.relu6(x), tf.nn.elu(x), tf.nn.selu(x), tf.nn.softplus(x), tf.nn.sigmoid(x),
                tf.nn.tanh(x), tf.nn.leaky_relu(x), tf.nn.softmax(x), tf.nn.log_softmax(x), tf.nn.relu(x, name="r"),
                tf.nn.bias_add(x, [1., 2., 3., 4.]), tf.nn.l2_loss(x), tf.nn.l2_normalize(x, 1),
                tf.nn.zero_fraction(x), tf.nn.xw_plus_b(x, tf.ones([4, 2]), [1., 2.])]
        outs += list(tf.nn.moments(x, [0]))
        outs.append(tf.nn.sigmoid_cross_entropy_with_logits(labels=X, logits=x))
        outs.append(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1, 2], logits=x))
        outs.append(tf.nn.conv2d(IMG, FILT, [1, 1, 1, 1], "SAME"))
        outs.append(tf.nn.max_pool(IMG, 2, 2, "VALID"))
        outs.append(tf.nn.avg_pool(IMG, [1, 2, 2, 1], [1, 1, 1, 1], "SAME", name="pool"))
        return [t.name for t in outs]
    ours, theirs = run_both(build)
    assert ours == theirs


@pytest.mark.parametrize("axis", [None, -1, 0, 1, 2, -3])
def test_softmax_axes(axis):
    x = RNG.randn(2, 3, 4).astype(np.float32)
    values(lambda tf: [tf.nn.softmax(x, axis=axis), tf.nn.log_softmax(x, axis=axis),
                       tf.nn.softmax(tf.constant(x, tf.float64), axis)])


def test_softmax_dim_and_special_values():
    values(lambda tf: [tf.nn.softmax(X, dim=0), tf.nn.log_softmax(X, dim=0), tf.nn.softmax(SPECIAL[:2]),
                       tf.nn.log_softmax(SPECIAL[:2]), tf.nn.softmax([1., 2., 3.]), tf.nn.softmax(np.zeros((0, 4)))])


def test_softmax_bad_axis_and_dtype():
    assert error_class(lambda tf: tf.nn.softmax(X, axis=2)) == ["InvalidArgumentError"] * 2
    assert error_class(lambda tf: tf.nn.softmax(X, axis=-3)) == ["InvalidArgumentError"] * 2
    assert error_class(lambda tf: tf.nn.softmax(X, axis=0, dim=0)) == ["ValueError"] * 2


def test_bias_add():
    v = RNG.randn(2, 3, 4).astype(np.float32)
    values(lambda tf: [tf.nn.bias_add(v, [1., 2., 3., 4.]), tf.nn.bias_add(v, [1., 2., 3.], data_format="NCHW"),
                       tf.nn.bias_add(tf.constant(v, tf.float64), np.ones(4)), tf.nn.bias_add(X, [1, 2, 3, 4.])])
    assert error_class(lambda tf: tf.nn.bias_add(v, [1., 2.])) == ["ValueError"] * 2
    assert error_class(lambda tf: tf.nn.bias_add(v, [1., 2., 3., 4.], data_format="HWC")) == ["ValueError"] * 2


def test_xw_plus_b_and_relu_layer():
    w = RNG.randn(4, 5).astype(np.float32)
    b = RNG.randn(5).astype(np.float32)
    values(lambda tf: [tf.nn.xw_plus_b(X, w, b), tf.nn.relu_layer(X, w, b), tf.nn.xw_plus_b(X, w, b, name="xw")])


@pytest.mark.parametrize("strides,padding,dilations", [
    ([1, 1, 1, 1], "SAME", None), ([1, 2, 2, 1], "VALID", None), (2, "SAME", None), ([1, 3], "VALID", None),
    (1, "SAME", [1, 2, 2, 1]), (1, "VALID", 2), (1, [[0, 0], [1, 2], [0, 1], [0, 0]], None)])
def test_conv2d(strides, padding, dilations):
    def build(tf):
        kw = {} if dilations is None else {"dilations": dilations}
        return [tf.nn.conv2d(IMG, FILT, strides, padding, **kw),
                tf.nn.conv2d(input=tf.constant(IMG, tf.float64), filters=FILT.astype(np.float64), strides=strides,
                             padding=padding, **kw)]
    values(build, rtol=1e-4, atol=1e-5)


def test_conv2d_shapes_and_errors():
    def build(tf):
        x = tf.placeholder(tf.float32, [None, 7, 6, 3])
        return [str(tf.nn.conv2d(x, FILT, 2, "SAME").shape), str(tf.nn.conv2d(x, FILT, [1, 2, 2, 1], "VALID").shape)]
    ours, theirs = run_both(build)
    assert ours == theirs
    # filter depth that does not match the input's
    assert error_class(lambda tf: tf.nn.conv2d(IMG, FILT[:, :, :2], 1, "SAME")) == ["ValueError"] * 2
    assert error_class(lambda tf: tf.nn.conv2d(IMG, FILT, [1, 2, 3], "SAME")) == ["ValueError"] * 2
    assert error_class(lambda tf: tf.nn.conv2d(IMG, FILT, 1, "EXPLICIT")) == ["ValueError"] * 2


def test_conv2d_transpose_and_backprops():
    out = RNG.randn(2, 4, 3, 4).astype(np.float32)

    def build(tf):
        return [tf.nn.conv2d_transpose(out, FILT, [2, 7, 6, 3], [1, 2, 2, 1], "SAME"),
                tf.nn.conv2d_transpose(out[:, :3, :2], FILT, [2, 7, 6, 3], 2, "VALID"),
                tf.nn.conv2d_backprop_input([2, 7, 6, 3], FILT, out, [1, 2, 2, 1], "SAME"),
                tf.nn.conv2d_backprop_filter(IMG, [3, 3, 3, 4], out, [1, 2, 2, 1], "SAME")]
    values(build, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("ksize,strides,padding", [
    (2, 2, "VALID"), ([1, 3, 3, 1], [1, 1, 1, 1], "SAME"), ([2, 3], [1, 2], "SAME"), (3, 2, "VALID"), (1, 1, "SAME")])
def test_pooling(ksize, strides, padding):
    values(lambda tf: [tf.nn.max_pool(IMG, ksize, strides, padding), tf.nn.avg_pool(IMG, ksize, strides, padding),
                       tf.nn.max_pool2d(IMG, ksize, strides, padding), tf.nn.avg_pool2d(IMG, ksize, strides, padding),
                       tf.nn.max_pool(tf.constant(IMG, tf.float64), ksize, strides, padding)])


def test_pooling_nchw_shapes_and_errors():
    def build(tf):
        x = tf.placeholder(tf.float32, [None, 3, 8, 8])
        return [str(tf.nn.max_pool(x, 2, 2, "VALID", data_format="NCHW").shape),
                str(tf.nn.avg_pool(x, [1, 1, 3, 3], [1, 1, 2, 2], "SAME", data_format="NCHW").shape)]
    ours, theirs = run_both(build)
    assert ours == theirs
    assert error_class(lambda tf: tf.nn.max_pool(IMG, 0, 1, "SAME")) == ["ValueError"] * 2
    assert error_class(lambda tf: tf.nn.max_pool(IMG, [2, 2, 2], 1, "SAME")) == ["ValueError"] * 2


def test_dropout_keeps_and_scales():
    x = np.ones((200, 50), np.float32) * 3

    def build(tf):
        tf.set_random_seed(5)
        return [tf.nn.dropout(x, keep_prob=0.25), tf.nn.dropout(x, rate=0.5, seed=3),
                tf.nn.dropout(x, 1.0), tf.nn.dropout(x, rate=tf.constant(0.8)),
                tf.nn.dropout(x, keep_prob=0.5, noise_shape=[200, 1])]
    ours, theirs = run_both(lambda tf: tf.Session().run(build(tf)))
    for o, t in zip(ours, theirs):
        assert o.shape == t.shape and o.dtype == t.dtype
    for keep, out_d, out_t in [(0.25, ours[0], theirs[0]), (0.5, ours[1], theirs[1]), (0.2, ours[3], theirs[3])]:
        for out in (out_d, out_t):
            np.testing.assert_allclose(out[out != 0], 3 / keep, rtol=1e-6)
            assert abs((out != 0).mean() - keep) < 0.03
    np.testing.assert_array_equal(ours[2], x)
    cols = ours[4]
    assert all(len(set(row)) == 1 for row in cols)  # one noise value per row
    assert set(np.unique(cols)) == {0.0, 6.0}


def test_dropout_names_shapes_and_errors():
    def build(tf):
        x = tf.placeholder(tf.float32, [None, 4])
        d = tf.nn.dropout(x, 0.5)
        return [d.op.type, str(d.shape), d.name.split("/")[0], tf.nn.dropout(x, rate=0.0) is x]
    ours, theirs = run_both(build)
    assert ours[1:] == theirs[1:]
    assert error_class(lambda tf: tf.nn.dropout(X, rate=1.0)) == ["ValueError"] * 2
    assert error_class(lambda tf: tf.nn.dropout(X, keep_prob=0.0)) == ["ValueError"] * 2
    assert error_class(lambda tf: tf.nn.dropout(X, rate=-0.1)) == ["ValueError"] * 2
    assert error_class(lambda tf: tf.nn.dropout(tf.constant([1, 2]), rate=0.5)) == ["ValueError"] * 2
    assert error_class(lambda tf: tf.nn.dropout(X)) == ["ValueError"] * 2
    assert error_class(lambda tf: tf.nn.dropout(X, keep_prob=0.5, rate=0.5)) == ["ValueError"] * 2


def test_l2_loss_normalize_zero_fraction():
    values(lambda tf: [tf.nn.l2_loss(X), tf.nn.l2_loss(tf.constant(X, tf.float64)), tf.nn.l2_normalize(X, 0),
                       tf.nn.l2_normalize(X, axis=[0, 1]), tf.nn.l2_normalize(X, dim=1, epsilon=1e-3),
                       tf.nn.l2_normalize(np.zeros((2, 2), np.float32), 1), tf.nn.zero_fraction(SPECIAL),
                       tf.nn.zero_fraction([[0, 1], [0, 0]]), tf.nn.l2_loss(np.zeros((0,), np.float32))])


@pytest.mark.parametrize("axes,keep", [([0], False), ([0, 1, 2], False), ([1, 2], True), ([-1], False)])
def test_moments(axes, keep):
    x = RNG.randn(4, 3, 5).astype(np.float32)
    values(lambda tf: list(tf.nn.moments(x, axes, keep_dims=keep)) +
           list(tf.nn.weighted_moments(x, axes, np.abs(x), keepdims=keep)) +
           list(tf.nn.normalize_moments(*tf.nn.sufficient_statistics(x, axes, keepdims=keep))) +
           list(tf.nn.normalize_moments(*tf.nn.sufficient_statistics(x, axes, shift=0.5, keepdims=keep))))


def test_batch_normalization():
    x = RNG.randn(4, 3).astype(np.float32)
    mean, var = x.mean(0), x.var(0)
    values(lambda tf: [tf.nn.batch_normalization(x, mean, var, [1., 2., 3.], [0.5, 1., 2.], 1e-3),
                       tf.nn.batch_normalization(x, mean, var, None, None, 1e-5),
                       tf.nn.batch_normalization(x, mean, var, None, 2.0, 0.1)])


def test_fused_batch_norm():
    scale = np.array([1., 2., 0.5], np.float32)
    offset = np.array([0., 1., -1.], np.float32)
    m = IMG.mean((0, 1, 2))
    v = IMG.var((0, 1, 2))

    def run(tf):
        x = tf.placeholder(tf.float32, [None, 7, 6, 3])
        # (TensorFlow's graph optimizer rewrites an inference batch norm to one output: fetch y only)
        outs = list(tf.nn.fused_batch_norm(x, scale, offset)) + [
            tf.nn.fused_batch_norm(x, scale, offset, m, v, epsilon=0.01, is_training=False)[0]]
        with tf.Session() as sess:
            return sess.run(outs, {x: IMG})
    ours, theirs = run_both(run)
    assert_same(ours, theirs, rtol=1e-4, atol=1e-5)


def test_softmax_cross_entropy():
    logits = RNG.randn(4, 5).astype(np.float32)
    labels = np.abs(RNG.randn(4, 5)).astype(np.float32)
    labels /= labels.sum(1, keepdims=True)
    l3 = RNG.randn(2, 3, 5).astype(np.float32)
    p3 = np.abs(RNG.randn(2, 3, 5)).astype(np.float32)

    def build(tf):
        return [tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits),
                tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits),
                tf.nn.softmax_cross_entropy_with_logits(labels=p3, logits=l3),
                tf.nn.softmax_cross_entropy_with_logits(labels=p3, logits=l3, dim=0),
                tf.nn.softmax_cross_entropy_with_logits_v2(labels=p3, logits=l3, axis=1),
                tf.nn.softmax_cross_entropy_with_logits(labels=[0., 1.], logits=[3., -1.]),
                tf.nn.softmax_cross_entropy_with_logits(labels=labels.astype(np.float64),
                                                        logits=logits.astype(np.float64))]
    values(build)

    def names(tf):
        a = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        b = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, name="xent")
        return [str(a.shape), str(b.shape), b.name, a.op.type, str(tf.nn.softmax_cross_entropy_with_logits(
            labels=p3, logits=l3).shape)]
    ours, theirs = run_both(names)
    assert ours == theirs
    assert error_class(lambda tf: tf.nn.softmax_cross_entropy_with_logits(logits=logits)) == ["ValueError"] * 2


def test_sparse_softmax_cross_entropy():
    logits = RNG.randn(4, 5).astype(np.float32)
    l3 = RNG.randn(2, 3, 5).astype(np.float32)

    def build(tf):
        return [tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 4, 2, 1], logits=logits),
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=np.array([3, 3, 0, 1], np.int64),
                                                               logits=logits),
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[[0, 1, 4], [2, 2, 3]], logits=l3),
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1],
                                                               logits=tf.constant([[1., 2.], [3., 1.]], tf.float64))]
    values(build)
    assert error_class(lambda tf: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=[[0, 1]], logits=logits)) == ["ValueError"] * 2
    assert error_class(lambda tf: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=[0, 1, 2], logits=logits)) == ["ValueError"] * 2
    assert error_class(lambda tf: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=0, logits=1.0)) == ["ValueError"] * 2
    # a label out of range fails the run
    assert error_class(lambda tf: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=[0, 9, 2, 1], logits=logits)) == ["InvalidArgumentError"] * 2


def test_sigmoid_and_weighted_cross_entropy():
    logits = np.concatenate([X, SPECIAL[:2]])
    labels = RNG.rand(*logits.shape).astype(np.float32)
    values(lambda tf: [tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits),
                       tf.nn.weighted_cross_entropy_with_logits(labels=labels, logits=logits, pos_weight=3.0),
                       tf.nn.weighted_cross_entropy_with_logits(targets=labels, logits=logits, pos_weight=0.5),
                       tf.nn.sigmoid_cross_entropy_with_logits(labels=labels.astype(np.float64),
                                                               logits=logits.astype(np.float64)),
                       tf.nn.log_poisson_loss(labels[:3], X),
                       tf.nn.log_poisson_loss(labels[:3] * 3, X / 10, compute_full_loss=True)])

    def names(tf):
        return [tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits).name,
                tf.nn.weighted_cross_entropy_with_logits(labels, logits, 2.0).name]
    ours, theirs = run_both(names)
    assert ours == theirs
    assert error_class(lambda tf: tf.nn.sigmoid_cross_entropy_with_logits(
        labels=labels[:2], logits=logits)) == ["ValueError"] * 2


def test_embedding_lookup():
    params = RNG.randn(10, 3).astype(np.float32)
    shards_div = [params[:4], params[4:7], params[7:]]
    shards_mod = [params[0::3], params[1::3], params[2::3]]
    ids = np.array([[0, 9, 4], [3, 3, 7]], np.int32)

    def build(tf):
        ph = tf.placeholder(tf.float32, [None, 3])
        return [tf.nn.embedding_lookup(params, ids), tf.nn.embedding_lookup(params, [5]),
                tf.nn.embedding_lookup(shards_div, ids, partition_strategy="div"),
                tf.nn.embedding_lookup(shards_mod, ids),
                tf.nn.embedding_lookup(shards_mod, ids.astype(np.int64), partition_strategy="mod"),
                tf.nn.embedding_lookup([params], ids),
                tf.nn.embedding_lookup(params, ids, max_norm=0.5),
                tf.nn.embedding_lookup([params[:5], ph], ids, partition_strategy="div")]
    ours, theirs = run_both(lambda tf: tf.Session().run(build(tf), {
        tf.get_default_graph().get_tensor_by_name("Placeholder:0"): params[5:]}))
    assert_same(ours, theirs)
    np.testing.assert_array_equal(ours[2], params[ids])
    np.testing.assert_array_equal(ours[3], params[ids])

    def shapes(tf):
        return [str(tf.nn.embedding_lookup(params, ids).shape), str(tf.nn.embedding_lookup(shards_mod, ids).shape),
                tf.nn.embedding_lookup(params, ids).name, tf.nn.embedding_lookup(shards_mod, ids, name="emb").name]
    ours, theirs = run_both(shapes)
    assert ours == theirs
    assert error_class(lambda tf: tf.nn.embedding_lookup([], ids)) == ["ValueError"] * 2
    assert error_class(lambda tf: tf.nn.embedding_lookup(shards_mod, ids, partition_strategy="x")) == ["ValueError"] * 2
    assert error_class(lambda tf: tf.nn.embedding_lookup(params, [11])) == ["InvalidArgumentError"] * 2


def test_conv1d_pool1d_convolution():
    seq = RNG.randn(2, 9, 3).astype(np.float32)
    f1 = RNG.randn(3, 3, 4).astype(np.float32)

    def build(tf):
        outs = [tf.nn.conv1d(seq, f1, 1, "SAME"), tf.nn.conv1d(seq, f1, stride=2, padding="VALID"),
                tf.nn.conv1d(input=seq, filters=f1, stride=1, padding="SAME", dilations=2),
                tf.nn.max_pool1d(seq, 2, 2, "VALID"), tf.nn.avg_pool1d(seq, 3, 1, "SAME"),
                tf.nn.convolution(seq, f1, "SAME"), tf.nn.convolution(IMG, FILT, "VALID", strides=[2, 1]),
                tf.nn.convolution(IMG, FILT, "SAME", dilation_rate=[2, 2])]
        return outs
    values(build, rtol=1e-4, atol=1e-5)

    def names(tf):
        return [tf.nn.conv1d(seq, f1, 1, "SAME").name, tf.nn.max_pool1d(seq, 2, 2, "VALID").name,
                str(tf.nn.conv1d(tf.placeholder(tf.float32, [None, 9, 3]), f1, 2, "SAME").shape)]
    ours, theirs = run_both(names)
    assert ours == theirs


def test_space_depth_and_average_losses():
    x = RNG.randn(2, 4, 6, 3).astype(np.float32)
    per_example = RNG.rand(5).astype(np.float32)
    d = RNG.randn(1, 2, 3, 8).astype(np.float32)
    values(lambda tf: [tf.nn.space_to_depth(x, 2), tf.nn.depth_to_space(tf.nn.space_to_depth(x, 2), 2),
                       tf.nn.depth_to_space(d, 2),
                       tf.nn.compute_average_loss(per_example), tf.nn.compute_average_loss(per_example, 2.0),
                       tf.nn.compute_average_loss(per_example, per_example, global_batch_size=10),
                       tf.nn.scale_regularization_loss([1., 2., 3.])])
    assert error_class(lambda tf: tf.nn.space_to_depth(x, 4)) == ["ValueError"] * 2
