"""tf.estimator.RunConfig: where and how an estimator runs (TensorFlow's fields and defaults).

The cluster comes from the TF_CONFIG environment variable, read when the RunConfig is made and
parsed by the C++ RunConfig (the same rules as C++ estimators: a "chief" job or worker 0 is the
chief).
"""
import copy
import json
import os

from dflow import _dflow

_USE_DEFAULT = object()

_REPLACEABLE = ("model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
                "save_checkpoints_secs", "session_config", "keep_checkpoint_max", "keep_checkpoint_every_n_hours",
                "log_step_count_steps", "train_distribute", "device_fn", "protocol", "eval_distribute",
                "experimental_distribute", "experimental_max_worker_delay_secs", "session_creation_timeout_secs",
                "checkpoint_save_graph_def")


class TaskType:
    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


class RunConfig:
    """Specifies the configuration of an Estimator run."""

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_USE_DEFAULT, save_checkpoints_secs=_USE_DEFAULT, session_config=None,
                 keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None, eval_distribute=None,
                 experimental_distribute=None, experimental_max_worker_delay_secs=None,
                 session_creation_timeout_secs=7200, checkpoint_save_graph_def=True):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("Can not provide both save_checkpoints_steps and save_checkpoints_secs.")
        for name, value in (("train_distribute", train_distribute), ("eval_distribute", eval_distribute),
                            ("experimental_distribute", experimental_distribute), ("device_fn", device_fn)):
            if value is not None:
                raise NotImplementedError("RunConfig(%s=...): not supported by dflow's estimators" % name)
        self._model_dir = _expand(model_dir)
        self._tf_random_seed = tf_random_seed
        self._save_summary_steps = save_summary_steps
        self._save_checkpoints_steps = save_checkpoints_steps
        self._save_checkpoints_secs = save_checkpoints_secs
        self._session_config = session_config
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._log_step_count_steps = log_step_count_steps
        self._protocol = protocol
        self._experimental_max_worker_delay_secs = experimental_max_worker_delay_secs
        self._session_creation_timeout_secs = session_creation_timeout_secs
        self._checkpoint_save_graph_def = checkpoint_save_graph_def
        self._train_distribute = None
        self._eval_distribute = None
        self._device_fn = None
        self._tf_config_json = os.environ.get("TF_CONFIG", "")
        self._cc_task = _dflow.RunConfig.from_tf_config(self._tf_config_json)
        self._validate()

    def _validate(self):
        for name in ("save_summary_steps", "save_checkpoints_steps", "save_checkpoints_secs",
                     "log_step_count_steps", "keep_checkpoint_max"):
            v = getattr(self, "_" + name)
            if v is not None and v < 0:
                raise ValueError("%s should be >= 0, given: %s" % (name, v))
        if self._tf_random_seed is not None and not isinstance(self._tf_random_seed, int):
            raise ValueError("tf_random_seed must be integer.")

    # ---- fields ----
    model_dir = property(lambda self: self._model_dir)
    tf_random_seed = property(lambda self: self._tf_random_seed)
    save_summary_steps = property(lambda self: self._save_summary_steps)
    save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
    save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
    session_config = property(lambda self: self._session_config)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_every_n_hours = property(lambda self: self._keep_checkpoint_every_n_hours)
    log_step_count_steps = property(lambda self: self._log_step_count_steps)
    train_distribute = property(lambda self: None)
    eval_distribute = property(lambda self: None)
    device_fn = property(lambda self: None)
    protocol = property(lambda self: self._protocol)
    session_creation_timeout_secs = property(lambda self: self._session_creation_timeout_secs)
    checkpoint_save_graph_def = property(lambda self: self._checkpoint_save_graph_def)
    experimental_max_worker_delay_secs = property(lambda self: self._experimental_max_worker_delay_secs)

    # ---- the task (TF_CONFIG) ----
    @property
    def cluster_spec(self):
        from dflow.training.server_lib import ClusterSpec
        return ClusterSpec({job: dict(tasks) for job, tasks in self._cc_task.cluster.items()})

    @property
    def task_type(self):
        return self._cc_task.task_type if self._cc_task.distributed else TaskType.WORKER

    @property
    def task_id(self):
        return self._cc_task.task_id

    @property
    def is_chief(self):
        return self._cc_task.is_chief

    @property
    def num_ps_replicas(self):
        return self._cc_task.num_ps_replicas

    @property
    def num_worker_replicas(self):
        return self._cc_task.num_worker_replicas

    @property
    def master(self):
        if not self._cc_task.distributed:
            return ""
        return "grpc://" + self._cc_task.cluster[self.task_type][self.task_id]

    @property
    def evaluation_master(self):
        return ""

    @property
    def global_id_in_cluster(self):
        if not self._cc_task.distributed:
            return 0
        order = ["chief", "master", "worker", "ps", "evaluator"]
        cluster = self._cc_task.cluster
        gid = 0
        for job in sorted(cluster, key=lambda j: (order.index(j) if j in order else len(order), j)):
            if job == self.task_type:
                return gid + self.task_id
            gid += len(cluster[job])
        return gid

    @property
    def service(self):
        return None

    def replace(self, **kwargs):
        for k in kwargs:
            if k not in _REPLACEABLE:
                raise ValueError("%s is not allowed to be replaced in RunConfig." % k)
        new = copy.copy(self)
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" in kwargs:
            if kwargs["save_checkpoints_steps"] is not None and kwargs["save_checkpoints_secs"] is not None:
                raise ValueError("Can not provide both save_checkpoints_steps and save_checkpoints_secs.")
        elif "save_checkpoints_steps" in kwargs and kwargs["save_checkpoints_steps"] is not None:
            new._save_checkpoints_secs = None
        elif "save_checkpoints_secs" in kwargs and kwargs["save_checkpoints_secs"] is not None:
            new._save_checkpoints_steps = None
        for k, v in kwargs.items():
            if k in ("train_distribute", "eval_distribute", "experimental_distribute", "device_fn") and v is not None:
                raise NotImplementedError("RunConfig(%s=...): not supported by dflow's estimators" % k)
            setattr(new, "_" + k, _expand(v) if k == "model_dir" else v)
        new._validate()
        return new

    def _to_cc(self, log=None):
        """The C++ RunConfig of this configuration."""
        c = _dflow.RunConfig.from_tf_config(self._tf_config_json)
        c.model_dir = self._model_dir or ""
        c.tf_random_seed = int(self._tf_random_seed or 0)
        c.save_checkpoints_steps = int(self._save_checkpoints_steps or 0)
        c.save_checkpoints_secs = int(self._save_checkpoints_secs or 0)
        # TensorFlow: None or 0 keeps every checkpoint.
        c.keep_checkpoint_max = int(self._keep_checkpoint_max) if self._keep_checkpoint_max else 1 << 30
        c.save_summary_steps = int(self._save_summary_steps or 0)
        c.log_step_count_steps = int(self._log_step_count_steps or 0)
        if log is not None:
            c.set_log(log)
        return c

    def __repr__(self):
        fields = ["model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
                  "save_checkpoints_secs", "session_config", "keep_checkpoint_max",
                  "keep_checkpoint_every_n_hours", "log_step_count_steps", "task_type", "task_id",
                  "num_ps_replicas", "num_worker_replicas", "is_chief", "master"]
        return "RunConfig(%s)" % ", ".join("%s=%r" % (f, getattr(self, f)) for f in fields)


def _expand(model_dir):
    if model_dir is None:
        return None
    model_dir = os.fspath(model_dir)
    return os.path.expanduser(model_dir) if model_dir else None


def tf_config():
    """The parsed TF_CONFIG environment variable ({} when unset)."""
    return json.loads(os.environ.get("TF_CONFIG") or "{}")
