"""tf.layers.MaxPooling2D and AveragePooling2D, and their functional forms."""
from dflow.layers import base
from dflow.ops import nn_ops


class _Pooling2D(base.Layer):
    def __init__(self, pool_function, pool_size, strides, padding="valid", data_format="channels_last", name=None,
                 **kwargs):
        if strides is None:
            raise ValueError("Argument `strides` must not be None.")
        super().__init__(name=name, **kwargs)
        if data_format is None:
            data_format = "channels_last"
        self.pool_function = pool_function
        self.pool_size = base.normalize_tuple(pool_size, 2, "pool_size")
        self.strides = base.normalize_tuple(strides, 2, "strides")
        self.padding = base.normalize_padding(padding)
        self.data_format = base.normalize_data_format(data_format)
        self.input_spec = base.InputSpec(ndim=4)

    def call(self, inputs):
        if self.data_format == "channels_last":
            pool_shape = (1,) + self.pool_size + (1,)
            strides = (1,) + self.strides + (1,)
        else:
            pool_shape = (1, 1) + self.pool_size
            strides = (1, 1) + self.strides
        return self.pool_function(inputs, ksize=list(pool_shape), strides=list(strides),
                                  padding=self.padding.upper(),
                                  data_format=base.convert_data_format(self.data_format, 4))


class MaxPooling2D(_Pooling2D):
    """The maximum over pool_size windows, strides apart."""

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(nn_ops.max_pool, pool_size, strides, padding=padding, data_format=data_format, name=name,
                         **kwargs)


class AveragePooling2D(_Pooling2D):
    """The mean over pool_size windows, strides apart."""

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(nn_ops.avg_pool, pool_size, strides, padding=padding, data_format=data_format, name=name,
                         **kwargs)


MaxPool2D = MaxPooling2D
AveragePool2D = AvgPool2D = AveragePooling2D


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    layer = MaxPooling2D(pool_size=pool_size, strides=strides, padding=padding, data_format=data_format, name=name)
    return layer.apply(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    layer = AveragePooling2D(pool_size=pool_size, strides=strides, padding=padding, data_format=data_format,
                             name=name)
    return layer.apply(inputs)


class _Pooling1D(base.Layer):
    def __init__(self, pool_function, pool_size, strides, padding="valid", data_format="channels_last", name=None,
                 **kwargs):
        if strides is None:
            raise ValueError("Argument `strides` must not be None.")
        super().__init__(name=name, **kwargs)
        self.pool_function = pool_function
        self.pool_size = base.normalize_tuple(pool_size, 1, "pool_size")
        self.strides = base.normalize_tuple(strides, 1, "strides")
        self.padding = base.normalize_padding(padding)
        self.data_format = base.normalize_data_format(data_format)
        self.input_spec = base.InputSpec(ndim=3)

    def call(self, inputs):
        fmt = "NWC" if self.data_format == "channels_last" else "NCW"
        return self.pool_function(inputs, list(self.pool_size), list(self.strides), self.padding.upper(),
                                  data_format=fmt)


class MaxPooling1D(_Pooling1D):
    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(nn_ops.max_pool1d, pool_size, strides, padding=padding, data_format=data_format, name=name,
                         **kwargs)


class AveragePooling1D(_Pooling1D):
    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last", name=None, **kwargs):
        super().__init__(nn_ops.avg_pool1d, pool_size, strides, padding=padding, data_format=data_format, name=name,
                         **kwargs)


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return MaxPooling1D(pool_size, strides, padding=padding, data_format=data_format, name=name).apply(inputs)


def average_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    return AveragePooling1D(pool_size, strides, padding=padding, data_format=data_format, name=name).apply(inputs)
