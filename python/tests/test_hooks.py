"""The tf.train hooks in a training loop, against TensorFlow: the C++ hooks (StopAtStepHook,
CheckpointSaverHook with listeners, SummarySaverHook, StepCounterHook) and the Python ones
(LoggingTensorHook, NanTensorHook, FinalOpsHook, FeedFnHook, GlobalStepWaiterHook), user hooks,
SecondOrStepTimer, Coordinator and QueueRunner."""
import logging
import os
import re
import tempfile
import threading

import numpy as np
import pytest

from conftest import assert_same, run_both


def _model(tf):
    gs = tf.train.get_or_create_global_step()
    w = tf.Variable(5.0, name="w")
    loss = tf.square(w, name="loss")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    return gs, w, loss, train


def _train(tf, hooks, train, checkpoint_dir=None, **kwargs):
    steps = 0
    with tf.train.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir, hooks=hooks, **kwargs) as sess:
        while not sess.should_stop():
            sess.run(train)
            steps += 1
    return steps


def test_second_or_step_timer_is_tensorflows():
    def build(tf):
        t = tf.train.SecondOrStepTimer(every_steps=3)
        out = []
        for step in range(10):
            if t.should_trigger_for_step(step):
                out.append((step, t.update_last_triggered_step(step)[1]))
        out.append(t.last_triggered_step())
        for bad in (dict(), dict(every_secs=1, every_steps=1)):
            try:
                tf.train.SecondOrStepTimer(**bad)
            except ValueError as e:
                out.append(type(e).__name__)
        return out
    ours, theirs = run_both(build)
    assert ours == theirs


def test_stop_at_step_hook_arguments():
    def build(tf):
        out = []
        for kwargs in (dict(), dict(num_steps=1, last_step=2)):
            try:
                tf.train.StopAtStepHook(**kwargs)
            except ValueError as e:
                out.append(str(e))
        with pytest.raises(RuntimeError, match="Global step should be created"):
            with tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(last_step=2)]):
                pass
        return out
    ours, theirs = run_both(build)
    assert ours == theirs


def test_checkpoint_saver_hook_and_listeners():
    def build(tf):
        gs, w, loss, train = _model(tf)
        calls = []

        class Listener(tf.train.CheckpointSaverListener):
            def begin(self):
                calls.append("begin")

            def before_save(self, session, step):
                calls.append(("before_save", int(step)))

            def after_save(self, session, step):
                calls.append(("after_save", int(step), os.path.basename(tf.train.latest_checkpoint(d))))

            def end(self, session, step):
                calls.append(("end", int(step)))
        d = tempfile.mkdtemp()
        saver = tf.train.Saver()
        hook = tf.train.CheckpointSaverHook(d, save_steps=4, saver=saver, listeners=[Listener()])
        steps = _train(tf, [hook, tf.train.StopAtStepHook(last_step=10)], train)
        return steps, calls, sorted(f for f in os.listdir(d) if f.endswith(".index"))
    ours, theirs = run_both(build)
    assert ours == theirs
    assert ours[2] == ["model.ckpt-0.index", "model.ckpt-10.index", "model.ckpt-4.index", "model.ckpt-8.index"]


def test_checkpoint_saver_hook_arguments():
    def build(tf):
        out = []
        gs, w, loss, train = _model(tf)
        for kwargs in (dict(), dict(save_secs=1, save_steps=1), dict(save_steps=1, saver=tf.train.Saver(),
                                                                     scaffold=tf.train.Scaffold())):
            try:
                tf.train.CheckpointSaverHook("/tmp/x", **kwargs)
            except ValueError as e:
                out.append(type(e).__name__)
        return out
    ours, theirs = run_both(build)
    assert ours == theirs


def _events(tf, d):
    out = []
    for f in sorted(os.listdir(d)):
        if "tfevents" not in f:
            continue
        for e in tf.train.summary_iterator(os.path.join(d, f)):
            for v in e.summary.value:
                out.append((e.step, v.tag, round(float(v.simple_value), 4)))
    return out


def test_summary_saver_hook_writes_the_summaries():
    def build(tf):
        gs, w, loss, train = _model(tf)
        s = tf.summary.scalar("loss_value", loss)
        d = tempfile.mkdtemp()
        hook = tf.train.SummarySaverHook(save_steps=3, output_dir=d, summary_op=s)
        _train(tf, [hook, tf.train.StopAtStepHook(last_step=8)], train)
        return [e for e in _events(tf, d) if e[1] == "loss_value"]
    ours, theirs = run_both(build)
    # Every 3 global steps, at the global step after the step (the loss was computed before its
    # update: 25 * 0.64^(step - 1)). TensorFlow reads the step it records racing the update, so
    # its steps vary from run to run; its values follow the same rule.
    assert [e[0] for e in ours] == [1, 4, 7]
    for step, tag, value in ours + theirs:
        assert value == pytest.approx(25 * 0.64 ** (step - 1), rel=1e-4)
    assert theirs[0][0] == 1 and all(b[0] - a[0] >= 2 for a, b in zip(theirs, theirs[1:]))


