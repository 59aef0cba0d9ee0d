"""tf.saved_model.signature_def_utils: SignatureDefs (named inputs and outputs of a MetaGraphDef)
as TensorFlow Serving's predict, classify and regress APIs expect them."""
from dflow.framework import dtypes
from dflow.framework import meta_graph
from dflow.saved_model import signature_constants as sc
from dflow.saved_model import utils


def build_signature_def(inputs=None, outputs=None, method_name=None, defaults=None):
    """A SignatureDef of {key: TensorInfo} inputs and outputs."""
    s = meta_graph.SignatureDef()
    for k, v in (inputs or {}).items():
        s.inputs[k].CopyFrom(v)
    for k, v in (outputs or {}).items():
        s.outputs[k].CopyFrom(v)
    if method_name is not None:
        s.method_name = method_name
    if defaults:
        raise NotImplementedError("build_signature_def(defaults=...) is not supported by dflow")
    return s


def predict_signature_def(inputs, outputs):
    """A predict SignatureDef of {key: tensor} inputs and outputs."""
    if inputs is None or not inputs:
        raise ValueError("Prediction `inputs` cannot be None or empty.")
    if outputs is None or not outputs:
        raise ValueError("Prediction `outputs` cannot be None or empty.")
    return build_signature_def({k: utils.build_tensor_info(t) for k, t in inputs.items()},
                               {k: utils.build_tensor_info(t) for k, t in outputs.items()},
                               sc.PREDICT_METHOD_NAME)


def classification_signature_def(examples, classes, scores):
    """A classify SignatureDef: serialized tf.Examples in, classes (strings) and/or scores out."""
    if examples is None:
        raise ValueError("Classification `examples` cannot be None.")
    if not hasattr(examples, "dtype") or examples.dtype.base_dtype != dtypes.string:
        raise ValueError("Classification input tensors must be of type string. Found tensors of type %d"
                         % examples.dtype.as_datatype_enum)
    if classes is None and scores is None:
        raise ValueError("Classification `classes` and `scores` cannot both be None.")
    outputs = {}
    if classes is not None:
        if classes.dtype.base_dtype != dtypes.string:
            raise ValueError("Classification classes must be of type string Tensor. Found tensors of type %d.`"
                             % classes.dtype.as_datatype_enum)
        outputs[sc.CLASSIFY_OUTPUT_CLASSES] = utils.build_tensor_info(classes)
    if scores is not None:
        if scores.dtype.base_dtype != dtypes.float32:
            raise ValueError("Classification scores must be a float Tensor.")
        outputs[sc.CLASSIFY_OUTPUT_SCORES] = utils.build_tensor_info(scores)
    return build_signature_def({sc.CLASSIFY_INPUTS: utils.build_tensor_info(examples)}, outputs,
                               sc.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples, predictions):
    """A regress SignatureDef: serialized tf.Examples in, float predictions out."""
    if examples is None:
        raise ValueError("Regression `examples` cannot be None.")
    if not hasattr(examples, "dtype") or examples.dtype.base_dtype != dtypes.string:
        raise ValueError("Regression input tensors must be of type string. Found tensors with type %d."
                         % examples.dtype.as_datatype_enum)
    if predictions is None:
        raise ValueError("Regression `predictions` cannot be None.")
    if predictions.dtype.base_dtype != dtypes.float32:
        raise ValueError("Regression output tensors must be of type float. Found tensors with type %d."
                         % predictions.dtype.as_datatype_enum)
    return build_signature_def({sc.REGRESS_INPUTS: utils.build_tensor_info(examples)},
                               {sc.REGRESS_OUTPUTS: utils.build_tensor_info(predictions)},
                               sc.REGRESS_METHOD_NAME)


def is_valid_signature(signature_def):
    """Whether a SignatureDef is one TensorFlow Serving accepts (predict, classify or regress)."""
    if signature_def is None:
        return False
    m = signature_def.method_name
    if m == sc.PREDICT_METHOD_NAME:
        return bool(signature_def.inputs) and bool(signature_def.outputs)
    if m == sc.CLASSIFY_METHOD_NAME:
        ins, outs = signature_def.inputs, signature_def.outputs
        if set(ins) != {sc.CLASSIFY_INPUTS} or ins[sc.CLASSIFY_INPUTS].dtype != dtypes.string.as_datatype_enum:
            return False
        if not outs or not set(outs) <= {sc.CLASSIFY_OUTPUT_CLASSES, sc.CLASSIFY_OUTPUT_SCORES}:
            return False
        if sc.CLASSIFY_OUTPUT_CLASSES in outs and outs[sc.CLASSIFY_OUTPUT_CLASSES].dtype != dtypes.string.as_datatype_enum:
            return False
        if sc.CLASSIFY_OUTPUT_SCORES in outs and outs[sc.CLASSIFY_OUTPUT_SCORES].dtype != dtypes.float32.as_datatype_enum:
            return False
        return True
    if m == sc.REGRESS_METHOD_NAME:
        ins, outs = signature_def.inputs, signature_def.outputs
        return (set(ins) == {sc.REGRESS_INPUTS} and ins[sc.REGRESS_INPUTS].dtype == dtypes.string.as_datatype_enum
                and set(outs) == {sc.REGRESS_OUTPUTS}
                and outs[sc.REGRESS_OUTPUTS].dtype == dtypes.float32.as_datatype_enum)
    return False
