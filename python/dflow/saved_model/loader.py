"""tf.saved_model.loader: loads a SavedModel directory (saved_model.pb, variables/, assets/) into
a session, as TensorFlow 1.x's loader does.

    meta_graph_def = tf.saved_model.loader.load(sess, ["serve"], export_dir)
    sig = meta_graph_def.signature_def["serving_default"]
    y = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: [[1.0, 2.0]]})

The MetaGraphDef whose tags are the given set is imported; the variables are restored through its
SaverDef from variables/variables; then its main op (collection saved_model_main_op, else
legacy_init_op, else the __saved_model_init_op signature) runs with each asset's tensor fed the
path of the file in assets/.
"""
import os

from dflow.framework import meta_graph
from dflow.framework import ops
from dflow.saved_model import constants


def _path(*parts):
    return os.path.join(*[p.decode() if isinstance(p, bytes) else str(p) for p in parts])


def maybe_saved_model_directory(export_dir):
    """Whether `export_dir` holds a saved_model.pb or saved_model.pbtxt."""
    return (os.path.isfile(_path(export_dir, constants.SAVED_MODEL_FILENAME_PB))
            or os.path.isfile(_path(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)))


contains_saved_model = maybe_saved_model_directory


def parse_saved_model(export_dir):
    """The SavedModel message of `export_dir` (saved_model.pb, else saved_model.pbtxt)."""
    pb = _path(export_dir, constants.SAVED_MODEL_FILENAME_PB)
    txt = _path(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
    sm = meta_graph.SavedModel()
    if os.path.isfile(pb):
        with open(pb, "rb") as f:
            data = f.read()
        try:
            sm.ParseFromString(data)
        except Exception as e:  # noqa: BLE001
            raise IOError("Cannot parse file %s: %s." % (pb, e)) from None
        return sm
    if os.path.isfile(txt):
        from google.protobuf import text_format
        with open(txt, "rb") as f:
            try:
                text_format.Merge(f.read().decode("utf-8"), sm)
            except Exception as e:  # noqa: BLE001
                raise IOError("Cannot parse file %s: %s." % (txt, e)) from None
        return sm
    raise IOError("SavedModel file does not exist at: %s%s{%s|%s}"
                  % (_path(export_dir), os.sep, constants.SAVED_MODEL_FILENAME_PBTXT,
                     constants.SAVED_MODEL_FILENAME_PB))


def _tag_sets(saved_model):
    return [list(m.meta_info_def.tags) for m in saved_model.meta_graphs]


def get_meta_graph_def(saved_model, tags):
    """The MetaGraphDef whose tag set is `tags`; a RuntimeError listing the tag sets otherwise."""
    want = set(tags)
    for m in saved_model.meta_graphs:
        if set(m.meta_info_def.tags) == want:
            return m
    raise RuntimeError("MetaGraphDef associated with tags %s could not be found in SavedModel, with available "
                       "tags '%s'. To inspect available tag-sets in the SavedModel, please use the SavedModel "
                       "CLI: `saved_model_cli`." % (str(tags).strip("[]"), _tag_sets(saved_model)))


def _asset_files(meta_graph_def):
    out = list(meta_graph_def.asset_file_def)
    cd = meta_graph_def.collection_def.get(constants.ASSETS_KEY)
    if cd is not None and cd.WhichOneof("kind") == "any_list":
        for a in cd.any_list.value:
            out.append(meta_graph.AssetFileDef.FromString(a.value))
    return out


def get_asset_tensors(export_dir, meta_graph_def, import_scope=None):
    """{asset tensor name: path of the asset file in export_dir/assets}."""
    out = {}
    for a in _asset_files(meta_graph_def):
        name = a.tensor_info.name
        if import_scope:
            name = import_scope.rstrip("/") + "/" + name
        out[name] = _path(export_dir, constants.ASSETS_DIRECTORY, a.filename)
    return out


def get_init_op(meta_graph_def, import_scope=None):
    """The op to run after the restore: main op, legacy init op or init-op signature; or None."""
    g = ops.get_default_graph()

    def scoped(name):
        return import_scope.rstrip("/") + "/" + name if import_scope else name

    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        cd = meta_graph_def.collection_def.get(key)
        if cd is None:
            continue
        names = list(cd.node_list.value)
        if len(names) != 1:
            raise RuntimeError("Expected exactly one SavedModel main op. Found: %s" % names)
        return g.as_graph_element(scoped(names[0]))
    sig = meta_graph_def.signature_def.get(constants.INIT_OP_SIGNATURE_KEY)
    if sig is not None:
        info = sig.outputs[constants.INIT_OP_SIGNATURE_KEY]
        return g.as_graph_element(scoped(info.name)).op if ":" in info.name else g.as_graph_element(scoped(info.name))
    return None


class SavedModelLoader:
    """Loads the MetaGraphDefs of one SavedModel directory."""

    def __init__(self, export_dir):
        self._export_dir = export_dir
        self._variables_path = _path(export_dir, constants.VARIABLES_DIRECTORY, constants.VARIABLES_FILENAME)
        self._saved_model = parse_saved_model(export_dir)

    @property
    def export_dir(self):
        return self._export_dir

    @property
    def variables_path(self):
        return self._variables_path

    @property
    def saved_model(self):
        return self._saved_model

    def get_meta_graph_def_from_tags(self, tags):
        return get_meta_graph_def(self._saved_model, tags)

    def load_graph(self, graph, tags, import_scope=None, **saver_kwargs):
        m = self.get_meta_graph_def_from_tags(tags)
        with graph.as_default():
            saver = meta_graph.import_meta_graph(m, import_scope=import_scope, **saver_kwargs)
        return saver, None

    def restore_variables(self, sess, saver, import_scope=None):
        with sess.graph.as_default():
            if saver is None and not ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES, import_scope):
                return
            if saver is None:
                raise ValueError("No saver to restore the variables of %s with" % self._export_dir)
            saver.restore(sess, self._variables_path)

    def run_init_ops(self, sess, tags, import_scope=None):
        m = self.get_meta_graph_def_from_tags(tags)
        with sess.graph.as_default():
            assets = get_asset_tensors(self._export_dir, m, import_scope)
            init_op = get_init_op(m, import_scope)
            if init_op is not None:
                sess.run(init_op, feed_dict=assets)

    def load(self, sess, tags, import_scope=None, **saver_kwargs):
        with sess.graph.as_default():
            saver, _ = self.load_graph(sess.graph, tags, import_scope, **saver_kwargs)
            self.restore_variables(sess, saver, import_scope)
            self.run_init_ops(sess, tags, import_scope)
        return self.get_meta_graph_def_from_tags(tags)


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads the MetaGraphDef of `export_dir` tagged `tags` into `sess` (its graph, variables and
    init op); returns the MetaGraphDef (its signature_def map names the tensors to run)."""
    return SavedModelLoader(export_dir).load(sess, tags, import_scope, **saver_kwargs)
