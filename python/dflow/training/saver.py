"""tf.train.Saver and the checkpoint utilities over the C++ API's Saver (dflow/saver.h) and tensor
bundle reader: TensorFlow's V2 checkpoints ("PREFIX.index", "PREFIX.data-00000-of-00001" and the
directory's `checkpoint` state file), readable by TensorFlow and reading what TensorFlow writes.

    saver = tf.train.Saver()                      # every global variable, under its op name
    path = saver.save(sess, "/tmp/run/model", global_step=100)   # "/tmp/run/model-100"
    saver.restore(sess, tf.train.latest_checkpoint("/tmp/run"))

The save and restore ops are TensorFlow's ("save/Const", "save/SaveV2", "save/RestoreV2",
"save/restore_all"). Each save writes the graph's MetaGraphDef beside the checkpoint
("PREFIX.meta", as TensorFlow does; write_meta_graph=False leaves it out), so that
tf.train.import_meta_graph("PREFIX.meta") rebuilds the graph and returns a Saver built from its
SaverDef (Saver(saver_def=...): it runs the restore and save ops the SaverDef names).
"""
import os

from dflow import _dflow
from dflow.framework import dtypes
from dflow.framework import errors
from dflow.framework import meta_graph
from dflow.framework import ops
from dflow.framework.ops import GraphKeys
from dflow.ops import variables


SaverDef = meta_graph.SaverDef  # TensorFlow's SaverDef message (SaverDef.V2 == 2)


def _session_handle(sess):
    """The C++ session handle of a Python session (or of a wrapper around one)."""
    seen = 0
    while sess is not None and seen < 8:
        h = getattr(sess, "_h", None)
        if h is not None:
            return h
        if hasattr(sess, "_tf_sess"):
            sess = sess._tf_sess()
        elif hasattr(sess, "_sess"):
            sess = sess._sess
        else:
            break
        seen += 1
    raise TypeError("'sess' must be a Session; %s" % (sess,))


def op_list_to_dict(op_list, convert_variable_to_tensor=True):
    """{checkpoint name: variable, or the list of a partitioned variable's parts} for a list or dict
    of variables (TensorFlow's rule: a variable is saved under its op name, a part of a partitioned
    variable as a slice of the whole under the whole's name; two of the same name are a
    ValueError)."""
    from dflow.ops.partitioned_variables import PartitionedVariable
    if not isinstance(op_list, (list, tuple, set, dict)):
        raise TypeError("Variables to save should be passed in a dict or a list: %s" % op_list)
    if isinstance(op_list, dict):
        out = {}
        for name, var in op_list.items():
            if not isinstance(name, str):
                raise TypeError("Variable names should be strings: %r" % (name,))
            if isinstance(var, PartitionedVariable):
                var = list(var)
            out[name] = var
        return out
    out = {}
    for var in sorted(op_list, key=lambda x: x.name):
        if isinstance(var, PartitionedVariable):
            if var.name in out:
                raise ValueError("At least two variables have the same name: %s" % var.name)
            out[var.name] = list(var)
            continue
        if isinstance(var, (list, tuple)):
            raise TypeError("Variables to save should be variables, got the list %r" % (var,))
        info = var._get_save_slice_info() if isinstance(var, variables.Variable) else None
        if info is not None:
            parts = out.setdefault(info.full_name, [])
            if not isinstance(parts, list):
                raise ValueError("Mixing slices and non-slices with the same name: %s" % info.full_name)
            parts.append(var)
            continue
        if isinstance(var, variables.Variable):
            name = var.op.name
        elif isinstance(var, ops.Tensor) and var.op.type in ("VariableV2", "Variable"):
            name = var.op.name
        elif isinstance(var, ops.Tensor) and var.op.type == "Identity" and var.op.inputs[0].op.type in (
                "VariableV2", "Variable"):
            name = var.op.inputs[0].op.name
        else:
            raise TypeError("Can not convert a %s into a Variable to save." % type(var).__name__)
        if name in out:
            raise ValueError("At least two variables have the same name: %s" % name)
        out[name] = var
    return out


def _ref_of(var):
    if isinstance(var, variables.Variable):
        return var._ref()
    if isinstance(var, ops.Tensor):
        if var.op.type == "Identity" and var.op.inputs[0].op.type in ("VariableV2", "Variable"):
            return var.op.inputs[0]
        if var.op.type in ("VariableV2", "Variable"):
            return var
    raise TypeError("Saver: %r is not a variable" % (var,))


def _wrap_restore_error(err, msg):
    text = ("Restoring from checkpoint failed. This is most likely due to {} from the checkpoint. Please ensure "
            "that you have not altered the graph expected based on the checkpoint. Original error:\n\n{}"
            ).format(msg, err.message)
    return err.__class__(err.node_def, err.op, text)


