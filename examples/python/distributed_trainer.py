"""Between-graph replicated training, as in TensorFlow 1.x's distributed guide, on dflow.

Every task runs this program with the cluster flags (or TF_CONFIG): ps tasks serve
(`server.join()`), workers build the same model under `replica_device_setter` — the variables
on the ps tasks, the computation on the worker — and train one shared model with
MonitoredTrainingSession until the global step reaches --last_step. Worker 0 (the chief)
initializes or restores the model and saves checkpoints to --checkpoint_dir.

    build/bin/dflow launch --ps 1 --workers 2 --ps_trainer -- \\
        python3 examples/python/distributed_trainer.py --last_step 500 --checkpoint_dir /tmp/train_logs

(without --ps_trainer the ps tasks are `dflow server`s). When the chief's session closes it tells
every task that the job is complete: the ps tasks' join() returns and every task exits 0. Each
worker prints its local step count, the global step and the loss at the start and at the end.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

import dflow as tf  # the one changed line: import tensorflow as tf

FLAGS = None
INPUTS, HIDDEN, BATCH = 10, 32, 64


def task_from_tf_config():
    """--ps_hosts/--worker_hosts/--job_name/--task_index from TF_CONFIG when no flag gives them."""
    config = json.loads(os.environ.get("TF_CONFIG", "{}"))
    cluster = config.get("cluster", {})
    task = config.get("task", {})
    FLAGS.ps_hosts = ",".join(cluster.get("ps", []))
    FLAGS.worker_hosts = ",".join(cluster.get("worker", []))
    FLAGS.job_name = task.get("type", "")
    FLAGS.task_index = int(task.get("index", 0))


def build_model(task_index):
    """A two-layer regression model on synthetic data: y = x . c + 0.5."""
    x = tf.random_uniform([BATCH, INPUTS], seed=100 + task_index, name="x")
    c = np.array([0.1 * (i + 1) - 0.4 for i in range(INPUTS)], np.float32).reshape(INPUTS, 1)
    y = tf.matmul(x, c) + 0.5
    w1 = tf.Variable(tf.glorot_uniform_initializer(seed=1)([INPUTS, HIDDEN]), name="weights_1")
    b1 = tf.Variable(tf.zeros([HIDDEN]), name="biases_1")
    w2 = tf.Variable(tf.glorot_uniform_initializer(seed=2)([HIDDEN, 1]), name="weights_2")
    b2 = tf.Variable(tf.zeros([1]), name="biases_2")
    hidden = tf.nn.relu(tf.matmul(x, w1) + b1, name="layer_1")
    y_hat = tf.add(tf.matmul(hidden, w2), b2, name="layer_2")
    return tf.reduce_mean(tf.square(y - y_hat), name="loss")


def main():
    ps_hosts = [h for h in FLAGS.ps_hosts.split(",") if h]
    worker_hosts = FLAGS.worker_hosts.split(",")

    # Create a cluster from the parameter server and worker hosts.
    cluster = tf.train.ClusterSpec({"ps": ps_hosts, "worker": worker_hosts})

    # Create and start a server for the local task.
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)

    if FLAGS.job_name == "ps":
        server.join()
        print("ps %d: the job is complete" % FLAGS.task_index, flush=True)
        return 0

    is_chief = FLAGS.task_index == 0
    # Assigns ops to the local worker by default.
    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % FLAGS.task_index,
                                                  cluster=cluster)):
        loss = build_model(FLAGS.task_index)
        global_step = tf.train.get_or_create_global_step()
        opt = tf.train.GradientDescentOptimizer(0.1)
        hooks = []
        if FLAGS.sync:
            # Each step applies the mean of every worker's gradient.
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=len(worker_hosts),
                                                 total_num_replicas=len(worker_hosts))
            hooks.append(opt.make_session_run_hook(is_chief))
        train_op = opt.minimize(loss, global_step=global_step)

    # The StopAtStepHook handles stopping after running given steps; the FinalOpsHook reads the
    # global step and the loss when training ends.
    final = tf.train.FinalOpsHook({"global_step": global_step, "loss": loss})
    hooks += [tf.train.StopAtStepHook(last_step=FLAGS.last_step), final]
    # This worker's session involves the ps tasks and itself only.
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % FLAGS.task_index])

    # The MonitoredTrainingSession takes care of session initialization, restoring from a
    # checkpoint, saving to a checkpoint, and closing when done or an error occurs.
    local_steps, first_loss, last_loss = 0, None, None
    start = time.time()
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief,
                                           checkpoint_dir=FLAGS.checkpoint_dir,
                                           save_checkpoint_steps=FLAGS.save_checkpoint_steps,
                                           config=config, hooks=hooks) as mon_sess:
        while not mon_sess.should_stop():
            # Run a training step asynchronously.
            _, loss_value = mon_sess.run([train_op, loss])
            local_steps += 1
            if first_loss is None:
                first_loss = loss_value
            last_loss = loss_value
    secs = time.time() - start
    if final.final_ops_values is None:
        # The chief ended the job before this worker's own end.
        print("worker %d: %d local steps; the job is complete, loss %s -> %s"
              % (FLAGS.task_index, local_steps, first_loss, last_loss), flush=True)
        return 0
    print("worker %d: %d local steps (%.0f steps/s), global step %d, loss %.6f -> %.6f"
          % (FLAGS.task_index, local_steps, local_steps / max(secs, 1e-9), final.final_ops_values["global_step"],
             first_loss if first_loss is not None else float("nan"), final.final_ops_values["loss"]), flush=True)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    # Flags for defining the tf.train.ClusterSpec
    parser.add_argument("--ps_hosts", type=str, default="", help="Comma-separated list of hostname:port pairs")
    parser.add_argument("--worker_hosts", type=str, default="", help="Comma-separated list of hostname:port pairs")
    parser.add_argument("--job_name", type=str, default="", help="One of 'ps', 'worker'")
    # Flags for defining the tf.train.Server
    parser.add_argument("--task_index", type=int, default=0, help="Index of task within the job")
    # Training
    parser.add_argument("--last_step", type=int, default=1000, help="Train until the global step reaches this")
    parser.add_argument("--checkpoint_dir", type=str, default=None, help="Where the chief saves checkpoints")
    parser.add_argument("--save_checkpoint_steps", type=int, default=100, help="Checkpoint every this many steps")
    parser.add_argument("--sync", action="store_true", help="Synchronous training (SyncReplicasOptimizer)")
    FLAGS, unparsed = parser.parse_known_args()
    if not FLAGS.job_name:
        task_from_tf_config()
    if FLAGS.job_name not in ("ps", "worker") or not FLAGS.worker_hosts:
        parser.error("give --ps_hosts, --worker_hosts, --job_name (ps or worker) and --task_index, or TF_CONFIG")
    sys.exit(main())
