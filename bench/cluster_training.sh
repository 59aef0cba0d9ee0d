#!/usr/bin/env bash
# Training throughput of examples/distributed_trainer.cc (between-graph, asynchronous) on a local
# cluster of 1 ps task and 1, 2 and 4 workers (`dflow launch`): steps per second summed over the
# workers. Measured as bench/peers/ps_trainer.py measures TensorFlow: every worker runs STEPS timed
# steps of its own (--worker_steps) after a start barrier and 20 untimed steps, so that the
# workers' timed windows coincide, and each step fetches the loss only.
# Two security settings: "plaintext" (`dflow launch --no_tls`: no TLS, the cluster secret still
# checked on every call; TensorFlow's gRPC peer is plaintext without authentication) and "secure"
# (dflow's default: TLS and the secret), so that the cost of security shows.
# Usage: bench/cluster_training.sh [BUILD_DIR] [STEPS] [WORKER_COUNTS]
# Prints one JSON line per security setting and cluster size:
# {"name": "cluster_training", "security": "plaintext"|"secure", "workers": N, "steps_per_second": ...,
#  "global_step": ..., "local_steps": ..., "loss_first": ..., "loss_last": ...}
set -euo pipefail
build=${1:-build}
steps=${2:-1000}
counts=${3:-1 2 4}
for workers in $counts; do
  for security in plaintext secure; do
    flag=()
    [[ $security == plaintext ]] && flag=(--no_tls)
    "$build/bin/dflow" launch --ps 1 --workers "$workers" "${flag[@]}" --timeout 600 -- \
        "$build/bin/distributed_trainer" --worker_steps "$steps" |
      awk -v workers="$workers" -v security="$security" '
        /local steps/ {
          ++reports
          for (i = 1; i <= NF; ++i) {
            if ($i == "local") local_steps += $(i - 1);
            if ($i == "steps/s),") rate += substr($(i - 1), 2);
            if ($i == "global") { g = $(i + 2); sub(",", "", g); if (g + 0 > global) global = g + 0 }
            if ($i == "loss" && $0 ~ /worker 0:/) { first = $(i + 1); last = $(i + 3) }
          }
        }
        END {
          if (reports != workers) {
            printf "cluster_training.sh: %d of %d workers reported\n", reports, workers > "/dev/stderr"
            exit 1
          }
          printf "{\"name\": \"cluster_training\", \"security\": \"%s\", \"workers\": %d, \"steps_per_second\": %.1f, \"global_step\": %d, \"local_steps\": %d, \"loss_first\": %s, \"loss_last\": %s}\n",
                 security, workers, rate, global, local_steps, first, last
        }'
  done
done
