"""Files both ways between dflow and real TensorFlow 2.21 (tf.compat.v1) / TensorBoard 2.21:
checkpoints, event files, TFRecord files and GraphDefs, and the `dflow` command on files that
TensorFlow wrote (`dflow inspect`, `dflow events`, `dflow run --out`)."""
import os
import subprocess

import numpy as np
import pytest

from tfref import real_tf, run_dflow, run_tf  # first: it puts python/tests on the path

import dflow  # noqa: E402
from conftest import BUILD, assert_same  # noqa: E402

DFLOW = os.path.join(BUILD, "bin", "dflow")

# The variables of the checkpoint tests: name -> value (a partitioned variable "part" too).
VALUES = {
    "f": np.arange(6, dtype=np.float32).reshape(2, 3) / 7,
    "d": np.array([1e-300, -2.5], dtype=np.float64),
    "i": np.array([1, -2, 2**31 - 1], dtype=np.int32),
    "l": np.array([2**40, -(2**62)], dtype=np.int64),
    "b": np.array([True, False, True]),
    "s": np.array([b"a", b"\x00\xff", b"longer string"], dtype=object),
    "scope/u8": np.array([[0, 255]], dtype=np.uint8),
}
PART = np.arange(12, dtype=np.float32).reshape(4, 3) - 5.5


def dflow_cli(*args, check=True):
    p = subprocess.run([DFLOW] + [str(a) for a in args], capture_output=True, text=True, timeout=60)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def _make_variables(m):
    """The checkpoint tests' variables in module m (dflow or TensorFlow), with init ops assigning
    VALUES; returns the list of variables (the partitioned one as its PartitionedVariable)."""
    out = []
    for name, v in VALUES.items():
        scope, _, short = name.rpartition("/")
        with m.variable_scope(scope or ""):
            out.append(m.get_variable(short, initializer=m.constant(v) if v.dtype != object else
                                      m.constant(list(v), dtype=m.string)))
    out.append(m.get_variable("part", initializer=m.constant(PART), partitioner=m.fixed_size_partitioner(2)))
    return out


def _values(m, sess, variables):
    vals = sess.run([v if not hasattr(v, "_get_variable_list") else m.concat(list(v), 0) for v in variables])
    return dict(zip(list(VALUES) + ["part"], vals))


def _expected():
    e = dict(VALUES)
    e["part"] = PART
    return e


def _assert_checkpoint(reader_values, list_vars):
    exp = _expected()
    assert sorted(n for n, _ in list_vars) == sorted(exp)
    for name, shape in list_vars:
        assert list(shape) == list(exp[name].shape), name
    for name, v in exp.items():
        assert_same(np.asarray(reader_values[name]), v, path=name)


def test_tensorflow_checkpoint_restores_in_dflow(tmp_path):
    tf = real_tf()
    with tf.Graph().as_default():
        variables = _make_variables(tf)
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            saver.save(s, str(tmp_path / "model.ckpt"), global_step=5)
            saver.save(s, str(tmp_path / "model.ckpt"), global_step=6)
    prefix = str(tmp_path / "model.ckpt-6")
    assert dflow.train.latest_checkpoint(str(tmp_path)) == prefix
    state = dflow.train.get_checkpoint_state(str(tmp_path))
    assert list(state.all_model_checkpoint_paths) == [str(tmp_path / "model.ckpt-5"), prefix]
    reader = dflow.train.load_checkpoint(str(tmp_path))
    _assert_checkpoint({n: reader.get_tensor(n) for n in _expected()}, dflow.train.list_variables(str(tmp_path)))
    assert sorted(dflow.train.list_variables(prefix)) == sorted(tf.train.list_variables(prefix))
    # dflow's Saver restores the same variables, built by dflow.
    with dflow.Graph().as_default():
        variables = _make_variables(dflow)
        saver = dflow.train.Saver()
        with dflow.Session() as s:
            saver.restore(s, prefix)
            got = _values(dflow, s, variables)
    for name, v in _expected().items():
        assert_same(got[name], v, path=name)
    # `dflow inspect` lists them with TensorFlow's dtypes, shapes and small values.
    out = dflow_cli("inspect", tmp_path).stdout
    assert "model.ckpt-6: 8 tensors" in out or "model.ckpt-6: 9 tensors" in out, out
    assert "f  float32 [2,3]  = [[0 0.14285715 0.2857143] [0.42857143 0.5714286 0.71428573]]" in out, out
    assert "s  string [3]  = [b'a' b'\\x00\\xff' b'longer string']" in out, out
    assert "part  float32 [4,3]  (2 slices)" in out, out


