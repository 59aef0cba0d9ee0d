"""The engine of the differential op suite: every op that dflow registers and TensorFlow has is
built by TensorFlow (tf.compat.v1 graph mode) on generated inputs, the GraphDef is serialized, and
the same bytes are imported and run by TensorFlow and by dflow. Values must agree (exactly for
integers, bools and strings; within TOLERANCE for floats), a run that TensorFlow rejects must be
rejected by dflow with the same error class, and for every op with a gradient in TensorFlow the
gradient of a weighted sum of its float outputs with respect to its float inputs is built on each
side by that side's own `gradients` (so dflow's gradient functions are checked against
TensorFlow's) and compared too.

Spec files
----------
Specs live in modules named `specs_<area>.py` beside this file; every such module is picked up
(adding a file is all it takes). A module defines:

    SPECS = [Spec(...), ...]           # the ops it compares
    EXCLUDED = {"OpName": "reason"}    # optional: ops it leaves out, each with its reason
    KNOWN = {("OpName", r"regex"): "reason"}  # optional: intended differences; the regex is
                                               # searched in "<dtype> <case label>: <problem text>"

`Spec(op, cases, dtypes=None, type_attr="T", grad=None, tol=None, grad_tol=None, note="")`:
- `op`: the OpDef name compared (an op may have several specs; the table merges them).
- `cases(dtype)`: a function of a dtype name ("float32", "int64", "bool", "string", ... or None
  when the op has no type attr) returning Cases. It is called once per dtype; all its cases go
  into one graph (one TensorFlow graph, one import on each side, one Session.run per case).
- `dtypes`: the dtype names to run; by default those that both TensorFlow's and dflow's OpDef
  allow for `type_attr` (an op without that attr runs once, with dtype None).
- `grad`: None — compare gradients where TensorFlow registers a gradient for the op; False —
  never (say why in `note`); True — always.
- `tol` / `grad_tol`: {dtype name: (rtol, atol)} overriding TOLERANCE / GRAD_TOLERANCE.
- `dynamic`: also run this many of the cases (spread over them) again with every fed input of
  unknown shape (Dyn), so that shape functions that see nothing are exercised too.

`Case(label, fn, inputs, grad=None)`:
- `inputs`: numpy arrays, each fed through a Placeholder of its full static shape, or `Const(x)`
  to embed it as a Const node (axes, shapes, sizes that shape functions must see), or `Dyn(x)`
  to feed it through a Placeholder of unknown shape (shape functions see nothing).
- `fn(tf, *tensors)`: builds the op with module `tf` (TensorFlow's tf.compat.v1; the same body
  is run with `dflow` when TensorFlow rejects the case while building, and dflow must reject it
  too); returns a tensor or a list/tuple of tensors to fetch.
- `grad`: indices of the inputs to differentiate; default every fed float input ([] for none).

What is compared, per case: the fetched values (dtype, shape, values); where TensorFlow's run
fails, dflow's must fail with the same error class ("No OpKernel was registered" on TensorFlow's
side — a dtype its OpDef allows and its kernels lack — accepts anything from dflow); where
TensorFlow rejects the case while building, dflow must reject it too (ValueError, TypeError or
InvalidArgumentError). Gradients are compared where TensorFlow's forward run succeeds and its own
gradient function builds. TensorFlow runs with Grappler off (see _config). Run
`python3 diffsuite.py Op ...` (from this directory, with dflow on the path) to see one op's
problems.

Helpers: `gen(dtype, shape, kind, seed)` makes inputs (kinds: normal, positive, special — NaN,
+-inf, +-0, huge and tiny values —, extreme — the dtype's limits —, unit — within (-1, 1) —,
small — integers 0..3); `unary_cases`, `binary_cases` make the usual sets. An op both sides have
that no spec compares and no EXCLUDED lists fails `test_every_common_op_is_covered`.
"""
import glob
import importlib
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tfref  # noqa: E402,F401  (puts python/tests on the path)
from conftest import BUILD, real_tf  # noqa: E402

import dflow  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# DataType enum values shared by both (TensorFlow's numbering).
DTYPES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 7: "string", 9: "int64", 10: "bool"}
TF_ONLY = {5: "int16", 6: "int8", 8: "complex64", 14: "bfloat16", 17: "uint16", 18: "complex128",
           19: "float16", 22: "uint32", 23: "uint64", 11: "qint8", 12: "quint8", 13: "qint32",
           15: "qint16", 16: "quint16"}
