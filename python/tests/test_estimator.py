"""tf.estimator: canned and custom estimators trained, evaluated and asked for predictions on the
Iris data and on synthetic data; TensorFlow 1.x's argument conventions, result dicts and errors.
(TensorFlow 2.21 has no tf.estimator, so the reference is TensorFlow 1.x's documented behaviour.)"""
import gc
import json
import os

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IRIS = os.path.join(ROOT, "data", "iris")
NAMES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth"]


def load_iris(name):
    rows = np.loadtxt(os.path.join(IRIS, name), delimiter=",", skiprows=1)
    return {n: rows[:, i] for i, n in enumerate(NAMES)}, rows[:, 4].astype(np.int64)


@pytest.fixture(scope="module")
def iris():
    return load_iris("iris_training.csv"), load_iris("iris_test.csv")


def train_fn(tf, x, y, batch=100):
    return lambda: tf.data.Dataset.from_tensor_slices((dict(x), y)).shuffle(1000).repeat().batch(batch)


def eval_fn(tf, x, y=None, batch=100):
    return lambda: tf.data.Dataset.from_tensor_slices((dict(x), y) if y is not None else dict(x)).batch(batch)


def test_dnn_classifier_on_iris(tf, iris, tmp_path):
    (train_x, train_y), (test_x, test_y) = iris
    cols = [tf.feature_column.numeric_column(k) for k in NAMES]
    est = tf.estimator.DNNClassifier(hidden_units=[10, 10], feature_columns=cols, n_classes=3,
                                     model_dir=str(tmp_path), config=tf.estimator.RunConfig(tf_random_seed=1))
    assert est.train(train_fn(tf, train_x, train_y), steps=600) is est
    result = est.evaluate(eval_fn(tf, test_x, test_y))
    assert sorted(result) == ["accuracy", "average_loss", "global_step", "loss"]
    assert result["global_step"] == 600 and isinstance(result["global_step"], np.int64)
    assert isinstance(result["accuracy"], np.float32)
    assert result["accuracy"] >= 0.9
    assert result["average_loss"] < 0.3
    preds = list(est.predict(eval_fn(tf, {k: v[:5] for k, v in test_x.items()})))
    assert len(preds) == 5
    p = preds[0]
    assert sorted(p) == ["all_class_ids", "all_classes", "class_ids", "classes", "logits", "probabilities"]
    assert p["probabilities"].shape == (3,) and abs(p["probabilities"].sum() - 1) < 1e-5
    assert p["class_ids"].shape == (1,) and p["class_ids"].dtype == np.int64
    assert p["class_ids"][0] == np.argmax(p["probabilities"])
    assert p["classes"][0] == str(p["class_ids"][0]).encode()
    np.testing.assert_array_equal(p["all_class_ids"], [0, 1, 2])
    assert [q["class_ids"][0] for q in preds] == list(test_y[:5])
    only = list(est.predict(eval_fn(tf, {k: v[:2] for k, v in test_x.items()}), predict_keys="probabilities"))
    assert [sorted(q) for q in only] == [["probabilities"], ["probabilities"]]
    # TensorFlow's variable names are in the checkpoint.
    names = est.get_variable_names()
    for n in ["dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_1/bias", "dnn/logits/kernel", "global_step",
              "dnn/hiddenlayer_0/kernel/Adagrad"]:
        assert n in names
    assert est.get_variable_value("dnn/hiddenlayer_0/kernel").shape == (4, 10)
    assert est.latest_checkpoint().endswith("model.ckpt-600")


def test_training_resumes_from_the_checkpoints(tf, iris, tmp_path):
    (train_x, train_y), _ = iris
    cols = [tf.feature_column.numeric_column(k) for k in NAMES]

    def make():
        return tf.estimator.DNNClassifier([8], cols, n_classes=3, model_dir=str(tmp_path))
    make().train(train_fn(tf, train_x, train_y), steps=30)
    est = make()
    est.train(train_fn(tf, train_x, train_y), steps=20)
    assert est.latest_checkpoint().endswith("-50")
    est.train(train_fn(tf, train_x, train_y), max_steps=40)  # already past: nothing to do
    assert est.evaluate(eval_fn(tf, train_x, train_y))["global_step"] == 50
    est.train(train_fn(tf, train_x, train_y), max_steps=60)
    assert est.evaluate(eval_fn(tf, train_x, train_y), steps=1)["global_step"] == 60


