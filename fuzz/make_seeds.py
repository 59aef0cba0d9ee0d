#!/usr/bin/env python3
"""Writes the seed corpora fuzz/corpus/<target>/ from the project's test data (testdata/tf/) and
small inputs made here with TensorFlow and NumPy (the writers dflow must read), so that each
fuzz target starts from well-formed bytes of its format.

Usage: python3 fuzz/make_seeds.py   (needs tensorflow-cpu and numpy, as scripts/install-deps.sh
pins them; rerun only to change the seeds: the corpora are committed.)
"""
import io
import json
import os
import pathlib
import re
import shutil
import struct
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata" / "tf"
CORPUS = ROOT / "fuzz" / "corpus"
tf1 = tf.compat.v1


def put(target, name, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


# ---- CRC32C (TFRecord framing) ----
def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data):
    head = struct.pack("<Q", len(data))
    return head + struct.pack("<I", masked_crc(head)) + data + struct.pack("<I", masked_crc(data))


def read_records(data):
    out, off = [], 0
    while off + 12 <= len(data):
        (n,) = struct.unpack_from("<Q", data, off)
        out.append(data[off + 12: off + 12 + n])
        off += 16 + n
    return out


# ---- protobuf wire format, for RecvTensorChunk (our own message) ----
def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field(num, wire, payload):
    if wire == 0:
        return varint(num << 3) + varint(payload)
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def valid_names(library):
    """TF 2 names its functions "__inference_f_50"; dflow's function names follow its node names
    (no leading underscore), so the seeds use "fn_inference_f_50"."""
    for f in library.function:
        f.signature.name = "fn_" + re.sub(r"[^A-Za-z0-9_]", "", f.signature.name.lstrip("_"))
        for n in f.node_def:  # attrs newer than dflow's MatMul (TF 2.18's grad_a, grad_b)
            for k in ("grad_a", "grad_b"):
                if k in n.attr and n.op == "MatMul":
                    del n.attr[k]
    return library


def graphs():
    for f in sorted(TESTDATA.glob("*.pb")):
        put("graph_def", f.name, f.read_bytes())
    # Control flow v1 (while loop, cond), as TF 1.x graphs have it.
    g = tf.Graph()
    with g.as_default():
        tf1.disable_control_flow_v2()
        x = tf1.placeholder(tf.float32, [None, 3], name="x")
        i = tf.constant(0)
        _, acc = tf1.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * 2.0), [i, x])
        p = tf1.placeholder(tf.bool, [], name="p")
        y = tf1.cond(p, lambda: tf.nn.relu(acc), lambda: tf.reduce_sum(acc, axis=1, keepdims=True))
        tf.identity(y, name="y")
    put("graph_def", "while_cond.pb", g.as_graph_def().SerializeToString())
    tf1.enable_control_flow_v2()
    # A graph that calls a function from its library.
    g = tf.Graph()
    with g.as_default():
        @tf.function(input_signature=[tf.TensorSpec([2, 2], tf.float32)], autograph=False)
        def f(a):
            return tf.matmul(a, a) + 1.0

        a = tf1.placeholder(tf.float32, [2, 2], name="a")
        tf.identity(f(a), name="out")
    gd = g.as_graph_def()
    valid_names(gd.library)
    # The call becomes an Identity and the library stays: the seed feeds the importer and the
    # function library's conversion (PartitionedCall itself is checked by
    # python/tests/conformance/test_function_call.py).
    for n in gd.node:
        if n.op in ("StatefulPartitionedCall", "PartitionedCall"):
            n.op = "Identity"
            for k in list(n.attr):
                del n.attr[k]
            n.attr["T"].type = tf.float32.as_datatype_enum
    put("graph_def", "function_library.pb", gd.SerializeToString())
    put("function_def", "matmul_add.pb", gd.library.SerializeToString())
    # A meta graph's GraphDef (Saver ops).
    meta = tf1.MetaGraphDef()
    meta.ParseFromString((TESTDATA / "checkpoint_v2_regression" / "model.meta").read_bytes())
    put("graph_def", "checkpoint_meta_graph.pb", meta.graph_def.SerializeToString())


def functions():
    for name, fn, spec in [
        ("relu_sum", lambda x: tf.reduce_sum(tf.nn.relu(x)), [tf.TensorSpec([None], tf.float32)]),
        ("two_results", lambda x, y: (x * y, x - y), [tf.TensorSpec([3], tf.int32)] * 2),
        ("cast_concat", lambda x: tf.concat([tf.cast(x, tf.float32), tf.ones([2])], 0),
         [tf.TensorSpec([2], tf.int64)]),
    ]:
        g = tf.Graph()
        with g.as_default():
            tf.function(fn, input_signature=spec, autograph=False).get_concrete_function().add_to_graph(g)
        put("function_def", name + ".pb", valid_names(g.as_graph_def().library).SerializeToString())


