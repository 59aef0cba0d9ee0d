"""tf.TensorArray (TensorFlow 1.x's graph-mode class over TensorArrayV3 and its ops).

A TensorArray is a handle (a resource) and a flow (a float scalar). Every write returns a new
TensorArray object with the same handle and a new flow; reads take the flow as input, so the
order of the ops follows the data. tf.while_loop carries a TensorArray as its flow and rebuilds
it in the body and at the exits (control_flow_ops). Gradients go to a gradient array per
gradient source (see src/ops/tensor_array/tensor_array_grad.cc)."""
from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape
from dflow.framework.ops import apply_op
from dflow.ops import array_ops
from dflow.ops import math_ops

__all__ = ["TensorArray"]


def _shape_attr(shape):
    return tensor_shape.as_shape(shape).as_proto()


class TensorArray(object):
    """Class wrapping dynamic-sized, per-time-step, write-once Tensor arrays (tf.TensorArray)."""

    _is_tensor_array = True  # what tf.while_loop looks for

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
                 name=None):
        if clear_after_read is None:
            clear_after_read = True
        dynamic_size = dynamic_size or False
        if handle is not None and tensor_array_name:
            raise ValueError("Cannot construct with both handle and tensor_array_name")
        if handle is not None and not isinstance(handle, ops.Tensor):
            raise TypeError("Handle must be a Tensor")
        if handle is None and size is None:
            raise ValueError("Size must be provided if handle is not provided")
        if handle is not None and size is not None:
            raise ValueError("Cannot provide both a handle and size at the same time")
        if handle is not None and element_shape is not None:
            raise ValueError("Cannot provide both a handle and element_shape at the same time")
        if handle is not None and dynamic_size is not False:
            raise ValueError("Cannot provide both a handle and dynamic_size at the same time")
        if handle is not None and clear_after_read is not True:
            raise ValueError("Cannot provide both a handle and clear_after_read at the same time")
        if handle is not None and flow is None:
            raise ValueError("flow must not be None if handle is not None")
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._dynamic_size = dynamic_size
        self._infer_shape = infer_shape
        # A list of one shape, shared by every TensorArray built from this one (writes refine it).
        self._element_shape = [tensor_shape.as_shape(element_shape) if element_shape is not None
                               else tensor_shape.TensorShape(None)]
        self._size = None  # the size tensor this array was made with (stack's static shape)
        if handle is not None:
            self._handle = handle
            self._flow = flow
            return
        with ops.name_scope(name, "TensorArray", [handle, size, flow]):
            attrs = {"dtype": self._dtype._enum, "dynamic_size": dynamic_size, "clear_after_read": clear_after_read,
                     "identical_element_shapes": bool(infer_shape), "tensor_array_name": tensor_array_name or ""}
            if element_shape is not None:
                attrs["element_shape"] = _shape_attr(element_shape)
            self._size = ops.convert_to_tensor(size, dtype=dtypes.int32, name="size")
            size = self._size
            self._handle, self._flow = apply_op("TensorArrayV3", "TensorArrayV3", [size], attrs)

    # ---- properties ----
    @property
    def flow(self):
        """The flow Tensor forcing ops leading to this TensorArray state."""
        return self._flow

    @property
    def dtype(self):
        return self._dtype

    @property
    def handle(self):
        return self._handle

    @property
    def element_shape(self):
        return self._element_shape[0]

    @property
    def dynamic_size(self):
        return self._dynamic_size

    @property
    def _infer_shape_flag(self):
        return self._infer_shape

    def _with_flow(self, flow):
        """A TensorArray on the same handle with a new flow (sharing the element shape)."""
        ta = TensorArray(dtype=self._dtype, handle=self._handle, flow=flow, infer_shape=self._infer_shape)
        ta._element_shape = self._element_shape
        ta._dynamic_size = self._dynamic_size
        ta._size = self._size
        return ta

    def _merge_element_shape(self, shape):
        shape = tensor_shape.as_shape(shape)
        if not self._element_shape[0].is_compatible_with(shape):
            raise ValueError("Inconsistent shapes: saw %s but expected %s " % (shape, self._element_shape[0]))
        self._element_shape[0] = self._element_shape[0].merge_with(shape)

    def _check_dtype(self, value):
        if value.dtype.base_dtype != self._dtype:
            raise ValueError("TensorArray dtype is %s but Op is trying to write dtype %s " %
                             (self._dtype.name, value.dtype.base_dtype.name))

    def _known_element_shape(self):
        s = self._element_shape[0]
        return s if s.ndims is not None else None

    # ---- ops ----
    def identity(self):
        """A TensorArray whose flow is an Identity of this one's (for control dependencies)."""
        return self._with_flow(array_ops.identity(self._flow))

    def grad(self, source, flow=None, name=None):
        if flow is None:
            flow = self.flow
        with ops.name_scope(name, "TensorArrayGrad", [self._handle]):
            g_handle, _ = apply_op("TensorArrayGradV3", "TensorArrayGradV3", [self._handle, flow],
                                   {"source": source})
            with ops.control_dependencies([g_handle]):
                flow = array_ops.identity(flow, name="gradient_flow")
            g = TensorArray(dtype=self._dtype, handle=g_handle, flow=flow, infer_shape=self._infer_shape)
            g._element_shape = self._element_shape
            return g

    def read(self, index, name=None):
        """The element at `index` (a Tensor of this array's dtype)."""
        value = apply_op("TensorArrayReadV3", name or "TensorArrayReadV3", [self._handle, index, self._flow],
                         {"dtype": self._dtype._enum})
        if self._element_shape[0].ndims is not None:
            value.set_shape(self._element_shape[0])
        return value

    def write(self, index, value, name=None):
        """Writes `value` at `index`; returns the new TensorArray (use it from then on)."""
        with ops.name_scope(name, "TensorArrayWrite", [self._handle, index, value]):
            value = ops.convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            self._check_dtype(value)
            if self._infer_shape:
                self._merge_element_shape(value.shape)
            flow_out = apply_op("TensorArrayWriteV3", "TensorArrayWriteV3", [self._handle, index, value, self._flow])
            return self._with_flow(flow_out)

    def stack(self, name=None):
        """Every element, stacked along a new first dimension."""
        with ops.name_scope(name, "TensorArrayStack", [self._handle]):
            value = self.gather(math_ops.range(0, self.size()), name="TensorArrayGatherV3")
            n = _static_values(self._size) if self._size is not None else None
            if self._element_shape[0].ndims is not None and not self._dynamic_size and n is not None:
                value.set_shape(tensor_shape.TensorShape([int(n[0])]).concatenate(self._element_shape[0]))
            return value

    def gather(self, indices, name=None):
        """The elements at `indices`, stacked."""
        attrs = {"dtype": self._dtype._enum}
        known = self._known_element_shape()
        if known is not None:
            attrs["element_shape"] = _shape_attr(known)
        value = apply_op("TensorArrayGatherV3", name or "TensorArrayGatherV3", [self._handle, indices, self._flow],
                         attrs)
        if known is not None:
            value.set_shape(tensor_shape.TensorShape([None]).concatenate(known))
        return value

    def concat(self, name=None):
        """Every element concatenated along dimension 0."""
        attrs = {"dtype": self._dtype._enum}
        known = self._known_element_shape()
        except0 = None
        if known is not None and known.ndims >= 1:
            except0 = tensor_shape.TensorShape(known.dims[1:])
            attrs["element_shape_except0"] = _shape_attr(except0)
        value, _ = apply_op("TensorArrayConcatV3", name or "TensorArrayConcatV3", [self._handle, self._flow], attrs)
        if except0 is not None:
            value.set_shape(tensor_shape.TensorShape([None]).concatenate(except0))
        return value

    def unstack(self, value, name=None):
        """Writes value[i] at index i for every i (a new TensorArray)."""
        with ops.name_scope(name, "TensorArrayUnstack", [self._handle, value]):
            value = ops.convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            num_elements = array_ops.shape(value)[0]
            return self.scatter(indices=math_ops.range(0, num_elements), value=value, name="TensorArrayScatter")

    def scatter(self, indices, value, name=None):
        """Writes value[i] at indices[i] (a new TensorArray)."""
        with ops.name_scope(name, "TensorArrayScatter", [self._handle, value, indices]):
            value = ops.convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            self._check_dtype(value)
            if self._infer_shape and value.shape.ndims is not None:
                self._merge_element_shape(tensor_shape.TensorShape(value.shape.dims[1:]))
            flow_out = apply_op("TensorArrayScatterV3", "TensorArrayScatterV3",
                                [self._handle, indices, value, self._flow])
            return self._with_flow(flow_out)

    def split(self, value, lengths, name=None):
        """Splits `value` along dimension 0 into pieces of `lengths` (a new TensorArray)."""
        with ops.name_scope(name, "TensorArraySplit", [self._handle, value, lengths]):
            value = ops.convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            self._check_dtype(value)
            lengths_64 = math_ops.cast(lengths, dtypes.int64)
            if self._infer_shape and value.shape.ndims is not None:
                clengths = _static_values(lengths)
                if clengths is not None and len(clengths) and all(int(c) == int(clengths[0]) for c in clengths):
                    self._merge_element_shape(
                        tensor_shape.TensorShape([int(clengths[0])]).concatenate(value.shape.dims[1:]))
            flow_out = apply_op("TensorArraySplitV3", "TensorArraySplitV3",
                                [self._handle, value, lengths_64, self._flow])
            return self._with_flow(flow_out)

    def size(self, name=None):
        """The number of elements (an int32 scalar)."""
        return apply_op("TensorArraySizeV3", name or "TensorArraySizeV3", [self._handle, self._flow])

    def close(self, name=None):
        """Closes the array (an Operation)."""
        return apply_op("TensorArrayCloseV3", name or "TensorArrayCloseV3", [self._handle])


def _static_values(x):
    import numpy as np
    if isinstance(x, ops.Tensor):
        if x.op.type != "Const":
            return None
        try:
            return np.asarray(x.op.get_attr("value")).reshape(-1)
        except Exception:  # noqa: BLE001
            return None
    try:
        return np.asarray(x).reshape(-1)
    except Exception:  # noqa: BLE001
        return None
