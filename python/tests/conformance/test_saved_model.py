"""SavedModels and MetaGraphDefs both ways with TensorFlow 2.21 (tf.compat.v1): a SavedModel written
by TensorFlow's builder runs in dflow (Python loader and `dflow run DIR --signature`), one written
by dflow runs in TensorFlow's loader, with the same results; a run resumes from the other side's
.meta file alone (import_meta_graph, restore, more training steps) on the same trajectory."""
import os
import subprocess

import numpy as np

from tfref import real_tf  # first: it puts python/tests on the path

import dflow  # noqa: E402
from conftest import BUILD, assert_same  # noqa: E402

DFLOW = os.path.join(BUILD, "bin", "dflow")
X = np.array([[1.0, 2.0], [-0.5, 3.0]], np.float32)


def dflow_cli(*args, check=True):
    p = subprocess.run([DFLOW] + [str(a) for a in args], capture_output=True, text=True, timeout=60)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def _write_saved_model(m, export_dir, asset_src):
    """A SavedModel written by module m's tf.compat.v1 builder: variables (one changed after its
    initializer ran), a predict signature, an asset file and a legacy_init_op that reads the asset
    tensor and sets a local variable. Returns the outputs m computes before the export."""
    with m.Graph().as_default():
        x = m.placeholder(m.float32, [None, 2], name="x")
        w = m.Variable([[1.0], [2.0]], name="w")
        b = m.Variable([0.5], name="b")
        c = m.Variable(0.0, name="counter", trainable=False, collections=[m.GraphKeys.LOCAL_VARIABLES])
        av = m.Variable("", name="asset_var", trainable=False, collections=[m.GraphKeys.LOCAL_VARIABLES])
        y = m.add(m.matmul(x, w), b + c, name="y")
        asset = m.constant(asset_src, name="asset_path")
        m.add_to_collection(m.GraphKeys.ASSET_FILEPATHS, asset)
        with m.control_dependencies([m.local_variables_initializer()]):
            init = m.group(m.assign(c, 3.0), m.assign(av, asset), name="legacy_init")
        tagged = m.string_join([av, "!"], name="tagged")
        with m.Session() as sess:
            sess.run(m.global_variables_initializer())
            sess.run(m.assign(w, [[3.0], [-4.0]]))
            builder = m.saved_model.builder.SavedModelBuilder(export_dir)
            sig = m.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y, "tagged": tagged})
            builder.add_meta_graph_and_variables(
                sess, [m.saved_model.tag_constants.SERVING], signature_def_map={"serving_default": sig},
                assets_collection=m.get_collection(m.GraphKeys.ASSET_FILEPATHS), legacy_init_op=init)
            builder.save()
            sess.run(init)
            return sess.run({"y": y}, {x: X})


def _load_and_run(m, export_dir):
    with m.Graph().as_default():
        with m.Session() as sess:
            meta = m.saved_model.loader.load(sess, [m.saved_model.tag_constants.SERVING], export_dir)
            sig = meta.signature_def["serving_default"]
            assert sig.method_name == "tensorflow/serving/predict"
            assert sig.inputs["x"].name == "x:0"
            return sess.run({k: v.name for k, v in sig.outputs.items()}, {sig.inputs["x"].name: X})


def _asset(tmp_path):
    src = tmp_path / "src" / "vocab.txt"
    os.makedirs(src.parent, exist_ok=True)
    src.write_text("a\nb\nc\n")
    return str(src)


