"""TensorFlow's hooks (tf.train.StopAtStepHook, CheckpointSaverHook, ...).

Who runs what:
- StopAtStepHook, CheckpointSaverHook, StepCounterHook and SummarySaverHook are the C++ hooks
  (include/dflow/basic_session_run_hooks.h): their begin() finds the global step (and the saver,
  the summary op, the writer) and builds the C++ hook, which the C++ training loop then calls
  itself. The global step's re-read after a step, the checkpoint retry rules
  (max_consecutive_save_failures) and the timers are the C++ ones. Savers and summary writers are
  Python objects (tf.train.Saver, tf.summary.FileWriter) called through adapters, so listeners
  and custom savers work.
- LoggingTensorHook, NanTensorHook, FinalOpsHook, FeedFnHook and GlobalStepWaiterHook are Python
  hooks (their behaviour is defined by Python structures: nested fetches, formatters, feed
  functions, NanLossDuringTrainingError) that run through the loop's Python-hook adapter.
A subclass of a C++ hook that overrides its per-step methods cannot run in C++: the training
loop rejects it with a TypeError.
"""
import logging
import time

import numpy as np

from dflow import _dflow
from dflow.framework import ops
from dflow.training import session_run_hook
from dflow.training.session_run_hook import SessionRunArgs

_log = logging.getLogger("dflow")


# ---- helpers shared with monitored_session.py ----

def _get_global_step(graph=None):
    """The graph's global step variable (tf.train.get_global_step), or None."""
    graph = graph or ops.get_default_graph()
    try:
        from dflow.training import training_util
        return training_util.get_global_step(graph)
    except ImportError:
        pass
    steps = graph.get_collection(ops.GraphKeys.GLOBAL_STEP)
    if len(steps) == 1:
        return steps[0]
    if len(steps) > 1:
        raise TypeError("There are multiple items in collection global_step. There should be only one.")
    try:
        return graph.get_tensor_by_name("global_step:0")
    except (KeyError, ValueError):
        return None


def _global_step_output(graph=None):
    """The C++ Output a C++ hook fetches for the global step, or None."""
    gs = _get_global_step(graph)
    if gs is None:
        return None
    with (graph or ops.get_default_graph()).as_default():
        return ops.convert_to_tensor(gs)._out


_writers = {}


def _summary_writer_for(output_dir):
    """TensorFlow's SummaryWriterCache.get: one event-file writer per directory."""
    try:
        from dflow.summary import FileWriterCache
        return FileWriterCache.get(output_dir)
    except ImportError:
        pass
    w = _writers.get(output_dir)
    if w is None:
        w = _dflow.FileWriter(output_dir)
        try:
            w.add_graph(ops.get_default_graph()._h.root, 0)
        except Exception:  # noqa: BLE001 - the graph is an extra
            pass
        _writers[output_dir] = w
    return w


class _WriterBridge:
    """What the C++ SummaryWriterInterface calls: add_summary(bytes, step), flush()."""

    def __init__(self, writer):
        self._writer = writer

    def add_summary(self, serialized, step):
        self._writer.add_summary(serialized, step)

    def flush(self):
        self._writer.flush()


def _cpp_writer(writer):
    return None if writer is None else _dflow.py_summary_writer(_WriterBridge(writer))


class _CppHook(session_run_hook.SessionRunHook):
    """A hook the C++ training loop runs itself: begin() builds it (_dflow_hooks then returns it)."""

    _cpp = None

    def _dflow_hooks(self):
        if self._cpp is None:
            raise RuntimeError("%s.begin() was not called" % type(self).__name__)
        return [self._cpp]

    def _per_step_overridden(self):
        base = _CppHook.__mro__
        for name in ("after_create_session", "before_run", "after_run", "end"):
            defining = next((k for k in type(self).__mro__ if name in k.__dict__), None)
            if defining is not None and defining not in base and defining not in _CPP_HOOK_CLASSES:
                return name
        return None


