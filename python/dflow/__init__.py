"""dflow: TensorFlow 1.x's programming model on dflow's C++ engine.

    import dflow as tf                 # in place of `import tensorflow as tf`
    import dflow.compat.v1 as tf       # in place of `import tensorflow.compat.v1 as tf`
"""
from dflow import _dflow  # noqa: F401  (the C++ engine)
from dflow.framework import dtypes as _dtypes
from dflow.framework import errors
from dflow.framework import ops as _ops
from dflow.framework.dtypes import (DType, as_dtype, bool, double, float32, float64, int32,  # noqa: A004
                                    int64, resource, string, uint8, variant)
from dflow.framework.ops import (Graph, GraphKeys, Operation, Tensor, add_to_collection, add_to_collections,
                                 colocate_with, control_dependencies, convert_to_tensor, device,
                                 get_collection, get_collection_ref, get_default_graph, get_default_session,
                                 name_scope, register_tensor_conversion_function, reset_default_graph,
                                 set_random_seed)
from dflow.framework.tensor_shape import Dimension, TensorShape
from dflow.ops import gen_ops as _gen_ops
from dflow.ops.gen_ops import raw_ops
from dflow.ops.array_ops import *  # noqa: F401,F403
from dflow.ops.array_ops import newaxis  # noqa: F401
from dflow.ops.math_ops import *  # noqa: F401,F403
from dflow.ops.math_ops import abs, pow, range, round  # noqa: A004,F401
from dflow.client.session import (ConfigProto, GPUOptions, GraphOptions, InteractiveSession, RewriterConfig,
                                  RunMetadata, RunOptions, Session)
from dflow.framework.graph_pb import (AttrValue, Event, GraphDef, HistogramProto, NameAttrList, NodeDef,
                                      SessionLog, Summary, SummaryMetadata)
from dflow.framework.importer import import_graph_def

__version__ = "1.15.0+dflow"
VERSION = __version__
GRAPH_DEF_VERSION = 27
COMPILER_VERSION = "dflow"

get_name_scope = _ops.get_name_scope
op_scope = _ops.op_scope


def disable_v2_behavior():
    """dflow is TensorFlow 1.x: graph mode is the only mode."""


def disable_eager_execution():
    """dflow is TensorFlow 1.x: graph mode is the only mode."""


def enable_eager_execution(*args, **kwargs):
    raise NotImplementedError("dflow runs graphs; eager execution is not available")


def executing_eagerly():
    return False


from dflow._top_state import *  # noqa: F401,F403,E402  variables, gradients, control flow, summary
from dflow._top_nn import *  # noqa: F401,F403,E402  nn, layers, losses, metrics
from dflow._top_data import *  # noqa: F401,F403,E402  data, feature columns, estimators
from dflow._top_cluster import *  # noqa: F401,F403,E402  clusters, monitored sessions
from dflow import train  # noqa: F401,E402
from dflow import io  # noqa: F401,E402
from dflow import sparse  # noqa: F401,E402
from dflow.framework.sparse_tensor import SparseTensor, SparseTensorValue  # noqa: F401,E402
from dflow.framework.sparse_tensor import to_dense as sparse_tensor_to_dense  # noqa: F401,E402
from dflow.io.parsing import (FixedLenFeature, FixedLenSequenceFeature, SparseFeature,  # noqa: F401,E402
                              VarLenFeature, parse_example, parse_single_example)
from dflow import app  # noqa: F401,E402
from dflow import image  # noqa: F401,E402
from dflow import saved_model  # noqa: F401,E402
flags = app.flags

# Generated op functions TensorFlow also exposes at the top level (tf.no_op, tf.sigmoid, ...),
# where no hand-written function of that name exists.
for _n, _f in list(_gen_ops.OPS.items()):
    globals().setdefault(_f.__name__, _f)
del _n, _f
from dflow import compat  # noqa: F401,E402
