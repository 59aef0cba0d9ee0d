// Training benchmarks, compared by bench/compare.py with bench/peers/torch_{mlp,cnn}.py:
//  - MLP 784-512-512-10, batch 128, softmax cross-entropy, SGD: steps per second;
//  - CNN conv 5x5x32 / maxpool 2 / conv 5x5x64 / maxpool 2 / fc 1024 / fc 10 on 28x28x1, batch
//    64, forward + backward + SGD: steps per second.
// Each model's peak resident memory is reported by running it alone (bench/run_all.sh runs one
// process per model) and reading getrusage at the end.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <random>

#include "dflow/dflow.h"

namespace dflow {
namespace {

struct Model {
  Scope root = Scope::NewRootScope();
  Output x, labels, loss;
  Operation train;
  std::vector<Output> params;
};

Output Op(const Scope& s, const std::string& op, const std::vector<Input>& in, const AttrMap& attrs = {}) {
  Operation o = ops::BuildOp(s, op, in, attrs);
  return o.valid() ? Output(o, 0) : Output();
}

Output Param(Model* m, const std::string& name, const TensorShape& shape, bool bias) {
  Variable v = Variable::Create(m->root.WithOpName(name), shape, DT_FLOAT,
                                bias ? init::Zeros() : init::TruncatedNormal(0, 0.05, 1));
  m->params.push_back(v.ref());
  return v.read();
}

void AddTraining(Model* m, Output logits) {
  Scope& s = m->root;
  Operation xent = ops::BuildOp(s, "SparseSoftmaxCrossEntropyWithLogits", {logits, m->labels});
  m->loss = Op(s, "Mean", {Output(xent, 0), ops::Const(s, {0})});
  std::vector<Output> grads = Gradients(s, {m->loss}, m->params);
  std::vector<Operation> updates;
  for (size_t i = 0; i < m->params.size(); ++i) {
    updates.push_back(ops::BuildOp(s, "ApplyGradientDescent", {m->params[i], 0.01f, grads[i]}));
  }
  m->train = ops::Group(s, updates);
}

Output Dense(Model* m, const std::string& name, Output in, int64_t n_in, int64_t n_out, bool relu) {
  Output w = Param(m, name + "_w", {n_in, n_out}, false);
  Output b = Param(m, name + "_b", {n_out}, true);
  Output y = Op(m->root, "BiasAdd", {ops::MatMul(m->root, in, w), b});
  return relu ? Op(m->root, "Relu", {y}) : y;
}

Tensor RandomTensor(const TensorShape& shape, int seed) {
  Tensor t(DT_FLOAT, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  for (float& v : t.flat<float>()) v = u(rng);
  return t;
}

Tensor RandomLabels(int64_t n, int seed) {
  Tensor t(DT_INT32, TensorShape{n});
  std::mt19937 rng(seed);
  for (int32_t& v : t.flat<int32_t>()) v = static_cast<int32_t>(rng() % 10);
  return t;
}

void RunTraining(benchmark::State& state, Model& m, const Tensor& x, const Tensor& y, bool fuse_ops = true) {
  if (!m.root.ok()) {
    state.SkipWithError(std::string(m.root.status().message()).c_str());
    return;
  }
  SessionOptions options;
  options.fuse_ops = fuse_ops;
  ClientSession session(m.root, options);
  if (!session.Run({GlobalVariablesInitializer(m.root)}).ok()) {
    state.SkipWithError("init failed");
    return;
  }
  ClientSession::FeedDict feeds{{m.x, x}, {m.labels, y}};
  auto first = session.Run(feeds, {m.loss}, {m.train});
  if (!first.ok()) {
    state.SkipWithError(std::string(first.status().message()).c_str());
    return;
  }
  for (int i = 0; i < 3; ++i) (void)session.Run(feeds, {}, {m.train});
  for (auto _ : state) {
    auto r = session.Run(feeds, {}, {m.train});
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
  }
  auto last = session.Run(feeds, {m.loss});
  // Training on a fixed batch must lower the loss.
  if (!last.ok() || (*last)[0].scalar<float>() >= (*first)[0].scalar<float>()) {
    state.SkipWithError("the loss did not go down");
    return;
  }
  state.counters["steps_per_second"] = benchmark::Counter(state.iterations(), benchmark::Counter::kIsRate);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  state.counters["peak_rss_mb"] = ru.ru_maxrss / 1024.0;
}

void TrainMLP(benchmark::State& state, bool fuse_ops) {
  Model m;
  m.x = ops::Placeholder(m.root, DT_FLOAT, PartialTensorShape({128, 784}));
  m.labels = ops::Placeholder(m.root, DT_INT32, PartialTensorShape({128}));
  Output h1 = Dense(&m, "fc1", m.x, 784, 512, true);
  Output h2 = Dense(&m, "fc2", h1, 512, 512, true);
  AddTraining(&m, Dense(&m, "fc3", h2, 512, 10, false));
  RunTraining(state, m, RandomTensor({128, 784}, 1), RandomLabels(128, 2), fuse_ops);
}
void BM_TrainMLP(benchmark::State& state) { TrainMLP(state, true); }
BENCHMARK(BM_TrainMLP)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_TrainMLPUnfused(benchmark::State& state) { TrainMLP(state, false); }
BENCHMARK(BM_TrainMLPUnfused)->Unit(benchmark::kMillisecond)->UseRealTime();

// The *Unfused variants turn op fusion off (graph/op_fusion.h), to show what it gains.
void TrainCNN(benchmark::State& state, bool fuse_ops) {
  Model m;
  Scope& s = m.root;
  m.x = ops::Placeholder(s, DT_FLOAT, PartialTensorShape({64, 28, 28, 1}));
  m.labels = ops::Placeholder(s, DT_INT32, PartialTensorShape({64}));
  auto conv = [&](const std::string& name, Output in, int64_t cin, int64_t cout) {
    Output w = Param(&m, name + "_w", {5, 5, cin, cout}, false);
    Output b = Param(&m, name + "_b", {cout}, true);
    Output c = Op(s, "Conv2D", {in, w}, {{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", "SAME"}});
    Output r = Op(s, "Relu", {Op(s, "BiasAdd", {c, b})});
    return Op(s, "MaxPool", {r},
              {{"ksize", std::vector<int64_t>{1, 2, 2, 1}},
               {"strides", std::vector<int64_t>{1, 2, 2, 1}},
               {"padding", "VALID"}});
  };
  Output p1 = conv("conv1", m.x, 1, 32);
  Output p2 = conv("conv2", p1, 32, 64);
  Output flat = ops::Reshape(s, p2, {64, 7 * 7 * 64});
  Output fc = Dense(&m, "fc1", flat, 7 * 7 * 64, 1024, true);
  AddTraining(&m, Dense(&m, "fc2", fc, 1024, 10, false));
  RunTraining(state, m, RandomTensor({64, 28, 28, 1}, 3), RandomLabels(64, 4), fuse_ops);
}
void BM_TrainCNN(benchmark::State& state) { TrainCNN(state, true); }
BENCHMARK(BM_TrainCNN)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_TrainCNNUnfused(benchmark::State& state) { TrainCNN(state, false); }
BENCHMARK(BM_TrainCNNUnfused)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace dflow

BENCHMARK_MAIN();
