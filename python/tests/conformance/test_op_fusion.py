"""dflow's op fusion (Conv2D / MatMul + BiasAdd + activation as one kernel) against real
TensorFlow, whose remapper fuses the same chains: TensorFlow's GraphDef run in TensorFlow with its
default rewrites and in dflow with fusion on (the default) and off (TensorFlow's
rewrite_options.remapping = OFF), the trace showing which kernels ran. Also a training graph
(TensorFlow's own gradients), whose chains fuse too, and a fetched intermediate, which must not."""
import numpy as np

import dflow
from tfref import real_tf, tf_graph_def

RNG = np.random.RandomState(77)
F32 = dict(rtol=2e-4, atol=2e-5)


def build_layers(tf):
    x = tf.placeholder(tf.float32, [4, 9, 9, 3], name="x")
    a = tf.placeholder(tf.float32, [6, 20], name="a")

    def const(shape, name, scale=0.5):
        return tf.constant(RNG.uniform(-scale, scale, shape).astype(np.float32), name=name)

    c1 = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, const([3, 3, 3, 5], "f1"), [1, 1, 1, 1], "SAME"),
                                   const([5], "b1")), name="c1")
    c2 = tf.nn.relu6(tf.nn.bias_add(tf.nn.conv2d(c1, const([2, 2, 5, 4], "f2", 2.0), [1, 2, 2, 1], "VALID"),
                                    const([4], "b2", 3.0)), name="c2")
    c3 = tf.nn.elu(tf.nn.bias_add(tf.nn.conv2d(c2, const([1, 1, 4, 2], "f3"), [1, 1, 1, 1], "SAME"),
                                  const([2], "b3")), name="c3")
    m1 = tf.nn.relu(tf.nn.bias_add(tf.matmul(a, const([20, 8], "w1")), const([8], "v1")), name="m1")
    m2 = tf.nn.bias_add(tf.matmul(m1, const([3, 8], "w2"), transpose_b=True), const([3], "v2"), name="m2")
    return [c1, c2, c3, m1, m2]


def feeds():
    return {"x:0": RNG.uniform(-1, 1, [4, 9, 9, 3]).astype(np.float32),
            "a:0": RNG.uniform(-1, 1, [6, 20]).astype(np.float32)}


def run_tf_default(gd, fetches, feed):
    """TensorFlow with its default graph rewrites (its remapper fuses these chains)."""
    tf = real_tf()
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(tf.GraphDef.FromString(gd), name="")
        with tf.Session() as s:
            return s.run(fetches, feed)


def run_dflow_traced(gd, fetches, feed, fuse, targets=()):
    """dflow on the same bytes; returns (values, ops the last run ran)."""
    config = dflow.ConfigProto()
    if not fuse:
        config.graph_options.rewrite_options.remapping = dflow.RewriterConfig.OFF
    g = dflow.Graph()
    with g.as_default():
        dflow.import_graph_def(dflow.GraphDef.FromString(gd), name="")
        with dflow.Session(config=config) as s:
            for t in targets:
                s.run(t, feed)
            md = dflow.RunMetadata()
            out = s.run(fetches, feed, options=dflow.RunOptions(trace_level=dflow.RunOptions.FULL_TRACE),
                        run_metadata=md)
    ran = [n.timeline_label.split(" = ")[1][:-2] for d in md.step_stats.dev_stats for n in d.node_stats]
    return out, ran


def test_layers_match_tensorflow_fused_and_unfused():
    gd, outs = tf_graph_def(build_layers)
    feed = feeds()
    want = run_tf_default(gd, outs, feed)
    fused, ran_fused = run_dflow_traced(gd, outs, feed, fuse=True)
    plain, ran_plain = run_dflow_traced(gd, outs, feed, fuse=False)
    for name, w, f, p in zip(outs, want, fused, plain):
        assert f.shape == w.shape and f.dtype == w.dtype, name
        np.testing.assert_allclose(f, w, err_msg="fused " + name, **F32)
        np.testing.assert_allclose(p, w, err_msg="unfused " + name, **F32)
    assert ran_fused.count("_FusedConv2D") == 3, ran_fused
    assert ran_fused.count("_FusedMatMul") == 2, ran_fused
    assert "BiasAdd" not in ran_fused and "Conv2D" not in ran_fused
    assert "_FusedConv2D" not in ran_plain and ran_plain.count("BiasAdd") == 5, ran_plain
    # c1 and m1 feed the next layers and are fetched: the fused nodes keep their names.
    assert outs[0] == "c1:0" and outs[3] == "m1:0"


