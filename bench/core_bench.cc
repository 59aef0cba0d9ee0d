// Core runtime benchmarks (run by `make bench`, compared with their peers by bench/compare.py):
//  - executor overhead: one Session::Run of a chain of 10,000 scalar Add nodes, per node;
//  - MatMul 1024x1024 float32 through a session (fed and fetched; and with the operands in
//    variables, nothing fetched), beside a direct oneDNN sgemm call.
#include <benchmark/benchmark.h>

#include <vector>

#include "dflow/dflow.h"
#include "oneapi/dnnl/dnnl.h"

namespace dflow {
namespace {

constexpr int kChain = 10000;

void BM_SessionAddChain(benchmark::State& state) {
  Scope root = Scope::NewRootScope();
  Output one = ops::Const(root, 1.0f);
  Output v = ops::Const(root, 0.0f);
  for (int i = 0; i < kChain; ++i) v = ops::Add(root, v, one);
  ClientSession session(root);
  auto warm = session.Run({v});
  if (!warm.ok() || (*warm)[0].scalar<float>() != kChain) {
    state.SkipWithError("wrong result");
    return;
  }
  for (auto _ : state) {
    auto r = session.Run({v});
    benchmark::DoNotOptimize(r);
  }
  // Seconds per node (the counter is inverted: time / nodes).
  state.counters["per_node"] = benchmark::Counter(static_cast<double>(kChain) * state.iterations(),
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SessionAddChain)->Unit(benchmark::kMillisecond)->UseRealTime();

constexpr int kN = 1024;

void SetFlops(benchmark::State& state) {
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * kN * kN * kN * state.iterations() / 1e9,
                                                benchmark::Counter::kIsRate);
}

void BM_DirectSgemm1024(benchmark::State& state) {
  std::vector<float> a(kN * kN, 0.5f), b(kN * kN, 0.25f), c(kN * kN);
  for (auto _ : state) {
    dnnl_sgemm('N', 'N', kN, kN, kN, 1.0f, a.data(), kN, b.data(), kN, 0.0f, c.data(), kN);
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state);
}
BENCHMARK(BM_DirectSgemm1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SessionMatMul1024(benchmark::State& state) {
  Scope root = Scope::NewRootScope();
  Output a = ops::Placeholder(root, DT_FLOAT, PartialTensorShape({kN, kN}));
  Output b = ops::Placeholder(root, DT_FLOAT, PartialTensorShape({kN, kN}));
  Output c = ops::MatMul(root, a, b);
  Tensor ta(DT_FLOAT, TensorShape{kN, kN}), tb(DT_FLOAT, TensorShape{kN, kN});
  for (float& x : ta.flat<float>()) x = 0.5f;
  for (float& x : tb.flat<float>()) x = 0.25f;
  ClientSession session(root);
  ClientSession::FeedDict feeds{{a, ta}, {b, tb}};
  auto warm = session.Run(feeds, {c});
  if (!warm.ok() || (*warm)[0].flat<float>()[0] != 0.125f * kN) {
    state.SkipWithError("wrong result");
    return;
  }
  for (auto _ : state) {
    auto r = session.Run(feeds, {c});
    benchmark::DoNotOptimize(r);
  }
  SetFlops(state);
}
BENCHMARK(BM_SessionMatMul1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same product with A and B held in variables and C computed but not fetched (the MatMul run
// as a target): what a client gets that hands nothing over per step, as TensorFlow's in-graph peer.
void BM_SessionMatMul1024InGraph(benchmark::State& state) {
  Scope root = Scope::NewRootScope();
  Variable a = Variable::Create(root.WithOpName("a"), {kN, kN}, DT_FLOAT, init::Constant(0.5));
  Variable b = Variable::Create(root.WithOpName("b"), {kN, kN}, DT_FLOAT, init::Constant(0.25));
  Output c = ops::MatMul(root, a.read(), b.read());
  ClientSession session(root);
  if (!session.Run({GlobalVariablesInitializer(root)}).ok()) {
    state.SkipWithError("init failed");
    return;
  }
  auto warm = session.Run({c});
  if (!warm.ok() || (*warm)[0].flat<float>()[0] != 0.125f * kN) {
    state.SkipWithError("wrong result");
    return;
  }
  for (auto _ : state) {
    auto r = session.Run({}, {}, {c.op()});
    benchmark::DoNotOptimize(r);
  }
  SetFlops(state);
}
BENCHMARK(BM_SessionMatMul1024InGraph)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace dflow

BENCHMARK_MAIN();