def test_tensorflow_saved_model_runs_in_dflow(tmp_path):
    tf = real_tf()
    export_dir = str(tmp_path / "tf_export")
    expected = _write_saved_model(tf, export_dir, _asset(tmp_path))
    got_tf = _load_and_run(tf, export_dir)
    assert_same(got_tf["y"], expected["y"])
    assert got_tf["tagged"] == (os.path.join(export_dir, "assets", "vocab.txt") + "!").encode()
    # Python: tf.saved_model.loader.load.
    got = _load_and_run(dflow, export_dir)
    assert_same(got["y"], got_tf["y"])
    assert got["tagged"] == got_tf["tagged"]
    assert dflow.saved_model.loader.maybe_saved_model_directory(export_dir)
    # C++: the CLI runs the signature by its keys; inspect lists tag sets and signatures.
    out = dflow_cli("run", export_dir, "--signature", "serving_default", "--input", "x=[[1,2],[-0.5,3]]").stdout
    assert "y = [[-1.5] [-10]]" in out, out
    assert "tagged = " in out and "vocab.txt!" in out, out
    assert_same(got_tf["y"], np.array([[-1.5], [-10.0]], np.float32))  # what the CLI printed
    out = dflow_cli("inspect", export_dir).stdout
    assert "tag set [serve]" in out and "signature 'serving_default' (tensorflow/serving/predict)" in out, out
    assert "input  x: x:0 float32(?, 2)" in out, out
    # Errors name what is there.
    p = dflow_cli("run", export_dir, "--tag", "train", "--input", "x=[[1,2]]", check=False)
    assert p.returncode == 1 and "the tag sets present: [serve]" in p.stderr, p.stderr
    p = dflow_cli("run", export_dir, "--signature", "predict", check=False)
    assert p.returncode == 1 and "its signatures: [serving_default]" in p.stderr, p.stderr
    p = dflow_cli("run", export_dir, "--input", "z=1", check=False)
    assert p.returncode == 1 and "its inputs: [x]" in p.stderr, p.stderr
    # The older layout (assets in MetaGraphDef.asset_file_def, the init op in legacy_init_op), as
    # TensorFlow's loader reads it too.
    sm = dflow.saved_model.loader.parse_saved_model(export_dir)
    mg = sm.meta_graphs[0]
    for a in mg.collection_def.pop("saved_model_assets").any_list.value:
        mg.asset_file_def.add().ParseFromString(a.value)
    mg.collection_def["legacy_init_op"].CopyFrom(mg.collection_def.pop("saved_model_main_op"))
    with open(os.path.join(export_dir, "saved_model.pb"), "wb") as f:
        f.write(sm.SerializeToString())
    old_layout = _load_and_run(tf, export_dir)
    assert old_layout["tagged"] == got_tf["tagged"]
    assert _load_and_run(dflow, export_dir)["tagged"] == got_tf["tagged"]
    out = dflow_cli("run", export_dir, "--input", "x=[[1,2],[-0.5,3]]", "--output", "tagged").stdout
    assert "vocab.txt!" in out and "y =" not in out, out
    with dflow.Graph().as_default(), dflow.Session() as sess:
        try:
            dflow.saved_model.loader.load(sess, ["train"], export_dir)
            raise AssertionError("loaded a tag set the SavedModel does not have")
        except RuntimeError as e:
            assert "could not be found in SavedModel" in str(e) and "[['serve']]" in str(e), e


def test_dflow_saved_model_runs_in_tensorflow(tmp_path):
    tf = real_tf()
    export_dir = str(tmp_path / "dflow_export")
    expected = _write_saved_model(dflow, export_dir, _asset(tmp_path))
    assert sorted(os.listdir(export_dir)) == ["assets", "saved_model.pb", "variables"]
    assert sorted(os.listdir(os.path.join(export_dir, "variables"))) == [
        "variables.data-00000-of-00001", "variables.index"]
    got_tf = _load_and_run(tf, export_dir)
    assert_same(got_tf["y"], expected["y"])
    assert got_tf["tagged"] == (os.path.join(export_dir, "assets", "vocab.txt") + "!").encode()
    got = _load_and_run(dflow, export_dir)
    assert_same(got["y"], got_tf["y"])
    assert got["tagged"] == got_tf["tagged"]
    # simple_save, loaded by TensorFlow.
    d2 = str(tmp_path / "simple")
    with dflow.Graph().as_default():
        x = dflow.placeholder(dflow.float32, [None, 2], name="x")
        w = dflow.Variable([[2.0], [1.0]], name="w")
        y = dflow.matmul(x, w, name="y")
        with dflow.Session() as sess:
            sess.run(dflow.global_variables_initializer())
            dflow.saved_model.simple_save(sess, d2, {"x": x}, {"y": y})
    assert_same(_load_and_run(tf, d2)["y"], X @ np.array([[2.0], [1.0]], np.float32))
    # Text format and two tag sets sharing the variables (add_meta_graph).
    d3 = str(tmp_path / "text")
    with dflow.Graph().as_default():
        x = dflow.placeholder(dflow.float32, [None, 2], name="x")
        w = dflow.Variable([[2.0], [1.0]], name="w")
        y = dflow.matmul(x, w, name="y")
        with dflow.Session() as sess:
            sess.run(dflow.global_variables_initializer())
            b = dflow.saved_model.builder.SavedModelBuilder(d3)
            b.add_meta_graph_and_variables(sess, ["serve", "gpu"], signature_def_map={
                "serving_default": dflow.saved_model.predict_signature_def({"x": x}, {"y": y})})
            b.add_meta_graph(["train"])
            assert b.save(as_text=True) == os.path.join(d3, "saved_model.pbtxt").encode()
    for tags in (["gpu", "serve"], ["train"]):
        with tf.Graph().as_default(), tf.Session() as sess:
            tf.saved_model.loader.load(sess, tags, d3)
            assert_same(sess.run("y:0", {"x:0": X}), X @ np.array([[2.0], [1.0]], np.float32))


