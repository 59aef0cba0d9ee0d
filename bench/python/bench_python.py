#!/usr/bin/env python3
"""The Python front end's speed beside real TensorFlow (tf.compat.v1, graph mode) in the same run.

  PYTHONPATH=build/python python3 bench/python/bench_python.py [--rounds 7] [--json out.jsonl]

Rows (medians of interleaved rounds: dflow, TensorFlow, dflow, ...):
  run_tiny   Session.run of one scalar add, fed and fetched: time per call
  build_10k  building 10,000 ops from Python (5,000 x `t = tf.add(t, 1.0)`: a Const and an AddV2)
  feed_64m   feeding a 64 MiB float32 array and fetching it back (through Identity), beside
             numpy's copy of the same array (np.copy)
"""
import argparse
import gc
import json
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

import dflow  # noqa: E402


def real_tf():
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
    tf.get_logger().setLevel("ERROR")
    return tf


# Each benchmark: setup(tf) -> a callable timing one sample, returning seconds per unit.

def run_tiny(tf, calls):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        y = x + 1.0
    sess = tf.Session(graph=g)
    for _ in range(200):
        sess.run(y, {x: 3.0})
    assert sess.run(y, {x: 3.0}) == 4.0

    def sample():
        run = sess.run
        t0 = time.perf_counter()
        for _ in range(calls):
            run(y, {x: 3.0})
        return (time.perf_counter() - t0) / calls
    return sample, sess.close


def build_10k(tf, n_ops=10000):
    def sample():
        g = tf.Graph()
        gc.collect()
        with g.as_default():
            t0 = time.perf_counter()
            t = tf.constant(0.0)
            for _ in range(n_ops // 2):
                t = tf.add(t, 1.0)
            dt = time.perf_counter() - t0
            assert len(g.get_operations()) == n_ops + 1
        return dt
    return sample, lambda: None


MIB64 = 64 * 1024 * 1024 // 4


def feed_64m(tf):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [MIB64], name="x")
        y = tf.identity(x)
    sess = tf.Session(graph=g)
    a = np.random.default_rng(0).random(MIB64, dtype=np.float32)
    out = sess.run(y, {x: a})
    np.testing.assert_array_equal(out, a)
    del out

    def sample():
        t0 = time.perf_counter()
        out = sess.run(y, {x: a})
        dt = time.perf_counter() - t0
        del out
        return dt
    return sample, sess.close


def numpy_copy_64m():
    a = np.random.default_rng(0).random(MIB64, dtype=np.float32)

    def sample():
        t0 = time.perf_counter()
        out = np.copy(a)
        dt = time.perf_counter() - t0
        del out
        return dt
    return sample, lambda: None


def interleave(samplers, rounds):
    """samplers: {name: sample}; runs them in turn `rounds` times; returns {name: [times]}."""
    times = {k: [] for k in samplers}
    for _ in range(rounds):
        for k, s in samplers.items():
            times[k].append(s())
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=5000, help="Session.run calls per run_tiny sample")
    ap.add_argument("--json", help="append the rows as JSON lines to this file")
    ap.add_argument("--only", help="comma-separated rows to run")
    args = ap.parse_args()
    tf = real_tf()
    rows = []
    only = set(args.only.split(",")) if args.only else None

    def bench(name, samplers, unit, scale, ratio_of, target):
        if only and name not in only:
            return
        made = {k: v() for k, v in samplers.items()}
        t = interleave({k: m[0] for k, m in made.items()}, args.rounds)
        for m in made.values():
            m[1]()
        med = {k: statistics.median(v) * scale for k, v in t.items()}
        a, b = ratio_of
        row = {"bench": name, "unit": unit, "rounds": args.rounds, "target": target,
               **{k: round(v, 3) for k, v in med.items()},
               "ratio": round(med[a] / med[b], 3), "ratio_of": "%s/%s" % (a, b),
               "spread": {k: [round(x * scale, 3) for x in (min(v), max(v))] for k, v in t.items()}}
        rows.append(row)
        print("%-10s %s  %s = %.3f  (target %s)" % (
            name, "  ".join("%s %.3f %s" % (k, v, unit) for k, v in med.items()), row["ratio_of"],
            row["ratio"], target), flush=True)

    bench("run_tiny", {"dflow": lambda: run_tiny(dflow, args.calls), "tensorflow": lambda: run_tiny(tf, args.calls)},
          "us/call", 1e6, ("dflow", "tensorflow"), "<= 0.333")
    bench("build_10k", {"dflow": lambda: build_10k(dflow), "tensorflow": lambda: build_10k(tf)},
          "ms", 1e3, ("tensorflow", "dflow"), ">= 5 (TensorFlow / dflow)")
    bench("feed_64m", {"dflow": lambda: feed_64m(dflow), "numpy_copy": numpy_copy_64m,
                       "tensorflow": lambda: feed_64m(tf)},
          "ms", 1e3, ("dflow", "numpy_copy"), "<= 1.2")
    if args.json:
        with open(args.json, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
