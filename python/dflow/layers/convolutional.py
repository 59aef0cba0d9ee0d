"""tf.layers.Conv2D and Conv2DTranspose, and their functional forms."""
from dflow.framework import tensor_shape
from dflow.layers import base
from dflow.layers.core import get_activation
from dflow.ops import array_ops
from dflow.ops import init_ops
from dflow.ops import nn_ops


def _set_conv_geometry(layer, rank, kernel_size, strides, padding, data_format, dilation_rate):
    """A convolution layer's kernel_size, strides, padding, data_format and dilation_rate, normalized
    as TensorFlow's (tuples of `rank` ints)."""
    layer.kernel_size = base.normalize_tuple(kernel_size, rank, "kernel_size")
    layer.strides = base.normalize_tuple(strides, rank, "strides")
    layer.padding = base.normalize_padding(padding)
    layer.data_format = base.normalize_data_format(data_format)
    layer.dilation_rate = base.normalize_tuple(dilation_rate, rank, "dilation_rate")


def _add_bias_and_activate(layer, outputs, bias_format):
    """A convolution's outputs plus its bias (when it has one), through its activation (if any)."""
    if layer.use_bias:
        outputs = nn_ops.bias_add(outputs, layer.bias, data_format=bias_format)
    if layer.activation is not None:
        return layer.activation(outputs)
    return outputs


class Conv2D(base.Layer):
    """2-D convolution: kernel [kh, kw, in_channels, filters], bias [filters]."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                 dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.rank = 2
        if filters is not None and not isinstance(filters, int):
            filters = int(filters)
        if filters is not None and filters < 0:
            raise ValueError("Received a negative value for `filters`.Was expecting a positive value, got %s."
                             % filters)
        self.filters = filters
        _set_conv_geometry(self, 2, kernel_size, strides, padding, data_format, dilation_rate)
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        base.set_kernel_bias_args(self, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                                  kernel_constraint, bias_constraint)
        self.input_spec = base.InputSpec(min_ndim=4)

    def _channel_axis(self):
        return 1 if self.data_format == "channels_first" else -1

    def build(self, input_shape):
        input_shape = tensor_shape.TensorShape(input_shape)
        input_channel = tensor_shape.dimension_value(input_shape[self._channel_axis()])
        if input_channel is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        kernel_shape = self.kernel_size + (input_channel, self.filters)
        base.add_kernel_and_bias(self, kernel_shape, (self.filters,))
        axis = self._channel_axis() % 4
        self.input_spec = base.InputSpec(min_ndim=4, axes={axis: input_channel})
        self.built = True

    def call(self, inputs):
        fmt = base.convert_data_format(self.data_format, 4)
        padding = self.padding.upper() if isinstance(self.padding, str) else self.padding
        outputs = nn_ops.conv2d(inputs, self.kernel, strides=list(self.strides), padding=padding,
                                data_format=fmt, dilations=list(self.dilation_rate), name="Conv2D")
        return _add_bias_and_activate(self, outputs, fmt)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None,
           bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
           activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
           reuse=None):
    layer = Conv2D(filters=filters, kernel_size=kernel_size, strides=strides, padding=padding,
                   data_format=data_format, dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                   kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                   kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                   activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                   bias_constraint=bias_constraint, trainable=trainable, name=name, _reuse=reuse, _scope=name)
    return layer.apply(inputs)


def deconv_output_length(input_length, filter_size, padding, output_padding=None, stride=0, dilation=1):
    if input_length is None:
        return None
    filter_size = filter_size + (filter_size - 1) * (dilation - 1)
    if output_padding is None:
        if padding == "valid":
            return input_length * stride + max(filter_size - stride, 0)
        if padding == "full":
            return input_length * stride - (stride + filter_size - 2)
        return input_length * stride
    pad = filter_size // 2 if padding == "same" else (0 if padding == "valid" else filter_size - 1)
    return (input_length - 1) * stride + filter_size - 2 * pad + output_padding


class Conv2DTranspose(Conv2D):
    """The transpose of a 2-D convolution: kernel [kh, kw, filters, in_channels]."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                 activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint, trainable=trainable,
                         name=name, **kwargs)
        self.output_padding = None

    def build(self, input_shape):
        input_shape = tensor_shape.TensorShape(input_shape)
        if input_shape.ndims != 4:
            raise ValueError("Inputs should have rank 4. Received input shape: " + str(input_shape))
        input_dim = tensor_shape.dimension_value(input_shape[self._channel_axis()])
        if input_dim is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        self.input_spec = base.InputSpec(ndim=4, axes={self._channel_axis() % 4: input_dim})
        kernel_shape = self.kernel_size + (self.filters, input_dim)
        base.add_kernel_and_bias(self, kernel_shape, (self.filters,))
        self.built = True

    def call(self, inputs):
        inputs_shape = array_ops.shape(inputs)
        batch_size = array_ops.gather(inputs_shape, 0)
        h_axis, w_axis = (2, 3) if self.data_format == "channels_first" else (1, 2)
        dims = inputs.shape.as_list() if inputs.shape.ndims is not None else [None] * 4
        height = dims[h_axis] if dims[h_axis] is not None else array_ops.gather(inputs_shape, h_axis)
        width = dims[w_axis] if dims[w_axis] is not None else array_ops.gather(inputs_shape, w_axis)
        kernel_h, kernel_w = self.kernel_size
        stride_h, stride_w = self.strides
        out_height = deconv_output_length(height, kernel_h, self.padding, stride=stride_h)
        out_width = deconv_output_length(width, kernel_w, self.padding, stride=stride_w)
        if self.data_format == "channels_first":
            output_shape = (batch_size, self.filters, out_height, out_width)
        else:
            output_shape = (batch_size, out_height, out_width, self.filters)
        output_shape_tensor = array_ops.stack(list(output_shape))
        fmt = base.convert_data_format(self.data_format, 4)
        outputs = nn_ops.conv2d_transpose(inputs, self.kernel, output_shape_tensor, strides=list(self.strides),
                                          padding=self.padding.upper(), data_format=fmt)
        if inputs.shape.ndims is not None:
            static = list(inputs.shape.as_list())
            c = 1 if self.data_format == "channels_first" else 3
            static[c] = self.filters
            static[h_axis] = deconv_output_length(static[h_axis], kernel_h, self.padding, stride=stride_h)
            static[w_axis] = deconv_output_length(static[w_axis], kernel_w, self.padding, stride=stride_w)
            if all(d is not None for d in static[1:]):
                # The shape input is computed while running: a reshape gives the result its static
                # shape for the ops built after it.
                outputs = array_ops.reshape(outputs, [-1] + static[1:])
            outputs.set_shape(static)
        return _add_bias_and_activate(self, outputs, fmt)


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                     activation=None, use_bias=True, kernel_initializer=None,
                     bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                     activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True,
                     name=None, reuse=None):
    layer = Conv2DTranspose(filters=filters, kernel_size=kernel_size, strides=strides, padding=padding,
                            data_format=data_format, activation=activation, use_bias=use_bias,
                            kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                            kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                            activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                            bias_constraint=bias_constraint, trainable=trainable, name=name, _reuse=reuse,
                            _scope=name)
    return layer.apply(inputs)