def _train_model(m):
    """A linear model trained by gradient descent, with the collections TensorFlow's scripts use."""
    x = m.placeholder(m.float32, [None, 2], name="x")
    t = m.placeholder(m.float32, [None, 1], name="t")
    w = m.Variable([[0.1], [-0.2]], name="w")
    b = m.Variable([0.0], name="b")
    y = m.add(m.matmul(x, w), b, name="y")
    loss = m.reduce_mean(m.square(y - t), name="loss")
    m.add_to_collection(m.GraphKeys.LOSSES, loss)
    m.summary.scalar("loss", loss)
    step = m.train.get_or_create_global_step()
    m.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=step)


T = np.array([[1.0], [2.0]], np.float32)


def _first_run(m, prefix):
    """Trains 3 steps in module m and saves; returns the values after 2 more steps there."""
    with m.Graph().as_default():
        _train_model(m)
        train_op = m.get_collection(m.GraphKeys.TRAIN_OP)[0]
        saver = m.train.Saver()
        with m.Session() as sess:
            sess.run(m.global_variables_initializer())
            for _ in range(3):
                sess.run(train_op, {"x:0": X, "t:0": T})
            path = saver.save(sess, prefix, global_step=3)
            for _ in range(2):
                sess.run(train_op, {"x:0": X, "t:0": T})
            return path, sess.run({"w": "w:0", "b": "b:0", "step": "global_step:0"})


def _resume(m, meta_path, save_prefix):
    """Resumes from the .meta alone in module m: imports it, restores, trains 2 steps, saves."""
    with m.Graph().as_default():
        saver = m.train.import_meta_graph(meta_path)
        g = m.get_default_graph()
        assert [v.name for v in m.trainable_variables()] == ["w:0", "b:0"]
        assert [v.name for v in m.global_variables()] == ["w:0", "b:0", "global_step:0"]
        assert [v.name for v in m.get_collection(m.GraphKeys.GLOBAL_STEP)] == ["global_step:0"]
        assert [x.name for x in m.get_collection(m.GraphKeys.LOSSES)] == ["loss:0"]
        assert [x.name for x in m.get_collection(m.GraphKeys.SUMMARIES)] == ["loss_1:0"]
        train_op = m.get_collection(m.GraphKeys.TRAIN_OP)[0]
        assert g.get_operation_by_name(train_op.name) is not None
        with m.Session() as sess:
            saver.restore(sess, meta_path[:-len(".meta")])
            assert int(sess.run(m.train.get_global_step())) == 3
            for _ in range(2):
                sess.run(train_op, {"x:0": X, "t:0": T})
            out = sess.run({"w": "w:0", "b": "b:0", "step": "global_step:0"})
            saver.save(sess, save_prefix, global_step=5)
            return out


