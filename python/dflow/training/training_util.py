"""The global step: tf.train.get_or_create_global_step and friends (TensorFlow's rules: the
GLOBAL_STEP collection, else the tensor "global_step:0"; an int64 scalar variable made with
get_variable, not trainable)."""
import logging

from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework.ops import GraphKeys
from dflow.ops import init_ops
from dflow.ops import variable_scope
from dflow.ops import variables

_log = logging.getLogger("dflow")


def global_step(sess, global_step_tensor):
    """The value of the global step, as an int."""
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor):
    if not isinstance(global_step_tensor, (variables.Variable, ops.Tensor)):
        raise TypeError('Existing "global_step" must be a Variable or Tensor: %s.' % global_step_tensor)
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError('Existing "global_step" does not have integer type: %s' % global_step_tensor.dtype)
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError('Existing "global_step" is not scalar: %s' % shape)


def get_global_step(graph=None):
    """The graph's global step (a Variable or Tensor), or None."""
    graph = graph or ops.get_default_graph()
    tensors = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(tensors) == 1:
        t = tensors[0]
    elif not tensors:
        try:
            t = graph.get_tensor_by_name("global_step:0")
        except KeyError:
            return None
    else:
        _log.error("Multiple tensors in global_step collection.")
        return None
    assert_global_step(t)
    return t


def create_global_step(graph=None):
    """Makes the global step variable "global_step" (int64, 0); ValueError when there is one."""
    graph = graph or ops.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default() as g, g.name_scope(None):
        return variable_scope.get_variable(
            GraphKeys.GLOBAL_STEP, shape=[], dtype=dtypes.int64, initializer=init_ops.zeros_initializer(),
            trainable=False, collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    graph = graph or ops.get_default_graph()
    t = get_global_step(graph)
    if t is None:
        t = create_global_step(graph)
    return t
