"""tf.io: reading and writing files (the parts of it dflow has)."""
from dflow.framework.graph_io import write_graph  # noqa: F401