def test_dflow_checkpoint_reads_in_tensorflow(tmp_path):
    with dflow.Graph().as_default():
        _make_variables(dflow)
        saver = dflow.train.Saver()
        with dflow.Session() as s:
            s.run(dflow.global_variables_initializer())
            saver.save(s, str(tmp_path / "model.ckpt"), global_step=1)
            saver.save(s, str(tmp_path / "model.ckpt"), global_step=2)
    tf = real_tf()
    prefix = str(tmp_path / "model.ckpt-2")
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert list(state.all_model_checkpoint_paths) == [str(tmp_path / "model.ckpt-1"), prefix]
    reader = tf.train.load_checkpoint(str(tmp_path))
    _assert_checkpoint({n: reader.get_tensor(n) for n in _expected()}, tf.train.list_variables(str(tmp_path)))
    with tf.Graph().as_default():
        variables = _make_variables(tf)
        saver = tf.train.Saver()
        with tf.Session() as s:
            saver.restore(s, prefix)
            got = _values(tf, s, variables)
    for name, v in _expected().items():
        assert_same(got[name], v, path=name)


def test_inspect_names_what_tensorflow_wrote(tmp_path):
    """SavedModel, MetaGraph, V1 checkpoint, text GraphDef, stale state file: named, not parsed as
    a GraphDef."""
    tf = real_tf()
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.get_variable("w", initializer=tf.constant([[1.0], [-2.0]]))
        c = tf.get_variable("c", initializer=tf.constant([b"q\n"]))
        y = tf.matmul(x, w, name="y")
        tf.io.write_graph(tf.get_default_graph().as_graph_def(), str(tmp_path), "g.pbtxt", as_text=True)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.train.Saver().save(s, str(tmp_path / "ck" / "model.ckpt"), global_step=3)
            os.makedirs(tmp_path / "v1")
            tf.train.Saver(write_version=tf.train.SaverDef.V1).save(s, str(tmp_path / "v1" / "model.ckpt"),
                                                                     write_meta_graph=False)
            tf.saved_model.simple_save(s, str(tmp_path / "sm"), {"x": x}, {"y": y})
    del c
    cases = [
        (tmp_path / "sm", "a SavedModel directory"),
        (tmp_path / "sm" / "saved_model.pb", "a SavedModel (saved_model.pb)"),
        (tmp_path / "ck" / "model.ckpt-3.meta", "a MetaGraphDef"),
    ]
    for path, says in cases:
        p = dflow_cli("inspect", path, check=False)
        assert says in p.stdout + p.stderr, (path, p.stdout, p.stderr)
        assert "Could not parse" not in p.stdout + p.stderr
    # The SavedModel's variables: a directory without a state file, and the checkpoint in it.
    p = dflow_cli("inspect", tmp_path / "sm" / "variables", check=False)
    assert p.returncode == 1 and str(tmp_path / "sm" / "variables" / "variables") in p.stderr, p.stderr
    out = dflow_cli("inspect", tmp_path / "sm" / "variables" / "variables").stdout
    assert "w  float32 [2,1]  = [[1] [-2]]" in out, out
    p = dflow_cli("run", tmp_path / "ck" / "model.ckpt-3.meta", "--fetch", "y", check=False)
    assert p.returncode == 1 and "is a MetaGraphDef" in p.stderr, p.stderr
    # The V1 checkpoint: listed with its values.
    v1 = [f for f in os.listdir(tmp_path / "v1") if f.startswith("model.ckpt") and not f.endswith(".meta")]
    assert len(v1) == 1, v1
    out = dflow_cli("inspect", tmp_path / "v1" / v1[0]).stdout
    assert "V1 checkpoint" in out and ": 2 tensors" in out, out
    assert "w  float32 [2,1]  = [[1] [-2]]" in out, out
    assert "c  string [1]  = [b'q\\n']" in out, out
    # The text GraphDef: inspected and run.
    assert "y  MatMul -> float32[?,1]  inputs: x, w/read" in dflow_cli("inspect", tmp_path / "g.pbtxt").stdout
    # A state file whose checkpoint was deleted: the stale path is named.
    for f in os.listdir(tmp_path / "ck"):
        if f.startswith("model.ckpt-3."):
            os.remove(tmp_path / "ck" / f)
    for path in (tmp_path / "ck", tmp_path / "ck" / "checkpoint"):
        p = dflow_cli("inspect", path, check=False)
        assert p.returncode == 1
        assert str(tmp_path / "ck" / "model.ckpt-3") in p.stderr and "does not exist" in p.stderr, p.stderr