FLOATS = ("float32", "float64")

# Stated tolerances (rtol, atol) per float dtype: values, and gradients (summation orders differ).
TOLERANCE = {"float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12)}
GRAD_TOLERANCE = {"float32": (1e-4, 1e-5), "float64": (1e-9, 1e-11)}

SHAPES = {"scalar": (), "vector": (5,), "matrix": (3, 4), "empty": (0, 4), "rank3": (2, 3, 4)}
PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), ()), ((), (3, 4)), ((3, 1), (1, 4)), ((0, 4), (4,)),
         ((), ()), ((2, 3, 4), (3, 1)), ((3, 4), (3,)), ((2, 3), (0, 3)), ((1,), (0,))]


class Const:
    """An input embedded in the graph as a Const node instead of fed through a Placeholder."""

    def __init__(self, value, dtype=None):
        self.value = np.asarray(value, dtype=dtype)


class Dyn:
    """An input fed through a Placeholder of unknown shape (shape functions see nothing)."""

    def __init__(self, value, dtype=None):
        self.value = np.asarray(value, dtype=dtype)


class Case:
    def __init__(self, label, fn, inputs=(), grad=None):
        self.label, self.fn, self.inputs, self.grad = label, fn, list(inputs), grad


class Spec:
    def __init__(self, op, cases, dtypes=None, type_attr="T", grad=None, tol=None, grad_tol=None, note="",
                 dynamic=0):
        self.op, self.cases, self.dtypes, self.type_attr = op, cases, dtypes, type_attr
        self.dynamic = dynamic
        self.grad, self.tol, self.grad_tol, self.note = grad, tol or {}, grad_tol or {}, note
        self.module = None


# ---- inputs ----------------------------------------------------------------------------------

def gen(dtype, shape, kind="normal", seed=0):
    r = np.random.RandomState(seed % (2 ** 31))
    shape = tuple(shape)
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        return r.rand(*shape) > 0.5 if shape else np.bool_(r.rand() > 0.5)
    if dtype == "string":
        words = [b"", b"a", b"bc", b"dflow", b"\x00x", b"\xff\xfe", b"hello world"]
        return np.array([words[r.randint(len(words))] for _ in range(n)], dtype=object).reshape(shape)
    if dtype in ("int32", "int64", "uint8"):
        info = np.iinfo(dtype)
        if kind == "extreme":
            vals = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype=np.int64)
            x = vals[r.randint(len(vals), size=n)]
        elif kind == "positive":
            x = r.randint(1, 10, size=n)
        elif kind == "small":
            x = r.randint(0, 4, size=n)
        else:
            x = r.randint(0 if dtype == "uint8" else -9, 10, size=n)
        return np.asarray(x.astype(dtype).reshape(shape))
    x = r.randn(n)
    if kind == "positive":
        x = np.abs(x) + 0.1
    elif kind == "unit":
        x = np.tanh(x) * 0.95
    elif kind == "special":
        specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e-30, 1.5, -2.5]
        for i in range(min(len(specials), n)):
            x[(i * 7) % n] = specials[i]
    elif kind == "extreme":
        fi = np.finfo(dtype)
        vals = [fi.max, -fi.max, fi.tiny, -fi.tiny, fi.eps, 0.0, 1.0, -1.0]
        x = np.array([vals[i % len(vals)] for i in r.permutation(n)] if n else [], dtype=np.float64)
    return np.asarray(x.astype(dtype).reshape(shape))


def unary_cases(fn, dtype, kinds=None, shapes=None, label=""):
    """A unary op on every shape of SHAPES and every input kind."""
    if kinds is None:
        kinds = ["normal", "special", "extreme"] if dtype in FLOATS else ["normal", "extreme"]
    out = []
    for sname, shape in (shapes or SHAPES).items():
        for kind in kinds:
            out.append(Case("%s%s %s" % (label, sname, kind), fn, [gen(dtype, shape, kind, len(out))]))
    return out


