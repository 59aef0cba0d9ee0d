"""tf.train.Saver and the checkpoint utilities: round trips between dflow and TensorFlow, both ways."""
import os

import numpy as np
import pytest

import dflow
from conftest import assert_same, real_tf

W = np.arange(6, dtype=np.float32).reshape(2, 3) / 10.0
B = np.array([1.5, -2.5, 3.5], np.float32)


def _model(tf, with_optimizer=True):
    with tf.variable_scope("layer"):
        w = tf.get_variable("w", initializer=tf.constant(W))
        b = tf.get_variable("b", initializer=tf.constant(B))
    count = tf.Variable(7, name="count", dtype=tf.int64)
    step = tf.train.get_or_create_global_step()
    x = tf.constant([[1.0, 2.0]])
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w) + b))
    train = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step) if with_optimizer else None
    return train


def _values(tf, sess):
    names = sorted(v.op.name for v in tf.global_variables())
    vals = sess.run(sorted(tf.global_variables(), key=lambda v: v.op.name))
    return dict(zip(names, vals))


def _save(tf, path, steps):
    with tf.Graph().as_default():
        train = _model(tf)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                sess.run(train)
            saved = saver.save(sess, path, global_step=tf.train.get_global_step())
            return saved, _values(tf, sess)


def _restore(tf, path):
    with tf.Graph().as_default():
        _model(tf)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, path)
            return _values(tf, sess)


@pytest.mark.parametrize("writer,reader", [("dflow", "tensorflow"), ("tensorflow", "dflow"), ("dflow", "dflow")])
def test_checkpoint_round_trip(tmp_path, writer, reader):
    mods = {"dflow": dflow, "tensorflow": real_tf()}
    prefix = str(tmp_path / "model")
    saved, before = _save(mods[writer], prefix, 3)
    assert saved == prefix + "-3"
    after = _restore(mods[reader], saved)
    assert sorted(before) == ["beta1_power", "beta2_power", "count", "global_step", "layer/b", "layer/b/Adam",
                              "layer/b/Adam_1", "layer/w", "layer/w/Adam", "layer/w/Adam_1"]
    assert_same(before, after, rtol=0, atol=0)
    # Both readers see the same tensors in the file.
    for m in (dflow, real_tf()):
        listed = m.train.list_variables(str(tmp_path))
        assert [n for n, _ in listed] == sorted(before)
        assert dict(listed)["layer/w"] == [2, 3]
        r = m.train.NewCheckpointReader(saved)
        np.testing.assert_array_equal(r.get_tensor("layer/w"), before["layer/w"])
        assert r.has_tensor("count") and not r.has_tensor("nothing")
        assert r.get_variable_to_shape_map()["layer/b"] == [3]
        assert r.get_variable_to_dtype_map()["count"].name == "int64"
        assert m.train.latest_checkpoint(str(tmp_path)) == saved
        assert m.train.checkpoint_exists(saved)
        np.testing.assert_array_equal(m.train.load_variable(str(tmp_path), "layer/b"), before["layer/b"])


def test_checkpoint_state_and_max_to_keep(tmp_path):
    def run(tf, d):
        with tf.Graph().as_default():
            v = tf.Variable(1.0, name="v")
            inc = tf.assign_add(v, 1.0)
            saver = tf.train.Saver(max_to_keep=2)
            paths = []
            with tf.Session() as sess:
                sess.run(v.initializer)
                for step in range(4):
                    sess.run(inc)
                    paths.append(saver.save(sess, os.path.join(d, "m"), global_step=step * 10))
                unstepped = saver.save(sess, os.path.join(d, "plain"))
                last = saver.last_checkpoints
            state = tf.train.get_checkpoint_state(d)
            files = sorted(f for f in os.listdir(d) if ".index" in f)
            return ([os.path.relpath(p, d) for p in paths], os.path.relpath(unstepped, d),
                    [os.path.relpath(p, d) for p in last], os.path.relpath(state.model_checkpoint_path, d),
                    [os.path.relpath(p, d) for p in state.all_model_checkpoint_paths], files,
                    os.path.relpath(tf.train.latest_checkpoint(d), d))
    ours = run(dflow, str(tmp_path / "ours"))
    theirs = run(real_tf(), str(tmp_path / "theirs"))
    assert ours == theirs
    assert ours[2] == ["m-30", "plain"]


def test_var_list_dict_and_subsets(tmp_path):
    def run(tf):
        with tf.Graph().as_default():
            a = tf.Variable([1.0, 2.0], name="a")
            b = tf.Variable(3, name="b")
            saver = tf.train.Saver({"renamed": a})
            only_b = tf.train.Saver([b])
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                p1 = saver.save(sess, str(tmp_path / tf.__name__.split(".")[0] / "x"))
                p2 = only_b.save(sess, str(tmp_path / tf.__name__.split(".")[0] / "y"))
                sess.run([tf.assign(a, [0.0, 0.0]), tf.assign(b, 0)])
                saver.restore(sess, p1)
                only_b.restore(sess, p2)
                vals = sess.run([a, b])
            return ([n for n, _ in tf.train.list_variables(p1)], [n for n, _ in tf.train.list_variables(p2)], vals,
                    saver.saver_def.filename_tensor_name, only_b.saver_def.restore_op_name)
    ours, theirs = run(dflow), run(real_tf())
    assert ours[:2] == theirs[:2] == (["renamed"], ["b"])
    assert_same(ours[2], theirs[2])
    assert ours[3:] == theirs[3:]


