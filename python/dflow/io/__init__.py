"""tf.io: reading and writing files, and parsing tf.train.Example protos (the parts of it dflow has)."""
from dflow.framework.graph_io import write_graph  # noqa: F401
from dflow.io.parsing import (FixedLenFeature, FixedLenSequenceFeature, RaggedFeature,  # noqa: F401
                              SparseFeature, VarLenFeature, parse_example, parse_single_example)
