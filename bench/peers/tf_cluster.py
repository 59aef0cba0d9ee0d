"""TensorFlow peer of bench/cluster_bench.cc's BM_NullStep/tls:0 and BM_Transfer64MiB/tls:0: a ps
task and a worker task (tf.compat.v1.train.Server, TensorFlow's gRPC runtime, plaintext) in this
one process on two 127.0.0.1 ports the OS assigned, and a tf.compat.v1.Session on the worker's
target (the master in the same process, as between-graph trainers run).

- null step: fetching a float scalar variable held by /job:ps/task:0 (Session.make_callable of its
  value), microseconds per step;
- pull: the worker reads a 64 MiB float32 variable held by the ps task (a Shape op on
  /job:worker/task:0 consumes it, so the bytes cross);
- push: the ps variable is assigned a 64 MiB variable held by the worker (Shape of the assignment
  on the ps task); GB/s (2^30 bytes) for each.
The Shape ops are raw Shape ops (tf.shape returns a constant when the shape is known statically)
and Grappler's constant folding is off for these sessions (it would replace them by constants):
either way no bytes would move. Each figure is the best of a few
repetitions; the bytes are checked once (the sums of the pulled and the pushed values).

Tries inter-/intra-op thread pools of 1 and 2, each setting in a process of its own (a TensorFlow
server cannot be stopped), and reports the setting with the best geometric mean of the three
figures (relative to the first setting), with that process's peak resident memory. The process
leaves with os._exit once its line is printed (the servers would keep it alive). Prints one JSON line:
{"name": "tf_cluster", "null_step_us": ..., "pull_gbs": ..., "push_gbs": ..., "inter_op": ...,
 "intra_op": ..., "peak_rss_mb": ...}
"""
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from thread_settings import best_setting, free_ports  # noqa: E402

BYTES = 64 << 20


def best_time(fn, reps, min_secs):
    """The best over `reps` repetitions of the mean time of one call, each repetition calling
    `fn` until `min_secs` passed."""
    best = float("inf")
    for _ in range(reps):
        n, t0 = 0, time.perf_counter()
        while True:
            fn()
            n += 1
            t = time.perf_counter() - t0
            if t >= min_secs:
                break
        best = min(best, t / n)
    return best


def run(inter, intra):
    import tensorflow as tf
    from tensorflow.core.protobuf import rewriter_config_pb2

    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    ps_port, worker_port = free_ports(2)
    cluster = tf1.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ps_port], "worker": ["127.0.0.1:%d" % worker_port]})
    config = tf1.ConfigProto(inter_op_parallelism_threads=inter, intra_op_parallelism_threads=intra)
    config.graph_options.rewrite_options.constant_folding = rewriter_config_pb2.RewriterConfig.OFF
    tf1.train.Server(cluster, job_name="ps", task_index=0, config=config)
    worker = tf1.train.Server(cluster, job_name="worker", task_index=0, config=config)
    n = BYTES // 4
    g = tf1.Graph()
    with g.as_default():
        with tf1.device("/job:ps/task:0"):
            scalar = tf1.Variable(3.0, name="scalar")
            big_ps = tf1.Variable(tf1.ones([n]), name="big_ps")
        with tf1.device("/job:worker/task:0"):
            big_worker = tf1.Variable(tf1.fill([n], 2.0), name="big_worker")
            pulled = tf.raw_ops.Shape(input=big_ps.value())
            pulled_sum = tf1.reduce_sum(big_ps.value())
        with tf1.device("/job:ps/task:0"):
            pushed = tf.raw_ops.Shape(input=big_ps.assign(big_worker.value()))
            ps_sum = tf1.reduce_sum(big_ps.value())
        init = tf1.global_variables_initializer()
    with tf1.Session(worker.target, graph=g, config=config) as sess:
        sess.run(init)
        null_step = sess.make_callable(scalar.value())
        pull = sess.make_callable(pulled)
        push = sess.make_callable(pushed)
        assert null_step() == 3.0
        assert sess.run(pulled_sum) == n, "the pulled values are wrong"
        for _ in range(3):  # warm up
            null_step()
            pull()
            push()
        assert sess.run(ps_sum) == 2.0 * n, "the pushed values did not arrive"
        null_s = best_time(null_step, reps=3, min_secs=1.0)
        pull_s = best_time(pull, reps=5, min_secs=0.3)
        push_s = best_time(push, reps=5, min_secs=0.3)
    return dict(null_step_us=null_s * 1e6, pull_gbs=BYTES / pull_s / 2**30, push_gbs=BYTES / push_s / 2**30)


def score(r, ref):
    return (ref["null_step_us"] / r["null_step_us"] * r["pull_gbs"] / ref["pull_gbs"]
            * r["push_gbs"] / ref["push_gbs"]) ** (1.0 / 3.0)


def main():
    if len(sys.argv) == 3:  # one setting, in a process of its own; leave without waiting for the servers
        try:
            best_setting("tf_cluster", run, key="null_step_us", higher_is_better=False)
            code = 0
        except BaseException as e:
            print("tf_cluster: %s: %s" % (type(e).__name__, e), file=sys.stderr)
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    script = os.path.abspath(__file__)
    runs = []
    for inter in (1, 2):
        for intra in (1, 2):
            p = subprocess.run([sys.executable, script, str(inter), str(intra)], capture_output=True, text=True,
                               timeout=120)
            if p.returncode != 0:
                sys.exit("tf_cluster: the run with inter_op=%d intra_op=%d failed:\n%s" % (inter, intra,
                                                                                          p.stderr[-2000:]))
            runs.append(json.loads(p.stdout))
    best = max(runs, key=lambda r: score(r, runs[0]))
    print(json.dumps(dict(name="tf_cluster", **best)))


if __name__ == "__main__":
    main()
