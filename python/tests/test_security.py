"""A secure cluster by default, from Python: servers need the cluster's secret and speak TLS (a
client without the credentials is refused, one with them, or of the same user on a loopback
cluster, is served), ops run on a server stay inside its allowed directories, and the resource
limits fail a request with ResourceExhaustedError while the server goes on serving."""
import os
import subprocess
import sys
import tempfile

import pytest

import dflow as tf
from conftest import BUILD, run_python

DFLOW = os.path.join(BUILD, "bin", "dflow")

# A client in another process: runs 3 + 4 on TARGET, prints the result or the error's class.
_CLIENT = """
import sys
import dflow as tf
config = tf.ConfigProto(credentials=sys.argv[2]) if len(sys.argv) > 2 else None
with tf.Graph().as_default():
    s = tf.add(3, 4)
    try:
        with tf.Session(sys.argv[1], config=config) as sess:
            print("result", sess.run(s, options=tf.RunOptions(timeout_in_ms=20000)))
    except tf.errors.OpError as e:
        print("error", type(e).__name__, e.message.splitlines()[0][:300])
"""


def _local_server(**kwargs):
    cluster = tf.train.ClusterSpec({"worker": ["127.0.0.1:%d" % _free_port()]})
    return tf.train.Server(cluster, job_name="worker", task_index=0, **kwargs)


def _free_port():
    from dflow import _dflow
    return _dflow.pick_free_ports(1)[0]


def test_a_client_of_the_same_user_is_served_another_is_refused():
    server = _local_server()
    target = server.target.decode()
    # Same user (the same store: DFLOW_CONFIG_DIR of the test run): found and served.
    r = run_python(_CLIENT, target)
    assert "result 7" in r.stdout, r.stdout + r.stderr
    # Another user: a store of its own, which has nothing for this server.
    with tempfile.TemporaryDirectory() as other:
        r = run_python(_CLIENT, target, env={"DFLOW_CONFIG_DIR": os.path.join(other, "dflow")})
    assert "error UnavailableError" in r.stdout, r.stdout + r.stderr
    assert "DFLOW_CREDENTIALS" in r.stdout
    server.stop()


