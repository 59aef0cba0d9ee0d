"""TensorFlow peer of BM_Save1GiB and BM_Restore1GiB (bench/checkpoint_bench.cc): checkpoint save and
restore of 1 GiB of variables, in GB/s of variable bytes (1 GB = 1e9 bytes).

The variables are checkpoint_bench's: 4 float32 variables of 64 Mi elements (256 MiB each),
initialized uniform in [-1, 1), TensorFlow 1.x variables (tf.compat.v1 with v2 behavior disabled:
VariableV2, as dflow's). tf.compat.v1.train.Saver(max_to_keep=2) writes V2 checkpoints with its
defaults, as dflow's Saver does: a meta graph (write_meta_graph=True) and the state file with each
save, to "model-<step>" in a fresh directory under $TMPDIR or /tmp.
  - save: 3 saves timed back to back (global steps 1, 2, 3), as BM_Save1GiB's 3 iterations;
  - restore: after one save, 3 restores of it timed, as BM_Restore1GiB's; TensorFlow's save leaves
    the files in the page cache, so these are memory copies;
  - restore_cold: 3 restores each after the files were written back and dropped from the page cache
    (sync + POSIX_FADV_DONTNEED, untimed), as after a restart. dflow's save writes around the page
    cache (O_DIRECT), so its restores read the disk: this is the figure that compares like with like.
TensorFlow's save does not fsync its files; dflow's does (its figure includes the disk).

Each inter-/intra-op thread setting (1 and 2) runs in a process of its own; the setting with the
least save + restore time is reported (thread_settings.best_setting). Prints one JSON line:
{"name": "tf_checkpoint", "save_gb_per_s": ..., "restore_gb_per_s": ..., "restore_cold_gb_per_s": ..., "bytes": ...,
 "variables": 4,
 "save_plus_restore_s": ..., "inter_op": ..., "intra_op": ..., "peak_rss_mb": ...}.
"""
import os
import shutil
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from thread_settings import best_setting  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf1  # noqa: E402

tf1.disable_v2_behavior()
tf1.get_logger().setLevel("ERROR")

COUNT, FLOATS, ITERATIONS = 4, 64 << 20, 3


def measure(inter, intra):
    nbytes = COUNT * FLOATS * 4
    tmp = tempfile.mkdtemp(prefix="tf_checkpoint_", dir=os.environ.get("TMPDIR") or "/tmp")
    try:
        with tf1.Graph().as_default():
            vs = [tf1.Variable(tf1.random_uniform([FLOATS], -1.0, 1.0, seed=1 + i), name="v%d" % i)
                  for i in range(COUNT)]
            saver = tf1.train.Saver(max_to_keep=2)
            config = tf1.ConfigProto(inter_op_parallelism_threads=inter, intra_op_parallelism_threads=intra)
            with tf1.Session(config=config) as sess:
                sess.run(tf1.global_variables_initializer())
                prefix = os.path.join(tmp, "model")
                t0 = time.perf_counter()
                for step in range(1, ITERATIONS + 1):
                    path = saver.save(sess, prefix, global_step=step)
                save_s = (time.perf_counter() - t0) / ITERATIONS
                assert os.path.exists(path + ".index") and os.path.exists(path + ".meta"), path
                expected = sess.run(vs[0][:1000])
                sess.run(vs[0].assign(tf1.zeros([FLOATS])))
                t0 = time.perf_counter()
                for _ in range(ITERATIONS):
                    saver.restore(sess, path)
                restore_s = (time.perf_counter() - t0) / ITERATIONS
                assert np.array_equal(sess.run(vs[0][:1000]), expected), "the restored values differ"
                # The same from a cold page cache (the files written back and dropped from memory
                # before each restore, outside the timing), as after a restart or on another machine.
                cold = 0.0
                for _ in range(ITERATIONS):
                    evict(tmp)
                    t0 = time.perf_counter()
                    saver.restore(sess, path)
                    cold += time.perf_counter() - t0
                restore_cold_s = cold / ITERATIONS
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"save_gb_per_s": nbytes / save_s / 1e9, "restore_gb_per_s": nbytes / restore_s / 1e9,
            "restore_cold_gb_per_s": nbytes / restore_cold_s / 1e9, "bytes": nbytes, "variables": COUNT,
            "save_plus_restore_s": save_s + restore_s}


def evict(directory):
    os.sync()
    for name in os.listdir(directory):
        fd = os.open(os.path.join(directory, name), os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


best_setting("tf_checkpoint", measure, key="save_plus_restore_s", higher_is_better=False)
