"""How dflow's cost grows with the work, on this machine; writes the figures as JSON and three PNG
plots (matplotlib, Agg backend).

1. One ps task serving 1, 2, 4, 8, 16 worker processes of examples/distributed_trainer.cc (the
   between-graph asynchronous trainer of bench/cluster_training.sh: a 10-32-1 MLP, batch 64, its
   five variables on the ps task), each cluster started by `dflow launch --ps 1 --workers N` (TLS
   and the cluster secret, as the launcher's default). The window measured is from the moment the
   last worker printed that its session started (the global step it read) to the moment the first
   worker printed its end (the global step it saw): steps/s is the global step's advance over that
   window's wall time (every worker running), beside the sum of the workers' own steps/s (as
   cluster_training.sh reports); the ps task's CPU time (utime + stime of /proc/<pid>/stat) over the
   window divided by the global step's advance is its CPU time per update; its memory is VmHWM
   (peak) and VmRSS at the window's end (/proc/<pid>/status).
2. A 1 GiB partitioned embedding (2^22 x 64 float32) over 1, 2, 4 ps tasks: build/bin/
   embedding_bench (all tasks in one process, plaintext gRPC on 127.0.0.1): lookups/s and MB/s of
   4096 random ids per step, and rows/s of a sparse SGD update of the looked-up rows, built by hand
   and by the optimizer's Minimize.
3. The executor from 10 to 100,000 nodes per step: build/bin/scale_bench's chain of N scalar Adds,
   ns per node, beside TensorFlow 2.21's (bench/scale/tf_chain_scale.py).

    python3 bench/scale/run_scale.py [--build build] [--out build/bench/scale.json] [--docs docs]
                                     [--quick] [--parts ps,embedding,executor]

--quick: a smoke run (1, 2 workers, few steps; P = 1 only; N up to 10,000), plots written under the
output's directory instead of docs/ unless --docs is given. Every subprocess has a timeout and is
killed (its process group) when it passes. Progress goes to stderr; stdout gets one JSON line: the
whole result, {"machine": {...}, "ps_workers": [...], "embedding": [...], "executor": {...}}, also
written to --out.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(*a):
    print("run_scale:", *a, file=sys.stderr, flush=True)


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"cores": os.cpu_count(), "cpu": model, "memory_gib": round(mem_gib, 1)}


def cpu_seconds(pid):
    """utime + stime of /proc/<pid>/stat, in seconds; None once the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # fields 14, 15 of stat(5)
    except (OSError, IndexError, ValueError):
        return None


def memory_mb(pid):
    """{"VmHWM": MB, "VmRSS": MB} of /proc/<pid>/status; None once the process is gone."""
    try:
        out = {}
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key = line.split(":", 1)[0]
                if key in ("VmHWM", "VmRSS"):
                    out[key] = int(line.split()[1]) / 1024.0
        return out if len(out) == 2 else None
    except OSError:
        return None


def kill_group(proc):
    """SIGTERM to the process group of `proc` (started with start_new_session), SIGKILL after 5 s."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)


def run_polled(cmd, timeout, cwd=ROOT):
    """Runs cmd, polling its peak memory (VmHWM); returns (stdout, peak_mb). Raises on failure."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    peak = [0.0]
    done = threading.Event()

    def poll():
        while not done.is_set():
            m = memory_mb(proc.pid)
            if m:
                peak[0] = max(peak[0], m["VmHWM"])
            done.wait(0.2)

    t = threading.Thread(target=poll, daemon=True)
    t.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise RuntimeError(f"{' '.join(cmd)}: no result after {timeout} s (killed)")
    finally:
        done.set()
        t.join()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {err[-2000:]}")
    return out, peak[0]


# ---------------------------------------------------------------------------------------------
# 1. One ps task, N workers.

