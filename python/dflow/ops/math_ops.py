"""TensorFlow's hand-written math functions and the operators of Tensor (t + 1, t @ w, ...)."""
import builtins

import numpy as np

from dflow.framework import dtypes
from dflow.framework import ops
from dflow.ops import array_ops

apply_op = ops.apply_op
Tensor = ops.Tensor


def _binary(op_type, default_name):
    def fn(x, y, name=None):
        return apply_op(op_type, name or default_name, [x, y])
    fn.__name__ = default_name.lower()
    return fn


def _unary(op_type):
    def fn(x, name=None):
        return apply_op(op_type, name or op_type, [x])
    return fn


def add(x, y, name=None):
    if isinstance(x, Tensor) and x.dtype.base_dtype == dtypes.string or \
            isinstance(y, Tensor) and y.dtype.base_dtype == dtypes.string:
        return apply_op("Add", name or "Add", [x, y])
    return apply_op("AddV2", name or "Add", [x, y])


subtract = _binary("Sub", "Sub")
multiply = _binary("Mul", "Mul")
pow = _binary("Pow", "Pow")  # noqa: A001
maximum = _binary("Maximum", "Maximum")
minimum = _binary("Minimum", "Minimum")
squared_difference = _binary("SquaredDifference", "SquaredDifference")
floormod = _binary("FloorMod", "FloorMod")
mod = floormod
realdiv = _binary("RealDiv", "RealDiv")
equal = _binary("Equal", "Equal")
not_equal = _binary("NotEqual", "NotEqual")
less = _binary("Less", "Less")
less_equal = _binary("LessEqual", "LessEqual")
greater = _binary("Greater", "Greater")
greater_equal = _binary("GreaterEqual", "GreaterEqual")
logical_and = _binary("LogicalAnd", "LogicalAnd")
logical_or = _binary("LogicalOr", "LogicalOr")


def logical_not(x, name=None):
    return apply_op("LogicalNot", name or "LogicalNot", [x])


def logical_xor(x, y, name="LogicalXor"):
    with ops.name_scope(name) as scope:
        return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=scope)


negative = _unary("Neg")
neg = negative
abs = _unary("Abs")  # noqa: A001
sign = _unary("Sign")
square = _unary("Square")
sqrt = _unary("Sqrt")
rsqrt = _unary("Rsqrt")
exp = _unary("Exp")
log = _unary("Log")
log1p = _unary("Log1p")
floor = _unary("Floor")
ceil = _unary("Ceil")
round = _unary("Round")  # noqa: A001
reciprocal = _unary("Reciprocal")
sigmoid = _unary("Sigmoid")
tanh = _unary("Tanh")


def _truediv_python3(x, y, name=None):
    with ops.name_scope(name, "truediv") as scope:
        if not isinstance(x, Tensor):
            x = ops.convert_to_tensor(x, dtype=y.dtype.base_dtype if isinstance(y, Tensor) else None, name="x")
        if not isinstance(y, Tensor):
            y = ops.convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        if x.dtype.base_dtype != y.dtype.base_dtype:
            raise TypeError("x and y must have the same dtype, got %r != %r" % (x.dtype, y.dtype))
        if x.dtype.base_dtype.is_integer:
            target = dtypes.float32 if x.dtype.base_dtype.size <= 2 else dtypes.float64
            x, y = cast(x, target), cast(y, target)
        return apply_op("RealDiv", scope, [x, y])


def truediv(x, y, name=None):
    return _truediv_python3(x, y, name or "truediv")


def divide(x, y, name=None):
    if name is not None:
        return _truediv_python3(x, y, name)
    return _truediv_python3(x, y, "truediv")


