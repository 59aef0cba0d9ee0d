"""tf.train.MonitoredTrainingSession, MonitoredSession, SingularMonitoredSession, Scaffold and the
session creators, over the C++ MonitoredSession (include/dflow/monitored_session.h).

    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=task_index == 0,
                                           checkpoint_dir="/tmp/train_logs",
                                           hooks=[tf.train.StopAtStepHook(last_step=1000)]) as sess:
        while not sess.should_stop():
            sess.run(train_op)

Who does what:
- Python (TensorFlow's Python layer): the arguments and their defaults, which hooks a chief gets
  and in what order (chief_only_hooks, StepCounterHook, SummarySaverHook, CheckpointSaverHook,
  hooks), every hook's begin() before the Scaffold is finalized, and the Scaffold's defaults from
  the graph's collections (init_op, ready_op, local_init_op, summary_op, the Saver); fetch
  structures and feeds; hooks written in Python.
- C++ (bound, not rewritten): the training loop itself — session creation (the chief restores
  the newest checkpoint that reads back whole, or runs the init op; other workers wait for the
  model), running the hooks around every step in one session run, recovery when a task dies
  (Aborted/Unavailable/Cancelled: the session is recreated, the chief restores, the step runs
  again; at most 10 consecutive failures), the coordinator whose threads stop with the session,
  and job completion: on the chief, a MonitoredTrainingSession whose master is a server of this
  process tells every task that the job is complete when it closes after training ended without
  an error (after the hooks' end: the final checkpoint), so ps tasks in server.join() return and
  the other workers' loops end (their run raises OutOfRangeError, which the `with` block swallows
  as TensorFlow's does). A worker that starts after the job ended gets a session that already
  should_stop(). The C++ hooks (basic_session_run_hooks.py) run in C++.
- Adapters (python/src/cluster.cc): a Python hook runs in the C++ loop through _HookBridge (the
  loop holds the GIL only while a Python hook runs); tf.train.Saver and summary writers are
  called through adapters; the session a hook sees (run_context.session, after_create_session's
  session, raw_session()) is the loop's own session lent to Python, which raises RuntimeError
  once the loop dropped it (after a recovery or close). A Python exception in a hook ends the
  step and is raised to the caller as it was (a tf.errors.OpError counts as its code: a hook's
  UnavailableError is recovered from, as in TensorFlow).

Differences: RunOptions passed to run() are not merged with the hooks' (the loop runs with the
session's options); custom SessionCreator subclasses cannot make the loop's sessions (the C++
creators do); ProfilerHook is not available.
"""
import os
import threading
import weakref

from dflow import _dflow
from dflow.client import session as session_lib
from dflow.framework import errors
from dflow.framework import ops
from dflow.training import basic_session_run_hooks as hooks_lib
from dflow.training import coordinator as coordinator_lib
from dflow.training import session_run_hook
from dflow.training.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunValues

USE_DEFAULT = object()


# ---- defaults of the Scaffold ----

def _merge_all_summaries():
    try:
        from dflow import summary
    except ImportError:
        return None
    merge_all = getattr(summary, "merge_all", None)
    return merge_all() if merge_all is not None else None


