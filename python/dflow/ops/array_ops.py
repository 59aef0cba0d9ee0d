"""TensorFlow's hand-written array functions: constant, placeholder, zeros, reshape, concat, ..."""
import numpy as np

from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.ops import gen_ops

apply_op = ops.apply_op


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A Const node holding `value` (reshaped or broadcast to `shape` when given)."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype).base_dtype
    else:
        if isinstance(value, ops.Tensor):
            raise TypeError("Expected a Python value or numpy array for tf.constant, got a Tensor")
        dtype = ops._python_dtype(value)
        if dtype is None:
            raise TypeError("Failed to convert object of type %s to Tensor. Contents: %s." % (type(value), value))
    arr = np.asarray(ops._to_numpy(value, dtype), dtype=dtype.as_numpy_dtype)
    if shape is not None:
        shape = [int(d) for d in tensor_shape.as_shape(shape).as_list()]
        n = int(np.prod(shape)) if shape else 1
        if arr.size == n:
            arr = arr.reshape(shape)
        elif arr.size == 1:
            arr = np.full(shape, arr.reshape(()), dtype=arr.dtype)
        elif verify_shape or arr.size > n or arr.size == 0:
            raise TypeError("Expected Tensor's shape: %s, got %s." % (tuple(shape), arr.shape))
        else:
            # TensorFlow 1.x fills the rest with the last value.
            flat = np.empty(n, dtype=arr.dtype)
            flat[:arr.size] = arr.reshape(-1)
            flat[arr.size:] = arr.reshape(-1)[-1]
            arr = flat.reshape(shape)
    return ops.constant_value_op(arr, dtype, name)


def placeholder(dtype, shape=None, name=None):
    dtype = dtypes.as_dtype(dtype)
    attrs = {"dtype": dtype._enum, "shape": tensor_shape.as_shape(shape).as_proto() if shape is not None else None}
    return apply_op("Placeholder", name, [], attrs)


def placeholder_with_default(input, shape, name=None):  # noqa: A002
    return apply_op("PlaceholderWithDefault", name, [input],
                    {"shape": tensor_shape.as_shape(shape).as_proto()})


def identity(input, name=None):  # noqa: A002
    if hasattr(input, "value") and not isinstance(input, ops.Tensor) and callable(input.value):
        input = input.value()
    return apply_op("Identity", name, [input])


def identity_n(input, name=None):  # noqa: A002
    """Its list of tensors, unchanged (an IdentityN op); a list."""
    outs = apply_op("IdentityN", name or "IdentityN", [list(input)])
    return list(outs) if isinstance(outs, (list, tuple)) else [outs]


def stop_gradient(input, name=None):  # noqa: A002
    return apply_op("StopGradient", name, [input])


def _shape_arg(shape):
    if isinstance(shape, ops.Tensor):
        return shape
    if isinstance(shape, tensor_shape.TensorShape):
        if not shape.is_fully_defined():
            raise ValueError("Cannot convert a partially known TensorShape %s to a Tensor." % shape)
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)) and any(isinstance(s, ops.Tensor) for s in shape):
        return stack([s if isinstance(s, ops.Tensor) else constant(s, dtypes.int32) for s in shape])
    return np.asarray(shape, dtype=np.int32).reshape(-1) if not np.isscalar(shape) else np.asarray([shape], np.int32)


def fill(dims, value, name=None):
    return apply_op("Fill", name, [_shape_arg(dims), value])


def _filled(np_fill, default_name, shape, dtype, name):
    """zeros/ones: np_fill (numpy.zeros or numpy.ones) as a Const when small, else a Fill."""
    dtype = dtypes.as_dtype(dtype)
    with ops.name_scope(name, default_name) as scope:
        if not isinstance(shape, ops.Tensor):
            try:
                dims = tensor_shape.as_shape(shape).as_list()
                # A Const only when small (TensorFlow's rule: fewer than 1000 elements), else a Fill.
                if all(d is not None for d in dims) and np.prod(dims, dtype=object) < 1000:
                    return constant(np_fill(dims, dtype=dtype.as_numpy_dtype), dtype=dtype, name=scope)
            except (TypeError, ValueError):
                pass
        return fill(_shape_arg(shape), np_fill((), dtype.as_numpy_dtype), name=scope)


def zeros(shape, dtype=dtypes.float32, name=None):
    return _filled(np.zeros, "zeros", shape, dtype, name)


def ones(shape, dtype=dtypes.float32, name=None):
    return _filled(np.ones, "ones", shape, dtype, name)


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    tensor = ops.convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype.base_dtype:
        return zeros(shape(tensor), dtype=dtype, name=name)
    return apply_op("ZerosLike", name, [tensor])


def ones_like(tensor, dtype=None, name=None, optimize=True):
    tensor = ops.convert_to_tensor(tensor)
    if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype.base_dtype:
        return ones(shape(tensor), dtype=dtype, name=name)
    return apply_op("OnesLike", name, [tensor])


