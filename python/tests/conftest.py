"""Shared fixtures: dflow, real TensorFlow (tf.compat.v1 graph mode) as the reference, and a
helper that runs one test body under both and compares the results."""
import os
import subprocess
import sys

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# The reference is TensorFlow with its oneDNN kernels on every CPU. TensorFlow turns them on by
# default only where the CPU has AVX-512 features; elsewhere its Eigen kernels differ in what they
# accept (no dilated convolution gradients, no NCHW inference FusedBatchNormGrad) and leave
# FusedBatchNorm's reserve outputs unset, and the suite would check a different TensorFlow.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

import dflow  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DFLOW_BUILD_DIR", os.path.join(ROOT, "build"))

_tf = None


def real_tf():
    """tensorflow.compat.v1 in graph mode (TensorFlow 1.x behaviour)."""
    global _tf
    if _tf is None:
        import tensorflow.compat.v1 as tf
        tf.disable_v2_behavior()
        tf.get_logger().setLevel("ERROR")
        _tf = tf
    return _tf


@pytest.fixture
def tf():
    """dflow, with a fresh default graph."""
    dflow.reset_default_graph()
    yield dflow
    dflow.reset_default_graph()


@pytest.fixture(params=["dflow", "tensorflow"])
def both(request):
    """The test body runs once under dflow and once under real TensorFlow."""
    m = dflow if request.param == "dflow" else real_tf()
    with m.Graph().as_default():
        yield m


def run_both(fn):
    """Runs fn(tf) in a fresh graph under dflow and under TensorFlow; returns (dflow, tensorflow)."""
    out = []
    for m in (dflow, real_tf()):
        with m.Graph().as_default():
            out.append(fn(m))
    return out[0], out[1]


def assert_same(a, b, rtol=1e-5, atol=1e-6, path="result"):
    """Equal structures; numbers within tolerance (exact for integers, bools and bytes)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), "%s: keys %s vs %s" % (path, sorted(a), sorted(b))
        for k in a:
            assert_same(a[k], b[k], rtol, atol, "%s[%r]" % (path, k))
        return
    if isinstance(a, (list, tuple)) and not isinstance(a, np.ndarray):
        assert type(a) is type(b) or (isinstance(b, (list, tuple))), "%s: %r vs %r" % (path, type(a), type(b))
        assert len(a) == len(b), "%s: length %d vs %d" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, rtol, atol, "%s[%d]" % (path, i))
        return
    if a is None or b is None:
        assert a is None and b is None, "%s: %r vs %r" % (path, a, b)
        return
    if isinstance(a, (bytes, str)):
        assert a == b, "%s: %r vs %r" % (path, a, b)
        return
    x, y = np.asarray(a), np.asarray(b)
    assert x.shape == y.shape, "%s: shape %s vs %s" % (path, x.shape, y.shape)
    assert x.dtype == y.dtype, "%s: dtype %s vs %s" % (path, x.dtype, y.dtype)
    if x.dtype.kind in "fc":
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=path)
    else:
        np.testing.assert_array_equal(x, y, err_msg=path)


def run_python(code_or_path, *args, env=None, timeout=120, cwd=None):
    """Runs a Python program with build/python on the path; returns the CompletedProcess."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.path.join(BUILD, "python") + (os.pathsep + e["PYTHONPATH"] if e.get("PYTHONPATH") else "")
    if env:
        e.update(env)
    cmd = [sys.executable]
    cmd += [code_or_path] if os.path.exists(code_or_path) else ["-c", code_or_path]
    cmd += list(args)
    return subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=timeout, cwd=cwd)


# ---- no test passes without running ----
# A skipped or xfail test counts as failed, so that the suite cannot pass without testing
# (scripts/check_skips.py does the same for the C++ tests in `make test`).

def _reason(longrepr):
    """The reason of a skip report ("Skipped: why" from pytest.skip)."""
    text = str(longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else longrepr)
    return text[len("Skipped: "):] if text.startswith("Skipped: ") else text


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if hasattr(report, "wasxfail"):
        what = "xpassed" if report.passed else "xfailed"
        reason = "%s: %s" % (what, report.wasxfail or "no reason")
        del report.wasxfail
    elif report.skipped:
        reason = "skipped: %s" % _reason(report.longrepr)
    else:
        return
    report.outcome = "failed"
    report.longrepr = "%s: tests may not skip or xfail (%s)" % (item.nodeid, reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if report.skipped:
        report.outcome = "failed"
        report.longrepr = "%s: tests may not skip (skipped: %s)" % (collector.nodeid, _reason(report.longrepr))
