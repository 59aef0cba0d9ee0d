"""tf.train.ExponentialMovingAverage and assign_moving_average, as TensorFlow's Python layer builds
them: a shadow variable "<var>/ExponentialMovingAverage" per variable (starting at its initialized
value) and AssignSub updates shadow -= (shadow - var) * (1 - decay)."""
from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework.ops import GraphKeys
from dflow.ops import control_flow_ops
from dflow.ops import init_ops
from dflow.ops import math_ops
from dflow.ops import variable_scope
from dflow.ops import variables


def assign_moving_average(variable, value, decay, zero_debias=True, name=None):
    """variable -= (variable - value) * (1 - decay)."""
    with ops.name_scope(name, "AssignMovingAvg", [variable, value, decay]) as scope:
        decay = ops.convert_to_tensor(1.0 - decay, name="decay")
        if decay.dtype != variable.dtype.base_dtype:
            decay = math_ops.cast(decay, variable.dtype.base_dtype)
        if zero_debias and not isinstance(variable, variables.Variable):
            raise NotImplementedError("assign_moving_average(zero_debias=True) of a tensor is not supported by dflow")
        return variables.assign_sub(variable, (variable - value) * decay, name=scope)


def _create_slot(primary, val, name):
    """A non-trainable variable "<primary>/<name>" initialized to `val`, where `primary` lives."""
    prefix = primary.op.name
    validate_shape = val.get_shape().is_fully_defined()
    g = ops.get_default_graph()
    with variable_scope.variable_scope(None, prefix + "/" + name), g.colocate_with(primary.op):
        scope = variable_scope.get_variable_scope()
        partitioner = scope.partitioner
        scope.set_partitioner(None)
        try:
            return variable_scope.get_variable("", initializer=val, trainable=False, validate_shape=validate_shape)
        finally:
            scope.set_partitioner(partitioner)


class ExponentialMovingAverage:
    """Maintains moving averages of variables (tf.train.ExponentialMovingAverage)."""

    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages = {}

    @property
    def name(self):
        return self._name

    def apply(self, var_list=None):
        if var_list is None:
            var_list = variables.trainable_variables()
        g = ops.get_default_graph()
        for v in var_list:
            if v.dtype.base_dtype not in (dtypes.float32, dtypes.float64):
                raise TypeError("The variables must be half, float, or double: %s" % v.name)
            if id(v) in self._averages:
                raise ValueError("Moving average already computed for: %s" % v.name)
            with g.control_dependencies(None):
                if isinstance(v, variables.Variable):
                    avg = _create_slot(v, v.initialized_value(), self._name)
                    ops.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, v)
                else:
                    if self._zero_debias:
                        raise NotImplementedError("ExponentialMovingAverage(zero_debias=True) of tensors is not "
                                                  "supported by dflow")
                    with variable_scope.variable_scope(None, v.op.name + "/" + self._name):
                        avg = variable_scope.get_variable("", v.get_shape(), v.dtype.base_dtype,
                                                          initializer=init_ops.zeros_initializer(), trainable=False)
            self._averages[id(v)] = (v, avg)
        with ops.name_scope(self._name) as scope:
            decay = ops.convert_to_tensor(self._decay, name="decay")
            if self._num_updates is not None:
                num_updates = math_ops.cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = [assign_moving_average(self._averages[id(v)][1], v, decay, zero_debias=False)
                       for v in var_list]
            return control_flow_ops.group(*updates, name=scope)

    def average(self, var):
        entry = self._averages.get(id(var))
        return entry[1] if entry else None

    def average_name(self, var):
        entry = self._averages.get(id(var))
        if entry is not None:
            return entry[1].name[:-len(":0")]
        return ops.get_default_graph().unique_name(var.name[:-len(":0")] + "/" + self._name, mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables=None):
        """{checkpoint name: variable} restoring each averaged variable from its average."""
        name_map = {}
        if moving_avg_variables is None:
            moving_avg_variables = variables.trainable_variables() + variables.moving_average_variables()
        seen = {}
        for v in moving_avg_variables:
            seen[id(v)] = v
        for v in seen.values():
            name_map[self.average_name(v)] = v
        names = {v.name for v in seen.values()}
        for v in variables.global_variables():
            if id(v) not in seen and v.name not in names:
                name_map[v.op.name] = v
        return name_map