def test_a_fixed_seed_gives_the_same_model(tf, iris):
    (train_x, train_y), (test_x, test_y) = iris
    cols = [tf.feature_column.numeric_column(k) for k in NAMES]
    results = []
    for _ in range(2):
        est = tf.estimator.DNNClassifier([10, 10], cols, n_classes=3, config=tf.estimator.RunConfig(tf_random_seed=7))
        est.train(train_fn(tf, train_x, train_y), steps=200)
        results.append(est.evaluate(eval_fn(tf, test_x, test_y)))
    assert results[0] == results[1]


def synthetic_regression(n=400, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, size=(n, 2)).astype(np.float32)
    y = (2 * x[:, 0] - 3 * x[:, 1] + 1 + rng.normal(0, 0.01, n)).astype(np.float32)
    return {"a": x[:, 0], "b": x[:, 1]}, y


@pytest.mark.parametrize("kind", ["dnn", "linear"])
def test_regressors(tf, kind):
    x, y = synthetic_regression()
    cols = [tf.feature_column.numeric_column("a"), tf.feature_column.numeric_column("b")]
    if kind == "dnn":
        est = tf.estimator.DNNRegressor([16], cols, optimizer=tf.train.AdamOptimizer(0.05),
                                        config=tf.estimator.RunConfig(tf_random_seed=3))
    else:
        est = tf.estimator.LinearRegressor(cols, optimizer=tf.train.GradientDescentOptimizer(0.1),
                                           loss_reduction=tf.losses.Reduction.SUM_OVER_BATCH_SIZE)
    est.train(train_fn(tf, x, y, batch=40), steps=400)
    result = est.evaluate(eval_fn(tf, x, y, batch=50))
    assert sorted(result) == ["average_loss", "global_step", "label/mean", "loss", "prediction/mean"]
    assert result["average_loss"] < 0.05, result
    assert abs(result["label/mean"] - y.mean()) < 1e-4
    preds = list(est.predict(eval_fn(tf, {"a": np.array([0.5], np.float32), "b": np.array([0.0], np.float32)})))
    assert sorted(preds[0]) == ["predictions"]
    assert preds[0]["predictions"].shape == (1,)
    assert abs(preds[0]["predictions"][0] - 2.0) < 0.3


def test_linear_classifier_with_categorical_columns(tf):
    rng = np.random.RandomState(1)
    n = 300
    color = rng.choice(["red", "green", "blue", "other"], n)
    size = rng.uniform(0, 10, n).astype(np.float32)
    label = ((color == "red") | (size > 7)).astype(np.int64)
    cols = [tf.feature_column.categorical_column_with_vocabulary_list("color", ["red", "green", "blue"]),
            tf.feature_column.bucketized_column(tf.feature_column.numeric_column("size"), [2.0, 4.0, 7.0])]
    est = tf.estimator.LinearClassifier(cols)
    x = {"color": color, "size": size}
    est.train(train_fn(tf, x, label, batch=50), steps=300)
    result = est.evaluate(eval_fn(tf, x, label))
    assert sorted(result) == ["accuracy", "accuracy_baseline", "average_loss", "global_step", "label/mean", "loss",
                              "prediction/mean"]
    assert result["accuracy"] > 0.95
    pred = next(est.predict(eval_fn(tf, {"color": np.array(["red"]), "size": np.array([1.0], np.float32)})))
    assert sorted(pred) == ["all_class_ids", "all_classes", "class_ids", "classes", "logistic", "logits",
                            "probabilities"]
    assert pred["class_ids"][0] == 1


def count_model_fn(tf):
    """A custom model: a linear softmax classifier whose eval metrics count the examples seen."""
    def model_fn(features, labels, mode, params):
        net = tf.feature_column.input_layer(features, params["columns"])
        w = tf.get_variable("w", [4, 3], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [3], initializer=tf.zeros_initializer())
        logits = tf.matmul(net, w) + b
        classes = tf.argmax(logits, 1)
        if mode == tf.estimator.ModeKeys.PREDICT:
            return tf.estimator.EstimatorSpec(mode, predictions={"class_ids": classes[:, tf.newaxis],
                                                                 "probabilities": tf.nn.softmax(logits)})
        loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        if mode == tf.estimator.ModeKeys.EVAL:
            count = tf.Variable(0.0, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="count")
            correct = tf.Variable(0.0, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="correct")
            n = tf.cast(tf.shape(labels)[0], tf.float32)
            hits = tf.reduce_sum(tf.cast(tf.equal(classes, tf.cast(labels, tf.int64)), tf.float32))
            update_count = tf.assign_add(count, n)
            update_correct = tf.assign_add(correct, hits)
            accuracy = correct / count
            return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
                "count": (count.value(), update_count),
                "my_accuracy": (accuracy, tf.group(update_count, update_correct))})
        opt = tf.train.AdagradOptimizer(params.get("lr", 0.5))
        return tf.estimator.EstimatorSpec(mode, loss=loss,
                                          train_op=opt.minimize(loss, global_step=tf.train.get_global_step()))
    return model_fn


