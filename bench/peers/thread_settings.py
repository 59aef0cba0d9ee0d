"""What the TensorFlow peers share: each tries inter-/intra-op thread pools of 1 and 2, with
TensorFlow's oneDNN kernels off and on (TF_ENABLE_ONEDNN_OPTS=0 / 1: TensorFlow turns them on by
default only on CPUs with AVX-512 features, and on an AVX2 CPU they train the CNN faster while its
Eigen kernels multiply matrices faster), each setting in a process of its own, and prints the best
as one JSON line.

Each setting runs in a fresh process: TensorFlow's thread pools (oneDNN's among them) outlive the
session that made them, and settings tried one after another in one process all ran at about the
speed of the first (1 thread): MatMul 177 GFLOP/s where a fresh process gives 363.

    best_setting("tf_mlp", measure, key="steps_per_second", higher_is_better=True)

`measure(inter, intra)` returns a dict of figures (with `key` among them); the printed line adds
`name`, `inter_op`, `intra_op`, `onednn` and `peak_rss_mb` (the peak resident memory of that
setting's process).
"""
import json
import os
import resource
import socket
import subprocess
import sys


def best_setting(name, measure, key, higher_is_better):
    script = sys.modules["__main__"].__file__
    if len(sys.argv) == 3:  # one setting, in the process the parent started for it
        inter, intra = int(sys.argv[1]), int(sys.argv[2])
        result = dict(measure(inter, intra))
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        result.update(inter_op=inter, intra_op=intra, onednn=os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default"),
                      peak_rss_mb=rss_mb)
        print(json.dumps(result))
        return
    runs = [json.loads(subprocess.run([sys.executable, script, str(inter), str(intra)], check=True,
                                      capture_output=True, text=True,
                                      env=dict(os.environ, TF_ENABLE_ONEDNN_OPTS=onednn)).stdout)
            for onednn in ("0", "1") for inter in (1, 2) for intra in (1, 2)]
    pick = max if higher_is_better else min
    print(json.dumps(dict(name=name, **pick(runs, key=lambda r: r[key]))))


# Ports for servers on 127.0.0.1 that the OS picked (the cluster peers): bound together, so they
# differ, then released for the servers to take.
def free_ports(n):
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()
