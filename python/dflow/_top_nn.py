"""The nn area's top-level names: tf.nn, tf.layers, tf.losses, tf.metrics."""
from dflow import layers  # noqa: F401
from dflow import losses  # noqa: F401
from dflow import metrics  # noqa: F401
from dflow import nn  # noqa: F401
from dflow.ops.tensor_array_ops import TensorArray  # noqa: F401

__all__ = ["nn", "losses", "layers", "metrics", "TensorArray"]
