"""tf.Session and tf.InteractiveSession over dflow's ClientSession."""
import collections
import threading

import numpy as np

from dflow import _dflow
from dflow.framework import dtypes
from dflow.framework import ops
from dflow.framework import sparse_tensor


class ConfigProto:
    """The session options TensorFlow's ConfigProto carries that dflow uses (the rest are kept)."""

    def __init__(self, inter_op_parallelism_threads=0, intra_op_parallelism_threads=0,
                 allow_soft_placement=False, log_device_placement=False, operation_timeout_in_ms=0,
                 device_filters=None, device_count=None, gpu_options=None, graph_options=None, **kwargs):
        self.inter_op_parallelism_threads = inter_op_parallelism_threads
        self.intra_op_parallelism_threads = intra_op_parallelism_threads
        self.allow_soft_placement = allow_soft_placement
        self.log_device_placement = log_device_placement
        self.operation_timeout_in_ms = operation_timeout_in_ms
        self.device_filters = list(device_filters or [])
        self.device_count = dict(device_count or {})
        self.gpu_options = gpu_options if gpu_options is not None else GPUOptions()
        self.graph_options = graph_options if graph_options is not None else GraphOptions()
        for k, v in kwargs.items():
            setattr(self, k, v)

    def CopyFrom(self, other):  # noqa: N802 - protobuf's name
        self.__dict__.update(other.__dict__)


class RewriterConfig:
    """TensorFlow's graph rewrite switches. dflow reads `remapping` and `disable_meta_optimizer`:
    remapping OFF, or every rewrite disabled, keeps Conv2D / MatMul, BiasAdd and their activation
    as separate kernels (dflow fuses them by default, as TensorFlow's remapper does); the other
    fields are kept."""
    DEFAULT = 0
    ON = 1
    OFF = 2
    AGGRESSIVE = 3

    def __init__(self, remapping=DEFAULT, **kwargs):
        self.remapping = remapping
        self.__dict__.update(kwargs)


class GraphOptions:
    def __init__(self, rewrite_options=None, **kwargs):
        self.rewrite_options = rewrite_options if rewrite_options is not None else RewriterConfig()
        self.__dict__.update(kwargs)


def _fuse_ops(config):
    """Whether dflow fuses ops for sessions with this config: unless remapping is OFF or, as in
    TensorFlow, every graph rewrite is (disable_meta_optimizer)."""
    rewrite = getattr(getattr(config, "graph_options", None), "rewrite_options", None)
    if getattr(rewrite, "disable_meta_optimizer", False):
        return False
    return getattr(rewrite, "remapping", RewriterConfig.DEFAULT) != RewriterConfig.OFF


class GPUOptions:
    def __init__(self, allow_growth=False, per_process_gpu_memory_fraction=1.0, **kwargs):
        self.allow_growth = allow_growth
        self.per_process_gpu_memory_fraction = per_process_gpu_memory_fraction
        self.__dict__.update(kwargs)


class RunOptions:
    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    def __init__(self, trace_level=0, timeout_in_ms=0, **kwargs):
        self.trace_level = trace_level
        self.timeout_in_ms = timeout_in_ms
        self.__dict__.update(kwargs)


class NodeExecStats:
    """One node a traced step ran (the fields of TensorFlow's NodeExecStats that dflow records)."""

    def __init__(self, node_name, op, start_micros, end_micros):
        self.node_name = node_name
        self.timeline_label = "%s = %s()" % (node_name, op)
        self.all_start_micros = start_micros
        self.op_start_rel_micros = 0
        self.op_end_rel_micros = end_micros - start_micros
        self.all_end_rel_micros = end_micros - start_micros

    def __repr__(self):
        return "NodeExecStats(%r)" % self.node_name


class DeviceStepStats:
    def __init__(self, device):
        self.device = device
        self.node_stats = []


class StepStats:
    def __init__(self):
        self.dev_stats = []


