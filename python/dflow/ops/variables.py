"""tf.Variable: TensorFlow 1.x's reference variables (VariableV2), and the variable collections.

A variable is built by the C++ client API's variable builder (`_dflow.make_variable`): the
VariableV2 "<name>", its "<name>/Assign" initializer and the "<name>/read" snapshot, registered
in the C++ Scope's collections too (so that the C++ initializers, savers and monitored sessions
see the variables a Python program made). Names, collections and arguments are TensorFlow's.
"""
from dflow import _dflow
from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.framework.ops import GraphKeys
from dflow.ops import array_ops
from dflow.ops import gen_ops
from dflow.ops import math_ops  # noqa: F401  (installs Tensor's operators, which variables reuse)


class VariableSynchronization:
    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation:
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3


def trainable_for_synchronization(synchronization, trainable):
    """`trainable` as get_variable and Layer.add_weight resolve it: False for ON_READ variables (which
    cannot be trainable: ValueError), True when None."""
    if synchronization == VariableSynchronization.ON_READ:
        if trainable:
            raise ValueError("Synchronization value can be set to VariableSynchronization.ON_READ only for "
                             "non-trainable variables. You have specified trainable=True and "
                             "synchronization=VariableSynchronization.ON_READ.")
        return False
    if trainable is None:
        return True
    return trainable


def _init_scope(g):
    """TensorFlow's init_scope for graphs: no control dependencies (the name scope stays)."""
    return g.control_dependencies(None)


