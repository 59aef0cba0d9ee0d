"""The reference side of the conformance suite: real TensorFlow in 1.x graph mode (reference
variables, control flow v1), and the exchange of GraphDefs between it and dflow.

A conformance test builds a graph with TensorFlow, serializes its GraphDef, runs it in TensorFlow,
imports the same bytes into dflow and runs it there: what is compared is dflow executing
TensorFlow's own graph."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dflow  # noqa: E402
from conftest import real_tf  # noqa: E402,F401  (tensorflow.compat.v1, v2 behaviour disabled)


def tf_graph_def(build):
    """Builds `build(tf)` in a fresh TensorFlow graph; returns (serialized GraphDef, build's result
    with every Tensor/Operation replaced by its name)."""
    tf = real_tf()
    g = tf.Graph()
    with g.as_default():
        out = build(tf)
    return g.as_graph_def().SerializeToString(), _names(out)


def _names(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_names(v) for v in x)
    if isinstance(x, dict):
        return {k: _names(v) for k, v in x.items()}
    return getattr(x, "name", x)


def run_tf(graph_def, fetches, feeds=None, targets=()):
    """Runs the serialized GraphDef in TensorFlow: `targets` (op names) once each, then fetches."""
    tf = real_tf()
    g = tf.Graph()
    with g.as_default():
        gd = tf.GraphDef.FromString(graph_def)
        tf.import_graph_def(gd, name="")
        with tf.Session() as s:
            for t in targets:
                s.run(t, feeds)
            return s.run(fetches, feeds)


def run_dflow(graph_def, fetches, feeds=None, targets=()):
    """The same in dflow, from the same bytes."""
    g = dflow.Graph()
    with g.as_default():
        gd = dflow.GraphDef.FromString(graph_def)
        dflow.import_graph_def(gd, name="")
        with dflow.Session() as s:
            for t in targets:
                s.run(t, feeds)
            return s.run(fetches, feeds)
