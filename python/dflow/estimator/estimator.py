"""tf.estimator.Estimator over dflow's C++ Estimator.

Why the C++ Estimator, bound: it already is TensorFlow's estimator loop — a fresh graph per
train / evaluate / predict call, the global step, the input function's dataset read through an
initializable iterator, checkpoints in model_dir (restored by every call, saved as RunConfig
says), step logging, the eval metrics and their event files, NaN checks, and on a cluster the
task's server, replica_device_setter and MonitoredTrainingSession. What is Python is only what
TensorFlow defines in Python: calling the user's input_fn and model_fn with TensorFlow's
arguments, and the shapes of what they return (features dicts, EstimatorSpec, prediction dicts).

The C++ loop calls back into Python to build each graph: input_fn and model_fn run with a Python
Graph over the call's C++ graph as the default graph (dflow.data.scope_graph), so everything
TensorFlow's Python API builds there (layers, tf.get_variable, optimizers, tf.metrics) lands in
the graph the C++ loop runs; variables are registered in the C++ collections as they are made,
so the C++ initializers and savers see them. An exception raised by input_fn or model_fn
reaches the caller unchanged.

Canned estimators (DNNClassifier, ...) are the C++ canned model functions with this same loop.
"""
import collections
import functools
import inspect
import logging
import weakref

import numpy as np

from dflow import _dflow
from dflow.data import nest
from dflow.data.dataset_ops import DatasetV1
from dflow.data.scope_graph import adopt_cc_variables, building_in
from dflow.estimator.run_config import RunConfig
from dflow.framework import errors
from dflow.framework import ops
from dflow.framework import sparse_tensor

_FEATURES_KEY = "__dflow_features__"    # a features tensor that is not a dict
_PREDICTIONS_KEY = "__dflow_predictions__"  # a predictions tensor that is not a dict

_log = logging.getLogger("dflow")


class ModeKeys:
    """Standard names for model modes."""
    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