class Variable:
    """A reference variable (tf.compat.v1.Variable): state that persists across session runs.

        v = tf.Variable(tf.zeros([2, 3]), name="v")   # v.name == "v:0", v.dtype == float32_ref
        sess.run(v.initializer); sess.run(v.assign_add(tf.ones([2, 3])))
    """

    # numpy's binary operators defer to the variable's reflected ones.
    __array_priority__ = 100

    def __init__(self, initial_value=None, trainable=None, collections=None, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None, expected_shape=None,
                 import_scope=None, constraint=None, use_resource=None,
                 synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE,
                 shape=None):
        if variable_def is not None:
            raise NotImplementedError("Variable(variable_def=...) (restoring from a VariableDef proto) is not "
                                      "supported by dflow")
        if use_resource:
            raise NotImplementedError("Resource variables (use_resource=True) are not supported by dflow's "
                                      "Python front end; reference variables are")
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        ops.get_default_graph()._check_not_finalized()
        if synchronization == VariableSynchronization.ON_READ:
            if trainable:
                raise ValueError("Synchronization value can be set to VariableSynchronization.ON_READ only "
                                 "for non-trainable variables. You have specified trainable=True and "
                                 "synchronization=VariableSynchronization.ON_READ.")
            trainable = False
        elif trainable is None:
            trainable = True
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        if not isinstance(collections, (list, tuple, set)):
            raise ValueError("collections argument to Variable constructor must be a list, tuple, or set. Got "
                             "%s of type %s" % (collections, type(collections)))
        if constraint is not None and not callable(constraint):
            raise ValueError("The `constraint` argument must be a callable.")
        collections = list(collections)
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections = collections + [GraphKeys.TRAINABLE_VARIABLES]
        self._trainable = trainable
        self._constraint = constraint
        self._synchronization = synchronization
        self._aggregation = aggregation
        self._caching_device = caching_device
        self._save_slice_info = None
        if dtype is not None:
            dtype = dtypes.as_dtype(dtype)
        init_from_fn = callable(initial_value)
        g = ops.get_default_graph()
        with _init_scope(g):
            with ops.name_scope(name, "Variable", [] if init_from_fn else [initial_value]) as scope_name:
                if init_from_fn:
                    with ops.name_scope("Initializer"), ops.device(None):
                        value = initial_value()
                        if isinstance(value, Variable):
                            value = value.value()
                        self._initial_value = ops.convert_to_tensor(value, name="initial_value", dtype=dtype)
                else:
                    if isinstance(initial_value, Variable):
                        initial_value = initial_value.value()
                    self._initial_value = ops.convert_to_tensor(initial_value, name="initial_value", dtype=dtype)
                init = self._initial_value
                if init.graph is not g:
                    raise ValueError("Initial value %s is not an element of this graph." % init)
                if shape is not None:
                    shape = tensor_shape.as_shape(shape)
                    if validate_shape and not shape.is_compatible_with(init.shape):
                        raise ValueError("The initial value's shape (%s) is not compatible with the explicitly "
                                         "supplied `shape` argument (%s)." % (init.shape, shape))
                else:
                    shape = init.shape if validate_shape else tensor_shape.unknown_shape()
                if validate_shape and not init.shape.is_fully_defined():
                    raise ValueError("initial_value must have a shape specified: %s" % init)
                var_name = scope_name[:-1]
                in_global = GraphKeys.GLOBAL_VARIABLES in collections
                in_local = GraphKeys.LOCAL_VARIABLES in collections
                guarded = _guard_against_uninitialized_dependencies(g, var_name, init)
                ref, initializer, read = _dflow.make_variable(
                    g._scope, var_name, shape.as_list() if shape.ndims is not None else None,
                    init.dtype.base_dtype._enum, guarded._out, bool(trainable), in_global, in_local,
                    bool(validate_shape))
                self._variable = g._tensor_of(ref)
                self._initializer_op = g._wrap(initializer)
                self._snapshot = g._tensor_of(read)
        self._graph = g
        ops.add_to_collections(collections, self)

    @classmethod
    def _from_existing(cls, graph, ref, initializer_op, snapshot=None, trainable=False):
        """Wraps a variable the C++ API made (an optimizer's slot, a global step)."""
        v = cls.__new__(cls)
        v._variable = ref
        v._initializer_op = initializer_op
        v._snapshot = snapshot
        v._initial_value = initializer_op.inputs[1] if initializer_op is not None else None
        v._trainable = trainable
        v._constraint = None
        v._synchronization = VariableSynchronization.AUTO
        v._aggregation = VariableAggregation.NONE
        v._caching_device = None
        v._save_slice_info = None
        v._graph = graph
        return v

    # ---- identity ----
    @property
    def name(self):
        return self._variable.name

    @property
    def op(self):
        return self._variable.op

    @property
    def graph(self):
        return self._variable.graph

    @property
    def device(self):
        return self._variable.device

    @property
    def dtype(self):
        return self._variable.dtype

    @property
    def shape(self):
        return self._variable.shape

    def get_shape(self):
        return self._variable.shape

    @property
    def trainable(self):
        return self._trainable

    @property
    def constraint(self):
        return self._constraint

    @property
    def synchronization(self):
        return self._synchronization

    @property
    def aggregation(self):
        return self._aggregation

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    def _ref(self):
        return self._variable

    def _as_graph_element(self):
        return self._variable

    def value(self):
        if self._read_after_dependencies():
            # Read where the control dependencies put it: after them. TensorFlow's snapshot aliases
            # the variable's buffer, which the updates those dependencies run change in place, so a
            # value read under control_dependencies([update]) is the updated one there; dflow's
            # updates copy a buffer still read, so the read itself must come after them.
            return array_ops.identity(self._variable, name="read")
        if self._snapshot is None:
            # A variable made elsewhere without a snapshot (some optimizer slots): one is built on
            # first use, where the variable lives.
            g = self._variable.graph
            with g.as_default(), _init_scope(g), g.name_scope(self.op.name + "/"), \
                    g.colocate_with(self._variable.op):
                self._snapshot = array_ops.identity(self._variable, name="read")
        return self._snapshot

    def _dependencies(self):
        """None outside control dependencies; else whether they are a cond's or loop's pivot."""
        g = ops.get_default_graph()
        if g is not self._variable.graph:
            return None
        deps = g._scope.control_dependencies
        if not deps:
            return None
        for n in deps:
            if n.type == "Merge":
                return "control_flow"
            if n.type == "Identity":
                ins = n.inputs()
                if ins and ins[0] is not None and ins[0].node.type in ("Switch", "RefSwitch"):
                    return "control_flow"
        return "user"

    def _read_after_dependencies(self):
        # Inside a cond branch or a loop the snapshot enters as a captured value instead.
        return self._dependencies() == "user"

    def read_value(self):
        if self._dependencies() == "control_flow":
            # In a branch or a loop body: a read of the snapshot, which enters through the branch's
            # switch (gradients through the cond stay whole).
            return array_ops.identity(self.value(), name="read")
        return array_ops.identity(self._variable, name="read")

    def initialized_value(self):
        from dflow.ops import control_flow_ops
        g = self._variable.graph
        with _init_scope(g):
            # The branch reads the reference itself: only when the variable is initialized.
            return control_flow_ops.cond(is_variable_initialized(self),
                                         lambda: array_ops.identity(self._variable, name="read"),
                                         lambda: self.initial_value)

    def eval(self, session=None):
        return self._variable.eval(session=session)

    def load(self, value, session=None):
        if session is None:
            session = ops.get_default_session()
            if session is None:
                raise ValueError("Either session argument should be provided or default session should be "
                                 "established")
        session.run(self._initializer_op, {self._initializer_op.inputs[1]: value})

    # ---- updates ----
    def assign(self, value, use_locking=False, name=None, read_value=True):
        t = gen_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        t = gen_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        t = gen_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        return gen_ops.scatter_update(self._variable, sparse_delta.indices, sparse_delta.values,
                                      use_locking=use_locking, name=name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        return gen_ops.scatter_add(self._variable, sparse_delta.indices, sparse_delta.values,
                                   use_locking=use_locking, name=name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        return gen_ops.scatter_sub(self._variable, sparse_delta.indices, sparse_delta.values,
                                   use_locking=use_locking, name=name)

    def count_up_to(self, limit):
        return gen_ops.count_up_to(self._variable, limit=limit)

    def set_shape(self, shape):
        self._variable.set_shape(shape)
        if self._snapshot is not None:
            self._snapshot.set_shape(shape)

    # ---- Python protocol ----
    def __repr__(self):
        return "<tf.Variable '%s' shape=%s dtype=%s>" % (self.name, self.shape, self.dtype.name)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")

    def __bool__(self):
        return True  # a variable object is true (TensorFlow's reference variables)

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError("Cannot convert a symbolic Variable (%s) to a numpy array. Run it in a "
                                  "Session to get its value." % self.name)

    def to_proto(self, export_scope=None):
        raise NotImplementedError("Variable.to_proto is not supported by dflow")

    def _get_save_slice_info(self):
        return self._save_slice_info

    def _set_save_slice_info(self, info):
        self._save_slice_info = info

    class SaveSliceInfo:
        def __init__(self, full_name=None, full_shape=None, var_offset=None, var_shape=None,
                     save_slice_info_def=None, import_scope=None):
            self.full_name = full_name
            self.full_shape = full_shape
            self.var_offset = var_offset
            self.var_shape = var_shape


RefVariable = Variable
VariableV1 = Variable

# Ops whose inputs the guard below does not follow: state checks and control flow.
_GUARD_STOP = frozenset(["IsVariableInitialized", "VarIsInitializedOp", "ReadVariableOp", "Merge", "Switch",
                         "RefSwitch", "Enter", "RefEnter", "Exit", "NextIteration", "LoopCond"])


def _guard_against_uninitialized_dependencies(g, name, value):
    """TensorFlow's guard: an initial value that reads other variables reads their
    initialized_value() instead (their value once initialized, else their initial value), so that
    running every initializer at once (global_variables_initializer) works in any order. The ops
    between are copied ("<op>_<name>"); the variable's initial_value stays the original."""
    by_op = None
    cache = {}
    stack_depth = [0]

    def variable_of(op):
        nonlocal by_op
        if by_op is None:
            by_op = {}
            for v in (g.get_collection(GraphKeys.GLOBAL_VARIABLES) + g.get_collection(GraphKeys.LOCAL_VARIABLES)):
                if isinstance(v, Variable) and v._initial_value is not None:
                    by_op[v.op.name] = v
        return by_op.get(op.name)

    def from_tensor(t):
        op = from_op(t.op)
        return t if op is t.op else op._output(t.value_index)

    def from_op(op):
        key = op._node.id
        if key in cache:
            return cache[key]
        stack_depth[0] += 1
        try:
            if stack_depth[0] > 400 or op.type in _GUARD_STOP:
                result = op
            elif op.type in ("Variable", "VariableV2"):
                v = variable_of(op)
                result = op if v is None else v.initialized_value().op
            else:
                inputs = op.inputs
                new_inputs = [from_tensor(i) if i is not None else None for i in inputs]
                if any(a is not b for a, b in zip(inputs, new_inputs)) and all(i is not None for i in new_inputs):
                    result = _copy_op(g, op, new_inputs, name)
                else:
                    result = op
        finally:
            stack_depth[0] -= 1
        cache[key] = result
        return result

    return from_tensor(value)


def _copy_op(g, op, inputs, var_name):
    info = ops.op_info(op.type)
    attrs = {k: v for k, v in op._node.attrs().items() if not k.startswith("_")}
    sizes = None
    if info.has_list_inputs:
        sizes = []
        for a in info.inputs:
            if a["number_attr"]:
                sizes.append(int(attrs[a["number_attr"]]))
            elif a["type_list_attr"]:
                sizes.append(len(attrs[a["type_list_attr"]]))
            else:
                sizes.append(1)
    base = (op.name + "_" + var_name).replace(":", "_")
    new_name, i = base, 0
    while g._h.is_name_used(new_name):
        i += 1
        new_name = "%s_%d" % (base, i)
    scope = g._scope.with_prefix("").with_op_name(new_name)
    node = _dflow.build_op(scope, op.type, [t._out for t in inputs], sizes, attrs, "")
    return g._wrap(node)


def _install_operators():
    names = ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
             "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__and__", "__rand__",
             "__or__", "__ror__", "__xor__", "__rxor__", "__lt__", "__le__", "__gt__", "__ge__", "__neg__",
             "__abs__", "__invert__", "__matmul__", "__rmatmul__", "__getitem__", "__div__", "__rdiv__"]
    for n in names:
        fn = getattr(ops.Tensor, n, None)
        if fn is None:
            continue

        def make(fn):
            def op(self, *args):
                return fn(self.value(), *args)
            return op
        setattr(Variable, n, make(fn))


_install_operators()


def _to_tensor(v, dtype=None, name=None, as_ref=False):
    if as_ref:
        return v._ref()
    t = v.value()
    if dtype is not None and not dtype.is_compatible_with(t.dtype):
        raise ValueError("Incompatible type conversion requested to type '%s' for variable of type '%s'"
                         % (dtype.name, v.dtype.name))
    return t


ops.register_tensor_conversion_function(Variable, _to_tensor)


# ---- collections ----

def global_variables(scope=None):
    return ops.get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def all_variables():
    return global_variables()


def trainable_variables(scope=None):
    return ops.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope=None):
    return ops.get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope=None):
    return ops.get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope=None):
    return ops.get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    """An op that runs the initializers of `var_list` (a NoOp when it is empty)."""
    from dflow.ops import control_flow_ops
    if var_list:
        return control_flow_ops.group(*[v.initializer for v in var_list], name=name)
    return gen_ops.no_op(name=name)


