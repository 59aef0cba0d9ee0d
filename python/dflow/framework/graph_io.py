"""tf.train.write_graph / tf.io.write_graph: a graph's GraphDef in a file, as text or binary."""
import os
import tempfile

from google.protobuf import text_format

from dflow.framework import graph_pb
from dflow.framework import ops


def _atomic_write(path, data):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp_" + os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes the GraphDef of a tf.Graph (or a GraphDef) to logdir/name; returns the path.
    Text files are protobuf text format (TensorFlow's `.pbtxt`), binary ones the wire format."""
    if isinstance(graph_or_graph_def, ops.Graph):
        graph_def = graph_or_graph_def.as_graph_def()
    else:
        graph_def = graph_pb.as_graph_def_message(graph_or_graph_def)
    logdir = os.fspath(logdir)
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    if as_text:
        _atomic_write(path, text_format.MessageToString(graph_def).encode("utf-8"))
    else:
        _atomic_write(path, graph_def.SerializeToString(deterministic=True))
    return path


def read_graph(path):
    """A GraphDef from a file write_graph wrote (text or binary)."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
        gd = graph_pb.GraphDef()
        text_format.Merge(text, gd)
        return gd
    except (UnicodeDecodeError, text_format.ParseError):
        return graph_pb.GraphDef.FromString(data)
