"""The Python snippets of the pages and slides dflow was made from, each run as a program with
`import dflow as tf`, and beside real TensorFlow (tf.compat.v1) where TensorFlow 2.21 still has
the API. Where a snippet elides code ("...", "# Build model..."), the least that makes it run is
filled in and marked; the snippet's own lines are kept as they are.

Sources: the slides "TensorFlow: basic concepts" (graphs, sessions, placeholders, datasets,
variables, the Iris tutorial, device placement) and the page "Distributed TensorFlow |
TensorFlow Clustering" (single-process cluster, ClusterSpec and Server per task, device
placement, MonitoredTrainingSession with StopAtStepHook and the trainer's flags)."""
import os
import re
import socket
import subprocess
import sys

from conftest import BUILD, ROOT, run_python

TF_HEADER = "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n"


def on_both(code, *args, timeout=120):
    """Runs the snippet with dflow and with TensorFlow; returns their stdout (checked exit 0)."""
    outs = []
    for lib in ("dflow", "tensorflow"):
        src = code if lib == "dflow" else re.sub(r"^import dflow as tf\b.*\n", TF_HEADER, code, flags=re.M)
        r = run_python(src, *args, timeout=timeout, env={"TF_CPP_MIN_LOG_LEVEL": "3"})
        assert r.returncode == 0, "%s:\n%s" % (lib, r.stderr[-3000:])
        outs.append(r.stdout)
    return outs