START_RE = re.compile(r"^\[worker (\d+)\] worker \d+: session \d+ starts at global step (\d+)")
END_RE = re.compile(r"^\[worker (\d+)\] worker \d+: (\d+) local steps \(([\d.]+) steps/s\), global step (\d+), "
                    r"loss ([-\d.e+naif]+) -> ([-\d.e+naif]+)")
PS_PID_RE = re.compile(r"started ps 0 \(pid (\d+)\)")


def ps_workers_once(build, workers, steps, timeout):
    cmd = [os.path.join(build, "bin", "dflow"), "launch", "--ps", "1", "--workers", str(workers),
           "--timeout", str(int(timeout)), "--",
           os.path.join(build, "bin", "distributed_trainer"), "--train_steps", str(steps)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            bufsize=1, start_new_session=True)
    lock = threading.Lock()
    st = {"ps_pid": None, "started": {}, "ended": {}, "window_start": None, "window_end": None,
          "last_mem": None, "stderr": []}

    def ps_pid():  # from the launcher's message, else its child with --job_name=ps (lines may race)
        if st["ps_pid"] is None:
            for entry in os.listdir("/proc"):
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                    with open(f"/proc/{entry}/cmdline") as f:
                        argv = f.read().split("\0")
                except (OSError, ValueError, IndexError):
                    continue
                if ppid == proc.pid and "--job_name=ps" in argv:
                    st["ps_pid"] = int(entry)
        return st["ps_pid"]

    def sample():
        pid = ps_pid()
        return (time.monotonic(), cpu_seconds(pid) if pid else None, memory_mb(pid) if pid else None)

    def read_err():
        for line in proc.stderr:
            with lock:
                st["stderr"].append(line)
                m = PS_PID_RE.search(line)
                if m and st["ps_pid"] is None:
                    st["ps_pid"] = int(m.group(1))

    def read_out():
        for line in proc.stdout:
            with lock:
                m = START_RE.match(line)
                if m and int(m.group(1)) not in st["started"]:
                    st["started"][int(m.group(1))] = int(m.group(2))
                    if len(st["started"]) == workers:
                        st["window_start"] = sample() + (int(m.group(2)),)
                    continue
                m = END_RE.match(line)
                if m:
                    task = int(m.group(1))
                    st["ended"][task] = {"local_steps": int(m.group(2)), "steps_per_second": float(m.group(3)),
                                         "global_step": int(m.group(4)), "loss_first": float(m.group(5)),
                                         "loss_last": float(m.group(6))}
                    if st["window_end"] is None:
                        st["window_end"] = sample() + (int(m.group(4)),)

    def poll_mem():  # the ps task's memory until it exits (VmHWM only grows: the last one is the peak)
        while proc.poll() is None:
            with lock:
                if st["ps_pid"]:
                    m = memory_mb(st["ps_pid"])
                    if m:
                        st["last_mem"] = m
            time.sleep(0.1)

    threads = [threading.Thread(target=f, daemon=True) for f in (read_err, read_out, poll_mem)]
    for t in threads:
        t.start()
    try:
        proc.wait(timeout=timeout + 30)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise RuntimeError(f"dflow launch with {workers} workers: no end after {timeout + 30} s (killed)")
    for t in threads:
        t.join(timeout=10)
    if proc.returncode != 0 or st["window_start"] is None or st["window_end"] is None:
        raise RuntimeError(f"dflow launch with {workers} workers exited {proc.returncode} "
                           f"(workers started {len(st['started'])}, ended {len(st['ended'])}): "
                           + "".join(st["stderr"][-20:]))
    t0, cpu0, mem0, step0 = st["window_start"]
    t1, cpu1, mem1, step1 = st["window_end"]
    updates = step1 - step0
    if updates <= 0 or cpu0 is None or cpu1 is None:
        raise RuntimeError(f"{workers} workers: an empty window (global step {step0} -> {step1})")
    ended = st["ended"].values()
    return {
        "workers": workers,
        "train_steps": steps,
        "steps_per_second": updates / (t1 - t0),
        "steps_per_second_sum_of_workers": sum(e["steps_per_second"] for e in ended),
        "window_seconds": t1 - t0,
        "window_updates": updates,
        "ps_cpu_us_per_update": (cpu1 - cpu0) / updates * 1e6,
        "ps_cpu_cores": (cpu1 - cpu0) / (t1 - t0),
        "ps_rss_mb": mem1["VmRSS"] if mem1 else 0.0,
        # VmHWM only grows: the larger of the last poll's and the window end's (the polls may lag).
        "ps_peak_mb": max([m["VmHWM"] for m in (st["last_mem"], mem1) if m] + [mem1["VmRSS"] if mem1 else 0]),
        "global_step": max(e["global_step"] for e in ended),
        "workers_ended": len(st["ended"]),
        "loss_first": max(e["loss_first"] for e in ended),
        "loss_last": max(e["loss_last"] for e in ended),
    }


