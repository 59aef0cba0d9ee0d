"""TensorFlow peer of BM_CsvDataset (bench/data_bench.cc): CSV input pipeline throughput in MB/s of
file bytes (1 MB = 1e6 bytes).

The file is data_bench's: a header line "rows,4,setosa,versicolor,virginica", then rows of four
floats in [0.1, 8.0) printed "%.1f" and an int label 0..2 ("5.1,3.5,1.4,0.2,0\n", 18 bytes each),
appended until the file reaches 32 MiB (the same byte count and shape; the random values differ),
written under /tmp. Each measured pass drains it once through a tf.compat.v1 session: an
initializable iterator is initialized, then Session.make_callable of get_next()[0] (the whole
GetNext runs; the first component is fetched, as data_bench fetches next[0]) is called until
OutOfRangeError. Passes repeat for at least 1 s after one warm-up pass.
  - mb_per_s: tf.data.experimental.CsvDataset(header=True, record_defaults=[0.0]*4 + [0])
    -> batch(1024) -> prefetch(2), as BM_CsvDataset;
  - decode_csv_batched_mb_per_s: TextLineDataset -> skip(1) -> batch(1024) -> map(decode_csv)
    -> prefetch(2), the vectorized form TensorFlow's guide recommends, as BM_DecodeCsvBatched.

Each inter-/intra-op thread setting (1 and 2) runs in a process of its own, the best (by mb_per_s)
reported (thread_settings.best_setting). Prints one JSON line:
{"name": "tf_csv", "mb_per_s": ..., "decode_csv_batched_mb_per_s": ..., "file_bytes": ..., "rows": ...,
 "inter_op": ..., "intra_op": ..., "peak_rss_mb": ...}.
"""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from thread_settings import best_setting  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()

TARGET_BYTES = 32 << 20
HEADER = "rows,4,setosa,versicolor,virginica\n"
PATH_ENV = "DFLOW_BENCH_CSV_PATH"  # the file the parent wrote, for the per-setting processes
DEFAULTS = [0.0, 0.0, 0.0, 0.0, 0]


def write_file(path):
    """data_bench's file: rows appended while the text is under 32 MiB; returns (bytes, rows)."""
    rng = np.random.default_rng(1)
    line = 18  # "d.d,d.d,d.d,d.d,d\n": every value in [0.1, 8.0) prints as one digit, a point, one digit
    rows = -(-(TARGET_BYTES - len(HEADER)) // line)
    values = np.round(rng.uniform(0.1, 8.0, (rows, 4)), 1)
    labels = rng.integers(0, 3, rows)
    with open(path, "w") as f:
        f.write(HEADER)
        for start in range(0, rows, 1 << 16):
            v, lab = values[start:start + (1 << 16)], labels[start:start + (1 << 16)]
            f.write("".join("%.1f,%.1f,%.1f,%.1f,%d\n" % (a, b, c, d, e)
                            for (a, b, c, d), e in zip(v.tolist(), lab.tolist())))
    size = os.path.getsize(path)
    assert size == len(HEADER) + rows * line, "unexpected file size %d" % size
    return size, rows


def csv_dataset(path):
    return tf1.data.experimental.CsvDataset(path, DEFAULTS, header=True).batch(1024).prefetch(2)


def decode_csv_batched(path):
    return (tf1.data.TextLineDataset(path).skip(1).batch(1024)
            .map(lambda lines: tuple(tf1.io.decode_csv(lines, DEFAULTS))).prefetch(2))


def throughput(make, path, size, rows, inter, intra, min_seconds=1.0):
    with tf1.Graph().as_default():
        it = tf1.data.make_initializable_iterator(make(path))
        first = it.get_next()[0]
        config = tf1.ConfigProto(inter_op_parallelism_threads=inter, intra_op_parallelism_threads=intra)
        with tf1.Session(config=config) as sess:
            get = sess.make_callable(first)

            def drain():
                sess.run(it.initializer)
                n = 0
                try:
                    while True:
                        n += len(get())
                except tf1.errors.OutOfRangeError:
                    pass
                assert n == rows, "read %d rows of %d" % (n, rows)

            drain()  # warm up
            passes, t0 = 0, time.perf_counter()
            while True:
                drain()
                passes += 1
                elapsed = time.perf_counter() - t0
                if elapsed >= min_seconds:
                    return passes * size / elapsed / 1e6


def measure(inter, intra):
    path = os.environ.get(PATH_ENV)
    own = path is None
    if own:
        path = "/tmp/tf_csv_bench_%d.csv" % os.getpid()
    try:
        if own:
            size, rows = write_file(path)
        else:
            size, rows = os.path.getsize(path), (os.path.getsize(path) - len(HEADER)) // 18
        return {"mb_per_s": throughput(csv_dataset, path, size, rows, inter, intra),
                "decode_csv_batched_mb_per_s": throughput(decode_csv_batched, path, size, rows, inter, intra),
                "file_bytes": size, "rows": rows}
    finally:
        if own:
            os.remove(path)


if len(sys.argv) == 3:  # one thread setting, in a process of its own
    best_setting("tf_csv", measure, key="mb_per_s", higher_is_better=True)
else:
    csv_path = "/tmp/tf_csv_bench_%d.csv" % os.getpid()
    try:
        write_file(csv_path)
        os.environ[PATH_ENV] = csv_path
        best_setting("tf_csv", measure, key="mb_per_s", higher_is_better=True)
    finally:
        os.remove(csv_path)
