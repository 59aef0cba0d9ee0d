"""examples/python/premade_estimator.py (TensorFlow's premade-estimator Iris tutorial) runs as a
user runs it and prints the test accuracy and the three predictions."""
import os
import re

from conftest import ROOT, run_python

EXAMPLES = os.path.join(ROOT, "examples", "python")


def test_premade_estimator_prints_accuracy_and_predictions():
    r = run_python(os.path.join(EXAMPLES, "premade_estimator.py"), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "\nTest set accuracy: 0.967\n" in r.stdout, r.stdout
    preds = re.findall(r'Prediction is "(\w+)" \((\d+\.\d)%\), expected "(\w+)"', r.stdout)
    assert [(p[0], p[2]) for p in preds] == [("Setosa", "Setosa"), ("Versicolor", "Versicolor"),
                                             ("Virginica", "Virginica")], r.stdout
    assert all(float(p[1]) > 90 for p in preds), preds
    # The same output from another working directory, and flags as the tutorial takes them.
    r2 = run_python(os.path.join(EXAMPLES, "premade_estimator.py"), "--batch_size", "100", "--train_steps", "1000",
                    cwd="/")
    assert r2.returncode == 0, r2.stderr
    assert r2.stdout == r.stdout


def test_iris_data_csv_input_fn():
    # The tutorial's CSV parser (TextLineDataset + decode_csv) feeds the same classifier.
    code = """
import sys
sys.path.insert(0, %r)
import dflow as tf
import iris_data
cols = [tf.feature_column.numeric_column(k) for k in iris_data.CSV_COLUMN_NAMES[:-1]]
c = tf.estimator.DNNClassifier(hidden_units=[10, 10], feature_columns=cols, n_classes=3,
                               config=tf.estimator.RunConfig(tf_random_seed=1))
c.train(input_fn=lambda: iris_data.csv_input_fn(iris_data.TRAIN_PATH, 100), steps=1000)
(_, _), (test_x, test_y) = iris_data.load_data()
r = c.evaluate(input_fn=lambda: iris_data.eval_input_fn(test_x, test_y, 100))
print("accuracy %%.3f" %% r["accuracy"])
""" % EXAMPLES
    r = run_python(code, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    acc = float(re.search(r"accuracy (\d\.\d+)", r.stdout).group(1))
    assert acc >= 0.9, r.stdout
