"""Errors: every Status code raises its tf.errors class with the C++ message, runtime errors from
real ops raise what TensorFlow raises, bad input from Python raises the exception TensorFlow
raises and never crashes the interpreter, Ctrl-C cancels a step, and the GIL is released while a
step runs."""
import os
import signal
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from conftest import BUILD, real_tf, run_both, run_python

import dflow

PY_ENV = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"), TF_CPP_MIN_LOG_LEVEL="3")


def outcome(fn):
    """None when fn() returns, else the class name of what it raised."""
    try:
        fn()
        return None
    except Exception as e:  # noqa: BLE001 - the class is the result
        return type(e).__name__


# --------------------------------------------------------------------------------------------
# Status codes


def test_every_status_code_raises_its_class_with_the_message():
    rtf = real_tf()
    for code in range(1, 17):
        msg = "status %d: the C++ message, kept as it is \u00e9" % code
        with pytest.raises(dflow.errors.OpError) as info:
            dflow._dflow.raise_status(code, msg)
        e = info.value
        want = rtf.errors.exception_type_from_error_code(code).__name__
        assert type(e).__name__ == want
        assert type(e) is getattr(dflow.errors, want)
        assert dflow.errors.exception_type_from_error_code(code) is type(e)
        assert e.error_code == code == getattr(dflow.errors, {
            "CancelledError": "CANCELLED", "UnknownError": "UNKNOWN", "InvalidArgumentError": "INVALID_ARGUMENT",
            "DeadlineExceededError": "DEADLINE_EXCEEDED", "NotFoundError": "NOT_FOUND",
            "AlreadyExistsError": "ALREADY_EXISTS", "PermissionDeniedError": "PERMISSION_DENIED",
            "ResourceExhaustedError": "RESOURCE_EXHAUSTED", "FailedPreconditionError": "FAILED_PRECONDITION",
            "AbortedError": "ABORTED", "OutOfRangeError": "OUT_OF_RANGE", "UnimplementedError": "UNIMPLEMENTED",
            "InternalError": "INTERNAL", "UnavailableError": "UNAVAILABLE", "DataLossError": "DATA_LOSS",
            "UnauthenticatedError": "UNAUTHENTICATED"}[want])
        assert e.message == msg and str(e) == msg
        # TensorFlow's hierarchy: every class is an OpError, itself an Exception.
        assert issubclass(getattr(rtf.errors, want), rtf.errors.OpError)


def _blocked_dequeue(tf):
    q = tf.raw_ops.FIFOQueueV2(component_types=[tf.float32], shapes=[[]], capacity=4)
    return q, tf.raw_ops.QueueDequeueV2(handle=q, component_types=[tf.float32])


def runtime_cases(tf):
    """Runs ops that fail at run time; returns {case: (exception class, message)}."""
    R = tf.raw_ops
    out = {}

    def run(case, fetch, feed=None, options=None, setup=None):
        with tf.Session() as s:
            if setup is not None:
                s.run(setup)
            try:
                s.run(fetch, feed, options=options)
                out[case] = None
            except tf.errors.OpError as e:
                out[case] = (type(e).__name__, e.message)

    q, deq = _blocked_dequeue(tf)
    run("out_of_range: dequeue from a closed empty queue", deq, setup=R.QueueCloseV2(handle=q))
    x = tf.placeholder(tf.float32, [None])
    run("invalid_argument: reshape", tf.reshape(x, [3]), {x: [1.0, 2.0, 3.0, 4.0]})
    run("invalid_argument: placeholder not fed", x * 2.0)
    run("invalid_argument: Assert", R.Assert(condition=tf.constant(False), data=[tf.constant("boom")]))
    v = R.VariableV2(shape=[2], dtype=tf.float32)
    run("failed_precondition: uninitialized variable", tf.identity(v))
    missing = os.path.join(tempfile.mkdtemp(), "no", "ckpt")
    run("not_found: restore from a missing checkpoint",
        R.RestoreV2(prefix=missing, tensor_names=["v"], shape_and_slices=[""], dtypes=[tf.float32]))
    corrupt = os.path.join(tempfile.mkdtemp(), "ckpt")
    with open(corrupt + ".index", "wb") as f:
        f.write(b"\x00not a checkpoint index" * 8)
    run("data_loss: restore from a corrupt checkpoint",
        R.RestoreV2(prefix=corrupt, tensor_names=["v"], shape_and_slices=[""], dtypes=[tf.float32]))
    _, deq2 = _blocked_dequeue(tf)
    run("deadline_exceeded: RunOptions(timeout_in_ms) on a blocked dequeue", deq2,
        options=tf.RunOptions(timeout_in_ms=100))
    return out


