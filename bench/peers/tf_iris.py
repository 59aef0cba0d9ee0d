"""TensorFlow peer of BM_IrisTrainStep: one training step of the canned DNNClassifier's graph, written
in tf.compat.v1 as the estimator builds it, run by the MonitoredTrainingSession that
Estimator.train creates; time per step.

The graph is dflow's DNNClassifier (src/estimator) and TensorFlow's canned one: the features by name
through feature_column.input_layer of 4 numeric columns, hidden layers 10 and 10 (Dense: kernel
Glorot-uniform, bias zero, ReLU), logits 3, labels range-checked by two Assert ops, sparse softmax
cross-entropy averaged over the batch (SUM_OVER_BATCH_SIZE), AdagradOptimizer(0.05) (initial
accumulator 0.1) minimizing it and incrementing the global step; graph seed 1. The input is
tf.data over data/iris/iris_training.csv: the rows read into memory, from_tensor_slices of
(features by name, labels) -> shuffle(1000) -> repeat() -> batch(100), a one-shot iterator
(dflow's estimator does the same with an initializable one run at session creation).

The session is tf.compat.v1.train.MonitoredTrainingSession with the hooks Estimator.train gives it
and dflow's estimator gives its own: StopAtStepHook (far away), NanTensorHook(loss), a logging hook
fetching the loss and global step every 100 steps, the StepCounterHook (log_step_count_steps=100),
and a CheckpointSaverHook whose save is never due in the timed loop (save_checkpoint_secs far away).
Each timed step is one `run(train_op)` on it: GetNext + forward + backward + Adagrad + the hooks'
fetches, as in BM_IrisTrainStep. No summary ops are in the graph (dflow's estimator adds none).

Each inter-/intra-op thread setting (1 and 2) runs in a process of its own, the best reported
(thread_settings.best_setting). Prints one JSON line:
{"name": "tf_iris", "us_per_step": ..., "loss_first": ..., "loss_last": ..., "inter_op": ..., "intra_op": ...,
 "peak_rss_mb": ...}.

The same script on dflow's Python front end (`import dflow.compat.v1 as tf`, the Python-to-Python
row of issue 18):
  PYTHONPATH=build/python python3 bench/peers/tf_iris.py --backend dflow
runs the same graph and loop on both, each at its best thread setting, and prints one JSON line:
{"name": "py_iris", "dflow_us_per_step": ..., "dflow_inter_op": ..., "dflow_intra_op": ...,
 "dflow_peak_rss_mb": ..., "tf_us_per_step": ..., "tf_inter_op": ..., "tf_intra_op": ..., "tf_peak_rss_mb": ...}.
"""
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from thread_settings import best_setting  # noqa: E402
import numpy as np  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
CSV = os.path.join(here, "..", "..", "data", "iris", "iris_training.csv")
FEATURES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth"]
BACKEND_ENV = "DFLOW_BENCH_IRIS_BACKEND"  # passed to the per-setting processes


def import_tf1(backend):
    if backend == "dflow":
        import dflow.compat.v1 as tf1
    else:
        import tensorflow.compat.v1 as tf1
        tf1.disable_v2_behavior()
        tf1.get_logger().setLevel("ERROR")
        tf1.logging.set_verbosity(tf1.logging.ERROR)
    return tf1


def load():
    rows = np.loadtxt(CSV, delimiter=",", skiprows=1, dtype=np.float32)
    features = {name: np.ascontiguousarray(rows[:, i]) for i, name in enumerate(FEATURES)}
    return features, rows[:, 4].astype(np.int32)


def dense(tf1, x, units, name):
    """tf.layers.dense as the canned DNN makes it (Keras 3 removed tf.compat.v1.layers): kernel
    [in, units] Glorot-uniform, bias zero, MatMul + BiasAdd."""
    with tf1.variable_scope(name):
        kernel = tf1.get_variable("kernel", [x.shape[-1], units], tf1.float32, tf1.glorot_uniform_initializer())
        bias = tf1.get_variable("bias", [units], tf1.float32, tf1.zeros_initializer())
    return tf1.nn.bias_add(tf1.matmul(x, kernel), bias)