def test_explicit_credentials_serve_members_and_refuse_strangers(tmp_path):
    out = subprocess.run([DFLOW, "credentials", "create", str(tmp_path / "c")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert oct(os.stat(tmp_path / "c" / "member" / "secret").st_mode & 0o777) == "0o600"
    assert not (tmp_path / "c" / "member" / "chief_secret").exists()
    assert (tmp_path / "c" / "chief" / "chief_secret").exists()
    server = _local_server(credentials=str(tmp_path / "c" / "chief"))
    target = server.target.decode()
    r = run_python(_CLIENT, target, str(tmp_path / "c" / "member"))
    assert "result 7" in r.stdout, r.stdout + r.stderr
    # A stranger's credentials: TLS fails (its CA did not sign the server's certificate).
    subprocess.run([DFLOW, "credentials", "create", str(tmp_path / "other")], check=True, capture_output=True)
    r = run_python(_CLIENT, target, str(tmp_path / "other" / "member"))
    assert "error UnavailableError" in r.stdout, r.stdout + r.stderr
    # The environment works as the config does.
    r = run_python(_CLIENT, target, env={"DFLOW_CREDENTIALS": str(tmp_path / "c" / "member")})
    assert "result 7" in r.stdout, r.stdout + r.stderr
    server.stop()


def test_bad_settings_are_errors(tmp_path):
    with pytest.raises(tf.errors.InvalidArgumentError, match="exclude each other"):
        _local_server(credentials=str(tmp_path), insecure=True)
    with pytest.raises(tf.errors.NotFoundError, match="No credentials directory"):
        _local_server(credentials=str(tmp_path / "missing"))
    with pytest.raises(TypeError, match="unexpected keyword"):
        _local_server(max_grpah_nodes=3)
    cluster = tf.train.ClusterSpec({"worker": ["ps0.example.invalid:2222"]})
    with pytest.raises(tf.errors.FailedPreconditionError, match="--insecure"):
        tf.train.Server(cluster, job_name="worker", task_index=0)


def test_ops_on_a_server_stay_in_its_allowed_dirs(tmp_path):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (tmp_path / "outside").mkdir()
    (allowed / "escape").symlink_to(tmp_path / "outside")
    server = _local_server(allowed_dirs=[str(allowed)])
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        saver = tf.train.Saver([v])
        with tf.Session(server.target) as sess:
            sess.run(v.initializer)
            assert saver.save(sess, str(allowed / "model.ckpt")).endswith("model.ckpt")
            for bad in [tmp_path / "outside" / "model.ckpt", allowed / ".." / "outside" / "m.ckpt",
                        allowed / "escape" / "m.ckpt"]:
                with pytest.raises(tf.errors.PermissionDeniedError, match="allowed_dirs"):
                    saver.save(sess, str(bad))
            assert os.listdir(tmp_path / "outside") == []
            saver.restore(sess, str(allowed / "model.ckpt"))
    server.stop()


def test_limits_fail_the_request_and_the_server_goes_on():
    server = _local_server(step_memory_limit_bytes=64 << 20, max_graph_nodes=200)
    with tf.Graph().as_default():
        big = tf.fill([64 << 20], 1.0)  # 256 MiB
        small = tf.reduce_sum(tf.fill([1000], 1.0))
        with tf.Session(server.target) as sess:
            with pytest.raises(tf.errors.ResourceExhaustedError, match="memory budget"):
                sess.run(big)
            assert sess.run(small) == 1000.0
    with tf.Graph().as_default():
        x = tf.constant(1.0)
        for _ in range(300):
            x = x + 1.0
        with tf.Session(server.target) as sess:
            with pytest.raises(tf.errors.ResourceExhaustedError, match="max_graph_nodes"):
                sess.run(x)
    with tf.Graph().as_default():
        with tf.Session(server.target) as sess:
            assert sess.run(tf.add(1, 2)) == 3
    server.stop()


_PROBE = """
import subprocess, sys
import dflow as tf
flags = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--"))
ps = flags["ps_hosts"]
client = sys.argv[1]
# This task's server (its credentials: DFLOW_CREDENTIALS, set by the launcher).
server = tf.train.Server(tf.train.ClusterSpec({"ps": [ps], "worker": flags["worker_hosts"].split(",")}),
                         job_name="worker", task_index=0)
code = "import sys; sys.argv=['c', 'grpc://%s']; exec(open(%r).read())" % (ps, client)
import os
env = dict(os.environ)
members = env.pop("DFLOW_CREDENTIALS")
env["DFLOW_CONFIG_DIR"] = "/nonexistent-dflow-store"
out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
print("without:", out.stdout.strip(), out.stderr.strip()[-200:])
env["DFLOW_CREDENTIALS"] = members
out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
print("with:", out.stdout.strip(), out.stderr.strip()[-200:])
"""


@pytest.mark.parametrize("flags,refusal", [([], "UnavailableError"), (["--no_tls"], "UnauthenticatedError")])
def test_a_launch_cluster_refuses_a_client_without_its_secret(tmp_path, flags, refusal):
    # With TLS the stranger fails the handshake (it lacks the cluster's CA); with --no_tls it
    # connects and is refused for want of the secret.
    client = tmp_path / "client.py"
    client.write_text(_CLIENT)
    probe = tmp_path / "probe.py"
    probe.write_text(_PROBE)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(BUILD, "python") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    r = subprocess.run([DFLOW, "launch", "--ps", "1", "--workers", "1", "--timeout", "120", "--finish_timeout", "0"]
                       + flags + ["--", sys.executable, str(probe), str(client)],
                       capture_output=True, text=True, env=env, timeout=180)
    text = r.stdout + r.stderr
    assert r.returncode == 0, text
    assert "without: error " + refusal in text, text
    assert "with: result 7" in text, text


@pytest.mark.parametrize("prefetch", [False, True])
def test_dataset_functions_are_charged_to_the_budget(prefetch):
    server = _local_server(step_memory_limit_bytes=64 << 20)
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(3).map(lambda x: tf.reduce_sum(tf.fill([64 << 20], tf.cast(x, tf.float32))))
        if prefetch:
            ds = ds.prefetch(1)
        nxt = tf.data.make_one_shot_iterator(ds).get_next()
        with tf.Session(server.target) as sess:
            with pytest.raises(tf.errors.ResourceExhaustedError, match="memory budget"):
                sess.run(nxt)
        # The same graph in this process (no budget) computes the element.
        with tf.Session() as sess:
            assert sess.run(nxt) == 0.0
    server.stop()

