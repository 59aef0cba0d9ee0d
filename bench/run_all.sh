#!/usr/bin/env bash
# Runs every benchmark and its PyTorch and TensorFlow peers in the same run, then prints the comparison
# table and writes it to BUILD_DIR/bench/results.json.
# Usage: bench/run_all.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$build/bin/core_bench" --benchmark_min_time=1 --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out="$out/core.json" --benchmark_out_format=json >&2
# One process per training model, so that each reports its own peak resident memory.
for model in MLP CNN; do
  "$build/bin/train_bench" --benchmark_filter="BM_Train$model/" --benchmark_min_time=3 \
    --benchmark_out="$out/train_$model.json" --benchmark_out_format=json >&2
done
# The cluster: null step and transfers beside their references, then training on 1, 2, 4 workers.
"$build/bin/cluster_bench" --benchmark_min_time=2 --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out="$out/cluster.json" --benchmark_out_format=json >&2
"$here/cluster_training.sh" "$build" 1000 > "$out/cluster_training.jsonl"
# One Iris training step through the estimator's session (its peers: peers/torch_iris.py, peers/tf_iris.py).
"$build/bin/iris_bench" --benchmark_min_time=2 --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out="$out/iris.json" --benchmark_out_format=json >&2
# The CSV input pipeline (its peer: peers/tf_csv.py) and checkpoint save and restore of 1 GiB of
# variables (peers/tf_checkpoint.py; 3 iterations each, every save fsyncs).
"$build/bin/data_bench" --benchmark_filter='BM_CsvDataset|BM_DecodeCsvBatched' --benchmark_min_time=2 \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_out="$out/data.json" \
  --benchmark_out_format=json >&2
"$build/bin/checkpoint_bench" --benchmark_filter=1GiB --benchmark_out="$out/checkpoint.json" \
  --benchmark_out_format=json >&2
# The peers run with the python3 on PATH, which has PyTorch 2.13 and TensorFlow 2.21 (torch_*.py and
# tf_*.py; scripts/install-deps.sh --bench installs both).
peers="$out/peers.jsonl"
: > "$peers"
for lib in torch tensorflow; do
  if python3 -c "import $lib" 2>/dev/null; then
    prefix=${lib/tensorflow/tf}
    for p in "$here"/peers/"$prefix"_*.py; do
      # The training cluster peer needs the build (for its dflow-backend runs): called below.
      [[ $(basename "$p") == tf_cluster_training.py ]] || python3 "$p" >> "$peers"
    done
  else
    echo "python3 has no $lib: its peers are skipped (scripts/install-deps.sh --bench)" >&2
  fi
done
# The Iris step through dflow's Python front end beside TensorFlow's Python, the same script (py_iris),
# and asynchronous training with 1 ps and 1/2/4 workers, one Python trainer on TensorFlow and on
# dflow's Python (tf_cluster_training, py_cluster_training).
if python3 -c 'import tensorflow' 2>/dev/null && [[ -d "$build/python/dflow" ]]; then
  PYTHONPATH="$build/python" python3 "$here/peers/tf_iris.py" --backend dflow >> "$peers"
fi
if python3 -c 'import tensorflow' 2>/dev/null; then
  python3 "$here/peers/tf_cluster_training.py" --build "$build" >> "$peers"
fi
mkdir -p "$build/bench"
python3 "$here/compare.py" "$out/core.json" "$peers" "$out"/train_*.json \
  --cluster "$out/cluster.json" "$out/cluster_training.jsonl" --iris "$out/iris.json" \
  --data "$out/data.json" --checkpoint "$out/checkpoint.json" \
  --results "$build/bench/results.json"
# The Python front end beside TensorFlow 2.21's tf.compat.v1 in the same process: Session.run of
# a tiny graph, building 10,000 ops, feeding and fetching 64 MiB (docs/PERFORMANCE.md, Python).
if python3 -c 'import tensorflow' 2>/dev/null && [[ -d "$build/python/dflow" ]]; then
  echo
  PYTHONPATH="$build/python" python3 "$here/python/bench_python.py"
else
  echo "TensorFlow or $build/python is missing: the Python benchmarks are skipped (scripts/install-deps.sh)" >&2
fi
# How the cost grows: one ps task serving 1-16 workers, a 1 GiB embedding over 1/2/4 ps tasks, the
# executor from 10 to 100,000 nodes beside TensorFlow; writes $build/bench/scale.json and the plots
# docs/scale_*.png (docs/PERFORMANCE.md, "How the cost grows").
if python3 -c 'import matplotlib' 2>/dev/null; then
  echo
  python3 "$here/scale/run_scale.py" --build "$build" --out "$build/bench/scale.json"
else
  echo "python3 has no matplotlib: the scale curves are skipped (scripts/install-deps.sh --bench)" >&2
fi
