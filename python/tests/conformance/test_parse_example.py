"""ParseExample / ParseExampleV2 / ParseSingleExample against real TensorFlow: graphs that
TensorFlow builds (tf.io.parse_example, tf.raw_ops) run in both on the same serialized
tf.train.Example strings; dense features with and without defaults, variable-length dense, sparse
(VarLenFeature), empty batches, scalar and 2-D batches, the first of a repeated feature, and the
errors (missing required feature, wrong type, wrong count, bytes that are not an Example) by class
and message. The Python API (tf.train.Example, tf.io.parse_example, FixedLenFeature, ...) is
compared through run_both."""
import random
import re

import numpy as np
import pytest

from tfref import dflow, real_tf, run_dflow, run_tf, tf_graph_def
from conftest import assert_same, run_both

FEATURES = {
    "a": ("FixedLen", [2], "float32", None),
    "b": ("FixedLen", [], "int64", 7),
    "m": ("FixedLen", [2, 3], "float32", [[0.5] * 3] * 2),
    "s": ("FixedLen", [], "string", "none"),
    "c": ("VarLen", None, "string", None),
    "i": ("VarLen", None, "int64", None),
    "f": ("VarLen", None, "float32", None),
    "d": ("Sequence", [], "int64", None),
    "q": ("Sequence", [2], "float32", -1.0),
}


def spec(tf, features=FEATURES):
    out = {}
    for k, (kind, shape, dt, default) in features.items():
        d = getattr(tf, dt)
        if kind == "FixedLen":
            out[k] = tf.io.FixedLenFeature(shape, d, default_value=default)
        elif kind == "VarLen":
            out[k] = tf.io.VarLenFeature(d)
        else:
            out[k] = tf.io.FixedLenSequenceFeature(shape, d, allow_missing=True, default_value=default)
    return out


def example(tf, **values):
    """A serialized tf.train.Example of `tf` (TensorFlow's or dflow's classes)."""
    feats = {}
    for k, v in values.items():
        typed = FEATURES.get(k, (None, None, None))[2]
        if v is None:
            feats[k] = tf.train.Feature()
        elif not v and typed in ("float32", "int64"):  # an empty list of the feature's own type
            lst = tf.train.FloatList() if typed == "float32" else tf.train.Int64List()
            feats[k] = tf.train.Feature(**{"float_list" if typed == "float32" else "int64_list": lst})
        elif all(isinstance(x, float) for x in v) and v:
            feats[k] = tf.train.Feature(float_list=tf.train.FloatList(value=v))
        elif all(isinstance(x, int) for x in v) and v:
            feats[k] = tf.train.Feature(int64_list=tf.train.Int64List(value=v))
        else:
            feats[k] = tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
    return tf.train.Example(features=tf.train.Features(feature=feats)).SerializeToString()


def _varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])


def ordered_example(tf, **values):
    """example() with its map entries in sorted key order (protobuf's own map order follows the
    process's string hashing), so that byte positions are the same from run to run."""
    inner = b""
    for k in sorted(values):
        one = example(tf, **{k: values[k]})
        assert one[0] == 0x0A and one[1] < 0x80
        inner += one[2:]
    return b"\x0a" + _varint(len(inner)) + inner


def full(tf, e):
    """An example with every required feature, plus a per-example variation."""
    vals = dict(a=[1.0 + e, -2.5], m=[float(e * 6 + k) for k in range(6)], c=[b"x%d" % e] * (e % 3),
                i=list(range(e % 4)), d=[e] * (e % 5), q=[0.25 * e, 1.0] * (e % 2))
    if e % 2:
        vals["s"] = [b"s%d" % e]
    return example(tf, **vals)


def named(out):
    """Parse outputs with each SparseTensor as its (indices, values, dense_shape) tensors."""
    return {k: (v.indices, v.values, v.dense_shape) if hasattr(v, "dense_shape") else v for k, v in out.items()}


def parse_graph(batch_shape=(None,), features=FEATURES):
    def build(tf):
        s = tf.placeholder(tf.string, list(batch_shape), name="serialized")
        return s, named(tf.io.parse_example(s, spec(tf, features)))
    return tf_graph_def(build)


def compare(gd, fetches, feeds):
    want = run_tf(gd, fetches, feeds)
    got = run_dflow(gd, fetches, feeds)
    assert_same(got, want)
    return got