# ---- SecondOrStepTimer ----

class SecondOrStepTimer:
    """Timer that triggers at most once every N seconds or once every N steps (TensorFlow's)."""

    def __init__(self, every_secs=None, every_steps=None):
        self.reset()
        self._every_secs = every_secs
        self._every_steps = every_steps
        if self._every_secs is None and self._every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if self._every_secs is not None and self._every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")

    def reset(self):
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None:
            if time.time() >= self._last_triggered_time + self._every_secs:
                return True
        if self._every_steps is not None:
            if step >= self._last_triggered_step + self._every_steps:
                return True
        return False

    def update_last_triggered_step(self, step):
        current_time = time.time()
        if self._last_triggered_time is None:
            elapsed_secs = None
            elapsed_steps = None
        else:
            elapsed_secs = current_time - self._last_triggered_time
            elapsed_steps = step - self._last_triggered_step
        self._last_triggered_time = current_time
        self._last_triggered_step = step
        return (elapsed_secs, elapsed_steps)

    def last_triggered_step(self):
        return self._last_triggered_step


class NeverTriggerTimer(SecondOrStepTimer):
    """Timer that never triggers."""

    def __init__(self):  # noqa: D107 - no arguments
        self.reset()

    def should_trigger_for_step(self, step):
        return False

    def update_last_triggered_step(self, step):
        return (None, None)


def _timer_args(every_secs, every_steps, secs_name, steps_name):
    if (every_secs is None) == (every_steps is None):
        raise ValueError("exactly one of %s or %s should be provided." % (secs_name, steps_name))


# ---- hooks in C++ ----

class StopAtStepHook(_CppHook):
    """Hook that requests stop at a specified step (the C++ StopAtStepHook)."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        gs = _global_step_output()
        if gs is None:
            raise RuntimeError("Global step should be created to use StopAtStepHook.")
        self._cpp = _dflow.stop_at_step_hook(gs, int(self._num_steps or 0), int(self._last_step or 0))


class CheckpointSaverListener:
    """Interface for listeners that take action before or after checkpoint save."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(_CppHook):
    """Saves checkpoints every N steps or seconds (the C++ CheckpointSaverHook: a checkpoint when
    the session is created, then every N, and at the end; a failed save is logged and retried at
    the next one, max_consecutive_save_failures in a row end training)."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None, checkpoint_basename="model.ckpt",
                 scaffold=None, listeners=None, save_graph_def=True, max_consecutive_save_failures=3):
        _log.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        _timer_args(save_secs, save_steps, "every_secs", "every_steps")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = checkpoint_dir.rstrip("/") + "/" + checkpoint_basename
        self._checkpoint_basename = checkpoint_basename
        self._scaffold = scaffold
        self._save_secs = save_secs
        self._save_steps = save_steps
        self._listeners = listeners or []
        self._save_graph_def = save_graph_def
        self._max_failures = max_consecutive_save_failures
        self._bridge = None

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            if self._scaffold.saver is None:
                from dflow.training import monitored_session
                self._scaffold._saver = monitored_session._default_saver()
            return self._scaffold.saver
        from dflow.training import monitored_session
        return monitored_session._default_saver()

    def begin(self):
        gs = _global_step_output()
        if gs is None:
            raise RuntimeError("Global step should be created to use CheckpointSaverHook.")
        for l in self._listeners:
            l.begin()
        from dflow.training import monitored_session
        saver = self._get_saver()
        self._bridge = monitored_session._SaverBridge(saver, listeners=self._listeners,
                                                      write_meta_graph=self._save_graph_def)
        cpp_saver = self._bridge.cpp() if saver is not None else _dflow.py_saver(monitored_session._NoSaver())
        self._cpp = _dflow.checkpoint_saver_hook(self._checkpoint_dir, cpp_saver, gs, int(self._save_secs or 0),
                                                 int(self._save_steps or 0), self._checkpoint_basename,
                                                 int(self._max_failures))

    def _dflow_hooks(self):
        hooks = super()._dflow_hooks()
        if self._listeners:
            # listener.end and after_save's request to stop, in Python after the C++ hook.
            hooks.append(_ListenerEnd(self))
        return hooks


class _ListenerEnd(session_run_hook.SessionRunHook):
    def __init__(self, hook):
        self._hook = hook

    def after_run(self, run_context, run_values):
        if self._hook._bridge is not None and self._hook._bridge.stop_requested:
            run_context.request_stop()

    def end(self, session):
        step = session.run(_get_global_step())
        for l in self._hook._listeners:
            l.end(session, step)


class StepCounterHook(_CppHook):
    """Logs global steps per second ("global_step/sec") every N steps or seconds, and writes it
    to the summary writer (the C++ StepCounterHook)."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._every_n_steps = every_n_steps
        self._every_n_secs = every_n_secs
        self._output_dir = output_dir
        self._summary_writer = summary_writer

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = _summary_writer_for(self._output_dir)
        gs = _global_step_output()
        if gs is None:
            raise RuntimeError("Global step should be created to use StepCounterHook.")
        self._cpp = _dflow.step_counter_hook(gs, int(self._every_n_steps or 0), float(self._every_n_secs or 0),
                                             _cpp_writer(self._summary_writer))

    def _dflow_hooks(self):
        hooks = super()._dflow_hooks()
        if self._summary_writer is not None:
            hooks.append(_FlushAtEnd(self._summary_writer))
        return hooks