def ps_workers(build, sizes, steps_for, timeout):
    rows = []
    for n in sizes:
        r = ps_workers_once(build, n, steps_for(n), timeout)
        log(f"ps + {n} workers: {r['steps_per_second']:.0f} steps/s (sum of workers' "
            f"{r['steps_per_second_sum_of_workers']:.0f}), ps {r['ps_cpu_us_per_update']:.0f} us CPU/update, "
            f"{r['ps_cpu_cores']:.2f} cores, RSS {r['ps_rss_mb']:.0f} MB (peak {r['ps_peak_mb']:.0f}), "
            f"window {r['window_seconds']:.1f} s, loss {r['loss_first']:.3f} -> {r['loss_last']:.4f}")
        rows.append(r)
    return rows


# ---------------------------------------------------------------------------------------------
# 2. The 1 GiB embedding; 3. the executor.

def google_benchmark(binary, bench_filter, timeout, extra=()):
    out, peak = run_polled([binary, f"--benchmark_filter={bench_filter}", "--benchmark_format=json", *extra],
                           timeout)
    data = json.loads(out)
    for b in data["benchmarks"]:
        if b.get("error_occurred"):
            raise RuntimeError(f"{b['name']}: {b.get('error_message')}")
    return data["benchmarks"], peak


def embedding(build, ps_list, ops, timeout):
    binary = os.path.join(build, "bin", "embedding_bench")
    ps_re = "|".join(str(p) for p in ps_list)
    op_re = "|".join(str(o) for o in ops)
    benches, peak = google_benchmark(binary, f"BM_Embedding1GiB/ps:({ps_re})/op:({op_re})/", timeout)
    names = {0: "lookup", 1: "sparse_update", 2: "minimize"}
    rows = []
    for b in benches:
        m = re.search(r"ps:(\d+)/op:(\d+)", b["name"])
        p, op = int(m.group(1)), int(m.group(2))
        step_s = b["real_time"] / 1e3  # the unit is ms
        row = {"ps": p, "op": names[op], "step_ms": b["real_time"], "steps": b["iterations"],
               "ids_per_step": 4096,
               "rows_per_second": b.get("ids_per_s", b.get("rows_per_s")),
               "mb_per_second": b["bytes_per_second"] / 1e6}
        log(f"embedding ps={p} {names[op]}: {row['rows_per_second'] / 1e6:.3f} M rows/s, "
            f"{row['mb_per_second']:.0f} MB/s, {step_s * 1e3:.2f} ms/step")
        rows.append(row)
    for r in rows:
        r["process_peak_mb"] = peak
    return rows


