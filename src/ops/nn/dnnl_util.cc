#include "ops/nn/dnnl_util.h"

#include <omp.h>

#include <exception>
#include <mutex>
#include <utility>
#include <vector>

#include "base/threadpool.h"

namespace dflow {
namespace {

// Below this many multiply-adds a primitive stays on one thread.
constexpr int64_t kMultiThreadedWork = int64_t{1} << 18;

std::atomic<int64_t> g_dnnl_runs{0};

}  // namespace

const dnnl::engine& CpuEngine() {
  static const dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

DnnlThreads::DnnlThreads(int64_t work) {
  if (work >= kMultiThreadedWork && NumCores() > 1) {
    parallel_ = TryClaimAllCores();
  }
  threads_ = parallel_ ? NumCores() : 1;
  omp_set_num_threads(threads_);
}

DnnlThreads::~DnnlThreads() {
  if (parallel_) ReleaseAllCores();
}

BatchShards::BatchShards(int64_t work, int64_t batch) : batch_(batch), step_(batch) {
  // Primitives created on this thread before Run (and cached) plan for one thread: some oneDNN
  // implementations fix their thread count when created and then open a team of that size.
  omp_set_num_threads(1);
  const int cores = NumCores();
  if (work >= kMultiThreadedWork && cores > 1 && batch > 1 && TryClaimAllCores()) {
    claimed_ = true;
    const int64_t want = std::min<int64_t>(batch, int64_t{kShardsPerCore} * cores);
    step_ = (batch + want - 1) / want;
    count_ = static_cast<int>((batch + step_ - 1) / step_);
  }
}

BatchShards::~BatchShards() {
  if (claimed_) ReleaseAllCores();
}

void BatchShards::Run(const std::function<void(int)>& fn) const {
  if (count_ == 1) {
    omp_set_num_threads(1);
    fn(0);
    return;
  }
  std::mutex mu;
  std::exception_ptr error;
  RunShards(count_, [&](int i) {
    omp_set_num_threads(1);  // this thread's OpenMP regions only
    try {
      fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> l(mu);
      if (!error) error = std::current_exception();
    }
  });
  if (error) std::rethrow_exception(error);
}

dnnl::primitive_attr DnnlAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void ExecuteDnnl(const DnnlPrimitive& p, std::unordered_map<int, dnnl::memory> args) {
  dnnl::stream s(CpuEngine());
  std::vector<std::pair<dnnl::memory, dnnl::memory>> outputs;  // (primitive's, caller's)
  for (auto& [arg, mem] : args) {
    auto want = p.arg_descs.find(arg);
    if (want == p.arg_descs.end() || want->second == mem.get_desc()) continue;
    dnnl::memory tmp(want->second, CpuEngine());
    const bool is_output = arg == DNNL_ARG_DST || arg == DNNL_ARG_DIFF_SRC || arg == DNNL_ARG_DIFF_WEIGHTS;
    if (is_output) {
      outputs.emplace_back(tmp, mem);
    } else {
      dnnl::reorder(mem, tmp).execute(s, mem, tmp);
    }
    mem = tmp;
  }
  dnnl::memory scratch;
  if (p.scratchpad.get_size() > 0) {
    scratch = dnnl::memory(p.scratchpad, CpuEngine());
    args.emplace(DNNL_ARG_SCRATCHPAD, scratch);
  }
  p.prim.execute(s, args);
  for (auto& [from, to] : outputs) dnnl::reorder(from, to).execute(s, from, to);
  s.wait();
}

Status RunDnnl(const char* what, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const dnnl::error& e) {
    return errors::Internal("oneDNN ", what, " failed: ", e.what(), " (status ", static_cast<int>(e.status), ")");
  } catch (const std::exception& e) {  // std::bad_alloc from a scratchpad or workspace
    return errors::Internal("oneDNN ", what, " failed: ", e.what());
  }
  g_dnnl_runs.fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

int64_t DnnlRunsForTesting() { return g_dnnl_runs.load(std::memory_order_relaxed); }

}  // namespace dflow