def on_dflow(code, *args, timeout=120):
    r = run_python(code, *args, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# --------------------------------------------------------------------------------------------
# The slides


SIMPLE_GRAPH = '''import dflow as tf
a = tf.add(3, 5)
print(a) # What does this do?
with tf.Session() as sess:
    print(sess.run(a))
'''


def test_a_simple_graph():
    ours, theirs = on_both(SIMPLE_GRAPH)
    assert ours == 'Tensor("Add:0", shape=(), dtype=int32)\n8\n'
    assert ours == theirs


ANOTHER_GRAPH = '''import dflow as tf
x=2
y=3
op1 = tf.add(x, y)
op2 = tf.multiply(x, y)
op3 = tf.pow(op2, op1)
with tf.Session() as sess:
    op3 = sess.run(op3)
print(op3)
'''


def test_another_graph():
    ours, theirs = on_both(ANOTHER_GRAPH)
    assert ours == "7776\n" == theirs


ANOTHER_ANOTHER_GRAPH = '''import dflow as tf
x=2
y=3
add_op = tf.add(x, y)
mul_op = tf.multiply(x, y)
useless = tf.multiply(x, add_op)
pow_op = tf.pow(add_op, mul_op)
with tf.Session() as sess:
    z = sess.run(pow_op)
print(z)
# (added) which nodes the run executed
md = tf.RunMetadata()
with tf.Session() as sess:
    sess.run(pow_op, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
ran = {n.node_name for d in md.step_stats.dev_stats for n in d.node_stats}
print(useless.op.name, useless.op.name in ran, pow_op.op.name in ran)
'''


def test_another_another_graph_skips_the_useless_node():
    ours, theirs = on_both(ANOTHER_ANOTHER_GRAPH)
    assert ours == "15625\nMul_1 False True\n"
    assert ours == theirs


PLACEHOLDERS = '''import dflow as tf
x = tf.placeholder(tf.float32)
y = tf.placeholder(tf.float32)
z = x + y
with tf.Session() as sess:
    print(sess.run(z, feed_dict={x: 3, y: 4.5}))
    print(sess.run(z, feed_dict={x: [1, 3], y: [2, 4]}))
'''


def test_placeholders():
    ours, theirs = on_both(PLACEHOLDERS)
    assert ours == "7.5\n[3. 7.]\n"
    assert ours == theirs


DATASETS = '''import dflow as tf
my_data = [[0, 1,],[2, 3,],[4, 5,],[6, 7,],]
slices = tf.data.Dataset.from_tensor_slices(my_data)
next_item = slices.make_one_shot_iterator().get_next()
# (added) reading it to its end
sess = tf.Session()
while True:
    try:
        print(sess.run(next_item))
    except tf.errors.OutOfRangeError:
        break
'''


def test_datasets():
    ours, theirs = on_both(DATASETS)
    assert ours == "[0 1]\n[2 3]\n[4 5]\n[6 7]\n"
    assert ours == theirs


VARIABLES = '''import dflow as tf
my_variable = tf.get_variable("my_variable", [1, 2, 3])
my_int_variable = tf.get_variable("my_int_variable", [1, 2, 3],
    dtype=tf.int32, initializer=tf.zeros_initializer)
v = tf.get_variable("v", shape=(), initializer=tf.zeros_initializer())
w = v + 1 # w is a tf.Tensor which is computed based on the value of v.
          # Any time a variable is used in an expression it gets automatically
          # converted to a tf.Tensor representing its value.
# (added) initializing and reading them
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    mv, miv, wv = sess.run([my_variable, my_int_variable, w])
print(my_variable.name, my_variable.shape, my_int_variable.name, my_int_variable.dtype.base_dtype.name)
print(mv.shape, mv.dtype, float(abs(mv).max()) <= (6.0 / (2 + 3)) ** 0.5, float(abs(mv).max()) > 0)
print(miv.tolist(), miv.dtype, wv)
'''


def test_variables():
    ours, theirs = on_both(VARIABLES)
    assert ours.splitlines() == ["my_variable:0 (1, 2, 3) my_int_variable:0 int32",
                                 "(1, 2, 3) float32 True True", "[[[0, 0, 0], [0, 0, 0]]] int32 1.0"]
    assert ours == theirs


IRIS = '''import argparse
import sys

import dflow as tf

# (added) The slides elide the CSV parsing ("# ..."): the tutorial's iris_data module does it,
# from the project's copy of the same two files; the tutorial's default arguments.
sys.path.insert(0, sys.argv[1])
import iris_data
args = argparse.Namespace(batch_size=100, train_steps=1000)

TRAIN_URL = "http://download.tensorflow.org/data/iris_training.csv"
TEST_URL = "http://download.tensorflow.org/data/iris_test.csv"

CSV_COLUMN_NAMES = ['SepalLength', 'SepalWidth',
                    'PetalLength', 'PetalWidth', 'Species']

def load_data(label_name='Species'):
    """Parses the csv file in TRAIN_URL and TEST_URL."""
    # ...
    (train_features, train_label), (test_features, test_label) = iris_data.load_data(label_name)
    return (train_features, train_label), (test_features, test_label)

# (added) the names the slides use
(train_x, train_y), (test_x, test_y) = load_data()
train_feature, train_label = train_x, train_y
train_input_fn, eval_input_fn = iris_data.train_input_fn, iris_data.eval_input_fn

# VERSION 1: Create feature columns for all features.
my_feature_columns = []
for key in train_x.keys():
    my_feature_columns.append(tf.feature_column.numeric_column(key=key))

# VERSION 2: Create feature columns for all features.
my_feature_columns = [
    tf.feature_column.numeric_column(key='SepalLength'),
    tf.feature_column.numeric_column(key='SepalWidth'),
    tf.feature_column.numeric_column(key='PetalLength'),
    tf.feature_column.numeric_column(key='PetalWidth')
]

classifier = tf.estimator.DNNClassifier(
    feature_columns=my_feature_columns,
    hidden_units=[10, 10],
    n_classes=3)

classifier.train(
    input_fn=lambda:train_input_fn(train_feature, train_label, args.batch_size),
    steps=args.train_steps)

# Evaluate the model.
eval_result = classifier.evaluate(
    input_fn=lambda:eval_input_fn(test_x, test_y, args.batch_size))
print('\\nTest set accuracy: {accuracy:0.3f}\\n'.format(**eval_result))

predict_x = {
    'SepalLength': [5.1, 5.9, 6.9],
    'SepalWidth': [3.3, 3.0, 3.1],
    'PetalLength': [1.7, 4.2, 5.4],
    'PetalWidth': [0.5, 1.5, 2.1],
}

predictions = classifier.predict(
    input_fn=lambda:eval_input_fn(predict_x,
                                   labels=None,
                                   batch_size=args.batch_size))

# (added) the tutorial's loop over the predictions
expected = ['Setosa', 'Versicolor', 'Virginica']
for pred_dict, expec in zip(predictions, expected):
    class_id = pred_dict['class_ids'][0]
    probability = pred_dict['probabilities'][class_id]
    print('Prediction is "{}" ({:.1f}%), expected "{}"'.format(iris_data.SPECIES[class_id], 100 * probability, expec))
'''


def test_iris_premade_estimator():
    out = on_dflow(IRIS, os.path.join(ROOT, "examples", "python"), timeout=300)
    lines = [line for line in out.splitlines() if line.strip()]
    acc = [line for line in lines if line.startswith("Test set accuracy: ")]
    assert len(acc) == 1, out
    assert float(acc[0].split(": ")[1]) >= 0.9, out  # the slides: 0.967 (a run without a fixed seed)
    preds = [line for line in lines if line.startswith("Prediction is ")]
    assert len(preds) == 3, out
    for line, species in zip(preds, ["Setosa", "Versicolor", "Virginica"]):
        assert line.startswith('Prediction is "%s" (' % species) and line.endswith('expected "%s"' % species), line
        assert float(line.split("(")[1].split("%")[0]) > 50.0, line


# --------------------------------------------------------------------------------------------
# Clusters (the page, and the slides' device placement)


LOCAL_SERVER = '''import dflow as tf
c = tf.constant("Hello, distributed TensorFlow!")
server = tf.train.Server.create_local_server()
sess = tf.Session(server.target)  # Create a session on the server.
print(sess.run(c))
'''


def test_single_process_cluster():
    assert on_dflow(LOCAL_SERVER) == "b'Hello, distributed TensorFlow!'\n"


TWO_TASKS = '''import sys
import dflow as tf
p0, p1 = int(sys.argv[1]), int(sys.argv[2])
# In task 0:
cluster = tf.train.ClusterSpec({"local": ["localhost:%d" % p0, "localhost:%d" % p1]})
server = tf.train.Server(cluster, job_name="local", task_index=0)
# In task 1:
cluster = tf.train.ClusterSpec({"local": ["localhost:%d" % p0, "localhost:%d" % p1]})
server1 = tf.train.Server(cluster, job_name="local", task_index=1)
# (added) a graph over both tasks, run from task 0's master
with tf.device("/job:local/task:1"):
    a = tf.constant(2.0) * 3.0
with tf.device("/job:local/task:0"):
    b = a + 1.0
with tf.Session(server.target) as sess:
    print(sess.run(b))
print(cluster.job_tasks("local"))
'''


def test_cluster_spec_and_a_server_per_task():
    p0, p1 = free_port(), free_port()
    out = on_dflow(TWO_TASKS, str(p0), str(p1))
    assert out.splitlines() == ["7.0", str(["localhost:%d" % p0, "localhost:%d" % p1])]


DEVICES = '''import sys
import numpy as np
import dflow as tf
# (added) the tasks the snippet names, on this machine: ps 0 and 1, worker 7
ports = [int(p) for p in sys.argv[1:4]]
cluster = tf.train.ClusterSpec({"ps": ["localhost:%d" % ports[0], "localhost:%d" % ports[1]],
                                "worker": {7: "localhost:%d" % ports[2]}})
servers = [tf.train.Server(cluster, job_name="ps", task_index=0), tf.train.Server(cluster, job_name="ps", task_index=1),
           tf.train.Server(cluster, job_name="worker", task_index=7)]

with tf.device("/job:ps/task:0"):
  weights_1 = tf.Variable(tf.random_normal([4, 8], stddev=0.5, seed=1))  # (added) the "..."
  biases_1 = tf.Variable(tf.zeros([8]))
with tf.device("/job:ps/task:1"):
  weights_2 = tf.Variable(tf.random_normal([8, 3], stddev=0.5, seed=2))
  biases_2 = tf.Variable(tf.zeros([3]))
with tf.device("/job:worker/task:7"):
  input, labels = tf.constant(np.eye(4, dtype=np.float32)), tf.constant([0, 1, 2, 0])
  layer_1 = tf.nn.relu(tf.matmul(input, weights_1) + biases_1)
  logits = tf.nn.relu(tf.matmul(layer_1, weights_2) + biases_2)
  # ...
  loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)

with tf.Session(servers[2].target) as sess:  # ("grpc://worker7.example.com:2222")
  sess.run(tf.global_variables_initializer())
  first = sess.run(loss)
  for _ in range(10000):
    sess.run(train_op)
  last = sess.run(loss)
print(weights_1.device, weights_2.device, logits.device)
print(first > last)
'''


def test_device_placement_on_ps_and_worker_tasks():
    out = on_dflow(DEVICES, *[str(free_port()) for _ in range(3)], timeout=180)
    lines = out.splitlines()
    assert lines[0].split() == ["/job:ps/task:0", "/job:ps/task:1", "/job:worker/task:7"]
    assert lines[1] == "True"


TRAINER = '''import argparse
import sys

import dflow as tf

FLAGS = None


def main(_):
  # (added) the rest of the guide's trainer around the page's lines
  ps_hosts = FLAGS.ps_hosts.split(",")
  worker_hosts = FLAGS.worker_hosts.split(",")
  cluster = tf.train.ClusterSpec({"ps": ps_hosts, "worker": worker_hosts})
  server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
  if FLAGS.job_name == "ps":
    server.join()
  elif FLAGS.job_name == "worker":
    with tf.device(tf.train.replica_device_setter(
        worker_device="/job:worker/task:%d" % FLAGS.task_index, cluster=cluster)):
      # Build model...
      x = tf.random_uniform([32, 4], seed=FLAGS.task_index)
      y = tf.reduce_sum(x * [1.0, -2.0, 3.0, 0.5], axis=1, keepdims=True)
      w = tf.Variable(tf.zeros([4, 1]))
      loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
      global_step = tf.train.get_or_create_global_step()
      train_op = tf.train.AdagradOptimizer(0.01).minimize(loss, global_step=global_step)

    # The StopAtStepHook handles stopping after running given steps.
    hooks=[tf.train.StopAtStepHook(last_step=FLAGS.last_step)]  # (the page: last_step=1000000)

    steps = 0
    with tf.train.MonitoredTrainingSession(master=server.target,is_chief=(FLAGS.task_index == 0),checkpoint_dir=FLAGS.checkpoint_dir,hooks=hooks) as mon_sess:
      while not mon_sess.should_stop():
        mon_sess.run(train_op)
        steps += 1
    print("worker %d: %d steps" % (FLAGS.task_index, steps))


if __name__ == "__main__":
  parser = argparse.ArgumentParser()
  parser.register("type", "bool", lambda v: v.lower() == "true")
  # Flags for defining the tf.train.ClusterSpec
  parser.add_argument(
      "--ps_hosts",
      type=str,
      default="",
      help="Comma-separated list of hostname:port pairs"
  )
  parser.add_argument(
      "--worker_hosts",
      type=str,
      default="",
      help="Comma-separated list of hostname:port pairs"
  )
  parser.add_argument(
      "--job_name",
      type=str,
      default="",
      help="One of 'ps', 'worker'"
  )
  # Flags for defining the tf.train.Server
  parser.add_argument(
      "--task_index",
      type=int,
      default=0,
      help="Index of task within the job"
  )
  FLAGS, unparsed = parser.parse_known_args()
  # (added) where the page has "/tmp/train_logs" and 1000000
  FLAGS.checkpoint_dir, FLAGS.last_step = unparsed.pop(0), int(unparsed.pop(0))
  tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
'''


def test_monitored_training_session_trainer(tmp_path):
    script = tmp_path / "trainer.py"
    script.write_text(TRAINER)
    ckpt = str(tmp_path / "train_logs")
    ps = "localhost:%d" % free_port()
    workers = "localhost:%d,localhost:%d" % (free_port(), free_port())
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
    procs = []
    for job, i in (("ps", 0), ("worker", 0), ("worker", 1)):
        procs.append(subprocess.Popen(
            [sys.executable, str(script), "--ps_hosts", ps, "--worker_hosts", workers, "--job_name", job,
             "--task_index", str(i), ckpt, "300"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env))
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=120)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    # Every task, the ps task in server.join() included, ends by itself and exits 0.
    assert [p.returncode for p in procs] == [0, 0, 0], "\n---\n".join(outs)
    steps = [int(line.split(": ")[1].split()[0]) for out in outs[1:] for line in out.splitlines()
             if line.startswith("worker ")]
    assert len(steps) == 2 and sum(steps) >= 300, outs
    assert os.path.exists(os.path.join(ckpt, "checkpoint"))


# --------------------------------------------------------------------------------------------
# The example that gathers the graph basics


def test_graph_basics_example():
    path = os.path.join(ROOT, "examples", "python", "graph_basics.py")
    with open(path) as f:
        code = f.read()
    assert "import dflow as tf" in code
    ours, theirs = on_both(code)
    assert ours.splitlines() == ['Tensor("Add:0", shape=(), dtype=int32)', "8", "7776", "15625",
                                 "ran: Add Add/x Add/y Mul Mul/x Mul/y Pow", "useless (Mul_1) ran: False",
                                 "7.5", "[3. 7.]"]
    # TensorFlow folds the constants before it runs, so its list of nodes that ran differs.
    drop = lambda s: [line for line in s.splitlines() if not line.startswith("ran:")]  # noqa: E731
    assert drop(ours) == drop(theirs)
