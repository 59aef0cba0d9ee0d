"""tf.data: pipelines built from Python, checked element by element against TensorFlow's tf.data
(tf.compat.v1 graph mode)."""
import collections
import os

import numpy as np
import pytest

from conftest import assert_same, run_both

Point = collections.namedtuple("Point", ["x", "y"])


def drain(tf, ds_or_next, feed=None, init=None, limit=1000):
    """Every element of a dataset (or of a get_next structure) until OutOfRangeError."""
    nxt = ds_or_next
    if isinstance(ds_or_next, tf.data.Dataset):
        nxt = tf.data.make_one_shot_iterator(ds_or_next).get_next()
    out = []
    with tf.Session() as s:
        if init is not None:
            s.run(init, feed_dict=feed)
        for _ in range(limit):
            try:
                out.append(s.run(nxt))
            except tf.errors.OutOfRangeError:
                return out
    raise AssertionError("the dataset did not end within %d elements" % limit)


def same_pipeline(build, **kw):
    ours, theirs = run_both(lambda tf: drain(tf, build(tf), **kw))
    assert_same(ours, theirs)
    return ours


def test_from_tensor_slices_structures():
    same_pipeline(lambda tf: tf.data.Dataset.from_tensor_slices([1, 2, 3]))
    same_pipeline(lambda tf: tf.data.Dataset.from_tensor_slices(np.arange(12, dtype=np.float64).reshape(4, 3)))
    same_pipeline(lambda tf: tf.data.Dataset.from_tensor_slices((np.arange(4), ["a", "b", "c", "d"])))
    same_pipeline(lambda tf: tf.data.Dataset.from_tensor_slices(
        {"b": [[1.0, 2.0], [3.0, 4.0]], "a": np.array([True, False]), "c": ([5, 6], {"z": [b"p", b"q"]})}))
    same_pipeline(lambda tf: tf.data.Dataset.from_tensor_slices(Point(x=[1, 2], y=[3.5, 4.5])))
    same_pipeline(lambda tf: tf.data.Dataset.from_tensor_slices(({"f": [1, 2, 3]}, [0, 1, 0])).batch(2))
    same_pipeline(lambda tf: tf.data.Dataset.from_tensors(([1, 2, 3], "s")).repeat(2))


def test_structure_types_shapes_classes():
    def build(tf):
        ds = tf.data.Dataset.from_tensor_slices(({"a": np.zeros([5, 2], np.float32), "b": [1, 2, 3, 4, 5]},
                                                 np.arange(5, dtype=np.int64)))
        ds = ds.map(lambda f, l: (f, tf.cast(l, tf.float64) * 2.0)).batch(2)
        ds2 = ds.batch(3, drop_remainder=True)
        it = ds.make_initializable_iterator()
        def fmt(s):  # dtypes and shapes by name, in the structure
            if isinstance(s, dict):
                return {k: fmt(v) for k, v in s.items()}
            if isinstance(s, tuple):
                return tuple(fmt(v) for v in s)
            return str(s)
        return [fmt(tf.data.get_output_types(ds)), fmt(tf.data.get_output_shapes(ds)), fmt(ds2.output_shapes),
                fmt(tf.compat.v1.data.get_output_types(it)), fmt(it.output_shapes),
                [c.__name__ for c in tf.nest.flatten(tf.data.get_output_classes(ds))] if hasattr(tf, "nest") else
                [c.__name__ for c in (ds.output_classes[0]["a"], ds.output_classes[0]["b"], ds.output_classes[1])]]
    ours, theirs = run_both(build)
    assert ours[:5] == theirs[:5]
    assert all(n == "Tensor" for n in ours[5]) and all(n == "Tensor" for n in theirs[5])


def test_map_filter_nested_structures():
    def build(tf):
        ds = tf.data.Dataset.range(10)
        ds = ds.map(lambda x: {"x": x, "sq": (x * x, tf.cast(x, tf.float32) / 2)})
        ds = ds.filter(lambda d: tf.equal(d["x"] % 3, 0))
        ds = ds.map(lambda d: (d["sq"][1], Point(x=d["x"], y=d["sq"][0])))
        return ds.map(lambda a, p: (a, p.x + p.y), num_parallel_calls=4)
    same_pipeline(build)


def test_map_keeps_namedtuples_and_dicts():
    def build(tf):
        ds = tf.data.Dataset.from_tensor_slices(Point(x=[1, 2, 3], y=[4, 5, 6]))
        return ds.map(lambda p: Point(x=p.y, y=p.x * 10))
    ours = same_pipeline(build)
    assert isinstance(ours[0], Point)


