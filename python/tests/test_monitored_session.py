"""MonitoredTrainingSession, MonitoredSession and SingularMonitoredSession over the C++ training loop:
step counts, hook call order, checkpoints and their restore, fetch structures, errors and recovery,
compared with TensorFlow where both run the same thing; SyncReplicasOptimizer and job completion on
a cluster in this process."""
import collections
import os
import tempfile
import threading

import numpy as np
import pytest

from conftest import assert_same, run_both


class Recorder:
    """A hook that records every call, reading the global step where TensorFlow's order is defined."""

    def __new__(cls, tf, gs, fail_at=None, exc=None):
        class _R(tf.train.SessionRunHook):
            def __init__(self):
                self.calls = []
                self.sessions = []

            def begin(self):
                self.calls.append("begin")
                self.step_plus_one = gs + 1

            def after_create_session(self, session, coord):
                self.sessions.append(session)
                self.calls.append(("after_create_session", int(session.run(gs)), coord is not None))

            def before_run(self, run_context):
                self.calls.append(("before_run", run_context.original_args.fetches is not None))
                return tf.train.SessionRunArgs({"step_plus_one": self.step_plus_one})

            def after_run(self, run_context, run_values):
                step = int(run_context.session.run(gs))
                self.calls.append(("after_run", step))
                if fail_at is not None and step == fail_at and not getattr(self, "_failed", False):
                    self._failed = True
                    raise exc(tf)

            def end(self, session):
                self.calls.append(("end", int(session.run(gs))))
        return _R()


def _model(tf):
    gs = tf.train.get_or_create_global_step()
    w = tf.Variable(5.0, name="w")
    loss = tf.square(w, name="loss")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    return gs, w, loss, train


def test_stop_at_step_and_hook_order_match_tensorflow():
    def build(tf):
        gs, w, loss, train = _model(tf)
        rec = Recorder(tf, gs)
        final = tf.train.FinalOpsHook({"w": w, "step": gs})
        steps = 0
        with tf.train.MonitoredTrainingSession(hooks=[rec, tf.train.StopAtStepHook(last_step=7), final]) as sess:
            while not sess.should_stop():
                sess.run(train)
                steps += 1
        return steps, rec.calls, final.final_ops_values
    ours, theirs = run_both(build)
    assert ours[0] == theirs[0] == 7
    assert ours[1] == theirs[1]
    assert_same(ours[2], theirs[2])


def test_num_steps_counts_from_the_session_start():
    def build(tf):
        gs, w, loss, train = _model(tf)
        set_10 = tf.assign(gs, 10)
        steps = 0
        with tf.train.SingularMonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=4)]) as sess:
            sess.raw_session().run(set_10)
            while not sess.should_stop():
                sess.run(train)
                steps += 1
            return steps, int(sess.raw_session().run(gs))
    ours, theirs = run_both(build)
    assert ours == theirs


def _checkpoint_steps(tf, d):
    state = tf.train.get_checkpoint_state(d)
    return sorted(int(os.path.basename(p).rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths)


def test_checkpoints_are_written_and_training_resumes_from_them():
    def build(tf):
        d = tempfile.mkdtemp()
        out = []
        for last in (12, 20):
            with tf.Graph().as_default():
                gs, w, loss, train = _model(tf)
                rec = Recorder(tf, gs)
                with tf.train.MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_steps=5,
                                                       hooks=[rec, tf.train.StopAtStepHook(last_step=last)]) as sess:
                    values = []
                    while not sess.should_stop():
                        values.append(sess.run([loss, train])[0])
                out.append((rec.calls[1], _checkpoint_steps(tf, d), os.path.basename(tf.train.latest_checkpoint(d)),
                            np.array(values)))
        return out
    ours, theirs = run_both(build)
    # The second run starts at the first one's last step, with its values.
    assert ours[0][0] == ("after_create_session", 0, True)
    assert ours[1][0] == ("after_create_session", 12, True)
    assert ours[0][2] == "model.ckpt-12" and ours[1][2] == "model.ckpt-20"
    assert ours[1][1] == [5, 10, 12, 17, 20]
    assert_same(ours, theirs)


def test_fetch_structures_and_feeds():
    def build(tf):
        x = tf.placeholder(tf.float32, [2], name="x")
        y = x * 2.0
        s = tf.reduce_sum(x)
        Pair = collections.namedtuple("Pair", ["a", "b"])
        with tf.train.MonitoredSession() as sess:
            r1 = sess.run(Pair(y, {"sum": s, "both": [y, s]}), feed_dict={x: [1.0, 2.0]})
            r2 = sess.run((s, [y]), feed_dict={"x:0": np.array([3.0, 4.0], np.float32)})
            r3 = sess.run(y.op, feed_dict={x: [0.0, 0.0]})
        return type(r1).__name__, r1.a, r1.b, r2, r3
    ours, theirs = run_both(build)
    assert_same(ours, theirs)