def build(tf1):
    """The canned DNNClassifier's training graph; returns (train_op, loss, global_step)."""
    tf1.set_random_seed(1)
    global_step = tf1.train.get_or_create_global_step()
    features, labels = load()
    ds = tf1.data.Dataset.from_tensor_slices((features, labels)).shuffle(1000).repeat().batch(100)
    x, y = tf1.data.make_one_shot_iterator(ds).get_next()
    with tf1.variable_scope("dnn"):
        net = tf1.feature_column.input_layer(x, [tf1.feature_column.numeric_column(n) for n in FEATURES])
        for i, units in enumerate((10, 10)):
            net = tf1.nn.relu(dense(tf1, net, units, "hiddenlayer_%d" % i))
        logits = dense(tf1, net, 3, "logits")
    with tf1.name_scope("head"):
        flat = tf1.reshape(y, [-1])
        below = tf1.Assert(tf1.less_equal(tf1.reduce_max(flat), 2), ["Labels must be <= n_classes - 1 = 2", flat])
        above = tf1.Assert(tf1.greater_equal(tf1.reduce_min(flat), 0), ["Labels must be >= 0", flat])
        with tf1.control_dependencies([below, above]):
            ids = tf1.identity(flat, name="labels")
        ce = tf1.nn.sparse_softmax_cross_entropy_with_logits(labels=ids, logits=logits)
        loss = tf1.reduce_mean(tf1.reshape(tf1.expand_dims(ce, -1), [-1]), name="loss")
    train_op = tf1.train.AdagradOptimizer(0.05, initial_accumulator_value=0.1).minimize(loss,
                                                                                          global_step=global_step)
    return train_op, loss, global_step


def run(backend, inter, intra, steps=2000, warmup=200):
    tf1 = import_tf1(backend)
    model_dir = tempfile.mkdtemp(prefix="tf_iris_", dir="/tmp")
    try:
        with tf1.Graph().as_default():
            train_op, loss, global_step = build(tf1)
            hooks = [tf1.train.StopAtStepHook(last_step=1 << 60), tf1.train.NanTensorHook(loss),
                     tf1.train.LoggingTensorHook({"loss": loss, "step": global_step}, every_n_iter=100)]
            config = tf1.ConfigProto(inter_op_parallelism_threads=inter, intra_op_parallelism_threads=intra)
            with tf1.train.MonitoredTrainingSession(checkpoint_dir=model_dir, hooks=hooks, config=config,
                                                   save_checkpoint_secs=1 << 30, save_summaries_steps=100,
                                                   log_step_count_steps=100) as sess:
                first = sess.run([train_op, loss])[1]
                for _ in range(warmup):
                    sess.run(train_op)
                t0 = time.perf_counter()
                for _ in range(steps):
                    sess.run(train_op)
                us = (time.perf_counter() - t0) / steps * 1e6
                last = sess.run([train_op, loss])[1]
        assert last < first, "the loss did not go down (%s -> %s)" % (first, last)
        return {"us_per_step": us, "loss_first": float(first), "loss_last": float(last)}
    finally:
        shutil.rmtree(model_dir, ignore_errors=True)


def best(name, backend):
    """best_setting for `backend`, its JSON line captured and returned."""
    os.environ[BACKEND_ENV] = backend
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        best_setting(name, lambda inter, intra: run(backend, inter, intra), key="us_per_step",
                     higher_is_better=False)
    return json.loads(out.getvalue())


def main():
    backend = "tf"
    if "--backend" in sys.argv:
        i = sys.argv.index("--backend")
        backend = sys.argv[i + 1]
        del sys.argv[i:i + 2]
        if backend not in ("tf", "dflow"):
            sys.exit("--backend is tf or dflow, got %r" % backend)
    if len(sys.argv) == 3:  # one thread setting, in a process of its own
        best_setting("", lambda inter, intra: run(os.environ.get(BACKEND_ENV, "tf"), inter, intra),
                     key="us_per_step", higher_is_better=False)
    elif backend == "tf":
        print(json.dumps(best("tf_iris", "tf")))
    else:
        d, t = best("dflow_py_iris", "dflow"), best("tf_iris", "tf")
        line = {"name": "py_iris"}
        for prefix, r in (("dflow_", d), ("tf_", t)):
            for k in ("us_per_step", "inter_op", "intra_op", "peak_rss_mb", "loss_first", "loss_last"):
                line[prefix + k] = r[k]
        print(json.dumps(line))


if __name__ == "__main__":
    main()
