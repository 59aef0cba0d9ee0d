"""examples/python/distributed_trainer.py, TensorFlow's between-graph trainer, under `dflow launch`
(1 ps and 2 workers on 127.0.0.1): every task exits 0 by itself (the ps task's server.join()
returns when the chief's session ends the job), and the chief's final global step and loss are
right. Also with TF_CONFIG instead of the flags, and synchronous."""
import json
import os
import re
import subprocess
import sys
import tempfile

from conftest import BUILD, ROOT

EXAMPLE = os.path.join(ROOT, "examples", "python", "distributed_trainer.py")
DFLOW = os.path.join(BUILD, "bin", "dflow")


def _env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.path.join(BUILD, "python") + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    e["TF_CPP_MIN_LOG_LEVEL"] = "3"
    return e


def _launch(*trainer_args, ps_trainer=True, workers=2):
    cmd = [DFLOW, "launch", "--ps", "1", "--workers", str(workers), "--timeout", "150"]
    if ps_trainer:
        cmd.append("--ps_trainer")
    cmd += ["--", sys.executable, EXAMPLE] + list(trainer_args)
    return subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=200)


_LINE = re.compile(r"\[worker (\d)\] worker \d: (\d+) local steps .*global step (\d+), loss ([0-9.e+-]+) -> "
                   r"([0-9.e+-]+)")


def _check_job(r, last_step, workers=2):
    text = r.stdout + r.stderr
    assert r.returncode == 0, text
    # Every task ended by itself: none had to be stopped, none failed.
    assert "has not exited" not in r.stderr, text
    assert "stopping" not in r.stderr, text
    assert not re.search(r"(worker|ps) \d+ (exited with status|was killed)", r.stderr), text
    assert "worker 0 (the chief) exited 0: the job is complete" in r.stderr, text
    lines = {int(m.group(1)): m for m in _LINE.finditer(r.stdout)}
    assert 0 in lines, text
    chief = lines[0]
    final_step, first_loss, last_loss = int(chief.group(3)), float(chief.group(4)), float(chief.group(5))
    # The chief read the global step at its end: the last step, or a step or two past it (steps
    # of the other workers that were running when it reached the last one).
    assert last_step <= final_step <= last_step + 2 * workers, text
    assert last_loss < first_loss * 0.2, text
    return lines, text


def test_trainer_under_launch_with_python_ps_tasks():
    d = tempfile.mkdtemp()
    r = _launch("--last_step", "200", "--checkpoint_dir", d, "--save_checkpoint_steps", "50")
    lines, text = _check_job(r, 200)
    # The ps task ran the trainer too, and its join() returned.
    assert "[ps 0] ps 0: the job is complete" in r.stdout, text
    # Every local step counted once: the workers' steps add up to the global step (when both
    # reported; a worker whose last step the job ended reports no global step).
    if len(lines) == 2:
        assert sum(int(m.group(2)) for m in lines.values()) >= 200
    # The chief's final checkpoint is the last step.
    with open(os.path.join(d, "checkpoint")) as f:
        state = f.read()
    step = int(re.search(r'model_checkpoint_path: ".*model\.ckpt-(\d+)"', state).group(1))
    assert 200 <= step <= int(lines[0].group(3))


def test_trainer_under_launch_with_dflow_server_ps_tasks_synchronous():
    r = _launch("--last_step", "60", "--sync", ps_trainer=False)
    lines, text = _check_job(r, 60)
    assert "[ps 0] dflow server: " in r.stdout, text


def test_trainer_with_tf_config():
    from dflow import _dflow
    ports = _dflow.pick_free_ports(3)
    cluster = {"ps": ["127.0.0.1:%d" % ports[0]], "worker": ["127.0.0.1:%d" % p for p in ports[1:]]}
    procs = []
    try:
        for job, index in (("ps", 0), ("worker", 0), ("worker", 1)):
            env = _env()
            env["TF_CONFIG"] = json.dumps({"cluster": cluster, "task": {"type": job, "index": index}})
            procs.append(subprocess.Popen([sys.executable, EXAMPLE, "--last_step", "100"], stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True, env=env))
        outs = [p.communicate(timeout=150)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out
    assert "ps 0: the job is complete" in outs[0]
    m = re.search(r"worker 0: \d+ local steps .*global step (\d+)", outs[1])
    assert m and int(m.group(1)) >= 100, outs[1]