def _summaries(m, logdir):
    """Writes the same summaries with module m's FileWriter; returns the event file's path."""
    with m.Graph().as_default() as g:
        x = m.placeholder(m.float32, [None], name="x")
        scalar = m.summary.scalar("loss", m.reduce_mean(x))
        histo = m.summary.histogram("weights", x)
        text = m.summary.text("note", m.constant("step text"))
        merged = m.summary.merge([scalar, histo, text])
        w = m.summary.FileWriter(logdir, g)
        with m.Session() as s:
            for step, vals in enumerate([[1.0, 2.0, 3.0], [-4.0, 0.5, 1e-3, 7.0], [0.0]]):
                w.add_summary(s.run(merged, {x: vals}), step * 10)
        w.close()
    files = [f for f in os.listdir(logdir) if "tfevents" in f]
    assert len(files) == 1, files
    return os.path.join(logdir, files[0])


def _accumulate(path):
    from tensorboard.backend.event_processing import event_accumulator
    acc = event_accumulator.EventAccumulator(path, size_guidance={"tensors": 0, "scalars": 0, "histograms": 0})
    acc.Reload()
    return acc


def test_dflow_event_file_reads_in_tensorboard(tmp_path):
    mine = _accumulate(_summaries(dflow, str(tmp_path / "dflow")))
    ref = _accumulate(_summaries(real_tf(), str(tmp_path / "tf")))
    assert mine.Tags()["scalars"] == ref.Tags()["scalars"] == ["loss"]
    assert mine.Tags()["histograms"] == ref.Tags()["histograms"] == ["weights"]
    assert sorted(mine.Tags()["tensors"]) == sorted(ref.Tags()["tensors"]), (mine.Tags(), ref.Tags())
    assert [(e.step, e.value) for e in mine.Scalars("loss")] == [(e.step, e.value) for e in ref.Scalars("loss")]
    for a, b in zip(mine.Histograms("weights"), ref.Histograms("weights"), strict=True):
        assert a.step == b.step
        for field in ("min", "max", "num", "sum", "sum_squares", "bucket_limit", "bucket"):
            assert_same(np.asarray(getattr(a.histogram_value, field)), np.asarray(getattr(b.histogram_value, field)),
                        rtol=1e-6, path="histogram %s at step %d" % (field, a.step))
    tag = [t for t in ref.Tags()["tensors"] if "note" in t][0]
    assert [(e.step, e.tensor_proto.string_val) for e in mine.Tensors(tag)] == \
        [(e.step, e.tensor_proto.string_val) for e in ref.Tensors(tag)]
    assert mine.Tags()["graph"] and ref.Tags()["graph"]
    got = {n.name: n.op for n in mine.Graph().node}
    assert got["x"] == "Placeholder" and got["loss"] == "ScalarSummary", got


def test_tensorflow_event_file_reads_in_dflow(tmp_path):
    path = _summaries(real_tf(), str(tmp_path))
    tf = real_tf()
    ref = [(e.step, v.tag, v.simple_value) for e in tf.train.summary_iterator(path) for v in e.summary.value
           if v.HasField("simple_value")]
    assert [s for s, _, _ in ref] == [0, 10, 20]
    lines = dflow_cli("events", path).stdout.splitlines()
    assert [line.rsplit(" ", 1)[0] for line in lines] == ["%s %d" % (tag, step) for step, tag, _ in ref], lines
    assert [np.float32(line.rsplit(" ", 1)[1]) for line in lines] == [np.float32(v) for _, _, v in ref], lines
    mine = list(dflow.train.summary_iterator(path))
    theirs = list(tf.train.summary_iterator(path))
    assert [e.SerializeToString() for e in mine] == [e.SerializeToString() for e in theirs]
    assert any(e.HasField("graph_def") for e in mine)
    out = dflow_cli("inspect", path).stdout
    assert "an event file (brain.Event:2): 6 events, steps 0 to 20: 3 scalar values, 3 histograms, " \
           "3 tensor values, 1 graph, 1 meta graph" in out, out