def binary_cases(fn, dtype, kinds=None, pairs=None, second=None, label=""):
    """A binary op on broadcasting shape pairs; `second` is the kind of the second input (default:
    the same as the first)."""
    if kinds is None:
        kinds = ["normal", "special"] if dtype in FLOATS else ["normal", "extreme"]
    out = []
    for sa, sb in pairs or PAIRS:
        for kind in kinds:
            x = gen(dtype, sa, kind, len(out))
            y = gen(dtype, sb, second or kind, len(out) + 1000)
            out.append(Case("%s%s, %s %s" % (label, sa, sb, kind), fn, [x, y]))
    return out


# ---- the op sets -----------------------------------------------------------------------------

def dflow_ops():
    return set(n for n in dir(dflow.raw_ops) if not n.startswith("_"))


def tf_op_def(name):
    real_tf()
    from tensorflow.python.framework import op_def_registry
    return op_def_registry.get(name)


def common_ops():
    """Ops dflow registers that TensorFlow has too."""
    return sorted(n for n in dflow_ops() if tf_op_def(n) is not None)


def tf_has_gradient(op):
    real_tf()
    from tensorflow.python.framework import ops as tf_ops
    try:
        return tf_ops._gradient_registry.lookup(op) is not None  # noqa: SLF001
    except LookupError:
        return False


def op_dtypes(op, attr="T"):
    """(dtype names both OpDefs allow for `attr`, names only TensorFlow's allows); (None, []) for
    an op without that attr."""
    from dflow.framework import ops as dops
    tf_attr = [a for a in tf_op_def(op).attr if a.name == attr]
    d_attr = [a for a in dops._OP_INFO[op].op_def["attrs"] if a["name"] == attr]  # noqa: SLF001
    if not tf_attr or not d_attr:
        return None, []
    tf_types = list(tf_attr[0].allowed_values.list.type) or list(DTYPES) + list(TF_ONLY)
    d_types = d_attr[0]["allowed_types"] or list(DTYPES)
    both = [DTYPES[t] for t in sorted(DTYPES) if t in tf_types and t in d_types]
    only = [DTYPES.get(t) or TF_ONLY[t] for t in tf_types if t not in d_types and
            (t in DTYPES or t in TF_ONLY and not TF_ONLY[t].startswith("q"))]
    return both, sorted(set(only))


# ---- spec modules ----------------------------------------------------------------------------

def spec_modules():
    mods = []
    for path in sorted(glob.glob(os.path.join(HERE, "specs_*.py"))):
        mods.append(importlib.import_module(os.path.splitext(os.path.basename(path))[0]))
    return mods


def load():
    """(specs, excluded {op: (reason, module)}, known {(op, regex): reason})."""
    specs, excluded, known = [], {}, {}
    for m in spec_modules():
        for s in getattr(m, "SPECS", []):
            s.module = m.__name__
            specs.append(s)
        for op, reason in getattr(m, "EXCLUDED", {}).items():
            excluded[op] = (reason, m.__name__)
        known.update(getattr(m, "KNOWN", {}))
    return specs, excluded, known


# ---- running one graph on one side -----------------------------------------------------------

def _err(e, stage):
    msg = getattr(e, "message", None) or str(e)
    if "Detected at node" in msg:  # TensorFlow's message carries the Python stack of the node
        lines = msg.splitlines()
        at = [i for i, ln in enumerate(lines) if ln.startswith("Node: ")]
        msg = "\n".join(lines[at[0] + 1:] if at else lines)
    return ("error", type(e).__name__, " ".join(msg.split())[:4000], stage)


def _sub_graph_def(m, gd_bytes, prefix):
    gd = m.GraphDef.FromString(gd_bytes)
    keep = [n for n in gd.node if n.name.startswith(prefix)]
    del gd.node[:]
    gd.node.extend(keep)
    return gd.SerializeToString()


