// A 1 GiB partitioned embedding (2^22 rows x 64 float32 = 1 GiB) spread over P ps tasks (P = 1, 2,
// 4: the first argument), read and trained from a worker task: all the tasks are servers in this
// process on 127.0.0.1 (plaintext, as cluster_bench's tls:0), every row still crossing a real TCP
// connection through gRPC. The session is on the worker (as a between-graph trainer's is); each
// step feeds a batch of kIds random ids (uniform over the table, 16 batches fed in turn):
//  - op:0 lookup: ops::EmbeddingLookup ("mod" strategy: each shard gathers its own rows on its ps
//    task, the worker stitches them) and a Sum on the worker, so the rows cross to the worker
//    but not to the client; counters ids/s (lookups) and bytes/s of rows gathered;
//  - op:1 sparse update: the step of a TensorFlow user's GradientDescentOptimizer(0.01) on
//    loss = sum(lookup): TensorFlow's gradient of a gather is IndexedSlices (the looked-up rows'
//    gradients and their ids) and its sparse apply is a ScatterSub of lr * grad into the rows. The
//    same graph here, from the public API: the gradient of the loss with respect to the looked-up
//    rows, partitioned by shard on the worker (DynamicPartition on id % P), and a ScatterSub of
//    lr * grad into each shard on its ps task; counter rows/s (updated rows, duplicates counted);
//  - op:2 Minimize: train::GradientDescentOptimizer(0.01).Minimize(loss), what a user writes: the
//    optimizer takes the gradient of each shard's gather as the looked-up rows and their ids and
//    updates only those rows (ScatterSub on the ps task), as op:1 does by hand. (Before the
//    optimizer had its sparse path, this applied a dense, shard-sized gradient to every row:
//    ~0.35-0.75 s per step instead of ~5 ms.)
// kIds = 4096 ids per step: a training batch of 512 examples with 8 sparse features each, 1 MiB of
// rows per step, enough that the rows' transfer (not the step's fixed RPC cost, ~0.2 ms) is most
// of the step.
// One cluster at a time lives (the table of P = 1 is dropped before P = 2 is made), so the process
// holds the 1 GiB table once, plus a step's temporaries. Each benchmark runs a fixed number of
// steps (initializing the table takes about a second per cluster).
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "dflow/dflow.h"
#include "dflow/server.h"