def executor(build, nodes, timeout, with_tf=True):
    binary = os.path.join(build, "bin", "scale_bench")
    n_re = "|".join(str(n) for n in nodes)
    benches, _ = google_benchmark(binary, f"BM_AddChainScale/nodes:({n_re})/", timeout,
                                  extra=["--benchmark_min_time=0.3"])
    dflow = {}
    for b in benches:
        n = int(re.search(r"nodes:(\d+)", b["name"]).group(1))
        dflow[str(n)] = b["per_node"] * 1e9
        log(f"executor dflow N={n}: {dflow[str(n)]:.1f} ns/node")
    result = {"dflow_ns_per_node": dflow}
    if with_tf:
        cmd = [sys.executable, os.path.join(HERE, "tf_chain_scale.py"), "--nodes", *map(str, nodes),
               "--timeout", str(int(timeout))]
        out, _ = run_polled(cmd, 2 * timeout + 30)
        tf = json.loads(out.strip().splitlines()[-1])
        result["tensorflow_ns_per_node"] = {n: s * 1e9 for n, s in tf["per_node_seconds"].items()}
        result["tensorflow_inter_op"] = tf["inter_op"]
        result["tensorflow_build_seconds"] = tf["build_seconds"]
        for n, v in result["tensorflow_ns_per_node"].items():
            log(f"executor TensorFlow N={n}: {v:.1f} ns/node")
    return result


# ---------------------------------------------------------------------------------------------
# Plots.

