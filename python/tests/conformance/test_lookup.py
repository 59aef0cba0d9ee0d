"""Lookup tables both ways with TensorFlow 2.21 (tf.compat.v1 graph mode): graphs with tables built by
TensorFlow (HashTableV2 filled from tensors or text files, index tables with OOV hash buckets,
string→int and int→string, mutable tables) run in dflow from the same GraphDef bytes with the same
values and error classes; dflow's tf.lookup API gives what TensorFlow's gives; and an Estimator
with a vocabulary column exports a SavedModel that TensorFlow's loader runs."""
import os

import numpy as np
import pytest

from tfref import real_tf, run_dflow, run_tf, tf_graph_def  # first: it puts python/tests on the path

import dflow  # noqa: E402
from conftest import assert_same, run_both  # noqa: E402

INIT = ["init_all_tables"]
WORDS = np.array([b"b", b"zz", b"a", b"", b"c", b"qq"], dtype=object)


def _tf_lookup_ops():
    real_tf()
    from tensorflow.python.ops import lookup_ops
    return lookup_ops


def _dflow_lookup_ops():
    from dflow.ops import lookup_ops
    return lookup_ops


def _lookup_ops(m):
    return _dflow_lookup_ops() if m is dflow else _tf_lookup_ops()


def _vocab(tmp_path, lines, name="vocab.txt"):
    p = tmp_path / name
    p.write_bytes(b"".join(x + b"\n" for x in lines))
    return str(p)


def _both(gd, fetches, feeds=None, targets=INIT):
    """Runs in both; returns the values or, on failure, the error class name of each side."""
    out = []
    for run in (run_dflow, run_tf):
        try:
            out.append(run(gd, fetches, feeds, targets))
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            out.append("%s: %s" % (type(e).__name__, str(e).strip().splitlines()[-1][:300]))
    return out


def _same(gd, fetches, feeds=None, targets=INIT):
    d, t = _both(gd, fetches, feeds, targets)
    assert not isinstance(t, str), "TensorFlow failed: %s" % t
    assert not isinstance(d, str), "dflow failed: %s" % d
    assert_same(d, t)
    return d


def _same_error(gd, fetches, want, feeds=None, targets=INIT):
    d, t = _both(gd, fetches, feeds, targets)
    assert t.startswith(want + ":"), t
    assert d.startswith(want + ":"), d


def test_static_hash_table_from_tensors():
    def build(tf):
        t = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], [7, 8, 9], tf.string,
                                                                          tf.int64), -1)
        x = tf.placeholder(tf.string, [None], name="x")
        tf.tables_initializer()
        keys, values = t.export()
        return t.lookup(x), t.size(), keys, values
    gd, fetches = tf_graph_def(build)
    d, t = _both(gd, list(fetches), {"x:0": WORDS})
    assert_same(d[:2], t[:2])
    assert sorted(zip(d[2], d[3])) == sorted(zip(t[2], t[3])) == [(b"a", 7), (b"b", 8), (b"c", 9)]


def test_init_table_v2_int_to_float_and_per_key_default():
    def build(tf):
        from tensorflow.python.ops import gen_lookup_ops as g
        h = g.hash_table_v2(key_dtype=tf.int64, value_dtype=tf.float32, name="t")
        g.initialize_table_v2(h, tf.constant([3, 1, 4], tf.int64), tf.constant([0.5, -1.5, 2.0]), name="init_all_tables")
        keys = tf.constant([[1, 2], [4, 3]], tf.int64)
        return (g.lookup_table_find_v2(h, keys, tf.constant(9.0)),
                g.lookup_table_find_v2(h, keys, tf.constant([[10.0, 20.0], [30.0, 40.0]])))
    gd, fetches = tf_graph_def(build)
    _same(gd, list(fetches))


def test_index_table_from_tensor_with_oov_buckets():
    def build(tf):
        lo = _tf_lookup_ops()
        x = tf.placeholder(tf.string, [None], name="x")
        xi = tf.placeholder(tf.int64, [None], name="xi")
        s = lo.index_table_from_tensor(["a", "b", "c"], num_oov_buckets=3)
        d = lo.index_table_from_tensor(["a", "b", "c"], default_value=-5)
        i = lo.index_table_from_tensor(tf.constant([10, 20, 30], tf.int64), num_oov_buckets=2, dtype=tf.int64)
        tf.tables_initializer()
        return s.lookup(x), d.lookup(x), i.lookup(xi), s.size()
    gd, fetches = tf_graph_def(build)
    _same(gd, list(fetches), {"x:0": WORDS, "xi:0": np.array([20, 5, 30, -7, 123456789], np.int64)})