def test_custom_estimator(tf, iris, tmp_path):
    (train_x, train_y), (test_x, test_y) = iris
    cols = [tf.feature_column.numeric_column(k) for k in NAMES]
    est = tf.estimator.Estimator(count_model_fn(tf), model_dir=str(tmp_path), params={"columns": cols})
    assert est.model_dir == str(tmp_path) and est.params["columns"] == cols
    est.train(train_fn(tf, train_x, train_y), steps=300)
    result = est.evaluate(eval_fn(tf, test_x, test_y, batch=7))
    assert sorted(result) == ["count", "global_step", "loss", "my_accuracy"]
    assert result["count"] == 30 and result["global_step"] == 300
    assert result["my_accuracy"] > 0.85
    assert est.evaluate(eval_fn(tf, test_x, test_y, batch=7), steps=2)["count"] == 14
    preds = list(est.predict(eval_fn(tf, test_x)))
    assert len(preds) == 30
    acc = np.mean([p["class_ids"][0] == y for p, y in zip(preds, test_y)])
    assert abs(acc - result["my_accuracy"]) < 1e-6
    assert sorted(est.get_variable_names()) == ["b", "b/Adagrad", "global_step", "w", "w/Adagrad"]


def test_input_fn_forms(tf, iris):
    (train_x, train_y), (test_x, test_y) = iris
    cols = [tf.feature_column.numeric_column(k) for k in NAMES]
    seen = {}

    def input_fn(params, mode, config):
        seen[mode] = (sorted(params), type(config).__name__)
        ds = tf.data.Dataset.from_tensor_slices((dict(test_x), test_y)).batch(4)
        return ds.make_one_shot_iterator().get_next()  # tensors: read to the end all the same
    est = tf.estimator.Estimator(count_model_fn(tf), params={"columns": cols})
    est.train(train_fn(tf, train_x, train_y), steps=10)
    assert est.evaluate(input_fn)["count"] == 30
    assert seen["eval"] == (["columns"], "RunConfig")
    # numpy_input_fn
    fn = tf.estimator.inputs.numpy_input_fn(dict(test_x), test_y, batch_size=8, num_epochs=1, shuffle=False)
    assert est.evaluate(fn)["count"] == 30
    with pytest.raises(ValueError, match="shuffle"):
        tf.estimator.inputs.numpy_input_fn(dict(test_x), test_y)
    # Constant tensors: one batch.
    assert est.evaluate(lambda: ({k: v[:6] for k, v in test_x.items()}, test_y[:6]))["count"] == 6


class ModelFnError(Exception):
    pass


