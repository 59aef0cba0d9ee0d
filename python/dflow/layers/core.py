"""tf.layers.Dense, Dropout and Flatten, and their functional forms."""
import functools
import operator

import numpy as np

from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.layers import base
from dflow.ops import array_ops
from dflow.ops import init_ops
from dflow.ops import math_ops
from dflow.ops import nn_ops

_ACTIVATIONS = {"relu": nn_ops.relu, "relu6": nn_ops.relu6, "elu": nn_ops.elu, "selu": nn_ops.selu,
                "softplus": nn_ops.softplus, "softsign": nn_ops.softsign, "sigmoid": math_ops.sigmoid,
                "tanh": math_ops.tanh, "softmax": nn_ops.softmax, "swish": nn_ops.swish}


def get_activation(identifier):
    """A callable for an activation (a callable, a name such as "relu", or None/"linear")."""
    if identifier is None or identifier == "linear":
        return None
    if isinstance(identifier, str):
        fn = _ACTIVATIONS.get(identifier)
        if fn is None:
            raise ValueError("Unknown activation function: %s" % identifier)
        return fn
    if callable(identifier):
        return identifier
    raise TypeError("Could not interpret activation function identifier: %r" % (identifier,))


def dense_op(inputs, kernel, bias=None, activation=None, dtype=None):
    """inputs @ kernel (over the last axis for rank > 2) + bias, then activation."""
    if dtype is not None and inputs.dtype.base_dtype != dtype:
        inputs = math_ops.cast(inputs, dtype=dtype)
    rank = inputs.shape.ndims
    if rank == 2 or rank is None:
        outputs = ops.apply_op("MatMul", "MatMul", [inputs, kernel])
    else:
        # TensorFlow's tensordot over the last axis: reshape to 2-D, multiply, reshape back.
        with ops.name_scope(None, "Tensordot", [inputs, kernel]) as scope:
            units = kernel.shape[-1]
            last = inputs.shape[-1]
            flat = array_ops.reshape(inputs, [-1, last])
            prod = ops.apply_op("MatMul", "MatMul", [flat, kernel])
            inner = inputs.shape.as_list()[1:-1]
            if all(d is not None for d in inner):
                out_shape = [-1] + inner + [units]
            else:
                out_shape = array_ops.concat([array_ops.strided_slice(array_ops.shape(inputs), [0], [-1]), [units]],
                                             0)
            outputs = array_ops.reshape(prod, out_shape, name=scope)
        shape = inputs.shape.as_list()
        outputs.set_shape(shape[:-1] + [kernel.shape[-1]])
    if bias is not None:
        outputs = nn_ops.bias_add(outputs, bias)
    if activation is not None:
        outputs = activation(outputs)
    return outputs


class Dense(base.Layer):
    """outputs = activation(inputs @ kernel + bias): variables kernel [in, units] and bias [units]."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units) if not isinstance(units, int) else units
        if self.units < 0:
            raise ValueError("Received an invalid value for `units`, expected a positive integer, got %s." % units)
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        base.set_kernel_bias_args(self, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                                  kernel_constraint, bias_constraint)
        self.input_spec = base.InputSpec(min_ndim=2)
        self.supports_masking = True

    def build(self, input_shape):
        dtype = dtypes.as_dtype(self._dtype or dtypes.float32)
        if not (dtype.is_floating or dtype.is_complex):
            raise TypeError("Unable to build `Dense` layer with non-floating point dtype %s" % (dtype,))
        input_shape = tensor_shape.TensorShape(input_shape)
        last_dim = tensor_shape.dimension_value(input_shape[-1])
        if last_dim is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
        self.input_spec = base.InputSpec(min_ndim=2, axes={-1: last_dim})
        base.add_kernel_and_bias(self, [last_dim, self.units], [self.units])
        self.built = True

    def call(self, inputs):
        return dense_op(inputs, self.kernel, self.bias, self.activation, dtype=self._dtype)

    def compute_output_shape(self, input_shape):
        input_shape = tensor_shape.TensorShape(input_shape)
        return tensor_shape.TensorShape(input_shape.as_list()[:-1] + [self.units])


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
          reuse=None):
    """The functional form of Dense: a new layer (variables "dense/kernel", "dense/bias", or under
    `name`; reuse=True shares those of an earlier layer of that name)."""
    layer = Dense(units, activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                  bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                  bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                  kernel_constraint=kernel_constraint, bias_constraint=bias_constraint, trainable=trainable,
                  name=name, _scope=name, _reuse=reuse)
    return layer.apply(inputs)


class Dropout(base.Layer):
    """In training, each input unit is dropped with probability `rate` (the rest scaled by
    1 / (1 - rate)); otherwise the identity. `training` is a Python bool or a bool tensor."""

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed
        self.supports_masking = True

    def _get_noise_shape(self, inputs):
        if self.noise_shape is None:
            return None
        concrete = array_ops.shape(inputs)
        out = []
        for i, value in enumerate(self.noise_shape):
            out.append(array_ops.gather(concrete, i) if value is None else value)
        return array_ops.stack(out) if any(isinstance(v, ops.Tensor) for v in out) else out

    def call(self, inputs, training=False):
        def dropped_inputs():
            return nn_ops.dropout(inputs, noise_shape=self._get_noise_shape(inputs), seed=self.seed, rate=self.rate)
        return base.smart_cond(training, dropped_inputs, lambda: array_ops.identity(inputs))

    def compute_output_shape(self, input_shape):
        return input_shape


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    layer = Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)
    return layer.apply(inputs, training=training)


class Flatten(base.Layer):
    """Flattens every dimension but the first (the batch)."""

    def __init__(self, data_format="channels_last", **kwargs):
        super().__init__(**kwargs)
        self.data_format = base.normalize_data_format(data_format)
        self.input_spec = base.InputSpec(min_ndim=1)

    def call(self, inputs):
        if self.data_format == "channels_first" and inputs.shape.ndims is not None and inputs.shape.ndims > 1:
            rank = inputs.shape.ndims
            inputs = array_ops.transpose(inputs, perm=[0] + list(range(2, rank)) + [1])
        input_shape = inputs.shape
        rank = input_shape.ndims
        if rank == 1:
            return array_ops.expand_dims(inputs, axis=1)
        batch_dim = tensor_shape.dimension_value(input_shape[0]) if rank is not None else None
        non_batch_dims = input_shape[1:]
        if rank is not None and non_batch_dims.is_fully_defined():
            last_dim = int(functools.reduce(operator.mul, non_batch_dims.as_list(), 1))
            flattened_shape = array_ops.constant([-1, last_dim])
        elif batch_dim is not None:
            flattened_shape = array_ops.constant([int(batch_dim), -1])
        else:
            flattened_shape = [array_ops.gather(array_ops.shape(inputs), 0), np.int32(-1)]
        return array_ops.reshape(inputs, flattened_shape)

    def compute_output_shape(self, input_shape):
        input_shape = tensor_shape.TensorShape(input_shape).as_list()
        rest = input_shape[1:]
        n = None if any(d is None for d in rest) else int(np.prod(rest))
        return tensor_shape.TensorShape([input_shape[0], n])


def flatten(inputs, name=None, data_format="channels_last"):
    layer = Flatten(name=name, data_format=data_format)
    return layer.apply(inputs)
