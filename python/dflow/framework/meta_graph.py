"""MetaGraphDef: a graph with its saver's op names and its named collections (TensorFlow's
meta_graph.proto), as the ".meta" file beside a checkpoint and the body of a SavedModel.

    meta = tf.train.export_meta_graph("/tmp/run/model.meta")        # the default graph
    saver = tf.train.import_meta_graph("/tmp/run/model.ckpt-100.meta")
    saver.restore(sess, "/tmp/run/model.ckpt-100")
    train_op = tf.get_collection("train_op")[0]

Collections are written as TensorFlow writes them: variable collections as serialized
VariableDefs (bytes_list), ops and tensors by name (node_list), numbers (int64_list,
float_list), strings (bytes_list); collections of other objects are left out with a warning, as
TensorFlow leaves them. Read back, variables are Variable objects again (one object per variable
for every collection that names it), ops and tensors the graph's own.
"""
import logging
import os

from dflow.framework import graph_pb
from dflow.framework import ops
from dflow.framework.ops import GraphKeys

MetaGraphDef = graph_pb.message_class("MetaGraphDef")
CollectionDef = graph_pb.message_class("CollectionDef")
SaverDef = graph_pb.message_class("SaverDef")
VariableDef = graph_pb.message_class("VariableDef")
SignatureDef = graph_pb.message_class("SignatureDef")
TensorInfo = graph_pb.message_class("TensorInfo")
AssetFileDef = graph_pb.message_class("AssetFileDef")
SavedModel = graph_pb.message_class("SavedModel")
_Any = graph_pb.message_class("Any")

# Collections whose items are variables, written as VariableDefs (TensorFlow's register_proto_function).
VARIABLE_COLLECTIONS = (GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES, GraphKeys.LOCAL_VARIABLES,
                        GraphKeys.MODEL_VARIABLES, GraphKeys.MOVING_AVERAGE_VARIABLES, GraphKeys.METRIC_VARIABLES,
                        GraphKeys.CONCATENATED_VARIABLES, GraphKeys.GLOBAL_STEP, "trainable_resource_variables")
# TensorFlow's control-flow contexts and queue runners (protos dflow does not rebuild objects from).
_SKIPPED_ON_IMPORT = (GraphKeys.COND_CONTEXT, GraphKeys.WHILE_CONTEXT, GraphKeys.QUEUE_RUNNERS,
                      "savers", "saveable_objects")

_log = logging.getLogger("dflow")


def _strip_scope(name, export_scope):
    if not export_scope:
        return name
    prefix = export_scope.rstrip("/") + "/"
    if name.startswith("^" + prefix):
        return "^" + name[len(prefix) + 1:]
    if name.startswith("loc:@" + prefix):
        return "loc:@" + name[len(prefix) + 5:]
    return name[len(prefix):] if name.startswith(prefix) else name


def _prepend_scope(name, import_scope):
    if not import_scope:
        return name
    prefix = import_scope.rstrip("/") + "/"
    if name.startswith("^"):
        return "^" + prefix + name[1:]
    return prefix + name


# ---- variables <-> VariableDef ----

def variable_to_proto(var, export_scope=None):
    """TensorFlow's RefVariable.to_proto: the names of the variable's ops and tensors."""
    d = VariableDef()
    d.variable_name = _strip_scope(var.name, export_scope)
    if var._initial_value is not None:
        d.initial_value_name = _strip_scope(var._initial_value.name, export_scope)
    d.trainable = bool(var.trainable)
    d.synchronization = int(getattr(var.synchronization, "value", var.synchronization) or 0)
    d.aggregation = int(getattr(var.aggregation, "value", var.aggregation) or 0)
    if var.initializer is not None:
        d.initializer_name = _strip_scope(var.initializer.name, export_scope)
    # A variable read by no snapshot yet (some optimizer slots) names its reference output: the
    # export adds no ops (the graph may be finalized), and TensorFlow's from_proto needs a name.
    snap = var._snapshot if var._snapshot is not None else var._ref()
    d.snapshot_name = _strip_scope(snap.name, export_scope)
    info = var._get_save_slice_info()
    if info is not None:
        d.save_slice_info_def.full_name = _strip_scope(info.full_name, export_scope)
        d.save_slice_info_def.full_shape.extend(int(x) for x in info.full_shape)
        d.save_slice_info_def.var_offset.extend(int(x) for x in info.var_offset)
        d.save_slice_info_def.var_shape.extend(int(x) for x in info.var_shape)
    return d


