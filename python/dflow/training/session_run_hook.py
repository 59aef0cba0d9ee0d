"""tf.train.SessionRunHook and the values it exchanges with a training loop (TensorFlow's classes).

A hook written in Python runs inside the C++ MonitoredSession through an adapter
(monitored_session.py): begin() before the session exists, after_create_session(session, coord)
once per created session, before_run(run_context) -> SessionRunArgs and after_run(run_context,
run_values) around every step (the step runs the caller's fetches and every hook's in one run),
end(session) when training ends without an error.
"""
import collections


class SessionRunHook:
    """Hook to extend calls to MonitoredSession.run()."""

    def begin(self):
        """Called once before using the session; the graph may still be changed."""

    def after_create_session(self, session, coord):  # pylint: disable=unused-argument
        """Called when a new session has been created (and the model is ready)."""

    def before_run(self, run_context):  # pylint: disable=unused-argument
        """Called before each call to run(); returns None or a SessionRunArgs."""
        return None

    def after_run(self, run_context, run_values):  # pylint: disable=unused-argument
        """Called after each call to run(), with the results of what before_run asked for."""

    def end(self, session):  # pylint: disable=unused-argument
        """Called at the end of the session (not after an error)."""


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """Represents arguments to be added to a Session.run() call."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super(SessionRunArgs, cls).__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """Provides information about the session.run() call being made."""

    def __init__(self, original_args, session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        """The SessionRunArgs of the caller's run."""
        return self._original_args

    @property
    def session(self):
        """The session the step runs in (runs on it do not go through the hooks)."""
        return self._session

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        """Asks the loop to stop after this step: should_stop() then returns True."""
        self._stop_requested = True


class SessionRunValues(collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])):
    """The results of what a hook's SessionRunArgs fetched, in their structure."""
