"""tf.feature_column: input_layer and linear_model values, names and errors against TensorFlow's
(tf.compat.v1 graph mode)."""
import numpy as np
import pytest

from conftest import assert_same, run_both

TABLE = np.arange(60, dtype=np.float32).reshape(20, 3) / 10.0


def run_layer(tf, build):
    out = build(tf)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        s.run(tf.tables_initializer())
        return s.run(out)


def same_layer(build, **kw):
    ours, theirs = run_both(lambda tf: run_layer(tf, build))
    assert_same(ours, theirs, **kw)
    return ours


def test_numeric_and_bucketized_columns():
    def build(tf):
        fc = tf.feature_column
        cols = [fc.numeric_column("a", shape=2), fc.numeric_column("i", dtype=tf.int64),
                fc.numeric_column("n", normalizer_fn=lambda x: (x - 3.0) * 2.0),
                fc.bucketized_column(fc.numeric_column("b"), [0.0, 1.0, 10.0]),
                fc.bucketized_column(fc.numeric_column("m", shape=(2,)), [0.0, 5.0])]
        feats = {"a": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "i": np.array([7, 8, 9], np.int64),
                 "n": [[1.0], [2.0], [3.0]], "b": [-1.0, 1.0, 20.0], "m": [[-1.0, 7.0], [0.0, 5.0], [3.0, 3.0]]}
        return tf.feature_column.input_layer(feats, cols)
    out = same_layer(build)
    assert out.shape == (3, 2 + 1 + 1 + 4 + 6)


def test_categorical_columns_as_indicators():
    def build(tf):
        fc = tf.feature_column
        cols = [fc.indicator_column(fc.categorical_column_with_vocabulary_list("c", ["x", "y", "z"],
                                                                               num_oov_buckets=2)),
                fc.indicator_column(fc.categorical_column_with_vocabulary_list("d", ["x", "y"])),
                fc.indicator_column(fc.categorical_column_with_vocabulary_list("v", [10, 20, 30], dtype=tf.int64)),
                fc.indicator_column(fc.categorical_column_with_identity("id", 4)),
                fc.indicator_column(fc.categorical_column_with_hash_bucket("h", 7)),
                fc.indicator_column(fc.categorical_column_with_hash_bucket("hi", 5, dtype=tf.int64))]
        feats = {"c": [["x", "q"], ["z", ""], ["w", "y"]],  # multivalent, "" absent
                 "d": ["y", "nope", "x"],
                 "v": np.array([[20], [40], [-1]], np.int64),
                 "id": np.array([[0, 3], [1, -1], [2, 2]], np.int64),
                 "h": ["alpha", "beta", "gamma"],
                 "hi": np.array([12345, -3, 7], np.int64)}
        return tf.feature_column.input_layer(feats, cols)
    same_layer(build)


@pytest.mark.parametrize("combiner", ["mean", "sum", "sqrtn"])
def test_embedding_columns(combiner):
    def build(tf):
        fc = tf.feature_column
        init = tf.constant_initializer(TABLE)
        cols = [fc.embedding_column(fc.categorical_column_with_hash_bucket("w", 20), 3, combiner=combiner,
                                    initializer=init),
                fc.embedding_column(fc.categorical_column_with_vocabulary_list("k", ["a", "b", "c"],
                                                                               num_oov_buckets=17),
                                    3, combiner=combiner, initializer=init)]
        feats = {"w": [["the", "cat", "sat"], ["on", "", ""], ["", "", ""]],
                 "k": [["a", "c"], ["zzz", ""], ["b", "b"]]}
        return tf.feature_column.input_layer(feats, cols)
    same_layer(build)


def test_variable_names_and_collections():
    def build(tf):
        fc = tf.feature_column
        cols = [fc.embedding_column(fc.categorical_column_with_identity("e", 5), 2),
                fc.numeric_column("x")]
        tf.feature_column.input_layer({"e": np.array([1, 2], np.int64), "x": [1.0, 2.0]}, cols)
        with tf.variable_scope("tower") if hasattr(tf, "variable_scope") else tf.name_scope("tower"):
            tf.feature_column.input_layer({"e": np.array([1, 2], np.int64), "x": [1.0, 2.0]}, cols)
        return ([(v.op.name, v.shape.as_list()) for v in tf.global_variables()],
                [v.op.name for v in tf.trainable_variables()])
    ours, theirs = run_both(build)
    assert ours == theirs


