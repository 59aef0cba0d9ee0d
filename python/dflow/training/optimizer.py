"""The tf.train optimizers over the C++ API's (dflow/train.h): GradientDescentOptimizer,
MomentumOptimizer, AdagradOptimizer, AdamOptimizer, RMSPropOptimizer and FtrlOptimizer.

Each Python optimizer holds one C++ `train::Optimizer` (`opt._cpp_optimizer()`, a
`_dflow.Optimizer`; other parts of the extension, such as SyncReplicasOptimizer, take it as the
C++ API's optimizer). It is made on first use, from the hyperparameters as they are then (numbers,
or tensors of the graph, as TensorFlow's learning-rate schedules). Gradients are computed and
applied by the C++ optimizer, with TensorFlow's names ("gradients/...", "GradientDescent/update_w/
ApplyGradientDescent", slots "w/Momentum", Adam's "beta1_power"); the slot variables it creates
are wrapped as tf.Variables and added to GLOBAL_VARIABLES, as TensorFlow's are.
"""
import weakref

from dflow import _dflow
from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework.ops import GraphKeys
from dflow.ops import control_flow_ops
from dflow.ops import gradients_impl
from dflow.ops import variables

_VALID_DTYPES = (dtypes.float32, dtypes.float64)


def _hyper(value, name):
    """A hyperparameter as the C++ optimizer takes it: a float, or the Output of a tensor."""
    if callable(value) and not isinstance(value, (ops.Tensor, variables.Variable)):
        value = value()
    if isinstance(value, variables.Variable):
        value = value.value()
    if isinstance(value, ops.Tensor):
        return value._out
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError("%s must be a number or a scalar tensor, got %r" % (name, value)) from None


def _var_key(v):
    return v.op.name


