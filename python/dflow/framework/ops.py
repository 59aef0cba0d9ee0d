"""Graphs, operations and tensors: TensorFlow's graph-building API over dflow's C++ Scope.

A `Graph` wraps a C++ graph and the scope ops are built in (name scope, device, control
dependencies). Every op is built by `apply_op`, which converts Python values as TensorFlow does
and calls the C++ builder (`dflow._dflow.build_op`); shape inference, name uniquing and
validation happen there. Errors met while building raise at once, as in TensorFlow.
"""
import contextlib
import threading
import weakref

import numpy as np

from dflow import _dflow
from dflow.framework import dtypes
from dflow.framework import errors
from dflow.framework import tensor_shape


class GraphKeys:
    """Standard collection names (TensorFlow's tf.GraphKeys)."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    TRAIN_OP = "train_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    VARIABLES = GLOBAL_VARIABLES


# --------------------------------------------------------------------------------------------
# Tensor and Operation


class Tensor:
    """A symbolic output of an Operation: Tensor("Add:0", shape=(), dtype=int32)."""

    __slots__ = ("_op", "_value_index", "_out", "_dtype", "_shape_val", "__weakref__")

    # numpy binary operators defer to Tensor's reflected ones (np.float32(2) * t builds an op).
    __array_priority__ = 100

    def __init__(self, op, value_index, out):
        self._op = op
        self._value_index = value_index
        self._out = out
        self._dtype = dtypes._BY_ENUM[out.dtype]
        self._shape_val = None

    @property
    def op(self):
        return self._op

    @property
    def graph(self):
        return self._op._graph

    @property
    def name(self):
        return "%s:%d" % (self._op.name, self._value_index)

    @property
    def value_index(self):
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._op.device

    @property
    def shape(self):
        if self._shape_val is None:
            return tensor_shape.TensorShape(self._out.shape)
        return self._shape_val

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        shape = tensor_shape.as_shape(shape)
        cur = self.shape
        if not cur.is_compatible_with(shape):
            raise ValueError("Tensor's shape %s is not compatible with supplied shape %s" % (cur, shape))
        merged = cur.merge_with(shape)
        # The graph's node learns it too, so ops built afterwards infer from it (TensorFlow's rule).
        self._op._node.refine_output_shape(self._value_index, merged.as_proto())
        self._shape_val = merged

    def consumers(self):
        g = self._op._graph
        return [g._wrap(n) for n in self._op._node.consumers(self._value_index)]

    def eval(self, feed_dict=None, session=None):
        session = _session_or_default(
            session, "Cannot evaluate tensor using `eval()`: No default session is registered. "
            "Use `with sess.as_default()` or pass an explicit session to `eval(session=sess)`")
        return session.run(self, feed_dict=feed_dict)

    def __str__(self):
        return 'Tensor("%s", shape=%s, dtype=%s)' % (self.name, self.shape, self._dtype.name)

    def __repr__(self):
        return "<tf.Tensor '%s' shape=%s dtype=%s>" % (self.name, self.shape, self._dtype.name)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __bool__(self):
        raise TypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
                        "instead of `if t:` to test if a tensor is defined, and use TensorFlow ops such "
                        "as tf.cond to execute subgraphs conditioned on the value of a tensor.")

    def __iter__(self):
        shape = self.shape
        if shape.ndims is None or shape.ndims == 0 or shape[0] is None:
            raise TypeError("Tensor objects are only iterable when the first dimension is known "
                            "(this tensor's shape is %s)." % shape)
        from dflow.ops import array_ops
        return iter(array_ops.unstack(self, num=shape[0]))

    def __len__(self):
        raise TypeError("len is not well defined for symbolic Tensors. (%s) Please call `x.shape` "
                        "rather than `len(x)` for shape information." % self.name)

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError("Cannot convert a symbolic Tensor (%s) to a numpy array. Run it in a "
                                  "Session to get its value." % self.name)

    def _as_node_def_input(self):
        return self._op.name if self._value_index == 0 else self.name

    # Operators (the implementations are in dflow.ops.math_ops).


def _session_or_default(session, message):
    """`session`, else the default session (Tensor.eval, Operation.run); ValueError(message) when
    there is none."""
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError(message)
    return session


class Operation:
    """A node of the graph."""

    __slots__ = ("_graph", "_node", "_outputs", "__weakref__")

    def __init__(self, graph, node):
        self._graph = graph
        self._node = node
        self._outputs = None

    @property
    def graph(self):
        return self._graph

    @property
    def name(self):
        return self._node.name

    @property
    def type(self):
        return self._node.type

    @property
    def device(self):
        return self._node.device

    @property
    def outputs(self):
        outs = self._outputs
        if outs is None:
            node = self._node
            outs = [Tensor(self, i, node.output(i)) for i in range(node.num_outputs)]
            self._outputs = outs
        return list(outs)

    def _output(self, i):
        outs = self._outputs
        if outs is None:
            node = self._node
            outs = [Tensor(self, j, node.output(j)) for j in range(node.num_outputs)]
            self._outputs = outs
        return outs[i]

    @property
    def inputs(self):
        g = self._graph
        return [None if o is None else g._tensor_of(o) for o in self._node.inputs()]

    @property
    def control_inputs(self):
        return [self._graph._wrap(n) for n in self._node.control_inputs()]

    @property
    def _control_outputs(self):
        return [self._graph._wrap(n) for n in self._node.control_outputs()]

    def _add_control_input(self, op):
        self._node.add_control_input(op._node)

    def _add_control_inputs(self, ops):
        for op in ops:
            self._node.add_control_input(op._node)

    @property
    def node_def(self):
        from dflow.framework import graph_pb
        return graph_pb.NodeDef.FromString(self._node.node_def())

    def get_attr(self, name):
        v = self._node.attr(name)
        return _attr_to_python(v, name, self)

    @property
    def op_def(self):
        return _OP_INFO[self.type].op_def

    def values(self):
        return tuple(self.outputs)

    def run(self, feed_dict=None, session=None):
        session = _session_or_default(
            session, "Cannot execute operation using `run()`: No default session is registered. "
            "Use `with sess.as_default():` or pass an explicit session to `run(session=sess)`")
        session.run(self, feed_dict=feed_dict)

    def __repr__(self):
        return "<tf.Operation '%s' type=%s>" % (self.name, self.type)

    def __str__(self):
        return 'name: "%s"\nop: "%s"' % (self.name, self.type)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


def _attr_to_python(v, name, op):
    info = _OP_INFO.get(op.type)
    kind = info.attr_types.get(name) if info else None
    if kind == "type":
        return dtypes._BY_ENUM[v]
    if kind == "list(type)":
        return [dtypes._BY_ENUM[x] for x in v]
    if kind == "shape":
        return tensor_shape.TensorShape(v)
    if kind == "list(shape)":
        return [tensor_shape.TensorShape(x) for x in v]
    return v


# --------------------------------------------------------------------------------------------
# Graph

_graphs_by_id = weakref.WeakValueDictionary()


class Graph:
    """A dataflow graph; ops are added to the default graph unless another is made default."""

    def __init__(self):
        self._h = _dflow.Graph()
        self._scope = self._h.root
        self._ops = {}  # node id -> Operation
        self._collections = {}
        self._finalized = False
        self._seed = None
        self._name_stack_names = []  # the strings name_scope yielded, innermost last
        self._control_flow_context = None
        self._building_function = False
        self._attr_scope_map = {}
        self._lock = threading.RLock()
        self._variable_store = None
        self._version = 0
        _graphs_by_id[self._h.id] = self

    # ---- wrapping C++ nodes ----
    def _wrap(self, node):
        op = self._ops.get(node.id)
        if op is None:
            op = Operation(self, node)
            self._ops[node.id] = op
        return op

    def _tensor_of(self, out):
        return self._wrap(out.node)._output(out.index)

    # ---- the graph's contents ----
    def get_operations(self):
        h = self._h
        ops = []
        for i in range(h.num_node_ids):
            n = h.node(i)
            if n is not None and not n.name.startswith("_"):
                ops.append(self._wrap(n))
        return ops

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError("Operation names are strings (or similar), not %s." % type(name).__name__)
        n = self._h.find_node(name)
        if n is None:
            raise KeyError("The name %s refers to an Operation not in the graph." % repr(name))
        return self._wrap(n)

    def get_tensor_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError("Tensor names are strings (or similar), not %s." % type(name).__name__)
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        if hasattr(obj, "_as_graph_element") and not isinstance(obj, (Tensor, Operation)):
            obj = obj._as_graph_element()
        if isinstance(obj, str):
            if ":" in obj:
                if not allow_tensor:
                    raise ValueError("Name %s appears to refer to a Tensor, not a Operation." % repr(obj))
                op_name, idx = obj.rsplit(":", 1)
                try:
                    idx = int(idx)
                except ValueError:
                    raise ValueError("The name %s looks a like a Tensor name, but is not a valid one. Tensor "
                                     "names must be of the form \"<op_name>:<output_index>\"." % repr(obj))
                n = self._h.find_node(op_name)
                if n is None:
                    raise KeyError("The name %s refers to a Tensor which does not exist. The operation, %s, "
                                   "does not exist in the graph." % (repr(obj), repr(op_name)))
                op = self._wrap(n)
                if idx < 0 or idx >= n.num_outputs:
                    raise KeyError("The name %s refers to a Tensor which does not exist. The operation, %s, "
                                   "exists but only has %d outputs." % (repr(obj), repr(op_name), n.num_outputs))
                return op._output(idx)
            if not allow_operation:
                raise ValueError("The name %s refers to an Operation, not a Tensor. Tensor names must be of "
                                 "the form \"<op_name>:<output_index>\"." % repr(obj))
            n = self._h.find_node(obj)
            if n is None:
                raise KeyError("The name %s refers to an Operation not in the graph." % repr(obj))
            return self._wrap(n)
        if isinstance(obj, Tensor):
            if not allow_tensor:
                raise TypeError("Can not convert a Tensor into a Operation.")
            if obj.graph is not self:
                raise ValueError("Tensor %s is not an element of this graph." % obj)
            return obj
        if isinstance(obj, Operation):
            if not allow_operation:
                raise TypeError("Can not convert a Operation into a Tensor.")
            if obj.graph is not self:
                raise ValueError("Operation %s is not an element of this graph." % obj)
            return obj
        raise TypeError("Can not convert a %s into a %s." % (
            type(obj).__name__, "Tensor or Operation" if allow_tensor and allow_operation
            else "Tensor" if allow_tensor else "Operation"))

    def as_graph_def(self, from_version=None, add_shapes=False):
        from dflow.framework import graph_pb
        return graph_pb.GraphDef.FromString(self._h.graph_def(0))

    def _as_graph_def_bytes(self):
        return self._h.graph_def(0)

    @property
    def version(self):
        return self._h.num_node_ids

    @property
    def graph_def_versions(self):
        return None

    @property
    def seed(self):
        return self._seed

    @seed.setter
    def seed(self, seed):
        self._seed = seed
        self._h.seed = seed

    @property
    def finalized(self):
        return self._finalized

    def finalize(self):
        self._finalized = True

    def _unsafe_unfinalize(self):
        self._finalized = False

    def _check_not_finalized(self):
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    # ---- default graph ----
    def as_default(self):
        return _default_graph_stack.get_controller(self)

    # ---- collections ----
    def add_to_collection(self, name, value):
        self._check_not_finalized()
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        if isinstance(names, str):
            names = [names]
        for n in set(names):
            self.add_to_collection(n, value)

    def get_collection_ref(self, key):
        return self._collections.setdefault(key, [])

    def get_collection(self, name, scope=None):
        items = self._collections.get(name)
        if items is None:
            return []
        if scope is None:
            return list(items)
        import re
        out = []
        regex = re.compile(scope)
        for item in items:
            try:
                if regex.match(item.name):
                    out.append(item)
            except AttributeError:
                pass
        return out

    def get_all_collection_keys(self):
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name):
        self._collections.pop(name, None)

    # ---- name scopes ----
    @contextlib.contextmanager
    def name_scope(self, name):
        old = self._scope
        if name is None or name == "":
            new = old.with_prefix("")
        elif name.endswith("/"):
            new = old.with_prefix(name)
        else:
            new = old.sub_scope(name)
        self._scope = new
        try:
            yield new.name_prefix
        finally:
            self._scope = old

    def get_name_scope(self):
        return self._scope.name_prefix.rstrip("/")

    def unique_name(self, name, mark_as_used=True):
        if not mark_as_used:
            base = self._scope.name_prefix + name
            if not self._h.is_name_used(base):
                return base
            i = 1
            while self._h.is_name_used("%s_%d" % (base, i)):
                i += 1
            return "%s_%d" % (base, i)
        return self._scope.unique_name(name)

    # ---- devices ----
    @contextlib.contextmanager
    def device(self, device_name_or_function):
        old = self._scope
        d = device_name_or_function
        if d is None:
            new = old.with_device("")
        elif hasattr(d, "_apply_to_scope"):  # a C++ device function (replica_device_setter)
            new = d._apply_to_scope(old)
        elif callable(d):
            new = old.with_device_function(_DeviceFunction(self, d))
        else:
            d = d.to_string() if hasattr(d, "to_string") else d
            new = old.with_device(d)
        self._scope = new
        try:
            yield
        finally:
            self._scope = old

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        if op is None:
            yield
            return
        if isinstance(op, Tensor):
            op = op.op
        elif not isinstance(op, Operation):
            op = getattr(op, "op", op)
        dev = op.device
        with self.device(dev if dev else None):
            yield

    # ---- control dependencies ----
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        old = self._scope
        if control_inputs is None:
            new = old.without_control_dependencies()
        else:
            nodes = []
            for c in control_inputs:
                if hasattr(c, "_as_graph_element") and not isinstance(c, (Tensor, Operation)):
                    c = c._as_graph_element()
                if isinstance(c, Tensor):
                    c = c.op
                elif not isinstance(c, Operation):
                    raise TypeError("Control input must be Operation or Tensor: %s" % (c,))
                if c.graph is not self:
                    raise ValueError("Control input %s is not an element of this graph." % c.name)
                nodes.append(c._node)
            new = old.with_control_dependencies(nodes)
        self._scope = new
        try:
            yield
        finally:
            self._scope = old

    @contextlib.contextmanager
    def _scope_override(self, scope):
        """Builds ops in a C++ Scope (a branch of tf.cond, the body of a loop)."""
        old = self._scope
        self._scope = scope
        try:
            yield
        finally:
            self._scope = old

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        yield

    def _add_op_from_node(self, node):
        return self._wrap(node)

    def is_fetchable(self, tensor_or_op):
        return True

    def is_feedable(self, tensor):
        return True

    def prevent_feeding(self, tensor):
        pass

    def prevent_fetching(self, op):
        pass

    def _get_control_flow_context(self):
        return self._control_flow_context

    def _set_control_flow_context(self, ctx):
        self._control_flow_context = ctx

    @property
    def building_function(self):
        return self._building_function

    def __repr__(self):
        return "<dflow.Graph object at 0x%x>" % id(self)


class _OpView:
    """What a device function (and a replica_device_setter's ps_strategy) sees of the node being
    built: TensorFlow passes the op (or its NodeDef)."""

    __slots__ = ("type", "name", "device", "_attrs", "graph")

    def __init__(self, graph, op_type, name, device, attrs):
        self.graph = graph
        self.type = op_type
        self.name = name
        self.device = device
        self._attrs = attrs

    @property
    def node_def(self):
        return self

    @property
    def op(self):
        return self.type

    def get_attr(self, name):
        return self._attrs[name]

    def _set_device(self, d):
        self.device = d


class _DeviceFunction:
    """Calls a TensorFlow-style device function with an op-like view of the node being built."""

    def __init__(self, graph, fn):
        self._graph = graph
        self._fn = fn

    def __call__(self, op_type, name, device, attrs):
        view = _OpView(self._graph, op_type, name, device, attrs)
        d = self._fn(view)
        if d is None:
            return device
        if hasattr(d, "to_string"):
            d = d.to_string()
        return d


def _graph_of_id(gid):
    return _graphs_by_id.get(gid)


# --------------------------------------------------------------------------------------------
# Default graph and session stacks


class _DefaultStack(threading.local):
    def __init__(self):
        super().__init__()
        self.stack = []

    def get_default(self):
        return self.stack[-1] if self.stack else None

    @contextlib.contextmanager
    def get_controller(self, default):
        self.stack.append(default)
        try:
            yield default
        finally:
            if self.stack and self.stack[-1] is default:
                self.stack.pop()
            elif default in self.stack:
                self.stack.remove(default)


class _DefaultGraphStack(_DefaultStack):
    _global_default = None

    def get_default(self):
        if self.stack:
            return self.stack[-1]
        g = _DefaultGraphStack._global_default
        if g is None:
            g = Graph()
            _DefaultGraphStack._global_default = g
        return g

    def reset(self):
        _DefaultGraphStack._global_default = None


_default_graph_stack = _DefaultGraphStack()
_default_session_stack = _DefaultStack()


def get_default_graph():
    s = _default_graph_stack.stack
    if s:
        return s[-1]
    return _default_graph_stack.get_default()


def reset_default_graph():
    if _default_graph_stack.stack:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. If you need a "
                             "cleared graph, exit the nesting and create a new graph.")
    _default_graph_stack.reset()


def get_default_session():
    return _default_session_stack.get_default()


def default_session(session):
    return _default_session_stack.get_controller(session)


@contextlib.contextmanager
def name_scope(name, default_name=None, values=None):
    """tf.name_scope / tf.compat.v1.name_scope: ops built inside are named "<scope>/<op>"."""
    g = _graph_of_values(values) if values else get_default_graph()
    n = name if name is not None else default_name
    if name is None and default_name is None:
        n = None
    with g.as_default(), g.name_scope(n) as scope:
        yield scope


def _graph_of_values(values):
    for v in values:
        if isinstance(v, (Tensor, Operation)):
            return v.graph
        if hasattr(v, "graph") and isinstance(getattr(v, "graph"), Graph):
            return v.graph
    return get_default_graph()


def get_name_scope():
    return get_default_graph().get_name_scope()


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    return get_default_graph().device(device_name_or_function)


def colocate_with(op, ignore_existing=False):
    return get_default_graph().colocate_with(op, ignore_existing)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)


def set_random_seed(seed):
    get_default_graph().seed = seed


def get_seed(op_seed):
    g = get_default_graph()
    if g.seed is not None:
        return g.seed, op_seed if op_seed is not None else g._h.num_node_ids
    if op_seed is not None:
        return 87654321, op_seed
    return None, None


# --------------------------------------------------------------------------------------------
# Converting values and building ops


class _OpInfo:
    __slots__ = ("op_def", "name", "inputs", "outputs", "attrs", "attr_types", "attr_defaults",
                 "input_names", "type_attrs", "single_output", "no_outputs", "has_list_inputs",
                 "allowed")

    def __init__(self, d):
        self.op_def = d
        self.name = d["name"]
        self.inputs = d["inputs"]
        self.outputs = d["outputs"]
        self.attrs = d["attrs"]
        self.attr_types = {a["name"]: a["type"] for a in d["attrs"]}
        self.attr_defaults = {a["name"]: a["default"] for a in d["attrs"] if a["has_default"]}
        self.allowed = {a["name"]: a["allowed_types"] for a in d["attrs"] if a["allowed_types"]}
        self.input_names = [a["name"] for a in d["inputs"]]
        self.type_attrs = {a["name"] for a in d["attrs"] if a["type"] == "type"}
        self.has_list_inputs = any(a["number_attr"] or a["type_list_attr"] for a in d["inputs"])
        self.single_output = (len(d["outputs"]) == 1 and not d["outputs"][0]["number_attr"]
                              and not d["outputs"][0]["type_list_attr"])
        self.no_outputs = len(d["outputs"]) == 0


_OP_INFO = {d["name"]: _OpInfo(d) for d in _dflow.op_defs()}


def op_info(op_type):
    info = _OP_INFO.get(op_type)
    if info is None:
        raise errors.NotFoundError(None, None, "Op type not registered '%s'" % op_type)
    return info


def _python_dtype(value):
    """The dtype TensorFlow gives a Python or numpy value, or None when it cannot tell."""
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        try:
            return dtypes.as_dtype(value.dtype)
        except TypeError:
            return None
    if isinstance(value, bool):
        return dtypes.bool
    if isinstance(value, int):
        return dtypes.int32 if -2**31 <= value < 2**31 else dtypes.int64
    if isinstance(value, float):
        return dtypes.float32
    if isinstance(value, (str, bytes)):
        return dtypes.string
    if isinstance(value, (list, tuple)):
        if not value:
            return dtypes.float32
        for v in value:
            if isinstance(v, Tensor):
                return v.dtype.base_dtype
        try:
            arr = np.asarray(value)
        except ValueError:
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None
        if arr.dtype.kind == "f":
            return dtypes.float32
        if arr.dtype.kind in "iu":
            if arr.size and (arr.min() < -2**31 or arr.max() >= 2**31):
                return dtypes.int64
            return dtypes.int32
        if arr.dtype.kind == "b":
            return dtypes.bool
        if arr.dtype.kind in "SUO":
            return dtypes.string
    return None


def _to_numpy(value, dtype, arg_name=None, op_type=None):
    """A Python value as a numpy array of `dtype`, raising TypeError as TensorFlow does."""
    np_dtype = dtype.as_numpy_dtype
    if isinstance(value, (np.ndarray, np.generic)):
        have = value.dtype
        if have == np_dtype or (dtype == dtypes.string and have.kind in "SUO"):
            return value
        # numpy numbers take the dtype asked for as numpy's astype gives it (TensorFlow's
        # make_tensor_proto: 1.5 becomes int 1, 300 uint8 44).
        if have.kind in "biuf" and np.dtype(np_dtype).kind in "biuf":
            return np.asarray(value).astype(np_dtype)
        raise TypeError("Expected %s, got %r of type '%s' instead." % (dtype.name, value, type(value).__name__))
    if dtype == dtypes.string:
        if isinstance(value, (str, bytes)):
            return value
        arr = np.asarray(value, dtype=object)
        for v in arr.flat:
            if not isinstance(v, (str, bytes)):
                raise TypeError("Expected string, got %r of type '%s' instead." % (v, type(v).__name__))
        return arr
    try:
        arr = np.asarray(value)
    except ValueError as e:
        raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from e
    kind = arr.dtype.kind
    want = np.dtype(np_dtype).kind
    if kind == "O" or kind in "SU":
        raise TypeError("Expected %s, got %r of type '%s' instead." % (dtype.name, value, type(value).__name__))
    if kind == "f" and want in "iub":
        raise TypeError("Expected %s, got %r of type '%s' instead." % (dtype.name, value, type(value).__name__))
    if kind == "b" and want != "b":
        raise TypeError("Expected %s, got %r of type '%s' instead." % (dtype.name, value, type(value).__name__))
    if kind in "iu" and want == "b":
        raise TypeError("Expected bool, got %r of type '%s' instead." % (value, type(value).__name__))
    if kind in "iu" and want in "iu" and arr.size:
        info = np.iinfo(np_dtype)
        if arr.min() < info.min or arr.max() > info.max:
            raise TypeError("Value %r cannot be converted to %s without overflow" % (value, dtype.name))
    return np.asarray(arr, dtype=np_dtype)


_tensor_conversion_functions = []


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    _tensor_conversion_functions.append((priority, base_type, conversion_func))
    _tensor_conversion_functions.sort(key=lambda x: x[0])


def _convertible(value):
    for _, base, fn in _tensor_conversion_functions:
        if isinstance(value, base):
            return fn
    return None


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, dtype_hint=None):
    """A Tensor for `value`: the tensor itself, a variable's value, or a Const of a Python value."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and not dtype.is_compatible_with(value.dtype):
            raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype %s: %r" % (
                dtype.name, value.dtype.name, value))
        return value
    fn = _convertible(value)
    if fn is not None:
        t = fn(value, dtype=dtype, name=name, as_ref=False)
        if dtype is not None and not dtype.is_compatible_with(t.dtype):
            raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype %s: %r" % (
                dtype.name, t.dtype.name, t))
        return t
    if isinstance(value, Operation):
        raise TypeError("Can't convert Operation '%s' to Tensor (target dtype=%s, name=%s, as_ref=False)"
                        % (value.name, dtype, name))
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) or _convertible(v) for v in value):
        from dflow.ops import array_ops
        return array_ops._autopacking(value, dtype, name or "packed")
    if dtype is None:
        dtype = preferred_dtype or dtype_hint
        if dtype is not None:
            dtype = dtypes.as_dtype(dtype)
            try:
                return constant_value_op(_to_numpy(value, dtype), dtype, name or "Const")
            except (TypeError, ValueError):
                pass
        dtype = _python_dtype(value)
        if dtype is None:
            raise TypeError("Failed to convert elements of %r to Tensor." % (value,))
    return constant_value_op(_to_numpy(value, dtype), dtype, name or "Const")


