"""tf.SparseTensor and tf.SparseTensorValue: a sparse tensor as TensorFlow 1.x represents it, three
dense tensors (indices [N, rank] int64, values [N], dense_shape [rank] int64).

dflow's ops take dense tensors; SparseTensors come out of tf.io.parse_example (VarLenFeature) and
Session.run fetches them as SparseTensorValue, as TensorFlow does. `to_dense` makes a dense tensor
of one (SparseToDense)."""
import collections

import numpy as np

from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import tensor_shape

SparseTensorValue = collections.namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])


class SparseTensor:
    """A sparse tensor: `indices` [N, rank] int64, `values` [N], `dense_shape` [rank] int64."""

    def __init__(self, indices, values, dense_shape):
        with ops.name_scope(None, "SparseTensor", [indices, values, dense_shape]):
            self._indices = ops.convert_to_tensor(indices, name="indices", dtype=dtypes.int64)
            self._values = ops.convert_to_tensor(values, name="values")
            self._dense_shape = ops.convert_to_tensor(dense_shape, name="dense_shape", dtype=dtypes.int64)

    @classmethod
    def from_value(cls, value):
        if isinstance(value, SparseTensor):
            return value
        return cls(value.indices, value.values, value.dense_shape)

    @property
    def indices(self):
        return self._indices

    @property
    def values(self):
        return self._values

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def op(self):
        return self._values.op

    @property
    def graph(self):
        return self._values.graph

    @property
    def shape(self):
        """The static shape: known dims where dense_shape is a constant, else its rank."""
        static = _constant_value(self._dense_shape)
        if static is not None:
            return tensor_shape.TensorShape([int(d) for d in static])
        rank = self._dense_shape.shape
        n = rank[0] if rank.ndims == 1 else None
        n = getattr(n, "value", n)
        return tensor_shape.TensorShape(None if n is None else [None] * int(n))

    def get_shape(self):
        return self.shape

    def eval(self, feed_dict=None, session=None):
        session = session or ops.get_default_session()
        return session.run(self, feed_dict)

    def __repr__(self):
        return "SparseTensor(indices=%s, values=%s, dense_shape=%s)" % (self._indices, self._values,
                                                                        self._dense_shape)


def _constant_value(t):
    op = t.op
    if op.type != "Const":
        return None
    try:
        return np.asarray(op.get_attr("value"))
    except Exception:  # noqa: BLE001 - no static value
        return None


def is_sparse(x):
    return isinstance(x, (SparseTensor, SparseTensorValue))


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """tf.sparse.to_dense: the dense tensor of `sp_input` with `default_value` (0 or "") elsewhere."""
    from dflow.ops import gen_ops
    sp = SparseTensor.from_value(sp_input)
    if default_value is None:
        default_value = "" if sp.dtype.base_dtype == dtypes.string else 0
    with ops.name_scope(name, "SparseToDense", [sp.indices, sp.values, sp.dense_shape]):
        default = ops.convert_to_tensor(default_value, dtype=sp.dtype.base_dtype)
        return gen_ops.sparse_to_dense(sp.indices, sp.dense_shape, sp.values, default,
                                       validate_indices=validate_indices)


def to_dense_for_columns(sp_input):
    """A parsed VarLenFeature as dflow's feature columns take it: the dense [batch, longest] tensor
    with "" (strings) or -1 (integers) where an example has fewer values, which the columns read as
    absent, as TensorFlow's read the sparse input's missing entries."""
    sp = SparseTensor.from_value(sp_input)
    d = sp.dtype.base_dtype
    return to_dense(sp, default_value="" if d == dtypes.string else (-1 if d.is_integer else 0))
