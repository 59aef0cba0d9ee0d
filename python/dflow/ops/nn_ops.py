"""TensorFlow 1.x's tf.nn: activations, softmax, convolution and pooling, dropout, cross
entropies, normalization and embedding lookup, built from dflow's registered ops as
TensorFlow's Python layer builds them (same arguments, defaults, node names and errors)."""
import collections.abc
import math
import numbers

import numpy as np

from dflow.framework import dtypes
from dflow.framework import errors
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.ops import array_ops
from dflow.ops import math_ops

apply_op = ops.apply_op
Tensor = ops.Tensor


def _lookup(new_name, new_value, old_name, old_value):
    """TensorFlow's deprecated_argument_lookup: at most one of two spellings of an argument."""
    if old_value is not None:
        if new_value is not None:
            raise ValueError("Cannot specify both '%s' and '%s'" % (old_name, new_name))
        return old_value
    return new_value


def _ensure_xent_args(name, labels, logits):
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided for %s. Received: labels=%s and logits=%s"
                         % (name, labels, logits))


def _is_tensor(x):
    return isinstance(x, Tensor) or (hasattr(x, "_as_graph_element") and not isinstance(x, (list, tuple)))


# ---- activations -----------------------------------------------------------------------------


def _is_int(features):
    if isinstance(features, Tensor):
        return features.dtype.base_dtype.is_integer
    if ops._convertible(features) is not None:
        return False
    d = ops._python_dtype(features)
    return d is not None and d.is_integer


def relu(features, name=None):
    """max(features, 0)."""
    if _is_int(features):  # dflow's Relu kernel is float-only; TensorFlow's also takes integers
        features = ops.convert_to_tensor(features)
        return math_ops.maximum(features, array_ops.zeros([], features.dtype.base_dtype), name=name or "Relu")
    return apply_op("Relu", name or "Relu", [features])


def relu6(features, name=None):
    """min(max(features, 0), 6)."""
    with ops.name_scope(name, "Relu6", [features]) as name:
        features = ops.convert_to_tensor(features, name="features")
        if _is_int(features):
            dt = features.dtype.base_dtype
            return math_ops.minimum(math_ops.maximum(features, array_ops.zeros([], dt)),
                                    array_ops.constant(6, dt), name=name)
        return apply_op("Relu6", name, [features])


def elu(features, name=None):
    """exp(features) - 1 where features < 0, else features."""
    return apply_op("Elu", name or "Elu", [features])


def selu(features, name=None):
    """scale * elu(features, alpha) with TensorFlow's constants."""
    return apply_op("Selu", name or "Selu", [features])


def softplus(features, name=None):
    """log(exp(features) + 1)."""
    return apply_op("Softplus", name or "Softplus", [features])


def softsign(features, name=None):
    """features / (abs(features) + 1) (composite: dflow has no Softsign op)."""
    with ops.name_scope(name, "Softsign", [features]) as name:
        features = ops.convert_to_tensor(features, name="features")
        return math_ops.realdiv(features, math_ops.add(math_ops.abs(features), 1), name=name)


def leaky_relu(features, alpha=0.2, name=None):
    """features where features > 0, else alpha * features (TensorFlow's LeakyRelu op)."""
    with ops.name_scope(name, "LeakyRelu", [features, alpha]) as name:
        features = ops.convert_to_tensor(features, name="features")
        if features.dtype.is_integer:
            features = math_ops.cast(features, dtypes.float32)
        if isinstance(alpha, np.ndarray):
            alpha = alpha.item()
        if isinstance(alpha, ops.Tensor):
            # A tensor alpha cannot be the op's float attr: max(alpha * features, features).
            alpha = math_ops.cast(alpha, features.dtype)
            return math_ops.maximum(math_ops.multiply(alpha, features), features, name=name)
        return apply_op("LeakyRelu", name, [features], {"alpha": float(alpha)})


def crelu(features, name=None, axis=-1):
    """relu of [features, -features] concatenated along axis."""
    with ops.name_scope(name, "CRelu", [features]) as name:
        features = ops.convert_to_tensor(features, name="features")
        c = array_ops.concat([features, math_ops.negative(features)], axis, name=name)
        return relu(c)


def swish(features, beta=1.0):
    """features * sigmoid(beta * features)."""
    features = ops.convert_to_tensor(features, name="features")
    beta = math_ops.cast(ops.convert_to_tensor(beta, name="beta"), features.dtype)
    return features * math_ops.sigmoid(beta * features)


silu = swish


def sigmoid(x, name=None):
    """1 / (1 + exp(-x))."""
    with ops.name_scope(name, "Sigmoid", [x]) as name:
        return apply_op("Sigmoid", name, [x])


def tanh(x, name=None):
    with ops.name_scope(name, "Tanh", [x]) as name:
        return apply_op("Tanh", name, [x])


def bias_add(value, bias, data_format=None, name=None):
    """value + bias along the channel dimension (the last, or 1 for "NC..." formats)."""
    with ops.name_scope(name, "BiasAdd", [value, bias]) as name:
        if data_format is not None:
            if data_format.startswith("NC"):
                data_format = "NCHW"
            elif data_format.startswith("N") and data_format.endswith("C"):
                data_format = "NHWC"
            else:
                raise ValueError("`data_format` must be of the form `N...C` or `NC...`. Received: data_format=%s"
                                 % data_format)
        value = ops.convert_to_tensor(value, name="input")
        bias = ops.convert_to_tensor(bias, dtype=value.dtype.base_dtype, name="bias")
        attrs = {"data_format": data_format} if data_format is not None else {}
        if _is_int(value):  # dflow's BiasAdd kernel is float-only; TensorFlow's also takes integers
            bias.shape.assert_has_rank(1)
            if data_format == "NCHW" and value.shape.ndims is not None and value.shape.ndims > 2:
                bias = array_ops.reshape(bias, [-1] + [1] * (value.shape.ndims - 2))
            elif data_format != "NCHW":
                value.shape[-1:].assert_is_compatible_with(bias.shape)
            return math_ops.add(value, bias, name=name)
        return apply_op("BiasAdd", name, [value, bias], attrs)


def bias_add_v1(value, bias, name=None):
    return bias_add(value, bias, name=name)


