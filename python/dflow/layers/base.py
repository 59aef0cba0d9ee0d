"""tf.layers.Layer: TensorFlow 1.x's layer base class over variable_scope/get_variable.

A layer's variables live in a variable scope named after it ("dense", "dense_1", ... or the name
given), created the first time the layer is called (or at construction for the functional
forms given a name); its ops are built in that scope's name scope ("dense/MatMul"), and a
second call reuses both ("dense/MatMul_1"). Weight regularizers' losses go to
REGULARIZATION_LOSSES, updates (batch normalization's moving averages) to UPDATE_OPS.
"""
import collections
import re

import numpy as np

from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.ops import array_ops
from dflow.ops import math_ops

GraphKeys = ops.GraphKeys

_ALLOWED_KWARGS = {"input_shape", "batch_input_shape", "batch_size", "weights", "activity_regularizer", "autocast",
                   "dynamic", "implementation"}


def _vs():
    from dflow.ops import variable_scope
    return variable_scope


def to_snake_case(name):
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    insecure = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    if insecure[0] != "_":
        return insecure
    return "private" + insecure


def _unique_object_name(name):
    """TensorFlow's backend.unique_object_name (not zero based): dense_1, dense_2, ... per graph."""
    g = ops.get_default_graph()
    uids = getattr(g, "_layer_name_uids", None)
    if uids is None:
        uids = collections.defaultdict(int)
        g._layer_name_uids = uids
    uids[name] += 1
    return "%s_%d" % (name, uids[name])


def constant_value(pred):
    """The Python value of pred when it is known while building (a bool, or a constant)."""
    if isinstance(pred, (bool, np.bool_)):
        return bool(pred)
    if isinstance(pred, (int, np.integer)) and pred in (0, 1):
        return bool(pred)
    if isinstance(pred, ops.Tensor):
        op = pred.op
        while op.type == "Identity":
            op = op.inputs[0].op
        if op.type == "Const":
            return op.get_attr("value")
        return None
    if hasattr(pred, "_as_graph_element"):
        return None
    raise TypeError("`pred` must be a Tensor, or a Python bool, or 1 or 0. Found instead: %s" % type(pred))


def smart_cond(pred, true_fn, false_fn, name=None):
    """true_fn() or false_fn() when pred is known while building, else tf.cond."""
    value = constant_value(pred)
    if value is not None:
        return true_fn() if value else false_fn()
    from dflow.ops import control_flow_ops
    return control_flow_ops.cond(pred, true_fn=true_fn, false_fn=false_fn, name=name)


