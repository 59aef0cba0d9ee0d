"""tf.gradients over the C++ API's symbolic differentiation (AddGradients).

    grads = tf.gradients(loss, [w, b])   # built under "gradients/"; None where no gradient flows

As in TensorFlow, an x that no y depends on (or only through ops without gradients such as
tf.stop_gradient) gets None, unless unconnected_gradients="zero". Variables are differentiated
through their reference output, as TensorFlow's ref variables are.
"""
import enum

from dflow import _dflow
from dflow.framework import ops
from dflow.ops import array_ops


class UnconnectedGradients(enum.Enum):
    NONE = "none"
    ZERO = "zero"


class AggregationMethod:
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def _as_list(x):
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _as_y(y):
    if isinstance(y, ops.Tensor):
        return y
    return ops.convert_to_tensor(y, name="y")


def _as_x(x):
    if isinstance(x, ops.Tensor):
        return x
    if hasattr(x, "_ref") and callable(x._ref):
        return x._ref()
    return ops.convert_to_tensor(x, name="x")


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False, gate_gradients=False,
              aggregation_method=None, stop_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
    """The symbolic derivatives of sum(ys) with respect to each of xs (None where none flows)."""
    if stop_gradients:
        raise NotImplementedError("tf.gradients(stop_gradients=...) is not supported by dflow; wrap the tensors "
                                  "in tf.stop_gradient instead")
    unconnected_gradients = UnconnectedGradients(unconnected_gradients)
    ys = [_as_y(y) for y in _as_list(ys)]
    xs_list = _as_list(xs)
    xs = [_as_x(x) for x in xs_list]
    g = ops.get_default_graph()
    for t in ys + xs:
        if t.graph is not g:
            raise ValueError("Tensor %s must be from the same graph as the default graph." % t.name)
    gy = []
    if grad_ys is not None:
        grad_ys = _as_list(grad_ys)
        if len(grad_ys) != len(ys):
            raise ValueError("Passed %d grad_ys for %d ys" % (len(grad_ys), len(ys)))
        if any(v is not None for v in grad_ys):
            with ops.name_scope(name + "_grad_ys" if name else "gradients_grad_ys"):
                for i, (y, v) in enumerate(zip(ys, grad_ys)):
                    if v is None:
                        v = array_ops.ones_like(y, name="grad_ys_%d" % i)
                    else:
                        v = ops.convert_to_tensor(v, dtype=y.dtype.base_dtype, name="grad_ys_%d" % i)
                    gy.append(v)
    prefix = g._scope.name_prefix + (name or "gradients")
    if prefix.endswith("/"):
        prefix = prefix[:-1]
    outs = _dflow.gradients(g._scope, [y._out for y in ys], [x._out for x in xs], [v._out for v in gy], prefix)
    result = []
    for x, o in zip(xs, outs):
        if o is None:
            if unconnected_gradients == UnconnectedGradients.ZERO:
                result.append(array_ops.zeros_like(x))
            else:
                result.append(None)
        else:
            result.append(g._tensor_of(o))
    return result


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False, gate_gradients=False,
             aggregation_method=None):
    """Second derivatives of sum(ys) for each x (only for 1-D xs of known size, unrolled)."""
    from dflow.ops import array_ops as aops
    xs = _as_list(xs)
    out = []
    with ops.name_scope(name):
        for x in xs:
            x_t = _as_x(x)
            n = x_t.shape.num_elements() if x_t.shape.is_fully_defined() else None
            if n is None:
                raise NotImplementedError("tf.hessians needs a variable of fully defined shape in dflow")
            (grad,) = gradients(ys, x_t)
            flat = aops.reshape(grad, [-1])
            rows = []
            for i in range(n):
                (row,) = gradients(flat[i], x_t, unconnected_gradients="zero")
                rows.append(aops.reshape(row, [-1]))
            out.append(aops.reshape(aops.stack(rows), x_t.shape.as_list() + x_t.shape.as_list()))
    return out
