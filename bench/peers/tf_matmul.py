"""TensorFlow peer of BM_SessionMatMul1024: C = A x B, 1024x1024 float32 (A all 0.5, B all 0.25),
through Session.run in graph mode (tf.compat.v1); GFLOP/s (2 * 1024^3 per run) of the
best of 30 runs.

Two ways, each with inter-/intra-op thread pools of 1 and 2 (each setting in a process of its own):
- fed: A and B fed to placeholders and C fetched, through Session.make_callable (Session.run's fast
  path from Python); the numpy feeds and the fetch are converted on every call;
- in graph: A and B held in variables and the MatMul op run without fetching C, which is what a
  C++ client that hands its tensors over without copies gets: TensorFlow's fastest path.
"gflops" is the faster of the two (the figure dflow is compared with). Prints one JSON line:
{"name": "tf_matmul_1024", "gflops": ..., "path": ..., "fed_gflops": ..., "in_graph_gflops": ..., "inter_op": ...,
 "intra_op": ..., "peak_rss_mb": ...}; bench/core_bench.cc's BM_SessionMatMul1024InGraph is dflow's in-graph twin.
"""
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from thread_settings import best_setting  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
N = 1024


def best_time(fn, rounds=30):
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return 2.0 * N ** 3 / best / 1e9


def config(inter, intra):
    return tf1.ConfigProto(inter_op_parallelism_threads=inter, intra_op_parallelism_threads=intra)


def fed(inter, intra):
    g = tf1.Graph()
    with g.as_default():
        a = tf1.placeholder(tf1.float32, [N, N])
        b = tf1.placeholder(tf1.float32, [N, N])
        c = tf1.matmul(a, b)
    ta = np.full((N, N), 0.5, np.float32)
    tb = np.full((N, N), 0.25, np.float32)
    with tf1.Session(graph=g, config=config(inter, intra)) as sess:
        step = sess.make_callable(c, feed_list=[a, b])
        assert step(ta, tb)[0, 0] == 0.125 * N
        return best_time(lambda: step(ta, tb))


def in_graph(inter, intra):
    g = tf1.Graph()
    with g.as_default():
        a = tf1.Variable(tf1.fill([N, N], 0.5))
        b = tf1.Variable(tf1.fill([N, N], 0.25))
        c = tf1.matmul(a, b)
        init = tf1.global_variables_initializer()
    with tf1.Session(graph=g, config=config(inter, intra)) as sess:
        sess.run(init)
        assert sess.run(c)[0, 0] == 0.125 * N
        step = sess.make_callable(c.op)
        return best_time(step)


def measure(inter, intra):
    fed_rate, graph_rate = fed(inter, intra), in_graph(inter, intra)
    return {"gflops": max(fed_rate, graph_rate), "path": "in graph" if graph_rate >= fed_rate else "fed",
            "fed_gflops": fed_rate, "in_graph_gflops": graph_rate}


best_setting("tf_matmul_1024", measure, key="gflops", higher_is_better=True)
