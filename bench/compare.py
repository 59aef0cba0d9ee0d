"""Prints dflow's benchmark figures beside their peers (PyTorch, TensorFlow, references) and targets,
from one run, and writes them to a results file.

Usage: compare.py CORE_JSON PEERS_JSONL [TRAIN_JSON...] [--cluster CLUSTER_JSON CLUSTER_TRAINING_JSONL]
                  [--iris IRIS_JSON] [--data DATA_JSON] [--checkpoint CHECKPOINT_JSON] [--results RESULTS_JSON]

PEERS_JSONL holds the peers' lines (torch_*.py, tf_*.py), and py_iris (tf_iris.py --backend dflow:
the Iris step through dflow's Python front end beside TensorFlow's Python) when present.

RESULTS_JSON is a JSON list with one entry per (row, peer): name, dflow, unit, peer, peer_value,
ratio (> 1 means dflow is better; null where the row has no peer) and target.
"""
import json
import sys

TF = "TensorFlow 2.21"
TORCH = "PyTorch 2.13"
results = []


def record(name, dflow, unit, peer, peer_value, ratio, target):
    results.append({"name": name, "dflow": dflow, "unit": unit, "peer": peer, "peer_value": peer_value,
                    "ratio": ratio, "target": target})


def threads(p):
    return f"{p['inter_op']} inter / {p['intra_op']} intra"


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
        name = "cluster null step (worker session fetching a ps scalar)"
        rows.append([name, f"{null['real_time']:.0f} us",
                     "<= 2x empty gRPC call", f"empty call {empty['real_time']:.0f} us: {ratio:.2f}x"])
        record(name, null["real_time"], "us", "empty gRPC call", empty["real_time"], 1 / ratio,
               "<= 2x empty gRPC call")
    raw = b.get("BM_RawTcp64MiB/real_time")
    for arg, what in (("0", "pull ps -> worker"), ("1", "push worker -> ps")):
        t = b.get(f"BM_Transfer64MiB/push:{arg}/real_time")
        if t and raw:
            gbs, raw_gbs = t["bytes_per_second"] / 1e9, raw["bytes_per_second"] / 1e9
            rows.append([f"64 MiB variable, {what}", f"{gbs:.2f} GB/s", ">= 50% of raw TCP",
                         f"raw loopback TCP {raw_gbs:.2f} GB/s: {gbs / raw_gbs * 100:.0f}%"])
            record(f"64 MiB variable, {what}", gbs, "GB/s", "raw loopback TCP", raw_gbs, gbs / raw_gbs,
                   ">= 50% of raw TCP")
    with open(training_path) as f:
        for line in f:
            if line.strip():
                t = json.loads(line)
                name = f"distributed_trainer, 1 ps + {t['workers']} workers, steps/s (all workers)"
                rows.append([name, f"{t['steps_per_second']:.0f}", "recorded",
                             f"global step {t['global_step']}, loss {t['loss_first']} -> {t['loss_last']}"])
                record(name, t["steps_per_second"], "steps/s", None, None, None, "recorded")
    return rows


