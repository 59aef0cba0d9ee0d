"""tf.estimator.train_and_evaluate with TrainSpec and EvalSpec, over the C++ TrainAndEvaluate:
locally it trains to max_steps and then evaluates; on a cluster (TF_CONFIG) the task does its
part: chief and workers train (the chief then tells the cluster the job is complete), a ps task
serves until then (tf.train.Server.join), an evaluator evaluates each new checkpoint (at most
every throttle_secs) until one at max_steps."""
import collections

from dflow.estimator.estimator import Estimator, ModeKeys, _cc_hooks, _eval_dict


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])):
    """Configuration for the "train" part for the `train_and_evaluate` call."""

    def __new__(cls, input_fn, max_steps=None, hooks=None, saving_listeners=None):
        if not callable(input_fn):
            raise TypeError("`input_fn` must be callable, given: {}".format(input_fn))
        if max_steps is not None and max_steps <= 0:
            raise ValueError("Must specify max_steps > 0, given: {}".format(max_steps))
        if saving_listeners:
            raise NotImplementedError("TrainSpec(saving_listeners=...): not supported by dflow")
        return super().__new__(cls, input_fn, max_steps, tuple(hooks or ()), ())


class EvalSpec(collections.namedtuple("EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters",
                                                   "start_delay_secs", "throttle_secs"])):
    """Configuration for the "eval" part for the `train_and_evaluate` call."""

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None, start_delay_secs=120,
                throttle_secs=600):
        if not callable(input_fn):
            raise TypeError("`input_fn` must be callable, given: {}".format(input_fn))
        if steps is not None and steps <= 0:
            raise ValueError("Must specify steps > 0, given: {}".format(steps))
        if start_delay_secs < 0:
            raise ValueError("Must specify start_delay_secs >= 0, given: {}".format(start_delay_secs))
        if throttle_secs < 0:
            raise ValueError("Must specify throttle_secs >= 0, given: {}".format(throttle_secs))
        if exporters:
            raise NotImplementedError("EvalSpec(exporters=...): dflow does not export SavedModels")
        return super().__new__(cls, input_fn, steps, name, tuple(hooks or ()), (), start_delay_secs,
                               throttle_secs)


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains and evaluates as the task this process is; returns (eval_result, export_results)
    (eval_result is None on tasks that do not evaluate)."""
    if not isinstance(estimator, Estimator):
        raise TypeError("`estimator` must have type `tf.estimator.Estimator`, given {}".format(type(estimator)))
    if not isinstance(train_spec, TrainSpec):
        raise TypeError("`train_spec` must have type `tf.estimator.TrainSpec`. Got: {}".format(type(train_spec)))
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError("`eval_spec` must have type `tf.estimator.EvalSpec`. Got: {}".format(type(eval_spec)))
    if eval_spec.name:
        raise NotImplementedError("EvalSpec(name=...): dflow's train_and_evaluate writes to model_dir/eval")
    config = estimator.config
    if config.task_type == "ps":
        # TensorFlow's ps task: a server that serves until the job is complete (the chief ends it;
        # Ctrl-C or SIGTERM stop it too).
        from dflow.training.server_lib import Server
        Server(config.cluster_spec, job_name="ps", task_index=config.task_id).join()
        return None, []
    result = estimator._checked(
        _train_and_evaluate_cc, estimator, train_spec, eval_spec)
    if not result:
        return None, []
    return _eval_dict(result), []


def _train_and_evaluate_cc(estimator, train_spec, eval_spec):
    from dflow import _dflow
    return _dflow.train_and_evaluate(
        estimator._cc, estimator._input_fn_for_cc(train_spec.input_fn, ModeKeys.TRAIN),
        int(train_spec.max_steps or 0), _cc_hooks(train_spec.hooks, "TrainSpec", estimator),
        estimator._input_fn_for_cc(eval_spec.input_fn, ModeKeys.EVAL), int(eval_spec.steps or 0),
        int(eval_spec.throttle_secs), 600, _cc_hooks(eval_spec.hooks, "EvalSpec", estimator))