class Saver:
    """Saves and restores variables (tf.train.Saver)."""

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False, saver_def=None,
                 builder=None, defer_build=False, allow_empty=False, write_version=SaverDef.V2,
                 pad_step_number=False, save_relative_paths=False, filename=None):
        if defer_build and var_list:
            raise ValueError("If `var_list` is provided then build cannot be deferred. Either set "
                             "defer_build=False or var_list=None.")
        self._from_saver_def = saver_def is not None
        if write_version not in (SaverDef.V2, None):
            raise NotImplementedError("dflow writes V2 checkpoints only (write_version=tf.train.SaverDef.V2)")
        self._var_list = var_list
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._filename = filename
        self._is_built = False
        self._is_empty = False
        self._cpp = None
        self.saver_def = None
        self._last_checkpoints = []
        if saver_def is not None:
            self.saver_def = SaverDef()
            self.saver_def.MergeFromString(saver_def.SerializeToString())
            if name:
                # An imported SaverDef names the ops under the import scope.
                pre = name.rstrip("/") + "/"
                d = self.saver_def
                for f in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
                    v = getattr(d, f)
                    if v and not v.startswith(pre):
                        setattr(d, f, pre + v)
            self._max_to_keep = self.saver_def.max_to_keep
            self._sharded = self.saver_def.sharded
            self._graph = ops.get_default_graph()
            self._is_built = True
            return
        if not defer_build:
            self.build()

    def build(self):
        if self._is_built:
            return
        g = ops.get_default_graph()
        var_list = self._var_list
        if var_list is None:
            var_list = variables.global_variables() + ops.get_collection(GraphKeys.SAVEABLE_OBJECTS)
        if not var_list:
            if self._allow_empty:
                self._is_empty = True
                self._is_built = True
                return
            raise ValueError("No variables to save")
        names = op_list_to_dict(var_list)
        named, sliced = [], []
        for n, v in sorted(names.items()):
            if isinstance(v, list):
                # Parts of a partitioned variable: the C++ saver writes each as a slice of the whole.
                for part in v:
                    info = part._get_save_slice_info() if isinstance(part, variables.Variable) else None
                    if info is None or info.full_name != n:
                        raise NotImplementedError("Saving the parts of a partitioned variable under another name "
                                                  "(%s) is not supported by dflow" % n)
                    sliced.append(part._ref()._out)
            else:
                named.append((n, _ref_of(v)._out))
        scope = g._scope
        max_to_keep = self._max_to_keep if self._max_to_keep else 0
        try:
            self._cpp = _dflow.Saver(scope, named, sliced, int(max_to_keep), float(self._keep_checkpoint_every_n_hours),
                                     bool(self._sharded), self._name or "save")
        except errors.InvalidArgumentError as e:
            raise ValueError(e.message) from None
        fname = g._tensor_of(self._cpp.filename)
        spath = g._tensor_of(self._cpp.save_path)
        restore = g._wrap(self._cpp.restore_op)
        self.saver_def = SaverDef(filename_tensor_name=fname.name, save_tensor_name=spath.name,
                                  restore_op_name=restore.name, max_to_keep=max_to_keep, sharded=self._sharded,
                                  keep_checkpoint_every_n_hours=self._keep_checkpoint_every_n_hours,
                                  version=SaverDef.V2)
        self._graph = g
        self._is_built = True

    def as_saver_def(self):
        return self.saver_def

    def to_proto(self, export_scope=None):
        """The SaverDef (what a MetaGraphDef's "savers" collection holds)."""
        if self.saver_def is None:
            return SaverDef()
        d = SaverDef()
        d.CopyFrom(self.saver_def)
        if export_scope:
            pre = export_scope.rstrip("/") + "/"
            for f in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
                v = getattr(d, f)
                if v.startswith(pre):
                    setattr(d, f, v[len(pre):])
        return d

    @property
    def last_checkpoints(self):
        if self._cpp is None:
            return list(self._last_checkpoints)
        return list(self._cpp.last_checkpoints())

    def set_last_checkpoints(self, last_checkpoints):
        raise NotImplementedError("Saver.set_last_checkpoints is not supported by dflow; use "
                                  "recover_last_checkpoints")

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        raise NotImplementedError("Saver.set_last_checkpoints_with_time is not supported by dflow; use "
                                  "recover_last_checkpoints")

    def recover_last_checkpoints(self, checkpoint_paths):
        """Adopts the checkpoints the state file of their directory lists (those that exist)."""
        if self._cpp is None or not checkpoint_paths:
            return
        dirs = {os.path.dirname(p) for p in checkpoint_paths}
        for d in dirs:
            try:
                self._cpp.recover_last_checkpoints(d or ".")
            except errors.NotFoundError:
                pass

    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False, save_debug_info=False):
        """Writes a checkpoint of the variables as they are in `sess`; returns its path."""
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        if sess is None or not hasattr(sess, "run"):
            raise TypeError("'sess' must be a Session; %s" % (sess,))
        if latest_filename is None:
            latest_filename = "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        if latest_filename != "checkpoint":
            raise NotImplementedError("dflow's Saver keeps its state in the file 'checkpoint' (latest_filename=%r)"
                                      % latest_filename)
        save_path = save_path.decode() if isinstance(save_path, bytes) else str(save_path)
        step = -1
        if global_step is not None:
            if not isinstance(global_step, int):
                from dflow.training import training_util
                global_step = training_util.global_step(sess, global_step)
            step = int(global_step)
            if self._pad_step_number:
                raise NotImplementedError("Saver(pad_step_number=True) is not supported by dflow")
        elif os.path.basename(save_path) == latest_filename and not self._sharded:
            raise ValueError("'latest_filename' collides with 'save_path': '%s' and '%s'"
                             % (latest_filename, save_path))
        if self._is_empty:
            return None
        parent = os.path.dirname(save_path)
        try:
            if self._cpp is None:
                path = self._save_by_saver_def(sess, save_path, step, bool(write_state))
            else:
                path = self._cpp.save(_session_handle(sess), save_path, step, bool(write_state))
        except (errors.FailedPreconditionError, errors.NotFoundError) as exc:
            if parent and not os.path.isdir(parent):
                raise ValueError("Parent directory of {} doesn't exist, can't save.".format(save_path)) from None
            raise exc
        if write_meta_graph:
            self.export_meta_graph(path + "." + meta_graph_suffix, strip_default_attrs=strip_default_attrs)
        return path

    def _save_by_saver_def(self, sess, save_path, step, write_state):
        """A save through the ops of an imported SaverDef; keeps the state file and max_to_keep."""
        import time
        path = save_path if step < 0 else "%s-%d" % (save_path, step)
        d = self.saver_def
        sess.run(d.save_tensor_name, {d.filename_tensor_name: path})
        if path in self._last_checkpoints:
            self._last_checkpoints.remove(path)
        self._last_checkpoints.append(path)
        while self._max_to_keep and len(self._last_checkpoints) > self._max_to_keep:
            old = self._last_checkpoints.pop(0)
            remove_checkpoint(old)
        if write_state:
            from google.protobuf import text_format
            st = meta_graph.graph_pb.CheckpointState()
            st.model_checkpoint_path = path
            st.all_model_checkpoint_paths.extend(self._last_checkpoints)
            st.all_model_checkpoint_timestamps.extend([time.time()] * len(self._last_checkpoints))
            meta_graph._write(st, os.path.join(os.path.dirname(path) or ".", "checkpoint"), as_text=True)
        return path

    def restore(self, sess, save_path):
        """Assigns every saved variable its value from the checkpoint `save_path`."""
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = save_path.decode() if isinstance(save_path, bytes) else str(save_path)
        if not checkpoint_exists(save_path):
            raise ValueError("The passed save_path is not a valid checkpoint: " + save_path)
        try:
            if self._cpp is None:
                d = self.saver_def
                sess.run(d.restore_op_name, {d.filename_tensor_name: save_path})
            else:
                self._cpp.restore(_session_handle(sess), save_path)
        except errors.NotFoundError as err:
            raise _wrap_restore_error(err, "a Variable name or other graph key that is missing") from None
        except errors.InvalidArgumentError as err:
            raise _wrap_restore_error(err, "a mismatch between the current graph and the graph") from None

    def export_meta_graph(self, filename=None, collection_list=None, as_text=False, export_scope=None,
                          clear_devices=False, clear_extraneous_savers=False, strip_default_attrs=False,
                          save_debug_info=False):
        """The graph's MetaGraphDef with this saver's SaverDef (written to `filename` when given)."""
        return meta_graph.export_meta_graph(filename=filename, graph=getattr(self, "_graph", None),
                                            saver_def=self.saver_def, collection_list=collection_list,
                                            as_text=as_text, export_scope=export_scope, clear_devices=clear_devices,
                                            clear_extraneous_savers=clear_extraneous_savers,
                                            strip_default_attrs=strip_default_attrs)