def test_a_hook_error_ends_training_without_end():
    def build(tf):
        gs, w, loss, train = _model(tf)
        rec = Recorder(tf, gs, fail_at=3, exc=lambda tf: ValueError("bad hook"))
        with pytest.raises(ValueError, match="bad hook"):
            with tf.train.MonitoredTrainingSession(hooks=[rec]) as sess:
                while not sess.should_stop():
                    sess.run(train)
        return rec.calls
    ours, theirs = run_both(build)
    assert ours == theirs
    assert not any(c[0] == "end" for c in ours if isinstance(c, tuple))


def test_an_error_in_the_loop_body_skips_end():
    def build(tf):
        gs, w, loss, train = _model(tf)
        rec = Recorder(tf, gs)
        with pytest.raises(KeyError):
            with tf.train.MonitoredTrainingSession(hooks=[rec]) as sess:
                sess.run(train)
                raise KeyError("the caller's own error")
        return rec.calls
    ours, theirs = run_both(build)
    assert ours == theirs


def test_out_of_range_ends_training_cleanly():
    def build(tf):
        gs, w, loss, train = _model(tf)
        rec = Recorder(tf, gs, fail_at=4, exc=lambda tf: tf.errors.OutOfRangeError(None, None, "input done"))
        steps = 0
        with tf.train.MonitoredTrainingSession(hooks=[rec]) as sess:
            while not sess.should_stop():
                sess.run(train)
                steps += 1
        return steps, rec.calls
    ours, theirs = run_both(build)
    assert ours == theirs
    assert ours[1][-1] == ("end", 4)


def test_a_lost_task_is_recovered_from():
    # A hook's AbortedError stands for a task that died: the session is made again (the chief
    # runs its init op again, no checkpoint here) and the step runs again.
    def build(tf):
        gs, w, loss, train = _model(tf)
        rec = Recorder(tf, gs, fail_at=3, exc=lambda tf: tf.errors.AbortedError(None, None, "a ps task restarted"))
        with tf.train.MonitoredTrainingSession(hooks=[rec, tf.train.StopAtStepHook(last_step=5)]) as sess:
            while not sess.should_stop():
                sess.run(train)
        return rec.calls
    ours, theirs = run_both(build)
    assert ours == theirs
    assert [c for c in ours if c[0] == "after_create_session"] == [("after_create_session", 0, True)] * 2


def test_sessions_lent_to_hooks_end_with_the_loop(tf):
    gs, w, loss, train = _model(tf)
    rec = Recorder(tf, gs, fail_at=2, exc=lambda tf: tf.errors.UnavailableError(None, None, "gone"))
    sess = tf.train.MonitoredTrainingSession(hooks=[rec])
    for _ in range(3):
        sess.run(train)
    first, second = rec.sessions
    with pytest.raises(RuntimeError, match="closed"):
        first.run(gs)  # the session of the attempt before the recovery
    assert second.run(gs) == 2  # the retried step and the third one, after the init op ran again
    sess.close()
    with pytest.raises(RuntimeError, match="closed"):
        second.run(gs)
    with pytest.raises(RuntimeError):
        sess.run(train)


def test_singular_session_raw_session_bypasses_hooks():
    def build(tf):
        gs, w, loss, train = _model(tf)
        rec = Recorder(tf, gs)
        with tf.train.SingularMonitoredSession(hooks=[rec]) as sess:
            sess.run(train)
            raw = sess.raw_session()
            raw.run(train)
            v = raw.run(w)
        return rec.calls, v
    ours, theirs = run_both(build)
    assert_same(ours, theirs)


def test_scaffold_init_op_feed_and_init_fn():
    def build(tf):
        p = tf.placeholder(tf.float32, [])
        w = tf.Variable(p, name="w")
        seen = []
        add_one = tf.assign_add(w, 1.0)

        def init_fn(scaffold, session):
            seen.append(float(session.run(w)))
            session.run(add_one)
        scaffold = tf.train.Scaffold(init_op=w.initializer, init_feed_dict={p: 3.0}, init_fn=init_fn)
        with tf.train.MonitoredSession(tf.train.ChiefSessionCreator(scaffold=scaffold)) as sess:
            return seen, sess.run(w)
    ours, theirs = run_both(build)
    assert_same(ours, theirs)
    assert ours[1] == 4.0