class InputSpec:
    """The rank, dtype and axis sizes a layer accepts."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None):
        self.dtype = dtypes.as_dtype(dtype).name if dtype is not None else None
        if shape is not None:
            self.ndim = len(shape)
            self.shape = shape
        else:
            self.ndim = ndim
            self.shape = None
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.axes = axes or {}

    def __repr__(self):
        spec = [("dtype=" + str(self.dtype)) if self.dtype else "", ("shape=" + str(self.shape)) if self.shape else "",
                ("ndim=" + str(self.ndim)) if self.ndim else "", ("max_ndim=" + str(self.max_ndim))
                if self.max_ndim else "", ("min_ndim=" + str(self.min_ndim)) if self.min_ndim else "",
                ("axes=" + str(self.axes)) if self.axes else ""]
        return "InputSpec(%s)" % ", ".join(x for x in spec if x)


def _assert_input_compatibility(spec, inputs, layer_name):
    if spec is None:
        return
    shape = inputs.shape
    if spec.ndim is not None and shape.ndims is not None and shape.ndims != spec.ndim:
        raise ValueError("Input 0 of layer %s is incompatible with the layer: expected ndim=%d, found ndim=%d. "
                         "Full shape received: %s" % (layer_name, spec.ndim, shape.ndims, shape))
    if spec.min_ndim is not None and shape.ndims is not None and shape.ndims < spec.min_ndim:
        raise ValueError("Input 0 of layer %s is incompatible with the layer: expected min_ndim=%d, found ndim=%d. "
                         "Full shape received: %s" % (layer_name, spec.min_ndim, shape.ndims, shape))
    if spec.axes and shape.ndims is not None:
        for axis, value in spec.axes.items():
            if value is not None and shape[int(axis)] not in (value, None):
                raise ValueError("Input 0 of layer %s is incompatible with the layer: expected axis %d of input "
                                 "shape to have value %d but received input with shape %s"
                                 % (layer_name, axis, value, shape))


def _to_list(x):
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


class Layer:
    """Base class of the tf.layers layers; subclasses implement build(input_shape) and
    call(inputs, ...), creating variables with add_weight."""

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        scope = kwargs.pop("_scope", None)
        self._reuse = kwargs.pop("_reuse", None)
        for kwarg in kwargs:
            if kwarg not in _ALLOWED_KWARGS:
                raise TypeError("Keyword argument not understood:", kwarg)
        self._activity_regularizer = kwargs.get("activity_regularizer")
        self._trainable = trainable
        self.built = False
        self._dtype = None if dtype is None else dtypes.as_dtype(dtype).base_dtype
        self._trainable_weights = []
        self._non_trainable_weights = []
        self._losses = []
        self._updates = []
        self.input_spec = None
        self.supports_masking = False
        self._init_set_name(name)
        if scope:
            with _vs().variable_scope(scope) as captured_scope:
                self._scope = captured_scope
        else:
            self._scope = None
        self._current_scope = None

    # ---- names and scopes ----
    def _init_set_name(self, name):
        if isinstance(name, _vs().VariableScope):
            base_name = name.name
            self._name = _unique_object_name(to_snake_case(self.__class__.__name__))
        else:
            base_name = name
            self._name = name
        if not name:
            base_name = to_snake_case(self.__class__.__name__)
            self._name = _unique_object_name(base_name)
        self._base_name = base_name

    @property
    def name(self):
        return self._name

    @property
    def scope_name(self):
        if not self._scope:
            raise ValueError('No name available for layer scope because the layer "' + self._name + '" has not '
                             "been used yet. The scope name  is determined the first time the layer instance is "
                             "called. You must therefore call the layer before querying `scope_name`.")
        return self._scope.name

    def _set_scope(self, scope=None):
        if self._scope is None:
            vs = _vs()
            if self._reuse:
                with vs.variable_scope(scope if scope is not None else self._base_name) as captured_scope:
                    self._scope = captured_scope
            else:
                with vs.variable_scope(scope, default_name=self._base_name) as captured_scope:
                    self._scope = captured_scope

    # ---- properties ----
    @property
    def dtype(self):
        return None if self._dtype is None else self._dtype.name

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)

    @property
    def trainable_weights(self):
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self):
        if self.trainable:
            return list(self._non_trainable_weights)
        return list(self._trainable_weights) + list(self._non_trainable_weights)

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    @property
    def losses(self):
        return list(self._losses)

    @property
    def updates(self):
        return list(self._updates)

    @property
    def activity_regularizer(self):
        return self._activity_regularizer

    @property
    def graph(self):
        return None

    # ---- weights, losses, updates ----
    def add_loss(self, losses, inputs=None):
        new = [x for x in _to_list(losses) if x is not None]
        self._losses.extend(new)
        for loss in new:
            if loss not in ops.get_collection(GraphKeys.REGULARIZATION_LOSSES):
                ops.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    def add_update(self, updates, inputs=None):
        for u in _to_list(updates):
            if callable(u):
                u = u()
            if u is not None:
                self._updates.append(u)

    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None, trainable=None,
                   constraint=None, use_resource=None, synchronization=None, aggregation=None, partitioner=None,
                   **kwargs):
        """A variable of this layer, made (or reused) with get_variable in the layer's scope."""
        for kwarg in kwargs:
            if kwarg not in ("experimental_autocast", "getter"):
                raise TypeError("Unknown keyword argument:", kwarg)
        vs = _vs()
        from dflow.ops import variables as tf_variables
        if synchronization is None:
            synchronization = tf_variables.VariableSynchronization.AUTO
        if aggregation is None:
            aggregation = tf_variables.VariableAggregation.NONE
        trainable = tf_variables.trainable_for_synchronization(synchronization, trainable)
        existing = set(tf_variables.global_variables())
        if dtype is None:
            dtype = self._dtype or dtypes.float32
        self._set_scope(None)
        reuse = self.built or self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope:
            self._current_scope = scope
            with ops.name_scope(scope.original_name_scope):
                if initializer is None:
                    initializer = scope.initializer
                variable = vs.get_variable(name, shape=shape, dtype=dtypes.as_dtype(dtype), initializer=initializer,
                                           trainable=trainable and self.trainable, constraint=constraint,
                                           partitioner=partitioner, use_resource=use_resource,
                                           synchronization=synchronization, aggregation=aggregation)
                if trainable and self.trainable:
                    if variable not in self._trainable_weights:
                        self._trainable_weights.append(variable)
                elif variable not in self._non_trainable_weights:
                    self._non_trainable_weights.append(variable)
                if regularizer and variable not in existing:
                    with ops.name_scope(name + "/Regularizer"):
                        loss = regularizer(variable)
                    if loss is not None:
                        self.add_loss(loss)
        return variable

    add_variable = add_weight

    # ---- building and calling ----
    def build(self, input_shape):
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    def compute_output_shape(self, input_shape):
        raise NotImplementedError

    def apply(self, inputs, *args, **kwargs):
        return self.__call__(inputs, *args, **kwargs)

    def __call__(self, inputs, *args, **kwargs):
        scope = kwargs.pop("scope", None)
        self._set_scope(scope)
        vs = _vs()
        reuse = True if self.built else self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope:
            self._current_scope = scope
            with ops.name_scope(scope.original_name_scope):
                if isinstance(inputs, (list, tuple)):
                    inputs = type(inputs)(ops.convert_to_tensor(x) for x in inputs)
                    first = inputs[0]
                else:
                    inputs = ops.convert_to_tensor(inputs)
                    first = inputs
                if not self.built:
                    if self._dtype is None:
                        self._dtype = first.dtype.base_dtype
                    _assert_input_compatibility(self.input_spec, first, self._name)
                    input_shapes = [x.shape for x in inputs] if isinstance(inputs, (list, tuple)) else inputs.shape
                    self.build(input_shapes)
                    self.built = True
                _assert_input_compatibility(self.input_spec, first, self._name)
                outputs = self.call(inputs, *args, **kwargs)
                if self._activity_regularizer is not None:
                    with ops.name_scope("ActivityRegularizer"):
                        for output in _to_list(outputs):
                            activity_loss = self._activity_regularizer(output)
                            batch_size = math_ops.cast(array_ops.gather(array_ops.shape(output), 0),
                                                       activity_loss.dtype)
                            self.add_loss(activity_loss / batch_size)
        existing = ops.get_collection(GraphKeys.UPDATE_OPS)
        for u in self._updates:
            if u not in existing:
                ops.add_to_collection(GraphKeys.UPDATE_OPS, u)
        return outputs

    def count_params(self):
        return int(sum(np.prod(w.shape.as_list()) for w in self.weights))

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable, "dtype": self.dtype}


