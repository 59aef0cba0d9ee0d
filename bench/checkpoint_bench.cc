// Checkpoint throughput: Saver::Save and Saver::Restore of one float variable (4 MiB and
// 64 MiB) on a local session, to a temporary directory. Bytes per second are the variable's
// bytes; every save fsyncs its files, so the figure includes the disk.
#include <benchmark/benchmark.h>

#include "bench/bench_util.h"
#include "dflow/dflow.h"

namespace dflow {
namespace {

struct Fixture {
  bench::ScratchDir dir{"dflow_bench"};
  Scope root = Scope::NewRootScope();
  Variable v;
  train::Saver saver;
  std::unique_ptr<ClientSession> session;
  explicit Fixture(int64_t floats) {
    v = Variable::Create(root.WithOpName("v"), {floats}, DT_FLOAT, init::RandomUniform(-1, 1, 1));
    train::SaverOptions o;
    o.max_to_keep = 2;
    saver = train::Saver(root, o);
    session = std::make_unique<ClientSession>(root);
    (void)session->Run({v.initializer()});
  }
};

void BM_Save(benchmark::State& state) {
  Fixture f(state.range(0));
  int64_t step = 0;
  for (auto _ : state) {
    auto p = f.saver.Save(*f.session, f.dir.File("model"), ++step);
    if (!p.ok()) state.SkipWithError(std::string(p.status().message()).c_str());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

void BM_Restore(benchmark::State& state) {
  Fixture f(state.range(0));
  auto p = f.saver.Save(*f.session, f.dir.File("model"), 1);
  for (auto _ : state) {
    Status s = f.saver.Restore(*f.session, *p);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

BENCHMARK(BM_Save)->Arg(1 << 20)->Arg(16 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Restore)->Arg(1 << 20)->Arg(16 << 20)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace dflow

BENCHMARK_MAIN();