def test_index_table_from_file_and_text_initializers(tmp_path):
    vocab = _vocab(tmp_path, [b"a", b"b", b"c", b"d"])
    cols = _vocab(tmp_path, [b"x 1 one", b"y 2 two", b"z 3 three"], "cols.txt")

    def build(tf):
        lo = _tf_lookup_ops()
        x = tf.placeholder(tf.string, [None], name="x")
        f = lo.index_table_from_file(vocab, num_oov_buckets=2)
        v = lo.index_table_from_file(vocab, vocab_size=2, default_value=-3)
        r = lo.index_to_string_table_from_file(vocab, default_value="?")
        c = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(cols, tf.string, 0, tf.int64, 1, delimiter=" "), -1)
        o = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            cols, tf.string, 2, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER, delimiter=" ", value_index_offset=5), -1)
        w = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            cols, tf.int64, 1, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, delimiter=" "), "none")
        tf.tables_initializer()
        ids = tf.constant([0, 3, 7, -1], tf.int64)
        return (f.lookup(x), v.lookup(x), r.lookup(ids), c.lookup(tf.constant(["y", "q", "z"])),
                o.lookup(tf.constant(["one", "three", "x"])), w.lookup(tf.constant([2, 9], tf.int64)), f.size())
    gd, fetches = tf_graph_def(build)
    _same(gd, list(fetches), {"x:0": np.array([b"d", b"a", b"nope", b"b", b"c", b"e"], dtype=object)})


def test_index_to_string_from_tensor():
    def build(tf):
        lo = _tf_lookup_ops()
        t = lo.index_to_string_table_from_tensor(["x", "y", "z"], default_value="UNK")
        tf.tables_initializer()
        return t.lookup(tf.constant([[2, 0], [5, 1]], tf.int64))
    gd, fetches = tf_graph_def(build)
    _same(gd, [fetches])


def test_uninitialized_table_is_failed_precondition():
    def build(tf):
        t = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1], tf.string, tf.int64), -1)
        tf.tables_initializer()
        return t.lookup(tf.constant(["a"])), t.size()
    gd, (find, size) = tf_graph_def(build)
    _same_error(gd, [find], "FailedPreconditionError", targets=())
    assert_same(_same(gd, [size], targets=()), [np.int64(0)])


def test_signature_mismatch_is_invalid_argument():
    def build(tf):
        from tensorflow.python.ops import gen_lookup_ops as g
        h = g.hash_table_v2(key_dtype=tf.string, value_dtype=tf.int64, name="t")
        g.initialize_table_v2(h, tf.constant(["a"]), tf.constant([1], tf.int64), name="init_all_tables")
        return (g.lookup_table_find_v2(h, tf.constant([1], tf.int64), tf.constant(-1, tf.int64)),
                g.lookup_table_find_v2(h, tf.constant(["a"]), tf.constant(-1.0)),
                g.initialize_table_v2(h, tf.constant([1], tf.int64), tf.constant([1], tf.int64)))
    gd, (bad_key, bad_value, bad_init) = tf_graph_def(build)
    _same_error(gd, [bad_key], "InvalidArgumentError")
    _same_error(gd, [bad_value], "InvalidArgumentError")
    _same_error(gd, [], "InvalidArgumentError", targets=INIT + [bad_init])


def test_reinitialization_and_duplicate_keys():
    def build(tf):
        from tensorflow.python.ops import gen_lookup_ops as g
        h = g.hash_table_v2(key_dtype=tf.string, value_dtype=tf.int64, name="t")
        g.initialize_table_v2(h, tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64), name="init_all_tables")
        same_size = g.initialize_table_v2(h, tf.constant(["c", "d"]), tf.constant([3, 4], tf.int64))
        other_size = g.lookup_table_import_v2(h, tf.constant(["e"]), tf.constant([5], tf.int64))
        h2 = g.hash_table_v2(key_dtype=tf.string, value_dtype=tf.int64, name="t2")
        dup = g.initialize_table_v2(h2, tf.constant(["a", "a"]), tf.constant([1, 2], tf.int64))
        dup_same = g.initialize_table_v2(h2, tf.constant(["a", "a"]), tf.constant([1, 1], tf.int64))
        find = g.lookup_table_find_v2(h, tf.constant(["a", "c"]), tf.constant(-1, tf.int64))
        h3 = g.hash_table_v2(key_dtype=tf.string, value_dtype=tf.int64, name="t3")
        empty = g.initialize_table_v2(h3, tf.constant([], tf.string), tf.constant([], tf.int64))
        return same_size, other_size, dup, dup_same, find, g.lookup_table_size_v2(h2), empty
    gd, (same_size, other_size, dup, dup_same, find, size2, empty) = tf_graph_def(build)
    _same_error(gd, [], "InvalidArgumentError", targets=[empty])
    _same(gd, [find], targets=INIT + [same_size, same_size])
    _same_error(gd, [], "FailedPreconditionError", targets=INIT + [other_size])
    _same_error(gd, [], "FailedPreconditionError", targets=[dup])
    _same(gd, [size2], targets=[dup_same])


