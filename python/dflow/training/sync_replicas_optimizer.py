"""tf.train.SyncReplicasOptimizer over the C++ SyncReplicasOptimizer
(include/dflow/sync_replicas_optimizer.h), wrapping a tf.train optimizer's C++ optimizer.

    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                         replicas_to_aggregate=2, total_num_replicas=2)
    train_op = opt.minimize(loss, global_step=global_step)
    hook = opt.make_session_run_hook(is_chief=task_index == 0)
    with tf.train.MonitoredTrainingSession(master=..., is_chief=..., hooks=[hook, ...]) as sess: ...

Each global step applies the mean of exactly `replicas_to_aggregate` gradients, once (stale and
surplus gradients are dropped and counted); the chief's queue runner (started by the hook)
applies them and hands every worker a token for the next step. The hook is the C++ hook: it runs
the chief's init ops and queue runner with every new session, and at the end stops the runner and
closes the token queue so that workers waiting for a token end with OutOfRangeError.
"""
from dflow import _dflow
from dflow.framework import ops


def _cpp_optimizer(opt):
    """The C++ optimizer a tf.train optimizer wraps."""
    if isinstance(opt, _dflow.Optimizer):
        return opt
    for attr in ("_cpp", "_h", "_opt", "_impl", "_optimizer"):
        x = getattr(opt, attr, None)
        if isinstance(x, _dflow.Optimizer):
            return x
    getter = getattr(opt, "_cpp_optimizer", None)
    if callable(getter):
        x = getter()
        if isinstance(x, _dflow.Optimizer):
            return x
    raise TypeError("SyncReplicasOptimizer wraps a tf.train optimizer (one over dflow's C++ optimizers), got %r"
                    % (opt,))


def _ref_of(v):
    ref = getattr(v, "_ref", None)
    if callable(ref):
        return ref()._out
    return ops.internal_convert_to_tensor(v, as_ref=True)._out


class SyncReplicasOptimizer:
    """Class to synchronize, aggregate gradients and pass them to the optimizer."""

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None, variable_averages=None,
                 variables_to_average=None, use_locking=False, name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        if variable_averages is not None:
            raise NotImplementedError("SyncReplicasOptimizer(variable_averages=...) is not supported by dflow")
        self._opt = opt
        self._name = name
        self._use_locking = use_locking
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas
        self._h = _dflow.SyncReplicasOptimizer(_cpp_optimizer(opt), int(replicas_to_aggregate),
                                               int(total_num_replicas))
        self._gradients_applied = False
        self._global_step = None
        self._graph = None
        self._parts = {}

    def get_name(self):
        return self._name

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's compute_gradients."""
        return self._opt.compute_gradients(*args, **kwargs)

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=1, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        grads_and_vars = self.compute_gradients(loss, var_list=var_list)
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError("No gradients provided for any variable, check your graph for ops that do not support "
                             "gradients, between variables %s and loss %s." % ([str(v) for _, v in grads_and_vars],
                                                                             loss))
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Accumulates the gradients on the ps tasks and waits for the chief's update; returns the
        train op."""
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        if self._gradients_applied:
            raise ValueError("apply_gradients can be called only once")
        g = ops.get_default_graph()
        pairs = [(None if gr is None else ops.convert_to_tensor(gr)._out, _ref_of(v)) for gr, v in grads_and_vars]
        node = self._h.apply_gradients(g._scope, pairs, _ref_of(global_step))
        self._gradients_applied = True
        self._global_step = global_step
        self._graph = g
        # The wrapped optimizer's slots and the local step: TensorFlow's collections hold them.
        from dflow.data.scope_graph import adopt_cc_variables
        adopt_cc_variables(g, trainable=False)
        train_op = g._wrap(node)
        train_ops = g.get_collection_ref(ops.GraphKeys.TRAIN_OP)
        if train_op not in train_ops:
            train_ops.append(train_op)
        self._parts = self._h.parts(g._scope)
        return train_op

    def _wrap(self, key):
        x = self._parts.get(key)
        if x is None:
            return None
        g = self._graph
        return g._tensor_of(x) if isinstance(x, _dflow.Output) else g._wrap(x)

    @property
    def chief_init_op(self):
        return self._wrap("chief_init_op")

    @property
    def local_step_init_op(self):
        return self._wrap("local_step_init_op")

    @property
    def ready_for_local_init_op(self):
        return None

    def get_chief_queue_runner(self):
        """The chief's queue runner (a C++ runner: start it with create_threads(sess, coord, start=True))."""
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return _ChiefQueueRunner(self._h.get_chief_queue_runner())

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()

    def get_init_tokens_op(self, num_tokens=-1):
        """Enqueues `num_tokens` tokens (default replicas_to_aggregate) for the first step."""
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError("Too few tokens to finish the first step: %d (given) vs %d (needed)"
                             % (num_tokens, tokens_needed))
        g = self._graph
        return g._wrap(self._h.get_init_tokens_op(g._scope, int(num_tokens)))

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """The hook that does the chief's or a worker's per-session work (the C++ hook)."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)

    def num_dropped_gradients(self):
        """The stale and surplus gradients the accumulators dropped (dflow's addition)."""
        g = self._graph
        return g._tensor_of(self._h.num_dropped_gradients(g._scope))


class _ChiefQueueRunner:
    """The C++ queue runner of the chief's sync op, with TensorFlow's QueueRunner methods."""

    def __init__(self, runner):
        self._runner = runner

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        from dflow.training import coordinator as coordinator_lib
        if start:
            self._sess = sess
            self._runner.start(getattr(sess, "_h", sess), coord._cpp if coord is not None else None)
        return [coordinator_lib._CppRunnerThread(self._runner, "SyncReplicasChiefQueueRunner")]


from dflow.training import basic_session_run_hooks as _hooks  # noqa: E402


class _SyncReplicasOptimizerHook(_hooks._CppHook):
    """A SessionRunHook that handles the chief's and the workers' per-session work (C++)."""

    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        opt = self._sync_optimizer
        if not opt._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before using the hook.")
        g = opt._graph
        self._cpp = opt._h.make_session_run_hook(g._scope, bool(self._is_chief), int(self._num_tokens))


_hooks._CPP_HOOK_CLASSES = _hooks._CPP_HOOK_CLASSES + (_SyncReplicasOptimizerHook,)
