"""tf.estimator.export: serving input receivers for Estimator.export_saved_model.

    spec = tf.feature_column.make_parse_example_spec(feature_columns)
    fn = tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    path = classifier.export_saved_model("/tmp/export", fn)     # b"/tmp/export/1700000000"

A parsing receiver takes serialized tf.Examples (the string tensor "input_example_tensor", the
receiver key "examples") and parses them into the features (tf.io.parse_example); a raw receiver
takes each feature as a placeholder of its own.
"""
import collections

from dflow.framework import dtypes
from dflow.framework import ops


def _as_tensor_dict(d, what):
    if d is None:
        raise ValueError("%s must be defined." % what)
    if not isinstance(d, dict):
        d = {"feature" if what == "features" else "input": d}
    out = {}
    for k, v in d.items():
        if not isinstance(k, str):
            raise ValueError("%s keys must be strings: %r." % (what, k))
        if hasattr(v, "indices") and hasattr(v, "dense_shape"):
            out[k] = v
        else:
            out[k] = ops.convert_to_tensor(v)
    return out


class ServingInputReceiver(collections.namedtuple(
        "ServingInputReceiver", ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
    """The features the model_fn receives and the tensors a serving client feeds."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        features = _as_tensor_dict(features, "features")
        receiver_tensors = _as_tensor_dict(receiver_tensors, "receiver_tensors")
        if receiver_tensors_alternatives:
            raise NotImplementedError("ServingInputReceiver(receiver_tensors_alternatives=...) is not supported "
                                      "by dflow")
        return super().__new__(cls, features, receiver_tensors, receiver_tensors_alternatives)


class TensorServingInputReceiver(collections.namedtuple(
        "TensorServingInputReceiver", ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
    """A receiver whose features are one tensor (passed to the model_fn as is)."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if features is None:
            raise ValueError("features must be defined.")
        receiver_tensors = _as_tensor_dict(receiver_tensors, "receiver_tensors")
        return super().__new__(cls, ops.convert_to_tensor(features), receiver_tensors, receiver_tensors_alternatives)


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A serving_input_receiver_fn that parses serialized tf.Examples with `feature_spec`."""

    def serving_input_receiver_fn():
        from dflow.io import parsing
        from dflow.ops import array_ops
        serialized = array_ops.placeholder(dtype=dtypes.string, shape=[default_batch_size],
                                           name="input_example_tensor")
        features = parsing.parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {"examples": serialized})
    return serving_input_receiver_fn


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A serving_input_receiver_fn that feeds each feature through a placeholder like it."""

    def serving_input_receiver_fn():
        from dflow.ops import array_ops
        receiver = {}
        for name, t in features.items():
            shape = t.get_shape().as_list() if t.get_shape().ndims is not None else None
            if shape:
                shape[0] = default_batch_size
            receiver[name] = array_ops.placeholder(dtype=t.dtype, shape=shape, name=t.op.name)
        return ServingInputReceiver(receiver, dict(receiver))
    return serving_input_receiver_fn


class ExportOutput:
    """Base of the export outputs a model_fn may name (dflow derives the signatures from the
    predictions, as TensorFlow's canned heads define them)."""


class PredictOutput(ExportOutput):
    def __init__(self, outputs):
        self.outputs = outputs


class ClassificationOutput(ExportOutput):
    def __init__(self, scores=None, classes=None):
        self.scores, self.classes = scores, classes


class RegressionOutput(ExportOutput):
    def __init__(self, value):
        self.value = value
