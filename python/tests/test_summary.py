"""tf.summary and FileWriter: event files that TensorFlow reads, with the summaries TensorFlow makes."""
import glob
import os

import numpy as np

import dflow
from conftest import real_tf


def _write(tf, logdir):
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None])
        loss = tf.reduce_mean(x)
        s1 = tf.summary.scalar("loss", loss)
        with tf.name_scope("layer1"):
            s2 = tf.summary.histogram("weights", x)
        s3 = tf.summary.scalar("loss", loss * 2.0)                 # a second "loss": "loss_1"
        tf.summary.scalar("extra", loss, collections=["mine"])     # not in SUMMARIES
        s4 = tf.summary.scalar("fam", loss, family="group")
        merged = tf.summary.merge_all()
        mine = tf.summary.merge_all(key="mine")
        both = tf.summary.merge([s1, s3])
        info = [s1.name, s2.name, s3.name, s4.name, merged.name, both.name, mine.name,
                [t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)], tf.summary.merge_all("none")]
        writer = tf.summary.FileWriter(logdir, g)
        with tf.Session() as sess:
            for step in range(3):
                vals = np.arange(10, dtype=np.float32) * (step + 1)
                writer.add_summary(sess.run(merged, {x: vals}), step)
                writer.add_summary(sess.run(mine, {x: vals}), global_step=step)
        writer.flush()
        writer.close()
    return info


def _events(logdir):
    tf = real_tf()
    files = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    assert len(files) == 1
    return list(tf.train.summary_iterator(files[0]))


def _digest(events):
    out = []
    for e in events:
        if e.HasField("file_version"):
            out.append(("version", e.file_version))
        elif e.HasField("graph_def"):
            out.append(("graph", e.step))
        elif e.HasField("summary"):
            for v in e.summary.value:
                if v.HasField("simple_value"):
                    out.append((e.step, v.tag, round(v.simple_value, 5)))
                else:
                    h = v.histo
                    out.append((e.step, v.tag, h.min, h.max, h.num, round(h.sum, 3), round(h.sum_squares, 3),
                                len(h.bucket_limit) == len(h.bucket), sum(h.bucket)))
    return out


def test_summaries_read_by_tensorflow(tmp_path):
    ours_dir, theirs_dir = str(tmp_path / "ours"), str(tmp_path / "theirs")
    ours_info = _write(dflow, ours_dir)
    theirs_info = _write(real_tf(), theirs_dir)
    assert ours_info == theirs_info
    ours, theirs = _events(ours_dir), _events(theirs_dir)
    assert _digest(ours) == _digest(theirs)
    # The graph written is the graph: TensorFlow parses it and finds the summary ops.
    tf = real_tf()
    gd = [e for e in ours if e.HasField("graph_def")][0].graph_def
    graph_def = tf.GraphDef.FromString(gd)
    assert {"loss", "layer1/weights", "loss_1"} <= {n.name for n in graph_def.node}


def test_file_writer_api_and_reading_back(tmp_path):
    tf = dflow
    logdir = str(tmp_path / "w")
    with tf.Graph().as_default():
        w = tf.summary.FileWriter(logdir)
        assert w.get_logdir() == logdir
        s = tf.Summary(value=[tf.Summary.Value(tag="manual", simple_value=2.5)])
        w.add_summary(s, 7)
        w.add_summary(s.SerializeToString(), 8)
        w.add_session_log(tf.SessionLog(status=tf.SessionLog.START), 9)
        w.add_event(tf.Event(step=10, wall_time=1.0, summary=tf.Summary(
            value=[tf.Summary.Value(tag="ev", simple_value=1.0)])))
        w.close()
        w.add_summary(s, 11)  # dropped after close, as in TensorFlow
    events = _events(logdir)
    steps = [(e.step, [v.tag for v in e.summary.value]) for e in events if e.HasField("summary")]
    assert steps == [(7, ["manual"]), (8, ["manual"]), (10, ["ev"])]
    assert [e.session_log.status for e in events if e.HasField("session_log")] == [1]
    # dflow reads event files too, TensorFlow's included.
    theirs_dir = str(tmp_path / "theirs")
    _write(real_tf(), theirs_dir)
    f = glob.glob(os.path.join(theirs_dir, "events.out.tfevents.*"))[0]
    ours_read = [(e.step, [v.tag for v in e.summary.value]) for e in tf.train.summary_iterator(f)
                 if e.HasField("summary")]
    theirs_read = [(e.step, [v.tag for v in e.summary.value]) for e in real_tf().train.summary_iterator(f)
                   if e.HasField("summary")]
    assert ours_read == theirs_read and ours_read


def test_summary_ops_values(tmp_path):
    def run(tf):
        with tf.Graph().as_default():
            v = tf.constant([1.0, 2.0, 3.0])
            a = tf.summary.scalar("a", tf.reduce_sum(v))
            h = tf.summary.histogram("h", v)
            m = tf.summary.merge([a, h])
            with tf.Session() as sess:
                out = sess.run(m)
            s = real_tf().Summary.FromString(out)
            return [(x.tag, x.simple_value if x.HasField("simple_value") else (x.histo.num, x.histo.sum))
                    for x in s.value]
    assert run(dflow) == run(real_tf())


def test_nan_histogram_fails(tmp_path):
    def run(tf):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None])
            h = tf.summary.histogram("h", x)
            with tf.Session() as sess:
                try:
                    sess.run(h, {x: [1.0, float("nan")]})
                    return None
                except tf.errors.InvalidArgumentError:
                    return "InvalidArgument"
    assert run(dflow) == run(real_tf()) == "InvalidArgument"


def test_text_and_tensor_summaries():
    def run(tf):
        with tf.Graph().as_default():
            t = tf.summary.text("note", tf.constant("hello"))
            u = tf.summary.tensor_summary("tens", tf.constant([[1, 2], [3, 4]]))
            with tf.Session() as sess:
                out = sess.run(tf.summary.merge_all())
            s = real_tf().Summary.FromString(out)
            vals = [(v.tag, v.metadata.plugin_data.plugin_name,
                     real_tf().make_ndarray(v.tensor).tolist()) for v in s.value]
            return [t.name, u.name], vals
    assert run(dflow) == run(real_tf())
