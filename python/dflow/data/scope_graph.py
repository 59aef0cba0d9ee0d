"""Python graphs over C++-made ones: building Python ops in a Scope that C++ code hands over.

The C++ API calls back into Python while it builds: a dataset's map function gets a Scope on
the function's own graph, an estimator's input and model functions a Scope on the graph of the
call (train, evaluate, predict). `building_in(scope)` makes a Python `Graph` over that C++ graph
the default graph with `scope` as its current scope, so that everything TensorFlow's Python API
builds inside (tf.add, tf.layers.dense, tf.get_variable, ...) goes there. One Python graph is
kept per C++ graph while any caller holds it, so tensors and collections survive between the
callbacks of one estimator call.
"""
import contextlib

from dflow import _dflow
from dflow.framework import ops


def graph_of_scope(scope):
    """The Python Graph over `scope`'s C++ graph (made on first use)."""
    g = ops._graphs_by_id.get(scope.graph_id)
    if g is not None:
        return g
    g = ops.Graph()
    g._h = _dflow.Graph(scope)
    g._scope = scope
    g._seed = g._h.seed
    ops._graphs_by_id[g._h.id] = g
    return g


@contextlib.contextmanager
def building_in(scope):
    """Builds in `scope` (a pybind Scope): yields the Python Graph over its C++ graph, default."""
    g = graph_of_scope(scope)
    old = g._scope
    g._scope = scope
    try:
        with g.as_default():
            yield g
    finally:
        g._scope = old
