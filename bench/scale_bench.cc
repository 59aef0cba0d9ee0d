// How the executor's cost grows with the graph: one Session::Run of a chain of N scalar Add nodes
// (N = 10 ... 100,000, the benchmark's argument), time per node. The chain is the one of
// core_bench's BM_SessionAddChain (10,000 nodes there); bench/scale/run_scale.py plots it beside
// TensorFlow's (bench/scale/tf_chain_scale.py).
#include <benchmark/benchmark.h>

#include "dflow/dflow.h"

namespace dflow {
namespace {

void BM_AddChainScale(benchmark::State& state) {
  const int64_t n = state.range(0);
  Scope root = Scope::NewRootScope();
  Output one = ops::Const(root, 1.0f);
  Output v = ops::Const(root, 0.0f);
  for (int64_t i = 0; i < n; ++i) v = ops::Add(root, v, one);
  ClientSession session(root);
  auto warm = session.Run({v});
  if (!warm.ok() || (*warm)[0].scalar<float>() != static_cast<float>(n)) {
    state.SkipWithError("wrong result");
    return;
  }
  for (auto _ : state) {
    auto r = session.Run({v});
    benchmark::DoNotOptimize(r);
  }
  // Seconds per node (the counter is inverted: time / nodes).
  state.counters["per_node"] = benchmark::Counter(static_cast<double>(n) * state.iterations(),
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_AddChainScale)
    ->Arg(10)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Arg(100000)
    ->ArgName("nodes")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace dflow

BENCHMARK_MAIN();
