"""A Python function for every op in dflow's registry, generated from its OpDef at import.

Names and arguments are TensorFlow's: `MatMul` → `mat_mul(a, b, transpose_a=False,
transpose_b=False, name=None)`. Inputs come first, then attrs that the inputs do not decide
(those without a default before those with one), then `name`. Attrs that inputs decide (`T`,
`N`) are inferred. These are what `tf.raw_ops` holds (called with keywords there).
"""
import keyword
import re
import sys

from dflow.framework import ops as _ops

_FIRST_CAP = re.compile(r"(.)([A-Z][a-z]+)")


def to_snake_case(name):
    """TensorFlow's rule: MatMul → mat_mul, Conv2DBackpropInput → conv2d_backprop_input,
    TFRecordDataset → tf_record_dataset, AddV2 → add_v2, LRN → lrn."""
    out = []
    n = len(name)
    for i, c in enumerate(name):
        if c.isupper():
            if i > 0:
                prev = name[i - 1]
                nxt = name[i + 1] if i + 1 < n else ""
                if prev.islower() or (prev.isupper() and nxt.islower()):
                    out.append("_")
            out.append(c.lower())
        else:
            out.append(c)
    return "".join(out)


def _py_name(s):
    return s + "_" if keyword.iskeyword(s) or s in ("name",) else s


def _make(info):
    op_type = info.name
    inferred = set()
    for a in info.inputs:
        if a["type_attr"]:
            inferred.add(a["type_attr"])
        if a["number_attr"]:
            inferred.add(a["number_attr"])
        if a["type_list_attr"]:
            inferred.add(a["type_list_attr"])
    required, optional = [], []
    for a in info.attrs:
        if a["name"] in inferred:
            continue
        (optional if a["has_default"] else required).append(a)
    in_names = [_py_name(a["name"]) for a in info.inputs]
    params = list(in_names) + [_py_name(a["name"]) for a in required]
    params += ["%s=_D[%r]" % (_py_name(a["name"]), a["name"]) for a in optional]
    # Inferred attrs with defaults (a type attr of an op without inputs of it) stay settable.
    for a in info.attrs:
        if a["name"] in inferred and a["type"] == "type":
            params.append("%s=None" % _py_name(a["name"]))
    params.append("name=None")
    attr_items = [(a["name"], _py_name(a["name"])) for a in required + optional]
    attr_items += [(a["name"], _py_name(a["name"])) for a in info.attrs
                   if a["name"] in inferred and a["type"] == "type"]
    body = ["def %s(%s):" % ("fn", ", ".join(params)),
            "    attrs = {}"]
    for an, pn in attr_items:
        body.append("    if %s is not None: attrs[%r] = %s" % (pn, an, pn))
    body.append("    return _apply(%r, name, [%s], attrs)" % (op_type, ", ".join(in_names) + ("," if len(in_names) == 1 else "")))
    defaults = {}
    for a in optional:
        v = a["default"]
        if a["type"] == "string" and isinstance(v, bytes):
            v = v.decode()
        elif a["type"] == "list(string)" and isinstance(v, list):
            v = [x.decode() if isinstance(x, bytes) else x for x in v]
        defaults[a["name"]] = v
    ns = {"_apply": _ops.apply_op, "_D": defaults}
    exec("\n".join(body), ns)  # noqa: S102 - code generated from the OpDef, not from input
    fn = ns["fn"]
    fn.__name__ = to_snake_case(op_type)
    fn.__qualname__ = fn.__name__
    sig = ", ".join("%s: %s" % (a["name"], a["type_attr"] or a["type_list_attr"] or a["type"]) for a in info.inputs)
    fn.__doc__ = "%s\n\nThe op %s(%s).\n" % (info.op_def.get("summary") or op_type, op_type, sig)
    return fn


_module = sys.modules[__name__]
OPS = {}  # op type -> function
for _name, _info in sorted(_ops._OP_INFO.items()):
    if _name.startswith("_"):
        continue
    _fn = _make(_info)
    OPS[_name] = _fn
    setattr(_module, _fn.__name__, _fn)


class _RawOps:
    """tf.raw_ops: every op by its OpDef name, called with keyword arguments."""

    def __getattr__(self, name):
        fn = OPS.get(name)
        if fn is None:
            raise AttributeError("module 'dflow.raw_ops' has no attribute '%s'" % name)
        return fn

    def __dir__(self):
        return sorted(OPS)


raw_ops = _RawOps()