class RunMetadata:
    """What a run traced (RunOptions(trace_level=FULL_TRACE)): step_stats.dev_stats[i].node_stats
    lists the nodes that ran on each device."""

    def __init__(self):
        self.step_stats = StepStats()
        self.partition_graphs = []

    def _record(self, stats):
        by_device = {}
        for node, op, device, start, end in stats:
            if node.startswith("_"):
                continue  # the runtime's own feed and fetch endpoints
            d = by_device.get(device)
            if d is None:
                d = by_device[device] = DeviceStepStats(device)
                self.step_stats.dev_stats.append(d)
            d.node_stats.append(NodeExecStats(node, op, start, end))


def _static_dims(t, cache):
    """The static shape of a tensor as a tuple of ints and None (None for an unknown rank).
    `cache`: the session's {C++ Output: dims} (a built node's shape never changes)."""
    if t._shape_val is not None:  # narrowed by set_shape
        return None if t._shape_val.ndims is None else tuple(t._shape_val.as_list())
    out = t._out
    dims = cache.get(out, False)
    if dims is False:
        dims = cache[out] = out.shape
    return dims


# Feed values converted by the extension itself (anything else goes through numpy.asarray first).
_FEED_TYPES = (np.ndarray, np.generic, float, list, tuple, str, bytes)


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


class _FetchPlan:
    """Flattens a nested fetch structure into tensors and ops, and rebuilds it from the values."""

    def __init__(self, graph, fetches):
        self.graph = graph
        self.tensors = []     # unique Outputs fetched
        self.tensor_index = {}
        self.targets = []
        self.target_ids = set()
        self.build = self._plan(fetches)

    def _leaf(self, f):
        g = self.graph
        if f is None:
            raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
        if hasattr(f, "_as_graph_element") and not isinstance(f, (ops.Tensor, ops.Operation)):
            f = f._as_graph_element()
        try:
            el = g.as_graph_element(f, allow_tensor=True, allow_operation=True)
        except TypeError as e:
            raise TypeError("Fetch argument %r has invalid type %r, must be a string or Tensor. (%s)"
                            % (f, type(f), e)) from None
        except ValueError as e:
            raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (%s)" % (f, e)) from None
        except KeyError as e:
            raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (%s)" % (f, e.args[0])) from None
        if isinstance(el, ops.Tensor):
            key = el._out
            i = self.tensor_index.get(key)
            if i is None:
                i = len(self.tensors)
                self.tensor_index[key] = i
                self.tensors.append(el)
            return lambda values, i=i: values[i]
        if el._node.id not in self.target_ids:
            self.target_ids.add(el._node.id)
            self.targets.append(el)
        return lambda values: None

    def _plan(self, f):
        if isinstance(f, sparse_tensor.SparseTensor):  # fetched as a SparseTensorValue, as in TensorFlow
            parts = [self._plan(x) for x in (f.indices, f.values, f.dense_shape)]
            return lambda v: sparse_tensor.SparseTensorValue(*[p(v) for p in parts])
        if isinstance(f, (list,)):
            parts = [self._plan(x) for x in f]
            return lambda v: [p(v) for p in parts]
        if _is_namedtuple(f):
            parts = [self._plan(x) for x in f]
            cls = type(f)
            return lambda v: cls(*[p(v) for p in parts])
        if isinstance(f, tuple):
            parts = [self._plan(x) for x in f]
            return lambda v: tuple(p(v) for p in parts)
        if isinstance(f, collections.abc.Mapping):
            items = [(k, self._plan(x)) for k, x in f.items()]
            cls = type(f)
            if cls is dict or cls is collections.OrderedDict:
                return lambda v: cls((k, p(v)) for k, p in items)
            return lambda v: cls({k: p(v) for k, p in items}) if cls is not collections.defaultdict else \
                dict((k, p(v)) for k, p in items)
        return self._leaf(f)