def convert_n_to_tensor(values, dtype=None, name=None):
    return [convert_to_tensor(v, dtype=dtype) for v in values]


def internal_convert_to_tensor(value, dtype=None, name=None, as_ref=False, preferred_dtype=None):
    if as_ref and hasattr(value, "_ref") and not isinstance(value, Tensor):
        return value._ref()
    return convert_to_tensor(value, dtype=dtype, name=name, preferred_dtype=preferred_dtype)


def constant_value_op(arr, dtype, name):
    g = get_default_graph()
    attrs = {"value": arr, "dtype": dtype._enum}
    return _build(g, "Const", [], None, attrs, name)[0]


def _graph_for(inputs):
    """The default graph; inputs must belong to it (TensorFlow's rule)."""
    g = get_default_graph()
    return g


def _build(g, op_type, flat, sizes, attrs, name):
    """Builds one node; returns the outputs (a list) or the Operation when it has none."""
    if g._finalized:
        raise RuntimeError("Graph is finalized and cannot be modified.")
    scope = g._scope
    if name and name[-1] == "/":
        # A name scope's name (TensorFlow's `with name_scope(...) as scope: op(..., name=scope)`):
        # the op takes exactly that name.
        scope = scope.with_prefix("").with_op_name(name[:-1])
        name = ""
    try:
        node = _dflow.build_op(scope, op_type, flat, sizes, attrs, name or "")
    except errors.InvalidArgumentError as e:
        raise ValueError(e.message) from None
    op = Operation(g, node)
    g._ops[node.id] = op
    n = node.num_outputs
    if n == 0:
        return op
    outs = [Tensor(op, i, node.output(i)) for i in range(n)]
    op._outputs = outs
    return outs


