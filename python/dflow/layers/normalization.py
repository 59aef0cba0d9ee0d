"""tf.layers.BatchNormalization and batch_normalization (TensorFlow 1.x's): 4-D inputs normalized
over their channel axis (axis 1 or 3) use a FusedBatchNormV3 op, as TensorFlow does, and update
the moving variance with the unbiased batch variance; other inputs are normalized with elementary
ops and the biased variance."""
from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.layers import base
from dflow.ops import array_ops
from dflow.ops import init_ops
from dflow.ops import math_ops
from dflow.ops import nn_ops


class BatchNormalization(base.Layer):
    """Normalizes over the batch in training (updating moving_mean / moving_variance through
    UPDATE_OPS) and with the moving statistics otherwise; gamma scales and beta shifts."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=init_ops.zeros_initializer(), gamma_initializer=init_ops.ones_initializer(),
                 moving_mean_initializer=init_ops.zeros_initializer(),
                 moving_variance_initializer=init_ops.ones_initializer(), beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, renorm=False,
                 renorm_clipping=None, renorm_momentum=0.99, fused=None, trainable=True, virtual_batch_size=None,
                 adjustment=None, name=None, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError("Expected an int or a list/tuple of ints for the argument 'axis', but received: %r"
                            % (axis,))
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise NotImplementedError("dflow's batch_normalization does not support renorm, virtual_batch_size "
                                      "or adjustment")
        self.momentum = momentum
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer = beta_regularizer
        self.gamma_regularizer = gamma_regularizer
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        self.renorm = renorm
        self.virtual_batch_size = virtual_batch_size
        self.adjustment = adjustment
        self.fused = True if fused is None else fused
        self.supports_masking = True

    def build(self, input_shape):
        input_shape = tensor_shape.TensorShape(input_shape)
        if not input_shape.ndims:
            raise ValueError("Input has undefined rank:", input_shape)
        ndims = input_shape.ndims
        if isinstance(self.axis, int):
            self.axis = [self.axis]
        for idx, x in enumerate(self.axis):
            if x < 0:
                self.axis[idx] = ndims + x
        for x in self.axis:
            if x < 0 or x >= ndims:
                raise ValueError("Invalid axis: %d" % x)
        if len(self.axis) != len(set(self.axis)):
            raise ValueError("Duplicate axis: %s" % self.axis)
        # TensorFlow 1.x: fused (its arithmetic) for 4-D inputs normalized over axis 1 or 3.
        self.fused = bool(self.fused) and ndims == 4 and sorted(self.axis) in ([1], [3])
        self._data_format = "NCHW" if self.axis == [1] else "NHWC"
        axis_to_dim = {x: tensor_shape.dimension_value(input_shape[x]) for x in self.axis}
        for x in axis_to_dim:
            if axis_to_dim[x] is None:
                raise ValueError("Input has undefined `axis` dimension. Received input with shape %s. Axis value: %s"
                                 % (tuple(input_shape.as_list()), self.axis))
        self.input_spec = base.InputSpec(ndim=ndims, axes=axis_to_dim)
        if len(axis_to_dim) == 1:
            param_shape = (list(axis_to_dim.values())[0],)
        else:
            param_shape = [axis_to_dim[i] if i in axis_to_dim else 1 for i in range(ndims)]
        param_dtype = self._dtype or dtypes.float32
        self._param_dtype = param_dtype
        if self.scale:
            self.gamma = self.add_weight(name="gamma", shape=param_shape, dtype=param_dtype,
                                         initializer=self.gamma_initializer, regularizer=self.gamma_regularizer,
                                         constraint=self.gamma_constraint, trainable=True)
        else:
            self.gamma = None
        if self.center:
            self.beta = self.add_weight(name="beta", shape=param_shape, dtype=param_dtype,
                                        initializer=self.beta_initializer, regularizer=self.beta_regularizer,
                                        constraint=self.beta_constraint, trainable=True)
        else:
            self.beta = None
        from dflow.ops import variables as tf_variables
        self.moving_mean = self.add_weight(name="moving_mean", shape=param_shape, dtype=param_dtype,
                                           initializer=self.moving_mean_initializer,
                                           synchronization=tf_variables.VariableSynchronization.ON_READ,
                                           trainable=False, aggregation=tf_variables.VariableAggregation.MEAN)
        self.moving_variance = self.add_weight(name="moving_variance", shape=param_shape, dtype=param_dtype,
                                               initializer=self.moving_variance_initializer,
                                               synchronization=tf_variables.VariableSynchronization.ON_READ,
                                               trainable=False, aggregation=tf_variables.VariableAggregation.MEAN)
        self.built = True

    def _assign_moving_average(self, variable, value, momentum, inputs_size=None):
        from dflow.ops import variables as tf_variables
        with ops.name_scope(None, "AssignMovingAvg") as scope:
            decay = ops.convert_to_tensor(1.0 - momentum, name="decay") if not isinstance(momentum, ops.Tensor) \
                else math_ops.subtract(1.0, momentum, name="decay")
            if decay.dtype.base_dtype != variable.dtype.base_dtype:
                decay = math_ops.cast(decay, variable.dtype.base_dtype)
            update_delta = (variable - math_ops.cast(value, variable.dtype.base_dtype)) * decay
            if inputs_size is not None:
                update_delta = array_ops.where(inputs_size > 0, update_delta, array_ops.zeros_like(update_delta))
            return tf_variables.assign_sub(variable, update_delta, name=scope)

    def _fused_batch_norm(self, inputs, training):
        beta = self.beta if self.center else array_ops.zeros(self.moving_mean.shape, self._param_dtype)
        gamma = self.gamma if self.scale else array_ops.ones(self.moving_mean.shape, self._param_dtype)
        beta = ops.convert_to_tensor(beta)
        gamma = ops.convert_to_tensor(gamma)
        inputs_size = array_ops.size(inputs)

        def _training():
            return nn_ops.fused_batch_norm(inputs, gamma, beta, epsilon=self.epsilon, data_format=self._data_format)

        def _inference():
            return nn_ops.fused_batch_norm(inputs, gamma, beta, mean=ops.convert_to_tensor(self.moving_mean),
                                           variance=ops.convert_to_tensor(self.moving_variance),
                                           epsilon=self.epsilon, is_training=False, data_format=self._data_format)

        output, mean, variance = base.smart_cond(training, _training, _inference)
        training_value = base.constant_value(training)
        if training_value is None:
            momentum = base.smart_cond(training, lambda: ops.convert_to_tensor(self.momentum, dtypes.float32),
                                       lambda: ops.convert_to_tensor(1.0, dtypes.float32))
        else:
            momentum = ops.convert_to_tensor(self.momentum, dtypes.float32)
        if training_value or training_value is None:
            self.add_update(lambda: self._assign_moving_average(self.moving_mean, mean, momentum, inputs_size))
            self.add_update(lambda: self._assign_moving_average(self.moving_variance, variance, momentum,
                                                                inputs_size))
        return output

    def call(self, inputs, training=False):
        if self.fused:
            return self._fused_batch_norm(inputs, training)
        input_shape = inputs.shape
        ndims = input_shape.ndims
        reduction_axes = [i for i in range(ndims) if i not in self.axis]
        broadcast_shape = [1] * ndims
        broadcast_shape[self.axis[0]] = input_shape[self.axis[0]]

        def _broadcast(v):
            if v is not None and v.shape.ndims != ndims and reduction_axes != list(range(ndims - 1)):
                return array_ops.reshape(v, broadcast_shape)
            return v

        scale, offset = _broadcast(self.gamma), _broadcast(self.beta)
        training_value = base.constant_value(training)
        if training_value is False:
            mean, variance = self.moving_mean, self.moving_variance
        else:
            keep_dims = len(self.axis) > 1
            mean, variance = nn_ops.moments(math_ops.cast(inputs, self._param_dtype), reduction_axes,
                                            keep_dims=keep_dims)
            moving_mean = self.moving_mean
            moving_variance = self.moving_variance
            batch_mean, batch_variance = mean, variance
            mean = base.smart_cond(training, lambda: batch_mean, lambda: ops.convert_to_tensor(moving_mean))
            variance = base.smart_cond(training, lambda: batch_variance,
                                       lambda: ops.convert_to_tensor(moving_variance))
            new_mean, new_variance = mean, variance

            def mean_update():
                return base.smart_cond(training, lambda: self._assign_moving_average(self.moving_mean, new_mean,
                                                                                     self.momentum),
                                       lambda: ops.convert_to_tensor(self.moving_mean))

            def variance_update():
                return base.smart_cond(training, lambda: self._assign_moving_average(self.moving_variance,
                                                                                     new_variance, self.momentum),
                                       lambda: ops.convert_to_tensor(self.moving_variance))

            self.add_update(mean_update)
            self.add_update(variance_update)
        mean = math_ops.cast(mean, inputs.dtype.base_dtype)
        variance = math_ops.cast(variance, inputs.dtype.base_dtype)
        if offset is not None:
            offset = math_ops.cast(offset, inputs.dtype.base_dtype)
        if scale is not None:
            scale = math_ops.cast(scale, inputs.dtype.base_dtype)
        outputs = nn_ops.batch_normalization(inputs, _broadcast(mean), _broadcast(variance), offset, scale,
                                             self.epsilon)
        outputs.set_shape(input_shape)
        return outputs

    def compute_output_shape(self, input_shape):
        return input_shape


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=init_ops.zeros_initializer(), gamma_initializer=init_ops.ones_initializer(),
                        moving_mean_initializer=init_ops.zeros_initializer(),
                        moving_variance_initializer=init_ops.ones_initializer(), beta_regularizer=None,
                        gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, training=False,
                        trainable=True, name=None, reuse=None, renorm=False, renorm_clipping=None,
                        renorm_momentum=0.99, fused=None, virtual_batch_size=None, adjustment=None):
    layer = BatchNormalization(axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                               beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                               moving_mean_initializer=moving_mean_initializer,
                               moving_variance_initializer=moving_variance_initializer,
                               beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
                               beta_constraint=beta_constraint, gamma_constraint=gamma_constraint, renorm=renorm,
                               renorm_clipping=renorm_clipping, renorm_momentum=renorm_momentum, fused=fused,
                               trainable=trainable, virtual_batch_size=virtual_batch_size, adjustment=adjustment,
                               name=name, _reuse=reuse, _scope=name)
    return layer.apply(inputs, training=training)


BatchNorm = BatchNormalization
