// What a MonitoredTrainingSession costs per step, beside the same training step run directly on
// a ClientSession in the same run: a small model (w: 256 floats, loss = sum(w^2), gradient
// descent, the global step incremented) in this process, so that the loop's own work is what
// shows:
//  - BM_RawStep: ClientSession::Run of the train op;
//  - BM_RawStepWithHookFetches: the same with the global step and the loss fetched too, which
//    is the run the hooks below make of it;
//  - BM_MonitoredStep: MonitoredSession::Run of the same op with the hooks a chief usually has
//    (StopAtStepHook, StepCounterHook every 100 steps, NanTensorHook on the loss, and a
//    CheckpointSaverHook into a temporary directory every Arg steps: 1000, and 2^30 for never).
#include <benchmark/benchmark.h>

#include "bench/bench_util.h"
#include "dflow/dflow.h"

namespace dflow {
namespace {

struct Model {
  Model() : root(Scope::NewRootScope()) {
    global_step = train::CreateGlobalStep(root);
    w = Variable::Create(root.WithOpName("w"), {256}, DT_FLOAT, init::Constant(1.0f));
    loss = ops::Sum(root, ops::Square(root, w.read()), {0});
    train_op = train::GradientDescentOptimizer(1e-6f).Minimize(root, loss, {}, global_step);
  }
  Scope root;
  Output global_step, loss;
  Variable w;
  Operation train_op;
};

void BM_RawStep(benchmark::State& state) {
  Model m;
  ClientSession session(m.root);
  if (!session.Run({GlobalVariablesInitializer(m.root)}).ok()) state.SkipWithError("init failed");
  for (auto _ : state) {
    if (!session.Run({m.train_op}).ok()) state.SkipWithError("step failed");
  }
}
BENCHMARK(BM_RawStep)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The same run with what the hooks add to it: the global step and the loss fetched with the op.
void BM_RawStepWithHookFetches(benchmark::State& state) {
  Model m;
  ClientSession session(m.root);
  if (!session.Run({GlobalVariablesInitializer(m.root)}).ok()) state.SkipWithError("init failed");
  for (auto _ : state) {
    if (!session.Run({}, {m.global_step, m.loss}, {m.train_op}).ok()) state.SkipWithError("step failed");
  }
}
BENCHMARK(BM_RawStepWithHookFetches)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_MonitoredStep(benchmark::State& state) {
  Model m;
  bench::ScratchDir dir;
  train::MonitoredTrainingSessionOptions o;
  o.checkpoint_dir = dir.path();
  o.save_checkpoint_steps = state.range(0);
  o.log_step_count_steps = 100;
  o.hooks = {std::make_shared<train::StopAtStepHook>(m.global_step, 0, int64_t{1} << 60),
             std::make_shared<train::NanTensorHook>(m.loss)};
  auto session = train::MonitoredTrainingSession(m.root, o);
  if (!session.ok()) {
    state.SkipWithError(session.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    if (!(*session)->Run({}, {}, {m.train_op}).ok()) state.SkipWithError("step failed");
  }
}
BENCHMARK(BM_MonitoredStep)->Arg(1000)->Arg(1 << 30)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace dflow

BENCHMARK_MAIN();