def test_restore_and_save_errors(tmp_path):
    def run(tf, d):
        out = []
        os.makedirs(d, exist_ok=True)
        with tf.Graph().as_default():
            v = tf.Variable([1.0, 2.0], name="v")
            saver = tf.train.Saver()
            with tf.Session() as sess:
                try:
                    saver.save(sess, os.path.join(d, "uninit"))
                except tf.errors.FailedPreconditionError:
                    out.append("FailedPrecondition")
                sess.run(v.initializer)
                path = saver.save(sess, os.path.join(d, "good"))
                for bad in (None, os.path.join(d, "missing")):
                    try:
                        saver.restore(sess, bad)
                    except ValueError as e:
                        out.append(str(e).replace(d, "D"))
                try:
                    saver.save(sess, os.path.join(d, "no_such_dir", "x"))
                except (ValueError, tf.errors.NotFoundError) as e:
                    out.append(type(e).__name__)
        with tf.Graph().as_default():
            tf.Variable([1.0, 2.0, 3.0], name="v")
            tf.Variable(1.0, name="extra")
            with tf.Session() as sess:
                try:
                    tf.train.Saver(var_list=[tf.global_variables()[0]]).restore(sess, path)
                except tf.errors.InvalidArgumentError as e:
                    out.append(("InvalidArgument", str(e).startswith("Restoring from checkpoint failed")))
                try:
                    tf.train.Saver(var_list=[tf.global_variables()[1]]).restore(sess, path)
                except tf.errors.NotFoundError as e:
                    out.append(("NotFound", str(e).startswith("Restoring from checkpoint failed")))
        with tf.Graph().as_default():
            try:
                tf.train.Saver()
            except ValueError as e:
                out.append(str(e))
            empty = tf.train.Saver(allow_empty=True)
            for sess in (None, tf.Session()):
                try:
                    out.append(empty.save(sess, os.path.join(d, "empty")))
                except TypeError as e:
                    out.append(str(e))
        try:
            tf.train.NewCheckpointReader(os.path.join(d, "nothing"))
        except tf.errors.NotFoundError:
            out.append("reader NotFound")
        out.append(tf.train.latest_checkpoint(os.path.join(d, "nowhere")))
        out.append(tf.train.get_checkpoint_state(os.path.join(d, "nowhere")))
        return out
    ours = run(dflow, str(tmp_path / "ours"))
    theirs = run(real_tf(), str(tmp_path / "theirs"))
    assert ours == theirs


def test_saver_ops_and_global_step_tensor(tmp_path):
    def run(tf):
        with tf.Graph().as_default():
            tf.Variable(1.0, name="v")
            step = tf.train.get_or_create_global_step()
            s1 = tf.train.Saver()
            s2 = tf.train.Saver()
            names = [s1.saver_def.filename_tensor_name, s1.saver_def.save_tensor_name,
                     s1.saver_def.restore_op_name, s2.saver_def.restore_op_name]
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(tf.assign(step, 42))
                p = s1.save(sess, str(tmp_path / tf.__name__.split(".")[0] / "model"), global_step=step)
            return names, os.path.basename(p)
    assert run(dflow) == run(real_tf())


@pytest.mark.parametrize("writer,reader", [("dflow", "tensorflow"), ("tensorflow", "dflow")])
def test_partitioned_variables_are_saved_as_slices(tmp_path, writer, reader):
    mods = {"dflow": dflow, "tensorflow": real_tf()}
    value = np.arange(21.0, dtype=np.float32).reshape(7, 3)

    def save(tf):
        with tf.Graph().as_default():
            tf.get_variable("emb", initializer=tf.constant(value), partitioner=tf.fixed_size_partitioner(3))
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                return tf.train.Saver().save(sess, str(tmp_path / "m"))

    def restore(tf, path):
        with tf.Graph().as_default():
            v = tf.get_variable("emb", [7, 3], partitioner=tf.fixed_size_partitioner(2))
            whole = tf.get_variable("whole", [7, 3])
            with tf.Session() as sess:
                tf.train.Saver([v]).restore(sess, path)
                tf.train.Saver({"emb": whole}).restore(sess, path)
                return sess.run([tf.convert_to_tensor(v), whole])

    path = save(mods[writer])
    for m in (dflow, real_tf()):
        assert m.train.list_variables(path) == [("emb", [7, 3])]
        np.testing.assert_array_equal(m.train.load_variable(path, "emb"), value)
    got = restore(mods[reader], path)
    np.testing.assert_array_equal(got[0], value)
    np.testing.assert_array_equal(got[1], value)