def test_graph_is_parse_example_v2():
    gd, (_, out) = parse_graph()
    g = dflow.GraphDef.FromString(gd)
    assert [n.op for n in g.node].count("ParseExampleV2") == 1
    assert out["a"].startswith("ParseExample/ParseExampleV2:")


def test_dense_sparse_defaults_and_sequences_match_tensorflow():
    tf = real_tf()
    gd, (s, out) = parse_graph()
    batch = [full(tf, e) for e in range(7)]
    got = compare(gd, out, {s: batch})
    assert got["a"].shape == (7, 2) and got["m"].shape == (7, 2, 3)
    assert list(got["b"]) == [7] * 7  # the default everywhere
    # missing optional features: defaults; s present only in odd examples
    assert list(got["s"]) == [b"none" if e % 2 == 0 else b"s%d" % e for e in range(7)]


def test_empty_batch_and_all_missing_optional():
    tf = real_tf()
    gd, (s, out) = parse_graph()
    compare(gd, out, {s: []})
    only_required = {k: v for k, v in FEATURES.items() if k in ("a", "m", "c", "d")}
    gd2, (s2, out2) = parse_graph(features=only_required)
    compare(gd2, out2, {s2: [example(tf, a=[1.0, 2.0], m=[0.0] * 6)] * 3})


def test_scalar_batch_and_single_example_errors():
    tf = real_tf()
    gd, (s, out) = parse_graph(batch_shape=())
    compare(gd, out, {s: full(tf, 3)})
    for bad in (example(tf, m=[0.0] * 6), example(tf, a=[1.0], m=[0.0] * 6),
                example(tf, a=[1.0, 2.0], m=[0.0] * 6, s=[b"x", b"y"]),
                example(tf, a=[1.0, 2.0], m=[0.0] * 6, i=[b"x"]),
                example(tf, a=[1.0, 2.0], m=[0.0] * 6, q=[1.0, 2.0, 3.0])):
        want_cls, want_msg = _error(run_tf, gd, out, {s: bad})
        got_cls, got_msg = _error(run_dflow, gd, out, {s: bad})
        assert want_cls == got_cls == "InvalidArgumentError", (want_msg, got_msg)
        assert tf_core(want_msg) in got_msg, (want_msg, got_msg)


def test_matrix_batch_rejected_as_in_tensorflow():
    """TensorFlow's ParseExampleV2 takes a scalar or a vector: a [2, 3] batch fails in both."""
    def build(tf):
        s = tf.placeholder(tf.string, None, name="serialized")
        out = tf.raw_ops.ParseExampleV2(
            serialized=s, names=[], sparse_keys=[], dense_keys=["a"], ragged_keys=[],
            dense_defaults=[tf.constant([], tf.float32)], num_sparse=0, sparse_types=[], ragged_value_types=[],
            ragged_split_types=[], dense_shapes=[[2]])
        return s, out.dense_values[0]
    gd, (s, out) = tf_graph_def(build)
    tf = real_tf()
    grid = np.array([[example(tf, a=[1.0, 2.0])] * 3] * 2, dtype=object)
    want_cls, want_msg = _error(run_tf, gd, out, {s: grid})
    got_cls, got_msg = _error(run_dflow, gd, out, {s: grid})
    assert want_cls == got_cls == "InvalidArgumentError", (want_msg, got_msg)
    assert "Expected serialized to be a scalar or vector, got shape: [2,3]" in got_msg


def test_parse_single_example_graph():
    tf = real_tf()

    def build(tf):
        s = tf.placeholder(tf.string, [], name="serialized")
        return s, named(tf.io.parse_single_example(s, spec(tf)))
    gd, (s, out) = tf_graph_def(build)
    compare(gd, out, {s: full(tf, 4)})


def test_v1_and_single_example_ops():
    tf = real_tf()

    def build(tf):
        s = tf.placeholder(tf.string, [None])
        one = tf.placeholder(tf.string, [])
        v1 = tf.raw_ops.ParseExample(
            serialized=s, names=[], sparse_keys=["c", "i"], dense_keys=["a", "b"],
            dense_defaults=[tf.constant([], tf.float32), tf.constant(3, tf.int64)],
            sparse_types=[tf.string, tf.int64], dense_shapes=[[2], []])
        single = tf.raw_ops.ParseSingleExample(
            serialized=one, dense_defaults=[tf.constant([9.0, 8.0])], num_sparse=1, sparse_keys=["f"],
            dense_keys=["a"], sparse_types=[tf.float32], dense_shapes=[[2]])
        return s, one, list(v1), list(single)
    gd, (s, one, v1, single) = tf_graph_def(build)
    feeds = {s: [full(tf, e) for e in range(4)], one: example(tf, f=[1.5, 2.5, 3.5])}
    compare(gd, [v1, single], feeds)


