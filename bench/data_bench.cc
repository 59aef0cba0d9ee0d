// Input pipeline throughput: a CSV file of Iris-like rows (4 floats and an int label, 32 MiB)
// read through a session, in MB/s of file bytes. There is no PyTorch peer: PyTorch has no CSV
// reader of its own (its DataLoader wraps whatever Python code parses the file), so the figure
// stands alone.
//   build/bin/data_bench --benchmark_min_time=2
//  - BM_TextLineBatched: TextLineDataset -> Batch(1024): reading and splitting lines only;
//  - BM_CsvDataset: CSVDataset(header) -> Batch(1024) -> Prefetch(2): the parsed pipeline;
//  - BM_DecodeCsvBatched: TextLine -> Batch(1024) -> Map(DecodeCSV) -> Prefetch(2), the
//    vectorized form TensorFlow's guide recommends.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <string>

#include "bench/bench_util.h"
#include "dflow/dflow.h"

namespace dflow {
namespace {

constexpr int64_t kTargetBytes = int64_t{32} << 20;

const std::string& CsvFile(int64_t* bytes) {
  static std::string path;
  static int64_t size = 0;
  if (path.empty()) {
    path = "/tmp/dflow_data_bench_" + std::to_string(::getpid()) + ".csv";
    std::string text = "rows,4,setosa,versicolor,virginica\n";
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(0.1f, 8.0f);
    char line[128];
    while (static_cast<int64_t>(text.size()) < kTargetBytes) {
      int n = std::snprintf(line, sizeof(line), "%.1f,%.1f,%.1f,%.1f,%d\n", u(rng), u(rng), u(rng), u(rng),
                            static_cast<int>(rng() % 3));
      text.append(line, n);
    }
    Status s = bench::WriteWholeFile(path, text);
    if (!s.ok()) std::fprintf(stderr, "cannot write %s: %s\n", path.c_str(), std::string(s.message()).c_str());
    size = static_cast<int64_t>(text.size());
    std::atexit([] { std::remove(path.c_str()); });
  }
  *bytes = size;
  return path;
}

// Drains `ds` once per iteration through an initializable iterator.
void Run(benchmark::State& state, const Scope& root, const data::Dataset& ds, int64_t bytes) {
  data::Iterator it = ds.MakeInitializableIterator();
  data::Element next = it.GetNext();
  if (!root.ok()) {
    state.SkipWithError(std::string(root.status().message()).c_str());
    return;
  }
  ClientSession session(root);
  int64_t rows = 0;
  for (auto _ : state) {
    if (!session.Run({it.initializer()}).ok()) {
      state.SkipWithError("initializer failed");
      return;
    }
    while (true) {
      auto r = session.Run({next[0]});
      if (!r.ok()) {
        if (!absl::IsOutOfRange(r.status())) state.SkipWithError(std::string(r.status().message()).c_str());
        break;
      }
      rows += (*r)[0].NumElements();
    }
  }
  state.SetBytesProcessed(bytes * state.iterations());
  state.counters["rows_per_s"] = benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
}

void BM_TextLineBatched(benchmark::State& state) {
  int64_t bytes;
  const std::string& path = CsvFile(&bytes);
  Scope root = Scope::NewRootScope();
  Run(state, root, data::Dataset::TextLine(root, path).Batch(1024), bytes);
}
BENCHMARK(BM_TextLineBatched)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CsvDataset(benchmark::State& state) {
  int64_t bytes;
  const std::string& path = CsvFile(&bytes);
  Scope root = Scope::NewRootScope();
  data::CsvOptions o;
  o.header = true;
  Run(state, root, data::Dataset::Csv(root, path, {0.0f, 0.0f, 0.0f, 0.0f, 0}, o).Batch(1024).Prefetch(2), bytes);
}
BENCHMARK(BM_CsvDataset)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DecodeCsvBatched(benchmark::State& state) {
  int64_t bytes;
  const std::string& path = CsvFile(&bytes);
  Scope root = Scope::NewRootScope();
  data::Dataset ds = data::Dataset::TextLine(root, path)
                         .Skip(1)
                         .Batch(1024)
                         .Map([](const Scope& s, const std::vector<Output>& x) {
                           return data::DecodeCsv(s, x[0], {0.0f, 0.0f, 0.0f, 0.0f, 0});
                         })
                         .Prefetch(2);
  Run(state, root, ds, bytes);
}
BENCHMARK(BM_DecodeCsvBatched)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace dflow

BENCHMARK_MAIN();
