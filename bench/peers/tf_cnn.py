"""TensorFlow peer of BM_TrainCNN, as a TensorFlow 1.x user writes it (tf.compat.v1, graph mode, NHWC):
conv 5x5x32 SAME + bias + relu, maxpool 2, conv 5x5x64 SAME + bias + relu, maxpool 2, fc 1024 + relu,
fc 10 on 28x28x1 inputs, batch 64 fed to placeholders, sparse softmax cross-entropy,
GradientDescentOptimizer(0.01) (weights truncated normal stddev 0.05, biases zero); training steps
per second through Session.make_callable. Tries inter-/intra-op thread pools of 1 and 2, each setting
in a process of its own, and reports the best, with that process's peak resident memory. Prints one JSON line:
{"name": "tf_cnn", "steps_per_second": ..., "inter_op": ..., "intra_op": ..., "peak_rss_mb": ...}.
"""
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from thread_settings import best_setting  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()


def param(shape, bias):
    init = tf1.zeros(shape) if bias else tf1.truncated_normal(shape, stddev=0.05, seed=1)
    return tf1.Variable(init)


def conv(x, cin, cout):
    w, b = param([5, 5, cin, cout], False), param([cout], True)
    y = tf1.nn.relu(tf1.nn.bias_add(tf1.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))
    return tf1.nn.max_pool(y, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")


def dense(x, n_in, n_out, relu):
    w, b = param([n_in, n_out], False), param([n_out], True)
    y = tf1.nn.bias_add(tf1.matmul(x, w), b)
    return tf1.nn.relu(y) if relu else y


def run(inter, intra, steps=30):
    g = tf1.Graph()
    with g.as_default():
        tf1.set_random_seed(0)
        x = tf1.placeholder(tf1.float32, [64, 28, 28, 1])
        labels = tf1.placeholder(tf1.int32, [64])
        flat = tf1.reshape(conv(conv(x, 1, 32), 32, 64), [64, 7 * 7 * 64])
        logits = dense(dense(flat, 7 * 7 * 64, 1024, True), 1024, 10, False)
        loss = tf1.reduce_mean(tf1.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        train = tf1.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = tf1.global_variables_initializer()
    rng = np.random.default_rng(0)
    xv = rng.random((64, 28, 28, 1), dtype=np.float32)
    yv = rng.integers(0, 10, 64).astype(np.int32)
    config = tf1.ConfigProto(inter_op_parallelism_threads=inter, intra_op_parallelism_threads=intra)
    with tf1.Session(graph=g, config=config) as sess:
        sess.run(init)
        first = sess.run(loss, {x: xv, labels: yv})
        step = sess.make_callable(train, feed_list=[x, labels])
        for _ in range(3):  # warm up
            step(xv, yv)
        t0 = time.perf_counter()
        for _ in range(steps):
            step(xv, yv)
        rate = steps / (time.perf_counter() - t0)
        assert sess.run(loss, {x: xv, labels: yv}) < first, "the loss did not go down"
    return rate


best_setting("tf_cnn", lambda inter, intra: {"steps_per_second": run(inter, intra)}, key="steps_per_second",
             higher_is_better=True)