def test_linear_model():
    def build(tf):
        fc = tf.feature_column
        cols = [fc.numeric_column("x", shape=2), fc.categorical_column_with_vocabulary_list("c", ["a", "b", "c"]),
                fc.bucketized_column(fc.numeric_column("b"), [0.0, 1.0])]
        feats = {"x": [[1.0, 2.0], [3.0, -4.0]], "c": [["a", "c"], ["b", ""]], "b": [0.5, -2.0]}
        cols_to_vars = {}
        logits = tf.feature_column.linear_model(feats, cols, units=2, cols_to_vars=cols_to_vars)
        assigns = []
        for i, (col, vs) in enumerate(sorted(cols_to_vars.items(), key=lambda kv: str(kv[0]))):
            for v in vs:
                shape = v.shape.as_list()
                value = (np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + i) / 4.0
                assigns.append(tf.assign(v, value))
        names = sorted(v.op.name for v in tf.global_variables())
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            s.run(tf.tables_initializer())
            zero = s.run(logits)
            s.run(assigns)
            return names, zero, s.run(logits)
    ours, theirs = run_both(build)
    assert_same(ours, theirs)
    assert not np.any(ours[1])


def test_columns_print_as_tensorflows():
    def build(tf):
        fc = tf.feature_column
        return [repr(fc.numeric_column("a", shape=(2,))), repr(fc.categorical_column_with_identity("i", 3)),
                repr(fc.categorical_column_with_hash_bucket("h", 9)),
                fc.bucketized_column(fc.numeric_column("b"), [1.0]).name,
                fc.indicator_column(fc.categorical_column_with_identity("i", 3)).name,
                fc.embedding_column(fc.categorical_column_with_identity("i", 3), 2).name]
    ours, theirs = run_both(build)
    assert ours == theirs


def test_bad_columns_raise_as_tensorflow(both):
    fc = both.feature_column
    with pytest.raises(ValueError):
        fc.bucketized_column(fc.numeric_column("b"), [2.0, 1.0])
    with pytest.raises(ValueError):
        fc.categorical_column_with_vocabulary_list("c", [])
    with pytest.raises(ValueError):
        fc.categorical_column_with_hash_bucket("h", 0)
    with pytest.raises(ValueError):
        fc.numeric_column("n", shape=(0,))
    with pytest.raises(ValueError):
        fc.embedding_column(fc.categorical_column_with_identity("i", 3), 0)
    with pytest.raises(ValueError):  # a categorical column given to input_layer unwrapped
        fc.input_layer({"i": np.array([1], np.int64)}, [fc.categorical_column_with_identity("i", 3)])


def test_missing_feature_is_an_error(tf):
    fc = tf.feature_column
    with pytest.raises(ValueError, match="'y'"):
        fc.input_layer({"x": [1.0]}, [fc.numeric_column("y")])


def test_identity_out_of_range_fails_the_step(tf):
    # TensorFlow 1.x's check (TensorFlow 2.21's dense-input path drops such ids silently).
    fc = tf.feature_column
    out = fc.input_layer({"i": np.array([1, 5], np.int64)},
                         [fc.indicator_column(fc.categorical_column_with_identity("i", 3))])
    with tf.Session() as s:
        with pytest.raises(tf.errors.InvalidArgumentError, match="exceeds number of buckets"):
            s.run(out)


class NormalizerError(Exception):
    pass


def test_exception_in_normalizer_fn_reaches_the_caller(tf):
    err = NormalizerError("bad normalizer")

    def norm(x):
        raise err
    col = tf.feature_column.numeric_column("x", normalizer_fn=norm)
    with pytest.raises(NormalizerError) as info:
        tf.feature_column.input_layer({"x": [1.0, 2.0]}, [col])
    assert info.value is err
    # The graph is still usable.
    out = tf.feature_column.input_layer({"x": [1.0, 2.0]}, [tf.feature_column.numeric_column("x")])
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run(out), [[1.0], [2.0]])
