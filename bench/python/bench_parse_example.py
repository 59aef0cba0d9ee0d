#!/usr/bin/env python3
"""ParseExampleV2 beside real TensorFlow: one Session.run parsing a batch of serialized
tf.train.Example protos (a serving request), the same graph (built by tf.io.parse_example) in each.

  PYTHONPATH=build/python python3 bench/python/bench_parse_example.py [--batch 1000] [--rounds 7]

The examples: 10 float features (FixedLenFeature [], with defaults, one left out of every example),
one float [8] vector, 2 int64 ids, 3 string categorical features (VarLenFeature, 0 to 3 values).
Printed: median milliseconds per batch over interleaved rounds (dflow, TensorFlow, dflow, ...), each
round the best of several runs, and the ratio.
"""
import argparse
import os
import random
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import dflow  # noqa: E402


def real_tf():
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    tf.get_logger().setLevel("ERROR")
    return tf


def features(tf):
    spec = {"f%d" % i: tf.io.FixedLenFeature([], tf.float32, default_value=0.0) for i in range(10)}
    spec["vec"] = tf.io.FixedLenFeature([8], tf.float32)
    spec["id0"] = tf.io.FixedLenFeature([], tf.int64, default_value=-1)
    spec["id1"] = tf.io.FixedLenFeature([], tf.int64, default_value=-1)
    for i in range(3):
        spec["cat%d" % i] = tf.io.VarLenFeature(tf.string)
    return spec


def examples(tf, n, seed=16):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        f = {"f%d" % i: tf.train.Feature(float_list=tf.train.FloatList(value=[rng.random()])) for i in range(9)}
        f["vec"] = tf.train.Feature(float_list=tf.train.FloatList(value=[rng.random() for _ in range(8)]))
        for k in ("id0", "id1"):
            f[k] = tf.train.Feature(int64_list=tf.train.Int64List(value=[rng.randrange(1 << 40)]))
        for i in range(3):
            vals = [("v%d" % rng.randrange(1000)).encode() for _ in range(rng.randrange(4))]
            f["cat%d" % i] = tf.train.Feature(bytes_list=tf.train.BytesList(value=vals))
        out.append(tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString())
    return out


def setup(tf, batch):
    g = tf.Graph()
    with g.as_default():
        s = tf.placeholder(tf.string, [None])
        parsed = tf.io.parse_example(s, features(tf))
        fetches = [v for k, v in sorted(parsed.items()) if not hasattr(v, "dense_shape")]
        fetches += [t for k, v in sorted(parsed.items()) if hasattr(v, "dense_shape")
                    for t in (v.indices, v.values, v.dense_shape)]
    sess = tf.Session(graph=g)
    feed = {s: batch}

    def sample(runs=5):
        best = float("inf")
        for _ in range(runs):
            t = time.perf_counter()
            sess.run(fetches, feed)
            best = min(best, time.perf_counter() - t)
        return best
    sess.run(fetches, feed)  # warm up
    return sample


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    tf = real_tf()
    batch = examples(tf, a.batch)
    empty = setup(tf, [])  # the cost of a run that parses nothing, for reference
    runs = {"dflow": setup(dflow, batch), "tensorflow": setup(tf, batch)}
    runs_empty = {"dflow": setup(dflow, []), "tensorflow": empty}
    times = {k: [] for k in runs}
    times_empty = {k: [] for k in runs}
    for _ in range(a.rounds):
        for k in runs:
            times[k].append(runs[k]())
            times_empty[k].append(runs_empty[k]())
    size = sum(len(b) for b in batch)
    print("parse_example: %d examples (%d bytes), 16 features" % (a.batch, size))
    for k in runs:
        print("  %-10s %8.3f ms per batch   (empty batch %.3f ms)" % (
            k, 1e3 * statistics.median(times[k]), 1e3 * statistics.median(times_empty[k])))
    print("  dflow / tensorflow: %.2f" % (statistics.median(times["dflow"]) / statistics.median(times["tensorflow"])))


if __name__ == "__main__":
    main()