class _FlushAtEnd(session_run_hook.SessionRunHook):
    """Flushes a summary writer when training ends (so that what was written can be read)."""

    def __init__(self, writer):
        self._writer = writer

    def end(self, session):
        self._writer.flush()


class SummarySaverHook(_CppHook):
    """Saves summaries every N steps or seconds (the C++ SummarySaverHook)."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                 summary_op=None):
        if ((scaffold is None and summary_op is None) or (scaffold is not None and summary_op is not None)):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        _timer_args(save_secs, save_steps, "every_secs", "every_steps")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._save_steps = save_steps
        self._save_secs = save_secs

    def _get_summary_op(self):
        if self._summary_op is not None:
            op = self._summary_op
        else:
            if self._scaffold.summary_op is None:
                from dflow.training import monitored_session
                self._scaffold._summary_op = monitored_session.Scaffold.get_or_default(
                    "summary_op", ops.GraphKeys.SUMMARY_OP, monitored_session._merge_all_summaries)
            op = self._scaffold.summary_op
        if op is None:
            return None
        if isinstance(op, (list, tuple)):
            from dflow.ops import array_ops
            op = array_ops.stack(list(op)) if len(op) > 1 else op[0]
        return op

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = _summary_writer_for(self._output_dir)
        gs = _global_step_output()
        if gs is None:
            raise RuntimeError("Global step should be created to use SummarySaverHook.")
        op = self._get_summary_op()
        self._cpp = None
        if op is not None and self._summary_writer is not None:
            self._cpp = _dflow.summary_saver_hook(op._out, _cpp_writer(self._summary_writer), gs,
                                                  int(self._save_steps or 0), int(self._save_secs or 0))

    def _dflow_hooks(self):
        return [] if self._cpp is None else [self._cpp]


_CPP_HOOK_CLASSES = (StopAtStepHook, CheckpointSaverHook, StepCounterHook, SummarySaverHook)


# ---- hooks in Python ----

def _as_graph_element(obj):
    graph = ops.get_default_graph()
    if not isinstance(obj, str):
        if not hasattr(obj, "graph") or obj.graph is not graph:
            raise ValueError("Passed %s should have graph attribute that is equal to current graph %s." % (obj, graph))
        return obj
    if ":" in obj:
        element = graph.as_graph_element(obj)
    else:
        element = graph.as_graph_element(obj + ":0")
    return element


class LoggingTensorHook(session_run_hook.SessionRunHook):
    """Prints the given tensors every N local steps, every N seconds, or at end (TensorFlow's,
    through Python's logging at INFO, logger "dflow")."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        only_log_at_end = (at_end and (every_n_iter is None) and (every_n_secs is None))
        if (not only_log_at_end and (every_n_iter is None) == (every_n_secs is None)):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError("invalid every_n_iter=%s." % every_n_iter)
        if not isinstance(tensors, dict):
            self._tag_order = tensors
            tensors = {item: item for item in tensors}
        else:
            self._tag_order = sorted(tensors.keys())
        self._tensors = tensors
        self._formatter = formatter
        self._timer = (NeverTriggerTimer() if only_log_at_end else
                       SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter))
        self._log_at_end = at_end

    def begin(self):
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _as_graph_element(tensor) for (tag, tensor) in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        if self._should_trigger:
            return SessionRunArgs(self._current_tensors)
        return None

    def _log_tensors(self, tensor_values):
        original = np.get_printoptions()
        np.set_printoptions(suppress=True)
        elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
        if self._formatter:
            _log.info(self._formatter(tensor_values))
        else:
            stats = []
            for tag in self._tag_order:
                stats.append("%s = %s" % (tag, tensor_values[tag]))
            if elapsed_secs is not None:
                _log.info("%s (%.3f sec)", ", ".join(stats), elapsed_secs)
            else:
                _log.info("%s", ", ".join(stats))
        np.set_printoptions(**original)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            values = session.run(self._current_tensors)
            self._log_tensors(values)


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(session_run_hook.SessionRunHook):
    """Monitors the loss tensor and stops training if loss is NaN."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            failure_message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                _log.error(failure_message)
                raise NanLossDuringTrainingError
            _log.warning(failure_message)
            run_context.request_stop()


class FinalOpsHook(session_run_hook.SessionRunHook):
    """Runs the given ops (any fetch structure) at the end of training and keeps their values."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is not None:
            from dflow.framework import errors
            try:
                self._final_ops_values = session.run(self._final_ops, feed_dict=self._final_ops_feed_dict)
            except (errors.OutOfRangeError, StopIteration) as e:
                _log.warning("An OutOfRangeError or StopIteration exception is raised by the code in FinalOpsHook. "
                             "This typically means the Ops running by the FinalOpsHook have a dependency back to "
                             "some input source, which should not happen. For example, for metrics in "
                             "tf.estimator.Estimator, all metrics functions return two Ops: `value_op` and "
                             "`update_op`. Estimator.evaluate calls the `update_op` for each batch of the data in "
                             "input source and, once it is exhausted, it call the `value_op` to get the metric "
                             "values. The `value_op` here should have dependency back to variables reading only, "
                             "rather than reading another batch from input. Otherwise, the `value_op`, executed "
                             "by `FinalOpsHook`, triggers another data reading, which ends OutOfRangeError/"
                             "StopIteration. Please fix that.")
                raise e


class FeedFnHook(session_run_hook.SessionRunHook):
    """Runs `feed_fn` and sets the `feed_dict` accordingly."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class GlobalStepWaiterHook(session_run_hook.SessionRunHook):
    """Delays execution until the global step reaches `wait_until_step` (TensorFlow's)."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = False
        self._global_step_tensor = _get_global_step()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use _GlobalStepWaiterHook.")

    def before_run(self, run_context):
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        _log.info("Waiting for global step %d before starting training.", self._wait_until_step)
        last_logged_step = 0
        while True:
            current_step = int(run_context.session.run(self._global_step_tensor))
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current_step - last_logged_step > 1000:
                _log.info("Waiting for global step %d before starting training. Current step is %d.",
                          self._wait_until_step, current_step)
                last_logged_step = current_step
            time.sleep(0.5)


class ProfilerHook(session_run_hook.SessionRunHook):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("tf.train.ProfilerHook (Chrome traces) is not supported by dflow")
