"""TensorFlow peer of BM_TrainMLP, as a TensorFlow 1.x user writes it (tf.compat.v1, graph mode):
MLP 784-512-512-10 (weights truncated normal stddev 0.05, biases zero), batch 128 fed to
placeholders, sparse softmax cross-entropy, GradientDescentOptimizer(0.01); training steps per second
through Session.make_callable (Session.run's fast path). Tries inter-/intra-op thread pools of 1 and
2, each setting in a process of its own, and reports the best, with that process's peak resident
memory. Prints one JSON line:
{"name": "tf_mlp", "steps_per_second": ..., "inter_op": ..., "intra_op": ..., "peak_rss_mb": ...}.
"""
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from thread_settings import best_setting  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()


def dense(x, n_in, n_out, relu):
    w = tf1.Variable(tf1.truncated_normal([n_in, n_out], stddev=0.05, seed=1))
    b = tf1.Variable(tf1.zeros([n_out]))
    y = tf1.nn.bias_add(tf1.matmul(x, w), b)
    return tf1.nn.relu(y) if relu else y


def run(inter, intra, steps=200):
    g = tf1.Graph()
    with g.as_default():
        tf1.set_random_seed(0)
        x = tf1.placeholder(tf1.float32, [128, 784])
        labels = tf1.placeholder(tf1.int32, [128])
        logits = dense(dense(dense(x, 784, 512, True), 512, 512, True), 512, 10, False)
        loss = tf1.reduce_mean(tf1.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        train = tf1.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = tf1.global_variables_initializer()
    rng = np.random.default_rng(0)
    xv = rng.random((128, 784), dtype=np.float32)
    yv = rng.integers(0, 10, 128).astype(np.int32)
    config = tf1.ConfigProto(inter_op_parallelism_threads=inter, intra_op_parallelism_threads=intra)
    with tf1.Session(graph=g, config=config) as sess:
        sess.run(init)
        first = sess.run(loss, {x: xv, labels: yv})
        step = sess.make_callable(train, feed_list=[x, labels])
        for _ in range(20):  # warm up
            step(xv, yv)
        t0 = time.perf_counter()
        for _ in range(steps):
            step(xv, yv)
        rate = steps / (time.perf_counter() - t0)
        assert sess.run(loss, {x: xv, labels: yv}) < first, "the loss did not go down"
    return rate


best_setting("tf_mlp", lambda inter, intra: {"steps_per_second": run(inter, intra)}, key="steps_per_second",
             higher_is_better=True)