def xw_plus_b(x, weights, biases, name=None):
    """matmul(x, weights) + biases."""
    with ops.name_scope(name, "xw_plus_b", [x, weights, biases]) as name:
        x = ops.convert_to_tensor(x, name="x")
        weights = ops.convert_to_tensor(weights, name="weights")
        biases = ops.convert_to_tensor(biases, name="biases")
        mm = math_ops.matmul(x, weights)
        return bias_add(mm, biases, name=name)


xw_plus_b_v1 = xw_plus_b


def relu_layer(x, weights, biases, name=None):
    """relu(matmul(x, weights) + biases)."""
    with ops.name_scope(name, "relu_layer", [x, weights, biases]) as name:
        x = ops.convert_to_tensor(x, name="x")
        weights = ops.convert_to_tensor(weights, name="weights")
        biases = ops.convert_to_tensor(biases, name="biases")
        return relu(bias_add(math_ops.matmul(x, weights), biases), name=name)


# ---- softmax ---------------------------------------------------------------------------------


def _swap_axis(x, dim_index, last_index, name=None):
    perm = array_ops.concat([math_ops.range(dim_index), [last_index], math_ops.range(dim_index + 1, last_index),
                             [dim_index]], 0)
    if name is None:
        return array_ops.transpose(x, perm)
    return array_ops.transpose(x, perm, name=name)


def _wrap_2d_function(inputs, op_type, dim=-1, name=None):
    """op_type over dimension `dim` (the op itself works on the last one)."""
    inputs = ops.convert_to_tensor(inputs)
    shape = inputs.shape
    is_last_dim = dim == -1 or (shape.ndims is not None and dim == shape.ndims - 1)
    if is_last_dim:
        return apply_op(op_type, name or op_type, [inputs])
    if isinstance(dim, Tensor):
        raise ValueError("dflow's softmax needs a Python int axis, got the tensor %s" % dim.name)
    if shape.ndims is None:
        raise ValueError("softmax over axis %d needs the rank of its input to be known" % dim)
    if not -shape.ndims <= dim < shape.ndims:
        raise errors.InvalidArgumentError(
            None, None, "`dim` must be in the range [%d, %d) where %d is the number of dimensions in the input. "
            "Received: dim=%d" % (-shape.ndims, shape.ndims, shape.ndims, dim))
    dim_axis = dim % shape.ndims
    input_rank = array_ops.rank(inputs)
    inputs = _swap_axis(inputs, dim_axis, math_ops.subtract(input_rank, 1))
    out = apply_op(op_type, op_type, [inputs])
    out = _swap_axis(out, dim_axis, math_ops.subtract(input_rank, 1), name=name)
    out.set_shape(shape)
    return out


def softmax(logits, axis=None, name=None, dim=None):
    """exp(logits) / reduce_sum(exp(logits), axis) (axis -1 by default)."""
    axis = _lookup("axis", axis, "dim", dim)
    if axis is None:
        axis = -1
    return _wrap_2d_function(logits, "Softmax", axis, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    """logits - log(reduce_sum(exp(logits), axis)) (axis -1 by default)."""
    axis = _lookup("axis", axis, "dim", dim)
    if axis is None:
        axis = -1
    return _wrap_2d_function(logits, "LogSoftmax", axis, name)


def softmax_v2(logits, axis=None, name=None):
    return softmax(logits, axis=axis, name=name)


def log_softmax_v2(logits, axis=None, name=None):
    return log_softmax(logits, axis=axis, name=name)


# ---- convolution and pooling -----------------------------------------------------------------


def _get_sequence(value, n, channel_index, name):
    """A ksize/strides/dilations argument as a list of n + 2 entries."""
    if value is None:
        return [1] * (n + 2)
    if isinstance(value, list):
        pass
    elif isinstance(value, tuple):
        value = list(value)
    elif isinstance(value, int):
        value = [value]
    elif not isinstance(value, collections.abc.Sized):
        value = [value]
    else:
        value = list(value)
    len_value = len(value)
    if len_value == n + 2:
        return value
    if len_value == 1:
        value = value * n
    elif len_value != n:
        raise ValueError("%s should be of length 1, %d or %d. Received: %s=%s of length %d"
                         % (name, n, n + 2, name, value, len_value))
    if channel_index == 1:
        return [1, 1] + value
    return [1] + value + [1]


def convert_padding(padding, expected_length=4):
    explicit_paddings = []
    if padding == "EXPLICIT":
        raise ValueError("'EXPLICIT' is not a valid value for `padding`. To use explicit padding, `padding` must "
                         "be a list.")
    if isinstance(padding, (list, tuple)):
        for i, dim_paddings in enumerate(padding):
            if not isinstance(dim_paddings, (list, tuple)):
                raise ValueError("When `padding` is a list, each element of `padding` must be a list/tuple of size "
                                 "2. Received: padding=%s with element at index %d of type %s"
                                 % (padding, i, type(dim_paddings)))
            if len(dim_paddings) != 2:
                raise ValueError("When `padding` is a list, each element of `padding` must be a list/tuple of size "
                                 "2. Received: padding=%s with element at index %d of size %d"
                                 % (padding, i, len(dim_paddings)))
            explicit_paddings.extend(dim_paddings)
        if len(padding) != expected_length:
            raise ValueError("When padding is a list, it must be of size %d. Received: padding=%s of size %d"
                             % (expected_length, padding, len(padding)))
        padding = "EXPLICIT"
    return padding, explicit_paddings


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True, data_format="NHWC",  # noqa: A002
           dilations=[1, 1, 1, 1], name=None, filters=None):  # noqa: B006 - TensorFlow's default
    """2-D convolution of input [batch, h, w, in] (NHWC) with filter [fh, fw, in, out]."""
    filter = _lookup("filters", filters, "filter", filter)  # noqa: A001
    padding, explicit_paddings = convert_padding(padding)
    if data_format is None:
        data_format = "NHWC"
    channel_index = 1 if data_format.startswith("NC") else 3
    strides = _get_sequence(strides, 2, channel_index, "strides")
    dilations = _get_sequence(dilations, 2, channel_index, "dilations")
    return apply_op("Conv2D", name or "Conv2D", [input, filter],
                    {"strides": strides, "padding": padding, "use_cudnn_on_gpu": use_cudnn_on_gpu,
                     "explicit_paddings": explicit_paddings, "data_format": data_format, "dilations": dilations})