def test_errors_reach_the_caller(tf, iris):
    (train_x, train_y), _ = iris
    cols = [tf.feature_column.numeric_column(k) for k in NAMES]
    err = ModelFnError("from the model_fn")

    def bad_model_fn(features, labels, mode):
        tf.feature_column.input_layer(features, cols)
        raise err
    est = tf.estimator.Estimator(bad_model_fn)
    with pytest.raises(ModelFnError) as info:
        est.train(train_fn(tf, train_x, train_y), steps=5)
    assert info.value is err

    def bad_input_fn():
        raise KeyError("no such column")
    est = tf.estimator.Estimator(count_model_fn(tf), params={"columns": cols})
    with pytest.raises(KeyError, match="no such column"):
        est.train(bad_input_fn, steps=5)
    with pytest.raises(ValueError, match="Can not provide both steps and max_steps"):
        est.train(train_fn(tf, train_x, train_y), steps=5, max_steps=5)
    with pytest.raises(ValueError, match="Must specify steps > 0"):
        est.train(train_fn(tf, train_x, train_y), steps=0)
    with pytest.raises(ValueError, match="must include features"):
        tf.estimator.Estimator(lambda x, labels: None)
    with pytest.raises(ValueError, match="does not include params"):
        tf.estimator.Estimator(lambda features, labels: None, params={"a": 1})

    def no_train_op(features, labels, mode):
        return tf.estimator.EstimatorSpec(mode, loss=tf.constant(1.0))
    with pytest.raises(ValueError, match="Missing train_op"):
        tf.estimator.Estimator(no_train_op).train(train_fn(tf, train_x, train_y), steps=1)

    def not_a_spec(features, labels, mode):
        return {"loss": 1}
    with pytest.raises(ValueError, match="should return an EstimatorSpec"):
        tf.estimator.Estimator(not_a_spec).train(train_fn(tf, train_x, train_y), steps=1)
    outside = tf.data.Dataset.from_tensor_slices((dict(train_x), train_y)).batch(10)
    with pytest.raises(ValueError, match="another graph"):
        tf.estimator.Estimator(count_model_fn(tf), params={"columns": cols}).train(lambda: outside, steps=1)
    with pytest.raises(ValueError, match="n_classes"):
        tf.estimator.DNNClassifier([3], cols, n_classes=1)
    # A label out of range fails the step with TensorFlow's error class.
    est = tf.estimator.DNNClassifier([3], cols, n_classes=3)
    with pytest.raises(tf.errors.InvalidArgumentError):
        est.train(train_fn(tf, train_x, train_y + 5), steps=2)


def test_train_and_evaluate_locally(tf, iris):
    (train_x, train_y), (test_x, test_y) = iris
    cols = [tf.feature_column.numeric_column(k) for k in NAMES]
    est = tf.estimator.DNNClassifier([10], cols, n_classes=3, config=tf.estimator.RunConfig(tf_random_seed=2))
    result, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_fn(tf, train_x, train_y), max_steps=150),
        tf.estimator.EvalSpec(eval_fn(tf, test_x, test_y, batch=10), steps=None))
    assert exports == []
    assert result["global_step"] == 150 and result["accuracy"] > 0.5
    with pytest.raises(ValueError, match="max_steps > 0"):
        tf.estimator.TrainSpec(train_fn(tf, train_x, train_y), max_steps=0)


def test_run_config(tf, monkeypatch):
    c = tf.estimator.RunConfig()
    assert (c.task_type, c.task_id, c.is_chief, c.num_ps_replicas, c.num_worker_replicas, c.master) == \
        ("worker", 0, True, 0, 1, "")
    assert (c.save_checkpoints_secs, c.save_checkpoints_steps, c.keep_checkpoint_max, c.save_summary_steps,
            c.log_step_count_steps, c.tf_random_seed, c.model_dir) == (600, None, 5, 100, 100, None, None)
    c2 = c.replace(save_checkpoints_steps=10, tf_random_seed=3)
    assert (c2.save_checkpoints_steps, c2.save_checkpoints_secs, c2.tf_random_seed) == (10, None, 3)
    with pytest.raises(ValueError):
        tf.estimator.RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1)
    with pytest.raises(ValueError):
        c.replace(no_such_field=1)
    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": {"chief": ["localhost:1111"], "worker": ["localhost:2222", "localhost:3333"],
                    "ps": ["localhost:4444"]},
        "task": {"type": "worker", "index": 1}}))
    c = tf.estimator.RunConfig()
    assert (c.task_type, c.task_id, c.is_chief, c.num_ps_replicas, c.num_worker_replicas, c.master) == \
        ("worker", 1, False, 1, 3, "grpc://localhost:3333")
    assert c.cluster_spec.as_dict()["ps"] == ["localhost:4444"]


def test_temporary_model_dir_goes_with_the_estimator(tf, iris):
    (train_x, train_y), _ = iris
    est = tf.estimator.LinearClassifier([tf.feature_column.numeric_column(k) for k in NAMES], n_classes=3)
    est.train(train_fn(tf, train_x, train_y), steps=3)
    d = est.model_dir
    assert os.path.isdir(d) and est.latest_checkpoint().endswith("-3")
    del est
    gc.collect()
    assert not os.path.exists(d)


