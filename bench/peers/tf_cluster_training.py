"""TensorFlow peer of bench/cluster_training.sh, and its Python-to-Python row: between-graph
asynchronous training (bench/peers/ps_trainer.py, the model of examples/distributed_trainer.cc) on a
local cluster of 1 ps task and 1, 2 and 4 workers, each task a process of its own on 127.0.0.1
ports the OS assigned; steps per second summed over the workers.

For each cluster size, the ps task and the workers are started at once; each worker runs --steps
timed steps (after a start barrier and 20 untimed ones) and prints its rate; the ps task (which
never exits on TensorFlow) is killed once the workers are done. Every process has a deadline
(--timeout seconds per cluster) and all are killed at the end. Fails when a worker fails or when
a worker's loss did not go down.

The trainer runs on TensorFlow (tensorflow.compat.v1) and on dflow's Python front end (`import dflow
as tf`, from BUILD/python: --build, by default the repository's build/; skipped with a message on
stderr when BUILD/python is missing). Prints one JSON line per backend and cluster size:
{"name": "tf_cluster_training", "workers": N, "steps_per_second": ..., "loss_first": ..., "loss_last": ...}
{"name": "py_cluster_training", "workers": N, "steps_per_second": ..., "loss_first": ..., "loss_last": ...}
(loss_first: the chief's first loss, before any update; loss_last: its mean loss over its last 100
timed steps; every worker's must be below its first).

    python3 bench/peers/tf_cluster_training.py [--build DIR] [--steps N] [--workers 1,2,4]
                                               [--backends tensorflow,dflow] [--timeout S]
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from thread_settings import free_ports

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TRAINER = os.path.join(HERE, "ps_trainer.py")
NAMES = {"tensorflow": "tf_cluster_training", "dflow": "py_cluster_training"}


def stop(procs):
    """SIGTERM to each process group still running, SIGKILL after 2 s, then reap (bounded)."""
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 2
    for p in procs:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                print("tf_cluster_training: pid %d did not die" % p.pid, file=sys.stderr)


def run_cluster(backend, workers, args, env, logdir):
    ports = free_ports(1 + workers)
    hosts = ["127.0.0.1:%d" % p for p in ports]
    common = [sys.executable, TRAINER, "--backend", backend, "--ps_hosts", hosts[0],
              "--worker_hosts", ",".join(hosts[1:]), "--steps", str(args.steps)]
    tasks = [("ps", 0)] + [("worker", i) for i in range(workers)]
    procs, outs = [], []
    try:
        for job, i in tasks:
            out = open(os.path.join(logdir, "%s-%d-%s-%d.out" % (backend, workers, job, i)), "w+")
            err = open(os.path.join(logdir, "%s-%d-%s-%d.err" % (backend, workers, job, i)), "w+")
            outs.append((out, err))
            procs.append(subprocess.Popen(common + ["--job_name", job, "--task_index", str(i)], stdout=out,
                                          stderr=err, stdin=subprocess.DEVNULL, env=env, start_new_session=True))
        deadline = time.monotonic() + args.timeout
        results = []
        for (job, i), p, (out, err) in zip(tasks, procs, outs):
            if job == "ps":
                continue
            try:
                code = p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                code = "timed out after %ss" % args.timeout
            out.seek(0)
            err.seek(0)
            lines = [ln for ln in out.read().splitlines() if ln.startswith("{")]
            if code != 0 or not lines:
                tail = err.read()[-2000:]
                raise RuntimeError("%s worker %d of %d: exit %s\n%s" % (backend, i, workers, code, tail))
            results.append(json.loads(lines[-1]))
    finally:
        stop(procs)
        for out, err in outs:
            out.close()
            err.close()
    for r in results:
        if not r["loss_last"] < r["loss_first"]:
            raise RuntimeError("%s worker %d of %d: the loss did not go down (%s -> %s)"
                               % (backend, r["task_index"], workers, r["loss_first"], r["loss_last"]))
    chief = results[0]
    return dict(name=NAMES[backend], workers=workers,
                steps_per_second=round(sum(r["steps_per_second"] for r in results), 1),
                loss_first=chief["loss_first"], loss_last=chief["loss_last"])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(REPO, "build"), help="dflow's build directory")
    p.add_argument("--steps", type=int, default=1000, help="timed steps per worker")
    p.add_argument("--workers", default="1,2,4")
    p.add_argument("--backends", default="tensorflow,dflow")
    p.add_argument("--timeout", type=float, default=120, help="seconds per cluster")
    args = p.parse_args()
    failed = False
    with tempfile.TemporaryDirectory(prefix="tf_cluster_training-") as logdir:
        for backend in args.backends.split(","):
            env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
            if backend == "dflow":
                pydir = os.path.join(os.path.abspath(args.build), "python")
                if not os.path.isdir(os.path.join(pydir, "dflow")):
                    print("tf_cluster_training: %s has no dflow package (scripts/pybuild): the %s rows are "
                          "skipped" % (pydir, NAMES[backend]), file=sys.stderr)
                    continue
                env["PYTHONPATH"] = pydir + os.pathsep + env.get("PYTHONPATH", "")
                if "DFLOW_CONFIG_DIR" not in env:
                    env["DFLOW_CONFIG_DIR"] = os.path.join(logdir, "dflow-config")
                    os.makedirs(env["DFLOW_CONFIG_DIR"], mode=0o700)
            for workers in (int(w) for w in args.workers.split(",")):
                try:
                    print(json.dumps(run_cluster(backend, workers, args, env, logdir)), flush=True)
                except RuntimeError as e:
                    print("tf_cluster_training: %s" % e, file=sys.stderr)
                    failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
