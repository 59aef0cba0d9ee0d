"""Prints dflow's benchmark figures beside their peers and targets, from one run.

Usage: compare.py CORE_JSON PEERS_JSONL [TRAIN_JSON...] [--cluster CLUSTER_JSON CLUSTER_TRAINING_JSONL]
                  [--iris IRIS_JSON]
"""
import json
import sys


def medians(path):
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data["benchmarks"]:
        name = b["name"]
        if b.get("aggregate_name") not in (None, "median"):
            continue
        out[name.replace("_median", "")] = b
    return out


def cluster_rows(bench_path, training_path):
    b = medians(bench_path)
    rows = []
    empty, null = b.get("BM_EmptyGrpcCall/real_time"), b.get("BM_NullStep/real_time")
    if empty and null:
        ratio = null["real_time"] / empty["real_time"]
        rows.append(["cluster null step (worker session fetching a ps scalar)", f"{null['real_time']:.0f} us",
                     "<= 2x empty gRPC call", f"empty call {empty['real_time']:.0f} us: {ratio:.2f}x"])
    raw = b.get("BM_RawTcp64MiB/real_time")
    for arg, what in (("0", "pull ps -> worker"), ("1", "push worker -> ps")):
        t = b.get(f"BM_Transfer64MiB/push:{arg}/real_time")
        if t and raw:
            gbs, raw_gbs = t["bytes_per_second"] / 1e9, raw["bytes_per_second"] / 1e9
            rows.append([f"64 MiB variable, {what}", f"{gbs:.2f} GB/s", ">= 50% of raw TCP",
                         f"raw loopback TCP {raw_gbs:.2f} GB/s: {gbs / raw_gbs * 100:.0f}%"])
    with open(training_path) as f:
        for line in f:
            if line.strip():
                t = json.loads(line)
                rows.append([f"distributed_trainer, 1 ps + {t['workers']} workers, steps/s (all workers)",
                             f"{t['steps_per_second']:.0f}", "recorded",
                             f"global step {t['global_step']}, loss {t['loss_first']} -> {t['loss_last']}"])
    return rows


def iris_rows(path, peers):
    b = medians(path)
    step, get_next = b.get("BM_IrisTrainStep/real_time"), b.get("BM_IrisInputGetNext/real_time")
    if not step:
        return []
    row = ["Iris DNNClassifier training step (estimator session: GetNext + forward + backward + Adagrad)",
           f"{step['real_time']:.1f} us", ">= 5x faster than PyTorch"]
    torch = peers.get("torch_iris")
    if torch:
        row.append(f"PyTorch ({torch['threads']} thread{'s' if torch['threads'] > 1 else ''}) "
                   f"{torch['us_per_step']:.0f} us: dflow {torch['us_per_step'] / step['real_time']:.1f}x faster")
    rows = [row]
    if get_next:
        rows.append(["  of which the input pipeline (a session run of GetNext alone)", f"{get_next['real_time']:.1f} us",
                     "recorded", ""])
    return rows


def main():
    iris = None
    if "--iris" in sys.argv:
        i = sys.argv.index("--iris")
        iris = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    cluster = None
    if "--cluster" in sys.argv:
        i = sys.argv.index("--cluster")
        cluster = sys.argv[i + 1:i + 3]
        del sys.argv[i:i + 3]
    core = medians(sys.argv[1])
    peers = {}
    with open(sys.argv[2]) as f:
        for line in f:
            if line.strip():
                p = json.loads(line)
                peers[p["name"]] = p

    rows = []
    chain = core.get("BM_SessionAddChain/real_time")
    if chain:
        per_node = chain["per_node"]
        row = ["executor: 10,000-node Add chain, per node", f"{per_node * 1e9:.0f} ns", "<= 500 ns"]
        torch = peers.get("torch_eager_add_chain")
        if torch:
            ratio = torch["per_op_seconds"] / per_node
            row.append(f"PyTorch eager add {torch['per_op_seconds'] * 1e9:.0f} ns: dflow {ratio:.1f}x faster (target >= 3x)")
        rows.append(row)
    direct = core.get("BM_DirectSgemm1024/real_time")
    session = core.get("BM_SessionMatMul1024/real_time")
    if direct and session:
        ratio = session["GFLOPs"] / direct["GFLOPs"]
        rows.append(["MatMul 1024 float32 via session", f"{session['GFLOPs']:.0f} GFLOP/s", ">= 90% of direct",
                     f"direct oneDNN sgemm {direct['GFLOPs']:.0f} GFLOP/s: {ratio * 100:.0f}%"])
    for path in sys.argv[3:]:
        for name, b in medians(path).items():
            model = "mlp" if "MLP" in name else "cnn"
            label = {"mlp": "MLP 784-512-512-10 b128 SGD", "cnn": "CNN 2 conv + 2 fc b64 SGD"}[model]
            row = [f"{label}, steps/s", f"{b['steps_per_second']:.1f}", ">= 1.0x PyTorch best"]
            torch = peers.get("torch_" + model)
            if torch:
                row.append(f"PyTorch best ({torch['threads']} threads) {torch['steps_per_second']:.1f}: "
                           f"{b['steps_per_second'] / torch['steps_per_second']:.2f}x; peak RSS "
                           f"{b['peak_rss_mb']:.0f} MB vs {torch['peak_rss_mb']:.0f} MB")
            rows.append(row)
    if cluster:
        rows += cluster_rows(*cluster)
    if iris:
        rows += iris_rows(iris, peers)
    for r in rows:
        print(" | ".join(r))


if __name__ == "__main__":
    main()