class BaseSession:
    def __init__(self, target="", graph=None, config=None):
        if graph is None:
            graph = ops.get_default_graph()
        if not isinstance(graph, ops.Graph):
            raise TypeError("graph must be a tf.Graph, but got %s" % type(graph))
        if isinstance(target, bytes):
            target = target.decode()
        self._graph = graph
        self._target = target or ""
        self._config = config
        c = config or ConfigProto()
        self._closed = False
        self._h = _dflow.Session(graph._scope if False else graph._h.root, self._target,
                                 int(getattr(c, "inter_op_parallelism_threads", 0) or 0),
                                 bool(getattr(c, "allow_soft_placement", False)),
                                 bool(getattr(c, "log_device_placement", False)),
                                 int(getattr(c, "operation_timeout_in_ms", 0) or 0),
                                 [str(x) for x in getattr(c, "device_filters", [])],
                                 # dflow's addition: a credentials directory for a grpc:// target
                                 # (else DFLOW_CREDENTIALS, else this user's store; docs/SECURITY.md)
                                 str(getattr(c, "credentials", "") or ""),
                                 _fuse_ops(c))
        self._default_session_ctx = None
        self._default_graph_ctx = None
        self._lock = threading.Lock()
        self._single_cache = {}
        self._dims_cache = {}

    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self):
        return self._target

    def list_devices(self):
        return [_DeviceAttributes(n) for n in self._h.list_devices()]

    def as_default(self):
        return ops.default_session(self)

    def close(self):
        if not self._closed:
            self._closed = True
            self._h.close()

    def __del__(self):
        try:
            if not self._closed and self._h is not None:
                self._h.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def _feeds(self, feed_dict):
        feeds = []
        g = self._graph
        try:
            dims_cache = self._dims_cache
        except AttributeError:  # _feeds of a session-like object that is not a BaseSession
            dims_cache = {}
        items = getattr(feed_dict, "items", None)
        if items is None:
            raise TypeError("feed_dict must be a dictionary or collections.abc.Mapping, not %s"
                            % type(feed_dict).__name__)
        for k, v in items():
            if isinstance(k, ops.Tensor):
                t = k
                if t.graph is not g:
                    raise TypeError("Cannot interpret feed_dict key as Tensor: Tensor %s is not an element of "
                                    "this graph." % t.name)
            elif hasattr(k, "_as_graph_element") and not isinstance(k, ops.Operation):
                t = k._as_graph_element()
            elif isinstance(k, str):
                try:
                    t = g.as_graph_element(k, allow_tensor=True, allow_operation=False)
                except (KeyError, ValueError) as e:
                    raise TypeError("Cannot interpret feed_dict key as Tensor: %s" % (e.args[0],)) from None
            elif isinstance(k, tuple) and hasattr(k, "_fields") or isinstance(k, (list, tuple)):
                for kk, vv in zip(k, v):
                    feeds.extend(self._feeds({kk: vv}))
                continue
            else:
                raise TypeError("Cannot interpret feed_dict key as Tensor: The name %r is not a Tensor." % (k,))
            if isinstance(v, ops.Tensor):
                raise TypeError("The value of a feed cannot be a tf.Tensor object. Acceptable feed values include "
                                "Python scalars, strings, lists, numpy ndarrays, or TensorHandles. For reference, "
                                "the tensor object was %s which was passed to the argument `feed_dict` with key %s."
                                % (v, t))
            if isinstance(v, int):
                # TensorFlow refuses a Python int that the feed's dtype does not hold exactly.
                dt = t.dtype.base_dtype
                try:
                    exact = (str(v) if dt == dtypes.string else dt.as_numpy_dtype(v)) == v
                except (OverflowError, ValueError, TypeError):
                    exact = False
                if not exact:
                    raise TypeError("Type of feed value %s with type %s is not compatible with Tensor type %s. Try "
                                    "explicitly setting the type of the feed tensor to a larger type (e.g. int64)."
                                    % (v, type(v), dt.name))
            elif not isinstance(v, _FEED_TYPES):
                # Anything else is converted as TensorFlow converts it: numpy.asarray(value, dtype).
                v = np.asarray(v, dtype=t.dtype.base_dtype.as_numpy_dtype)
            dims = _static_dims(t, dims_cache)
            if dims is not None:
                vs = getattr(v, "shape", None)
                if vs is None and isinstance(v, (list, tuple)):
                    try:
                        vs = np.shape(v)
                    except ValueError:
                        raise ValueError("Cannot feed value for tensor %s: setting an array element with a sequence "
                                         "(the list is ragged)" % t.name) from None
                elif vs is None:
                    vs = ()
                if dims != vs and not (len(dims) == len(vs) and
                                       all(d is None or d == w for d, w in zip(dims, vs))):
                    raise ValueError("Cannot feed value of shape %s for Tensor %s, which has shape %s" % (
                        tuple(vs), t.name, t.shape))
            feeds.append((t._out, v))
        return feeds

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        timeout = getattr(options, "timeout_in_ms", 0) if options is not None else 0
        feeds = self._feeds(feed_dict) if feed_dict else []
        if run_metadata is not None and getattr(options, "trace_level", 0):
            return self._traced_run(fetches, feeds, timeout, run_metadata)
        # Fast path: one tensor.
        if isinstance(fetches, ops.Tensor):
            if fetches.graph is not self._graph:
                raise ValueError("Fetch argument %r cannot be interpreted as a Tensor. (Tensor %s is not an element "
                                 "of this graph.)" % (fetches, fetches))
            return self._h.run(feeds, [fetches._out], [], timeout)[0]
        plan = _FetchPlan(self._graph, fetches)
        values = self._h.run(feeds, [t._out for t in plan.tensors], [o._node for o in plan.targets], timeout)
        return plan.build(values)

    def _traced_run(self, fetches, feeds, timeout, run_metadata):
        plan = _FetchPlan(self._graph, fetches)
        stats = []
        try:
            values = self._h.run(feeds, [t._out for t in plan.tensors], [o._node for o in plan.targets], timeout,
                                 stats)
        finally:
            run_metadata._record(stats)
        return plan.build(values)

    def partial_run_setup(self, fetches, feeds=None):
        raise NotImplementedError("partial_run is not supported by dflow")

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        feed_list = list(feed_list or [])

        def call(*args, **kwargs):
            return self.run(fetches, feed_dict=dict(zip(feed_list, args)), options=kwargs.get("options"))
        return call