RECORDS = [b"", b"a", b"\x00\xff" * 1000, b"last record"]


def test_tfrecord_files_both_ways(tmp_path):
    tf = real_tf()
    theirs, mine = str(tmp_path / "tf.tfrecord"), str(tmp_path / "dflow.tfrecord")
    with tf.io.TFRecordWriter(theirs) as w:
        for r in RECORDS:
            w.write(r)
    with dflow.io.TFRecordWriter(mine) as w:
        for r in RECORDS:
            w.write(r)
    assert open(mine, "rb").read() == open(theirs, "rb").read()
    assert list(dflow.io.tf_record_iterator(theirs)) == RECORDS
    assert list(tf.io.tf_record_iterator(mine)) == RECORDS
    with dflow.Graph().as_default():
        nxt = dflow.data.TFRecordDataset([theirs, mine]).make_one_shot_iterator().get_next()
        with dflow.Session() as s:
            got = [s.run(nxt) for _ in range(2 * len(RECORDS))]
            with pytest.raises(dflow.errors.OutOfRangeError):
                s.run(nxt)
    assert got == RECORDS * 2
    with tf.Graph().as_default():
        nxt = tf.data.TFRecordDataset([mine]).make_one_shot_iterator().get_next()
        with tf.Session() as s:
            assert [s.run(nxt) for _ in RECORDS] == RECORDS
    assert "a TFRecord file: 4 records" in dflow_cli("inspect", theirs).stdout


def test_compressed_tfrecord_files_both_ways(tmp_path):
    """GZIP and ZLIB TFRecord files: TensorFlow's read by dflow (iterator and dataset), dflow's
    read by TensorFlow; an unknown compression type is InvalidArgument in both."""
    tf = real_tf()
    for kind in ("GZIP", "ZLIB"):
        theirs, mine = str(tmp_path / ("tf." + kind)), str(tmp_path / ("dflow." + kind))
        with tf.io.TFRecordWriter(theirs, tf.io.TFRecordOptions(compression_type=kind)) as w:
            for r in RECORDS:
                w.write(r)
        with dflow.io.TFRecordWriter(mine, dflow.io.TFRecordOptions(compression_type=kind)) as w:
            for r in RECORDS:
                w.write(r)
        assert list(dflow.io.tf_record_iterator(theirs, options=kind)) == RECORDS
        assert list(tf.io.tf_record_iterator(mine, options=kind)) == RECORDS
        with dflow.Graph().as_default():
            nxt = dflow.data.TFRecordDataset([theirs, mine], compression_type=kind).make_one_shot_iterator().get_next()
            with dflow.Session() as s:
                assert [s.run(nxt) for _ in range(2 * len(RECORDS))] == RECORDS * 2
                with pytest.raises(dflow.errors.OutOfRangeError):
                    s.run(nxt)
        with tf.Graph().as_default():
            nxt = tf.data.TFRecordDataset([mine], compression_type=kind).make_one_shot_iterator().get_next()
            with tf.Session() as s:
                assert [s.run(nxt) for _ in RECORDS] == RECORDS
        # Read without its compression type, the file is damaged data, as in TensorFlow.
        with pytest.raises(dflow.errors.DataLossError):
            list(dflow.io.tf_record_iterator(theirs))
        assert "a %s-compressed TFRecord file: 4 records" % kind in dflow_cli("inspect", theirs).stdout
    with pytest.raises(dflow.errors.InvalidArgumentError, match="BZIP2"):
        dflow.io.TFRecordWriter(str(tmp_path / "x"), options="BZIP2")