import_meta_graph = meta_graph.import_meta_graph
export_meta_graph = meta_graph.export_meta_graph


# ---- checkpoint files ----

def checkpoint_exists(checkpoint_prefix):
    """True when the V2 checkpoint PREFIX (its PREFIX.index) exists."""
    p = checkpoint_prefix.decode() if isinstance(checkpoint_prefix, bytes) else str(checkpoint_prefix)
    return bool(_dflow.checkpoint_exists(p))


class CheckpointState:
    """The `checkpoint` state file of a directory (TensorFlow's CheckpointState)."""

    def __init__(self, d):
        self.model_checkpoint_path = d["model_checkpoint_path"]
        self.all_model_checkpoint_paths = list(d["all_model_checkpoint_paths"])
        self.all_model_checkpoint_timestamps = list(d["all_model_checkpoint_timestamps"])
        self.last_preserved_timestamp = d["last_preserved_timestamp"]

    def __repr__(self):
        lines = ['model_checkpoint_path: "%s"' % self.model_checkpoint_path]
        lines += ['all_model_checkpoint_paths: "%s"' % p for p in self.all_model_checkpoint_paths]
        return "\n".join(lines) + "\n"

    __str__ = __repr__


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The directory's CheckpointState, or None when it has no state file."""
    d = _dflow.checkpoint_state(str(checkpoint_dir), latest_filename or "checkpoint")
    if d is None:
        return None
    return CheckpointState(d)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The path of the latest checkpoint the directory's state file names, or None."""
    return _dflow.latest_checkpoint(str(checkpoint_dir), latest_filename or "checkpoint")