def test_runtime_errors_match_tensorflow():
    ours, theirs = run_both(runtime_cases)
    assert sorted(ours) == sorted(theirs)
    for case in ours:
        assert ours[case] is not None and theirs[case] is not None, case
        assert ours[case][0] == theirs[case][0], "%s: dflow %s, TensorFlow %s" % (case, ours[case], theirs[case])
    # The messages are the C++ side's.
    msgs = {k.split(":")[0]: v[1] for k, v in ours.items()}
    assert "is closed and has insufficient elements" in msgs["out_of_range"]
    assert "Attempting to use uninitialized value" in msgs["failed_precondition"]
    assert missing_in(msgs["not_found"], "ckpt")
    assert "deadline" in msgs["deadline_exceeded"]
    assert "You must feed a value for placeholder tensor" in ours["invalid_argument: placeholder not fed"][1]


def missing_in(message, name):
    return name in message and "not found" in message.lower()


def test_unavailable_and_resource_exhausted(tf):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    c = tf.constant(1.0)
    with pytest.raises(tf.errors.UnavailableError, match="127.0.0.1:%d" % port):
        sess = tf.Session("grpc://127.0.0.1:%d" % port, config=tf.ConfigProto(operation_timeout_in_ms=5000))
        sess.run(c)
    dims = tf.placeholder(tf.int64, [2])
    big = tf.fill(dims, 0.0)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.ResourceExhaustedError, match="[Oo]ut of memory"):
            sess.run(big, {dims: [2 ** 21, 2 ** 21]})  # 16 TiB
        assert sess.run(big, {dims: [2, 1]}).shape == (2, 1)  # the session goes on


# --------------------------------------------------------------------------------------------
# Bad input from Python


def bad_input_cases(tf):
    """Calls with wrong values; returns {case: exception class name or None}."""
    x = tf.placeholder(tf.float32, [2], name="x")
    n = tf.placeholder(tf.int32, [], name="n")
    y = x * 2.0
    other = tf.Graph()
    with other.as_default():
        z = tf.constant(1.0)
    s = tf.Session()
    out = {}
    cases = {
        "feed strings to a float": lambda: s.run(y, {x: ["a", "b"]}),
        "feed numeric strings to a float": lambda: s.run(y, {x: ["1.5", "2"]}),
        "feed a ragged list": lambda: s.run(y, {x: [[1.0, 2.0], [3.0]]}),
        "feed the wrong shape": lambda: s.run(y, {x: [1.0, 2.0, 3.0]}),
        "feed None": lambda: s.run(y, {x: None}),
        "feed an object": lambda: s.run(y, {x: object()}),
        "feed a set": lambda: s.run(y, {x: {1.0, 2.0}}),
        "feed a tensor": lambda: s.run(y, {x: y}),
        "feed an int too big for int32": lambda: s.run(n, {n: 2 ** 31}),
        "feed a float to an int": lambda: s.run(n, {n: 1.5}),
        "feed an int beyond int64 to a float": lambda: s.run(y, {x: [2 ** 70, 1]}),
        "feed key that is an int": lambda: s.run(y, {3: [1.0, 2.0]}),
        "feed key of another graph": lambda: s.run(y, {z: 1.0}),
        "feed key naming no tensor": lambda: s.run(y, {"nope:0": 1.0}),
        "feed_dict that is a list": lambda: s.run(y, [x, 1]),
        "fetch an unknown tensor name": lambda: s.run("nope:0"),
        "fetch an unknown op name": lambda: s.run("nope"),
        "fetch an output index out of range": lambda: s.run("x:7"),
        "fetch an int": lambda: s.run(42),
        "fetch None": lambda: s.run(None),
        "fetch an object": lambda: s.run(object()),
        "fetch a tensor of another graph": lambda: s.run(z),
        "fetch None inside a structure": lambda: s.run([y, {"a": None}], {x: [1.0, 2.0]}),
        "placeholder of a bad dtype": lambda: tf.placeholder("nonsense"),
        "placeholder of a string shape": lambda: tf.placeholder(tf.float32, "abc"),
        "placeholder of a float shape": lambda: tf.placeholder(tf.float32, [2.5]),
        "placeholder of a negative shape": lambda: tf.placeholder(tf.float32, [-5]),
        "constant of a ragged list": lambda: tf.constant([[1, 2], [3]]),
        "constant of an object": lambda: tf.constant(object()),
        "cast to a bad dtype": lambda: tf.cast(x, "nonsense"),
        "add a string to a float": lambda: tf.add(x, "a"),
        "matmul of vectors": lambda: tf.matmul(x, x),
        "reduce over a missing axis": lambda: tf.reduce_sum(tf.ones([2, 2]), axis=5),
        "attr of the wrong type": lambda: tf.raw_ops.Cast(x=x, DstT=object()),
    }
    for case, fn in cases.items():
        out[case] = outcome(fn)
    s.close()
    out["run a closed session"] = outcome(lambda: s.run(y, {x: [1.0, 2.0]}))
    return out


