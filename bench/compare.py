"""Prints dflow's benchmark figures beside their peers (PyTorch, TensorFlow, references) and targets,
from one run, and writes them to a results file.

Usage: compare.py CORE_JSON PEERS_JSONL [TRAIN_JSON...] [--cluster CLUSTER_JSON CLUSTER_TRAINING_JSONL]
                  [--iris IRIS_JSON] [--data DATA_JSON] [--checkpoint CHECKPOINT_JSON] [--results RESULTS_JSON]

PEERS_JSONL holds the peers' lines (torch_*.py, tf_*.py), py_iris (tf_iris.py --backend dflow: the
Iris step through dflow's Python front end beside TensorFlow's Python) and tf_cluster_training /
py_cluster_training (one line per cluster size: one Python trainer on TensorFlow and on dflow's
Python) when present.

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
    onednn = {"0": ", oneDNN off", "1": ", oneDNN on"}.get(p.get("onednn"), "")
    return f"{p['inter_op']} inter / {p['intra_op']} intra{onednn}"


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


def cluster_rows(bench_path, training_path, peers, peer_lines):
    """The null step and 64 MiB transfers (tls:0 plaintext, comparable with TensorFlow's insecure
    gRPC; tls:1 dflow's secure default) beside their references and tf_cluster, then training with
    1 ps and 1/2/4 workers beside tf_cluster_training (and dflow's Python, py_cluster_training)."""
    b = medians(bench_path)
    rows = []
    tf = peers.get("tf_cluster")
    for tls, mode in (("0", "plaintext"), ("1", "TLS + secret")):
        empty, null = b.get(f"BM_EmptyGrpcCall/tls:{tls}/real_time"), b.get(f"BM_NullStep/tls:{tls}/real_time")
        if not (empty and null):
            continue
        us = null["real_time"]
        ratio = us / empty["real_time"]
        name = f"cluster null step (worker session fetching a ps scalar), {mode}"
        row = [name, f"{us:.0f} us", "<= 2x empty gRPC call", f"empty call {empty['real_time']:.0f} us: {ratio:.2f}x"]
        record(name, us, "us", "empty gRPC call", empty["real_time"], 1 / ratio, "<= 2x empty gRPC call")
        if tf:
            r = tf["null_step_us"] / us
            row.append(f"TensorFlow (plaintext, {threads(tf)}) {tf['null_step_us']:.0f} us: {r:.2f}x (target >= 2x)")
            record(name, us, "us", TF, tf["null_step_us"], r, ">= 2x TensorFlow")
        rows.append(row)
    raw = b.get("BM_RawTcp64MiB/real_time")
    for tls, mode in (("0", "plaintext"), ("1", "TLS + secret")):
        for arg, what, key in (("0", "pull ps -> worker", "pull_gbs"), ("1", "push worker -> ps", "push_gbs")):
            t = b.get(f"BM_Transfer64MiB/tls:{tls}/push:{arg}/real_time")
            if not t:
                continue
            gibs = t["bytes_per_second"] / 2**30
            name = f"64 MiB variable, {what}, {mode}, GiB/s"
            row = [name, f"{gibs:.2f}", ">= 50% of raw TCP"]
            if raw:
                raw_gibs = raw["bytes_per_second"] / 2**30
                row.append(f"raw loopback TCP {raw_gibs:.2f}: {gibs / raw_gibs * 100:.0f}%")
                record(name, gibs, "GiB/s", "raw loopback TCP", raw_gibs, gibs / raw_gibs, ">= 50% of raw TCP")
            if tf and tls == "0":
                r = gibs / tf[key]
                row.append(f"TensorFlow (plaintext) {tf[key]:.2f}: {r:.2f}x (target >= 2x)")
                record(name, gibs, "GiB/s", TF, tf[key], r, ">= 2x TensorFlow")
            rows.append(row)
    by_workers = {}
    for p in peer_lines:
        if p["name"] in ("tf_cluster_training", "py_cluster_training"):
            by_workers[(p["name"], p["workers"])] = p
    with open(training_path) as f:
        for line in f:
            if not line.strip():
                continue
            t = json.loads(line)
            secure = t.get("security", "secure") == "secure"
            mode = "TLS + secret" if secure else "plaintext, secret checked"
            # TensorFlow's gRPC has no secure mode to compare with: the target is on the plaintext row.
            target = "recorded (the cost of TLS)" if secure else ">= 1.5x TensorFlow"
            name = f"async training, 1 ps + {t['workers']} workers (C++ distributed_trainer, {mode}), steps/s"
            row = [name, f"{t['steps_per_second']:.0f}", target, f"loss {t['loss_first']} -> {t['loss_last']}"]
            peer = by_workers.get(("tf_cluster_training", t["workers"]))
            if peer:
                r = t["steps_per_second"] / peer["steps_per_second"]
                row.append(f"TensorFlow (Python, plaintext) {peer['steps_per_second']:.0f}: {r:.2f}x")
                record(name, t["steps_per_second"], "steps/s", TF, peer["steps_per_second"], r, target)
            else:
                record(name, t["steps_per_second"], "steps/s", None, None, None, target)
            rows.append(row)
    for workers in (1, 2, 4):
        py, peer = by_workers.get(("py_cluster_training", workers)), by_workers.get(("tf_cluster_training", workers))
        if py and peer:
            name = f"async training, 1 ps + {workers} workers, the same Python script (ps_trainer.py), steps/s"
            r = py["steps_per_second"] / peer["steps_per_second"]
            rows.append([name, f"{py['steps_per_second']:.0f}", ">= 1.5x TensorFlow",
                         f"TensorFlow {peer['steps_per_second']:.0f}: {r:.2f}x"])
            record(name, py["steps_per_second"], "steps/s", TF, peer["steps_per_second"], r, ">= 1.5x TensorFlow")
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
            note = (" (dflow fsyncs its files, TensorFlow does not)" if what == "save" else
                    " (TensorFlow's from the page cache its save left; dflow's save bypasses it)")
            row.append(f"TensorFlow Saver ({threads(tf)}) {tf[key]:.2f}: {ratio:.2f}x (target >= 1.5x){note}")
            record(name, gbs, "GB/s", TF, tf[key], ratio, ">= 1.5x TensorFlow")
            cold = tf.get("restore_cold_gb_per_s") if what == "restore" else None
            if cold:
                row.append(f"TensorFlow from a cold page cache {cold:.2f}: {gbs / cold:.2f}x")
                record(name, gbs, "GB/s", TF + ", cold page cache", cold, gbs / cold, ">= 1.5x TensorFlow")
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
    peers, peer_lines = {}, []
    with open(sys.argv[2]) as f:
        for line in f:
            if line.strip():
                p = json.loads(line)
                peers[p["name"]] = p
                peer_lines.append(p)

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
            # Fed and fetched: dflow's C++ client beside TensorFlow's Python client, which also
            # converts numpy arrays on every call (the best of its two ways is the peer).
            ratio = session["GFLOPs"] / tf["gflops"]
            row.append(f"TensorFlow Session.run, {tf['path']} ({threads(tf)}) {tf['gflops']:.0f} GFLOP/s: {ratio:.2f}x "
                       f"(target >= 1.0x)")
            record(name, session["GFLOPs"], "GFLOP/s", TF, tf["gflops"], ratio, ">= 1.0x TensorFlow")
        rows.append(row)
    in_graph = core.get("BM_SessionMatMul1024InGraph/real_time")
    if in_graph:
        name = "MatMul 1024 float32, operands in variables, C not fetched"
        row = [name, f"{in_graph['GFLOPs']:.0f} GFLOP/s", ">= 1.0x TensorFlow"]
        tf = peers.get("tf_matmul_1024")
        graph_gflops = tf and tf.get("in_graph_gflops", tf["gflops"] if tf.get("path") == "in graph" else None)
        if graph_gflops:
            ratio = in_graph["GFLOPs"] / graph_gflops
            row.append(f"TensorFlow, the same in graph ({threads(tf)}) {graph_gflops:.0f} GFLOP/s: {ratio:.2f}x "
                       f"(target >= 1.0x)")
            record(name, in_graph["GFLOPs"], "GFLOP/s", TF, graph_gflops, ratio, ">= 1.0x TensorFlow")
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
        rows += cluster_rows(*cluster, peers, peer_lines)
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