def _run_side(m, gd_bytes, built, graph=None):
    """Imports the bytes with module m and runs every built case; returns {i: (fwd, grads)}.
    All cases run in one Session.run; when that fails, each case runs alone (a failing kernel
    fails only its own case). A graph that does not import is imported case by case."""
    out = {}
    g = graph or m.Graph()
    with g.as_default():
        try:
            if graph is None:
                m.import_graph_def(m.GraphDef.FromString(gd_bytes), name="")
            groups = [(g, list(built))]
        except Exception:  # noqa: BLE001 - one case's node rejected at import
            groups = None
    if groups is None:
        groups = []
        for b in built:
            gb = m.Graph()
            with gb.as_default():
                try:
                    m.import_graph_def(m.GraphDef.FromString(_sub_graph_def(m, gd_bytes, "c%d/" % b["i"])), name="")
                except Exception as e:  # noqa: BLE001
                    out[b["i"]] = (_err(e, "import"), None)
                    continue
            groups.append((gb, [b]))
    for g, cases in groups:
        with g.as_default():
            grads = {}
            for b in cases:
                if b["loss"] is None:
                    continue
                try:
                    xs = [g.get_tensor_by_name(b["inputs"][j]) for j in b["grad"]]
                    grads[b["i"]] = m.gradients(g.get_tensor_by_name(b["loss"]), xs)
                except Exception as e:  # noqa: BLE001
                    grads[b["i"]] = _err(e, "gradients")
            with m.Session(config=_config(m)) as s:
                fetch, feeds = {}, {}
                for b in cases:
                    feeds.update({b["inputs"][j]: v for j, v in b["feeds"].items()})
                    fetch[("f", b["i"])] = b["outputs"]
                    gt = grads.get(b["i"])
                    if gt is not None and not isinstance(gt, tuple):
                        fetch[("g", b["i"])] = [t for t in gt if t is not None]
                _run_cases(s, cases, fetch, feeds, grads, out)
    return out


def _run_cases(s, cases, fetch, feeds, grads, out):
    """Runs the cases' fetches in one Session.run; when that fails, each half again (so a failing
    case costs a few runs, not one run per case), down to the case alone: its forward, then its
    gradients."""
    part = {k: v for k, v in fetch.items() if k[1] in {b["i"] for b in cases}}
    try:
        vals = s.run(part, feeds)
    except Exception:  # noqa: BLE001 - a case fails: find it
        vals = None
    if vals is None and len(cases) > 1:
        half = len(cases) // 2
        _run_cases(s, cases[:half], fetch, feeds, grads, out)
        _run_cases(s, cases[half:], fetch, feeds, grads, out)
        return
    for b in cases:
        i = b["i"]
        if vals is not None:
            fwd = ("value", vals[("f", i)])
        else:
            try:
                fwd = ("value", s.run(b["outputs"], feeds))
            except Exception as e:  # noqa: BLE001
                fwd = _err(e, "run")
        gr = grads.get(i)
        if gr is not None and not isinstance(gr, tuple):
            gt = gr
            try:
                got = iter(vals[("g", i)] if vals is not None else s.run(fetch[("g", i)], feeds))
                gr = ("value", [None if t is None else next(got) for t in gt])
            except Exception as e:  # noqa: BLE001
                gr = _err(e, "run")
        out[i] = (fwd, gr)


def _config(m):
    """TensorFlow runs its kernels as they are: Grappler's rewrites (constant folding, arithmetic
    simplification) are off, since they change what a run rejects depending on the rest of the
    graph (a duplicate reduction axis fails the Sum kernel in a small graph, and is folded away in
    a large one)."""
    if m is dflow:
        return None
    cfg = m.ConfigProto()
    cfg.graph_options.rewrite_options.disable_meta_optimizer = True
    return cfg


def _loss(tf, outs):
    """A weighted sum of the float outputs (weights 1, 1.25, ... 2.5 by element index)."""
    total = None
    for t in outs:
        if not hasattr(t, "dtype") or not t.dtype.is_floating:
            continue
        if t.shape.is_fully_defined():
            n = int(np.prod(t.shape.as_list()))
            w = tf.constant((1 + (np.arange(n) % 7) * 0.25).reshape(t.shape.as_list()), t.dtype)
        else:
            w = tf.cast(tf.math.floormod(tf.range(tf.size(t)), 7), t.dtype) * 0.25 + 1
            w = tf.reshape(w, tf.shape(t))
        s = t * w
        s = tf.reduce_sum(s) if t.shape.rank != 0 else s
        s = s if t.dtype == tf.float64 else tf.cast(s, tf.float64)
        total = s if total is None else total + s
    return total


# Gradients are compared on this many cases of float64 and of other dtypes, spread over the cases
# (gradient functions are dtype-generic, and TensorFlow's tf.gradients is the suite's largest cost).
GRAD_CASES_FLOAT64 = 40
GRAD_CASES_OTHER_DTYPES = 8


def _grad_case(dtype, i, n):
    most = GRAD_CASES_FLOAT64 if dtype == "float64" else GRAD_CASES_OTHER_DTYPES
    if n <= most:
        return True
    step = n / float(most)
    return int(i / step) != int((i - 1) / step) if i else True


