"""tf.sparse: the SparseTensor type and its conversion to a dense tensor (the parts dflow has)."""
from dflow.framework.sparse_tensor import SparseTensor, SparseTensorValue, to_dense  # noqa: F401