def test_hooks(tf, iris):
    (train_x, train_y), (test_x, test_y) = iris
    cols = [tf.feature_column.numeric_column(k) for k in NAMES]
    est = tf.estimator.DNNClassifier([10], cols, n_classes=3, config=tf.estimator.RunConfig(tf_random_seed=5))

    class Recorder(tf.train.SessionRunHook):
        def __init__(self, stop_at=None):
            self.calls, self.steps, self.stop_at = [], [], stop_at

        def begin(self):
            self.calls.append("begin")
            self.step = tf.train.get_global_step()
            self.graph = tf.get_default_graph()

        def after_create_session(self, session, coord):
            self.calls.append("after_create_session")
            self.first = session.run(self.step)

        def before_run(self, run_context):
            return tf.train.SessionRunArgs({"step": self.step})

        def after_run(self, run_context, run_values):
            self.steps.append(run_values.results["step"])
            if self.stop_at is not None and run_values.results["step"] + 1 >= self.stop_at:
                run_context.request_stop()

        def end(self, session):
            self.calls.append("end")
            self.last = session.run(self.step)

    rec = Recorder(stop_at=7)
    est.train(train_fn(tf, train_x, train_y), steps=100, hooks=[rec])
    assert rec.calls == ["begin", "after_create_session", "end"]
    assert rec.first == 0 and rec.steps == list(range(7)) and rec.last == 7
    assert est.latest_checkpoint().endswith("-7")
    # A hook the library runs in C++.
    est.train(train_fn(tf, train_x, train_y), hooks=[tf.train.StopAtStepHook(num_steps=5)])
    assert est.latest_checkpoint().endswith("-12")
    # Evaluation hooks see every batch; LoggingTensorHook runs too.
    rec = Recorder()
    logger = tf.train.LoggingTensorHook({"step": "global_step"}, every_n_iter=1)
    est.evaluate(eval_fn(tf, test_x, test_y, batch=4), hooks=[rec, logger])
    assert rec.steps == [12] * 8

    err = RuntimeError("from a hook")

    class Failing(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            raise err
    with pytest.raises(RuntimeError) as info:
        est.train(train_fn(tf, train_x, train_y), steps=3, hooks=[Failing()])
    assert info.value is err
    with pytest.raises(TypeError):
        est.train(train_fn(tf, train_x, train_y), steps=3, hooks=[object()])

    class EndOfInput(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            raise tf.errors.OutOfRangeError(None, None, "enough")
    est.train(train_fn(tf, train_x, train_y), steps=50, hooks=[EndOfInput()])  # ends as the input would
    assert est.latest_checkpoint().endswith("-13")


def test_ctrl_c_ends_training_with_keyboard_interrupt(tf, iris):
    import signal
    (train_x, train_y), _ = iris
    cols = [tf.feature_column.numeric_column(k) for k in NAMES]
    est = tf.estimator.DNNClassifier([10], cols, n_classes=3)

    class CtrlC(tf.train.SessionRunHook):
        def __init__(self):
            self.steps = 0

        def after_run(self, run_context, run_values):
            self.steps += 1
            if self.steps == 5:
                os.kill(os.getpid(), signal.SIGINT)
    hook = CtrlC()
    with pytest.raises(KeyboardInterrupt):
        est.train(train_fn(tf, train_x, train_y), steps=100000, hooks=[hook])
    assert hook.steps == 5
    # Python's own handler is back: a later Ctrl-C is a KeyboardInterrupt raised by Python.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


CLUSTER_TRAINER = """
import os, sys
sys.path.insert(0, %r)
import dflow as tf
import iris_data
(train_x, train_y), (test_x, test_y) = iris_data.load_data()
cols = [tf.feature_column.numeric_column(k) for k in train_x]
config = tf.estimator.RunConfig(model_dir=sys.argv[1], tf_random_seed=1)
est = tf.estimator.DNNClassifier([10, 10], cols, n_classes=3, config=config)
result, _ = tf.estimator.train_and_evaluate(
    est, tf.estimator.TrainSpec(lambda: iris_data.train_input_fn(train_x, train_y, 50), max_steps=300),
    tf.estimator.EvalSpec(lambda: iris_data.eval_input_fn(test_x, test_y, 100), steps=None, throttle_secs=1))
if result is None:
    print("task", config.task_type, config.task_id, config.is_chief, "result None")
else:
    print("task", config.task_type, "step", int(result["global_step"]), "accuracy", float(result["accuracy"]))
"""


def test_train_and_evaluate_on_a_cluster(tf, tmp_path):
    # chief, worker, ps and evaluator as separate processes configured by TF_CONFIG, as TensorFlow
    # runs them: every task ends by itself with status 0, the evaluator with the last evaluation.
    import subprocess
    import sys
    from conftest import BUILD
    script = tmp_path / "trainer.py"
    script.write_text(CLUSTER_TRAINER % os.path.join(ROOT, "examples", "python"))
    ports = tf._dflow.pick_free_ports(3)
    cluster = {"chief": ["localhost:%d" % ports[0]], "worker": ["localhost:%d" % ports[1]],
               "ps": ["localhost:%d" % ports[2]]}
    procs = {}
    for task in ("ps", "chief", "worker", "evaluator"):
        env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"),
                   TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": task, "index": 0}}))
        procs[task] = subprocess.Popen([sys.executable, str(script), str(tmp_path / "model")], env=env,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    outs = {}
    try:
        for task, p in procs.items():
            outs[task] = p.communicate(timeout=120)[0]
            assert p.returncode == 0, (task, outs[task][-3000:])
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
    assert "task chief 0 True result None" in outs["chief"]
    assert "task worker 0 False result None" in outs["worker"]
    assert "task ps 0 False result None" in outs["ps"]
    line = [x for x in outs["evaluator"].splitlines() if x.startswith("task evaluator")][0].split()
    step, acc = int(line[3]), float(line[5])
    assert step >= 300 and acc > 0.8, line


def tutorial_model_fn(tf):
    """TensorFlow's custom-estimator tutorial (get_started/custom_estimator.py), verbatim."""
    def my_model(features, labels, mode, params):
        net = tf.feature_column.input_layer(features, params['feature_columns'])
        for units in params['hidden_units']:
            net = tf.layers.dense(net, units=units, activation=tf.nn.relu)
        logits = tf.layers.dense(net, params['n_classes'], activation=None)
        predicted_classes = tf.argmax(logits, 1)
        if mode == tf.estimator.ModeKeys.PREDICT:
            predictions = {
                'class_ids': predicted_classes[:, tf.newaxis],
                'probabilities': tf.nn.softmax(logits),
                'logits': logits,
            }
            return tf.estimator.EstimatorSpec(mode, predictions=predictions)
        loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        accuracy = tf.metrics.accuracy(labels=labels, predictions=predicted_classes, name='acc_op')
        metrics = {'accuracy': accuracy}
        tf.summary.scalar('accuracy', accuracy[1])
        if mode == tf.estimator.ModeKeys.EVAL:
            return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
        assert mode == tf.estimator.ModeKeys.TRAIN
        optimizer = tf.train.AdagradOptimizer(learning_rate=0.1)
        train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    return my_model


def test_custom_estimator_tutorial(tf, iris):
    (train_x, train_y), (test_x, test_y) = iris
    cols = [tf.feature_column.numeric_column(key=k) for k in NAMES]
    results = []
    for _ in range(2):
        classifier = tf.estimator.Estimator(
            model_fn=tutorial_model_fn(tf),
            params={'feature_columns': cols, 'hidden_units': [10, 10], 'n_classes': 3},
            config=tf.estimator.RunConfig(tf_random_seed=1))
        classifier.train(input_fn=train_fn(tf, train_x, train_y), steps=1000)
        results.append(classifier.evaluate(input_fn=eval_fn(tf, test_x, test_y)))
    assert results[0] == results[1]  # the seed makes it reproducible
    assert sorted(results[0]) == ["accuracy", "global_step", "loss"]
    assert results[0]["accuracy"] >= 0.9
    predict_x = {'SepalLength': [5.1, 5.9, 6.9], 'SepalWidth': [3.3, 3.0, 3.1],
                 'PetalLength': [1.7, 4.2, 5.4], 'PetalWidth': [0.5, 1.5, 2.1]}
    preds = list(classifier.predict(input_fn=eval_fn(tf, predict_x)))
    assert [p['class_ids'][0] for p in preds] == [0, 1, 2]
    assert all(p['probabilities'][p['class_ids'][0]] > 0.9 for p in preds)
    assert "dense/kernel" in classifier.get_variable_names()
    # The summary the model_fn made is written with the training events.
    tags = set()
    for f in os.listdir(classifier.model_dir):
        if f.startswith("events.out.tfevents"):
            for e in tf.train.summary_iterator(os.path.join(classifier.model_dir, f)):
                tags.update(v.tag for v in e.summary.value)
    assert "accuracy" in tags