def get_checkpoint_mtimes(checkpoint_prefixes):
    out = []
    for p in checkpoint_prefixes:
        try:
            out.append(os.stat(p + ".index").st_mtime)
        except OSError:
            pass
    return out


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=SaverDef.V2, meta_graph_suffix="meta"):
    d = os.path.dirname(checkpoint_prefix) or "."
    base = os.path.basename(checkpoint_prefix)
    for f in os.listdir(d):
        if f == base + ".index" or f.startswith(base + ".data-") or f == base + "." + meta_graph_suffix:
            os.remove(os.path.join(d, f))


class CheckpointReader:
    """The tensors of a checkpoint (tf.train.NewCheckpointReader): get_tensor, has_tensor and the
    maps of names to shapes and dtypes."""

    def __init__(self, filepattern):
        filepattern = filepattern.decode() if isinstance(filepattern, bytes) else str(filepattern)
        try:
            self._r = _dflow.CheckpointReader(filepattern)
        except errors.NotFoundError:
            raise errors.NotFoundError(None, None, "Unsuccessful TensorSliceReader constructor: Failed to find any "
                                       "matching files for %s" % filepattern) from None
        self._prefix = filepattern

    def get_tensor(self, tensor_str):
        name = tensor_str.decode() if isinstance(tensor_str, bytes) else tensor_str
        if not self._r.has_tensor(name):
            raise errors.NotFoundError(None, None, "Key %s not found in checkpoint" % name)
        return self._r.get_tensor(name)

    def has_tensor(self, tensor_str):
        name = tensor_str.decode() if isinstance(tensor_str, bytes) else tensor_str
        return self._r.has_tensor(name)

    def get_variable_to_shape_map(self):
        return {n: list(self._r.dtype_and_shape(n)[1]) for n in self._r.tensor_names()}

    def get_variable_to_dtype_map(self):
        return {n: dtypes.as_dtype(self._r.dtype_and_shape(n)[0]) for n in self._r.tensor_names()}

    def debug_string(self):
        lines = []
        for n in sorted(self._r.tensor_names()):
            dt, shape = self._r.dtype_and_shape(n)
            lines.append("%s (%s) %s" % (n, dtypes.as_dtype(dt).name, list(shape)))
        return ("\n".join(lines) + "\n").encode()


def NewCheckpointReader(filepattern):  # noqa: N802 - TensorFlow's name
    return CheckpointReader(filepattern)


def _checkpoint_filename(ckpt_dir_or_file):
    if os.path.isdir(ckpt_dir_or_file):
        return latest_checkpoint(ckpt_dir_or_file)
    return ckpt_dir_or_file


def load_checkpoint(ckpt_dir_or_file):
    filename = _checkpoint_filename(ckpt_dir_or_file)
    if filename is None:
        raise ValueError("Couldn't find 'checkpoint' file or checkpoints in given directory %s" % ckpt_dir_or_file)
    return NewCheckpointReader(filename)


def load_variable(ckpt_dir_or_file, name):
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file):
    """[(name, shape)] of the checkpoint's tensors, sorted by name."""
    reader = load_checkpoint(ckpt_dir_or_file)
    m = reader.get_variable_to_shape_map()
    return [(n, m[n]) for n in sorted(m)]


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    raise NotImplementedError("tf.train.init_from_checkpoint is not supported by dflow; restore with a "
                              "tf.train.Saver(var_list={checkpoint name: variable})")

