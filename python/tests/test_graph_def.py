"""GraphDefs from Python: as_graph_def / node_def as protobuf messages, tf.import_graph_def (prefix,
input_map, return_elements) and tf.train.write_graph, with graphs going both ways between dflow
and real TensorFlow."""
import os

import numpy as np
import pytest
from google.protobuf import text_format

from conftest import assert_same, real_tf, run_both

X = np.array([[1.0, 2.0, 3.0], [-4.0, 0.5, 0.0]], np.float32)


def build_model(tf):
    """A small graph of common ops, built the same way under either library."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.constant([[1.0, -1.0], [2.0, 0.5], [3.0, 0.25]], name="w")
    h = tf.nn.relu(tf.matmul(x, w) + tf.constant([0.5, -0.5]), name="h")
    s = tf.reduce_sum(h * h, axis=1, name="s")
    c = tf.concat([tf.cast(s, tf.int32), tf.constant([7])], 0, name="c")
    m = tf.reduce_mean(tf.square(x) - 1.0, name="m")
    return x, [h, s, c, m]


def test_as_graph_def_is_a_graphdef_message(tf):
    a = tf.add(3, 5)
    gd = tf.get_default_graph().as_graph_def()
    assert isinstance(gd, tf.GraphDef)
    assert [n.name for n in gd.node] == ["Add/x", "Add/y", "Add"]
    assert gd.node[2].op == "AddV2" and list(gd.node[2].input) == ["Add/x", "Add/y"]
    assert gd.node[2].attr["T"].type == tf.int32.as_datatype_enum
    nd = a.op.node_def
    assert isinstance(nd, tf.NodeDef) and nd.name == "Add" and nd.op == "AddV2"
    # Text format, and the wire format, read back.
    again = text_format.Parse(str(gd), tf.GraphDef())
    assert again == gd
    assert tf.GraphDef.FromString(gd.SerializeToString()) == gd
    assert 'name: "Add"' in str(nd)


def test_graph_def_names_match_tensorflow():
    def names(tf):
        build_model(tf)
        gd = tf.get_default_graph().as_graph_def()
        return sorted((n.name, n.op) for n in gd.node)
    ours, theirs = run_both(names)
    # Constants may differ (reductions build their axis inputs differently); the rest is the same.
    assert [n for n in ours if n[1] != "Const"] == [n for n in theirs if n[1] != "Const"]


def _run(sess_tf, g, fetch_names, feed):
    with g.as_default(), sess_tf.Session(graph=g) as sess:
        return sess.run(fetch_names, feed)


def test_tensorflow_graph_def_runs_on_dflow(tf):
    rtf = real_tf()
    g = rtf.Graph()
    with g.as_default():
        x, outs = build_model(rtf)
        data = g.as_graph_def().SerializeToString()
    names = [t.name for t in outs]
    want = _run(rtf, g, names, {"x:0": X})

    # From the bytes, from TensorFlow's own message object, and into a prefix.
    with tf.Graph().as_default() as dg:
        assert tf.import_graph_def(tf.GraphDef.FromString(data), name="") is None
        got = _run(tf, dg, names, {"x:0": X})
    assert_same(got, want)
    with tf.Graph().as_default() as dg:
        ret = tf.import_graph_def(g.as_graph_def(), return_elements=names + ["x:0", "h"])
        assert [t.name for t in ret[:-1]] == ["import/" + n for n in names + ["x:0"]]
        assert isinstance(ret[-1], tf.Operation) and ret[-1].name == "import/h"
        with tf.Session() as sess:
            got = sess.run(ret[:len(names)], {ret[len(names)]: X})
    assert_same(got, want)


def test_dflow_graph_def_runs_on_tensorflow(tf):
    x, outs = build_model(tf)
    names = [t.name for t in outs]
    with tf.Session() as sess:
        ours = sess.run(outs, {x: X})
    rtf = real_tf()
    data = tf.get_default_graph().as_graph_def().SerializeToString()
    with rtf.Graph().as_default() as g:
        ret = rtf.import_graph_def(rtf.GraphDef.FromString(data), return_elements=names)
        with rtf.Session() as sess:
            theirs = sess.run(ret, {"import/x:0": X})
    assert_same(ours, theirs)
    # And back: TensorFlow's export of the imported graph imports into dflow again.
    data2 = g.as_graph_def().SerializeToString()
    with tf.Graph().as_default() as dg:
        ret = tf.import_graph_def(tf.GraphDef.FromString(data2), return_elements=["import/" + n for n in names], name="again")
        with tf.Session() as sess:
            assert_same(sess.run(ret, {"again/import/x:0": X}), theirs)


def test_import_prefixes_like_tensorflow():
    def run(tf):
        with tf.Graph().as_default() as src:
            a = tf.placeholder(tf.float32, [], name="a")
            tf.add(a, 1.0, name="b")
        gd = src.as_graph_def()
        out = []
        with tf.name_scope("outer"):
            out.append(tf.import_graph_def(gd, return_elements=["b:0"])[0].name)
        out.append(tf.import_graph_def(gd, return_elements=["b:0"])[0].name)
        out.append(tf.import_graph_def(gd, return_elements=["b:0"])[0].name)
        out.append(tf.import_graph_def(gd, return_elements=["b:0"], name="mine")[0].name)
        out.append(tf.import_graph_def(gd, return_elements=["b:0"], name="")[0].name)
        out.append(tf.add(1, 2, name="b").name)  # a name the import took is made unique
        return out
    ours, theirs = run_both(run)
    assert ours == theirs


def test_input_map_and_control_inputs():
    def run(tf):
        with tf.Graph().as_default() as src:
            a = tf.placeholder(tf.float32, [2], name="a")
            k = tf.constant([10.0, 20.0], name="k")
            two = tf.constant(2.0, name="two")
            with tf.control_dependencies([k.op]):
                out = tf.multiply(a, two, name="out")
            tf.add(out, k, name="sum")
        gd = src.as_graph_def()
        v = tf.constant([1.0, 2.0], name="v")
        got = tf.import_graph_def(gd, input_map={"a:0": v}, return_elements=["sum:0", "out", "a:0"])
        assert got[2] is v
        with tf.Session() as sess:
            return sess.run(got[0]), [i.name for i in got[1].inputs], [c.name for c in got[1].control_inputs]
    ours, theirs = run_both(run)
    assert_same(ours, theirs)


def test_import_errors_match_tensorflow():
    def run(tf):
        with tf.Graph().as_default() as src:
            a = tf.placeholder(tf.float32, [], name="a")
            tf.identity(a, name="b")
        gd = src.as_graph_def()
        v = tf.constant(1.0)
        errs = []
        for kwargs in ({"input_map": {"nope:0": v}}, {"return_elements": ["nope:0"]},
                       {"return_elements": ["nope"]}):
            try:
                tf.import_graph_def(gd, **kwargs)
                errs.append(None)
            except Exception as e:  # noqa: BLE001 - the class is what is compared
                errs.append(type(e).__name__)
        for bad in ({"a:0": "text"}, {"a:0": tf.constant("s")}, {"a:0": v.op}, ["a:0"], {1: v}):
            try:
                tf.import_graph_def(gd, input_map=bad)
                errs.append(None)
            except Exception as e:  # noqa: BLE001
                errs.append(type(e).__name__)
        for bad in ("not a graph", gd.SerializeToString()):
            try:
                tf.import_graph_def(bad)
                errs.append(None)
            except Exception as e:  # noqa: BLE001
                errs.append(type(e).__name__)
        return errs
    ours, theirs = run_both(run)
    assert ours == theirs
    assert all(e is not None for e in ours)


def test_bad_graph_defs_raise_value_error(tf):
    gd = tf.GraphDef()
    n = gd.node.add()
    n.name, n.op = "x", "NoSuchOp"
    with pytest.raises(ValueError, match="NoSuchOp"):
        tf.import_graph_def(gd)
    gd = tf.GraphDef()
    n = gd.node.add()
    n.name, n.op = "y", "Identity"
    n.input.append("missing")
    n.attr["T"].type = tf.float32.as_datatype_enum
    with pytest.raises(ValueError, match="missing"):
        tf.import_graph_def(gd)
    # Nothing was added by the failed imports.
    assert tf.get_default_graph().get_operations() == []


def test_write_graph_text_and_binary(tf, tmp_path):
    x, outs = build_model(tf)
    names = [t.name for t in outs]
    with tf.Session() as sess:
        ours = sess.run(outs, {x: X})
    d = str(tmp_path / "logs" / "nested")
    p_txt = tf.train.write_graph(tf.get_default_graph(), d, "g.pbtxt")
    p_bin = tf.io.write_graph(tf.get_default_graph().as_graph_def(), d, "g.pb", as_text=False)
    assert p_txt == os.path.join(d, "g.pbtxt") and os.path.exists(p_bin)
    assert sorted(os.listdir(d)) == ["g.pb", "g.pbtxt"]  # no temporary files left
    rtf = real_tf()
    for path, as_text in ((p_txt, True), (p_bin, False)):
        with open(path, "rb") as f:
            data = f.read()
        gd = rtf.GraphDef()
        if as_text:
            text_format.Parse(data.decode(), gd)
        else:
            gd.ParseFromString(data)
        with rtf.Graph().as_default():
            ret = rtf.import_graph_def(gd, return_elements=names, name="")
            with rtf.Session() as sess:
                assert_same(sess.run(ret, {"x:0": X}), ours)
    # TensorFlow's own write_graph output reads back into dflow.
    with rtf.Graph().as_default() as g:
        build_model(rtf)
        p = rtf.train.write_graph(g, d, "tf.pbtxt")
    from dflow.framework import graph_io
    gd = graph_io.read_graph(p)
    with tf.Graph().as_default():
        ret = tf.import_graph_def(gd, return_elements=names, name="")
        with tf.Session() as sess:
            assert_same(sess.run(ret, {"x:0": X}), ours)