def test_bad_input_raises_what_tensorflow_raises():
    ours, theirs = run_both(bad_input_cases)
    diffs = {k: (ours[k], theirs[k]) for k in ours if ours[k] != theirs[k]}
    assert not diffs
    assert ours["feed numeric strings to a float"] is None  # numpy.asarray(["1.5", "2"], float32), as TensorFlow
    assert sum(v is not None for v in ours.values()) >= len(ours) - 3


FUZZ = r'''
import random, sys
import numpy as np
import dflow as tf

rng = random.Random(int(sys.argv[1]))
other = tf.Graph()
with other.as_default():
    foreign = tf.constant(1.0)
x = tf.placeholder(tf.float32, [None, 2], name="x")
i = tf.placeholder(tf.int32, [], name="i")
s_ = tf.placeholder(tf.string, [None], name="s")
y = x * 2.0
sess = tf.Session()
closed = tf.Session()
closed.close()

class Weird:
    def __len__(self): raise RuntimeError("len")
    def __iter__(self): raise RuntimeError("iter")
    def __index__(self): raise RuntimeError("index")
    def __float__(self): raise RuntimeError("float")
    def __array__(self, *a, **k): raise RuntimeError("array")

def junk():
    return rng.choice([
        None, object(), "str", b"bytes", u"\udcff", 1j, float("nan"), float("inf"), 2 ** 70, -2 ** 70, -1, 0,
        [], [[]], [[1.0], [2.0, 3.0]], [[1.0, 2.0]] * 3, {1, 2}, {"a": 1}, (1, "a"), [None, None],
        np.zeros((2, 2), np.complex64), np.zeros((3, 2), np.float64), np.array(["a", "b"]),
        np.zeros((0, 2), np.float32), np.ones((2, 2), np.float32)[:, ::-1], np.float32(1), np.int64(2 ** 40),
        np.zeros((2, 2), np.float16), np.array([object()]), Weird(), lambda: 1, tf, sess, foreign,
        foreign.op, y.op, "x:0", "x:9", "nope", "^x", ":", "", [y, None], {"k": foreign}, [2 ** 62, 2 ** 62],
        [-3], [2.5], tf.float32, "float32", tf.GraphKeys, Ellipsis, slice(1, 2), range(3),
        np.zeros([1] * 40, np.float32),
    ])

def feeds_and_fetches():
    which = rng.randrange(9)
    if which == 0:
        return sess.run(y, {x: junk()})
    if which == 1:
        return sess.run(i, {i: junk()})
    if which == 2:
        return sess.run(s_, {s_: junk()})
    if which == 3:
        return sess.run(junk())
    if which == 4:
        return sess.run([y, junk()], {x: [[1.0, 2.0]]})
    if which == 5:
        return sess.run(y, {junk(): [[1.0, 2.0]]})
    if which == 6:
        return sess.run(y, junk())
    if which == 7:
        return closed.run(junk())
    return sess.run(y, {x: [[1.0, 2.0]]}, options=junk())

def builders():
    which = rng.randrange(12)
    if which == 0:
        return tf.placeholder(junk(), junk())
    if which == 1:
        return tf.constant(junk(), dtype=rng.choice([None, tf.float32, tf.int32, tf.string, junk()]))
    if which == 2:
        return tf.reshape(y, junk())
    if which == 3:
        return tf.zeros(junk())
    if which == 4:
        return tf.cast(y, junk())
    if which == 5:
        return tf.add(junk(), junk())
    if which == 6:
        return tf.raw_ops.Fill(dims=junk(), value=junk())
    if which == 7:
        return tf.reduce_sum(y, axis=junk())
    if which == 8:
        return tf.matmul(y, junk(), transpose_a=junk())
    if which == 9:
        return tf.import_graph_def(junk())
    if which == 10:
        return tf.get_default_graph().get_tensor_by_name(junk())
    return tf.raw_ops.FIFOQueueV2(component_types=junk(), shapes=junk(), capacity=junk())

# What TensorFlow raises for bad input (Weird raises RuntimeError on purpose); never SystemError,
# AttributeError, MemoryError or the like, and never a crash.
EXPECTED = (TypeError, ValueError, RuntimeError, KeyError, OverflowError, NotImplementedError, tf.errors.OpError)
kinds, unexpected = {}, []
for n in range(int(sys.argv[2])):
    try:
        rng.choice([feeds_and_fetches, builders])()
        kinds["ok"] = kinds.get("ok", 0) + 1
    except Exception as e:
        kinds[type(e).__name__] = kinds.get(type(e).__name__, 0) + 1
        if not isinstance(e, EXPECTED):
            unexpected.append("%s: %s" % (type(e).__name__, str(e)[:200]))
# The session still works after all of it.
assert sess.run(y, {x: [[1.0, 2.0]]}).tolist() == [[2.0, 4.0]]
print(sorted(kinds.items()))
print(unexpected)
print("survived")
'''


