"""The data area's top-level names: tf.data, tf.decode_csv, TFRecord files (tf.io, tf.python_io),
tf.feature_column and tf.estimator."""
import sys
import types

from dflow import data  # noqa: F401
from dflow import feature_column  # noqa: F401
from dflow import estimator  # noqa: F401
from dflow import io as _io
from dflow.data import readers as _readers
from dflow.data.dataset_ops import TensorSpec  # noqa: F401

decode_csv = _readers.decode_csv

# tf.io and tf.python_io: the TFRecord and CSV parts.
for _name in ("decode_csv", "TFRecordWriter", "TFRecordOptions", "TFRecordCompressionType", "tf_record_iterator"):
    setattr(_io, _name, getattr(_readers, _name))
python_io = sys.modules.get("dflow.python_io")
if python_io is None:
    python_io = types.ModuleType("dflow.python_io", "tf.python_io: TFRecord files.")
    sys.modules["dflow.python_io"] = python_io
for _name in ("TFRecordWriter", "TFRecordOptions", "TFRecordCompressionType", "tf_record_iterator"):
    setattr(python_io, _name, getattr(_readers, _name))
del _name



from dflow import lookup  # noqa: F401,E402  tf.lookup
from dflow.ops.lookup_ops import tables_initializer  # noqa: F401,E402  groups TABLE_INITIALIZERS
from dflow.ops.lookup_ops import initialize_all_tables  # noqa: F401,E402


__all__ = ["data", "feature_column", "estimator", "decode_csv", "python_io", "TensorSpec", "lookup",
           "initialize_all_tables"]
if not hasattr(sys.modules["dflow"], "tables_initializer"):
    __all__.append("tables_initializer")