def test_a_custom_session_creator_is_refused(tf):
    class Mine(tf.train.SessionCreator):
        def create_session(self):
            return tf.Session()
    with pytest.raises(TypeError, match="ChiefSessionCreator or WorkerSessionCreator"):
        tf.train.MonitoredSession(session_creator=Mine())


# ---- a cluster in this process ----

def _cluster(tf, workers):
    from dflow import _dflow
    ports = _dflow.pick_free_ports(1 + workers)
    return tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ports[0]],
                                 "worker": ["127.0.0.1:%d" % p for p in ports[1:]]})


def _in_threads(fns):
    results, errors_ = {}, {}

    def run(i, fn):
        try:
            results[i] = fn()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors_[i] = e
    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(fns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a task did not finish"
    if errors_:
        raise next(iter(errors_.values()))
    return [results[i] for i in range(len(fns))]


def test_sync_replicas_two_workers_apply_the_mean_gradient(tf):
    import dflow
    cluster = _cluster(tf, 2)
    ps = tf.train.Server(cluster, job_name="ps", task_index=0)
    servers = [tf.train.Server(cluster, job_name="worker", task_index=i) for i in range(2)]
    targets = [1.0, 3.0]
    lr, last = 0.1, 6

    def worker(i):
        with dflow.Graph().as_default():
            with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:%d" % i)):
                gs = tf.train.get_or_create_global_step()
                w = tf.Variable(0.0, name="w")
                loss = tf.square(w - targets[i])
                opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(lr), replicas_to_aggregate=2,
                                                     total_num_replicas=2)
                train = opt.minimize(loss, global_step=gs)
            # No tokens before the first apply: every worker's first gradient waits for it, so each
            # apply takes one gradient from each worker (with tokens up front a fast worker can send
            # two gradients of one step, and the first two to arrive win, as in TensorFlow).
            hooks = [opt.make_session_run_hook(is_chief=i == 0, num_tokens=0), tf.train.StopAtStepHook(last_step=last)]
            final = tf.train.FinalOpsHook([gs, w])
            config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % i])
            steps = 0
            with tf.train.MonitoredTrainingSession(master=servers[i].target, is_chief=i == 0, hooks=hooks + [final],
                                                   config=config) as sess:
                while not sess.should_stop():
                    sess.run(train)
                    steps += 1
            return steps, final.final_ops_values

    joined = threading.Event()
    threading.Thread(target=lambda: (ps.join(), joined.set()), daemon=True).start()
    (steps0, final0), (steps1, final1) = _in_threads([lambda: worker(0), lambda: worker(1)])
    # The chief stops at `last`; its queue runner may apply one more step before the chief's end
    # stops it (the workers' first tokens let them run a step ahead, as in TensorFlow).
    applied = int(final0[0])
    assert applied in (last, last + 1)
    # Each global step applied the mean of both workers' gradients: w' = w - lr * mean(2 (w - t_i)).
    w = 0.0
    for _ in range(applied):
        w = w - lr * np.mean([2 * (w - t) for t in targets])
    np.testing.assert_allclose(final0[1], w, rtol=1e-5)
    assert steps0 >= last and steps1 >= last - 1
    # The chief ended the job: the ps task's join returned.
    assert joined.wait(30)


def test_the_chief_ends_the_job_and_every_task_stops(tf):
    import dflow
    cluster = _cluster(tf, 2)
    ps = tf.train.Server(cluster, job_name="ps", task_index=0)
    servers = [tf.train.Server(cluster, job_name="worker", task_index=i) for i in range(2)]
    chief_done = threading.Event()

    def worker(i):
        with dflow.Graph().as_default():
            with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:%d" % i)):
                gs, w, loss, train = _model(tf)
            # Worker 1 would train far longer: the chief's end of the job stops it.
            hooks = [tf.train.StopAtStepHook(last_step=20 if i == 0 else 10 ** 9)]
            steps = 0
            with tf.train.MonitoredTrainingSession(master=servers[i].target, is_chief=i == 0, hooks=hooks) as sess:
                while not sess.should_stop():
                    sess.run(train)
                    steps += 1
            if i == 0:
                chief_done.set()
            return steps

    joined = threading.Event()
    threading.Thread(target=lambda: (ps.join(), joined.set()), daemon=True).start()
    steps = _in_threads([lambda: worker(0), lambda: worker(1)])
    assert joined.wait(30)
    assert chief_done.is_set()
    assert ps.job_complete and servers[1].job_complete
    assert steps[0] >= 1 and steps[0] + steps[1] >= 20