class EstimatorSpec(collections.namedtuple("EstimatorSpec", [
        "mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs", "training_chief_hooks",
        "training_hooks", "scaffold", "evaluation_hooks", "prediction_hooks"])):
    """Ops and objects returned from a model_fn and passed to an Estimator."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None, export_outputs=None,
                training_chief_hooks=None, training_hooks=None, scaffold=None, evaluation_hooks=None,
                prediction_hooks=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError("mode=%s unrecognized." % (mode,))
        if train_op is None and mode == ModeKeys.TRAIN:
            raise ValueError("Missing train_op.")
        if train_op is not None:
            train_op = _as_op(train_op, "train_op")
        if loss is None:
            if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
                raise ValueError("Missing loss.")
        else:
            loss = _as_tensor(loss, "loss")
            if loss.shape.ndims not in (None, 0) and loss.shape.num_elements() != 1:
                raise ValueError("Loss must be scalar, given: %s" % loss)
            if loss.shape.ndims not in (None, 0):
                from dflow.ops import array_ops
                loss = array_ops.reshape(loss, [])
            if not loss.dtype.base_dtype.is_floating:
                raise TypeError("loss must be a floating point tensor, given: %s" % loss)
        if predictions is None:
            if mode == ModeKeys.PREDICT:
                raise ValueError("Missing predictions.")
            predictions = {}
        elif isinstance(predictions, dict):
            predictions = {k: _as_tensor(v, "predictions[%r]" % k) for k, v in predictions.items()}
        else:
            predictions = _as_tensor(predictions, "predictions")
        if eval_metric_ops is None:
            eval_metric_ops = {}
        else:
            if not isinstance(eval_metric_ops, dict):
                raise TypeError("eval_metric_ops must be a dict, given: %s" % (eval_metric_ops,))
            for k, v in eval_metric_ops.items():
                if not isinstance(v, tuple) or len(v) != 2:
                    raise TypeError("Values of eval_metric_ops must be (metric_value, update_op) tuples, given: "
                                    "%s for key: %s" % (v, k))
        if export_outputs:
            raise NotImplementedError("EstimatorSpec(export_outputs=...): dflow does not export SavedModels")
        for name, hooks in (("training_chief_hooks", training_chief_hooks), ("training_hooks", training_hooks),
                            ("evaluation_hooks", evaluation_hooks), ("prediction_hooks", prediction_hooks)):
            if hooks:
                raise NotImplementedError("EstimatorSpec(%s=...): pass hooks to train/evaluate/predict instead "
                                          "(dflow's estimator loop takes its hooks before the graph is built)"
                                          % name)
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metric_ops, export_outputs,
                               tuple(training_chief_hooks or ()), tuple(training_hooks or ()), scaffold,
                               tuple(evaluation_hooks or ()), tuple(prediction_hooks or ()))

    def _replace(self, **kwds):
        d = self._asdict()
        d.update(kwds)
        return EstimatorSpec(**d)


def _as_tensor(v, what):
    if isinstance(v, ops.Tensor):
        return v
    try:
        return ops.convert_to_tensor(v)
    except (TypeError, ValueError):
        raise TypeError("%s must be a Tensor, given: %s" % (what, v)) from None


def _as_op(v, what):
    if isinstance(v, ops.Operation):
        return v
    if isinstance(v, ops.Tensor):
        return v.op
    if hasattr(v, "op") and isinstance(v.op, ops.Operation):
        return v.op
    raise TypeError("%s must be an Operation or a Tensor, given: %s" % (what, v))


def fn_args(fn):
    """The names of `fn`'s parameters that a caller may pass (TensorFlow's function_utils.fn_args)."""
    if isinstance(fn, functools.partial):
        args = fn_args(fn.func)
        args = args[len(fn.args):]
        return tuple(a for a in args if a not in (fn.keywords or {}))
    if inspect.isclass(fn) or (not inspect.isfunction(fn) and not inspect.ismethod(fn) and hasattr(fn, "__call__")
                               and not inspect.isbuiltin(fn)):
        fn = fn.__call__ if not inspect.isclass(fn) else fn
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return ()
    return tuple(p.name for p in sig.parameters.values()
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def _call_input_fn(input_fn, mode, params, config):
    args = fn_args(input_fn)
    kwargs = {}
    if "mode" in args:
        kwargs["mode"] = mode
    if "params" in args:
        kwargs["params"] = params
    if "config" in args:
        kwargs["config"] = config
    with ops.device("/cpu:0"):
        return input_fn(**kwargs)


def _names_of_element(structure):
    """The C++ names of a (features, labels) or features element: feature keys, "" for the label."""
    if isinstance(structure, tuple) and not hasattr(structure, "_fields"):
        if len(structure) != 2:
            raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
        features, labels = structure
    else:
        features, labels = structure, None
    if isinstance(features, dict):
        names = []
        for k in sorted(features):
            if nest.is_sequence(features[k]):
                raise NotImplementedError("Feature '%s' is a nested structure: dflow's estimators take a flat "
                                          "dict of features" % k)
            names.append(str(k))
    elif nest.is_sequence(features):
        raise ValueError("features must be a Tensor or a dict of Tensors, given: %s" % (features,))
    else:
        names = [_FEATURES_KEY]
    if labels is not None:
        if nest.is_sequence(labels):
            raise NotImplementedError("dflow's estimators take labels as one Tensor, not %s" % (labels,))
        names.append("")
    return names


def _input_for_cc(result):
    """What input_fn returned, as the C++ loop takes it."""
    if isinstance(result, DatasetV1):
        if result._graph is not ops.get_default_graph():
            raise ValueError("The input_fn returned a Dataset made in another graph: make the dataset inside "
                             "input_fn (the estimator builds a new graph for every call).")
        names = _names_of_element(result._structure)
        return ("dataset", result._with_names(names)._cc)
    if isinstance(result, tuple) and not hasattr(result, "_fields"):
        if len(result) != 2:
            raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
        features, labels = result
    else:
        features, labels = result, None
    # The tensors of a one-shot iterator's get_next: read the dataset itself, to its end.
    flat = nest.flatten((features, labels) if labels is not None else features)
    if flat and all(isinstance(t, ops.Tensor) for t in flat):
        from dflow.data import iterator_ops
        op = flat[0].op
        ds = iterator_ops.dataset_of_get_next(op)
        if ds is not None and flat == op.outputs:
            try:
                nest.assert_same_structure((features, labels) if labels is not None else features, ds._structure)
                return _input_for_cc(ds)
            except (ValueError, TypeError):
                pass
    if isinstance(features, dict):
        feats = {}
        for k, v in features.items():
            if nest.is_sequence(v):
                raise NotImplementedError("Feature '%s' is a nested structure: dflow's estimators take a flat dict "
                                          "of features" % k)
            if hasattr(v, "indices") and hasattr(v, "dense_shape"):  # a parsed VarLenFeature
                v = sparse_tensor.to_dense_for_columns(v)
            feats[str(k)] = ops.convert_to_tensor(v)._out
    else:
        feats = {_FEATURES_KEY: ops.convert_to_tensor(features)._out}
    if labels is not None and nest.is_sequence(labels):
        raise NotImplementedError("dflow's estimators take labels as one Tensor, not %s" % (labels,))
    lab = None if labels is None else ops.convert_to_tensor(labels)._out
    return ("tensors", feats, lab)


def _metric_pair(g, name, pair):
    value, update = pair
    value = _as_tensor(value, "eval_metric_ops[%r] value" % name)
    if isinstance(update, ops.Operation):
        # The loop fetches an update tensor: the value, once the update op ran.
        with g.control_dependencies([update]):
            update = ops.apply_op("Identity", "%s_update" % name.replace("/", "_"), [value])
    else:
        update = _as_tensor(update, "eval_metric_ops[%r] update_op" % name)
    return (value._out, update._out)


def _spec_for_cc(g, spec):
    predictions = spec.predictions
    if isinstance(predictions, ops.Tensor):
        preds = {_PREDICTIONS_KEY: predictions._out}
    else:
        preds = {str(k): v._out for k, v in predictions.items()}
    return {
        "predictions": preds,
        "loss": None if spec.loss is None else spec.loss._out,
        "train_op": None if spec.train_op is None else spec.train_op._node,
        "eval_metric_ops": {str(k): _metric_pair(g, k, v) for k, v in spec.eval_metric_ops.items()},
    }


class _HookBridge:
    """What the C++ adapter of a hook calls (estimator.cc PyEstimatorHook). begin() runs the hook's
    begin() in the graph of the call; a hook the library runs in C++ (tf.train.StopAtStepHook,
    CheckpointSaverHook, StepCounterHook, SummarySaverHook) then hands its C++ hooks to the loop,
    a hook written in Python has its methods called around every step of the loop."""

    def __init__(self, hook, estimator):
        self._hook = hook
        self._estimator = weakref.ref(estimator)
        self._graph = None
        self._session = None
        self._ctx = None
        self._ctx_id = None
        self._plan = None

    def begin(self):
        est = self._estimator()
        self._graph = est._live_graphs[-1] if est is not None and est._live_graphs else ops.get_default_graph()
        self._session = None
        with self._graph.as_default():
            self._hook.begin()
            cpp = getattr(self._hook, "_dflow_hooks", None)
            if cpp is not None:
                overridden = self._hook._per_step_overridden()
                if overridden is not None:
                    raise TypeError("%s overrides %s of a hook that runs in C++; subclass tf.train.SessionRunHook "
                                    "instead" % (type(self._hook).__name__, overridden))
                return (list(cpp()), False)
        return ([], True)

    def _lent(self, handle):
        if self._session is None or not self._session._h.same_as(handle):
            from dflow.training.monitored_session import _LentSession
            self._session = _LentSession(self._graph, handle)
        return self._session

    def _context(self, ctx_ref, handle):
        from dflow.training.session_run_hook import SessionRunArgs, SessionRunContext
        if self._ctx is None or self._ctx_id != ctx_ref.id:
            self._ctx = SessionRunContext(original_args=SessionRunArgs(fetches=None), session=self._lent(handle))
            self._ctx_id = ctx_ref.id
        if ctx_ref.stop_requested:
            self._ctx._stop_requested = True
        return self._ctx

    def after_create_session(self, handle):
        self._hook.after_create_session(self._lent(handle), None)

    def before_run(self, ctx_ref, handle):
        from dflow.client import session as session_lib
        ctx = self._context(ctx_ref, handle)
        args = self._hook.before_run(ctx)
        self._plan = None
        if ctx.stop_requested:
            ctx_ref.request_stop()
        if args is None:
            return None
        fetches = getattr(args, "fetches", None)
        feed_dict = getattr(args, "feed_dict", None)
        plan = session_lib._FetchPlan(self._graph, fetches) if fetches is not None else None
        self._plan = plan
        feeds = session_lib.BaseSession._feeds(ctx.session, feed_dict) if feed_dict else []
        if plan is None:
            return ([], feeds, [])
        return ([t._out for t in plan.tensors], feeds, [o._node for o in plan.targets])

    def after_run(self, ctx_ref, handle, results):
        from dflow.client import session as session_lib
        from dflow.training.session_run_hook import SessionRunValues
        ctx = self._context(ctx_ref, handle)
        value = self._plan.build(results) if self._plan is not None else None
        self._hook.after_run(ctx, SessionRunValues(results=value, options=session_lib.RunOptions(),
                                                   run_metadata=session_lib.RunMetadata()))
        if ctx.stop_requested:
            ctx_ref.request_stop()

    def end(self, handle):
        self._hook.end(self._lent(handle))


def _cc_hooks(hooks, what, estimator):
    """The hooks of a call as the C++ loop takes them: C++ hooks as they are, others bridged."""
    out = []
    for h in hooks or ():
        cc_type = getattr(_dflow, "SessionRunHook", None)
        if cc_type is not None and isinstance(h, cc_type):
            out.append(h)
        elif all(hasattr(h, m) for m in ("begin", "before_run", "after_run", "end", "after_create_session")):
            out.append(_HookBridge(h, estimator))
        else:
            raise TypeError("%s: hooks must be SessionRunHook instances, given: %r" % (what, h))
    return out


def _log_line(line):
    _log.info(line)


class Estimator:
    """Estimator class to train and evaluate TensorFlow models."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
        if warm_start_from is not None:
            raise NotImplementedError("Estimator(warm_start_from=...): not supported by dflow")
        if config is None:
            config = RunConfig()
        elif not isinstance(config, RunConfig):
            raise ValueError("config must be an instance of `RunConfig`, but provided %s." % (config,))
        if model_dir is not None:
            model_dir = RunConfig(model_dir=model_dir).model_dir
            if config.model_dir is not None and config.model_dir != model_dir:
                raise ValueError("`model_dir` are set both in constructor and `RunConfig`, but with different "
                                 "values. In constructor: '%s', in `RunConfig`: '%s' " % (model_dir, config.model_dir))
            config = config.replace(model_dir=model_dir)
        self._params = dict(params or {})
        self._model_fn = model_fn
        if model_fn is not None:
            self._verify_model_fn_args(model_fn, params)
        self._live_graphs = []  # the Python graphs of the call in progress
        self._cc = self._make_cc(config._to_cc(_log_line))
        if config.model_dir is None:
            _log.warning("Using temporary folder as model directory: %s", self._cc.model_dir)
        self._config = config.replace(model_dir=self._cc.model_dir)

    def _make_cc(self, cc_config):
        # The C++ estimator holds the callback, which must not hold the estimator (a cycle
        # through C++ that Python's collector cannot see).
        me = weakref.ref(self)

        def model_fn(scope, features, labels, mode):
            return me()._model_fn_for_cc(scope, features, labels, mode)
        return _dflow.custom_estimator(model_fn, cc_config)

    @staticmethod
    def _verify_model_fn_args(model_fn, params):
        args = set(fn_args(model_fn))
        if "features" not in args:
            raise ValueError("model_fn (%s) must include features argument." % model_fn)
        if params is not None and "params" not in args:
            raise ValueError("model_fn (%s) does not include params argument, but params (%s) are passed to "
                             "Estimator." % (model_fn, params))

    # ---- properties ----
    @property
    def model_dir(self):
        return self._cc.model_dir

    @property
    def config(self):
        return self._config

    @property
    def params(self):
        return dict(self._params)

    @property
    def model_fn(self):
        return self._model_fn

    def latest_checkpoint(self):
        return self._cc.latest_checkpoint() or None

    def get_variable_names(self):
        """The names of the variables in the latest checkpoint."""
        from dflow import train
        return [name for name, _ in train.list_variables(self.model_dir)]

    def get_variable_value(self, name):
        """The value of variable `name` in the latest checkpoint."""
        from dflow import train
        return train.load_variable(self.model_dir, name)

    # ---- the calls ----
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains a model given training data input_fn; returns self."""
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: {}".format(steps))
        if max_steps is not None and max_steps <= 0:
            raise ValueError("Must specify max_steps > 0, given: {}".format(max_steps))
        if saving_listeners:
            raise NotImplementedError("train(saving_listeners=...): not supported by dflow's estimators")
        self._checked(self._cc.train, self._input_fn_for_cc(input_fn, ModeKeys.TRAIN), int(steps or 0),
                      int(max_steps or 0), _cc_hooks(hooks, "train", self), [])
        return self

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates the model; returns a dict of the metrics and 'global_step'."""
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: {}".format(steps))
        result = self._checked(self._cc.evaluate, self._input_fn_for_cc(input_fn, ModeKeys.EVAL), int(steps or 0),
                               _cc_hooks(hooks, "evaluate", self), checkpoint_path or "", name or "")
        return _eval_dict(result)

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None, yield_single_examples=True):
        """Yields the predictions for every example of input_fn: a dict per example (or the
        prediction itself when model_fn returned one tensor)."""
        if not yield_single_examples:
            raise NotImplementedError("predict(yield_single_examples=False): dflow yields single examples")
        if isinstance(predict_keys, str):
            predict_keys = [predict_keys]
        keys = list(predict_keys or [])
        cc_hooks = _cc_hooks(hooks, "predict", self)
        rows = self._checked(self._cc.predict, self._input_fn_for_cc(input_fn, ModeKeys.PREDICT), keys, cc_hooks,
                             checkpoint_path or "")
        for row in rows:
            if _PREDICTIONS_KEY in row:
                yield row[_PREDICTIONS_KEY]
            else:
                yield self._extend_prediction(row, keys)

    def _extend_prediction(self, row, keys):
        return row

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
                           checkpoint_path=None, experimental_mode=ModeKeys.PREDICT):
        """Writes the PREDICT graph on the receiver's features, with the variables of the latest
        checkpoint (or checkpoint_path), as a SavedModel in export_dir_base/<timestamp>; returns
        its path (bytes). Signatures as TensorFlow's canned heads: classify / regress on the
        serialized examples of a parsing receiver ("serving_default"), "predict" on the receiver
        tensors."""
        if experimental_mode != ModeKeys.PREDICT:
            raise NotImplementedError("export_saved_model(experimental_mode=%r): dflow exports the PREDICT graph"
                                      % (experimental_mode,))
        if assets_extra:
            raise NotImplementedError("export_saved_model(assets_extra=...) is not supported by dflow")
        if not serving_input_receiver_fn:
            raise ValueError("An input_receiver_fn must be defined.")
        me = weakref.ref(self)

        def call(scope):
            self = me()
            with building_in(scope) as g:
                self._live_graphs.append(g)
                adopt_cc_variables(g)
                r = serving_input_receiver_fn()
                feats = r.features if isinstance(r.features, dict) else {_FEATURES_KEY: r.features}
                # Parsed VarLenFeatures (SparseTensors) as the dense inputs the columns take.
                feats = {k: sparse_tensor.to_dense_for_columns(v) if hasattr(v, "dense_shape") else v
                         for k, v in feats.items()}
                return ({str(k): ops.convert_to_tensor(v)._out for k, v in feats.items()},
                        {str(k): ops.convert_to_tensor(v)._out for k, v in r.receiver_tensors.items()})
        if isinstance(export_dir_base, bytes):
            export_dir_base = export_dir_base.decode()
        try:
            path = self._checked(self._cc.export_saved_model, str(export_dir_base), call, checkpoint_path or "",
                                 bool(as_text))
        except errors.FailedPreconditionError as e:
            raise ValueError(e.message) from None
        return path.encode()

    export_savedmodel = export_saved_model

    # ---- the callbacks the C++ loop makes ----
    def _checked(self, call, *args):
        try:
            return call(*args)
        except errors.InvalidArgumentError as e:
            if "Can not provide both" in e.message or "Must specify" in e.message:
                raise ValueError(e.message) from None
            raise
        finally:
            del self._live_graphs[:]

    def _input_fn_for_cc(self, input_fn, mode):
        if not callable(input_fn):
            raise ValueError("input_fn must be callable, given: %s" % (input_fn,))
        me = weakref.ref(self)

        def call(scope):
            self = me()
            with building_in(scope) as g:
                self._live_graphs.append(g)
                adopt_cc_variables(g)
                result = _call_input_fn(input_fn, mode, self.params, self.config)
                return _input_for_cc(result)
        return call

    def _model_fn_for_cc(self, scope, features, labels, mode):
        with building_in(scope) as g:
            self._live_graphs.append(g)
            adopt_cc_variables(g)
            feats = {k: g._tensor_of(v) for k, v in features.items()}
            if list(feats) == [_FEATURES_KEY]:
                feats = feats[_FEATURES_KEY]
            lab = None if labels is None else g._tensor_of(labels)
            spec = self._call_model_fn(feats, lab, mode, self.config)
            return _spec_for_cc(g, spec)

    def _call_model_fn(self, features, labels, mode, config):
        args = fn_args(self._model_fn)
        kwargs = {}
        if "labels" in args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = config
        spec = self._model_fn(features=features, **kwargs)
        if not isinstance(spec, EstimatorSpec):
            raise ValueError("model_fn should return an EstimatorSpec.")
        return spec

    def __del__(self):
        cc = getattr(self, "_cc", None)
        if cc is not None:
            try:
                cc.close()
            except Exception:  # noqa: BLE001 - nothing to report to at interpreter exit
                pass


def _eval_dict(result):
    out = {}
    for k, v in result.items():
        out[k] = np.int64(v) if k == "global_step" else np.float32(v)
    return out