def test_text_file_errors(tmp_path):
    empty_line = str(tmp_path / "e.txt")
    with open(empty_line, "wb") as f:
        f.write(b"a\t1\n\nb\t2\n")
    short = _vocab(tmp_path, [b"a\t1", b"b"], "s.txt")
    words = _vocab(tmp_path, [b"a\tx"], "w.txt")
    empty = str(tmp_path / "empty.txt")
    open(empty, "wb").close()

    def build(tf):
        from tensorflow.python.ops import gen_lookup_ops as g
        out = []
        for i, (fn, k, v, vs) in enumerate([(empty_line, 0, 1, -1), (short, 0, 1, -1), (words, 0, 1, -1),
                                            (short, 0, -1, 5), (str(tmp_path / "missing.txt"), -2, -1, -1),
                                            (empty, -2, -1, -1)]):
            h = g.hash_table_v2(key_dtype=tf.string, value_dtype=tf.int64, name="t%d" % i)
            out.append(g.initialize_table_from_text_file_v2(h, fn, k, v, vocab_size=vs))
        return out
    gd, inits = tf_graph_def(build)
    for init, want in zip(inits, ["InvalidArgumentError"] * 4 + ["NotFoundError", "OutOfRangeError"]):
        _same_error(gd, [], want, targets=[init])


def test_mutable_hash_table():
    def build(tf):
        t = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value=-1.0)
        ins = t.insert(tf.constant([1, 2, 3], tf.int64), tf.constant([1.0, 2.0, 3.0]))
        upd = t.insert(tf.constant([2], tf.int64), tf.constant([20.0]))
        rem = t.remove(tf.constant([3], tf.int64))
        keys, values = t.export()
        return ins, upd, rem, t.lookup(tf.constant([1, 2, 3, 4], tf.int64)), t.size(), keys, values
    gd, (ins, upd, rem, find, size, keys, vals) = tf_graph_def(build)
    d, t = _both(gd, [find, size, keys, vals], targets=[ins, upd, rem])
    assert_same(d[:2], t[:2])
    assert sorted(zip(d[2], d[3])) == sorted(zip(t[2], t[3])) == [(1, 1.0), (2, 20.0)]


def test_python_api_matches_tensorflow(tmp_path):
    vocab = _vocab(tmp_path, [b"one", b"two", b"three"])

    def fn(m):
        lo = _lookup_ops(m)
        x = m.constant(["two", "four", "one", "zero"])
        a = lo.index_table_from_tensor(["one", "two"], num_oov_buckets=2)
        b = lo.index_table_from_file(vocab, num_oov_buckets=1)
        c = lo.index_to_string_table_from_tensor(["p", "q"])
        d = m.lookup.StaticHashTable(m.lookup.KeyValueTensorInitializer(m.constant([5, 6], m.int64), ["five", "six"]), "?")
        outs = [a.lookup(x), b.lookup(x), c.lookup(m.constant([1, 0, 2], m.int64)),
                d.lookup(m.constant([6, 7], m.int64)), a.size(), b.size()]
        n_init = len(m.get_collection(m.GraphKeys.TABLE_INITIALIZERS))
        with m.Session() as s:
            s.run(m.tables_initializer())
            return s.run(outs) + [n_init]
    d, t = run_both(fn)
    assert_same(d, t)