def div(x, y, name=None):
    """TensorFlow 1.x tf.div: Python 2 semantics (integer division for integers)."""
    x = ops.convert_to_tensor(x) if not isinstance(x, Tensor) and not isinstance(y, Tensor) else x
    if isinstance(x, Tensor) and x.dtype.base_dtype.is_integer or isinstance(y, Tensor) and y.dtype.base_dtype.is_integer:
        return apply_op("FloorDiv", name or "div", [x, y])
    return apply_op("RealDiv", name or "div", [x, y])


def floordiv(x, y, name=None):
    return apply_op("FloorDiv", name or "floordiv", [x, y])


def floor_div(x, y, name=None):
    return apply_op("FloorDiv", name or "FloorDiv", [x, y])


def scalar_mul(scalar, x, name=None):
    with ops.name_scope(name, "scalar_mul") as scope:
        s = ops.convert_to_tensor(scalar, dtype=x.dtype.base_dtype, name="scalar")
        return multiply(s, x)


def add_n(inputs, name=None):
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype and shape")
    if len(inputs) == 1:
        if name:
            return array_ops.identity(inputs[0], name=name)
        return inputs[0]
    return apply_op("AddN", name or "AddN", [list(inputs)])


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    return add_n(inputs, name=name)


def cast(x, dtype, name=None):
    dtype = dtypes.as_dtype(dtype).base_dtype
    if isinstance(x, Tensor) or hasattr(x, "_as_graph_element"):
        x = ops.convert_to_tensor(x)
        if x.dtype.base_dtype == dtype:
            return x
    else:
        x = ops.convert_to_tensor(x)
        if x.dtype.base_dtype == dtype:
            return x
    return apply_op("Cast", name or "Cast", [x], {"DstT": dtype})


def to_float(x, name="ToFloat"):
    return cast(x, dtypes.float32, name=name)


def to_double(x, name="ToDouble"):
    return cast(x, dtypes.float64, name=name)


def to_int32(x, name="ToInt32"):
    return cast(x, dtypes.int32, name=name)


def to_int64(x, name="ToInt64"):
    return cast(x, dtypes.int64, name=name)


def saturate_cast(value, dtype, name=None):
    return cast(value, dtype, name=name)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, output_type=None, name=None):
    transpose_a = transpose_a or adjoint_a
    transpose_b = transpose_b or adjoint_b
    if not isinstance(a, Tensor) and ops._convertible(a) is not None:
        a = ops.convert_to_tensor(a)
    if not isinstance(b, Tensor) and ops._convertible(b) is not None:
        b = ops.convert_to_tensor(b)
    ra = a.shape.ndims if isinstance(a, Tensor) else np.ndim(a)
    rb = b.shape.ndims if isinstance(b, Tensor) else np.ndim(b)
    if (ra is not None and ra > 2) or (rb is not None and rb > 2):
        return apply_op("BatchMatMulV2", name or "MatMul", [a, b], {"adj_x": transpose_a, "adj_y": transpose_b})
    return apply_op("MatMul", name or "MatMul", [a, b], {"transpose_a": transpose_a, "transpose_b": transpose_b})


def _range(start, limit=None, delta=1, dtype=None, name="range"):
    if limit is None:
        start, limit = 0, start
    vals = [start, limit, delta]
    if dtype is None:
        inferred = [v.dtype.base_dtype if isinstance(v, Tensor) else ops._python_dtype(v) for v in vals]
        order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]
        dtype = builtins.max(inferred, key=lambda d: order.index(d) if d in order else 0)
    dtype = dtypes.as_dtype(dtype)
    with ops.name_scope(name, "Range") as scope:
        vals = [cast(v, dtype) if isinstance(v, Tensor) else ops._to_numpy(v, dtype) for v in vals]
        return apply_op("Range", scope, vals)


range = _range  # noqa: A001


def _axis_arg(axis, x):
    if axis is None:
        r = x.shape.ndims
        if r is not None:
            return np.arange(r, dtype=np.int32)
        return _range(0, array_ops.rank(x))
    if isinstance(axis, Tensor):
        return axis
    return np.asarray(axis, dtype=np.int32)


