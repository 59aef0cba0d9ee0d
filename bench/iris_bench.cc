// One training step of the Iris job (examples/iris.cc) through the estimator's own training
// session: BM_IrisTrainStep runs the MonitoredTrainingSession that Estimator::Train creates
// (the same graph and hooks: StopAtStepHook, NanTensorHook, the progress hook every 100 steps,
// StepCounterHook), each step being GetNext of the shuffled, repeated, batched dataset (100 rows)
// + forward + backward + Adagrad on 6 variables + the global step. No checkpoint is written in
// the timed loop (save_checkpoints_secs is far away), as in a run between two checkpoints.
// BM_IrisInputGetNext is the input pipeline's share alone: a session run of GetNext of the same
// dataset. The peer is bench/peers/torch_iris.py (the same model and batch in PyTorch), run by
// bench/run_all.sh in the same run.
#include <benchmark/benchmark.h>

#include "dflow/dflow.h"
#include "dflow/estimator.h"
#include "examples/iris.h"
// BM_IrisTrainStep times single steps of the training session that Estimator::Train builds
// (graph, hooks and all); only the estimator's internal EstimatorAccess::StartTraining hands that
// session out one step at a time, so this one benchmark reaches inside.
#include "estimator/estimator_internal.h"

#ifndef DFLOW_SOURCE_DIR
#define DFLOW_SOURCE_DIR "."
#endif

namespace dflow {
namespace {

namespace est = estimator;

void BM_IrisTrainStep(benchmark::State& state) {
  auto train = examples::LoadIris(DFLOW_SOURCE_DIR "/data/iris/iris_training.csv");
  if (!train.ok()) {
    state.SkipWithError(train.status().ToString().c_str());
    return;
  }
  est::RunConfig config;
  config.tf_random_seed = 1;
  config.save_checkpoints_secs = int64_t{1} << 30;
  config.log = [](const std::string&) {};
  est::DNNClassifierOptions o;
  for (const std::string& name : examples::IrisFeatureNames())
    o.feature_columns.push_back(feature_column::NumericColumn(name));
  o.hidden_units = {10, 10};
  o.n_classes = 3;
  est::DNNClassifier classifier(o, config);
  auto run =
      est::EstimatorAccess::StartTraining(classifier,
                                          [&](const Scope& s) -> StatusOr<est::InputFnResult> {
                                            return examples::IrisDataset(s, *train).Shuffle(1000).Repeat().Batch(100);
                                          },
                                          {.max_steps = int64_t{1} << 60});
  if (!run.ok() || (*run)->session == nullptr) {
    state.SkipWithError(run.ok() ? "nothing to train" : run.status().ToString().c_str());
    return;
  }
  train::MonitoredSession& session = *(*run)->session;
  const Operation train_op = (*run)->train_op;
  for (int i = 0; i < 200; ++i) (void)session.Run({}, {}, {train_op});  // warm up
  for (auto _ : state) {
    if (!session.Run({}, {}, {train_op}).ok()) {
      state.SkipWithError("step failed");
      break;
    }
  }
  state.counters["us_per_step"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  (void)session.Close();
}
BENCHMARK(BM_IrisTrainStep)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_IrisInputGetNext(benchmark::State& state) {
  auto train = examples::LoadIris(DFLOW_SOURCE_DIR "/data/iris/iris_training.csv");
  if (!train.ok()) {
    state.SkipWithError(train.status().ToString().c_str());
    return;
  }
  Scope root = Scope::NewRootScope();
  root.SetRandomSeed(1);
  data::Iterator it = examples::IrisDataset(root, *train).Shuffle(1000).Repeat().Batch(100).MakeInitializableIterator();
  data::Element next = it.GetNext();
  ClientSession session(root);
  if (!session.Run({it.initializer()}).ok()) state.SkipWithError("initializer failed");
  for (auto _ : state) {
    if (!session.Run(next.components).ok()) {
      state.SkipWithError("GetNext failed");
      break;
    }
  }
}
BENCHMARK(BM_IrisInputGetNext)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace dflow

BENCHMARK_MAIN();
