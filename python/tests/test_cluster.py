"""tf.train.ClusterSpec, tf.train.Server and replica_device_setter: behaviour against TensorFlow's,
and a ps + worker cluster in this process (OS-picked free ports on 127.0.0.1)."""
import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

from conftest import BUILD, real_tf, run_both


def test_cluster_spec_is_tensorflows():
    def build(tf):
        c = tf.train.ClusterSpec({"ps": ["a:1", "b:1"], "worker": {0: "c:1", 3: "d:1"}})
        out = [str(c), c.as_dict(), sorted(c.jobs), c.num_tasks("ps"), c.num_tasks("worker"), c.task_indices("worker"),
               c.task_address("worker", 3), c.job_tasks("worker"), bool(c), bool(tf.train.ClusterSpec({})),
               c == tf.train.ClusterSpec(c.as_dict()), tf.train.ClusterSpec(c).as_dict()]
        for bad in (lambda: c.num_tasks("chief"), lambda: c.task_address("worker", 1),
                    lambda: c.task_address("chief", 0), lambda: tf.train.ClusterSpec(["a:1"]),
                    lambda: tf.train.ClusterSpec({"ps": "a:1"})):
            try:
                bad()
                out.append(None)
            except (ValueError, TypeError) as e:
                out.append((type(e).__name__, str(e)))
        return out
    ours, theirs = run_both(build)
    assert ours == theirs


def test_cluster_def_is_tensorflows_proto():
    tf = real_tf()
    import dflow
    spec = {"ps": ["a:1"], "worker": {0: "c:1", 3: "d:1"}}
    ours = dflow.train.ClusterSpec(spec).as_cluster_def()
    theirs = tf.train.ClusterSpec(spec).as_cluster_def()
    # The bytes of one parse as the other.
    parsed = type(ours).FromString(theirs.SerializeToString())
    assert parsed == ours
    assert dflow.train.ClusterSpec(parsed).as_dict() == spec
    assert type(theirs).FromString(ours.SerializeToString()) == theirs


def test_server_arguments_are_checked_as_tensorflow_does():
    def build(tf):
        out = []
        for args, kwargs in [(({"ps": ["a:1"], "worker": ["b:1"]},), {}),
                             (({"worker": ["b:1", "c:1"]},), {}),
                             (({"worker": ["b:1"]},), {"job_name": "ps"}),
                             (("not a cluster",), {})]:
            try:
                tf.train.Server(*args, start=False, **kwargs)
                out.append(None)
            except (ValueError, TypeError) as e:
                out.append((type(e).__name__, str(e)))
        return out
    ours, theirs = run_both(build)
    assert ours == theirs


def test_local_server_target_and_session(tf):
    server = tf.train.Server.create_local_server()
    target = server.target
    assert isinstance(target, bytes) and target.startswith(b"grpc://localhost:")
    assert int(target.rsplit(b":", 1)[1]) == server.port > 0
    c = tf.constant("hello, distributed")
    x = tf.placeholder(tf.float32, [2])
    with tf.Session(server.target) as sess:
        assert sess.run(c) == b"hello, distributed"
        np.testing.assert_array_equal(sess.run(x * 2, {x: [1.0, 2.5]}), [2.0, 5.0])
    # A server made with start=False knows its target and serves once started.
    s2 = tf.train.Server({"localhost": ["localhost:0"]}, start=False)
    s2.start()
    with tf.Session(s2.target) as sess:
        assert sess.run(c) == b"hello, distributed"
    server.stop()
    s2.stop()


def test_server_rejects_a_bad_address(tf):
    with pytest.raises(tf.errors.InvalidArgumentError, match="has no port"):
        tf.train.Server({"worker": ["nohost"]}, job_name="worker", task_index=0)


def _two_task_cluster(tf):
    from dflow import _dflow
    ports = _dflow.pick_free_ports(2)
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ports[0]], "worker": ["127.0.0.1:%d" % ports[1]]})
    ps = tf.train.Server(cluster, job_name="ps", task_index=0)
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    return cluster, ps, worker