def _depthwise_attrs(strides, padding, data_format, dilations):
    padding, explicit_paddings = convert_padding(padding)
    return {"strides": list(strides), "padding": padding, "explicit_paddings": explicit_paddings,
            "data_format": data_format or "NHWC", "dilations": list(dilations or [1, 1, 1, 1])}


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002
                            dilations=[1, 1, 1, 1], name=None):  # noqa: B006 - TensorFlow's default
    """Depthwise 2-D convolution: input [b, h, w, c] with filter [fh, fw, c, m] gives c * m channels."""
    return apply_op("DepthwiseConv2dNative", name or "DepthwiseConv2dNative", [input, filter],
                    _depthwise_attrs(strides, padding, data_format, dilations))


def depthwise_conv2d_native_backprop_input(input_sizes, filter, out_backprop, strides, padding,  # noqa: A002
                                           data_format="NHWC", dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    """The gradient of depthwise_conv2d_native with respect to its input."""
    return apply_op("DepthwiseConv2dNativeBackpropInput", name or "DepthwiseConv2dNativeBackpropInput",
                    [input_sizes, filter, out_backprop], _depthwise_attrs(strides, padding, data_format, dilations))


def depthwise_conv2d_native_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                                            data_format="NHWC", dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    """The gradient of depthwise_conv2d_native with respect to its filter."""
    return apply_op("DepthwiseConv2dNativeBackpropFilter", name or "DepthwiseConv2dNativeBackpropFilter",
                    [input, filter_sizes, out_backprop], _depthwise_attrs(strides, padding, data_format, dilations))


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None, data_format=None,  # noqa: A002
                     dilations=None):
    """TensorFlow 1.x's depthwise_conv2d: a DepthwiseConv2dNative op (a dilation `rate` goes into
    the op's dilations, which gives TensorFlow's values; TensorFlow itself builds SpaceToBatchND
    around the op there)."""
    if rate is None:
        rate = dilations
    if rate is None:
        rate = [1, 1]
    rate = list(rate) if isinstance(rate, (list, tuple)) else [int(rate), int(rate)]
    if len(rate) != 2:
        raise ValueError("rate must be two-dimensional")
    if any(r != 1 for r in rate) and any(s != 1 for s in strides):
        raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
    with ops.name_scope(name, "depthwise", [input, filter]) as name:
        input = ops.convert_to_tensor(input, name="tensor_in")  # noqa: A001
        filter = ops.convert_to_tensor(filter, name="filter_in")  # noqa: A001
        fmt = data_format or "NHWC"
        dil = [1, 1, rate[0], rate[1]] if fmt.startswith("NC") else [1, rate[0], rate[1], 1]
        return apply_op("DepthwiseConv2dNative", name, [input, filter],
                        _depthwise_attrs(strides, padding, fmt, dil))


def conv2d_v2(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):  # noqa: A002
    if dilations is None:
        dilations = [1, 1, 1, 1]
    return conv2d(input, filters, strides=strides, padding=padding, data_format=data_format, dilations=dilations,
                  name=name)


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None, padding=None,  # noqa: A002
                          use_cudnn_on_gpu=True, data_format="NHWC", dilations=[1, 1, 1, 1], name=None,  # noqa: B006
                          filters=None):
    filter = _lookup("filters", filters, "filter", filter)  # noqa: A001
    padding, explicit_paddings = convert_padding(padding)
    return apply_op("Conv2DBackpropInput", name or "Conv2DBackpropInput", [input_sizes, filter, out_backprop],
                    {"strides": strides, "padding": padding, "use_cudnn_on_gpu": use_cudnn_on_gpu,
                     "explicit_paddings": explicit_paddings, "data_format": data_format, "dilations": dilations})


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding, use_cudnn_on_gpu=True,  # noqa: A002
                           data_format="NHWC", dilations=[1, 1, 1, 1], name=None):  # noqa: B006
    padding, explicit_paddings = convert_padding(padding)
    return apply_op("Conv2DBackpropFilter", name or "Conv2DBackpropFilter", [input, filter_sizes, out_backprop],
                    {"strides": strides, "padding": padding, "use_cudnn_on_gpu": use_cudnn_on_gpu,
                     "explicit_paddings": explicit_paddings, "data_format": data_format, "dilations": dilations})


def conv2d_transpose(value=None, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NHWC", name=None, input=None, filters=None, dilations=None):  # noqa: A002
    """The gradient of conv2d with respect to its input: filter [fh, fw, out, in]."""
    value = _lookup("input", input, "value", value)
    filter = _lookup("filters", filters, "filter", filter)  # noqa: A001
    with ops.name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as name:
        if data_format is None:
            data_format = "NHWC"
        channel_index = 1 if data_format.startswith("NC") else 3
        strides = _get_sequence(strides, 2, channel_index, "strides")
        dilations = _get_sequence(dilations, 2, channel_index, "dilations")
        padding, explicit_paddings = convert_padding(padding)
        if not isinstance(output_shape, Tensor):
            output_shape = np.asarray(output_shape, np.int32)
        return apply_op("Conv2DBackpropInput", name, [output_shape, filter, value],
                        {"strides": strides, "padding": padding, "explicit_paddings": explicit_paddings,
                         "data_format": data_format, "dilations": dilations})


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    """The maximum over ksize windows, strides apart."""
    value = _lookup("input", input, "value", value)
    with ops.name_scope(name, "MaxPool", [value]) as name:
        if data_format is None:
            data_format = "NHWC"
        channel_index = 1 if data_format.startswith("NC") else 3
        ksize = _get_sequence(ksize, 2, channel_index, "ksize")
        strides = _get_sequence(strides, 2, channel_index, "strides")
        if isinstance(padding, (list, tuple)):
            raise ValueError("dflow's MaxPool takes padding 'SAME' or 'VALID', not explicit paddings %s" % (padding,))
        if any(v == 0 for v in ksize):
            raise ValueError("`ksize` cannot be zero. Received: ksize=%s" % (ksize,))
        return apply_op("MaxPool", name, [value], {"ksize": ksize, "strides": strides, "padding": padding,
                                                   "data_format": data_format})


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    return max_pool(input, ksize, strides, padding, data_format=data_format, name=name)


def max_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    return max_pool(input, ksize, strides, padding, data_format=data_format, name=name)


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):  # noqa: A002
    """The mean over ksize windows, strides apart (padded positions left out)."""
    with ops.name_scope(name, "AvgPool", [value]) as name:
        value = _lookup("input", input, "value", value)
        if data_format is None:
            data_format = "NHWC"
        channel_index = 1 if data_format.startswith("NC") else 3
        ksize = _get_sequence(ksize, 2, channel_index, "ksize")
        strides = _get_sequence(strides, 2, channel_index, "strides")
        return apply_op("AvgPool", name, [value], {"ksize": ksize, "strides": strides, "padding": padding,
                                                   "data_format": data_format})