class Conv1D(base.Layer):
    """1-D convolution: kernel [k, in_channels, filters], bias [filters]."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.filters = int(filters)
        _set_conv_geometry(self, 1, kernel_size, strides, padding, data_format, dilation_rate)
        self.activation = get_activation(activation)
        self.use_bias = use_bias
        base.set_kernel_bias_args(self, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                                  kernel_constraint, bias_constraint)
        self.input_spec = base.InputSpec(min_ndim=3)

    def build(self, input_shape):
        input_shape = tensor_shape.TensorShape(input_shape)
        axis = 1 if self.data_format == "channels_first" else -1
        input_channel = tensor_shape.dimension_value(input_shape[axis])
        if input_channel is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        base.add_kernel_and_bias(self, self.kernel_size + (input_channel, self.filters), (self.filters,))
        self.input_spec = base.InputSpec(min_ndim=3, axes={axis % 3: input_channel})
        self.built = True

    def call(self, inputs):
        fmt = base.convert_data_format(self.data_format, 3)
        outputs = nn_ops.conv1d(inputs, self.kernel, stride=list(self.strides), padding=self.padding.upper(),
                                data_format=fmt, dilations=list(self.dilation_rate), name="Conv1D")
        return _add_bias_and_activate(self, outputs, "NCHW" if fmt == "NCW" else "NHWC")


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid", data_format="channels_last", dilation_rate=1,
           activation=None, use_bias=True, kernel_initializer=None, bias_initializer=init_ops.zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    layer = Conv1D(filters=filters, kernel_size=kernel_size, strides=strides, padding=padding,
                   data_format=data_format, dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                   kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                   kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                   activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                   bias_constraint=bias_constraint, trainable=trainable, name=name, _reuse=reuse, _scope=name)
    return layer.apply(inputs)