def test_transformations_in_order():
    same_pipeline(lambda tf: tf.data.Dataset.range(20).skip(3).take(11).shard(3, 1).repeat(2).batch(3).prefetch(2))
    same_pipeline(lambda tf: tf.data.Dataset.range(2, 17, 3).batch(4, drop_remainder=True))
    same_pipeline(lambda tf: tf.data.Dataset.range(5).enumerate(start=10))
    same_pipeline(lambda tf: tf.data.Dataset.zip((tf.data.Dataset.range(4), {
        "a": tf.data.Dataset.from_tensor_slices(["x", "y", "z"]), "b": tf.data.Dataset.range(3, 10)})))
    same_pipeline(lambda tf: tf.data.Dataset.range(7).apply(lambda d: d.map(lambda x: -x)).take(-1).skip(0))


def test_shuffle_with_seed_is_a_permutation_and_repeatable(tf):
    def build(m):
        m.set_random_seed(3)
        return m.data.Dataset.range(50).shuffle(20, seed=7).batch(50)
    ours, theirs = run_both(lambda m: drain(m, build(m)))
    assert sorted(ours[0]) == sorted(theirs[0]) == list(range(50))
    assert list(ours[0]) != list(range(50))
    again, _ = run_both(lambda m: drain(m, build(m)))
    np.testing.assert_array_equal(ours[0], again[0])
    # reshuffle_each_iteration: each epoch of a repeat is another permutation of the same elements.
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        epochs = drain(tf, tf.data.Dataset.range(30).shuffle(30, seed=2).batch(30).repeat(2))
    assert sorted(epochs[0]) == sorted(epochs[1]) == list(range(30))
    assert list(epochs[0]) != list(epochs[1])
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        epochs = drain(tf, tf.data.Dataset.range(30).shuffle(30, seed=2, reshuffle_each_iteration=False)
                       .batch(30).repeat(2))
    np.testing.assert_array_equal(epochs[0], epochs[1])


class MapError(Exception):
    pass


def test_exception_in_map_function_reaches_the_caller(tf):
    err = MapError("raised inside the map function")

    def fn(x):
        y = x * 2
        raise err
    ds = tf.data.Dataset.range(3)
    with pytest.raises(MapError) as info:
        ds.map(fn)
    assert info.value is err
    # The graph stays usable.
    assert drain(tf, ds.map(lambda x: x + 1)) == [1, 2, 3]
    with pytest.raises(KeyError):
        tf.data.Dataset.from_tensor_slices({"a": [1]}).map(lambda d: d["missing"])
    with pytest.raises(ZeroDivisionError):
        tf.data.Dataset.range(3).filter(lambda x: 1 / 0)


def test_bad_functions_raise_as_tensorflow(both):
    tf = both
    ds = both.data.Dataset.range(3)
    with pytest.raises(ValueError):
        ds.filter(lambda x: x)  # not a bool
    with pytest.raises(TypeError):
        ds.map(lambda x: x + tf.constant(1.5))  # int64 + float32


def test_out_of_range_at_the_end(both):
    tf = both
    nxt = tf.data.make_one_shot_iterator(tf.data.Dataset.range(2)).get_next()
    with tf.Session() as s:
        assert s.run(nxt) == 0
        assert s.run(nxt) == 1
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(nxt)
        with pytest.raises(tf.errors.OutOfRangeError):
            s.run(nxt)


def test_initializable_iterator_with_placeholders():
    def build(tf):
        n = tf.placeholder(tf.int64, [])
        data = tf.placeholder(tf.float32, [None, 2])
        it = tf.data.Dataset.zip((tf.data.Dataset.range(n), tf.data.Dataset.from_tensor_slices(data))) \
            .batch(2).make_initializable_iterator()
        nxt = it.get_next()
        out = []
        with tf.Session() as s:
            for rows in (3, 5):
                s.run(it.initializer, {n: rows, data: np.arange(2 * rows, dtype=np.float32).reshape(rows, 2)})
                while True:
                    try:
                        out.append(s.run(nxt))
                    except tf.errors.OutOfRangeError:
                        break
        return out
    ours, theirs = run_both(build)
    assert_same(ours, theirs)


def test_one_shot_iterator_refuses_placeholders(tf):
    n = tf.placeholder(tf.int64, [])
    with pytest.raises(ValueError, match="placeholder"):
        tf.data.Dataset.range(n).make_one_shot_iterator()
    with pytest.raises(ValueError, match="initializer"):
        tf.data.Dataset.range(3).make_one_shot_iterator().initializer


def test_reinitializable_iterator():
    def build(tf):
        train = tf.data.Dataset.range(4).map(lambda x: tf.cast(x, tf.float32))
        val = tf.data.Dataset.from_tensor_slices([10.0, 20.0])
        it = tf.data.Iterator.from_structure(tf.data.get_output_types(train), tf.data.get_output_shapes(train))
        nxt = it.get_next()
        inits = [it.make_initializer(train), it.make_initializer(val)]
        out = []
        with tf.Session() as s:
            for init in inits + inits[:1]:
                s.run(init)
                while True:
                    try:
                        out.append(s.run(nxt))
                    except tf.errors.OutOfRangeError:
                        break
        return out
    ours, theirs = run_both(build)
    assert_same(ours, theirs)