def plots(result, docs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter

    m = result["machine"]
    where = f"{m['cores']} cores ({m['cpu']}), shared"
    os.makedirs(docs, exist_ok=True)
    written = []

    def integer_log2_axis(ax, xs):
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.get_xaxis().set_major_formatter(ScalarFormatter())
        ax.minorticks_off()

    rows = result.get("ps_workers")
    if rows:
        xs = [r["workers"] for r in rows]
        fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
        ax = axes[0]
        ax.plot(xs, [r["steps_per_second"] for r in rows], "o-", label="global step advance")
        ax.plot(xs, [r["steps_per_second_sum_of_workers"] for r in rows], "s--", label="sum of workers' own")
        ax.set_ylabel("training steps/s (all workers)")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8)
        ax = axes[1]
        ax.plot(xs, [r["ps_cpu_us_per_update"] for r in rows], "o-", color="C2")
        ax.set_ylabel("ps task CPU time per update (µs)")
        ax.set_ylim(bottom=0)
        ax = axes[2]
        ax.plot(xs, [r["ps_rss_mb"] for r in rows], "o-", color="C3", label="VmRSS (steady)")
        ax.plot(xs, [r["ps_peak_mb"] for r in rows], "s--", color="C4", label="VmHWM (peak)")
        ax.set_ylabel("ps task memory (MB)")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8)
        for ax in axes:
            integer_log2_axis(ax, xs)
            ax.set_xlabel("worker processes (1 ps task)")
            ax.grid(alpha=0.3)
        fig.suptitle(f"Asynchronous PS training (distributed_trainer, 10-32-1 MLP, batch 64) on {where}",
                     fontsize=10)
        fig.tight_layout()
        path = os.path.join(docs, "scale_ps_workers.png")
        fig.savefig(path, dpi=80)
        plt.close(fig)
        written.append(path)

    rows = result.get("embedding")
    if rows:
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
        xs_all = sorted({r["ps"] for r in rows})
        styles = {"lookup": ("o-", "C0"), "sparse_update": ("s-", "C1"), "minimize": ("^--", "C3")}
        labels = {"lookup": "lookup", "sparse_update": "sparse SGD update by hand (ScatterSub)",
                  "minimize": "GradientDescentOptimizer.Minimize"}
        for op, (style, color) in styles.items():
            pts = sorted((r["ps"], r) for r in rows if r["op"] == op)
            if not pts:
                continue
            xs = [p for p, _ in pts]
            axes[0].plot(xs, [r["rows_per_second"] for _, r in pts], style, color=color, label=labels[op])
            axes[1].plot(xs, [r["step_ms"] for _, r in pts], style, color=color, label=labels[op])
        axes[0].set_ylabel("rows/s (4096 random ids per step)")
        axes[1].set_ylabel("ms per step")
        for ax in axes:
            ax.set_yscale("log")
            integer_log2_axis(ax, xs_all)
            ax.set_xlabel("ps tasks holding the 1 GiB table (2^22 x 64 float32)")
            ax.grid(alpha=0.3, which="both")
            ax.legend(fontsize=8)
        fig.suptitle(f"1 GiB partitioned embedding, worker + ps tasks in one process over gRPC on {where}",
                     fontsize=10)
        fig.tight_layout()
        path = os.path.join(docs, "scale_embedding.png")
        fig.savefig(path, dpi=80)
        plt.close(fig)
        written.append(path)

    ex = result.get("executor")
    if ex:
        fig, ax = plt.subplots(figsize=(6.5, 4.2))
        for key, label, style in (("dflow_ns_per_node", "dflow", "o-"),
                                  ("tensorflow_ns_per_node", "TensorFlow 2.21 (graph mode)", "s--")):
            if key in ex:
                pts = sorted((int(n), v) for n, v in ex[key].items())
                ax.plot([n for n, _ in pts], [v for _, v in pts], style, label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("nodes per step (a chain of scalar Adds)")
        ax.set_ylabel("time per node (ns), one Session.run")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
        ax.set_title(f"Executor cost per node on {m['cores']} cores (shared)", fontsize=10)
        fig.tight_layout()
        path = os.path.join(docs, "scale_executor.png")
        fig.savefig(path, dpi=80)
        plt.close(fig)
        written.append(path)
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=None, help="the JSON file (default BUILD/bench/scale.json)")
    ap.add_argument("--docs", default=None, help="where the PNGs go (default docs/, with --quick the --out directory)")
    ap.add_argument("--quick", action="store_true", help="a smoke run (about a minute)")
    ap.add_argument("--parts", default="ps,embedding,executor")
    ap.add_argument("--no_tf", action="store_true", help="no TensorFlow peer for the executor")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    out = args.out or os.path.join(build, "bench", "scale.json")
    docs = args.docs or (os.path.dirname(os.path.abspath(out)) if args.quick else os.path.join(ROOT, "docs"))
    parts = set(args.parts.split(","))
    try:  # the plots need it: fail now, not after minutes of measuring
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit("run_scale: matplotlib is missing (scripts/install-deps.sh --bench installs matplotlib==3.9.2)")
    for name in (["dflow", "distributed_trainer"] if "ps" in parts else []) + \
            (["embedding_bench"] if "embedding" in parts else []) + (["scale_bench"] if "executor" in parts else []):
        if not os.access(os.path.join(build, "bin", name), os.X_OK):
            sys.exit(f"run_scale: {build}/bin/{name} is missing (ninja -C {args.build} {name})")
    result = {"machine": machine(), "quick": args.quick}
    t_start = time.monotonic()
    if "ps" in parts:
        sizes = [1, 2] if args.quick else [1, 2, 4, 8, 16]
        # Enough steps that every worker runs a few seconds together: the workers start one after
        # another (16 of them take seconds on 2 cores), so larger clusters get more steps.
        steps = (lambda n: 300 * n + 300) if args.quick else (lambda n: 4000 + 1000 * n)
        result["ps_workers"] = ps_workers(build, sizes, steps, timeout=60 if args.quick else 180)
    if "embedding" in parts:
        result["embedding"] = embedding(build, [1] if args.quick else [1, 2, 4], [0, 1] if args.quick else [0, 1, 2],
                                        timeout=120 if args.quick else 400)
    if "executor" in parts:
        nodes = [10, 100, 1000, 10000] if args.quick else [10, 100, 1000, 10000, 100000]
        result["executor"] = executor(build, nodes, timeout=120 if args.quick else 240, with_tf=not args.no_tf)
    result["seconds"] = time.monotonic() - t_start
    result["plots"] = plots(result, docs)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    log(f"wrote {out} and {', '.join(result['plots'])} in {result['seconds']:.0f} s")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
