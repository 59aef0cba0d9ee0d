"""tf.saved_model.utils: TensorInfo protos of tensors, and the tensors they name."""
from dflow.framework import dtypes
from dflow.framework import meta_graph
from dflow.framework import ops


def build_tensor_info(tensor):
    """The TensorInfo of a tensor (its name, dtype and static shape) or of a SparseTensor."""
    info = meta_graph.TensorInfo()
    dtype = tensor.dtype.base_dtype
    info.dtype = dtype.as_datatype_enum
    if hasattr(tensor, "indices") and hasattr(tensor, "dense_shape") and hasattr(tensor, "values"):
        info.coo_sparse.values_tensor_name = tensor.values.name
        info.coo_sparse.indices_tensor_name = tensor.indices.name
        info.coo_sparse.dense_shape_tensor_name = tensor.dense_shape.name
        shape = None
    else:
        info.name = tensor.name
        shape = tensor.get_shape()
    dims = shape.as_proto() if shape is not None else None
    if dims is None:
        info.tensor_shape.unknown_rank = True
    else:
        for d in dims:
            info.tensor_shape.dim.add().size = int(d)
    return info


build_tensor_info_from_op = None  # TensorFlow 2's; not in TensorFlow 1.x's graph-mode API


def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The tensor (or SparseTensor) a TensorInfo names, in `graph` (the default graph)."""
    g = graph or ops.get_default_graph()

    def by_name(name):
        if import_scope:
            name = import_scope.rstrip("/") + "/" + name
        return g.get_tensor_by_name(name)

    kind = tensor_info.WhichOneof("encoding")
    if kind == "name":
        return by_name(tensor_info.name)
    if kind == "coo_sparse":
        from dflow import SparseTensor
        c = tensor_info.coo_sparse
        return SparseTensor(by_name(c.indices_tensor_name), by_name(c.values_tensor_name),
                            by_name(c.dense_shape_tensor_name))
    if kind == "composite_tensor":
        raise NotImplementedError("TensorInfo.composite_tensor (TensorFlow 2's composite tensors) is not "
                                  "supported by dflow")
    raise ValueError("Invalid TensorInfo.encoding: %s" % kind)


def get_element_from_tensor_info(tensor_info, graph=None, import_scope=None):
    g = graph or ops.get_default_graph()
    name = tensor_info.name
    if import_scope:
        name = import_scope.rstrip("/") + "/" + name
    return g.as_graph_element(name)


def _dtype_of(tensor_info):
    return dtypes.as_dtype(tensor_info.dtype)