class _DeviceAttributes:
    def __init__(self, name):
        self.name = name
        self.device_type = name.rsplit("/device:", 1)[-1].split(":")[0] if "/device:" in name else "CPU"
        self.memory_limit_bytes = 0
        self.incarnation = 0


class Session(BaseSession):
    """Runs the part of a graph the fetches need; `target` "" runs here, "grpc://host:port" on a server."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)

    def __enter__(self):
        if self._default_graph_ctx is None:
            self._default_graph_ctx = self._graph.as_default()
        self._default_session_ctx = self.as_default()
        self._default_graph_ctx.__enter__()
        self._default_session_ctx.__enter__()
        return self

    def __exit__(self, exc_type, exc_value, tb):
        try:
            self._default_session_ctx.__exit__(exc_type, exc_value, tb)
            self._default_graph_ctx.__exit__(exc_type, exc_value, tb)
        finally:
            self._default_session_ctx = None
            self._default_graph_ctx = None
            self.close()

    @staticmethod
    def reset(target, containers=None, config=None):
        from dflow.training import server_lib
        server_lib._reset(target, containers)


class InteractiveSession(BaseSession):
    """A Session that makes itself the default session (for shells and notebooks)."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._default_session_ctx = self.as_default()
        self._default_session_ctx.__enter__()
        self._explicit_graph = graph is not None
        if self._explicit_graph:
            self._default_graph_ctx = graph.as_default()
            self._default_graph_ctx.__enter__()

    def close(self):
        super().close()
        if self._default_session_ctx is not None:
            self._default_session_ctx.__exit__(None, None, None)
            self._default_session_ctx = None
        if self._default_graph_ctx is not None:
            self._default_graph_ctx.__exit__(None, None, None)
            self._default_graph_ctx = None