def test_last_occurrence_wins_and_empty_feature():
    tf = real_tf()
    gd, (s, out) = parse_graph()
    first = full(tf, 1)
    again = example(tf, a=[9.0, 9.0], b=[5], c=[b"late"])
    empty = example(tf, a=[1.0, 2.0], m=[0.0] * 6, b=None, c=None, d=None)
    compare(gd, out, {s: [first + again, empty]})


def tf_core(msg):
    """The op's own message inside TensorFlow's "Graph execution error" text."""
    lines = msg.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.startswith("Node: "):
            return lines[i + 1].strip()
    return lines[0].strip()


def _error(run, gd, fetches, feeds):
    try:
        run(gd, fetches, feeds)
    except UnicodeDecodeError as e:
        # TensorFlow's InvalidArgument text holds the raw bytes, which its Python cannot decode.
        return "InvalidArgumentError", str(e)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__, getattr(e, "message", str(e))
    return None, None


@pytest.mark.parametrize("case", ["missing", "type", "count", "stride", "sparse_type", "bad_bytes", "names"])
def test_errors_match_tensorflow(case):
    tf = real_tf()
    good = full(tf, 1)
    batch = {
        "missing": [good, example(tf, m=[0.0] * 6)],
        "type": [good, example(tf, a=[1, 2], m=[0.0] * 6)],
        "count": [good, example(tf, a=[1.0, 2.0, 3.0], m=[0.0] * 6)],
        "stride": [example(tf, a=[1.0, 2.0], m=[0.0] * 6, q=[1.0, 2.0, 3.0])],
        "sparse_type": [example(tf, a=[1.0, 2.0], m=[0.0] * 6, i=[1.5])],
        "bad_bytes": [good, b"\x0a\x05\x0a\x03ab"],
        "names": [good],
    }[case]
    if case == "names":
        def build(tf):
            s = tf.placeholder(tf.string, [None])
            return s, named(tf.io.parse_example(s, spec(tf), example_names=["one", "two"]))
        gd, (s, out) = tf_graph_def(build)
    else:
        gd, (s, out) = parse_graph()
    want_cls, want_msg = _error(run_tf, gd, out, {s: batch})
    got_cls, got_msg = _error(run_dflow, gd, out, {s: batch})
    assert want_cls == "InvalidArgumentError", want_msg
    assert got_cls == want_cls, got_msg
    if case == "bad_bytes":
        assert "Could not parse example input, value: '" in got_msg
    elif case == "names":
        assert "names" in got_msg
    else:
        assert tf_core(want_msg) in got_msg, (got_msg, want_msg)