def variable_from_proto(variable_def, import_scope=None, graph=None):
    """TensorFlow's RefVariable.from_proto: a Variable over the ops the VariableDef names."""
    from dflow.ops import variables
    if isinstance(variable_def, (bytes, bytearray)):
        variable_def = VariableDef.FromString(bytes(variable_def))
    if variable_def.is_resource:
        raise NotImplementedError("Variable %s is a resource variable, which dflow does not have"
                                  % variable_def.variable_name)
    g = graph or ops.get_default_graph()

    def elem(name):
        return g.as_graph_element(_prepend_scope(name, import_scope))

    ref = elem(variable_def.variable_name)
    init = elem(variable_def.initializer_name) if variable_def.initializer_name else None
    snap = elem(variable_def.snapshot_name) if variable_def.snapshot_name else None
    v = variables.Variable._from_existing(g, ref, init, snap, trainable=variable_def.trainable)
    if variable_def.initial_value_name:
        v._initial_value = elem(variable_def.initial_value_name)
    if variable_def.HasField("save_slice_info_def"):
        s = variable_def.save_slice_info_def
        v._save_slice_info = variables.Variable.SaveSliceInfo(
            _prepend_scope(s.full_name, import_scope), list(s.full_shape), list(s.var_offset), list(s.var_shape))
    return v


# ---- collections ----

def _is_variable(x):
    from dflow.ops import variables
    return isinstance(x, variables.Variable)


def add_collection_def(meta_graph_def, key, graph=None, export_scope=None):
    """Writes collection `key` of the graph into meta_graph_def.collection_def (TensorFlow's rules)."""
    g = graph or ops.get_default_graph()
    items = g.get_collection(key)
    if not items:
        return
    if export_scope:
        items = [x for x in items if not hasattr(x, "name") or
                 x.name.startswith(export_scope.rstrip("/") + "/")]
        if not items:
            return
    cd = CollectionDef()
    first = items[0]
    try:
        if _is_variable(first):
            vs = [x for x in items if _is_variable(x)]
            cd.bytes_list.value.extend(variable_to_proto(v, export_scope).SerializeToString() for v in vs)
        elif isinstance(first, (ops.Tensor, ops.Operation)):
            names = []
            for x in items:
                if _is_variable(x):
                    x = x._ref()
                names.append(_strip_scope(x.name, export_scope))
            cd.node_list.value.extend(names)
        elif isinstance(first, _Any):
            for x in items:
                cd.any_list.value.add().CopyFrom(x)
        elif isinstance(first, bool) or not isinstance(first, (int, float, str, bytes)):
            if hasattr(first, "to_proto"):
                cd.bytes_list.value.extend(x.to_proto(export_scope=export_scope).SerializeToString() for x in items)
            else:
                _log.warning("Collection %s is not written to the MetaGraphDef: its items (%s) have no proto form",
                             key, type(first).__name__)
                return
        elif isinstance(first, int):
            cd.int64_list.value.extend(int(x) for x in items)
        elif isinstance(first, float):
            cd.float_list.value.extend(float(x) for x in items)
        else:
            cd.bytes_list.value.extend(x.encode() if isinstance(x, str) else bytes(x) for x in items)
    except Exception as e:  # noqa: BLE001 - TensorFlow logs and skips a collection it cannot write
        _log.warning("Collection %s is not written to the MetaGraphDef: %s", key, e)
        return
    meta_graph_def.collection_def[str(key)].CopyFrom(cd)