def test_variable_on_ps_compute_on_worker(tf):
    cluster, ps, worker = _two_task_cluster(tf)
    with tf.device("/job:ps/task:0"):
        w = tf.Variable([1.0, 2.0, 3.0], name="w")
    with tf.device("/job:worker/task:0"):
        y = w * 2.0 + 1.0
    update = tf.assign_add(w, [1.0, 1.0, 1.0])  # runs where w lives
    assert w.device == "/job:ps/task:0"
    assert y.device == "/job:worker/task:0"
    with tf.Session(worker.target) as sess:
        devices = [d.name for d in sess.list_devices()]
        assert any("/job:ps/replica:0/task:0" in d for d in devices), devices
        assert any("/job:worker/replica:0/task:0" in d for d in devices), devices
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(y), [3.0, 5.0, 7.0])
        sess.run(update)
        np.testing.assert_allclose(sess.run(y), [5.0, 7.0, 9.0])
    # The variable lives on the ps task: a session on the ps task's own target sees its value.
    with tf.Session(ps.target) as sess:
        np.testing.assert_allclose(sess.run(w), [2.0, 3.0, 4.0])
    worker.stop()
    ps.stop()


def test_replica_device_setter_places_as_tensorflow_does():
    def build(tf):
        cluster = {"ps": ["a:1", "b:1"], "worker": ["c:1", "d:1"]}
        out = []
        with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:1")):
            v1 = tf.Variable(1.0, name="v1")
            v2 = tf.Variable(2.0, name="v2")
            v3 = tf.Variable(3.0, name="v3")
            with tf.device("/job:ps/task:1"):
                pinned = tf.Variable(4.0, name="pinned")
            s = v1 + v2 + v3 + pinned
        out += [v.device for v in (v1, v2, v3, pinned)] + [s.device, v1.initializer.device]
        with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
            a = tf.Variable(1.0, name="a")
            b = tf.Variable(1.0, name="b")
            c = a * b
        out += [a.device, b.device, c.device]
        out.append(tf.train.replica_device_setter(ps_tasks=0))
        out.append(tf.train.replica_device_setter(cluster={"worker": ["c:1"]}))
        return out
    ours, theirs = run_both(build)
    assert ours == theirs


def test_replica_device_setter_with_a_strategy(tf):
    seen = []

    def last_task(op):
        seen.append((op.type, op.name))
        return 1
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=last_task)):
        v = tf.Variable(1.0, name="v")
        w = tf.Variable(1.0, name="w")
    assert v.device == w.device == "/job:ps/task:1"
    assert seen == [("VariableV2", "v"), ("VariableV2", "w")]
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        tf.train.replica_device_setter(ps_tasks=2, ps_strategy=3)


def test_join_returns_when_the_job_completes(tf):
    cluster, ps, worker = _two_task_cluster(tf)
    joined = threading.Event()

    def join():
        ps.join()
        joined.set()
    t = threading.Thread(target=join)
    t.start()
    assert not joined.is_set()
    told, gone = worker.notify_job_complete(drain_ms=100)
    t.join(30)
    assert joined.is_set()
    assert ps.job_complete and worker.job_complete
    assert "/job:ps/replica:0/task:0" in " ".join(told)
    # Telling it again does nothing more.
    worker.notify_job_complete()


_JOINER = r"""
import sys
import dflow as tf
server = tf.train.Server.create_local_server()
try:
    print("serving", flush=True)
    server.join()
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("joined", flush=True)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_join_ends_on_ctrl_c_and_sigterm(sig):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(BUILD, "python")
    p = subprocess.Popen([sys.executable, "-c", _JOINER], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    try:
        assert p.stdout.readline().strip() == "serving"  # blocks until the server is up
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    if sig == signal.SIGINT:
        assert p.returncode == 3, err
        assert "interrupted" in out
    else:
        assert p.returncode == -signal.SIGTERM, err