def iris_rows(path, peers):
    b = medians(path)
    step, get_next = b.get("BM_IrisTrainStep/real_time"), b.get("BM_IrisInputGetNext/real_time")
    if not step:
        return []
    name = "Iris DNNClassifier training step (estimator session: GetNext + forward + backward + Adagrad)"
    row = [name, f"{step['real_time']:.1f} us", ">= 5x faster than PyTorch"]
    torch = peers.get("torch_iris")
    if torch:
        row.append(f"PyTorch ({torch['threads']} thread{'s' if torch['threads'] > 1 else ''}) "
                   f"{torch['us_per_step']:.0f} us: dflow {torch['us_per_step'] / step['real_time']:.1f}x faster")
        record(name, step["real_time"], "us", TORCH, torch["us_per_step"], torch["us_per_step"] / step["real_time"],
               ">= 5x faster than PyTorch")
    tf = peers.get("tf_iris")
    if tf:
        ratio = tf["us_per_step"] / step["real_time"]
        row.append(f"TensorFlow MonitoredTrainingSession ({threads(tf)}) {tf['us_per_step']:.0f} us: "
                   f"dflow {ratio:.1f}x faster (target >= 2x)")
        record(name, step["real_time"], "us", TF, tf["us_per_step"], ratio, ">= 2x TensorFlow")
    rows = [row]
    py = peers.get("py_iris")
    if py:
        ratio = py["tf_us_per_step"] / py["dflow_us_per_step"]
        py_name = "Iris DNNClassifier training step from Python (tf_iris.py, MonitoredTrainingSession)"
        rows.append([py_name, f"{py['dflow_us_per_step']:.1f} us", ">= 2x TensorFlow",
                     f"TensorFlow's Python ({py['tf_inter_op']} inter / {py['tf_intra_op']} intra) "
                     f"{py['tf_us_per_step']:.0f} us: dflow's Python {ratio:.1f}x faster (target >= 2x)"])
        record(py_name, py["dflow_us_per_step"], "us", TF, py["tf_us_per_step"], ratio, ">= 2x TensorFlow")
    if get_next:
        rows.append(["  of which the input pipeline (a session run of GetNext alone)", f"{get_next['real_time']:.1f} us",
                     "recorded", ""])
        record("Iris input pipeline (a session run of GetNext alone)", get_next["real_time"], "us", None, None,
               None, "recorded")
    return rows


def find(bench, prefix):
    """The benchmark whose name starts with `prefix` (names carry suffixes like /iterations:3)."""
    return next((b for name, b in bench.items() if name.startswith(prefix)), None)


def data_rows(path, peers):
    b = medians(path)
    tf = peers.get("tf_csv")
    rows = []
    for bench, key, name, target in (
            ("BM_CsvDataset/", "mb_per_s", "CSV input pipeline: CsvDataset(header) -> Batch(1024) -> Prefetch(2), MB/s",
             ">= 1.5x TensorFlow"),
            ("BM_DecodeCsvBatched/", "decode_csv_batched_mb_per_s",
             "CSV input pipeline: TextLine -> Batch(1024) -> Map(DecodeCSV) -> Prefetch(2), MB/s", "recorded")):
        d = find(b, bench)
        if not d:
            continue
        mbs = d["bytes_per_second"] / 1e6
        row = [name, f"{mbs:.0f}", target]
        if tf:
            ratio = mbs / tf[key]
            row.append(f"TensorFlow ({threads(tf)}) {tf[key]:.0f}: {ratio:.2f}x"
                       + (" (target >= 1.5x)" if target != "recorded" else ""))
            record(name, mbs, "MB/s", TF, tf[key], ratio, target)
        else:
            record(name, mbs, "MB/s", None, None, None, target)
        rows.append(row)
    return rows


def checkpoint_rows(path, peers):
    b = medians(path)
    tf = peers.get("tf_checkpoint")
    rows = []
    for bench, key, what in (("BM_Save1GiB", "save_gb_per_s", "save"),
                             ("BM_Restore1GiB", "restore_gb_per_s", "restore")):
        d = find(b, bench)
        if not d:
            continue
        gbs = d["bytes_per_second"] / 1e9
        name = f"checkpoint {what}, 1 GiB of variables (4 x 256 MiB), GB/s"
        row = [name, f"{gbs:.2f}", ">= 1.5x TensorFlow"]
        if tf:
            ratio = gbs / tf[key]
            note = " (dflow fsyncs its files, TensorFlow does not)" if what == "save" else ""
            row.append(f"TensorFlow Saver ({threads(tf)}) {tf[key]:.2f}: {ratio:.2f}x (target >= 1.5x){note}")
            record(name, gbs, "GB/s", TF, tf[key], ratio, ">= 1.5x TensorFlow")
        else:
            record(name, gbs, "GB/s", None, None, None, ">= 1.5x TensorFlow")
        rows.append(row)
    return rows


