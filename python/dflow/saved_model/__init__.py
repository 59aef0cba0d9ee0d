"""tf.saved_model (TensorFlow 1.x's): SavedModel directories written and loaded in graph mode.

    tf.saved_model.simple_save(sess, export_dir, inputs={"x": x}, outputs={"y": y})
    meta_graph_def = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir)
"""
from dflow.saved_model import builder  # noqa: F401
from dflow.saved_model import constants  # noqa: F401
from dflow.saved_model import loader  # noqa: F401
from dflow.saved_model import signature_constants  # noqa: F401
from dflow.saved_model import signature_def_utils  # noqa: F401
from dflow.saved_model import tag_constants  # noqa: F401
from dflow.saved_model import utils  # noqa: F401
from dflow.saved_model.builder import Builder, SavedModelBuilder, simple_save  # noqa: F401
from dflow.saved_model.constants import (ASSETS_DIRECTORY, ASSETS_KEY, LEGACY_INIT_OP_KEY, MAIN_OP_KEY,  # noqa: F401
                                         SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT,
                                         SAVED_MODEL_SCHEMA_VERSION, VARIABLES_DIRECTORY, VARIABLES_FILENAME)
from dflow.saved_model.loader import contains_saved_model, maybe_saved_model_directory  # noqa: F401
from dflow.saved_model.loader import load  # noqa: F401
from dflow.saved_model.signature_constants import *  # noqa: F401,F403
from dflow.saved_model.signature_def_utils import (build_signature_def, classification_signature_def,  # noqa: F401
                                                   is_valid_signature, predict_signature_def,
                                                   regression_signature_def)
from dflow.saved_model.tag_constants import GPU, SERVING, TPU, TRAINING  # noqa: F401
from dflow.saved_model.utils import build_tensor_info, get_tensor_from_tensor_info  # noqa: F401


def main_op_with_restore(restore_op_name):
    """The main op of TensorFlow 1.x's main_op_with_restore: the global and local variable
    initializers and the table initializers, after the restore op."""
    from dflow.framework import ops
    from dflow.ops import control_flow_ops
    with ops.control_dependencies([restore_op_name] if not isinstance(restore_op_name, str)
                                  else [ops.get_default_graph().as_graph_element(restore_op_name)]):
        return main_op()


def main_op():
    """A group of the local variables' initializer and the table initializers."""
    from dflow.framework import ops
    from dflow.ops import control_flow_ops, variables
    init_local = variables.local_variables_initializer()
    from dflow.ops import lookup_ops
    tables = lookup_ops.table_initializer_ops()
    return control_flow_ops.group(init_local, *tables, name="main_op")