def test_fetched_intermediate_keeps_its_chain_apart():
    def build(tf):
        x = tf.placeholder(tf.float32, [2, 5, 5, 2], name="x")
        conv = tf.nn.conv2d(x, tf.constant(RNG.uniform(-1, 1, [3, 3, 2, 3]).astype(np.float32)), [1, 1, 1, 1],
                            "SAME", name="conv")
        return [conv, tf.nn.relu(tf.nn.bias_add(conv, tf.constant([0.1, -0.2, 0.3])), name="relu")]

    gd, outs = tf_graph_def(build)
    feed = {"x:0": RNG.uniform(-1, 1, [2, 5, 5, 2]).astype(np.float32)}
    want = run_tf_default(gd, outs, feed)
    got, ran = run_dflow_traced(gd, outs, feed, fuse=True)
    assert "Conv2D" in ran and "_FusedConv2D" not in ran, ran
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, **F32)


def test_training_graph_fuses_and_trains_like_tensorflow():
    """A TensorFlow-built training step (its gradients, GradientDescent): the forward chains fuse
    (their gradients read only inputs and the activation's output) and the variables after three
    steps are TensorFlow's."""
    def build(tf):
        x = tf.placeholder(tf.float32, [4, 6, 6, 2], name="x")
        y = tf.placeholder(tf.int32, [4], name="y")
        w = tf.Variable(RNG.uniform(-0.5, 0.5, [3, 3, 2, 4]).astype(np.float32), name="w")
        b = tf.Variable(np.zeros([4], np.float32) + 0.1, name="b")
        v = tf.Variable(RNG.uniform(-0.5, 0.5, [6 * 6 * 4, 3]).astype(np.float32), name="v")
        c = tf.Variable(np.zeros([3], np.float32), name="c")
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))
        logits = tf.nn.bias_add(tf.matmul(tf.reshape(h, [4, -1]), v), c)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss, name="train")
        init = tf.global_variables_initializer()
        return [loss, train, init, w, b, v, c]

    gd, (loss, train, init, w, b, v, c) = tf_graph_def(build)
    feed = {"x:0": RNG.uniform(-1, 1, [4, 6, 6, 2]).astype(np.float32), "y:0": np.array([0, 1, 2, 1], np.int32)}
    tf = real_tf()
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(tf.GraphDef.FromString(gd), name="")
        with tf.Session() as s:
            s.run(init)
            for _ in range(3):
                s.run(train, feed)
            want = s.run([loss, w, b, v, c], feed)
    dg = dflow.Graph()
    with dg.as_default():
        dflow.import_graph_def(dflow.GraphDef.FromString(gd), name="")
        with dflow.Session() as s:
            s.run(init)
            s.run(train, feed)
            s.run(train, feed)
            md = dflow.RunMetadata()
            s.run(train, feed, options=dflow.RunOptions(trace_level=dflow.RunOptions.FULL_TRACE), run_metadata=md)
            got = s.run([loss, w, b, v, c], feed)
    ran = [n.timeline_label.split(" = ")[1][:-2] for d in md.step_stats.dev_stats for n in d.node_stats]
    for name, wv, gv in zip(["loss", "w", "b", "v", "c"], want, got):
        np.testing.assert_allclose(gv, wv, err_msg=name, **F32)
    # The training step ran the fused forward kernels beside the unchanged gradient kernels.
    assert ran.count("_FusedConv2D") == 1 and ran.count("_FusedMatMul") == 1, ran
    assert "Conv2D" not in ran and "BiasAdd" not in ran, ran
    assert "Conv2DBackpropFilter" in ran and "ReluGrad" in ran and "BiasAddGrad" in ran, ran