def _reduce(op_type, default):
    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        if axis is None:
            axis = reduction_indices
        if keepdims is None:
            keepdims = bool(keep_dims)
        x = input_tensor
        if not isinstance(x, Tensor) and ops._convertible(x) is not None:
            x = ops.convert_to_tensor(x)
        if isinstance(x, Tensor):
            ax = _axis_arg(axis, x)
        elif axis is None:
            ax = np.arange(np.ndim(x), dtype=np.int32)  # a Python value: its rank is known
        else:
            ax = axis if isinstance(axis, Tensor) else np.asarray(axis, dtype=np.int32)
        return apply_op(op_type, name or default, [x, ax], {"keep_dims": bool(keepdims)})
    return fn


reduce_sum = _reduce("Sum", "Sum")
reduce_mean = _reduce("Mean", "Mean")
reduce_max = _reduce("Max", "Max")
reduce_min = _reduce("Min", "Min")
reduce_prod = _reduce("Prod", "Prod")


def _reduce_bool(reduce_fn, default_name, input_tensor, axis, keepdims, name, reduction_indices, keep_dims):
    """reduce_any (reduce_max) and reduce_all (reduce_min) of the input as 0/1, then > 0."""
    if axis is None:
        axis = reduction_indices
    keepdims = bool(keepdims or keep_dims)
    with ops.name_scope(name, default_name) as scope:
        x = cast(input_tensor, dtypes.float32)
        return greater(reduce_fn(x, axis, keepdims), 0.0, name=scope)