def apply_op(op_type, name, inputs, attrs=None):
    """Builds `op_type` with `inputs` (one per OpDef input: a tensor, a value, or a list for list
    inputs) and `attrs` (a dict; type attrs are inferred from the inputs as TensorFlow does).
    Returns the Tensor for a single output, a list of Tensors, or the Operation for none."""
    info = _OP_INFO.get(op_type)
    if info is None:
        raise errors.NotFoundError(None, None, "Op type not registered '%s'" % op_type)
    g = get_default_graph()
    attrs = dict(attrs) if attrs else {}
    types = {}  # type attr -> DType enum
    for k in info.type_attrs:
        v = attrs.get(k)
        if v is not None:
            d = dtypes.as_dtype(v)
            attrs[k] = d._enum
            types[k] = d.base_dtype
    arg_defs = info.inputs
    if len(inputs) != len(arg_defs):
        raise TypeError("%s takes %d inputs (%s), got %d" % (op_type, len(arg_defs),
                                                             ", ".join(info.input_names), len(inputs)))
    # First pass: tensors fix the type attrs.
    converted = [None] * len(inputs)
    for i, (a, v) in enumerate(zip(arg_defs, inputs)):
        is_list = bool(a["number_attr"] or a["type_list_attr"])
        if is_list:
            if isinstance(v, Tensor) or not isinstance(v, (list, tuple)):
                if isinstance(v, Tensor) and a["number_attr"]:
                    raise TypeError("Expected list for '%s' argument to '%s' Op, not %s." % (a["name"], op_type, v))
                v = [v]
            items = []
            for x in v:
                if not isinstance(x, Tensor):
                    fn = _convertible(x)
                    if fn is not None:
                        x = fn(x, dtype=None, name=None, as_ref=a["is_ref"])
                    elif _holds_tensor(x):
                        x = convert_to_tensor(x)  # a list holding tensors is packed, as in TensorFlow
                items.append(x)
            converted[i] = items
            ta = a["type_attr"]
            if ta and ta not in types:
                for x in items:
                    if isinstance(x, Tensor):
                        types[ta] = x.dtype.base_dtype
                        break
            if ta and any(isinstance(x, Tensor) and x.dtype.base_dtype != types[ta] for x in items):
                raise TypeError("Tensors in list passed to '%s' of '%s' Op have types [%s] that don't all match."
                                % (a["name"], op_type, ", ".join(x.dtype.base_dtype.name if isinstance(x, Tensor)
                                                                  else "<NOT CONVERTIBLE TO TENSOR>" for x in items)))
        else:
            if not isinstance(v, Tensor):
                fn = _convertible(v)
                if fn is not None:
                    v = fn(v, dtype=None, name=None, as_ref=a["is_ref"])
                elif _holds_tensor(v):
                    v = convert_to_tensor(v)  # a list holding tensors is packed, as in TensorFlow
            converted[i] = v
            ta = a["type_attr"]
            if isinstance(v, Tensor):
                if ta:
                    have = v.dtype.base_dtype
                    want = types.get(ta)
                    if want is None:
                        types[ta] = have
                    elif want != have:
                        first = next(arg_defs[j]["name"] for j in range(len(arg_defs))
                                     if arg_defs[j]["type_attr"] == ta)
                        if first == a["name"]:
                            raise TypeError("Input '%s' of '%s' Op has type %s that does not match expected "
                                            "type of %s." % (a["name"], op_type, have.name, want.name))
                        raise TypeError("Input '%s' of '%s' Op has type %s that does not match type %s of "
                                        "argument '%s'." % (a["name"], op_type, have.name, want.name, first))
                elif a["type"] and v.dtype.base_dtype._enum != a["type"]:
                    raise TypeError("Input '%s' of '%s' Op has type %s that does not match expected type of %s."
                                    % (a["name"], op_type, v.dtype.base_dtype.name, dtypes._BY_ENUM[a["type"]].name))
    # Second pass: values take the dtype of their arg.
    flat = []
    sizes = [] if info.has_list_inputs else None
    for i, (a, v) in enumerate(zip(arg_defs, converted)):
        ta = a["type_attr"]
        want = None
        if a["type"]:
            want = dtypes._BY_ENUM[a["type"]]
        elif ta:
            want = types.get(ta)
            if want is None and ta in info.attr_defaults and info.attr_defaults[ta] is not None:
                want = None  # a default type only applies when no value decides it
        if a["number_attr"] or a["type_list_attr"]:
            if sizes is not None:
                sizes.append(len(v))
            for x in v:
                flat.append(_input_of(x, want, a, op_type, types, info))
        else:
            if sizes is not None:
                sizes.append(1)
            flat.append(_input_of(v, want, a, op_type, types, info))
    for k in info.type_attrs:
        if k not in attrs and k in types:
            attrs[k] = types[k]._enum
        allowed = info.allowed.get(k)
        if allowed and attrs.get(k) is not None and attrs[k] not in allowed:
            raise TypeError(_not_allowed(info, k, attrs[k], allowed))
    for k, v in list(attrs.items()):
        if isinstance(v, dtypes.DType):
            attrs[k] = v._enum
        elif isinstance(v, tensor_shape.TensorShape):
            attrs[k] = v.as_proto()
        elif isinstance(v, (list, tuple)) and v and isinstance(v[0], dtypes.DType):
            attrs[k] = [x._enum for x in v]
    outs = _build(g, op_type, flat, sizes, attrs, name or op_type)
    if isinstance(outs, Operation):
        return outs
    if info.single_output:
        return outs[0]
    return outs


