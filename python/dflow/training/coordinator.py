"""tf.train.Coordinator: stops a set of threads together (TensorFlow's class) over the C++
Coordinator (include/dflow/coordinator.h).

Python threads register as in TensorFlow (`coord.join(threads)`, `register_thread`,
`stop_on_exception`); C++ threads — queue runners (queue_runner_impl.py), the chief's
SyncReplicasOptimizer runner — register with the C++ coordinator inside, which this object
stops and joins with them: `request_stop()` stops both, `join()` waits for both and raises the
first error either reported (a C++ runner's error as its tf.errors class).

In a MonitoredSession, hooks' after_create_session(session, coord) gets a Coordinator over the
session's own C++ coordinator: the loop stops it (and joins its threads) before the session goes.
"""
import contextlib
import sys
import threading
import time

from dflow import _dflow
from dflow.framework import errors


def _exception_from_status(status):
    code, message = status
    cls = errors.exception_type_from_error_code(code)
    return cls(None, None, message)


class Coordinator:
    """A coordinator for threads."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads = set()
        self._cpp = _dflow.Coordinator()

    @classmethod
    def _over(cls, cpp):
        """A Coordinator over a C++ coordinator a training loop made (its session's)."""
        c = cls()
        c._cpp = cpp
        return c

    def _filter_exception(self, ex):
        if isinstance(ex, tuple):
            ex2 = ex[1]
        else:
            ex2 = ex
        if isinstance(ex2, self._clean_stop_exception_types):
            ex = None
        return ex

    def request_stop(self, ex=None):
        """Requests that the threads stop; `ex` (an exception or exc_info) is kept to re-raise."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if isinstance(ex, tuple):
                    _, ex_instance, _ = ex
                else:
                    ex_instance = ex
                if ex_instance is not None:
                    # Raise the exception now: after join nobody would see it.
                    raise ex_instance
            if ex and self._exc_info_to_raise is None:
                if isinstance(ex, tuple):
                    self._exc_info_to_raise = ex
                else:
                    self._exc_info_to_raise = (type(ex), ex, getattr(ex, "__traceback__", None))
                if len(self._exc_info_to_raise) != 3 or not self._exc_info_to_raise[0] or \
                        not self._exc_info_to_raise[1]:
                    raise ValueError("ex must be a tuple or sys.exc_info must return the current exception: %s"
                                     % (self._exc_info_to_raise,))
        self._cpp.request_stop()

    def clear_stop(self):
        """Clears the stop flag (a new C++ coordinator: runners registered before are forgotten)."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._cpp = _dflow.Coordinator()

    def should_stop(self):
        return self._cpp.should_stop()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Requests stop when the body raises (the exception is kept for join)."""
        try:
            yield
        except:  # noqa: E722 - TensorFlow catches everything here
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        """Waits until stop is requested or `timeout` seconds pass; True when it was requested."""
        return self._cpp.wait_for_stop(-1 if timeout is None else max(0, int(timeout * 1000)))

    def register_thread(self, thread):
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for the threads (and the C++ runners) to stop; re-raises the first error."""
        if threads is None:
            threads = []
        with self._lock:
            threads = set(threads).union(self._registered_threads)
        # Wait for all threads to stop or for request_stop() to be called.
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        # If any thread is still alive, wait for the grace period.
        stop_wait_secs = 0.001
        deadline = time.time() + stop_grace_period_secs
        while any(t.is_alive() for t in threads) and time.time() < deadline:
            time.sleep(stop_wait_secs)
            stop_wait_secs = 2 * stop_wait_secs
        cpp_error = None
        if self._cpp.should_stop() or self._cpp.all_runners_stopped():
            try:
                self._cpp.join()  # bounded: stopped runners end within their grace time
            except errors.OpError as e:
                cpp_error = e
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise is None and cpp_error is not None and \
                    not isinstance(cpp_error, self._clean_stop_exception_types):
                self._exc_info_to_raise = (type(cpp_error), cpp_error, None)
            if self._exc_info_to_raise:
                _, ex_instance, _ = self._exc_info_to_raise
                raise ex_instance
            if stragglers:
                if ignore_live_threads:
                    return
                raise RuntimeError("Coordinator stopped with threads still running: %s" % " ".join(stragglers))

    @property
    def joined(self):
        return self._joined

    def raise_requested_exception(self):
        with self._lock:
            if self._exc_info_to_raise:
                _, ex_instance, _ = self._exc_info_to_raise
                raise ex_instance
        status = self._cpp.status()
        if status is not None:
            e = _exception_from_status(status)
            if not isinstance(e, self._clean_stop_exception_types):
                raise e


class _CppRunnerThread:
    """Stands for the threads of a C++ runner in the thread lists TensorFlow's API returns."""

    def __init__(self, runner, name):
        self._runner = runner
        self.name = name
        self.daemon = True

    def is_alive(self):
        return self._runner.is_running()

    def join(self, timeout=None):
        self._runner.join()

    def start(self):
        pass


class LooperThread(threading.Thread):
    """A thread that runs code repeatedly, optionally on a timer (TensorFlow's class)."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError("'coord' argument must be a Coordinator: %s" % coord)
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        if self._target:
            self._args = args or ()
            self._kwargs = kwargs or {}
        elif args or kwargs:
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                # Call back-to-back.
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                # Next time at which to call run_loop(), starts as 'now'.
                next_timer_time = time.time()
                while not self._coord.wait_for_stop(next_timer_time - time.time()):
                    next_timer_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        pass

    def stop_loop(self):
        pass

    def run_loop(self):
        if self._target:
            self._target(*self._args, **self._kwargs)