def test_step_counter_hook_writes_steps_per_second(tf):
    gs, w, loss, train = _model(tf)
    d = tempfile.mkdtemp()
    hook = tf.train.StepCounterHook(every_n_steps=5, output_dir=d)
    _train(tf, [hook, tf.train.StopAtStepHook(last_step=16)], train)
    rates = [e for e in _events(tf, d) if e[1] == "global_step/sec"]
    assert [e[0] for e in rates] == [6, 11, 16]
    assert all(e[2] > 0 for e in rates)


def test_monitored_training_session_writes_checkpoints_and_summaries():
    def build(tf):
        gs, w, loss, train = _model(tf)
        tf.summary.scalar("loss_value", loss)
        d = tempfile.mkdtemp()
        _train(tf, [tf.train.StopAtStepHook(last_step=9)], train, checkpoint_dir=d, save_checkpoint_steps=4,
               save_summaries_steps=2, log_step_count_steps=None)
        return (sorted(f for f in os.listdir(d) if f.endswith(".index")),
                [e for e in _events(tf, d) if e[1] == "loss_value"])
    ours, theirs = run_both(build)
    assert ours[0] == theirs[0] == ["model.ckpt-0.index", "model.ckpt-4.index", "model.ckpt-8.index",
                                    "model.ckpt-9.index"]
    # Summaries every 2 steps (TensorFlow's recorded steps race its update: see above).
    assert [e[0] for e in ours[1]] == [1, 3, 5, 7, 9]
    assert len(theirs[1]) >= 4


def test_logging_tensor_hook_logs_as_tensorflow_does(caplog):
    def build(tf):
        gs, w, loss, train = _model(tf)
        # (Values the step computes: a variable read in the step that updates it may be read
        # before or after the update.)
        hook = tf.train.LoggingTensorHook({"loss": loss, "twice": loss * 2.0}, every_n_iter=2, at_end=True)
        caplog.clear()
        with caplog.at_level(logging.INFO), caplog.at_level(logging.INFO, logger="tensorflow"):
            _train(tf, [hook, tf.train.StopAtStepHook(last_step=5)], train)
        lines = [r.getMessage() for r in caplog.records if re.match(r"loss = ", r.getMessage())]
        return [re.sub(r" \(\d+\.\d+ sec\)", "", m) for m in lines]
    ours, theirs = run_both(build)
    assert ours == theirs
    assert len(ours) == 4  # iterations 0, 2, 4 and the end


def test_formatter_and_tensor_names(caplog):
    def build(tf):
        gs, w, loss, train = _model(tf)
        hook = tf.train.LoggingTensorHook(["loss"], every_n_iter=3, formatter=lambda v: "L=%.3f" % v["loss"])
        caplog.clear()
        with caplog.at_level(logging.INFO), caplog.at_level(logging.INFO, logger="tensorflow"):
            _train(tf, [hook, tf.train.StopAtStepHook(last_step=4)], train)
        return [r.getMessage() for r in caplog.records if r.getMessage().startswith("L=")]
    ours, theirs = run_both(build)
    assert ours == theirs


def test_nan_tensor_hook():
    def build(tf):
        x = tf.Variable(1.0, name="x")
        gs = tf.train.get_or_create_global_step()
        step = tf.assign_add(gs, 1)
        # The loss depends on the incremented step (reading gs beside the increment in one run
        # sees either value, in TensorFlow as in dflow): NaN from the third run on.
        loss = tf.cond(step > 2, lambda: tf.constant(np.nan, tf.float32), lambda: tf.constant(1.0))
        out = []
        try:
            _train(tf, [tf.train.NanTensorHook(loss)], [step, x])
        except tf.train.NanLossDuringTrainingError as e:
            out.append(str(e))
        with tf.Graph().as_default():
            gs = tf.train.get_or_create_global_step()
            step = tf.assign_add(gs, 1)
            loss = tf.cond(step > 2, lambda: tf.constant(np.nan, tf.float32), lambda: tf.constant(1.0))
            out.append(_train(tf, [tf.train.NanTensorHook(loss, fail_on_nan_loss=False)], step))
        return out
    ours, theirs = run_both(build)
    assert ours == theirs == ["NaN loss during training.", 3]


