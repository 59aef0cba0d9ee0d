"""Between-graph asynchronous training, as a TensorFlow 1.x user writes it, on TensorFlow itself
(`--backend tensorflow`: tensorflow.compat.v1) or on dflow's Python front end (`--backend dflow`:
`import dflow as tf`, with build/python on PYTHONPATH). One program for every task of a cluster of
ps tasks and workers (TensorFlow's guide: --ps_hosts, --worker_hosts, --job_name, --task_index;
tf.train.Server; replica_device_setter; a global step; asynchronous updates).

The model, batch, optimizer and data are those of examples/distributed_trainer.cc: a synthetic
regression, x uniform in [0, 1)^10 drawn on the worker in the graph (RandomUniform, seed 100 + the
task index; nothing is fed), y = sum_i c_i x_i + 0.5 with c_i = 0.1 (i + 1) - 0.4; a 10-32-1 MLP
(ReLU hidden layer, Glorot-uniform weights, zero biases) whose variables and the global step live
on the ps task(s); batch 64, mean squared error, GradientDescentOptimizer(0.1), minimize with the
global step.

The chief (worker 0) initializes the variables; the other workers poll
report_uninitialized_variables until it has. Then every worker increments a counter on ps task 0
and waits until all the workers have, so that the timed loops run side by side; then --warmup
steps, then --steps timed steps through Session.make_callable([train_op, loss]) (Session.run's fast
path). Each worker prints one JSON line and exits at once (os._exit: a TensorFlow server cannot be
stopped):
{"name": "ps_trainer", "backend": ..., "task_index": ..., "steps": ..., "steps_per_second": ...,
 "loss_first": ..., "loss_last": ..., "global_step": ...}
loss_first is the loss of this worker's first step, loss_last the mean over its last 100 timed steps.

A ps task serves until it is killed (TensorFlow's ps tasks never exit; bench/peers/
tf_cluster_training.py kills them once the workers are done). dflow's servers run --backend dflow
plaintext without authentication (`insecure=True`), as TensorFlow's gRPC does.
"""
import argparse
import json
import os
import sys
import time

NUM_INPUTS, NUM_HIDDEN, BATCH = 10, 32, 64


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=("tensorflow", "dflow"), required=True)
    p.add_argument("--ps_hosts", required=True, help="comma-separated host:port list")
    p.add_argument("--worker_hosts", required=True, help="comma-separated host:port list")
    p.add_argument("--job_name", choices=("ps", "worker"), required=True)
    p.add_argument("--task_index", type=int, default=0)
    p.add_argument("--steps", type=int, default=1000, help="timed steps of this worker")
    p.add_argument("--warmup", type=int, default=20, help="untimed steps before them (at least 1)")
    p.add_argument("--wait_secs", type=float, default=120, help="how long a worker waits for the others")
    return p.parse_args(argv)


def import_backend(backend):
    if backend == "tensorflow":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow
        tf = tensorflow.compat.v1
        tf.disable_eager_execution()
        return tf
    import dflow as tf
    return tf


def make_server(tf, backend, cluster, job_name, task_index):
    if backend == "dflow":
        # Plaintext without the cluster secret, as TensorFlow's gRPC (dflow's default is TLS).
        return tf.train.Server(cluster, job_name=job_name, task_index=task_index, insecure=True)
    return tf.train.Server(cluster, job_name=job_name, task_index=task_index)


def build_model(tf, cluster, task_index, num_workers):
    worker = "/job:worker/task:%d" % task_index
    with tf.device(tf.train.replica_device_setter(worker_device=worker, cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()
        w1 = tf.Variable(tf.glorot_uniform_initializer(seed=1)([NUM_INPUTS, NUM_HIDDEN]), name="weights_1")
        b1 = tf.Variable(tf.zeros([NUM_HIDDEN]), name="biases_1")
        w2 = tf.Variable(tf.glorot_uniform_initializer(seed=2)([NUM_HIDDEN, 1]), name="weights_2")
        b2 = tf.Variable(tf.zeros([1]), name="biases_2")
        # The start barrier: each worker adds one once the model is initialized.
        ready = tf.Variable(0, name="ready_workers", trainable=False)
        x = tf.random_uniform([BATCH, NUM_INPUTS], seed=100 + task_index, name="x")
        coeffs = tf.constant([[0.1 * (i + 1) - 0.4] for i in range(NUM_INPUTS)], dtype=tf.float32)
        y = tf.matmul(x, coeffs) + 0.5
        hidden = tf.nn.relu(tf.matmul(x, w1) + b1, name="layer_1")
        y_hat = tf.add(tf.matmul(hidden, w2), b2, name="layer_2")
        loss = tf.losses.mean_squared_error(y, y_hat)
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
        mark_ready = tf.assign_add(ready, 1)
    return dict(global_step=global_step, ready=ready, mark_ready=mark_ready, loss=loss, train_op=train_op,
                init=tf.global_variables_initializer(), uninitialized=tf.report_uninitialized_variables(),
                num_workers=num_workers, device_filters=["/job:ps", worker])


def wait_until(predicate, deadline, what):
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("ps_trainer: timed out waiting for " + what)
        time.sleep(0.01)


def train(tf, server, m, args):
    config = tf.ConfigProto(device_filters=m["device_filters"])
    deadline = time.monotonic() + args.wait_secs
    with tf.Session(server.target, config=config) as sess:
        if args.task_index == 0:
            sess.run(m["init"])
        else:
            wait_until(lambda: len(sess.run(m["uninitialized"])) == 0, deadline, "the chief's initialization")
        sess.run(m["mark_ready"])
        wait_until(lambda: sess.run(m["ready"]) >= m["num_workers"], deadline, "the other workers")
        step = sess.make_callable([m["train_op"], m["loss"]])
        loss_first = float(step()[1])
        for _ in range(args.warmup - 1):
            step()
        losses = [0.0] * args.steps
        t0 = time.perf_counter()
        for i in range(args.steps):
            losses[i] = step()[1]
        secs = time.perf_counter() - t0
        global_step = int(sess.run(m["global_step"]))
    k = min(100, args.steps)
    return dict(name="ps_trainer", backend=args.backend, task_index=args.task_index, steps=args.steps,
                steps_per_second=args.steps / secs, loss_first=loss_first, loss_last=float(sum(losses[-k:]) / k),
                global_step=global_step)


def main(argv):
    args = parse_args(argv)
    if args.warmup < 1 or args.steps < 1:
        raise ValueError("--warmup and --steps must be at least 1")
    tf = import_backend(args.backend)
    ps_hosts, worker_hosts = args.ps_hosts.split(","), args.worker_hosts.split(",")
    cluster = tf.train.ClusterSpec({"ps": ps_hosts, "worker": worker_hosts})
    server = make_server(tf, args.backend, cluster, args.job_name, args.task_index)
    if args.job_name == "ps":
        server.join()  # until killed (or, on dflow, until a chief ends the job)
        return 0
    result = train(tf, server, build_model(tf, cluster, args.task_index, len(worker_hosts)), args)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except BaseException as e:  # a TensorFlow process with a server may hang at exit: report and leave
        print("ps_trainer: %s: %s" % (type(e).__name__, e), file=sys.stderr, flush=True)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