def test_estimator_vocabulary_column_saved_model_loads_in_tensorflow(tmp_path):
    tf = real_tf()
    col = dflow.feature_column.categorical_column_with_vocabulary_list("color", ["red", "green", "blue"],
                                                                         num_oov_buckets=2)
    cols = [dflow.feature_column.embedding_column(col, 3), dflow.feature_column.numeric_column("x")]
    est = dflow.estimator.DNNClassifier(hidden_units=[4], feature_columns=cols, n_classes=3,
                                        model_dir=str(tmp_path / "model"))
    colors = np.array([b"red", b"green", b"blue", b"pink", b"red", b"blue"], dtype=object)
    xs = np.array([0.5, -1.0, 2.0, 0.0, 1.5, -0.5], np.float32)
    labels = np.array([0, 1, 2, 1, 0, 2], np.int32)

    def input_fn():
        return dflow.data.Dataset.from_tensor_slices(({"color": colors, "x": xs}, labels)).repeat().batch(3)
    est.train(input_fn, steps=5)

    def serving():
        feats = {"color": dflow.placeholder(dflow.string, [None], name="color"),
                 "x": dflow.placeholder(dflow.float32, [None], name="x_in")}
        return dflow.estimator.export.ServingInputReceiver(feats, feats)
    export_dir = est.export_saved_model(str(tmp_path / "export"), serving)
    export_dir = export_dir.decode() if isinstance(export_dir, bytes) else export_dir
    pred = list(est.predict(lambda: dflow.data.Dataset.from_tensor_slices({"color": colors, "x": xs}).batch(6)))
    want = np.stack([p["probabilities"] for p in pred])
    g = tf.Graph()
    with g.as_default(), tf.Session() as s:
        mg = tf.saved_model.loader.load(s, ["serve"], export_dir)
        sig = mg.signature_def["predict"] if "predict" in mg.signature_def else mg.signature_def["serving_default"]
        ins = {k: v.name for k, v in sig.inputs.items()}
        got = s.run(sig.outputs["probabilities"].name, {ins["color"]: colors, ins["x"]: xs})
    assert_same(got, want, rtol=1e-5, atol=1e-6)


def test_tensorflow_saved_model_with_tables_loads_in_dflow(tmp_path):
    """A SavedModel written by TensorFlow's builder whose main op is tf.tables_initializer() (a table
    from a tensor and one from an asset file with OOV buckets) gives the same ids in dflow."""
    tf = real_tf()
    vocab = _vocab(tmp_path, [b"lion", b"tiger", b"bear"])
    export_dir = str(tmp_path / "sm")
    feed = np.array([b"bear", b"cat", b"lion", b"ox"], dtype=object)
    with tf.Graph().as_default():
        lo = _tf_lookup_ops()
        x = tf.placeholder(tf.string, [None], name="x")
        a = lo.index_table_from_tensor(["cat", "lion"], default_value=-2).lookup(x)
        b = lo.index_table_from_file(vocab, num_oov_buckets=4).lookup(x)
        with tf.Session() as s:
            s.run(tf.tables_initializer())
            want = s.run([a, b], {x: feed})
            builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
            sig = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"a": a, "b": b})
            builder.add_meta_graph_and_variables(s, ["serve"], signature_def_map={"serving_default": sig},
                                                 main_op=tf.tables_initializer(),
                                                 assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS))
            builder.save()
    os.remove(vocab)  # dflow must read the copy under assets/
    with dflow.Graph().as_default(), dflow.Session() as s:
        mg = dflow.saved_model.loader.load(s, ["serve"], export_dir)
        sig = mg.signature_def["serving_default"]
        got = s.run([sig.outputs["a"].name, sig.outputs["b"].name], {sig.inputs["x"].name: feed})
    assert_same(got, want)


def test_dflow_built_tables_run_in_tensorflow(tmp_path):
    """The reverse exchange: tables built by dflow's tf.lookup (from tensors, from a file with OOV
    buckets, int→string, mutable) serialize into a GraphDef that TensorFlow runs with dflow's values."""
    vocab = _vocab(tmp_path, [b"one", b"two", b"three"])
    g = dflow.Graph()
    with g.as_default():
        lo = _dflow_lookup_ops()
        x = dflow.placeholder(dflow.string, [None], name="x")
        a = lo.index_table_from_tensor(["two", "one"], num_oov_buckets=3).lookup(x)
        b = lo.index_table_from_file(vocab, default_value=-4).lookup(x)
        c = lo.index_to_string_table_from_tensor(["p", "q"]).lookup(dflow.constant([1, 5], dflow.int64))
        m = dflow.lookup.experimental.MutableHashTable(dflow.string, dflow.int64, -1)
        ins = m.insert(dflow.constant(["one"]), dflow.constant([11], dflow.int64))
        f = m.lookup(x)
        dflow.tables_initializer()
    gd = g.as_graph_def().SerializeToString()
    fetches = [a.name, b.name, c.name, f.name]
    feeds = {"x:0": np.array([b"one", b"four", b"three", b"two"], dtype=object)}
    d, t = _both(gd, fetches, feeds, INIT + [ins.name])
    assert not isinstance(t, str), t
    assert_same(d, t)