def _build_tf(spec, dtype, cases, want_grad):
    """Builds every case in one TensorFlow graph: (GraphDef bytes, built cases, build errors)."""
    tf = real_tf()
    g = tf.Graph()
    built, errors = [], {}
    with g.as_default():
        for i, c in enumerate(cases):
            with tf.name_scope("c%d" % i):
                tensors, names, feeds = [], [], {}
                for j, x in enumerate(c.inputs):
                    if isinstance(x, Const):
                        t = tf.constant(x.value, name="in%d" % j)
                    elif isinstance(x, Dyn):
                        x = x.value
                        t = tf.placeholder(tf.as_dtype(x.dtype if x.dtype != object else tf.string), None,
                                           name="in%d" % j)
                        feeds[j] = x
                    else:
                        x = np.asarray(x)
                        t = tf.placeholder(tf.as_dtype(x.dtype if x.dtype != object else tf.string),
                                           x.shape, name="in%d" % j)
                        feeds[j] = x
                    tensors.append(t)
                    names.append(t.name)
                try:
                    res = c.fn(tf, *tensors)
                except Exception as e:  # noqa: BLE001
                    errors[i] = _err(e, "build")
                    continue
                single = not isinstance(res, (list, tuple))
                outs = [res] if single else list(res)
                outs = [o.outputs[0] if hasattr(o, "outputs") and not hasattr(o, "dtype") and o.outputs else o
                        for o in outs]
                gidx = c.grad if c.grad is not None else [j for j, v in feeds.items() if v.dtype.kind == "f"]
                loss = None
                if want_grad and gidx and _grad_case(dtype, i, len(cases)):
                    lt = _loss(tf, outs)
                    if lt is not None:
                        loss = tf.identity(lt, name="loss").name
                built.append({"i": i, "label": c.label, "inputs": names, "feeds": feeds,
                              "outputs": [o.name for o in outs], "single": single,
                              "grad": gidx, "loss": loss})
    return g.as_graph_def().SerializeToString(), built, errors, g


def _dflow_build_error(c):
    g = dflow.Graph()
    with g.as_default():
        tensors = []
        for x in c.inputs:
            if isinstance(x, Const):
                tensors.append(dflow.constant(x.value))
            elif isinstance(x, Dyn):
                tensors.append(dflow.placeholder(dflow.string if x.value.dtype == object else
                                                 dflow.as_dtype(x.value.dtype), None))
            else:
                x = np.asarray(x)
                tensors.append(dflow.placeholder(dflow.string if x.dtype == object else dflow.as_dtype(x.dtype),
                                                 x.shape))
        try:
            c.fn(dflow, *tensors)
        except Exception as e:  # noqa: BLE001
            return _err(e, "build")
    return None


# ---- comparison ------------------------------------------------------------------------------

REJECT_CLASSES = {"ValueError", "TypeError", "InvalidArgumentError"}


def _dense(v):
    """An IndexedSlicesValue (TensorFlow's or dflow's) as the dense array it stands for."""
    if hasattr(v, "indices") and hasattr(v, "values") and hasattr(v, "dense_shape"):
        values = np.asarray(v.values)
        out = np.zeros(tuple(np.asarray(v.dense_shape)), values.dtype)
        np.add.at(out, np.asarray(v.indices), values)
        return out
    return v


def _compare_values(label, a, b, tol):
    a, b = _dense(a), _dense(b)
    if isinstance(b, (list, tuple)):
        if not isinstance(a, (list, tuple)) or len(a) != len(b):
            return ["%s: structure %r vs TensorFlow's %r" % (label, type(a).__name__, type(b).__name__)]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += _compare_values("%s[%d]" % (label, i), x, y, tol)
        return out
    if (a is None) != (b is None):
        return ["%s: %s vs TensorFlow's %s" % (label, "None" if a is None else "a value",
                                               "None" if b is None else "a value")]
    if a is None:
        return []
    x, y = np.asarray(a), np.asarray(b)
    # A string scalar comes back as bytes (or, fetched where it was fed, as a 0-d object array).
    x, y = (x.astype(object) if x.dtype.kind == "S" else x), (y.astype(object) if y.dtype.kind == "S" else y)
    if x.dtype != y.dtype or x.shape != y.shape:
        return ["%s: %s%s vs TensorFlow's %s%s" % (label, x.dtype, x.shape, y.dtype, y.shape)]
    if x.dtype.kind in "fc":
        rt, at = tol.get(str(x.dtype), (1e-5, 1e-6))
        try:
            np.testing.assert_allclose(x, y, rtol=rt, atol=at)
        except AssertionError as e:
            lines = [s for s in str(e).strip().splitlines() if s.strip()]
            return ["%s: %s" % (label, " | ".join(lines[1:5]))]
        return []
    if x.dtype == object:
        same = x.shape == y.shape and all(p == q for p, q in zip(x.reshape(-1), y.reshape(-1)))
    else:
        same = np.array_equal(x, y)
    return [] if same else ["%s: %r vs TensorFlow's %r" % (label, x, y)]