def _tf_model(tf):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), name="w")
    h = tf.nn.relu(tf.matmul(x, w) + 0.25, name="h")
    tf.reduce_sum(h, axis=1, name="y")
    tf.string_join([tf.constant(["a", "b"]), tf.constant("\x01!")], name="s")


X = np.linspace(-2, 2, 15, dtype=np.float32).reshape(5, 3)


def test_graphdefs_both_ways(tmp_path):
    tf = real_tf()
    with tf.Graph().as_default() as g:
        _tf_model(tf)
        tf.io.write_graph(g, str(tmp_path), "g.pb", as_text=False)
        tf.io.write_graph(g, str(tmp_path), "g.pbtxt", as_text=True)
        gd = g.as_graph_def().SerializeToString()
    ref = run_tf(gd, ["h:0", "y:0", "s:0"], {"x:0": X})
    assert_same(run_dflow(gd, ["h:0", "y:0", "s:0"], {"x:0": X}), ref)  # imported by dflow.import_graph_def
    # TensorFlow's binary and text GraphDefs, run by `dflow run` and written in full by --out.
    np.save(tmp_path / "x.npy", X)
    for name in ("g.pb", "g.pbtxt"):
        out = str(tmp_path / (name + ".npz"))
        dflow_cli("run", tmp_path / name, "--feed", "x=@%s" % (tmp_path / "x.npy"), "--fetch", "h", "--fetch", "y:0",
                  "--fetch", "s", "--out", out)
        z = np.load(out)
        assert z.files == ["h", "y:0", "s"]
        assert_same(z["h"], ref[0])
        assert_same(z["y:0"], ref[1])
        assert z["s"].dtype.kind == "S" and list(z["s"]) == list(ref[2])
    # dflow's GraphDef (built by dflow), imported and run by TensorFlow.
    with dflow.Graph().as_default() as g:
        _tf_model(dflow)
        mine = g.as_graph_def().SerializeToString()
        with dflow.Session() as s:
            got = s.run(["h:0", "y:0", "s:0"], {"x:0": X})
    assert_same(run_tf(mine, ["h:0", "y:0", "s:0"], {"x:0": X}), ref)
    assert_same(got, ref)


def test_run_writes_whole_fetches_and_runs_targets_in_order(tmp_path):
    """init, then two training steps as successive --target steps; the 2000-element fetch is
    abbreviated on stdout and whole in the .npy file."""
    tf = real_tf()
    with tf.Graph().as_default() as g:
        w = tf.get_variable("w", initializer=tf.constant(np.linspace(0, 1, 2000, dtype=np.float32)))
        loss = tf.reduce_sum(tf.square(w - 3.0), name="loss")
        tf.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
        tf.variables_initializer([w], name="init")
        tf.identity(w, name="out")
        gd = g.as_graph_def().SerializeToString()
    (tmp_path / "train.pb").write_bytes(gd)
    ref = run_tf(gd, ["out:0", "loss:0"], targets=["init", "train", "train"])
    p = dflow_cli("run", tmp_path / "train.pb", "--target", "init", "--target", "train", "--target", "train",
                  "--fetch", "out", "--out", tmp_path / "w.npy")
    assert "..." in p.stdout
    assert_same(np.load(tmp_path / "w.npy"), ref[0])
    p = dflow_cli("run", tmp_path / "train.pb", "--target", "init", "--target", "train", "--target", "train",
                  "--fetch", "loss")
    assert p.stdout.startswith("loss = "), p.stdout
    np.testing.assert_allclose(float(p.stdout.split()[-1]), ref[1], rtol=1e-5)


def test_image_and_audio_summaries_are_named_missing():
    """TensorFlow has tf.summary.image and audio; dflow has no ImageSummary/AudioSummary op and
    says so rather than writing something else."""
    tf = real_tf()
    with tf.Graph().as_default():
        assert tf.summary.image("img", tf.zeros([1, 2, 2, 3])).op.type == "ImageSummary"
    with dflow.Graph().as_default():
        with pytest.raises(NotImplementedError, match="ImageSummary"):
            dflow.summary.image("img", dflow.zeros([1, 2, 2, 3]))
        with pytest.raises(NotImplementedError, match="AudioSummary"):
            dflow.summary.audio("snd", dflow.zeros([1, 10]), 8000)