class Optimizer:
    """Base class of the optimizers (tf.train.Optimizer). Subclasses say how to make their C++
    optimizer (`_make_cpp`)."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._cpp = None        # the C++ optimizer of the graph used last
        self._cpp_by_graph = weakref.WeakKeyDictionary()
        self._wrapped = {}      # (graph, variable node name) -> tf.Variable the C++ optimizer made
        self._slot_names = []   # slot names, in creation order
        self._created = []

    def get_name(self):
        return self._name

    def _make_cpp(self):
        raise NotImplementedError("%s has no C++ optimizer in dflow; subclassing tf.train.Optimizer with "
                                  "_apply_dense/_create_slots is not supported" % type(self).__name__)

    def _cpp_optimizer(self, graph=None):
        """The C++ train::Optimizer (a _dflow.Optimizer) of `graph` (the default graph), made on first
        use there: each graph has its own, with its own slots, as TensorFlow keys slots by graph."""
        g = graph or ops.get_default_graph()
        cpp = self._cpp_by_graph.get(g)
        if cpp is None:
            with g.as_default():
                cpp = self._make_cpp()
            self._cpp_by_graph[g] = cpp
        self._cpp = cpp
        return cpp

    def _cpp_of(self, var):
        return self._cpp_by_graph.get(var.graph)

    # ---- TensorFlow's API ----
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, gate_gradients=gate_gradients,
                                                aggregation_method=aggregation_method,
                                                colocate_gradients_with_ops=colocate_gradients_with_ops,
                                                grad_loss=grad_loss)
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError("No gradients provided for any variable, check your graph for ops that do not "
                             "support gradients, between variables %s and loss %s."
                             % ([str(v) for _, v in grads_and_vars], loss))
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                          colocate_gradients_with_ops=False, grad_loss=None):
        if callable(loss) and not isinstance(loss, ops.Tensor):
            loss = loss()
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                             "Optimizer.GATE_GRAPH.  Not %s" % gate_gradients)
        loss = ops.convert_to_tensor(loss)
        self._assert_valid_dtypes([loss])
        if var_list is None:
            var_list = variables.trainable_variables()
        else:
            var_list = control_flow_ops._flatten(list(var_list) if isinstance(var_list, (list, tuple))
                                                 else [var_list])
        for v in var_list:
            if not isinstance(v, variables.Variable):
                raise NotImplementedError("Trying to optimize unsupported type ", v)
        if not var_list:
            raise ValueError("No variables to optimize.")
        g = ops.get_default_graph()
        if grad_loss is not None:
            grads = gradients_impl.gradients(loss, var_list, grad_ys=grad_loss)
        else:
            # The C++ optimizer differentiates float variables; no gradient reaches the others (as in
            # TensorFlow, where they are then left out without an error).
            trainable = [v for v in var_list if v.dtype.base_dtype in _VALID_DTYPES]
            grads_of = {}
            if trainable:
                pairs = self._cpp_optimizer().compute_gradients(g._scope, loss._out,
                                                                [v._ref()._out for v in trainable])
                for v, (gr, _) in zip(trainable, pairs):
                    grads_of[id(v)] = None if gr is None else g._tensor_of(gr)
            grads = [grads_of.get(id(v)) for v in var_list]
        self._assert_valid_dtypes([v for gr, v in zip(grads, var_list) if gr is not None])
        if gate_gradients == Optimizer.GATE_GRAPH and any(gr is not None for gr in grads):
            grads = control_flow_ops.tuple(grads)
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for gr, v in grads_and_vars:
            if gr is not None:
                try:
                    gr = ops.convert_to_tensor(gr)
                except TypeError:
                    raise TypeError("Gradient must be convertible to a Tensor or IndexedSlices, or None: %s"
                                    % gr) from None
            if not isinstance(v, variables.Variable):
                raise NotImplementedError("Trying to update unsupported type ", v)
            converted.append((gr, v))
        if not [v for gr, v in converted if gr is not None]:
            raise ValueError("No gradients provided for any variable: %s." % ([str(v) for _, v in converted],))
        g = ops.get_default_graph()
        cpp = self._cpp_optimizer()
        scope = g._scope
        if name is not None:
            full = g.unique_name(name)
            scope = scope.with_prefix("").with_op_name(full)
        step = None
        if global_step is not None:
            step = global_step._ref()._out if isinstance(global_step, variables.Variable) else \
                ops.internal_convert_to_tensor(global_step, as_ref=True)._out
        node, created = cpp.apply_gradients(scope, [(None if gr is None else gr._out, v._ref()._out)
                                                    for gr, v in converted], step)
        for ref, init in created:
            ref_t = g._tensor_of(ref)
            var = variables.Variable._from_existing(g, ref_t, g._wrap(init) if init is not None else None)
            self._wrapped[(id(g), ref_t.op.name)] = var
            self._created.append(var)
            ops.add_to_collection(GraphKeys.GLOBAL_VARIABLES, var)
        op = g._wrap(node)
        train_op = ops.get_collection_ref(GraphKeys.TRAIN_OP)
        if op not in train_op:
            train_op.append(op)
        return op

    def get_slot(self, var, name):
        cpp = self._cpp_of(var)
        if cpp is None:
            return None
        s = cpp.get_slot(var._ref()._out, name)
        if s is None:
            return None
        return self._wrapped.get((id(var.graph), s.node.name))

    def get_slot_names(self):
        names = set()
        for v in self._var_list_seen():
            cpp = self._cpp_of(v)
            if cpp is None:
                continue
            for n in self._slot_kinds():
                if cpp.get_slot(v._ref()._out, n) is not None:
                    names.add(n)
        return sorted(names)

    def _slot_kinds(self):
        return []

    def _var_list_seen(self):
        return [v for v in variables.global_variables() + variables.local_variables()
                if isinstance(v, variables.Variable) and v not in self._created]

    def variables(self):
        g = ops.get_default_graph()
        return sorted([v for v in self._created if v.graph is g], key=lambda v: v.name)

    def _assert_valid_dtypes(self, tensors):
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in _VALID_DTYPES:
                raise ValueError("Invalid type %r for %s, expected: %s." % (dtype, t.name, list(_VALID_DTYPES)))


class GradientDescentOptimizer(Optimizer):
    """var -= learning_rate * gradient."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _make_cpp(self):
        return _dflow.gradient_descent_optimizer(_hyper(self._learning_rate, "learning_rate"), self._use_locking,
                                                 self._name)


class MomentumOptimizer(Optimizer):
    """accum = momentum * accum + gradient; var -= learning_rate * accum (slot "momentum")."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _make_cpp(self):
        return _dflow.momentum_optimizer(_hyper(self._learning_rate, "learning_rate"),
                                         _hyper(self._momentum, "momentum"), self._use_locking, self._name,
                                         bool(self._use_nesterov))

    def _slot_kinds(self):
        return ["momentum"]


class AdagradOptimizer(Optimizer):
    """accum += gradient^2; var -= learning_rate * gradient / sqrt(accum) (slot "accumulator")."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False, name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s" % initial_accumulator_value)
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _make_cpp(self):
        return _dflow.adagrad_optimizer(_hyper(self._learning_rate, "learning_rate"),
                                        float(self._initial_accumulator_value), self._use_locking, self._name)

    def _slot_kinds(self):
        return ["accumulator"]