avg_pool2d = avg_pool


def avg_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    return avg_pool(input, ksize, strides, padding, data_format=data_format, name=name)


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None, data_format=None, name=None,
           input=None, dilations=None):  # noqa: A002
    """1-D convolution (NWC or NCW) as a 2-D one over an inserted dimension, as TensorFlow builds it."""
    value = _lookup("input", input, "value", value)
    with ops.name_scope(name, "conv1d", [value, filters]) as name:
        if data_format is None or data_format in ("NHWC", "NWC"):
            data_format, spatial_start_dim, channel_index = "NHWC", -3, 2
        elif data_format in ("NCHW", "NCW"):
            data_format, spatial_start_dim, channel_index = "NCHW", -2, 1
        else:
            raise ValueError("`data_format` must be 'NWC' or 'NCW'. Received: data_format=%s" % data_format)
        strides = [1] + _get_sequence(stride, 1, channel_index, "stride")
        dilations = [1] + _get_sequence(dilations, 1, channel_index, "dilations")
        value = array_ops.expand_dims(value, spatial_start_dim)
        filters = array_ops.expand_dims(filters, 0)
        padding, explicit_paddings = convert_padding(padding)
        result = apply_op("Conv2D", name, [value, filters],
                          {"strides": strides, "padding": padding, "explicit_paddings": explicit_paddings,
                           "data_format": data_format, "dilations": dilations,
                           "use_cudnn_on_gpu": True if use_cudnn_on_gpu is None else use_cudnn_on_gpu})
        return array_ops.squeeze(result, [spatial_start_dim])


def _pool1d(op_type, scope_name, input, ksize, strides, padding, data_format, name):  # noqa: A002
    with ops.name_scope(name, scope_name, [input]) as name:
        if data_format == "NWC":
            data_format, expanding_dim = "NHWC", 1
        else:
            data_format, expanding_dim = "NCHW", 2
        ksize = [1] + _get_sequence(ksize, 1, 2, "ksize")
        strides = [1] + _get_sequence(strides, 1, 2, "strides")
        input = array_ops.expand_dims(input, expanding_dim)  # noqa: A001
        result = apply_op(op_type, name, [input], {"ksize": ksize, "strides": strides, "padding": padding,
                                                   "data_format": data_format})
        return array_ops.squeeze(result, expanding_dim)


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    return _pool1d("MaxPool", "MaxPool1d", input, ksize, strides, padding, data_format, name)


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    return _pool1d("AvgPool", "AvgPool1D", input, ksize, strides, padding, data_format, name)


def convolution(input, filter=None, padding=None, strides=None, dilation_rate=None, name=None,  # noqa: A002
                data_format=None, filters=None, dilations=None):
    """N-D convolution for 1 or 2 spatial dimensions (dflow has no 3-D convolution)."""
    filter = _lookup("filters", filters, "filter", filter)  # noqa: A001
    dilation_rate = _lookup("dilations", dilations, "dilation_rate", dilation_rate)
    input = ops.convert_to_tensor(input, name="input")  # noqa: A001
    n = input.shape.ndims - 2 if input.shape.ndims is not None else None
    if n == 1:
        return conv1d(input, filter, stride=strides or 1, padding=padding, data_format=data_format or "NWC",
                      dilations=dilation_rate, name=name or "convolution")
    if n == 2:
        return conv2d(input, filter, strides=strides or 1, padding=padding, data_format=data_format or "NHWC",
                      dilations=dilation_rate or 1, name=name or "convolution")
    raise ValueError("dflow's convolution takes inputs with 1 or 2 spatial dimensions (rank 3 or 4); got shape %s"
                     % input.shape)


def _check_nhwc(fn_name, data_format):
    if data_format != "NHWC":
        raise ValueError("dflow's %s takes data_format NHWC, got %s" % (fn_name, data_format))


def _block_input(fn_name, input, block_size):  # noqa: A002
    """space_to_depth/depth_to_space's input as a tensor, block_size as an int (at least 2) and the
    input's height, width and depth, which must be known."""
    x = ops.convert_to_tensor(input)
    b = int(block_size)
    if b < 2:
        raise ValueError("Value for attr 'block_size' of %d must be at least minimum 2" % b)
    h, w, c = x.shape.as_list()[1:]
    if h is None or w is None or c is None:
        raise ValueError("dflow's %s needs known height, width and depth" % fn_name)
    return x, b, h, w, c