def _collection_items(key, cd, graph, import_scope, var_cache):
    kind = cd.WhichOneof("kind")
    if kind == "node_list":
        return [graph.as_graph_element(_prepend_scope(n, import_scope)) for n in cd.node_list.value]
    if kind == "bytes_list":
        if key in VARIABLE_COLLECTIONS:
            out = []
            for b in cd.bytes_list.value:
                vd = VariableDef.FromString(b)
                name = vd.variable_name
                if name not in var_cache:
                    var_cache[name] = variable_from_proto(vd, import_scope, graph)
                v = var_cache[name]
                if key == GraphKeys.TRAINABLE_VARIABLES:
                    v._trainable = True
                out.append(v)
            return out
        return [bytes(b) for b in cd.bytes_list.value]
    if kind == "int64_list":
        return [int(x) for x in cd.int64_list.value]
    if kind == "float_list":
        return [float(x) for x in cd.float_list.value]
    if kind == "any_list":
        return list(cd.any_list.value)
    return []


# ---- files ----

def read_meta_graph_file(filename):
    """A MetaGraphDef from a file: binary, or text format when it does not parse as binary."""
    if not os.path.exists(filename):
        raise IOError("File %s does not exist." % filename)
    with open(filename, "rb") as f:
        data = f.read()
    m = MetaGraphDef()
    try:
        m.ParseFromString(data)
        return m
    except Exception:  # noqa: BLE001 - then it may be text
        pass
    from google.protobuf import text_format
    try:
        text_format.Merge(data.decode("utf-8"), m)
    except Exception as e:  # noqa: BLE001
        raise IOError("Cannot parse file %s: %s." % (filename, e)) from None
    return m


def as_meta_graph_message(meta_graph_or_file):
    """A dflow MetaGraphDef for a file name, serialized bytes or a MetaGraphDef of any class."""
    if isinstance(meta_graph_or_file, MetaGraphDef):
        return meta_graph_or_file
    if isinstance(meta_graph_or_file, (str, os.PathLike)):
        return read_meta_graph_file(os.fspath(meta_graph_or_file))
    if isinstance(meta_graph_or_file, (bytes, bytearray)):
        return MetaGraphDef.FromString(bytes(meta_graph_or_file))
    ser = getattr(meta_graph_or_file, "SerializeToString", None)
    if ser is None:
        raise TypeError("Expected a MetaGraphDef or a file name, got %s" % type(meta_graph_or_file).__name__)
    return MetaGraphDef.FromString(ser())


def _write(message, filename, as_text):
    d = os.path.dirname(filename)
    if d:
        os.makedirs(d, exist_ok=True)
    if as_text:
        from google.protobuf import text_format
        data = text_format.MessageToString(message).encode()
    else:
        data = message.SerializeToString()
    tmp = filename + ".tmp%d" % os.getpid()
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, filename)


# ---- export / import ----