def test_fuzzed_bad_calls_never_crash():
    for seed in (1, 2):
        r = run_python(FUZZ, str(seed), "300", timeout=120)
        assert r.returncode == 0, "seed %d: exit %d\n%s" % (seed, r.returncode, r.stderr[-3000:])
        assert r.stdout.strip().endswith("survived"), r.stdout
        lines = r.stdout.strip().splitlines()
        assert lines[1] == "[]", "unexpected exceptions: %s" % lines[1]
        assert "('ok'," in lines[0] and "TypeError" in lines[0], lines[0]  # it did call and refuse things


# --------------------------------------------------------------------------------------------
# Cancellation, Ctrl-C and the GIL

# A step that enqueues into queue B, then blocks dequeuing from the empty queue A: another thread
# that dequeues from B knows the step is running and blocked (or about to block) in C++.
BLOCKED_STEP = r'''
import sys, threading
if sys.argv[1] == "tensorflow":
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
else:
    import dflow as tf
R = tf.raw_ops
qa = R.FIFOQueueV2(component_types=[tf.float32], shapes=[[]], capacity=4)
qb = R.FIFOQueueV2(component_types=[tf.float32], shapes=[[]], capacity=4)
enq_b = R.QueueEnqueueV2(handle=qb, components=[tf.constant(1.0)])
with tf.control_dependencies([enq_b]):
    deq_a = R.QueueDequeueV2(handle=qa, component_types=[tf.float32])
deq_b = R.QueueDequeueV2(handle=qb, component_types=[tf.float32])
enq_a = R.QueueEnqueueV2(handle=qa, components=[tf.constant(42.0)])
sess = tf.Session()
'''

GIL_AND_CLOSE = BLOCKED_STEP + r'''
result = {}
def worker():
    try:
        result["value"] = float(sess.run(deq_a)[0])
    except Exception as e:
        result["error"] = type(e).__name__
t = threading.Thread(target=worker)
t.start()
sess.run(deq_b)   # the worker's step is running: this thread runs Python and steps meanwhile
total = sum(range(300000))
if sys.argv[2] == "close":
    sess.close()
else:
    sess.run(enq_a)
t.join(60)
print("joined" if not t.is_alive() else "stuck", result.get("value"), result.get("error"), total)
'''


@pytest.mark.parametrize("how", ["enqueue", "close"])
def test_gil_released_and_close_cancels_a_blocked_step(how):
    outs = {}
    for lib in ("dflow", "tensorflow"):
        r = run_python(GIL_AND_CLOSE, lib, how, timeout=120, env={"TF_CPP_MIN_LOG_LEVEL": "3"})
        assert r.returncode == 0, r.stderr[-2000:]
        outs[lib] = r.stdout.split()
    if how == "enqueue":
        assert outs["dflow"] == ["joined", "42.0", "None", str(sum(range(300000)))]
    else:
        assert outs["dflow"][:3] == ["joined", "None", "CancelledError"]
    assert outs["dflow"] == outs["tensorflow"]


CTRL_C = BLOCKED_STEP + r'''
import os
def report():
    sess.run(deq_b)
    print("blocked", flush=True)   # the main thread's step is running
if sys.argv[2] == "during":
    threading.Thread(target=report, daemon=True).start()
try:
    print("about to run", flush=True)
    sess.run(deq_a)
    print("returned", flush=True)
    sys.exit(1)
except KeyboardInterrupt:
    print("caught KeyboardInterrupt", flush=True)
# The session goes on after the cancelled step.
print(sess.run(tf.add(3, 5)), flush=True)
sys.exit(0)
'''


@pytest.mark.parametrize("when", ["during", "at_start"])
def test_ctrl_c_cancels_the_step(when, tmp_path):
    script = tmp_path / "ctrl_c.py"
    script.write_text(CTRL_C)
    p = subprocess.Popen([sys.executable, str(script), "dflow", when], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=PY_ENV)
    try:
        assert p.stdout.readline().strip() == "about to run"
        if when == "during":
            # Sent once the step is known to run (blocked in C++, or about to block).
            assert p.stdout.readline().strip() == "blocked"
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, err[-2000:]
    lines = out.split("\n")
    assert "caught KeyboardInterrupt" in lines and "returned" not in lines, out
    assert lines[-2:] == ["8", ""], out