def test_meta_graphs_both_ways(tmp_path):
    tf = real_tf()
    # TensorFlow's Saver .meta -> dflow resumes; dflow's .meta (written beside each checkpoint) -> TensorFlow.
    for first, second, name in ((tf, dflow, "tf_first"), (dflow, tf, "dflow_first")):
        d = tmp_path / name
        path, expected = _first_run(first, str(d / "model.ckpt"))
        assert os.path.exists(path + ".meta"), sorted(os.listdir(d))
        got = _resume(second, path + ".meta", str(d / "resumed"))
        assert_same(got, expected)
        assert os.path.exists(str(d / "resumed-5.meta")) and os.path.exists(str(d / "resumed-5.index"))
    # A dflow .meta written as text, and with an import scope and cleared devices.
    with dflow.Graph().as_default():
        _train_model(dflow)
        meta = dflow.train.Saver().export_meta_graph(str(tmp_path / "m.pbtxt"), as_text=True)
        ops_used = sorted({n.op for n in meta.graph_def.node})
        assert [o.name for o in meta.meta_info_def.stripped_op_list.op] == ops_used
        # TensorFlow's OpDefs of the same ops agree on their arguments and attrs' names.
        from tensorflow.python.framework import op_def_registry
        for o in meta.meta_info_def.stripped_op_list.op:
            theirs = op_def_registry.get(o.name)
            assert [a.name for a in o.input_arg] == [a.name for a in theirs.input_arg], o.name
            assert {a.name for a in o.attr} <= {a.name for a in theirs.attr}, o.name
    with dflow.Graph().as_default():
        saver = dflow.train.import_meta_graph(str(tmp_path / "m.pbtxt"), clear_devices=True, import_scope="imp")
        assert saver.saver_def.restore_op_name == "imp/save/restore_all"
        assert [v.name for v in dflow.trainable_variables()] == ["imp/w:0", "imp/b:0"]
    with tf.Graph().as_default():
        tf.train.import_meta_graph(str(tmp_path / "m.pbtxt"))
        assert [v.name for v in tf.trainable_variables()] == ["w:0", "b:0"]


def _example(tf, row):
    return tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[float(v) for v in row]))})).SerializeToString()


def test_estimator_export_classifies_serialized_examples_in_tensorflow(tmp_path):
    tf = real_tf()
    rng = np.random.RandomState(0)
    x = rng.randn(90, 3).astype(np.float32)
    y = ((x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 0.5)).astype(np.int64)
    cols = [dflow.feature_column.numeric_column("x", shape=[3])]
    est = dflow.estimator.DNNClassifier([6], cols, n_classes=3, model_dir=str(tmp_path / "model"),
                                        config=dflow.estimator.RunConfig(tf_random_seed=3))
    est.train(lambda: dflow.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(30), steps=30)
    spec = dflow.feature_column.make_parse_example_spec(cols)
    path = est.export_saved_model(str(tmp_path / "export"),
                                  dflow.estimator.export.build_parsing_serving_input_receiver_fn(spec))
    assert isinstance(path, bytes) and os.path.basename(path).isdigit(), path
    path = path.decode()
    preds = list(est.predict(lambda: dflow.data.Dataset.from_tensor_slices({"x": x[:6]}).batch(6)))
    probs = np.stack([p["probabilities"] for p in preds])
    serialized = [_example(tf, row) for row in x[:6]]
    results = {}
    for m in (tf, dflow):
        with m.Graph().as_default(), m.Session() as sess:
            meta = m.saved_model.loader.load(sess, ["serve"], path)
            assert sorted(meta.signature_def) == ["classification", "predict", "serving_default"]
            sig = meta.signature_def["serving_default"]
            assert sig.method_name == "tensorflow/serving/classify" and list(sig.inputs) == ["inputs"]
            scores, classes = sess.run([sig.outputs["scores"].name, sig.outputs["classes"].name],
                                       {sig.inputs["inputs"].name: serialized})
            p = meta.signature_def["predict"]
            assert list(p.inputs) == ["examples"]
            ids = sess.run(p.outputs["class_ids"].name, {p.inputs["examples"].name: serialized})
            results[m.__name__] = (scores, classes, ids)
    for scores, classes, ids in results.values():
        assert_same(scores, probs)
        assert classes.tolist() == [[b"0", b"1", b"2"]] * 6
        assert ids.ravel().tolist() == [int(p["class_ids"][0]) for p in preds]
    # The CLI lists the signatures of the export.
    out = dflow_cli("inspect", path).stdout
    assert "signature 'serving_default' (tensorflow/serving/classify)" in out, out
    assert "input  inputs: input_example_tensor:0 string(?)" in out, out