initialize_variables = variables_initializer


def global_variables_initializer():
    return variables_initializer(global_variables())


def initialize_all_variables():
    return global_variables_initializer()


def local_variables_initializer():
    return variables_initializer(local_variables())


def initialize_local_variables():
    return local_variables_initializer()


def is_variable_initialized(variable):
    return gen_ops.is_variable_initialized(variable)


def assert_variables_initialized(var_list=None):
    from dflow.ops import control_flow_ops
    if var_list is None:
        var_list = global_variables() + local_variables()
    if not var_list:
        return None
    with ops.name_scope("assert_variables_initialized"):
        ranks = [gen_ops.rank(v) for v in var_list]
        return control_flow_ops.group(*ranks)


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor with the names of the variables that have no value yet."""
    if var_list is None:
        var_list = global_variables() + local_variables()
        if not var_list:
            g = ops.get_default_graph()
            var_list = [op.outputs[0] for op in g.get_operations() if op.type in ("Variable", "VariableV2")]
    refs = []
    for v in var_list:
        if isinstance(v, Variable):
            refs.append(v._ref())
        else:
            refs.append(ops.internal_convert_to_tensor(v, as_ref=True))
    g = ops.get_default_graph()
    if not refs:
        with ops.name_scope(name):
            return array_ops.constant([], dtype=dtypes.string)
    scope = g._scope if name == "report_uninitialized_variables" else g._scope.sub_scope(name)
    return g._tensor_of(_dflow.report_uninitialized_variables(scope, [r._out for r in refs]))


# ---- state ops on variables (tf.assign, ...) ----

def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    return gen_ops.assign(ref, value, validate_shape=validate_shape if validate_shape is not None else True,
                          use_locking=use_locking if use_locking is not None else True, name=name)


def assign_add(ref, value, use_locking=None, name=None):
    return gen_ops.assign_add(ref, value, use_locking=bool(use_locking), name=name)


def assign_sub(ref, value, use_locking=None, name=None):
    return gen_ops.assign_sub(ref, value, use_locking=bool(use_locking), name=name)


def scatter_update(ref, indices, updates, use_locking=True, name=None):
    return gen_ops.scatter_update(ref, indices, updates, use_locking=use_locking, name=name)


def scatter_add(ref, indices, updates, use_locking=False, name=None):
    return gen_ops.scatter_add(ref, indices, updates, use_locking=use_locking, name=name)


def scatter_sub(ref, indices, updates, use_locking=False, name=None):
    return gen_ops.scatter_sub(ref, indices, updates, use_locking=use_locking, name=name)


def count_up_to(ref, limit, name=None):
    return gen_ops.count_up_to(ref, limit=limit, name=name)