def _default_saver():
    """TensorFlow's _get_saver_or_default: the graph's one Saver (SAVERS), or a new sharded one."""
    savers = ops.get_collection(ops.GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError("More than one item in collection {}. Please indicate which one to use by passing it "
                               "to the constructor.".format(ops.GraphKeys.SAVERS))
        return savers[0]
    try:
        from dflow.training import saver as saver_lib
    except ImportError:
        return None  # the C++ default (a sharded Saver of every global variable)
    saver = saver_lib.Saver(sharded=True, allow_empty=True)
    if saver is not None:
        ops.add_to_collection(ops.GraphKeys.SAVERS, saver)
    return saver


class Scaffold:
    """A structure to create or gather pieces commonly needed to train a model (TensorFlow's)."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None, ready_for_local_init_op=None,
                 local_init_op=None, summary_op=None, saver=None, copy_from_scaffold=None,
                 local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            coalesce = lambda a, b: a if a is not None else b  # noqa: E731
            init_op = coalesce(init_op, copy_from_scaffold.init_op)
            init_feed_dict = coalesce(init_feed_dict, copy_from_scaffold.init_feed_dict)
            init_fn = coalesce(init_fn, copy_from_scaffold._user_init_fn)
            ready_op = coalesce(ready_op, copy_from_scaffold.ready_op)
            ready_for_local_init_op = coalesce(ready_for_local_init_op, copy_from_scaffold.ready_for_local_init_op)
            local_init_op = coalesce(local_init_op, copy_from_scaffold.local_init_op)
            local_init_feed_dict = coalesce(local_init_feed_dict, copy_from_scaffold.local_init_feed_dict)
            summary_op = coalesce(summary_op, copy_from_scaffold.summary_op)
            saver = coalesce(saver, copy_from_scaffold.saver)
        self._user_init_fn = init_fn
        if init_fn:
            self._init_fn = lambda sess: init_fn(self, sess)
        else:
            self._init_fn = None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self):
        """Creates the default ops it was not given; the graph is finalized afterwards."""
        from dflow.ops import variables
        if self._init_op is None:
            def default_init_op():
                return variables.global_variables_initializer()
            self._init_op = Scaffold.get_or_default("init_op", ops.GraphKeys.INIT_OP, default_init_op)
        if self._ready_op is None:
            # The global variables: what the chief restores or initializes, and what other workers
            # wait for; local variables are the local init op's, which runs once this is empty.
            def default_ready_op():
                return variables.report_uninitialized_variables(variables.global_variables())
            self._ready_op = Scaffold.get_or_default("ready_op", ops.GraphKeys.READY_OP, default_ready_op)
        if self._ready_for_local_init_op is None:
            def default_ready_for_local_init_op():
                return variables.report_uninitialized_variables(variables.global_variables())
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op", ops.GraphKeys.READY_FOR_LOCAL_INIT_OP, default_ready_for_local_init_op)
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default("local_init_op", ops.GraphKeys.LOCAL_INIT_OP,
                                                          Scaffold.default_local_init_op)
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default("summary_op", ops.GraphKeys.SUMMARY_OP, _merge_all_summaries)
        if self._saver is None:
            self._saver = _default_saver()
        ops.get_default_graph().finalize()
        return self

    @property
    def init_fn(self):
        return self._init_fn

    @property
    def init_op(self):
        return self._init_op

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        return self._local_init_op

    @property
    def local_init_feed_dict(self):
        return self._local_init_feed_dict

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The one item of the collection, or a new one made by `default_constructor`."""
        elements = ops.get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError('More than one item in the collection "%s". Please indicate which one to use by '
                                   "passing it to the tf.Scaffold constructor as:  tf.Scaffold(%s=item to use)"
                                   % (collection_key, arg_name))
            return elements[0]
        op = default_constructor()
        if op is not None:
            ops.add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op():
        """Initializes the local variables and the tables (TensorFlow's default)."""
        from dflow.ops import control_flow_ops
        from dflow.ops import variables
        parts = [variables.local_variables_initializer()]
        from dflow.ops import lookup_ops
        for t in lookup_ops.table_initializer_ops():
            parts.append(t)
        return control_flow_ops.group(*parts)


# ---- savers in the C++ loop ----

class _SaverBridge:
    """What the C++ loop's SaverInterface calls: a tf.train.Saver's save and restore (with the
    checkpoint listeners around saves), and the checkpoint records of a directory."""

    def __init__(self, saver, listeners=(), write_meta_graph=False, only_checkpoint=None):
        self._saver = saver
        self._listeners = list(listeners)
        self._write_meta_graph = write_meta_graph
        self._only_checkpoint = only_checkpoint
        self._recovered = False
        self.stop_requested = False
        self._graph = ops.get_default_graph()
        self._cpp = None

    def cpp(self):
        if self._cpp is None:
            self._cpp = _dflow.py_saver(self)
        return self._cpp

    def _session(self, handle):
        return _LentSession(self._graph, handle)

    def _recover(self, directory):
        # A first save adopts the checkpoints the directory records (max_to_keep counts them).
        if self._recovered:
            return
        self._recovered = True
        recover = getattr(self._saver, "recover_last_checkpoints", None)
        if recover is None:
            return
        paths = [p for p in reversed(self.checkpoints(directory)) if p]
        if paths:
            try:
                recover(paths)
            except Exception:  # noqa: BLE001 - a record that cannot be adopted is only not counted
                pass

    def save(self, handle, prefix, step):
        sess = self._session(handle)
        self._recover(os.path.dirname(prefix))
        for l in self._listeners:
            l.before_save(sess, step)
        kwargs = {}
        if not self._write_meta_graph:
            kwargs["write_meta_graph"] = False
        try:
            path = self._saver.save(sess, prefix, global_step=step, **kwargs)
        except TypeError:
            path = self._saver.save(sess, prefix, global_step=step)
        for l in self._listeners:
            if l.after_save(sess, step):
                self.stop_requested = True
        return path

    def restore(self, handle, path):
        if not _checkpoint_exists(path):
            # The state file recorded it: its index file was lost.
            raise errors.DataLossError(None, None, "The checkpoint %s has no index file %s.index" % (path, path))
        self._recovered = True
        self._saver.restore(self._session(handle), path)

    def latest_checkpoint(self, directory):
        if self._only_checkpoint is not None:
            return self._only_checkpoint
        return _dflow.latest_checkpoint(directory, "checkpoint") or ""

    def checkpoints(self, directory):
        if self._only_checkpoint is not None:
            return [self._only_checkpoint]
        state = _dflow.checkpoint_state(directory)
        if state is None:
            return []
        latest = state.get("model_checkpoint_path") if isinstance(state, dict) else state[0]
        all_paths = state.get("all_model_checkpoint_paths", []) if isinstance(state, dict) else state[1]
        out = []
        for p in [latest] + list(reversed(list(all_paths))):
            if p and p not in out:
                out.append(p)
        return out


class _NoSaver:
    def save(self, handle, prefix, step):
        raise errors.FailedPreconditionError(None, None, "There are no variables to save")

    def restore(self, handle, path):
        raise errors.FailedPreconditionError(None, None, "There are no variables to restore")

    def latest_checkpoint(self, directory):
        return ""

    def checkpoints(self, directory):
        return []


def _checkpoint_exists(path):
    return bool(_dflow.checkpoint_exists(path))


# ---- sessions lent by the loop ----

class _LentSession(session_lib.BaseSession):
    """The training loop's own session, lent to Python (a hook's session, raw_session()): runs
    on it bypass the hooks; it raises RuntimeError once the loop dropped it. The loop closes it."""

    def __init__(self, graph, handle, target="", config=None):  # noqa: D107 - no BaseSession.__init__
        self._graph = graph
        self._target = target
        self._config = config
        self._closed = False
        self._h = handle
        self._default_session_ctx = None
        self._default_graph_ctx = None
        self._lock = threading.Lock()
        self._single_cache = {}

    def close(self):
        """The training loop closes its session; this does nothing."""

    def __del__(self):
        pass

    def __enter__(self):
        self._default_session_ctx = self.as_default()
        self._default_session_ctx.__enter__()
        return self

    def __exit__(self, exc_type, exc_value, tb):
        self._default_session_ctx.__exit__(exc_type, exc_value, tb)
        self._default_session_ctx = None


# ---- Python hooks in the C++ loop ----

class _HookBridge:
    """What the C++ adapter of one Python hook calls (cluster.cc PyHook)."""

    def __init__(self, hook, loop):
        self._hook = hook
        self._loop = weakref.ref(loop)
        self._plan = None

    def cpp_begin(self):
        pass  # the loop called begin() before the scaffold was finalized

    def cpp_after_create_session(self, handle):
        loop = self._loop()
        if loop is None:
            return
        self._hook.after_create_session(loop._lent(handle), loop._coord)

    def cpp_before_run(self, ctx_ref, handle):
        loop = self._loop()
        if loop is None:
            return None
        ctx = loop._context(ctx_ref, handle)
        if ctx_ref.stop_requested:
            ctx._stop_requested = True
        args = self._hook.before_run(ctx)
        self._plan = None
        if args is None:
            return None
        fetches = getattr(args, "fetches", None)
        feed_dict = getattr(args, "feed_dict", None)
        plan = session_lib._FetchPlan(loop._graph, fetches) if fetches is not None else None
        self._plan = plan
        feeds = session_lib.BaseSession._feeds(ctx.session, feed_dict) if feed_dict else []
        if plan is None:
            return ([], feeds, [])
        return ([t._out for t in plan.tensors], feeds, [o._node for o in plan.targets])

    def cpp_after_run(self, ctx_ref, handle, results):
        loop = self._loop()
        if loop is None:
            return
        ctx = loop._context(ctx_ref, handle)
        if ctx_ref.stop_requested:
            ctx._stop_requested = True
        value = self._plan.build(results) if self._plan is not None else None
        self._hook.after_run(ctx, SessionRunValues(results=value, options=loop._step_options or
                                                   session_lib.RunOptions(), run_metadata=session_lib.RunMetadata()))
        if ctx.stop_requested:
            ctx_ref.request_stop()

    def cpp_end(self, handle):
        loop = self._loop()
        if loop is None:
            return
        self._hook.end(loop._lent(handle))


class _QueueRunnerStarter(session_run_hook.SessionRunHook):
    """Starts the graph's queue runners with each new session (TensorFlow's coordinated session
    creator does, before the hooks' after_create_session)."""

    def after_create_session(self, session, coord):
        from dflow.training import queue_runner_impl
        queue_runner_impl.start_queue_runners(sess=session, coord=coord)


# ---- session creators ----

class SessionCreator:
    """A factory for tf.Session (TensorFlow's interface). dflow's training loop makes its sessions
    with the C++ creators: ChiefSessionCreator and WorkerSessionCreator."""

    def create_session(self):
        raise NotImplementedError("create_session is not implemented for {}.".format(self))


def _config_dict(config):
    d = {}
    if config is None:
        return d
    d["inter_op_threads"] = int(getattr(config, "inter_op_parallelism_threads", 0) or 0)
    d["allow_soft_placement"] = bool(getattr(config, "allow_soft_placement", False))
    d["log_device_placement"] = bool(getattr(config, "log_device_placement", False))
    d["operation_timeout_ms"] = int(getattr(config, "operation_timeout_in_ms", 0) or 0)
    d["device_filters"] = [str(f) for f in (getattr(config, "device_filters", None) or [])]
    d["fuse_ops"] = session_lib._fuse_ops(config)
    return d


def _target(master):
    if isinstance(master, bytes):
        master = master.decode()
    return master or ""


class ChiefSessionCreator(SessionCreator):
    """Creates the chief's session: restores the latest checkpoint of `checkpoint_dir` (or
    `checkpoint_filename_with_path`), else runs the scaffold's init op and init_fn."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._training = None  # set by MonitoredTrainingSession

    def create_session(self):
        raise NotImplementedError("dflow's ChiefSessionCreator makes the sessions of a MonitoredSession; use "
                                  "tf.train.MonitoredSession(session_creator=...) (or tf.Session directly)")


class WorkerSessionCreator(SessionCreator):
    """Creates a non-chief worker's session: waits (up to max_wait_secs) until the chief made the
    model ready."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs
        self._training = None

    def create_session(self):
        raise NotImplementedError("dflow's WorkerSessionCreator makes the sessions of a MonitoredSession; use "
                                  "tf.train.MonitoredSession(session_creator=...) (or tf.Session directly)")


def _node_of(x):
    if x is None:
        return None
    if isinstance(x, ops.Tensor):
        return x.op._node
    return getattr(x, "_node", None) or x.op._node


def _out_of(x):
    if x is None:
        return None
    return ops.convert_to_tensor(x)._out


# ---- the training loop ----

class _MonitoredSession:
    """The part MonitoredSession and SingularMonitoredSession share (TensorFlow's)."""

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._graph = ops.get_default_graph()
        self._graph_was_finalized = self._graph.finalized
        self._hooks = list(hooks or [])
        self._stop_grace_period_secs = stop_grace_period_secs
        self._coord = None
        self._lent_session = None
        self._step_args = None
        self._step_options = None
        self._step_ctx = None
        self._step_ctx_key = None
        self._extra_stop = False
        self._closed = False
        self._h = None
        creator = session_creator or ChiefSessionCreator()
        if not isinstance(creator, (ChiefSessionCreator, WorkerSessionCreator)):
            raise TypeError("dflow's MonitoredSession makes its sessions with ChiefSessionCreator or "
                            "WorkerSessionCreator (the C++ creators); %s cannot make them" % type(creator).__name__)
        # Every hook's begin(), then the scaffold (TensorFlow's order: hooks may add ops).
        cpp_hooks = []
        if ops.get_collection(ops.GraphKeys.QUEUE_RUNNERS):
            cpp_hooks.append(_HookBridge(_QueueRunnerStarter(), self))
        for h in self._hooks:
            if not isinstance(h, session_run_hook.SessionRunHook) and not hasattr(h, "before_run"):
                raise TypeError("hooks must be SessionRunHooks, got %r" % (h,))
            h.begin()
        for h in self._hooks:
            if isinstance(h, hooks_lib._CppHook):
                overridden = h._per_step_overridden()
                if overridden is not None:
                    raise TypeError("%s overrides %s of %s, which runs in C++; subclass "
                                    "tf.train.SessionRunHook instead" % (type(h).__name__, overridden,
                                                                         h.__class__.__mro__[1].__name__))
                cpp_hooks.extend(c if isinstance(c, _dflow.SessionRunHook) else _HookBridge(c, self)
                                 for c in h._dflow_hooks())
            else:
                cpp_hooks.append(_HookBridge(h, self))
        scaffold = creator._scaffold
        with self._graph.as_default():
            scaffold.finalize()
        self._scaffold = scaffold
        self._build(creator, cpp_hooks, should_recover)

    def _scaffold_parts(self, scaffold, only_checkpoint=None):
        d = {"init_op": _node_of(scaffold.init_op), "ready_op": _out_of(scaffold.ready_op),
             "local_init_op": _node_of(scaffold.local_init_op)}
        if scaffold.saver is not None:
            d["saver"] = _SaverBridge(scaffold.saver, only_checkpoint=only_checkpoint).cpp()
        elif only_checkpoint is not None:
            raise ValueError("checkpoint_filename_with_path needs a Saver (the graph has no variables)")
        if scaffold.init_feed_dict:
            d["init_feeds"] = session_lib.BaseSession._feeds(self, scaffold.init_feed_dict)
        if scaffold.local_init_feed_dict:
            raise NotImplementedError("Scaffold(local_init_feed_dict=...) is not supported by dflow")
        return d

    def _build(self, creator, cpp_hooks, should_recover):
        scaffold = self._scaffold
        is_chief = isinstance(creator, ChiefSessionCreator)
        checkpoint_dir = ""
        only = None
        if is_chief:
            checkpoint_dir = creator._checkpoint_dir or ""
            if creator._checkpoint_filename_with_path:
                only = creator._checkpoint_filename_with_path
                checkpoint_dir = os.path.dirname(only) or "."
        parts = self._scaffold_parts(scaffold, only)
        init_fn = None
        if scaffold.init_fn is not None:
            user_init_fn = scaffold.init_fn
            graph = self._graph

            def init_fn(handle, _fn=user_init_fn, _graph=graph):
                _fn(_LentSession(_graph, handle))
        recovery = {} if should_recover else {"max_recovery_attempts": 0}
        config = _config_dict(creator._config)
        self._target = _target(creator._master)
        self._config = creator._config
        scope = self._graph._h.root
        started = weakref.WeakMethod(self._session_started)

        def session_started(handle, cpp_coord, _started=started):
            fn = _started()
            return fn(handle, cpp_coord) if fn is not None else None
        if creator._training is not None:
            t = creator._training
            self._h = _dflow.monitored_training_session(
                scope, is_chief, self._target, config, checkpoint_dir, parts, init_fn,
                hooks_lib._global_step_output(self._graph), int(t.get("max_wait_secs", 7200)), cpp_hooks, recovery,
                bool(t.get("notify_job_complete", True)), session_started)
        else:
            max_wait = int(getattr(creator, "_max_wait_secs", 7200))
            self._h = _dflow.monitored_session(scope, is_chief, self._target, config, checkpoint_dir, parts, init_fn,
                                               max_wait, cpp_hooks, recovery, session_started)

    # Called by the C++ loop (with the GIL) when it lends a new session: the Python state of the
    # session (its coordinator); returns what to run when the session goes.
    def _session_started(self, handle, cpp_coord):
        self._lent_session = _LentSession(self._graph, handle, self._target, self._config)
        coord = coordinator_lib.Coordinator._over(cpp_coord) if cpp_coord is not None else \
            coordinator_lib.Coordinator()
        self._coord = coord
        grace = self._stop_grace_period_secs

        def session_ending(_coord=coord):
            _coord._cpp.request_stop()
            _join_python_threads(_coord, grace)
        return session_ending

    def _lent(self, handle):
        s = self._lent_session
        if s is None or not s._h.same_as(handle):
            s = _LentSession(self._graph, handle, self._target, self._config)
            self._lent_session = s
        return s

    def _context(self, ctx_ref, handle):
        if self._step_ctx is None or self._step_ctx_key != ctx_ref.id or not self._step_ctx.session._h.same_as(handle):
            self._step_ctx = SessionRunContext(original_args=self._step_args, session=self._lent(handle))
            self._step_ctx_key = ctx_ref.id
        return self._step_ctx

    @property
    def graph(self):
        return self._graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the fetches (any structure) through the hooks; recovers from lost tasks."""
        if self._closed:
            raise RuntimeError("Run called even after should_stop requested.")
        plan = session_lib._FetchPlan(self._graph, fetches)
        feeds = session_lib.BaseSession._feeds(self, feed_dict) if feed_dict else []
        self._step_args = SessionRunArgs(fetches=fetches, feed_dict=feed_dict, options=options)
        self._step_options = options
        self._step_ctx = None
        self._step_ctx_key = None
        try:
            values = self._h.run(feeds, [t._out for t in plan.tensors], [o._node for o in plan.targets])
        finally:
            self._step_ctx = None
        return plan.build(values)

    def run_step_fn(self, step_fn):
        """Runs `step_fn(step_context)` (TensorFlow's): step_context.session is the raw session,
        run_with_hooks runs through the hooks, request_stop ends the loop."""
        import inspect
        args = tuple(inspect.signature(step_fn).parameters)
        if args != ("step_context",) and args != ("self", "step_context"):
            raise ValueError("`step_fn` may either have one `step_context` argument, or `self` and `step_context` "
                             "arguments if it's an instance method. Got {} instead.".format(args))
        ctx = _StepContext(self)
        try:
            return step_fn(ctx)
        except StopIteration:
            self._extra_stop = True
            return None

    def should_stop(self):
        return self._closed or self._extra_stop or self._h.should_stop()

    def close(self):
        self._close_internal()

    def _close_internal(self, exception_type=None):
        if self._closed:
            return
        self._closed = True
        try:
            self._h.close(exception_type is None)
        finally:
            self._lent_session = None
            self._coord = None
            if not self._graph_was_finalized:
                self._graph._unsafe_unfinalize()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type in [errors.OutOfRangeError, StopIteration]:
            exception_type = None
        self._close_internal(exception_type)
        return exception_type is None

    def _tf_sess(self):
        handle = self._h.raw_session()
        if handle is None:
            return None
        return self._lent(handle)

    @property
    def _sessions_created(self):
        return self._h.sessions_created


def _join_python_threads(coord, grace):
    """Joins the Python threads registered with a session's coordinator (the C++ ones are the
    C++ coordinator's); their first exception is raised."""
    with coord._lock:
        threads = set(coord._registered_threads)
    import time
    deadline = time.time() + grace
    for t in threads:
        t.join(max(0.0, deadline - time.time()))
    with coord._lock:
        coord._registered_threads = set()
        if coord._exc_info_to_raise:
            raise coord._exc_info_to_raise[1]


class _StepContext:
    """What run_step_fn's step_fn gets (TensorFlow's StepContext)."""

    def __init__(self, loop):
        self._loop = loop

    @property
    def session(self):
        return self._loop._tf_sess()

    def run_with_hooks(self, *args, **kwargs):
        return self._loop.run(*args, **kwargs)

    def request_stop(self):
        raise StopIteration("step_fn has requested the iterations to stop.")


class MonitoredSession(_MonitoredSession):
    """Session-like object that handles initialization, recovery and hooks."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True, stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """Session-like object that handles initialization, restoring, and hooks; no recovery."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        session_creator = ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                              checkpoint_dir=checkpoint_dir,
                                              checkpoint_filename_with_path=checkpoint_filename_with_path)
        super().__init__(session_creator, hooks, should_recover=False, stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        """The session the loop runs in (runs on it bypass the hooks)."""
        return self._tf_sess()


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None, hooks=None,  # noqa: N802
                             chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100, max_wait_secs=7200,
                             save_checkpoint_steps=USE_DEFAULT, summary_dir=None):
    """Creates a MonitoredSession for training (TensorFlow's function).

    The chief restores or initializes the model and saves checkpoints and summaries; other
    workers wait for the model. On a cluster, the chief's session ends the job when it closes
    (see the module docstring)."""
    if save_summaries_steps == USE_DEFAULT and save_summaries_secs == USE_DEFAULT:
        save_summaries_steps = 100
        save_summaries_secs = None
    elif save_summaries_secs == USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps == USE_DEFAULT:
        save_summaries_steps = None

    if save_checkpoint_steps == USE_DEFAULT and save_checkpoint_secs == USE_DEFAULT:
        save_checkpoint_steps = None
        save_checkpoint_secs = 600
    elif save_checkpoint_secs == USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps == USE_DEFAULT:
        save_checkpoint_steps = None

    scaffold = scaffold or Scaffold()
    training = {"max_wait_secs": max_wait_secs, "notify_job_complete": True}
    if not is_chief:
        session_creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                               max_wait_secs=max_wait_secs)
        session_creator._training = training
        return MonitoredSession(session_creator=session_creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs)

    all_hooks = []
    if chief_only_hooks:
        all_hooks.extend(chief_only_hooks)
    session_creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master,
                                          config=config)
    session_creator._training = training

    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(hooks_lib.StepCounterHook(output_dir=summary_dir, every_n_steps=log_step_count_steps))

        if (save_summaries_steps and save_summaries_steps > 0) or (save_summaries_secs and save_summaries_secs > 0):
            all_hooks.append(hooks_lib.SummarySaverHook(scaffold=scaffold, save_steps=save_summaries_steps,
                                                        save_secs=save_summaries_secs, output_dir=summary_dir))

    if checkpoint_dir:
        if (save_checkpoint_secs and save_checkpoint_secs > 0) or (save_checkpoint_steps and save_checkpoint_steps > 0):
            all_hooks.append(hooks_lib.CheckpointSaverHook(checkpoint_dir, save_steps=save_checkpoint_steps,
                                                           save_secs=save_checkpoint_secs, scaffold=scaffold))

    if hooks:
        all_hooks.extend(hooks)
    return MonitoredSession(session_creator=session_creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs)
