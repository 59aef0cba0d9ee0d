// Checkpoint throughput: Saver::Save and Saver::Restore on a local session, to a temporary
// directory (under $TMPDIR or /tmp). Bytes per second are the variables' bytes; every save fsyncs
// its files, so the figure includes the disk. Each save writes the meta graph and the state
// file, as Saver does by default, and keeps 2 checkpoints.
//  - BM_Save, BM_Restore: one float variable of 4 MiB and of 64 MiB;
//  - BM_Save1GiB, BM_Restore1GiB: 1 GiB of variables, as 4 float variables of 256 MiB (a model's
//    few large tensors), 3 iterations each so that the run stays short. The TensorFlow peer is
//    bench/peers/tf_checkpoint.py (the same variables through tf.compat.v1.train.Saver).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "dflow/dflow.h"

namespace dflow {
namespace {

// `count` float variables of `floats` elements each ("v" alone, else "v0", "v1", ...).
struct Fixture {
  bench::ScratchDir dir{"dflow_bench"};
  Scope root = Scope::NewRootScope();
  std::vector<Variable> vars;
  train::Saver saver;
  std::unique_ptr<ClientSession> session;
  int64_t bytes = 0;  // of all the variables
  explicit Fixture(int64_t floats, int count = 1) {
    for (int i = 0; i < count; ++i) {
      const std::string name = count == 1 ? "v" : "v" + std::to_string(i);
      bytes += floats * 4;
      vars.push_back(Variable::Create(root.WithOpName(name), {floats}, DT_FLOAT, init::RandomUniform(-1, 1, 1 + i)));
    }
    train::SaverOptions o;
    o.max_to_keep = 2;
    saver = train::Saver(root, o);
    session = std::make_unique<ClientSession>(root);
    std::vector<Operation> init;
    for (const Variable& v : vars) init.push_back(v.initializer());
    Status s = session->Run(init);
    if (!s.ok()) std::fprintf(stderr, "initializing the variables failed: %s\n", std::string(s.message()).c_str());
  }
};

void SaveLoop(benchmark::State& state, int64_t floats, int count) {
  Fixture f(floats, count);
  int64_t step = 0;
  for (auto _ : state) {
    auto p = f.saver.Save(*f.session, f.dir.File("model"), ++step);
    if (!p.ok()) state.SkipWithError(std::string(p.status().message()).c_str());
  }
  state.SetBytesProcessed(state.iterations() * f.bytes);
}

void RestoreLoop(benchmark::State& state, int64_t floats, int count) {
  Fixture f(floats, count);
  auto p = f.saver.Save(*f.session, f.dir.File("model"), 1);
  if (!p.ok()) {
    state.SkipWithError(std::string(p.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    Status s = f.saver.Restore(*f.session, *p);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  }
  state.SetBytesProcessed(state.iterations() * f.bytes);
}

void BM_Save(benchmark::State& state) { SaveLoop(state, state.range(0), 1); }
void BM_Restore(benchmark::State& state) { RestoreLoop(state, state.range(0), 1); }
void BM_Save1GiB(benchmark::State& state) { SaveLoop(state, int64_t{64} << 20, 4); }
void BM_Restore1GiB(benchmark::State& state) { RestoreLoop(state, int64_t{64} << 20, 4); }

BENCHMARK(BM_Save)->Arg(1 << 20)->Arg(16 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Restore)->Arg(1 << 20)->Arg(16 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Save1GiB)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Restore1GiB)->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace dflow

BENCHMARK_MAIN();
