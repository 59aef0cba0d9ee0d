"""tf.saved_model.builder.SavedModelBuilder: writes a SavedModel directory as TensorFlow 1.x's
builder does (saved_model.pb, variables/variables.{index,data-00000-of-00001}, assets/), one that
TensorFlow's tf.compat.v1.saved_model.loader.load loads.

    builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"serving_default": sig})
    builder.save()
"""
import os
import shutil

from dflow.framework import errors
from dflow.framework import graph_pb
from dflow.framework import meta_graph
from dflow.framework import ops
from dflow.saved_model import constants
from dflow.saved_model import signature_def_utils

Any = graph_pb.message_class("Any")


def _asset_path_of(tensor):
    """The file path an asset tensor holds (a string Const, as TensorFlow requires)."""
    op = tensor.op
    if op.type != "Const":
        raise TypeError("Asset path tensor must be a Tensor of type Const: %s" % tensor.name)
    v = op.get_attr("value")
    if isinstance(v, (bytes, str)):
        path = v
    else:
        try:
            path = v.item() if hasattr(v, "item") else v
        except ValueError:
            raise TypeError("Asset path tensor must be a scalar string Const: %s" % tensor.name) from None
    return path.decode() if isinstance(path, bytes) else str(path)


class SavedModelBuilder:
    """Builds a SavedModel: one MetaGraphDef with the variables (add_meta_graph_and_variables), more
    MetaGraphDefs sharing them (add_meta_graph), then save()."""

    def __init__(self, export_dir):
        export_dir = export_dir.decode() if isinstance(export_dir, bytes) else str(export_dir)
        self._saved_model = meta_graph.SavedModel()
        self._saved_model.saved_model_schema_version = constants.SAVED_MODEL_SCHEMA_VERSION
        self._export_dir = export_dir
        if os.path.exists(export_dir):
            if os.listdir(export_dir):
                raise AssertionError("Export directory already exists, and isn't empty. Please choose a "
                                     "different export directory, or delete all the contents of the specified "
                                     "directory: %s" % export_dir)
        else:
            os.makedirs(export_dir)
        self._has_saved_variables = False

    # ---- pieces ----
    def _save_and_write_assets(self, assets_collection):
        """Copies the asset files into assets/ and records each as an AssetFileDef (collection
        saved_model_assets, as TensorFlow 1.x's builder writes them)."""
        if not assets_collection:
            return
        assets_dir = os.path.join(self._export_dir, constants.ASSETS_DIRECTORY)
        seen = {}
        for t in assets_collection:
            src = _asset_path_of(t)
            if not src:
                raise ValueError("Invalid asset filepath tensor %s" % t)
            base = os.path.basename(src)
            if seen.get(base, src) != src:
                raise ValueError("Two asset files have the same name %r: %s and %s" % (base, seen[base], src))
            seen[base] = src
            a = meta_graph.AssetFileDef()
            a.filename = base
            a.tensor_info.name = t.name
            any_ = Any()
            any_.type_url = "type.googleapis.com/tensorflow.AssetFileDef"
            any_.value = a.SerializeToString()
            ops.add_to_collection(constants.ASSETS_KEY, any_)
            dst = os.path.join(assets_dir, base)
            if not os.path.exists(dst):
                os.makedirs(assets_dir, exist_ok=True)
                shutil.copyfile(src, dst)

    def _add_main_op(self, main_op):
        if main_op is None:
            return
        if not isinstance(main_op, ops.Operation):
            raise TypeError("main_op needs to be an Operation: %r" % (main_op,))
        ops.add_to_collection(constants.MAIN_OP_KEY, main_op)

    def _add_train_op(self, train_op):
        if train_op is None:
            return
        if not isinstance(train_op, (ops.Operation, ops.Tensor)):
            raise TypeError("train_op needs to be a Tensor or Op: %r" % (train_op,))
        ops.add_to_collection(constants.TRAIN_OP_KEY, train_op)

    @staticmethod
    def _validate_signature_def_map(signature_def_map):
        for key, sig in (signature_def_map or {}).items():
            if not isinstance(sig, meta_graph.SignatureDef):
                try:
                    meta_graph.SignatureDef.FromString(sig.SerializeToString())
                except AttributeError:
                    raise TypeError("signature_def_map[%r] is not a SignatureDef" % key) from None
            if key in (constants.INIT_OP_SIGNATURE_KEY, constants.TRAIN_OP_SIGNATURE_KEY):
                raise KeyError("Invalid signature key: %s is reserved" % key)

    def _tag_and_add_meta_graph(self, meta_graph_def, tags, signature_def_map):
        for t in tags:
            meta_graph_def.meta_info_def.tags.append(t)
        for key, sig in (signature_def_map or {}).items():
            meta_graph_def.signature_def[key].MergeFromString(sig.SerializeToString())
        self._saved_model.meta_graphs.add().CopyFrom(meta_graph_def)

    def _clear_own_collections(self):
        g = ops.get_default_graph()
        for k in (constants.ASSETS_KEY, constants.MAIN_OP_KEY, constants.TRAIN_OP_KEY):
            g.clear_collection(k)

    def _saver(self, saver):
        from dflow.training import saver as saver_lib
        from dflow.ops import variables
        if saver is not None:
            return saver
        return saver_lib.Saver(variables.global_variables() + ops.get_collection(ops.GraphKeys.SAVEABLE_OBJECTS),
                               sharded=True, allow_empty=True)

    # ---- API ----
    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None, assets_collection=None,
                                     legacy_init_op=None, clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None, train_op=None, init_op=None,
                                     assets_list=None):
        """Saves the variables of `sess` and adds the graph as the MetaGraphDef tagged `tags`."""
        if self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has already been saved. Please "
                                 "invoke `add_meta_graph()` instead.")
        if isinstance(tags, str):
            tags = [tags]
        self._validate_signature_def_map(signature_def_map)
        main_op = main_op if main_op is not None else (legacy_init_op if legacy_init_op is not None else init_op)
        with sess.graph.as_default():
            self._clear_own_collections()
            self._save_and_write_assets(assets_collection if assets_collection is not None else assets_list)
            self._add_main_op(main_op)
            self._add_train_op(train_op)
            saver = self._saver(saver)
            var_dir = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY)
            os.makedirs(var_dir, exist_ok=True)
            if not saver._is_empty:
                try:
                    saver.save(sess, os.path.join(var_dir, constants.VARIABLES_FILENAME), write_meta_graph=False,
                               write_state=False)
                except errors.OpError:
                    raise
            m = saver.export_meta_graph(clear_devices=clear_devices, strip_default_attrs=strip_default_attrs)
            self._clear_own_collections()
        self._tag_and_add_meta_graph(m, tags, signature_def_map)
        self._has_saved_variables = True

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None, legacy_init_op=None,
                       clear_devices=False, main_op=None, strip_default_attrs=False, saver=None, train_op=None,
                       init_op=None, assets_list=None):
        """Adds the default graph as another MetaGraphDef (the variables saved before)."""
        if not self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has not been saved yet. Please "
                                 "invoke `add_meta_graph_and_variables()` first.")
        if isinstance(tags, str):
            tags = [tags]
        self._validate_signature_def_map(signature_def_map)
        main_op = main_op if main_op is not None else (legacy_init_op if legacy_init_op is not None else init_op)
        self._clear_own_collections()
        self._save_and_write_assets(assets_collection if assets_collection is not None else assets_list)
        self._add_main_op(main_op)
        self._add_train_op(train_op)
        saver = self._saver(saver)
        m = saver.export_meta_graph(clear_devices=clear_devices, strip_default_attrs=strip_default_attrs)
        self._clear_own_collections()
        self._tag_and_add_meta_graph(m, tags, signature_def_map)

    def save(self, as_text=False):
        """Writes saved_model.pb (saved_model.pbtxt with as_text); returns its path (bytes)."""
        name = constants.SAVED_MODEL_FILENAME_PBTXT if as_text else constants.SAVED_MODEL_FILENAME_PB
        path = os.path.join(self._export_dir, name)
        meta_graph._write(self._saved_model, path, as_text)
        return path.encode()


Builder = SavedModelBuilder


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    """A SavedModel for serving: tag "serve", a predict signature "serving_default" of `inputs` and
    `outputs` ({key: tensor}), the graph's asset files, devices cleared."""
    from dflow.saved_model import signature_constants, tag_constants
    sig = signature_def_utils.predict_signature_def(inputs, outputs)
    b = SavedModelBuilder(export_dir)
    b.add_meta_graph_and_variables(session, tags=[tag_constants.SERVING],
                                   signature_def_map={signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: sig},
                                   assets_collection=ops.get_collection(ops.GraphKeys.ASSET_FILEPATHS),
                                   main_op=legacy_init_op, clear_devices=True)
    b.save()
