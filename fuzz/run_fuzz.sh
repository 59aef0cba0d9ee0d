#!/usr/bin/env bash
# `make fuzz`: builds every fuzz target (fuzz/fuzz_*.cc) with Debian's clang, libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer in build-fuzz/ (only the targets and the
# libraries they use), then runs each for FUZZ_SECONDS seconds on its seed corpus
# (fuzz/corpus/<name>/) and its past crashes (fuzz/regressions/<name>/). New corpus entries go to
# a temporary directory. Fails on the first target that crashes, leaks, times out (10 s per
# input) or goes past 2 GiB, printing the reproducer's path.
#
# Usage: fuzz/run_fuzz.sh [--build-only | --no-build]   (environment: FUZZ_SECONDS, default 60;
#        FUZZ_TARGETS, names to run, default all; FUZZ_BUILD, default build-fuzz)
# A crash becomes a test: copy the reproducer to fuzz/regressions/<name>/, fix the parser; the
# ctest entry fuzz_replay_<name> of the normal build runs it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
build=${FUZZ_BUILD:-build-fuzz}
mode=${1:-}
all_targets=(graph_def function_def tensor_proto npy checkpoint_index checkpoint tfrecord events
             recv_tensor_chunks tf_config feed_value)
read -r -a targets <<< "${FUZZ_TARGETS:-${all_targets[*]}}"

declare -A max_len=(
  [graph_def]=65536 [function_def]=16384 [tensor_proto]=4096 [npy]=4096 [checkpoint_index]=8192
  [checkpoint]=16384 [tfrecord]=4096 [events]=8192 [recv_tensor_chunks]=4096 [tf_config]=4096
  [feed_value]=1024)

if [[ "$mode" != "--no-build" ]]; then
  for tool in clang clang++; do
    command -v "$tool" >/dev/null || { echo "fuzz: $tool not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
  done
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
  if [[ ! -f "$build/build.ninja" ]]; then
    CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DDFLOW_FUZZ=ON -DDFLOW_BUILD_TESTS=OFF -DDFLOW_BUILD_PYTHON=OFF -DDFLOW_BUILD_BENCH=OFF \
      "${launcher[@]}" \
      -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link $san -fno-omit-frame-pointer -gline-tables-only" \
      -DCMAKE_EXE_LINKER_FLAGS="$san"
  fi
  ninja -C "$build" $(printf 'fuzz_%s ' "${targets[@]}")
fi
[[ "$mode" == "--build-only" ]] && exit 0

artifacts="$build/artifacts"
mkdir -p "$artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=()
for name in "${targets[@]}"; do
  echo "=== fuzz_$name: ${seconds}s"
  rm -rf "${artifacts:?}/$name"
  mkdir -p "$work/$name" "$artifacts/$name"
  dirs=("fuzz/corpus/$name")
  if [[ -d "fuzz/regressions/$name" ]]; then dirs+=("fuzz/regressions/$name"); fi
  log="$artifacts/$name/fuzz.log"
  if ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
     "$build/bin/fuzz_$name" "$work/$name" "${dirs[@]}" -max_total_time="$seconds" \
       -max_len="${max_len[$name]}" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
       -artifact_prefix="$artifacts/$name/" >"$log" 2>&1; then
    grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::new_units_added)" "$log" | tr '\n' ' '
    echo
  else
    failed+=("$name")
    tail -n 60 "$log"
    for f in "$artifacts/$name"/{crash,leak,timeout,oom,slow-unit}-*; do
      [[ -e "$f" ]] && echo "fuzz_$name: reproducer $f (rerun: $build/bin/fuzz_$name $f)"
    done
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: FAILED: ${failed[*]} (logs in $artifacts/<name>/fuzz.log)" >&2
  exit 1
fi
echo "fuzz: every target ran ${seconds}s clean"