def set_kernel_bias_args(layer, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                         kernel_constraint, bias_constraint):
    """Keeps the kernel/bias arguments of a layer with a kernel and an optional bias (Dense, Conv*)."""
    layer.kernel_initializer = kernel_initializer
    layer.bias_initializer = bias_initializer
    layer.kernel_regularizer = kernel_regularizer
    layer.bias_regularizer = bias_regularizer
    layer.kernel_constraint = kernel_constraint
    layer.bias_constraint = bias_constraint


def add_kernel_and_bias(layer, kernel_shape, bias_shape):
    """Creates `layer.kernel` and, when `layer.use_bias`, `layer.bias` (else None) from the arguments
    set_kernel_bias_args kept."""
    layer.kernel = layer.add_weight(name="kernel", shape=kernel_shape, initializer=layer.kernel_initializer,
                                    regularizer=layer.kernel_regularizer, constraint=layer.kernel_constraint,
                                    trainable=True, dtype=layer._dtype)
    if layer.use_bias:
        layer.bias = layer.add_weight(name="bias", shape=bias_shape, initializer=layer.bias_initializer,
                                      regularizer=layer.bias_regularizer, constraint=layer.bias_constraint,
                                      trainable=True, dtype=layer._dtype)
    else:
        layer.bias = None


def normalize_tuple(value, n, name):
    """An int or an iterable of n ints as a tuple of n ints."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    try:
        value_tuple = tuple(value)
    except TypeError:
        raise ValueError("The `%s` argument must be a tuple of %d integers. Received: %s" % (name, n, value)) from None
    if len(value_tuple) != n:
        raise ValueError("The `%s` argument must be a tuple of %d integers. Received: %s" % (name, n, value))
    for v in value_tuple:
        try:
            int(v)
        except (ValueError, TypeError):
            raise ValueError("The `%s` argument must be a tuple of %d integers. Received: %s including element %s "
                             "of type %s" % (name, n, value, v, type(v))) from None
    return tuple(int(v) for v in value_tuple)


def normalize_padding(value):
    if isinstance(value, (list, tuple)):
        return value
    padding = value.lower()
    if padding not in {"valid", "same", "causal"}:
        raise ValueError("The `padding` argument must be a list/tuple or one of \"valid\", \"same\" (or \"causal\", "
                         "only for `Conv1D). Received: " + str(padding))
    return padding


def normalize_data_format(value):
    if value is None:
        value = "channels_last"
    data_format = value.lower()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError("The `data_format` argument must be one of \"channels_first\", \"channels_last\". Received: "
                         + str(value))
    return data_format


def convert_data_format(data_format, ndim):
    if data_format == "channels_last":
        return {3: "NWC", 4: "NHWC", 5: "NDHWC"}[ndim]
    if data_format == "channels_first":
        return {3: "NCW", 4: "NCHW", 5: "NCDHW"}[ndim]
    raise ValueError("Invalid data_format:", data_format)


def as_shape(shape):
    return tensor_shape.TensorShape(shape)
