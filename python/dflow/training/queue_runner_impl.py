"""tf.train.QueueRunner, add_queue_runner and start_queue_runners over the C++ QueueRunner
(include/dflow/queue_runner.h): one C++ thread per enqueue op runs it in a loop until the queue
is closed (OutOfRange or Cancelled: a quiet end), another error (kept, and reported to the
coordinator, which stops every runner), or stop is requested (the run in progress is cancelled
after a grace second, so stopping never hangs).

`create_threads` starts the C++ threads when `start` is true (TensorFlow's QueueRunner starts
Python threads); the list it returns stands for them (`join`, `is_alive`), so
`coord.join(threads)` works as in TensorFlow.
"""
from dflow import _dflow
from dflow.framework import errors
from dflow.framework import ops
from dflow.training import coordinator as coordinator_lib


class QueueRunner:
    """Holds a list of enqueue operations for a queue, each to be run in a thread."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue_runner_def is not None:
            raise NotImplementedError("QueueRunner(queue_runner_def=...) is not supported by dflow")
        if not enqueue_ops:
            raise ValueError("Must provide enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op
        self._cancel_op = cancel_op
        if queue is not None:
            if self._close_op is None:
                self._close_op = queue.close()
            if self._cancel_op is None:
                self._cancel_op = queue.close(cancel_pending_enqueues=True)
        if queue_closed_exception_types is None:
            queue_closed_exception_types = (errors.OutOfRangeError, errors.CancelledError)
        else:
            queue_closed_exception_types = tuple(queue_closed_exception_types)
            if not queue_closed_exception_types or not all(
                    isinstance(t, type) and issubclass(t, errors.OpError) for t in queue_closed_exception_types):
                raise TypeError("queue_closed_exception_types, when provided, must be a tuple of tf.error types, "
                                "but saw: %s" % (queue_closed_exception_types,))
        self._queue_closed_exception_types = queue_closed_exception_types
        self._runners = {}  # session -> (C++ runner, session kept alive while it runs)
        self._exceptions_raised = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self):
        """The errors the runners met (tf.errors instances)."""
        out = list(self._exceptions_raised)
        for runner, _ in self._runners.values():
            status = runner.status()
            if status is not None:
                e = coordinator_lib._exception_from_status(status)
                if not any(type(x) is type(e) and str(x) == str(e) for x in out):
                    out.append(e)
        return out

    @property
    def name(self):
        return self._queue.name if self._queue is not None else self._enqueue_ops[0].name

    def _op(self, x):
        if x is None:
            return None
        op = x.op if isinstance(x, ops.Tensor) else x
        return op._node

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """Starts (with start=True) one C++ thread per enqueue op on `sess`; returns stand-ins
        for them. A runner already running in `sess` is not started again (returns [])."""
        handle = getattr(sess, "_h", sess)
        key = id(handle)
        current = self._runners.get(key)
        if current is not None and current[0].is_running():
            return []
        codes = [errors.error_code_from_exception_type(t) for t in self._queue_closed_exception_types]
        runner = _dflow.QueueRunner([self._op(o) for o in self._enqueue_ops], self._op(self._close_op),
                                    self._op(self._cancel_op), codes)
        self._runners[key] = (runner, sess)
        threads = [coordinator_lib._CppRunnerThread(runner, "QueueRunnerThread-%s-%d" % (self.name, i))
                   for i in range(len(self._enqueue_ops))]
        if start:
            runner.start(handle, coord._cpp if coord is not None else None)
        return threads

    def to_proto(self, export_scope=None):
        raise NotImplementedError("QueueRunner.to_proto is not supported by dflow")


def add_queue_runner(qr, collection=ops.GraphKeys.QUEUE_RUNNERS):
    """Adds a QueueRunner to a collection in the graph."""
    ops.add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True, collection=ops.GraphKeys.QUEUE_RUNNERS):
    """Starts every queue runner of the graph's collection; returns their thread stand-ins."""
    if sess is None:
        sess = ops.get_default_session()
        if not sess:
            raise ValueError("Cannot start queue runners: No default session is registered. Use `with "
                             "sess.as_default()` or pass an explicit session to tf.start_queue_runners(sess=sess)")
    if not hasattr(sess, "run") or not hasattr(sess, "graph"):
        raise TypeError("sess must be a `tf.Session` object. Given class: {}".format(sess.__class__))
    with sess.graph.as_default():
        threads = []
        for qr in ops.get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