def test_random_examples_match_tensorflow():
    tf = real_tf()
    rng = random.Random(16)
    gd, (s, out) = parse_graph(features={k: v for k, v in FEATURES.items() if k not in ("a", "m")})
    batch = []
    for _ in range(60):
        vals = {}
        if rng.random() < 0.5:
            vals["b"] = [rng.randint(-2**62, 2**62)]
        if rng.random() < 0.5:
            vals["s"] = [bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 5)))]
        for k in ("c",):
            if rng.random() < 0.7:
                vals[k] = [bytes([rng.randint(0, 255)]) * rng.randint(0, 3) for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.7:
            vals["i"] = [rng.randint(-2**63, 2**63 - 1) for _ in range(rng.randint(1, 5))]
        if rng.random() < 0.7:
            vals["f"] = [rng.uniform(-1e30, 1e30) for _ in range(rng.randint(1, 5))]
        if rng.random() < 0.7:
            vals["d"] = [rng.randint(-9, 9) for _ in range(rng.randint(1, 6))]
        if rng.random() < 0.7:
            vals["q"] = [rng.uniform(-5, 5) for _ in range(2 * rng.randint(1, 3))]
        vals["junk"] = [1.0]
        batch.append(example(tf, **vals))
    compare(gd, out, {s: batch})


def test_corrupted_bytes_fail_or_parse_alike():
    """Truncations and byte flips of a valid Example: either both parse to the same values or both
    reject the input with InvalidArgument."""
    tf = real_tf()
    gd, (s, out) = parse_graph(features={k: v for k, v in FEATURES.items() if k not in ("a", "m")})
    rng = random.Random(7)
    base = ordered_example(tf, b=[3], c=[b"abc", b"d"], i=[1, 300, -5], f=[0.5], d=[1, 2], q=[1.0, 2.0],
                           s=[b"t"])
    cases = [base[:n] for n in range(0, len(base), 3)]
    for _ in range(40):
        b = bytearray(base)
        b[rng.randrange(len(b))] = rng.randrange(256)
        cases.append(bytes(b))
    for c in cases:
        want_cls, _ = _error(run_tf, gd, out, {s: [c]})
        got_cls, got_msg = _error(run_dflow, gd, out, {s: [c]})
        assert got_cls == want_cls, (c, got_msg)
        if want_cls is None:
            compare(gd, out, {s: [c]})


# ---- the Python API ----

def test_example_messages_are_tensorflows_bytes():
    tf = real_tf()
    for vals in ({"a": [1.5, -2.0]}, {"i": [1, -1, 2**40]}, {"c": [b"x", b"", b"\xff"]}, {"e": None}):
        assert example(dflow, **vals) == example(tf, **vals)
    many = dict(a=[1.0], i=[3], c=[b"z"])
    assert tf.train.Example.FromString(example(dflow, **many)) == tf.train.Example.FromString(example(tf, **many))
    parsed = dflow.train.Example.FromString(example(tf, **many))
    assert list(parsed.features.feature["i"].int64_list.value) == [3]


def test_python_api_against_tensorflow():
    tf = real_tf()
    batch = [full(tf, e) for e in range(5)]

    def build(m):
        s = m.placeholder(m.string, [None])
        out = m.io.parse_example(s, spec(m))
        one = m.io.parse_single_example(batch[2], spec(m))
        dense_c = m.sparse.to_dense(out["c"], default_value="")
        with m.Session() as sess:
            return sess.run([out, one, dense_c], {s: batch})
    got, want = run_both(build)
    assert_same(got, want)


def test_python_api_graph_matches_tensorflow():
    def build(m):
        s = m.placeholder(m.string, [None], name="serialized")
        m.io.parse_example(s, spec(m))
        # Reshape's shape constants are left out: TensorFlow makes one more for a reshape to [].
        shape_const = re.compile(r".*/shape(_\d+)?$")
        return sorted((n.name, n.op, tuple(i for i in n.input if not shape_const.match(i)))
                      for n in m.get_default_graph().as_graph_def().node if not shape_const.match(n.name))
    got, want = run_both(build)
    assert got == want


def test_python_spec_errors_match_tensorflow():
    def build(m):
        msgs = []
        for features in ({"a": m.io.FixedLenFeature([None], m.float32)},
                         {"a": m.io.FixedLenSequenceFeature([], m.float32)},
                         {"a": m.io.FixedLenFeature(None, m.float32)}):
            try:
                m.io.parse_example(m.placeholder(m.string, [None]), features)
                msgs.append(None)
            except ValueError as e:
                msgs.append(str(e))
        return msgs
    got, want = run_both(build)
    assert got == want


def test_make_parse_example_spec_matches_tensorflow():
    def build(m):
        fc = m.feature_column
        cols = [fc.numeric_column("x", shape=(2,)), fc.numeric_column("y", default_value=1.5),
                fc.categorical_column_with_vocabulary_list("v", ["a", "b"]),
                fc.categorical_column_with_hash_bucket("h", 10, dtype=m.int64),
                fc.bucketized_column(fc.numeric_column("z"), [0.0]),
                fc.indicator_column(fc.categorical_column_with_identity("i", 4)),
                fc.embedding_column(fc.categorical_column_with_vocabulary_list("w", ["p", "q"]), 2)]
        spec = fc.make_parse_example_spec(cols)
        return {k: (type(v).__name__, m.as_dtype(v.dtype).name, tuple(getattr(v, "shape", ()) or ()),
                    getattr(v, "default_value", None)) for k, v in spec.items()}
    got, want = run_both(build)
    assert got == want


def test_feature_columns_read_parsed_examples_as_tensorflow():
    """make_parse_example_spec → parse_example → input_layer: VarLenFeatures (SparseTensors) feed
    categorical columns as in TensorFlow, examples with no, one or several values."""
    tf = real_tf()
    rows = [dict(x=[1.5, -2.0], v=[b"a"], i=[2], h=[b"q"]), dict(x=[0.0, 1.0], v=[b"b", b"zz"], i=[], h=[]),
            dict(x=[3.0, 3.0], v=[], i=[0, 3], h=[b"q", b"r"])]

    def build(m):
        fc = m.feature_column
        cols = [fc.numeric_column("x", shape=(2,)),
                fc.indicator_column(fc.categorical_column_with_vocabulary_list("v", ["a", "b"], num_oov_buckets=1)),
                fc.indicator_column(fc.categorical_column_with_identity("i", 4)),
                fc.indicator_column(fc.categorical_column_with_hash_bucket("h", 5))]
        batch = []
        for r in rows:
            feats = {"x": m.train.Feature(float_list=m.train.FloatList(value=r["x"])),
                     "v": m.train.Feature(bytes_list=m.train.BytesList(value=r["v"])),
                     "i": m.train.Feature(int64_list=m.train.Int64List(value=r["i"])),
                     "h": m.train.Feature(bytes_list=m.train.BytesList(value=r["h"]))}
            batch.append(m.train.Example(features=m.train.Features(feature=feats)).SerializeToString())
        s = m.placeholder(m.string, [None])
        features = m.io.parse_example(s, fc.make_parse_example_spec(cols))
        out = fc.input_layer(features, cols)
        with m.Session() as sess:
            sess.run([m.global_variables_initializer(), m.tables_initializer()])
            return sess.run(out, {s: batch})
    got, want = run_both(build)
    assert_same(got, want)
    assert tf is not None


def test_bytes_feeds_keep_trailing_nuls():
    def build(m):
        s = m.placeholder(m.string, [None])
        with m.Session() as sess:
            return list(sess.run(m.identity(s), {s: [b"a\x00\x00", b"\x00", b"b"]}))
    got, want = run_both(build)
    assert got == want == [b"a\x00\x00", b"\x00", b"b"]


def test_estimator_export_with_categorical_columns_parses_in_both(tmp_path):
    """A canned estimator with a categorical column exported with a parsing receiver (a VarLenFeature
    becomes a SparseTensor feature): TensorFlow and dflow load it and score serialized Examples as
    the estimator predicts."""
    tf = real_tf()
    rng = np.random.RandomState(0)
    x = rng.randn(60, 2).astype(np.float32)
    c = np.array([[b"a"], [b"b"], [b"c"]] * 20)
    y = ((x[:, 0] > 0) ^ (c[:, 0] == b"b")).astype(np.int64)
    fc = dflow.feature_column
    cols = [fc.numeric_column("x", shape=[2]), fc.indicator_column(fc.categorical_column_with_hash_bucket("c", 5))]
    est = dflow.estimator.DNNClassifier([4], cols, model_dir=str(tmp_path / "m"),
                                        config=dflow.estimator.RunConfig(tf_random_seed=3))
    est.train(lambda: dflow.data.Dataset.from_tensor_slices(({"x": x, "c": c}, y)).repeat().batch(30), steps=10)
    spec = fc.make_parse_example_spec(cols)
    assert type(spec["c"]).__name__ == "VarLenFeature"
    path = est.export_saved_model(str(tmp_path / "export"),
                                  dflow.estimator.export.build_parsing_serving_input_receiver_fn(spec)).decode()
    preds = list(est.predict(lambda: dflow.data.Dataset.from_tensor_slices({"x": x[:6], "c": c[:6]}).batch(6)))
    probs = np.stack([p["probabilities"] for p in preds])
    serialized = [tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=x[i].tolist())),
        "c": tf.train.Feature(bytes_list=tf.train.BytesList(value=[c[i, 0]]))})).SerializeToString()
        for i in range(6)]
    for m in (tf, dflow):
        with m.Graph().as_default(), m.Session() as sess:
            meta = m.saved_model.loader.load(sess, ["serve"], path)
            sig = meta.signature_def["serving_default"]
            scores = sess.run(sig.outputs["scores"].name, {sig.inputs["inputs"].name: serialized})
            assert_same(scores, probs)


def test_constant_batches_from_python_lists():
    """Serialized Examples given as Python bytes (a Const: trailing NULs of float values kept)."""
    def build(m):
        b = [full(m, e) for e in range(3)]
        out = m.io.parse_example(b, spec(m))
        one = m.parse_single_example(b[1], spec(m))
        with m.Session() as sess:
            return sess.run([out, one])
    got, want = run_both(build)
    assert_same(got, want)