def shape(input, name=None, out_type=dtypes.int32):  # noqa: A002
    return apply_op("Shape", name, [input], {"out_type": out_type})


def size(input, name=None, out_type=dtypes.int32):  # noqa: A002
    return apply_op("Size", name, [input], {"out_type": out_type})


def rank(input, name=None):  # noqa: A002
    return apply_op("Rank", name, [input])


def reshape(tensor, shape, name=None):  # noqa: F811
    return apply_op("Reshape", name, [tensor, _shape_arg(shape)])


def expand_dims(input, axis=None, name=None, dim=None):  # noqa: A002
    if axis is None:
        axis = dim
    return apply_op("ExpandDims", name, [input, np.int32(axis) if not isinstance(axis, ops.Tensor) else axis])


def squeeze(input, axis=None, name=None, squeeze_dims=None):  # noqa: A002
    if axis is None:
        axis = squeeze_dims
    if axis is None:
        axis = []
    elif isinstance(axis, int):
        axis = [axis]
    return apply_op("Squeeze", name, [input], {"squeeze_dims": list(axis)})


def transpose(a, perm=None, name="transpose", conjugate=False):
    a = ops.convert_to_tensor(a)
    if perm is None:
        r = a.shape.ndims
        if r is not None:
            perm = np.arange(r - 1, -1, -1, dtype=np.int32)
        else:
            rk = rank(a)
            from dflow.ops import math_ops
            perm = math_ops.range(rk - 1, -1, -1)
    return apply_op("Transpose", name, [a, perm])


def concat(values, axis, name="concat"):
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:
        with ops.name_scope(name) as scope:
            return identity(values[0], name=scope)
    return apply_op("ConcatV2", name, [list(values), np.int32(axis) if not isinstance(axis, ops.Tensor) else axis])


def stack(values, axis=0, name="stack"):
    values = list(values)
    if axis == 0 and values and not ops._holds_tensor(values) and \
            not any(isinstance(v, np.ndarray) and v.ndim for v in values):
        # Python numbers only: one Const, typed as a Python list is (TensorFlow's stack; a
        # list holding arrays fails that conversion there and is packed).
        try:
            return ops.convert_to_tensor(values, name=name)
        except (TypeError, ValueError):
            pass
    return apply_op("Pack", name, [values], {"axis": axis})


pack = stack


def unstack(value, num=None, axis=0, name="unstack"):
    value = ops.convert_to_tensor(value)
    if num is None:
        s = value.shape
        if s.ndims is None or s[axis] is None:
            raise ValueError("Cannot infer argument `num` from shape %s" % s)
        num = s[axis]
    r = apply_op("Unpack", name, [value], {"num": num, "axis": axis})
    return r if isinstance(r, list) else [r]


unpack = unstack


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    value = ops.convert_to_tensor(value)
    ax = np.int32(axis) if not isinstance(axis, ops.Tensor) else axis
    if isinstance(num_or_size_splits, int):
        r = apply_op("Split", name, [ax, value], {"num_split": num_or_size_splits})
        return r if isinstance(r, list) else [r]
    sizes = num_or_size_splits
    if num is None:
        num = len(sizes) if not isinstance(sizes, ops.Tensor) else sizes.shape[0]
    r = apply_op("SplitV", name, [value, np.asarray(sizes, np.int32) if not isinstance(sizes, ops.Tensor) else sizes,
                                  ax], {"num_split": num})
    return r if isinstance(r, list) else [r]


def slice(input_, begin, size, name=None):  # noqa: A001
    return apply_op("Slice", name, [input_, _shape_arg(begin), _shape_arg(size)])


def tile(input, multiples, name=None):  # noqa: A002
    return apply_op("Tile", name, [input, _shape_arg(multiples)])


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    if mode.upper() != "CONSTANT":
        raise ValueError("dflow supports only CONSTANT padding, got mode %s" % mode)
    if constant_values != 0:
        tensor = ops.convert_to_tensor(tensor)
        return apply_op("PadV2", name, [tensor, np.asarray(paddings, np.int32) if not isinstance(paddings, ops.Tensor)
                                        else paddings, constant_values])
    return apply_op("Pad", name, [tensor, np.asarray(paddings, np.int32) if not isinstance(paddings, ops.Tensor)
                                  else paddings])


def gather(params, indices, validate_indices=None, name=None, axis=0, batch_dims=0):
    if hasattr(params, "sparse_read") and not isinstance(params, ops.Tensor) and axis == 0:
        return params.sparse_read(indices, name=name)
    return apply_op("GatherV2", name, [params, indices, np.int32(axis) if not isinstance(axis, ops.Tensor) else axis])


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    if dtype is None:
        dtype = dtypes.float32 if on_value is None else ops.convert_to_tensor(on_value).dtype
    dtype = dtypes.as_dtype(dtype)
    on = on_value if on_value is not None else np.ones((), dtype.as_numpy_dtype)
    off = off_value if off_value is not None else np.zeros((), dtype.as_numpy_dtype)
    return apply_op("OneHot", name, [indices, np.int32(depth) if not isinstance(depth, ops.Tensor) else depth, on, off],
                    {"axis": -1 if axis is None else axis})