def test_final_ops_and_feed_fn_hooks():
    def build(tf):
        gs, w, loss, train = _model(tf)
        p = tf.placeholder(tf.float32, [], name="p")
        acc = tf.Variable(0.0, name="acc")
        add = tf.assign_add(acc, p)
        feeds = iter([1.0, 2.0, 4.0, 8.0])
        final = tf.train.FinalOpsHook({"acc": acc, "pair": (gs, w)})
        hooks = [tf.train.FeedFnHook(lambda: {p: next(feeds)}), final, tf.train.StopAtStepHook(last_step=4)]
        _train(tf, hooks, [train, add])
        return final.final_ops_values
    ours, theirs = run_both(build)
    assert_same(ours, theirs)
    assert ours["acc"] == 15.0


def test_global_step_waiter_hook_passes_when_reached():
    def build(tf):
        gs, w, loss, train = _model(tf)
        return _train(tf, [tf.train.GlobalStepWaiterHook(0), tf.train.StopAtStepHook(last_step=3)], train)
    ours, theirs = run_both(build)
    assert ours == theirs == 3


def test_hooks_feed_and_fetch_with_the_caller():
    def build(tf):
        x = tf.placeholder(tf.float32, [], name="x")
        y = x * 3.0
        y1 = y + 1.0
        seen = []

        class Peek(tf.train.SessionRunHook):
            def before_run(self, run_context):
                seen.append(run_context.original_args.feed_dict[x])
                return tf.train.SessionRunArgs([y, y1])

            def after_run(self, run_context, run_values):
                seen.append([float(v) for v in run_values.results])
                if run_values.results[0] > 5:
                    run_context.request_stop()
        out = []
        with tf.train.MonitoredSession(hooks=[Peek()]) as sess:
            v = 1.0
            while not sess.should_stop():
                out.append(float(sess.run(y, feed_dict={x: v})))
                v += 1.0
        return out, seen
    ours, theirs = run_both(build)
    assert ours == theirs


def test_a_subclass_overriding_a_cpp_hook_is_refused(tf):
    gs, w, loss, train = _model(tf)

    class Mine(tf.train.StopAtStepHook):
        def after_run(self, run_context, run_values):
            pass
    with pytest.raises(TypeError, match="overrides after_run"):
        tf.train.MonitoredSession(hooks=[Mine(last_step=3)])


def test_coordinator_is_tensorflows():
    def build(tf):
        coord = tf.train.Coordinator()
        out = [coord.should_stop()]
        started = threading.Event()

        def work():
            with coord.stop_on_exception():
                started.set()
                raise ValueError("worker failed")
        t = threading.Thread(target=work)
        t.start()
        coord.register_thread(t)
        started.wait()
        out.append(coord.wait_for_stop(10))
        try:
            coord.join(stop_grace_period_secs=5)
        except ValueError as e:
            out.append(str(e))
        out.append(coord.should_stop())
        c2 = tf.train.Coordinator()
        c2.request_stop(tf.errors.OutOfRangeError(None, None, "done"))
        c2.join()
        out.append(c2.should_stop())
        return out
    ours, theirs = run_both(build)
    assert ours == theirs == [False, True, "worker failed", True, True]


def test_queue_runner_fills_a_queue(tf):
    from dflow.ops import gen_ops
    q = gen_ops.fifo_queue_v2(component_types=[tf.float32], shapes=[[]], capacity=4, name="q")
    counter = tf.Variable(0.0, name="counter")
    enqueue = gen_ops.queue_enqueue_v2(q, [tf.assign_add(counter, 1.0)])
    close = gen_ops.queue_close_v2(q, cancel_pending_enqueues=True)
    dequeue = gen_ops.queue_dequeue_v2(q, component_types=[tf.float32])[0]
    qr = tf.train.QueueRunner(enqueue_ops=[enqueue], close_op=close)
    tf.train.add_queue_runner(qr)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        values = [float(sess.run(dequeue)) for _ in range(6)]
        coord.request_stop()
        coord.join(threads)
    assert values == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert qr.exceptions_raised == []


def test_monitored_session_starts_the_queue_runners(tf):
    from dflow.ops import gen_ops
    q = gen_ops.fifo_queue_v2(component_types=[tf.float32], shapes=[[]], capacity=4, name="q")
    counter = tf.Variable(0.0, name="counter")
    enqueue = gen_ops.queue_enqueue_v2(q, [tf.assign_add(counter, 1.0)])
    close = gen_ops.queue_close_v2(q, cancel_pending_enqueues=True)
    dequeue = gen_ops.queue_dequeue_v2(q, component_types=[tf.float32])[0]
    tf.train.add_queue_runner(tf.train.QueueRunner(enqueue_ops=[enqueue], close_op=close))
    with tf.train.MonitoredSession() as sess:
        values = [float(sess.run(dequeue)) for _ in range(5)]
    assert values == [1.0, 2.0, 3.0, 4.0, 5.0]