def tensor_protos():
    values = {
        "float_2x3": np.arange(6, dtype=np.float32).reshape(2, 3),
        "double_scalar": np.float64(2.5),
        "int32_vec": np.array([1, -2, 3], np.int32),
        "int64_vec": np.array([1 << 40, -7], np.int64),
        "uint8_2x2": np.array([[0, 255], [7, 8]], np.uint8),
        "bool_vec": np.array([True, False, True]),
        "string_vec": np.array([b"a", b"", b"hello"], object),
        "empty_0x4": np.zeros([0, 4], np.float32),
    }
    for name, v in values.items():
        put("tensor_proto", name + ".pb", tf.make_tensor_proto(v).SerializeToString())
    # One value repeated to fill the shape, and typed *_val fields instead of tensor_content.
    put("tensor_proto", "fill_float_4.pb", tf.make_tensor_proto(3.0, shape=[4]).SerializeToString())
    p = tf.make_tensor_proto(np.array([1, 2, 3], np.int32))
    p.ClearField("tensor_content")
    p.int_val.extend([1, 2, 3])
    put("tensor_proto", "int32_int_val.pb", p.SerializeToString())


def npy():
    arrays = {
        "f4_2x3": np.arange(6, dtype="<f4").reshape(2, 3),
        "f8_scalar": np.array(1.5, "<f8"),
        "i4_vec": np.array([1, 2, 3], "<i4"),
        "i8_empty": np.zeros([0], "<i8"),
        "u1_2x2": np.array([[1, 2], [3, 4]], "|u1"),
        "b1_vec": np.array([True, False]),
    }
    for name, a in arrays.items():
        buf = io.BytesIO()
        np.save(buf, a)
        put("npy", name + ".npy", buf.getvalue())
    for version in [(2, 0), (3, 0)]:
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.arange(4, dtype="<f4"), version=version)
        put("npy", "f4_v%d.npy" % version[0], buf.getvalue())


def checkpoint_bundle(prefix):
    index = pathlib.Path(prefix + ".index").read_bytes()
    datas = sorted(pathlib.Path(prefix).parent.glob(pathlib.Path(prefix).name + ".data-*"))
    data = datas[0].read_bytes() if datas else b""
    return index, data


def checkpoints():
    ckpts = [("tf111_regression", str(TESTDATA / "checkpoint_v2_regression" / "model"))]
    tmp = tempfile.mkdtemp()
    try:
        g = tf.Graph()
        with g.as_default():
            tf1.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
            tf1.Variable(np.int64(7), name="step")
            tf1.Variable(np.array([b"a", b"bc"], object), name="words", dtype=tf.string)
            tf1.get_variable("part", shape=[4, 2], partitioner=tf1.fixed_size_partitioner(2),
                             initializer=tf1.ones_initializer())
            saver = tf1.train.Saver()
            with tf1.Session() as sess:
                sess.run(tf1.global_variables_initializer())
                saver.save(sess, os.path.join(tmp, "mixed"))
        ckpts.append(("tf_mixed", os.path.join(tmp, "mixed")))
        for name, prefix in ckpts:
            index, data = checkpoint_bundle(prefix)
            put("checkpoint_index", name + ".index", index)
            put("checkpoint", name + ".bin", struct.pack("<I", len(index)) + index + data)
    finally:
        shutil.rmtree(tmp)