def reduce_any(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
    return _reduce_bool(reduce_max, "Any", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_all(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
    return _reduce_bool(reduce_min, "All", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None, keep_dims=None):
    if axis is None:
        axis = reduction_indices
    keepdims = bool(keepdims or keep_dims)
    with ops.name_scope(name, "ReduceLogSumExp", [input_tensor]) as name:
        x = ops.convert_to_tensor(input_tensor)
        raw_max = reduce_max(x, axis, keepdims=True)
        # TensorFlow's: the max is subtracted where it is finite (x - x is 0 only for finite x).
        zero = array_ops.zeros_like(raw_max)
        my_max = array_ops.stop_gradient(array_ops.where_v2(equal(raw_max - raw_max, zero), raw_max, zero))
        result = log(reduce_sum(exp(x - my_max), axis, keepdims=keepdims))
        if not keepdims:
            my_max = array_ops.reshape(my_max, array_ops.shape(result))
        return add(result, my_max, name=name)


def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None, input=None):  # noqa: A002
    if input_tensor is None:
        input_tensor = input
    if axis is None:
        axis = reduction_indices
    keepdims = bool(keepdims or keep_dims)
    with ops.name_scope(name, "count_nonzero"):
        x = ops.convert_to_tensor(input_tensor)
        nz = cast(not_equal(x, array_ops.zeros((), dtype=x.dtype.base_dtype)), dtypes.int64)
        return cast(reduce_sum(nz, axis, keepdims), dtype)


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    if axis is None:
        axis = dimension if dimension is not None else 0
    return apply_op("ArgMax", name or "ArgMax", [input, np.int32(axis) if not isinstance(axis, Tensor) else axis],
                    {"output_type": output_type})


def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):  # noqa: A002
    if axis is None:
        axis = dimension if dimension is not None else 0
    return apply_op("ArgMin", name or "ArgMin", [input, np.int32(axis) if not isinstance(axis, Tensor) else axis],
                    {"output_type": output_type})


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    return apply_op("UnsortedSegmentSum", name, [data, segment_ids, num_segments])


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    with ops.name_scope(name, "clip_by_value") as scope:
        t = ops.convert_to_tensor(t)
        return maximum(minimum(t, clip_value_max), clip_value_min, name=scope)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    if axis is None:
        axis = dim
    with ops.name_scope(name, "l2_normalize") as scope:
        x = ops.convert_to_tensor(x)
        sq = reduce_sum(square(x), axis, keepdims=True)
        return multiply(x, rsqrt(maximum(sq, epsilon)), name=scope)


def tensordot(a, b, axes, name=None):
    raise NotImplementedError("tensordot is not available in dflow yet")


# ---- operators on Tensor ---------------------------------------------------------------------


def _convert_other(x, other):
    if isinstance(other, Tensor):
        return other
    fn = ops._convertible(other)
    if fn is not None:
        return fn(other, dtype=None, name=None, as_ref=False)
    return other


def _binary_operator(op_type, name):
    def forward(x, y):
        y = _convert_other(x, y)
        return apply_op(op_type, name, [x, y])

    def reverse(y, x):
        x = _convert_other(y, x)
        if not isinstance(x, Tensor):
            with ops.name_scope(None, name) as scope:
                xt = ops.convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x")
                return apply_op(op_type, scope, [xt, y])
        return apply_op(op_type, name, [x, y])
    return forward, reverse


def _add_op(x, y):
    y = _convert_other(x, y)
    if x.dtype.base_dtype == dtypes.string:
        return apply_op("Add", "add", [x, y])
    return apply_op("AddV2", "add", [x, y])


def _radd_op(y, x):
    x = _convert_other(y, x)
    if not isinstance(x, Tensor):
        with ops.name_scope(None, "add") as scope:
            xt = ops.convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x")
            return apply_op("AddV2" if y.dtype.base_dtype != dtypes.string else "Add", scope, [xt, y])
    return apply_op("AddV2", "add", [x, y])


def _truediv_op(x, y):
    return _truediv_python3(x, _convert_other(x, y), "truediv")


def _rtruediv_op(y, x):
    return _truediv_python3(_convert_other(y, x), y, "truediv")


def _matmul_op(x, y):
    return matmul(x, _convert_other(x, y), name="matmul")


def _rmatmul_op(y, x):
    return matmul(_convert_other(y, x), y, name="matmul")


def _getitem(self, spec):
    return array_ops._slice_helper(self, spec)


Tensor.__add__ = _add_op
Tensor.__radd__ = _radd_op
Tensor.__sub__, Tensor.__rsub__ = _binary_operator("Sub", "sub")
Tensor.__mul__, Tensor.__rmul__ = _binary_operator("Mul", "mul")
Tensor.__truediv__ = _truediv_op
Tensor.__rtruediv__ = _rtruediv_op
Tensor.__floordiv__, Tensor.__rfloordiv__ = _binary_operator("FloorDiv", "floordiv")
Tensor.__mod__, Tensor.__rmod__ = _binary_operator("FloorMod", "mod")
Tensor.__pow__, Tensor.__rpow__ = _binary_operator("Pow", "pow")
Tensor.__and__, Tensor.__rand__ = _binary_operator("LogicalAnd", "and")
Tensor.__or__, Tensor.__ror__ = _binary_operator("LogicalOr", "or")
Tensor.__lt__ = lambda x, y: apply_op("Less", "Less", [x, _convert_other(x, y)])
Tensor.__le__ = lambda x, y: apply_op("LessEqual", "LessEqual", [x, _convert_other(x, y)])
Tensor.__gt__ = lambda x, y: apply_op("Greater", "Greater", [x, _convert_other(x, y)])
Tensor.__ge__ = lambda x, y: apply_op("GreaterEqual", "GreaterEqual", [x, _convert_other(x, y)])
Tensor.__neg__ = lambda x: apply_op("Neg", "Neg", [x])
Tensor.__abs__ = lambda x: apply_op("Abs", "Abs", [x])
Tensor.__invert__ = lambda x: apply_op("LogicalNot", "LogicalNot", [x])
Tensor.__matmul__ = _matmul_op
Tensor.__rmatmul__ = _rmatmul_op
Tensor.__getitem__ = _getitem
