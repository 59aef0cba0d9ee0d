"""tf.summary (TensorFlow 1.x): scalar and histogram summaries, merge and merge_all, and
FileWriter, over the C++ API's summary ops and event-file writer (dflow/summary.h).

    tf.summary.scalar("loss", loss)
    merged = tf.summary.merge_all()
    writer = tf.summary.FileWriter("/tmp/logs", sess.graph)
    writer.add_summary(sess.run(merged), step)

Event files are TensorFlow's ("events.out.tfevents.<time>.<host>"), readable by TensorBoard and
tf.compat.v1.train.summary_iterator.
"""
import os
import re
import threading

from dflow import _dflow
from dflow.framework import errors
from dflow.framework import ops
from dflow.framework.ops import GraphKeys

try:
    from dflow.framework.graph_pb import Event, HistogramProto, SessionLog, Summary, SummaryMetadata  # noqa: F401
except ImportError:  # pragma: no cover - the protobuf runtime is missing
    Event = HistogramProto = SessionLog = Summary = SummaryMetadata = None

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def _clean_tag(name):
    if name is not None:
        new_name = _INVALID_TAG_CHARACTERS.sub("_", name)
        new_name = new_name.lstrip("/")
        return new_name
    return name


def _collect(val, collections, default_collections):
    if collections is None:
        collections = default_collections
    for key in collections:
        ops.add_to_collection(key, val)


def _summary(op_type, cpp_fn, name, tensor, collections, family):
    g = ops.get_default_graph()
    if family is None and collections is None:
        # The C++ API's summary: named and tagged as TensorFlow does, and collected for the C++
        # side too (a monitored session's default summary op).
        t = ops.convert_to_tensor(tensor)
        out = g._tensor_of(cpp_fn(g._scope, name, t._out))
        ops.add_to_collection(GraphKeys.SUMMARIES, out)
        return out
    name = _clean_tag(name)
    family = _clean_tag(family)
    base = name if family is None else "{}/{}".format(family, name)
    with ops.name_scope(base, None, [tensor]) as scope:
        tag = scope.rstrip("/") if family is None else "{}/{}".format(family, scope.rstrip("/"))
        val = ops.apply_op(op_type, scope, [tag, tensor])
    _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def scalar(name, tensor, collections=None, family=None):
    """A ScalarSummary of `tensor` (a real scalar), tagged with its op name."""
    return _summary("ScalarSummary", _dflow.summary_scalar, name, tensor, collections, family)


def histogram(name, values, collections=None, family=None):
    """A HistogramSummary of `values`, tagged with its op name."""
    return _summary("HistogramSummary", _dflow.summary_histogram, name, values, collections, family)


def tensor_summary(name, tensor, summary_description=None, collections=None, summary_metadata=None, family=None,
                   display_name=None):
    """A TensorSummaryV2 of `tensor` (any dtype and shape) with its SummaryMetadata."""
    if summary_metadata is None:
        summary_metadata = SummaryMetadata()
    if summary_description is not None:
        summary_metadata.summary_description = summary_description
    if display_name is not None:
        summary_metadata.display_name = display_name
    meta = summary_metadata.SerializeToString()
    name = _clean_tag(name)
    family = _clean_tag(family)
    base = name if family is None else "{}/{}".format(family, name)
    with ops.name_scope(base, None, [tensor]) as scope:
        tag = scope.rstrip("/") if family is None else "{}/{}".format(family, scope.rstrip("/"))
        val = ops.apply_op("TensorSummaryV2", scope, [tag, tensor, meta])
    _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def text(name, tensor, collections=None):
    """A summary of a string tensor for TensorBoard's text plugin."""
    tensor = ops.convert_to_tensor(tensor)
    if tensor.dtype.base_dtype.name != "string":
        raise ValueError("Expected tensor %s to have dtype string, got %s" % (tensor.name, tensor.dtype))
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name=name, tensor=tensor, summary_metadata=meta, collections=collections)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    raise NotImplementedError("tf.summary.image needs an ImageSummary op, which dflow does not have")


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    raise NotImplementedError("tf.summary.audio needs an AudioSummary op, which dflow does not have")


def merge(inputs, collections=None, name=None):
    """One serialized Summary with the values of all `inputs`."""
    g = ops.get_default_graph()
    inputs = [ops.convert_to_tensor(i) for i in inputs]
    if name is None and inputs:
        val = g._tensor_of(_dflow.summary_merge(g._scope, [i._out for i in inputs]))
    else:
        with ops.name_scope(name, "Merge", inputs):
            val = ops.apply_op("MergeSummary", name, [inputs])
    _collect(val, collections, [])
    return val


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """merge() of every summary in the collection `key`; None when there is none."""
    summary_ops = ops.get_collection(key, scope=scope)
    if not summary_ops:
        return None
    return merge(summary_ops, name=name)