def _not_allowed(info, attr, enum, allowed):
    """TensorFlow's message for a dtype the OpDef does not allow."""
    names = ", ".join(dtypes._BY_ENUM[e].name for e in allowed if e in dtypes._BY_ENUM)
    param = next((a["name"] for a in info.inputs if a["type_attr"] == attr), attr)
    have = dtypes._BY_ENUM[enum].name if enum in dtypes._BY_ENUM else str(enum)
    return "Value passed to parameter '%s' has DataType %s not in list of allowed values: %s" % (param, have, names)


def _holds_tensor(v):
    return isinstance(v, (list, tuple)) and any(isinstance(x, Tensor) or _convertible(x) is not None
                                                or _holds_tensor(x) for x in v)


def _input_of(v, want, argdef, op_type, types, info):
    if isinstance(v, Tensor):
        return v._out
    ta = argdef["type_attr"]
    if want is None:
        d = _python_dtype(v)
        if d is None:
            raise TypeError("Failed to convert object of type %s to Tensor. Contents: %s. Consider casting "
                            "elements to a supported type." % (type(v), v))
        allowed = info.allowed.get(ta) if ta else None
        default = info.attr_defaults.get(ta) if ta else None
        if allowed and d._enum not in allowed and default is not None:
            # TensorFlow converts again with the type attr's default when it has one.
            try:
                _to_numpy(v, dtypes._BY_ENUM[default])
                d = dtypes._BY_ENUM[default]
            except (TypeError, ValueError):
                pass
        if ta:
            types[ta] = d
        want = d
    try:
        return _to_numpy(v, want)
    except TypeError as e:
        raise TypeError("Expected %s passed to parameter '%s' of op '%s', got %r of type '%s' instead. "
                        "Error: %s" % (want.name, argdef["name"], op_type, v, type(v).__name__, e)) from None


def op_scope(values, name, default_name=None):
    return name_scope(name, default_name, values)