def test_text_line_and_csv_files(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("first line\nsecond, with comma\n\nlast")
    b = tmp_path / "b.txt"
    b.write_text("other file\r\nend\n")
    same_pipeline(lambda tf: tf.data.TextLineDataset([str(a), str(b)]).map(lambda l: (l, tf.size(l))))
    csv = tmp_path / "d.csv"
    csv.write_text('x,y,name,n\n1.5,2,"a, quoted",7\n-3,,b,8\n4e2,5,"say ""hi""",9\n')
    defaults = lambda tf: [[0.0], [-1], [""], tf.int64]  # noqa: E731
    same_pipeline(lambda tf: tf.data.experimental.CsvDataset(str(csv), defaults(tf), header=True))
    same_pipeline(lambda tf: tf.data.experimental.CsvDataset(str(csv), [[0.0], [""]], header=True,
                                                              select_cols=[0, 2]).batch(2))
    lines = ["1,2.5,a", "3,,b", '4,5,"c,d"']
    same_pipeline(lambda tf: tf.data.Dataset.from_tensor_slices(lines).batch(3).map(
        lambda l: tf.decode_csv(l, [[0], [9.0], ["?"]])))


def test_csv_errors_name_the_file_and_line(tf, tmp_path):
    csv = tmp_path / "bad.csv"
    csv.write_text("1,2\n3,oops\n")
    nxt = tf.data.experimental.CsvDataset(str(csv), [[0], [0]]).make_one_shot_iterator().get_next()
    with tf.Session() as s:
        s.run(nxt)
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad.csv:2"):
            s.run(nxt)


def test_make_csv_dataset():
    import tempfile
    d = tempfile.mkdtemp()
    path = os.path.join(d, "m.csv")
    with open(path, "w") as f:
        f.write("a,b,label,s\n")
        for i in range(7):
            f.write("%d,%s,%d,w%d\n" % (i, i * 0.5, i % 2, i))

    def build(tf):
        return tf.data.experimental.make_csv_dataset(path, batch_size=3, label_name="label", num_epochs=1,
                                                     shuffle=False)
    ours = same_pipeline(build)
    assert list(ours[0][0]) == ["a", "b", "s"]


def test_tfrecord_files_both_ways(tf, tmp_path):
    ours_path = str(tmp_path / "ours.tfrecord")
    records = [b"", b"one", bytes(range(256)) * 40]
    with tf.io.TFRecordWriter(ours_path) as w:
        for r in records:
            w.write(r)
    with tf.python_io.TFRecordWriter(str(tmp_path / "py_io.tfrecord")) as w:
        w.write("text")
    assert list(tf.python_io.tf_record_iterator(str(tmp_path / "py_io.tfrecord"))) == [b"text"]
    # TensorFlow reads what dflow wrote, and dflow what TensorFlow wrote.
    theirs_path = str(tmp_path / "theirs.tfrecord")
    from conftest import real_tf
    rtf = real_tf()
    with rtf.io.TFRecordWriter(theirs_path) as w:
        for r in records:
            w.write(r)
    ours, theirs = run_both(lambda m: drain(m, m.data.TFRecordDataset([ours_path, theirs_path])))
    assert ours == theirs == records + records


def test_damaged_tfrecord_is_data_loss(tf, tmp_path):
    p = str(tmp_path / "d.tfrecord")
    with tf.io.TFRecordWriter(p) as w:
        w.write(b"x" * 100)
    data = open(p, "rb").read()
    open(p, "wb").write(data[:-10])
    with pytest.raises(tf.errors.DataLossError, match="d.tfrecord"):
        drain(tf, tf.data.TFRecordDataset(p))


def test_list_files_and_cache(tf, tmp_path):
    for n in ("b.txt", "a.txt", "c.dat"):
        (tmp_path / n).write_text(n)
    files = drain(tf, tf.data.Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False))
    assert [os.path.basename(f) for f in files] == [b"a.txt", b"b.txt"]
    ds = tf.data.Dataset.range(4).map(lambda x: x * 3).cache().repeat(2)
    assert drain(tf, ds) == [0, 3, 6, 9] * 2
    with pytest.raises(NotImplementedError, match="CacheDataset"):
        tf.data.Dataset.range(4).shuffle(4).cache()


def test_datasets_feed_a_model(tf):
    # A typical input pipeline: features dict and labels, batched, repeated, read by a model.
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10) % 2
    ds = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat(3).batch(4)
    features, labels = ds.make_one_shot_iterator().get_next()
    total = tf.reduce_sum(features["x"]) + tf.cast(tf.reduce_sum(labels), tf.float32)
    sums = drain(tf, total)
    assert len(sums) == 8
    assert np.isclose(sum(sums), 3 * (x.sum() + y.sum()))


def test_bad_arguments_fail_when_the_pipeline_starts(both):
    tf = both
    for ds in (tf.data.Dataset.range(0, 10, 0), tf.data.Dataset.range(10).shard(2, 5)):
        nxt = tf.data.make_one_shot_iterator(ds).get_next()
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(nxt)
