#!/usr/bin/env bash
# Training throughput of examples/distributed_trainer.cc (between-graph, asynchronous) on a local
# cluster of 1 ps task and 1, 2 and 4 workers: steps per second summed over the workers.
# Usage: bench/cluster_training.sh [BUILD_DIR] [STEPS]   (prints one JSON line per cluster size)
set -euo pipefail
build=${1:-build}
steps=${2:-3000}
for workers in 1 2 4; do
  "$build/bin/dflow" launch --ps 1 --workers "$workers" --timeout 600 -- \
      "$build/bin/distributed_trainer" --train_steps "$steps" |
    awk -v workers="$workers" '
      /local steps/ {
        for (i = 1; i <= NF; ++i) {
          if ($i == "local") local_steps += $(i - 1);
          if ($i == "steps/s),") rate += substr($(i - 1), 2);
          if ($i == "global") { g = $(i + 2); sub(",", "", g); if (g + 0 > global) global = g + 0 }
          if ($i == "loss") { first = $(i + 1); last = $(i + 3) }
        }
      }
      END {
        printf "{\"name\": \"cluster_training\", \"workers\": %d, \"steps_per_second\": %.1f, \"global_step\": %d, \"local_steps\": %d, \"loss_first\": %s, \"loss_last\": %s}\n",
               workers, rate, global, local_steps, first, last
      }'
done