def get_summary_description(node_def):
    return None


def _serialized(proto_or_bytes, what):
    if isinstance(proto_or_bytes, (bytes, bytearray)):
        return bytes(proto_or_bytes)
    if hasattr(proto_or_bytes, "item") and not hasattr(proto_or_bytes, "SerializeToString"):
        v = proto_or_bytes.item()  # a fetched numpy bytes scalar
        if isinstance(v, bytes):
            return v
    ser = getattr(proto_or_bytes, "SerializeToString", None)
    if ser is None:
        raise TypeError("%s must be a %s proto or its serialized bytes, got %r" % (what, what, type(proto_or_bytes)))
    return ser()


class FileWriter:
    """Writes Summary protos and events to an event file in `logdir` (tf.summary.FileWriter)."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None, filename_suffix=None,
                 session=None):
        if session is not None:
            raise NotImplementedError("FileWriter(session=...) is not supported by dflow")
        self._logdir = str(logdir)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._suffix = filename_suffix or ""
        self._lock = threading.Lock()
        self._closed = False
        self._w = _dflow.FileWriter(self._logdir, int(max_queue), float(flush_secs), self._suffix)
        if graph is not None or graph_def is not None:
            self.add_graph(graph=graph, graph_def=graph_def)

    def get_logdir(self):
        return self._logdir

    def _writer(self):
        if self._closed:
            # TensorFlow's writer drops what is added after close().
            return None
        return self._w

    def add_summary(self, summary, global_step=None):
        """Adds a Summary (a proto, or the serialized bytes a summary op returns) at `global_step`."""
        data = _serialized(summary, "Summary")
        w = self._writer()
        if w is not None:
            w.add_summary(data, int(global_step) if global_step is not None else 0)

    def add_event(self, event):
        data = _serialized(event, "Event")
        w = self._writer()
        if w is not None:
            w.add_event(data)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Adds the graph (a tf.Graph, or a GraphDef) to the event file."""
        w = self._writer()
        if w is None:
            return
        step = int(global_step) if global_step is not None else 0
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        if isinstance(graph, ops.Graph):
            w.add_graph(graph._h.root, step)
            return
        gd = graph_def if graph_def is not None else graph
        if gd is None:
            raise ValueError("No graph or graph_def to add")
        w.add_graph_def(_serialized(gd, "GraphDef"), step)

    def add_meta_graph(self, meta_graph_def, global_step=None):
        raise NotImplementedError("dflow does not write MetaGraphDefs (FileWriter.add_meta_graph)")

    def add_session_log(self, session_log, global_step=None):
        w = self._writer()
        if w is None:
            return
        w.add_session_log(int(session_log.status), session_log.msg or "",
                          int(global_step) if global_step is not None else 0,
                          getattr(session_log, "checkpoint_path", "") or "")

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        raise NotImplementedError("dflow does not record run metadata (FileWriter.add_run_metadata)")

    def flush(self):
        w = self._writer()
        if w is not None:
            w.flush()

    def close(self):
        if self._closed:
            return
        self._closed = True
        self._w.close()

    def reopen(self):
        """After close(): writes to a new event file."""
        if self._closed:
            self._w = _dflow.FileWriter(self._logdir, int(self._max_queue), float(self._flush_secs), self._suffix)
            self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.close()


class FileWriterCache:
    """One FileWriter per log directory (tf.summary.FileWriterCache)."""

    _cache = {}
    _lock = threading.RLock()

    @staticmethod
    def get(logdir):
        with FileWriterCache._lock:
            w = FileWriterCache._cache.get(logdir)
            if w is None:
                w = FileWriter(logdir, graph=ops.get_default_graph())
                FileWriterCache._cache[logdir] = w
            return w

    @staticmethod
    def clear():
        with FileWriterCache._lock:
            for w in FileWriterCache._cache.values():
                w.close()
            FileWriterCache._cache = {}


def summary_iterator(path):
    """The Event protos of an event file, in order (tf.train.summary_iterator)."""
    if Event is None:
        raise NotImplementedError("summary_iterator needs the protobuf runtime")
    for data in _dflow.read_events(str(path)):
        yield Event.FromString(data)


def _event_files(logdir):
    return sorted(os.path.join(logdir, f) for f in os.listdir(logdir) if "tfevents" in f)
