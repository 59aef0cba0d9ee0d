"""TensorFlow peer of scale_bench's BM_AddChainScale: a graph of N scalar Adds (tf.compat.v1, graph
mode) fetched with Session.run, time per node, for N = 10, 100, 1,000, 10,000, 100,000 (or the Ns
given with --nodes).

As bench/peers/tf_add_chain.py (the N = 10,000 row): constant folding off (Grappler's meta
optimizer and the session's own, OptimizerOptions L0), else the chain becomes one constant and no
Add runs. Each N takes the best of R runs (R = 1e6 / N, at least 5 and at most 2,000: about a
million nodes per N) after a warm run. Inter-op thread pools of 1 and 2 are tried, each in a
process of its own (thread pools outlive their session: see bench/peers/thread_settings.py), and
the best per N is reported; the intra-op pool is 1 (a scalar Add has nothing to split).
Prints one JSON line:
{"name": "tf_chain_scale", "per_node_seconds": {"10": ..., ...}, "inter_op": {"10": ..., ...},
 "build_seconds": {"10": ..., ...}, "peak_rss_mb": ...}
(build_seconds: building the graph in Python and the session's first run, of the best setting).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

NODES = [10, 100, 1000, 10000, 100000]


def measure(nodes, inter):
    import tensorflow as tf
    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    out = {}
    for n in nodes:
        t0 = time.perf_counter()
        g = tf1.Graph()
        with g.as_default():
            one = tf1.constant(1.0)
            v = tf1.constant(0.0)
            for _ in range(n):
                v = tf1.add(v, one)
        config = tf1.ConfigProto(inter_op_parallelism_threads=inter, intra_op_parallelism_threads=1)
        config.graph_options.rewrite_options.disable_meta_optimizer = True
        config.graph_options.optimizer_options.opt_level = tf1.OptimizerOptions.L0
        config.graph_options.optimizer_options.do_constant_folding = False
        with tf1.Session(graph=g, config=config) as sess:
            assert sess.run(v) == n
            build = time.perf_counter() - t0
            rounds = max(5, min(2000, 1000000 // n))
            best = float("inf")
            for _ in range(rounds):
                t = time.perf_counter()
                sess.run(v)
                best = min(best, time.perf_counter() - t)
        out[str(n)] = {"per_node_seconds": best / n, "build_seconds": build}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, nargs="+", default=NODES)
    ap.add_argument("--inter", type=int, help="one setting, in this process (what the parent runs)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per setting's process")
    args = ap.parse_args()
    if args.inter is not None:
        result = measure(args.nodes, args.inter)
        print(json.dumps({"results": result,
                          "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}))
        return
    runs = {}
    for inter in (1, 2):
        cmd = [sys.executable, os.path.abspath(__file__), "--inter", str(inter), "--nodes"] + [str(n) for n in args.nodes]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=args.timeout)
        runs[inter] = json.loads(done.stdout.strip().splitlines()[-1])
    per_node, inter_of, build = {}, {}, {}
    for n in map(str, args.nodes):
        inter = min(runs, key=lambda i: runs[i]["results"][n]["per_node_seconds"])
        per_node[n] = runs[inter]["results"][n]["per_node_seconds"]
        build[n] = runs[inter]["results"][n]["build_seconds"]
        inter_of[n] = inter
    print(json.dumps({"name": "tf_chain_scale", "per_node_seconds": per_node, "inter_op": inter_of,
                      "build_seconds": build, "peak_rss_mb": max(r["peak_rss_mb"] for r in runs.values())}))


if __name__ == "__main__":
    main()
