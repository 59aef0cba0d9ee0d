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


def adopt_cc_variables(g, trainable=True):
    """Wraps the variables that C++ builders registered in `g`'s C++ collections (feature columns'
    weights, an estimator's global step) into Python Variables in TensorFlow's collections, unless
    the Python collections hold them already. Returns the new Variables."""
    from dflow.ops import variables
    from dflow.framework.ops import GraphKeys
    cc = _dflow.scope_collections(g._scope)
    known = set()
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES):
        for v in g.get_collection(key):
            op = getattr(v, "op", None)
            if op is not None:
                known.add(op.name)
    trainable_names = {o.node.name for o in cc["trainable_variables"]}
    inits = {}
    for n in cc["initializers"] + cc["local_initializers"]:
        ins = n.inputs()
        if n.type == "Assign" and ins and ins[0] is not None:
            inits[ins[0].node.name] = n
    made = []
    for key, refs in ((GraphKeys.GLOBAL_VARIABLES, cc["global_variables"]),
                      (GraphKeys.LOCAL_VARIABLES, cc["local_variables"])):
        for ref in refs:
            name = ref.node.name
            if name in known:
                continue
            known.add(name)
            read_node = g._h.find_node(name + "/read")
            read = g._wrap(read_node)._output(0) if read_node is not None else None
            init = g._wrap(inits[name]) if name in inits else None
            is_trainable = trainable and name in trainable_names and key == GraphKeys.GLOBAL_VARIABLES
            v = variables.Variable._from_existing(g, g._tensor_of(ref), init, read, trainable=is_trainable)
            g.add_to_collection(key, v)
            if is_trainable:
                g.add_to_collection(GraphKeys.TRAINABLE_VARIABLES, v)
            if name == "global_step" and not g.get_collection(GraphKeys.GLOBAL_STEP):
                g.add_to_collection(GraphKeys.GLOBAL_STEP, v)
            made.append(v)
    return made