def export_scoped_meta_graph(filename=None, graph_def=None, graph=None, export_scope=None, as_text=False,
                             unbound_inputs_col_name="unbound_inputs", clear_devices=False, saver_def=None,
                             clear_extraneous_savers=False, strip_default_attrs=False, meta_info_def=None,
                             collection_list=None, **kwargs):
    """The MetaGraphDef of `graph` (the default graph) with its saver def and collections; writes it
    to `filename` when given. Returns (meta_graph_def, {})."""
    import dflow
    g = graph or ops.get_default_graph()
    m = MetaGraphDef()
    if meta_info_def is not None:
        m.meta_info_def.MergeFromString(meta_info_def.SerializeToString())
    m.meta_info_def.tensorflow_version = dflow.__version__
    m.meta_info_def.tensorflow_git_version = "dflow"
    m.meta_info_def.stripped_default_attrs = bool(strip_default_attrs)
    keys = collection_list if collection_list is not None else g.get_all_collection_keys()
    for key in keys:
        add_collection_def(m, key, g, export_scope)
    if graph_def is None:
        gd = g.as_graph_def()
    else:
        gd = graph_pb.as_graph_def_message(graph_def)
    m.graph_def.MergeFrom(gd)
    from dflow import _dflow
    m.meta_info_def.stripped_op_list.MergeFromString(_dflow.stripped_op_list(gd.SerializeToString()))
    if export_scope:
        prefix = export_scope.rstrip("/") + "/"
        keep = [n for n in m.graph_def.node if n.name.startswith(prefix)]
        del m.graph_def.node[:]
        for n in keep:
            n.name = _strip_scope(n.name, export_scope)
            ins = [_strip_scope(s, export_scope) for s in n.input]
            del n.input[:]
            n.input.extend(ins)
            m.graph_def.node.add().CopyFrom(n)
    if clear_devices:
        for n in m.graph_def.node:
            n.device = ""
    if saver_def is not None:
        m.saver_def.MergeFromString(saver_def.SerializeToString())
    if filename:
        _write(m, filename, as_text)
    return m, {}


def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None, collection_list=None,
                      as_text=False, graph=None, export_scope=None, clear_devices=False,
                      clear_extraneous_savers=False, strip_default_attrs=False, save_debug_info=False, **kwargs):
    """tf.train.export_meta_graph: the MetaGraphDef of the default graph (or `graph`), written to
    `filename` when given."""
    m, _ = export_scoped_meta_graph(filename=filename, meta_info_def=meta_info_def, graph_def=graph_def,
                                    saver_def=saver_def, collection_list=collection_list, as_text=as_text,
                                    graph=graph, export_scope=export_scope, clear_devices=clear_devices,
                                    strip_default_attrs=strip_default_attrs)
    return m


def import_scoped_meta_graph(meta_graph_or_file, clear_devices=False, graph=None, import_scope=None,
                             input_map=None, restore_collections_predicate=(lambda key: True), **kwargs):
    """Adds the MetaGraphDef's graph to `graph` (the default graph) under `import_scope`, and its
    collections. Returns {} (the variables are in the collections)."""
    from dflow.framework import importer
    m = as_meta_graph_message(meta_graph_or_file)
    g = graph or ops.get_default_graph()
    gd = graph_pb.GraphDef()
    gd.CopyFrom(m.graph_def)
    if clear_devices:
        for n in gd.node:
            n.device = ""
    with g.as_default():
        importer.import_graph_def(gd, input_map=input_map, name=import_scope or "")
        var_cache = {}
        for key in sorted(m.collection_def):
            if key in _SKIPPED_ON_IMPORT or not restore_collections_predicate(key):
                continue
            cd = m.collection_def[key]
            try:
                items = _collection_items(key, cd, g, import_scope, var_cache)
            except (KeyError, ValueError) as e:
                _log.warning("Collection %s of the MetaGraphDef is not restored: %s", key, e)
                continue
            for x in items:
                g.add_to_collection(key, x)
    return {}


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **kwargs):
    """tf.train.import_meta_graph: adds the MetaGraphDef's graph and collections to the default
    graph; returns a Saver built from its SaverDef (a new Saver when it has none and there are
    variables, else None)."""
    from dflow.training import saver as saver_lib
    from dflow.ops import variables
    m = as_meta_graph_message(meta_graph_or_file)
    import_scoped_meta_graph(m, clear_devices=clear_devices, import_scope=import_scope, **kwargs)
    if m.HasField("saver_def") and m.saver_def.restore_op_name:
        return saver_lib.Saver(saver_def=m.saver_def, name=import_scope)
    scope = import_scope
    if variables.global_variables(scope) or ops.get_collection(GraphKeys.SAVEABLE_OBJECTS, scope):
        return saver_lib.Saver()
    _log.info("Saver not created because there are no variables in the graph to restore")
    return None