def _compare(label, ours, theirs, tol):
    """Problems found comparing one result (forward or gradients) of the two sides."""
    if theirs[0] == "error":
        if theirs[1] == "UnicodeDecodeError" and ours[0] == "error":
            return []  # TensorFlow's message is not UTF-8 (it quotes the input): its class is lost
        if "No OpKernel was registered" in theirs[2] and ours[0] == "value":
            return []  # TensorFlow's OpDef allows the dtype, its kernels lack it; dflow computes it
        if ours[0] == "error":
            if ours[1] == theirs[1] or ("No OpKernel was registered" in theirs[2]):
                return []
            if theirs[3] == "build" and ours[1] in REJECT_CLASSES and theirs[1] in REJECT_CLASSES:
                return []
            return ["%s: dflow raises %s (%s) at %s, TensorFlow %s (%s) at %s" % (
                label, ours[1], ours[2][:120], ours[3], theirs[1], theirs[2][:120], theirs[3])]
        return ["%s: TensorFlow raises %s (%s), dflow returns a value" % (label, theirs[1], theirs[2][:160])]
    if ours[0] == "error":
        return ["%s: dflow raises %s at %s (%s), TensorFlow returns a value" % (label, ours[1], ours[3], ours[2][:200])]
    return _compare_values(label, ours[1], theirs[1], tol)


class OpResult:
    def __init__(self, op):
        self.op, self.dtypes, self.cases, self.grad_cases = op, set(), 0, 0
        self.mismatches, self.known, self.tf_only, self.notes = [], [], set(), []
        self.known_keys, self.modules = set(), set()


def run_spec(spec, known=None, result=None):
    """Runs one spec on every dtype; returns its OpResult (merged into `result` if given)."""
    r = result or OpResult(spec.op)
    known = known or {}
    if spec.dtypes is not None:
        dtypes, only = list(spec.dtypes), []
    else:
        dtypes, only = op_dtypes(spec.op, spec.type_attr)
        if dtypes is None:
            dtypes = [None]
    r.tf_only.update(only)
    want_grad = spec.grad if spec.grad is not None else tf_has_gradient(spec.op)
    tol = dict(TOLERANCE, **spec.tol)
    gtol = dict(GRAD_TOLERANCE, **spec.grad_tol)
    r.modules.add(spec.module)
    if spec.note and spec.note not in r.notes:
        r.notes.append(spec.note)
    for dtype in dtypes:
        cases = list(spec.cases(dtype))
        if not cases:
            continue
        cases += _dynamic_variants(cases, spec.dynamic)
        r.dtypes.add(dtype or "-")
        data, built, errors, tf_graph = _build_tf(spec, dtype, cases, want_grad)
        # TensorFlow runs the graph the bytes were serialized from; dflow imports the bytes.
        theirs = _run_side(real_tf(), data, built, tf_graph)
        ours = _run_side(dflow, data, built)
        problems = []
        for i, err in errors.items():
            c = cases[i]
            mine = _dflow_build_error(c) or ("value", None)
            problems += [(c.label, p) for p in _compare("%s(%s %s)" % (spec.op, dtype, c.label), mine, err, tol)]
        for b in built:
            label = "%s(%s %s)" % (spec.op, dtype, b["label"])
            (fa, ga), (fb, gb) = ours[b["i"]], theirs[b["i"]]
            if fa[0] == "value" and b["single"]:
                fa = ("value", fa[1][0])
            if fb[0] == "value" and b["single"]:
                fb = ("value", fb[1][0])
            problems += [(b["label"], p) for p in _compare(label, fa, fb, tol)]
            # Gradients are compared where TensorFlow's forward run succeeds and TensorFlow's own
            # gradient function builds (a gradient of a failing run says nothing about either).
            if gb is not None and fb[0] == "value" and not (gb[0] == "error" and gb[3] == "gradients"):
                r.grad_cases += 1
                if ga is None:  # dflow did not import the case
                    ga = fa
                problems += [(b["label"], p) for p in _compare(label + " gradient", ga, gb, gtol)]
        r.cases += len(cases)
        for case_label, p in problems:
            key = _known_key(known, spec.op, "%s %s: %s" % (dtype, case_label, p))
            if key:
                r.known.append(p)
                r.known_keys.add(key)
            else:
                r.mismatches.append(p)
    return r