def space_to_depth(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """Moves block_size x block_size spatial blocks into the depth (NHWC; a composite)."""
    _check_nhwc("space_to_depth", data_format)
    with ops.name_scope(name, "SpaceToDepth", [input]) as name:
        x, b, h, w, c = _block_input("space_to_depth", input, block_size)
        if h % b or w % b:
            raise ValueError("Dimension size must be evenly divisible by %d but is %d" % (b, h if h % b else w))
        y = array_ops.reshape(x, [-1, h // b, b, w // b, b, c])
        y = array_ops.transpose(y, [0, 1, 3, 2, 4, 5])
        return array_ops.reshape(y, [-1, h // b, w // b, b * b * c], name=name)


def depth_to_space(input, block_size, name=None, data_format="NHWC"):  # noqa: A002
    """Moves depth into block_size x block_size spatial blocks (NHWC; a composite)."""
    _check_nhwc("depth_to_space", data_format)
    with ops.name_scope(name, "DepthToSpace", [input]) as name:
        x, b, h, w, c = _block_input("depth_to_space", input, block_size)
        if c % (b * b):
            raise ValueError("Dimension size must be evenly divisible by %d but is %d" % (b * b, c))
        y = array_ops.reshape(x, [-1, h, w, b, b, c // (b * b)])
        y = array_ops.transpose(y, [0, 1, 3, 2, 4, 5])
        return array_ops.reshape(y, [-1, h * b, w * b, c // (b * b)], name=name)


# ---- dropout ---------------------------------------------------------------------------------


def _random_uniform(shape, dtype, seed=None, name=None):
    """Uniform values in [0, 1), seeded as TensorFlow seeds random ops (graph seed, op seed)."""
    seed1, seed2 = ops.get_seed(seed)
    with ops.name_scope(name, "random_uniform", [shape]) as name:
        if isinstance(shape, tensor_shape.TensorShape):
            shape = shape.as_list()
        shape = array_ops._shape_arg(shape)
        return apply_op("RandomUniform", name, [shape], {"dtype": dtype, "seed": seed1 or 0, "seed2": seed2 or 0})


def _get_noise_shape(x, noise_shape):
    if noise_shape is None:
        return array_ops.shape(x)
    try:
        noise_shape_ = tensor_shape.as_shape(noise_shape)
    except (TypeError, ValueError):
        return noise_shape
    if x.shape.dims is not None and len(x.shape.dims) == len(noise_shape_.dims):
        new_dims = []
        for i, dim in enumerate(x.shape.dims):
            nd = tensor_shape.dimension_value(noise_shape_.dims[i])
            d = tensor_shape.dimension_value(dim)
            new_dims.append(d if nd is None and d is not None else nd)
        return tensor_shape.TensorShape(new_dims)
    return noise_shape


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Each element (or each noise_shape slice) kept with probability keep_prob = 1 - rate and
    scaled by 1 / keep_prob, else zeroed."""
    try:
        rate_from_keep_prob = 1.0 - keep_prob if keep_prob is not None else None
    except TypeError:
        raise ValueError("`keep_prob` must be a floating point number or Tensor. Received: keep_prob=%s"
                         % (keep_prob,)) from None
    rate = _lookup("rate", rate, "keep_prob", rate_from_keep_prob)
    if rate is None:
        raise ValueError("`rate` must be provided. Received: rate=%s" % (rate,))
    return dropout_v2(x, rate, noise_shape=noise_shape, seed=seed, name=name)


def dropout_v2(x, rate, noise_shape=None, seed=None, name=None):
    with ops.name_scope(name, "dropout", [x]) as name:
        is_rate_number = isinstance(rate, numbers.Real)
        if is_rate_number and (rate < 0 or rate >= 1):
            raise ValueError("`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate=%s" % rate)
        x = ops.convert_to_tensor(x, name="x")
        x_dtype = x.dtype.base_dtype
        if not x_dtype.is_floating:
            raise ValueError("`x.dtype` must be a floating point tensor as `x` will be scaled. Received: x_dtype=%s"
                             % x_dtype)
        if is_rate_number and rate == 0:
            ops.get_seed(seed)
            return x
        if not _is_tensor(rate):
            if is_rate_number:
                scale = ops.convert_to_tensor(1 / (1 - rate), dtype=x_dtype)
                ret = apply_op("Mul", "Mul", [x, scale])
            else:
                raise ValueError("`rate` must be a scalar or scalar tensor. Received: rate=%s" % (rate,))
        else:
            rate = ops.convert_to_tensor(rate)
            rate.shape.assert_has_rank(0)
            if rate.dtype.base_dtype != x_dtype:
                if not rate.dtype.base_dtype.is_compatible_with(x_dtype):
                    raise ValueError("`x.dtype` must be compatible with `rate.dtype`. Received: x.dtype=%s and "
                                     "rate.dtype=%s" % (x_dtype, rate.dtype))
            if rate.dtype.base_dtype != x_dtype:
                rate = math_ops.cast(rate, x_dtype, name="rate")
            one = array_ops.constant(1, dtype=x_dtype)
            ret = apply_op("RealDiv", "RealDiv", [x, apply_op("Sub", "Sub", [one, rate])])
        noise_shape = _get_noise_shape(x, noise_shape)
        random_tensor = _random_uniform(noise_shape, x_dtype, seed=seed)
        keep_mask = math_ops.greater_equal(random_tensor, rate)
        zero = array_ops.constant(0, dtype=x_dtype)
        ret = array_ops.where_v2(keep_mask, ret, zero)
        ret.set_shape(x.shape)
        return ret


# ---- losses and cross entropies --------------------------------------------------------------


def l2_loss(t, name=None):
    """sum(t ** 2) / 2."""
    return apply_op("L2Loss", name or "L2Loss", [t])


def _check_same_shape(x_name, x, y_name, y):
    """ValueError unless y's static shape is compatible with x's (the cross-entropy losses)."""
    try:
        y.shape.assert_is_compatible_with(x.shape)
    except ValueError:
        raise ValueError("`%s` and `%s` must have the same shape, received (%s vs %s)."
                         % (x_name, y_name, x.shape, y.shape)) from None


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    with ops.name_scope(name, "log_poisson_loss", [log_input, targets]) as name:
        log_input = ops.convert_to_tensor(log_input, name="log_input")
        targets = ops.convert_to_tensor(targets, name="targets")
        _check_same_shape("log_input", log_input, "targets", targets)
        result = math_ops.exp(log_input) - log_input * targets
        if compute_full_loss:
            point_five = array_ops.constant(0.5, dtype=targets.dtype)
            two_pi = array_ops.constant(2 * math.pi, dtype=targets.dtype)
            stirling_approx = (targets * math_ops.log(targets)) - targets + (
                point_five * math_ops.log(two_pi * targets))
            zeros = array_ops.zeros_like(targets, dtype=targets.dtype)
            ones = array_ops.ones_like(targets, dtype=targets.dtype)
            cond = math_ops.logical_and(targets >= zeros, targets <= ones)
            result += array_ops.where(cond, zeros, stirling_approx)
        return result


def _flatten_outer_dims(logits):
    """logits as [-1, last dimension]."""
    rank = array_ops.rank(logits)
    last_dim_size = array_ops.slice(array_ops.shape(logits), array_ops.stack([math_ops.subtract(rank, 1)]), [1])
    output = array_ops.reshape(logits, array_ops.concat([[-1], last_dim_size], 0))
    shape = logits.shape
    if shape.dims is not None:
        dims = shape.as_list()
        product = 1
        for d in dims[:-1]:
            if d is None:
                product = None
                break
            product *= d
        if product is not None:
            output.set_shape([product, dims[-1]])
    return output


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None, name=None, dim=None):
    """-sum(labels * log_softmax(logits), axis); gradients reach labels too."""
    axis = _lookup("axis", axis, "dim", dim)
    if axis is None:
        axis = -1
    with ops.name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as name:
        logits = ops.convert_to_tensor(logits, name="logits")
        labels = ops.convert_to_tensor(labels, name="labels")
        precise_logits = logits
        labels = math_ops.cast(labels, precise_logits.dtype)
        input_rank = array_ops.rank(precise_logits)
        shape = logits.shape
        if axis != -1:
            def _move_dim_to_end(tensor, dim_index, rank):
                return array_ops.transpose(tensor, array_ops.concat(
                    [math_ops.range(dim_index), math_ops.range(dim_index + 1, rank), [dim_index]], 0))
            precise_logits = _move_dim_to_end(precise_logits, axis, input_rank)
            labels = _move_dim_to_end(labels, axis, input_rank)
        input_shape = array_ops.shape(precise_logits)
        precise_logits = _flatten_outer_dims(precise_logits)
        labels = _flatten_outer_dims(labels)
        cost, _ = apply_op("SoftmaxCrossEntropyWithLogits", name, [precise_logits, labels])
        output_shape = array_ops.slice(input_shape, [0], array_ops.stack([math_ops.subtract(input_rank, 1)]))
        cost = array_ops.reshape(cost, output_shape)
        if shape is not None and shape.dims is not None:
            dims = shape.as_list()
            del dims[axis]
            cost.set_shape(dims)
        return cost


def softmax_cross_entropy_with_logits(labels=None, logits=None, dim=-1, name=None, axis=None):
    """-sum(labels * log_softmax(logits), dim); gradients reach logits only (labels are
    stop_gradient'ed)."""
    dim = _lookup("axis", axis, "dim", dim)
    _ensure_xent_args("softmax_cross_entropy_with_logits", labels, logits)
    with ops.name_scope(name, "softmax_cross_entropy_with_logits_sg", [logits, labels]) as name:
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=dim, name=name)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """-log_softmax(logits)[labels] per example; labels are int32/int64 class ids of rank
    rank(logits) - 1."""
    _ensure_xent_args("sparse_softmax_cross_entropy_with_logits", labels, logits)
    with ops.name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]):
        labels = ops.convert_to_tensor(labels)
        logits = ops.convert_to_tensor(logits)
        labels_static_shape = labels.shape
        labels_shape = array_ops.shape(labels)
        logits_shape = logits.shape
        static_defined = labels_static_shape.is_fully_defined() and (
            logits_shape.ndims is not None and tensor_shape.TensorShape(logits_shape.dims[:-1]).is_fully_defined())
        if logits_shape.ndims is not None and logits_shape.ndims == 0:
            raise ValueError("`logits` cannot be a scalar. Received logits=%s`" % (logits,))
        if logits_shape.ndims is not None and labels_static_shape.ndims is not None and \
                labels_static_shape.ndims != logits_shape.ndims - 1:
            raise ValueError("`labels.shape.rank` must equal `logits.shape.rank - 1`. Received: labels.shape=%s of "
                             "rank %s and logits.shape=%s of rank %s" % (labels_static_shape, labels_static_shape.rank,
                                                                        logits_shape, logits_shape.rank))
        if static_defined and labels_static_shape != tensor_shape.TensorShape(logits_shape.dims[:-1]):
            raise ValueError("`labels.shape` must equal `logits.shape` except for the last dimension. Received: "
                             "labels.shape=%s and logits.shape=%s" % (labels_static_shape, logits_shape))
        if logits_shape.ndims == 2:
            cost, _ = apply_op("SparseSoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits",
                               [logits, labels])
            return cost
        num_classes = array_ops.gather(array_ops.shape(logits), array_ops.rank(logits) - 1)
        precise_logits = array_ops.reshape(logits, array_ops.stack([-1, num_classes]))
        flat_labels = array_ops.reshape(labels, [-1])
        cost, _ = apply_op("SparseSoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits",
                           [precise_logits, flat_labels])
        cost = array_ops.reshape(cost, labels_shape)
        cost.set_shape(labels_static_shape)
        return cost


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """max(x, 0) - x * z + log(1 + exp(-abs(x))) for logits x and labels z."""
    _ensure_xent_args("sigmoid_cross_entropy_with_logits", labels, logits)
    with ops.name_scope(name, "logistic_loss", [logits, labels]) as name:
        logits = ops.convert_to_tensor(logits, name="logits")
        labels = ops.convert_to_tensor(labels, name="labels")
        _check_same_shape("logits", logits, "labels", labels)
        zeros = array_ops.zeros_like(logits, dtype=logits.dtype)
        cond = logits >= zeros
        relu_logits = array_ops.where(cond, logits, zeros)
        neg_abs_logits = array_ops.where(cond, -logits, logits)
        return math_ops.add(relu_logits - logits * labels, math_ops.log1p(math_ops.exp(neg_abs_logits)), name=name)


def weighted_cross_entropy_with_logits_v2(labels, logits, pos_weight, name=None):
    with ops.name_scope(name, "logistic_loss", [logits, labels]) as name:
        logits = ops.convert_to_tensor(logits, name="logits")
        labels = ops.convert_to_tensor(labels, name="labels")
        _check_same_shape("logits", logits, "labels", labels)
        log_weight = 1 + (pos_weight - 1) * labels
        return math_ops.add((1 - labels) * logits,
                            log_weight * (math_ops.log1p(math_ops.exp(-math_ops.abs(logits))) + relu(-logits)),
                            name=name)


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None, targets=None):
    """sigmoid cross entropy with the positive term weighted by pos_weight."""
    labels = _lookup("labels", labels, "targets", targets)
    return weighted_cross_entropy_with_logits_v2(labels, logits, pos_weight, name)


def scale_regularization_loss(regularization_loss):
    """The regularization loss summed (one replica: no division)."""
    return math_ops.reduce_sum(regularization_loss) / 1


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """sum(per_example_loss * sample_weight) / global_batch_size (the batch size by default)."""
    per_example_loss = ops.convert_to_tensor(per_example_loss)
    input_dtype = per_example_loss.dtype.base_dtype
    if per_example_loss.shape.ndims == 0:
        raise ValueError("Invalid value passed for `per_example_loss`. Expected a tensor with at least rank 1. "
                         "Received per_example_loss=%s with rank 0" % per_example_loss)
    if sample_weight is not None:
        sample_weight = math_ops.cast(ops.convert_to_tensor(sample_weight), dtypes.float32)
        losses = math_ops.cast(per_example_loss, dtypes.float32)
        wr, lr = sample_weight.shape.ndims, losses.shape.ndims
        if wr is not None and lr is not None and wr != 0:
            if wr - lr == 1:
                sample_weight = array_ops.squeeze(sample_weight, [-1])
            elif lr - wr == 1:
                sample_weight = array_ops.expand_dims(sample_weight, -1)
        per_example_loss = math_ops.cast(math_ops.multiply(losses, sample_weight), input_dtype)
    if global_batch_size is None:
        global_batch_size = array_ops.gather(array_ops.shape(per_example_loss), 0)
    elif isinstance(global_batch_size, numbers.Number) and global_batch_size <= 0:
        raise errors.InvalidArgumentError(None, None, "global_batch_size must be positive.")
    global_batch_size = math_ops.cast(global_batch_size, input_dtype)
    return math_ops.reduce_sum(per_example_loss) / global_batch_size


# ---- normalization and statistics ------------------------------------------------------------


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    axis = _lookup("axis", axis, "dim", dim)
    with ops.name_scope(name, "l2_normalize", [x]) as name:
        x = ops.convert_to_tensor(x, name="x")
        square_sum = math_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        x_inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(x, x_inv_norm, name=name)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """The mean and variance of x over axes."""
    keep_dims = _lookup("keepdims", keepdims, "keep_dims", keep_dims)
    if keep_dims is None:
        keep_dims = False
    with ops.name_scope(name, "moments", [x, axes]):
        y = ops.convert_to_tensor(x)
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        variance = math_ops.reduce_mean(math_ops.squared_difference(y, array_ops.stop_gradient(mean)), axes,
                                        keepdims=True, name="variance")
        if not keep_dims:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        return mean, variance


def weighted_moments(x, axes, frequency_weights, name=None, keep_dims=None, keepdims=None):
    keep_dims = _lookup("keepdims", keepdims, "keep_dims", keep_dims)
    if keep_dims is None:
        keep_dims = False
    with ops.name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = ops.convert_to_tensor(x, name="x")
        frequency_weights = ops.convert_to_tensor(frequency_weights, name="frequency_weights")
        if frequency_weights.dtype != x.dtype:
            frequency_weights = math_ops.cast(frequency_weights, x.dtype)
        weighted_input_sum = math_ops.reduce_sum(frequency_weights * x, axes, name="weighted_input_sum", keepdims=True)
        broadcasted_weights = frequency_weights + array_ops.zeros_like(x)
        sum_of_weights = math_ops.reduce_sum(broadcasted_weights, axes, name="sum_of_weights", keepdims=True)
        weighted_mean = div_no_nan(weighted_input_sum, sum_of_weights)
        weighted_distsq = math_ops.reduce_sum(frequency_weights * math_ops.squared_difference(x, weighted_mean), axes,
                                              name="weighted_distsq", keepdims=True)
        weighted_variance = div_no_nan(weighted_distsq, sum_of_weights)
        if not keep_dims:
            weighted_mean = array_ops.squeeze(weighted_mean, axis=axes)
            weighted_variance = array_ops.squeeze(weighted_variance, axis=axes)
        return weighted_mean, weighted_variance


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    axes = list(set(axes))
    keep_dims = _lookup("keepdims", keepdims, "keep_dims", keep_dims)
    if keep_dims is None:
        keep_dims = False
    with ops.name_scope(name, "sufficient_statistics", [x, shift]):
        x = ops.convert_to_tensor(x, name="x")
        x_shape = x.shape
        if x_shape.ndims is not None and all(x_shape.as_list()[d] is not None for d in axes):
            counts = 1
            for d in axes:
                counts *= x_shape.as_list()[d]
            counts = array_ops.constant(counts, dtype=x.dtype)
        else:
            rank = array_ops.rank(x)
            positive_axes = [axis + rank if axis < 0 else axis for axis in axes]
            x_dims = array_ops.gather(math_ops.cast(array_ops.shape(x), x.dtype), array_ops.stack(positive_axes))
            counts = math_ops.reduce_prod(x_dims, name="count")
        if shift is not None:
            shift = ops.convert_to_tensor(shift, name="shift")
            m_ss = math_ops.subtract(x, shift)
            v_ss = math_ops.squared_difference(x, shift)
        else:
            m_ss = x
            v_ss = math_ops.square(x)
        m_ss = math_ops.reduce_sum(m_ss, axes, keepdims=keep_dims, name="mean_ss")
        v_ss = math_ops.reduce_sum(v_ss, axes, keepdims=keep_dims, name="var_ss")
    return counts, m_ss, v_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    with ops.name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = math_ops.reciprocal(counts, name="divisor")
        if shift is not None:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="shifted_mean")
            mean = math_ops.add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = math_ops.subtract(math_ops.multiply(variance_ss, divisor), math_ops.square(shifted_mean),
                                     name="variance")
    return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + variance_epsilon) + offset."""
    with ops.name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = ops.convert_to_tensor(x)
        inv = math_ops.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv *= scale
        return x * math_ops.cast(inv, x.dtype) + math_ops.cast(
            offset - mean * inv if offset is not None else -mean * inv, x.dtype)


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001, data_format="NHWC",
                     is_training=True, name=None, exponential_avg_factor=1.0):
    """TensorFlow's fused_batch_norm (a FusedBatchNormV3 op): returns (y, batch_mean,
    batch_variance); in training the variance returned is the Bessel-corrected one, blended with
    `variance` by exponential_avg_factor when that is not 1."""
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or variance is None):
        raise ValueError("Both 'mean' and 'variance' must be a 1D tensor when is_training is False or "
                         "exponential_avg_factor != 1.0.")
    x = ops.convert_to_tensor(x, name="input")
    scale = ops.convert_to_tensor(scale, name="scale")
    offset = ops.convert_to_tensor(offset, name="offset")
    if mean is None:
        mean = ops.convert_to_tensor(np.zeros([0], np.float32))
    if variance is None:
        variance = ops.convert_to_tensor(np.zeros([0], np.float32))
    # TensorFlow's minimum epsilon (cuDNN's requirement), kept for identical results.
    min_epsilon = 1.001e-5
    epsilon = epsilon if epsilon > min_epsilon else min_epsilon
    outs = apply_op("FusedBatchNormV3", name or "FusedBatchNormV3", [x, scale, offset, mean, variance],
                    {"epsilon": float(epsilon), "exponential_avg_factor": float(exponential_avg_factor),
                     "data_format": data_format, "is_training": bool(is_training)})
    return outs[0], outs[1], outs[2]


def div_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0 (composite: dflow has no DivNoNan op)."""
    with ops.name_scope(name, "div_no_nan", [x, y]) as name:
        x = ops.convert_to_tensor(x, name="x")
        y = ops.convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        zero = array_ops.zeros_like(y)
        is_zero = math_ops.equal(y, zero)
        safe_y = array_ops.where_v2(is_zero, array_ops.ones_like(y), y)
        q = math_ops.realdiv(x, safe_y)
        return array_ops.where_v2(is_zero, array_ops.zeros_like(q), q, name=name)


def zero_fraction(value, name=None):
    """The fraction of value's elements that are zero, as a float32 scalar."""
    with ops.name_scope(name, "zero_fraction", [value]):
        value = ops.convert_to_tensor(value, name="value")
        size = array_ops.size(value, out_type=dtypes.int64)
        with ops.name_scope("count_nonzero"):
            zero = array_ops.zeros([], dtype=value.dtype)
            num_nonzero = math_ops.reduce_sum(math_ops.cast(math_ops.not_equal(value, zero), dtype=dtypes.int64),
                                              name="nonzero_count")
        with ops.name_scope("counts_to_fraction"):
            num_zero = size - num_nonzero
            num_zero_float32 = math_ops.cast(num_zero, dtype=dtypes.float32)
            size_float32 = math_ops.cast(size, dtype=dtypes.float32)
            zero_fraction_float32 = num_zero_float32 / size_float32
        return array_ops.identity(zero_fraction_float32, "fraction")


# ---- embeddings ------------------------------------------------------------------------------


def _clip_by_norm(t, clip_norm, axes=None, name=None):
    with ops.name_scope(name, "clip_by_norm", [t, clip_norm]) as name:
        t = ops.convert_to_tensor(t, name="t")
        l2sum = math_ops.reduce_sum(t * t, axes, keepdims=True)
        pred = l2sum > 0
        l2sum_safe = array_ops.where(pred, l2sum, array_ops.ones_like(l2sum))
        l2norm = array_ops.where(pred, math_ops.sqrt(l2sum_safe), l2sum)
        intermediate = t * clip_norm
        return array_ops.identity(intermediate / math_ops.maximum(l2norm, clip_norm), name=name)


def _clip(params, ids, max_norm):
    if max_norm is None:
        return params
    ids_rank = ops.convert_to_tensor(ids).shape.ndims
    params_rank = ops.convert_to_tensor(params).shape.ndims
    if not ids_rank or params_rank is None:
        raise ValueError("embedding_lookup with max_norm needs the ranks of params and ids to be known")
    return _clip_by_norm(params, max_norm, axes=list(range(ids_rank, params_rank)))


def _as_params_list(params):
    if params is None:
        raise ValueError("params must be specified")
    if isinstance(params, (list, tuple)) and not params:
        raise ValueError("Length of params is currently 0. Need at least one param.")
    if hasattr(params, "_get_variable_list"):  # a PartitionedVariable
        params = list(params._get_variable_list())
    if not isinstance(params, list):
        params = list(params) if isinstance(params, tuple) else [params]
    return params


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True, max_norm=None):
    """The rows of params (one tensor or variable, or a list of shards of one) for ids: with
    several shards, ids are split among them by "mod" (id % n) or "div" (contiguous ranges)."""
    params = _as_params_list(params)
    with ops.name_scope(name, "embedding_lookup", params + [ids]) as name:
        n = len(params)
        if not any(hasattr(p, "sparse_read") for p in params):
            params = [ops.convert_to_tensor(p, name="params") for p in params]
        ids = ops.convert_to_tensor(ids, name="ids")
        if n == 1:
            with ops.colocate_with(params[0]):
                result = _clip(array_ops.gather(params[0], ids, name=name), ids, max_norm)
            return array_ops.identity(result)
        flat_ids = array_ops.reshape(ids, [-1])
        original_indices = math_ops.range(array_ops.size(flat_ids, out_type=dtypes.int32))
        if partition_strategy == "mod":
            p_assignments = flat_ids % n
            new_ids = flat_ids // n
        elif partition_strategy == "div":
            sizes = [tensor_shape.dimension_value(p.shape[0]) for p in params]
            if all(s is not None for s in sizes):
                num_total_ids = array_ops.constant(sum(sizes), flat_ids.dtype)
            else:
                dim_0_sizes = []
                for p, s in zip(params, sizes):
                    if s is not None:
                        dim_0_sizes.append(array_ops.constant(s, dtypes.int32))
                    else:
                        with ops.colocate_with(p):
                            dim_0_sizes.append(array_ops.gather(array_ops.shape(p), 0))
                num_total_ids = math_ops.reduce_sum(math_ops.cast(array_ops.stack(dim_0_sizes), flat_ids.dtype))
            ids_per_partition = num_total_ids // n
            extras = num_total_ids % n
            p_assignments = math_ops.maximum(flat_ids // (ids_per_partition + 1),
                                             (flat_ids - extras) // ids_per_partition)
            new_ids = array_ops.where(p_assignments < extras, flat_ids % (ids_per_partition + 1),
                                      (flat_ids - extras) % ids_per_partition)
        else:
            raise ValueError("Unrecognized partition strategy: %s.Must be one of either `mod` or `div`."
                             % partition_strategy)
        p_assignments = math_ops.cast(p_assignments, dtypes.int32)
        gather_ids = apply_op("DynamicPartition", "DynamicPartition", [new_ids, p_assignments],
                              {"num_partitions": n})
        pindices = apply_op("DynamicPartition", "DynamicPartition", [original_indices, p_assignments],
                            {"num_partitions": n})
        partitioned_result = []
        for p in range(n):
            with ops.colocate_with(params[p]):
                partitioned_result.append(array_ops.gather(params[p], gather_ids[p]))
        ret = apply_op("DynamicStitch", name, [pindices, partitioned_result], {"N": n})
        element_shape_s = params[0].shape[1:]
        for p in params[1:]:
            element_shape_s = element_shape_s.merge_with(p.shape[1:])
        if element_shape_s.is_fully_defined():
            element_shape_d = np.asarray(element_shape_s.as_list(), np.int32)
        else:
            with ops.colocate_with(params[0]):
                params_shape = array_ops.shape(params[0])
            element_shape_d = params_shape[1:]
        ret = array_ops.reshape(ret, array_ops.concat([array_ops.shape(ids), element_shape_d], 0))
        ret.set_shape(ids.shape.concatenate(element_shape_s))
        return _clip(ret, ids, max_norm)


def embedding_lookup_v2(params, ids, max_norm=None, name=None):
    return embedding_lookup(params, ids, "div", name, max_norm=max_norm)