namespace dflow {
namespace {

constexpr int64_t kRows = int64_t{1} << 22, kDim = 64, kIds = 4096, kBatches = 16;
constexpr float kLearningRate = 0.01f;

// P ps tasks and one worker task, plaintext, in this process; the table initialized once.
struct Cluster {
  explicit Cluster(int num_ps) : num_ps(num_ps) {
    creds.insecure = true;
    std::vector<int> ports = bench::FreeLoopbackPorts(num_ps + 1).value();
    std::vector<std::string> ps;
    for (int i = 0; i < num_ps; ++i) ps.push_back("127.0.0.1:" + std::to_string(ports[i]));
    std::string worker = "127.0.0.1:" + std::to_string(ports[num_ps]);
    spec = ClusterSpec::FromJobs({{"ps", ps}, {"worker", {worker}}}).value();
    for (int i = 0; i <= num_ps; ++i) {
      ServerOptions o;
      o.cluster = spec;
      o.job_name = i < num_ps ? "ps" : "worker";
      o.task_index = i < num_ps ? i : 0;
      o.credentials = creds;
      servers.push_back(Server::Create(o).value());
    }
  }
  ~Cluster() {
    for (auto& s : servers) s->Stop();
  }
  SessionOptions session_options() const {
    SessionOptions o;
    o.target = servers.back()->target();
    o.credentials = creds;
    return o;
  }
  int num_ps;
  ClusterSpec spec;
  ClusterCredentials creds;
  std::vector<std::unique_ptr<Server>> servers;
  bool initialized = false;
};

// The cluster of P ps tasks (the previous one, of another P, is stopped first).
Cluster* ClusterOf(int num_ps) {
  static std::unique_ptr<Cluster> current;
  if (current == nullptr || current->num_ps != num_ps) {
    current.reset();
    current = std::make_unique<Cluster>(num_ps);
  }
  return current.get();
}

// kBatches batches of kIds ids, uniform over the table (fixed seed).
const std::vector<Tensor>& IdBatches() {
  static const std::vector<Tensor> batches = [] {
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int64_t> dist(0, kRows - 1);
    std::vector<Tensor> out;
    for (int b = 0; b < kBatches; ++b) {
      std::vector<int64_t> ids(kIds);
      for (int64_t& id : ids) id = dist(rng);
      out.push_back(Tensor::FromValues<int64_t>(ids, TensorShape({kIds})).value());
    }
    return out;
  }();
  return batches;
}

// state.range(0): P; state.range(1): 0 lookup, 1 sparse update by hand, 2 Minimize.
void BM_Embedding1GiB(benchmark::State& state) {
  const int num_ps = static_cast<int>(state.range(0));
  const int op = static_cast<int>(state.range(1));
  Cluster* cluster = ClusterOf(num_ps);
  Scope root = Scope::NewRootScope();
  Scope worker = root.WithDevice("/job:worker/task:0");
  Scope sharded = root.WithDeviceFunction(train::ReplicaDeviceSetter(num_ps, "/job:worker/task:0"));
  PartitionedVariable emb = CreatePartitionedVariable(sharded, "emb", {kRows, kDim}, DT_FLOAT, init::Ones(),
                                                      FixedSizePartitioner(num_ps));
  Output ids = ops::Placeholder(worker.WithOpName("ids"), DT_INT64, PartialTensorShape({kIds}));
  Output rows = ops::EmbeddingLookup(worker, emb, ids, "mod");
  Output loss = ops::Sum(worker.WithOpName("loss"), rows, {0, 1});
  Operation init = GlobalVariablesInitializer(root);
  Operation step;
  if (op == 1) {
    // The looked-up rows' gradient (IndexedSlices' values), by shard, and lr * grad subtracted
    // from the rows where each shard lives (TensorFlow's sparse SGD apply).
    std::vector<Output> grad = Gradients(worker, {loss}, {rows});
    Output scaled = ops::Mul(worker, grad[0], kLearningRate);
    Output shard = ops::Cast(worker, ops::FloorMod(worker, ids, int64_t{num_ps}), DT_INT32);
    Output local = ops::FloorDiv(worker, ids, int64_t{num_ps});
    std::vector<Output> grads = ops::DynamicPartition(worker, scaled, shard, num_ps);
    std::vector<Output> locals = ops::DynamicPartition(worker, local, shard, num_ps);
    std::vector<Operation> updates;
    for (int p = 0; p < num_ps; ++p) {
      Scope at = root.WithDevice("/job:ps/task:" + std::to_string(p));
      updates.push_back(Operation(ops::ScatterSub(at, emb.parts()[p].ref(), locals[p], grads[p]).node()));
    }
    step = ops::Group(worker.WithOpName("sparse_sgd"), updates);
  } else if (op == 2) {
    step = train::GradientDescentOptimizer(kLearningRate).Minimize(worker.WithOpName("minimize_sgd"), loss);
  }
  if (!root.ok()) {
    state.SkipWithError(root.status().ToString().c_str());
    return;
  }
  ClientSession session(root, cluster->session_options());
  if (!cluster->initialized) {
    if (Status s = session.Run({init}); !s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
    cluster->initialized = true;
  }
  const std::vector<Tensor>& batches = IdBatches();
  // A warm step, checked: before any update every row is ones, so the loss is kIds * kDim.
  auto warm = session.Run({{ids, batches[0]}}, {loss}, {});
  if (!warm.ok()) {
    state.SkipWithError(warm.status().ToString().c_str());
    return;
  }
  if (op == 0 && (*warm)[0].scalar<float>() != static_cast<float>(kIds * kDim)) {
    state.SkipWithError("wrong lookup sum");
    return;
  }
  const float before = (*warm)[0].scalar<float>();
  int64_t i = 0;
  for (auto _ : state) {
    auto r = op == 0 ? session.Run({{ids, batches[i % kBatches]}}, {loss}, {})
                     : session.Run({{ids, batches[i % kBatches]}}, {}, {step});
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    ++i;
  }
  if (op != 0) {
    // The updates moved the rows down: the same batch now sums to less.
    auto after = session.Run({{ids, batches[0]}}, {loss}, {});
    if (!after.ok() || !((*after)[0].scalar<float>() < before)) {
      state.SkipWithError("the update did not lower the looked-up rows");
      return;
    }
  }
  const double n = static_cast<double>(state.iterations()) * kIds;
  state.counters[op == 0 ? "ids_per_s" : "rows_per_s"] = benchmark::Counter(n, benchmark::Counter::kIsRate);
  state.SetBytesProcessed(state.iterations() * kIds * kDim * static_cast<int64_t>(sizeof(float)));
}
// Per P: lookup, sparse update and Minimize (200 steps each), so that each cluster is made and
// initialized once.
const int kRegistered = [] {
  for (int64_t p : {1, 2, 4}) {
    for (int64_t op : {0, 1, 2}) {
      benchmark::RegisterBenchmark("BM_Embedding1GiB", BM_Embedding1GiB)
          ->Args({p, op})
          ->ArgNames({"ps", "op"})
          ->Iterations(200)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  return 0;
}();

}  // namespace
}  // namespace dflow

BENCHMARK_MAIN();