def main():
    results_path = None
    if "--results" in sys.argv:
        i = sys.argv.index("--results")
        results_path = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    iris = None
    if "--iris" in sys.argv:
        i = sys.argv.index("--iris")
        iris = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    data = checkpoint = None
    if "--data" in sys.argv:
        i = sys.argv.index("--data")
        data = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    if "--checkpoint" in sys.argv:
        i = sys.argv.index("--checkpoint")
        checkpoint = sys.argv[i + 1]
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
        name = "executor: 10,000-node Add chain, per node"
        row = [name, f"{per_node * 1e9:.0f} ns", "<= 500 ns"]
        torch = peers.get("torch_eager_add_chain")
        if torch:
            ratio = torch["per_op_seconds"] / per_node
            row.append(f"PyTorch eager add {torch['per_op_seconds'] * 1e9:.0f} ns: dflow {ratio:.1f}x faster (target >= 3x)")
            record(name, per_node * 1e9, "ns", TORCH, torch["per_op_seconds"] * 1e9, ratio,
                   "<= 500 ns; >= 3x faster than PyTorch eager")
        tf = peers.get("tf_add_chain")
        if tf:
            ratio = tf["per_op_seconds"] / per_node
            row.append(f"TensorFlow Session.run ({threads(tf)}) {tf['per_op_seconds'] * 1e9:.0f} ns: "
                       f"dflow {ratio:.2f}x (target >= 2x)")
            record(name, per_node * 1e9, "ns", TF, tf["per_op_seconds"] * 1e9, ratio, ">= 2x TensorFlow")
        rows.append(row)
    direct = core.get("BM_DirectSgemm1024/real_time")
    session = core.get("BM_SessionMatMul1024/real_time")
    if direct and session:
        ratio = session["GFLOPs"] / direct["GFLOPs"]
        name = "MatMul 1024 float32 via session"
        row = [name, f"{session['GFLOPs']:.0f} GFLOP/s", ">= 90% of direct",
               f"direct oneDNN sgemm {direct['GFLOPs']:.0f} GFLOP/s: {ratio * 100:.0f}%"]
        record(name, session["GFLOPs"], "GFLOP/s", "direct oneDNN sgemm", direct["GFLOPs"], ratio, ">= 90% of direct")
        tf = peers.get("tf_matmul_1024")
        if tf:
            ratio = session["GFLOPs"] / tf["gflops"]
            row.append(f"TensorFlow Session.run, {tf['path']} ({threads(tf)}) {tf['gflops']:.0f} GFLOP/s: {ratio:.2f}x "
                       f"(target >= 1.0x)")
            record(name, session["GFLOPs"], "GFLOP/s", TF, tf["gflops"], ratio, ">= 1.0x TensorFlow")
        rows.append(row)
    for path in sys.argv[3:]:
        for name, b in medians(path).items():
            model = "mlp" if "MLP" in name else "cnn"
            label = {"mlp": "MLP 784-512-512-10 b128 SGD", "cnn": "CNN 2 conv + 2 fc b64 SGD"}[model]
            dflow = b["steps_per_second"]
            row = [f"{label}, steps/s", f"{dflow:.1f}", ">= 1.0x PyTorch best"]
            torch = peers.get("torch_" + model)
            if torch:
                row.append(f"PyTorch best ({torch['threads']} threads) {torch['steps_per_second']:.1f}: "
                           f"{dflow / torch['steps_per_second']:.2f}x; peak RSS "
                           f"{b['peak_rss_mb']:.0f} MB vs {torch['peak_rss_mb']:.0f} MB")
                record(f"{label}, steps/s", dflow, "steps/s", TORCH, torch["steps_per_second"],
                       dflow / torch["steps_per_second"], ">= 1.0x PyTorch best")
            tf = peers.get("tf_" + model)
            if tf:
                row.append(f"TensorFlow best ({threads(tf)}) {tf['steps_per_second']:.1f}: "
                           f"{dflow / tf['steps_per_second']:.2f}x (target >= 1.2x); peak RSS {tf['peak_rss_mb']:.0f} MB")
                record(f"{label}, steps/s", dflow, "steps/s", TF, tf["steps_per_second"], dflow / tf["steps_per_second"],
                       ">= 1.2x TensorFlow")
            rows.append(row)
    if cluster:
        rows += cluster_rows(*cluster)
    if iris:
        rows += iris_rows(iris, peers)
    if data:
        rows += data_rows(data, peers)
    if checkpoint:
        rows += checkpoint_rows(checkpoint, peers)
    for r in rows:
        print(" | ".join(r))
    if results_path:
        with open(results_path, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
