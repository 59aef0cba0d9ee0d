"""TensorFlow peer of BM_SessionAddChain: a graph of 10,000 scalar Adds (tf.compat.v1, graph mode),
fetched with Session.run; time per node.

Constant folding is off for this graph (Grappler's, RewriterConfig.disable_meta_optimizer, and the
session's own, OptimizerOptions L0): with either on, the whole chain is replaced by one constant and
the executor runs no Add at all, which is not the work measured. Tries inter-/intra-op thread
pools of 1 and 2, each setting in a process of its own, and reports the best (time per node of the
best of 20 runs, as the PyTorch peer). Prints one JSON line:
{"name": "tf_add_chain", "per_op_seconds": ..., "inter_op": ..., "intra_op": ..., "peak_rss_mb": ...}.
"""
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from thread_settings import best_setting  # noqa: E402
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
N = 10000


def run(inter, intra, rounds=20):
    g = tf1.Graph()
    with g.as_default():
        one = tf1.constant(1.0)
        v = tf1.constant(0.0)
        for _ in range(N):
            v = tf1.add(v, one)
    config = tf1.ConfigProto(inter_op_parallelism_threads=inter, intra_op_parallelism_threads=intra)
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    config.graph_options.optimizer_options.opt_level = tf1.OptimizerOptions.L0
    config.graph_options.optimizer_options.do_constant_folding = False
    with tf1.Session(graph=g, config=config) as sess:
        assert sess.run(v) == N
        best = float("inf")
        for _ in range(rounds):
            t0 = time.perf_counter()
            sess.run(v)
            best = min(best, time.perf_counter() - t0)
    return best / N


best_setting("tf_add_chain", lambda inter, intra: {"per_op_seconds": run(inter, intra)}, key="per_op_seconds",
             higher_is_better=False)
