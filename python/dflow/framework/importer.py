"""tf.import_graph_def: adds the nodes of a GraphDef (dflow's or TensorFlow's) to the default graph.

The C++ importer (ImportGraphDef) adds the nodes; this layer does what TensorFlow's Python
importer does around it: the name prefix (a name scope, "import/" by default), `input_map`
(inputs of the imported nodes replaced by tensors of the graph), `return_elements`, and attrs
that a newer TensorFlow writes with their default value (MatMul's grad_a=false, ...), which
dflow's OpDefs do not declare and which are dropped as TensorFlow drops default attrs.
"""
from dflow.framework import errors
from dflow.framework import graph_pb
from dflow.framework import ops


def _parse_input(s):
    """'^a' -> ('a', -1); 'a:2' -> ('a', 2); 'a' -> ('a', 0)."""
    if s.startswith("^"):
        return s[1:], -1
    name, sep, idx = s.rpartition(":")
    if sep and idx.isdigit():
        return name, int(idx)
    return s, 0


def _tensor_key(name):
    """input_map / return_elements keys: 'a' means 'a:0'."""
    if name.startswith("^"):
        return name
    op, idx = _parse_input(name)
    return "%s:%d" % (op, idx)


def _is_default_like(v):
    """An AttrValue holding its kind's zero value: what new attrs default to (TensorFlow keeps
    new attrs' defaults backward compatible, and strips attrs equal to their default)."""
    kind = v.WhichOneof("value")
    if kind is None:
        return True
    if kind in ("b", "i", "f", "s"):
        return not getattr(v, kind)
    if kind == "list":
        return v.list.ByteSize() == 0
    return False


def _strip_unknown_attrs(gd):
    for nd in gd.node:
        info = ops._OP_INFO.get(nd.op)
        if info is None:
            raise ValueError("Node '%s' has an op of type '%s', which is not registered in dflow"
                             % (nd.name, nd.op))
        for k in list(nd.attr.keys()):
            if k in info.attr_types or k.startswith("_"):
                continue
            if _is_default_like(nd.attr[k]):
                del nd.attr[k]
            else:
                raise ValueError("Node '%s' (op %s) has attr '%s' with a non-default value, which dflow's "
                                 "%s does not have" % (nd.name, nd.op, k, nd.op))


def import_graph_def(graph_def, input_map=None, return_elements=None, name=None, op_dict=None,
                     producer_op_list=None):
    """Imports `graph_def` into the default graph; returns the ops and tensors named in
    `return_elements` (None when it is None)."""
    if isinstance(graph_def, (bytes, bytearray, str)):
        raise TypeError("Argument `graph_def` must be a GraphDef proto.")
    try:
        gd_in = graph_pb.as_graph_def_message(graph_def)
    except TypeError:
        raise TypeError("Argument `graph_def` must be a GraphDef proto.") from None
    gd = graph_pb.GraphDef()
    gd.CopyFrom(gd_in)
    if input_map is None:
        input_map = {}
    elif not isinstance(input_map, dict):
        raise TypeError("Argument `input_map` must be a dictionary. Obtained %s" % type(input_map).__name__)
    if not all(isinstance(k, str) for k in input_map):
        raise TypeError("All keys for argument `input_map` must be strings. Obtained keys: %s" % list(input_map))
    if return_elements is not None:
        if isinstance(return_elements, (str, bytes)) or not all(isinstance(x, str) for x in return_elements):
            raise TypeError("Argument `return_elements` must be a list of strings. Obtained %r"
                            % (return_elements,))
        return_elements = list(return_elements)
    graph = ops.get_default_graph()
    graph._check_not_finalized()

    # The prefix: a name scope of its own, as TensorFlow's `with ops.name_scope(name, "import")`.
    with ops.name_scope(name, "import", [v for v in input_map.values() if isinstance(v, ops.Tensor)]) as scope:
        prefix = scope or ""
        if not all(isinstance(v, ops.Tensor) for v in input_map.values()):
            if name == "":
                raise ValueError("tf.import_graph_def() requires a non-empty `name` if `input_map` contains "
                                 "non-Tensor values. Try calling tf.convert_to_tensor() on `input_map` values "
                                 "before calling tf.import_graph_def().")
            with ops.name_scope("_inputs"):
                input_map = {k: ops.convert_to_tensor(v) for k, v in input_map.items()}
    mapped = {}
    for k, v in input_map.items():
        if v.graph is not graph:
            raise ValueError("input_map value %s is not an element of the default graph." % (v,))
        mapped[_tensor_key(k)] = v.op if k.startswith("^") else v
    _strip_unknown_attrs(gd)

    names = {nd.name for nd in gd.node}
    used = set()

    def rename_input(s):
        src, idx = _parse_input(s)
        key = "^" + src if idx < 0 else "%s:%d" % (src, idx)
        if key in mapped:
            used.add(key)
            v = mapped[key]
            if idx < 0:
                return "^" + v.name
            return v.op.name if v.value_index == 0 else v.name
        if src not in names:
            return s  # resolved (or refused) by the C++ importer
        if idx < 0:
            return "^" + prefix + src
        return prefix + s

    for nd in gd.node:
        old_inputs = list(nd.input)
        del nd.input[:]
        data = [rename_input(s) for s in old_inputs if not s.startswith("^")]
        control = [rename_input(s) for s in old_inputs if s.startswith("^")]
        nd.input.extend(data + control)
        nd.name = prefix + nd.name
        if "_class" in nd.attr:
            locs = [s.decode() if isinstance(s, bytes) else s for s in nd.attr["_class"].list.s]
            locs = [("loc:@" + prefix + s[5:]) if s.startswith("loc:@") and s[5:] in names else s for s in locs]
            del nd.attr["_class"].list.s[:]
            nd.attr["_class"].list.s.extend([s.encode() for s in locs])
    unused = sorted(k for k in mapped if k not in used)
    if unused:
        raise ValueError("Attempted to map inputs that were not found in graph_def: [%s]" % ", ".join(unused))
    if return_elements is not None:
        for r in return_elements:
            src, _ = _parse_input(r)
            if _tensor_key(r) not in mapped and src not in names:
                raise ValueError("Requested return_element %r not found in graph_def." % r)

    try:
        graph._h.import_graph_def(gd.SerializeToString())
    except errors.InvalidArgumentError as e:
        raise ValueError(e.message) from None

    if return_elements is None:
        return None
    out = []
    for r in return_elements:
        key = _tensor_key(r)
        if ":" in r and key in mapped:
            out.append(mapped[key])
        elif ":" in r:
            out.append(graph.get_tensor_by_name(prefix + r))
        else:
            out.append(graph.get_operation_by_name(prefix + r))
    return out