class AdamOptimizer(Optimizer):
    """Adam (slots "m" and "v"; non-slot variables "beta1_power" and "beta2_power")."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _make_cpp(self):
        for n, v in (("beta1", self._beta1), ("beta2", self._beta2)):
            if isinstance(v, (ops.Tensor, variables.Variable)) or callable(v):
                raise NotImplementedError("AdamOptimizer(%s=<tensor>) is not supported by dflow: %s must be a "
                                          "number" % (n, n))
        return _dflow.adam_optimizer(_hyper(self._lr, "learning_rate"), float(self._beta1), float(self._beta2),
                                     _hyper(self._epsilon, "epsilon"), self._use_locking, self._name)

    def _slot_kinds(self):
        return ["m", "v"]

    def _get_beta_accumulators(self):
        g = ops.get_default_graph()
        cpp = self._cpp_by_graph.get(g)
        created = [v for v in self._created if v.graph is g]
        if cpp is None or not created:
            return None, None
        powers = cpp.beta_powers(created[0]._ref()._out)
        if powers is None:
            return None, None
        return [self._wrapped.get((id(g), p.node.name)) for p in powers]


class RMSPropOptimizer(Optimizer):
    """RMSProp (slots "rms" and "momentum"; centered adds "mg")."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False, centered=False,
                 name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _make_cpp(self):
        return _dflow.rmsprop_optimizer(_hyper(self._learning_rate, "learning_rate"), _hyper(self._decay, "decay"),
                                        _hyper(self._momentum, "momentum"), _hyper(self._epsilon, "epsilon"),
                                        self._use_locking, bool(self._centered), self._name)

    def _slot_kinds(self):
        return ["rms", "momentum", "mg"]


class FtrlOptimizer(Optimizer):
    """FTRL-proximal (slots "accum" and "linear")."""

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False, name="Ftrl",
                 accum_name=None, linear_name=None, l2_shrinkage_regularization_strength=0.0, beta=None):
        super().__init__(use_locking, name)
        if initial_accumulator_value < 0.0:
            raise ValueError("initial_accumulator_value %f needs to be positive or zero" % initial_accumulator_value)
        if learning_rate_power > 0.0:
            raise ValueError("learning_rate_power %f needs to be negative or zero" % learning_rate_power)
        if l1_regularization_strength < 0.0:
            raise ValueError("l1_regularization_strength %f needs to be positive or zero"
                             % l1_regularization_strength)
        if l2_regularization_strength < 0.0:
            raise ValueError("l2_regularization_strength %f needs to be positive or zero"
                             % l2_regularization_strength)
        if l2_shrinkage_regularization_strength < 0.0:
            raise ValueError("l2_shrinkage_regularization_strength %f needs to be positive or zero"
                             % l2_shrinkage_regularization_strength)
        if l2_shrinkage_regularization_strength or beta or accum_name or linear_name:
            raise NotImplementedError("FtrlOptimizer with l2_shrinkage_regularization_strength, beta, accum_name or "
                                      "linear_name is not supported by dflow")
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength

    def _make_cpp(self):
        return _dflow.ftrl_optimizer(_hyper(self._learning_rate, "learning_rate"),
                                     _hyper(self._learning_rate_power, "learning_rate_power"),
                                     float(self._initial_accumulator_value), _hyper(self._l1, "l1"),
                                     _hyper(self._l2, "l2"), self._use_locking, self._name)

    def _slot_kinds(self):
        return ["accum", "linear"]


def _unsupported(name):
    class _Unsupported(Optimizer):
        def __init__(self, *args, **kwargs):
            raise NotImplementedError("tf.train.%s is not supported by dflow (no C++ optimizer of that kind); "
                                      "GradientDescent, Momentum, Adagrad, Adam, RMSProp and Ftrl are" % name)
    _Unsupported.__name__ = name
    _Unsupported.__qualname__ = name
    return _Unsupported


AdadeltaOptimizer = _unsupported("AdadeltaOptimizer")
AdagradDAOptimizer = _unsupported("AdagradDAOptimizer")
ProximalGradientDescentOptimizer = _unsupported("ProximalGradientDescentOptimizer")
ProximalAdagradOptimizer = _unsupported("ProximalAdagradOptimizer")