def test_signature_helpers_build_what_tensorflow_builds():
    tf = real_tf()
    SignatureDef = dflow.framework.graph_pb.message_class("SignatureDef")
    TensorInfo = dflow.framework.graph_pb.message_class("TensorInfo")
    built = {}
    for m in (tf, dflow):
        with m.Graph().as_default():
            x = m.placeholder(m.float32, [None, 3], name="x")
            u = m.placeholder(m.float32, None, name="u")
            s = m.placeholder(m.string, [None], name="s")
            y = m.identity(x, name="y")
            sdu, utils = m.saved_model.signature_def_utils, m.saved_model.utils
            sigs = [sdu.predict_signature_def({"x": x, "s": s}, {"y": y}),
                    sdu.classification_signature_def(s, None, y),
                    sdu.regression_signature_def(s, y),
                    sdu.build_signature_def({"x": utils.build_tensor_info(x)}, {}, "custom/method")]
            errors = []
            for call in (lambda: sdu.predict_signature_def({}, {"y": y}),
                         lambda: sdu.classification_signature_def(x, None, y),
                         lambda: sdu.predict_signature_def({"x": x}, None),
                         lambda: sdu.classification_signature_def(s, y, y),
                         lambda: sdu.classification_signature_def(s, None, None),
                         lambda: sdu.regression_signature_def(x, y),
                         lambda: sdu.regression_signature_def(s, s)):
                try:
                    call()
                    errors.append(None)
                except ValueError as e:
                    errors.append(str(e))
            assert utils.get_tensor_from_tensor_info(utils.build_tensor_info(y)).name == "y:0"
            built[m.__name__] = ([SignatureDef.FromString(g.SerializeToString()) for g in sigs],
                                 [TensorInfo.FromString(utils.build_tensor_info(t).SerializeToString()) for t in (x, u, s)],
                                 [sdu.is_valid_signature(g) for g in sigs], errors)
    (tf_sigs, tf_infos, tf_valid, tf_errors), (sigs, infos, valid, errors) = built.values()
    assert sigs == tf_sigs
    assert infos == tf_infos
    assert valid == tf_valid == [True, True, True, False]
    assert errors == tf_errors
    assert dflow.saved_model.tag_constants.SERVING == tf.saved_model.tag_constants.SERVING
    for k in ("DEFAULT_SERVING_SIGNATURE_DEF_KEY", "PREDICT_METHOD_NAME", "CLASSIFY_METHOD_NAME",
              "CLASSIFY_OUTPUT_SCORES", "REGRESS_METHOD_NAME", "PREDICT_INPUTS"):
        assert getattr(dflow.saved_model.signature_constants, k) == getattr(tf.saved_model.signature_constants, k)


def test_custom_estimator_export_predicts_in_tensorflow(tmp_path):
    tf = real_tf()
    x = np.random.RandomState(1).randn(20, 2).astype(np.float32)
    y = x[:, :1] * 2 - x[:, 1:]

    def model_fn(features, labels, mode):
        w = dflow.get_variable("w", initializer=dflow.constant([[0.5], [0.5]]))
        pred = dflow.matmul(features["x"], w)
        if mode == dflow.estimator.ModeKeys.PREDICT:
            return dflow.estimator.EstimatorSpec(mode, predictions={"p": pred})
        loss = dflow.reduce_mean(dflow.square(pred - labels))
        opt = dflow.train.GradientDescentOptimizer(0.1)
        return dflow.estimator.EstimatorSpec(mode, loss=loss,
                                             train_op=opt.minimize(loss, dflow.train.get_global_step()))
    est = dflow.estimator.Estimator(model_fn, model_dir=str(tmp_path / "model"))
    est.train(lambda: dflow.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(10), steps=5)
    fn = dflow.estimator.export.build_raw_serving_input_receiver_fn({"x": dflow.placeholder(dflow.float32, [None, 2])})
    path = est.export_saved_model(str(tmp_path / "export"), fn).decode()
    expected = np.stack([p["p"] for p in est.predict(lambda: dflow.data.Dataset.from_tensor_slices({"x": x}).batch(20))])
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], path)
        assert list(meta.signature_def) == ["serving_default"]
        sig = meta.signature_def["serving_default"]
        got = sess.run(sig.outputs["p"].name, {sig.inputs["x"].name: x})
    assert_same(got, expected)