def where(condition, x=None, y=None, name=None):
    if x is None and y is None:
        raise ValueError("dflow's where needs x and y (Where with one argument is not registered)")
    return apply_op("Select", name, [condition, x, y])


def where_v2(condition, x=None, y=None, name=None):
    return apply_op("SelectV2", name, [condition, x, y])


def broadcast_to(input, shape, name=None):  # noqa: A002
    return apply_op("BroadcastTo", name, [input, _shape_arg(shape)])


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0, var=None, name=None):
    if strides is None:
        strides = [1] * (len(begin) if not isinstance(begin, ops.Tensor) else begin.shape[0])
    return apply_op("StridedSlice", name, [input_, _shape_arg(begin), _shape_arg(end), _shape_arg(strides)],
                    {"begin_mask": begin_mask, "end_mask": end_mask, "ellipsis_mask": ellipsis_mask,
                     "new_axis_mask": new_axis_mask, "shrink_axis_mask": shrink_axis_mask})


def _slice_helper(tensor, slice_spec):
    """Tensor.__getitem__: TensorFlow's strided-slice indexing (ints, slices, ..., tf.newaxis)."""
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = [slice_spec]
    begin, end, strides = [], [], []
    shrink, new_axis, ellipsis, begin_mask, end_mask = 0, 0, 0, 0, 0
    tensors = False
    for i, s in enumerate(slice_spec):
        if isinstance(s, type(builtins_slice(0))):
            b, e, st = s.start, s.stop, s.step
            if b is None:
                b = 0
                begin_mask |= 1 << i
            if e is None:
                e = 0
                end_mask |= 1 << i
            if st is None:
                st = 1
            begin.append(b)
            end.append(e)
            strides.append(st)
            tensors |= any(isinstance(x, ops.Tensor) for x in (b, e, st))
        elif s is Ellipsis:
            begin.append(0)
            end.append(0)
            strides.append(1)
            ellipsis |= 1 << i
        elif s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            new_axis |= 1 << i
        else:
            if isinstance(s, ops.Tensor):
                tensors = True
                begin.append(s)
                from dflow.ops import math_ops
                end.append(math_ops.add(s, 1))
            else:
                s = int(s)
                begin.append(s)
                end.append(s + 1 if s != -1 else 0)
                if s == -1:
                    end_mask |= 1 << i
            strides.append(1)
            shrink |= 1 << i
    if tensors:
        def pack_(xs):
            return stack([x if isinstance(x, ops.Tensor) else constant(x, dtypes.int32) for x in xs])
        b, e, st = pack_(begin), pack_(end), pack_(strides)
    else:
        b, e, st = (np.asarray(begin, np.int32), np.asarray(end, np.int32), np.asarray(strides, np.int32))
    return apply_op("StridedSlice", "strided_slice", [tensor, b, e, st],
                    {"begin_mask": begin_mask, "end_mask": end_mask, "ellipsis_mask": ellipsis,
                     "new_axis_mask": new_axis, "shrink_axis_mask": shrink})


import builtins as _builtins  # noqa: E402

builtins_slice = _builtins.slice


def _autopacking(values, dtype, name):
    converted = []
    for v in values:
        if isinstance(v, (list, tuple)):
            v = _autopacking(v, dtype, name)
        converted.append(v)
    tensors = [v for v in converted if isinstance(v, ops.Tensor)]
    dt = dtype or (tensors[0].dtype.base_dtype if tensors else None)
    items = [v if isinstance(v, ops.Tensor) else ops.convert_to_tensor(v, dtype=dt) for v in converted]
    return stack(items, name=name)


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    from dflow.ops import math_ops
    with ops.name_scope(name, "SequenceMask"):
        lengths = ops.convert_to_tensor(lengths)
        if maxlen is None:
            maxlen = math_ops.reduce_max(lengths)
        r = math_ops.range(0, maxlen, 1)
        m = math_ops.less(r, expand_dims(lengths, -1))
        return m if dtypes.as_dtype(dtype) == dtypes.bool else math_ops.cast(m, dtype)



def reverse(tensor, axis, name=None):
    """tf.reverse (ReverseV2): `tensor` with the dimensions in `axis` reversed."""
    return apply_op("ReverseV2", name, [tensor, axis])


reverse_v2 = reverse


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None, seq_dim=None,  # noqa: A002
                     batch_dim=None):
    """tf.reverse_sequence: the first seq_lengths[b] slices along seq_axis of each row b reversed."""
    seq_axis = seq_axis if seq_axis is not None else seq_dim
    batch_axis = batch_axis if batch_axis is not None else (batch_dim if batch_dim is not None else 0)
    if seq_axis is None:
        raise ValueError("reverse_sequence needs seq_axis")
    return apply_op("ReverseSequence", name, [input, seq_lengths], {"seq_dim": seq_axis, "batch_dim": batch_axis})


newaxis = None