def events_and_records():
    lingvo = (TESTDATA / "lingvo_events.out.tfevents.test").read_bytes()
    put("events", "lingvo_first_20.tfevents", b"".join(record(r) for r in read_records(lingvo)[:20]))
    tmp = tempfile.mkdtemp()
    try:
        w = tf.summary.create_file_writer(tmp)
        with w.as_default():  # TF 2 scalars: tensors of one element
            tf.summary.write("loss", tf.constant(0.25), step=3)
            tf.summary.write("acc", tf.constant(0.5, tf.float64), step=4)
            tf.summary.write("text", tf.constant("hello"), step=5)
        w.flush()
        w.close()
        g = tf.Graph()
        with g.as_default():  # TF 1 summaries: simple_value, histograms
            s1 = tf1.summary.scalar("lr", tf.constant(0.1))
            s2 = tf1.summary.histogram("h", tf.constant([1.0, 2.0, 2.5]))
            with tf1.Session() as sess:
                fw = tf1.summary.FileWriter(os.path.join(tmp, "v1"))
                fw.add_summary(sess.run(tf1.summary.merge([s1, s2])), global_step=7)
                fw.close()
        (f,) = pathlib.Path(tmp, "v1").glob("events.out.tfevents.*")
        put("events", "tf1_summaries.tfevents", f.read_bytes())
        (f,) = pathlib.Path(tmp).glob("events.out.tfevents.*")
        put("events", "tf2_summaries.tfevents", f.read_bytes())
        path = os.path.join(tmp, "r.tfrecord")
        with tf.io.TFRecordWriter(path) as rw:
            for r in [b"", b"x", b"The Quick Brown Fox" * 3]:
                rw.write(r)
        put("tfrecord", "three_records.tfrecord", pathlib.Path(path).read_bytes())
    finally:
        shutil.rmtree(tmp)
    put("tfrecord", "rust_expected.tfrecord", (TESTDATA / "rust_expected.tfrecord").read_bytes())


def recv_tensor_chunks():
    def framed(k, messages):
        return bytes([k]) + b"".join(struct.pack("<H", len(m)) + m for m in messages)

    shape = tf.TensorShape([2, 3]).as_proto().SerializeToString()
    data = np.arange(6, dtype=np.float32).tobytes()
    head = field(1, 0, 1) + field(2, 2, shape) + field(4, 0, len(data))
    put("recv_tensor_chunks", "float_2x3_one_chunk.bin", framed(0, [head + field(5, 2, data)]))
    put("recv_tensor_chunks", "float_2x3_two_chunks.bin",
        framed(3, [head + field(5, 2, data[:8]), field(5, 2, data[8:])]))
    put("recv_tensor_chunks", "dead.bin", framed(0, [field(3, 0, 1)]))
    strings = tf.make_tensor_proto(np.array([b"ab", b"c"], object)).SerializeToString()
    put("recv_tensor_chunks", "string_as_proto.bin", framed(1, [field(6, 2, strings)]))
    scalar = field(1, 0, 9) + field(2, 2, b"") + field(4, 0, 8) + field(5, 2, struct.pack("<q", -5))
    put("recv_tensor_chunks", "int64_scalar.bin", framed(0, [scalar]))


def tf_configs():
    configs = [
        {"cluster": {"ps": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2223", "127.0.0.1:2224"]},
         "task": {"type": "worker", "index": 1}},
        {"cluster": {"chief": ["h0:1"], "worker": ["h1:2"], "ps": ["h2:3"]},
         "task": {"type": "chief", "index": 0}, "environment": "cloud", "rpc_layer": "grpc"},
        {"cluster": {"worker": {"0": "a:1", "3": "b:2"}}, "task": {"type": "worker", "index": 3.0}},
        {"cluster": {"worker": ["a:1"]}, "task": {"type": "evaluator", "index": 0, "trial": "1"}},
    ]
    for i, c in enumerate(configs):
        put("tf_config", "tf_config_%d.json" % i, json.dumps(c).encode())
    put("tf_config", "escapes.json", b'{"a": [1e3, -0.5, true, null, "\\u00e9\\ud83d\\ude00\\n"]}')
    put("tf_config", "flags.txt", b"--ps_hosts=a:1,b:2\n--worker_hosts=c:3\n--job_name=worker\n--task_index=0")


def feed_values():
    # First byte: the dtype index of fuzz_feed_value.cc (0 float, 1 double, 2 int32, 3 int64,
    # 4 uint8, 5 bool, 6 string).
    for i, (t, text) in enumerate([(0, b"[[1,2],[3,4]]"), (1, b"-1.5e-3"), (2, b"[ -2147483648, 7 ]"),
                                   (3, b"[[[1]],[[2]]]"), (4, b"[255,0]"), (5, b"[true,false]"),
                                   (6, b"some text"), (0, b"[]"), (0, b"[[],[]]")]):
        put("feed_value", "feed_%d.txt" % i, bytes([t]) + text)


def main():
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    graphs()
    functions()
    tensor_protos()
    npy()
    checkpoints()
    events_and_records()
    recv_tensor_chunks()
    tf_configs()
    feed_values()
    total = sum(f.stat().st_size for f in CORPUS.rglob("*") if f.is_file())
    print("wrote %d files, %d bytes, under %s" % (sum(1 for f in CORPUS.rglob("*") if f.is_file()), total, CORPUS))


if __name__ == "__main__":
    main()