def _dynamic_variants(cases, n):
    """Copies of n of the cases (spread over them) with their fed inputs of unknown shape."""
    out = []
    picked = cases[::max(1, len(cases) // n)][:n] if n else []
    for c in picked:
        if any(not isinstance(x, (Const, Dyn)) for x in c.inputs):
            out.append(Case(c.label + " (shapes unknown)", c.fn,
                            [x if isinstance(x, (Const, Dyn)) else Dyn(x) for x in c.inputs], c.grad))
    return out


def _known_key(known, op, label):
    """The KNOWN entry (op, regex) matching "<dtype> <case label>: <problem>", if any."""
    for (kop, pat) in known:
        if kop == op and re.search(pat, label):
            return (kop, pat)
    return None


# ---- the whole suite -------------------------------------------------------------------------

def run_all(only_module=None):
    """Runs every spec (of one module if given): {op: OpResult}."""
    specs, _, known = load()
    results = {}
    for s in specs:
        if only_module and s.module != only_module:
            continue
        results[s.op] = run_spec(s, known, results.get(s.op))
    return results


def table(results, excluded, known=None):
    rows = ["| op | dtypes | cases | gradient | status | reason |", "|---|---|---|---|---|---|"]
    for op in sorted(set(results) | set(excluded)):
        if op in results:
            r = results[op]
            status = "MISMATCH (%d)" % len(r.mismatches) if r.mismatches else "ok"
            why = sorted(set((known or {}).get(k, "") for k in r.known_keys) - {""})
            reason = "; ".join(r.notes + (["differs on purpose in %d case(s): %s" % (len(r.known), " / ".join(why))]
                                          if r.known else []) +
                               (["TensorFlow only: %s" % ", ".join(sorted(r.tf_only))] if r.tf_only else []))
            rows.append("| %s | %s | %d | %s | %s | %s |" % (op, ", ".join(sorted(r.dtypes)), r.cases,
                                                            "yes" if r.grad_cases else "no", status, reason))
        else:
            reason, mod = excluded[op]
            rows.append("| %s | - | 0 | no | excluded (%s) | %s |" % (op, mod, reason))
    return "\n".join(rows) + "\n"


def summary(results):
    n = sum(1 for r in results.values() if r.cases)
    m = sum(1 for r in results.values() if r.grad_cases)
    k = sum(len(r.mismatches) for r in results.values())
    return "conformance: %d ops compared, %d gradients compared, %d mismatches" % (n, m, k)


def write_table(results, excluded, known=None):
    path = os.path.join(BUILD, "conformance_ops.md")
    os.makedirs(BUILD, exist_ok=True)
    with open(path, "w") as f:
        f.write("# Differential op suite: dflow vs TensorFlow\n\n%s\n\n" % summary(results))
        f.write("Tolerances (rtol, atol): values %s; gradients %s.\n\n" % (TOLERANCE, GRAD_TOLERANCE))
        f.write(table(results, excluded, known))
    return path


if __name__ == "__main__":  # python3 diffsuite.py [Op ...]: run some specs, print problems
    # Through the module the spec files import: run as a script this file is __main__, whose Const
    # is not the class the specs' inputs are made of.
    import diffsuite as _suite
    specs, excluded, known = _suite.load()
    want = set(sys.argv[1:])
    res = {}
    for s in specs:
        if not want or s.op in want:
            res[s.op] = _suite.run_spec(s, known, res.get(s.op))
    for r in res.values():
        for p in r.mismatches:
            print("MISMATCH", p)
    print(_suite.summary(res))
