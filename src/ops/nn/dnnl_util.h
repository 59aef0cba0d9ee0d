// What the oneDNN-backed NN kernels share: the CPU engine, the OpenMP thread budget and a
// per-kernel cache of primitives.
//
// One owner of the cores: the executor keeps a thread per core busy, so a primitive runs on one
// OpenMP thread. When its work is large and nobody else holds the process-wide claim on all
// cores (a big MatMul takes it too: ops/matrix/gemm.h), a convolution or pooling call is cut
// along its batch into pieces that the executor's pool runs (BatchShards); other kernels
// (DnnlThreads) then get an OpenMP team of every core. omp_set_num_threads only
// affects the calling thread's next parallel regions. Some oneDNN implementations fix their
// thread partitioning when the primitive is created, so the thread count is part of each cache
// key and the count is set before a primitive is created and before it runs.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace dflow {

// The process's oneDNN CPU engine (created on first use; thread-safe).
const dnnl::engine& CpuEngine();

// Claims the OpenMP threads for one primitive (see above) and restores nothing on exit but the
// claim: the caller's next OpenMP use sets its own count.
class DnnlThreads {
 public:
  explicit DnnlThreads(int64_t work);
  ~DnnlThreads();
  DnnlThreads(const DnnlThreads&) = delete;
  DnnlThreads& operator=(const DnnlThreads&) = delete;
  int threads() const { return threads_; }

 private:
  bool parallel_ = false;
  int threads_ = 1;
};

// Cuts a call along its batch for the cores, the way gemm.h cuts a big product: when the work is
// big and this caller gets the process-wide claim on all cores, the batch is cut into up to
// kShardsPerCore * NumCores() equal pieces that RunShards hands to the executor's pool (a helper
// busy elsewhere takes fewer, nobody waits for a descheduled thread), each run by a
// single-threaded primitive for that piece's batch; otherwise one piece, on this thread. An
// OpenMP team instead fixes its partition up front, so a member that is preempted (by the other
// op the executor runs meanwhile, or another process) stalls the whole call at its barrier.
// Measured here (oneDNN 2.6, one thread, 5x5 SAME convolution 14x14x32 -> 64): batch 16 runs at
// the same speed per image as batch 64, so the cut costs nothing.
class BatchShards {
 public:
  static constexpr int kShardsPerCore = 2;
  BatchShards(int64_t work, int64_t batch);
  ~BatchShards();
  BatchShards(const BatchShards&) = delete;
  BatchShards& operator=(const BatchShards&) = delete;

  int count() const { return count_; }
  int64_t begin(int i) const { return i * step_; }
  int64_t size(int i) const { return std::min(step_, batch_ - i * step_); }
  // Runs fn(i) for every piece (concurrently when there are several), each on a thread set to
  // one OpenMP thread; an exception from any piece is rethrown here once all have finished.
  void Run(const std::function<void(int)>& fn) const;

 private:
  int64_t batch_;
  int64_t step_;
  int count_ = 1;
  bool claimed_ = false;
};

// Primitives (or any value) keyed by a vector of ints — shapes, geometry, thread count — built on
// first use. Thread-safe; values are shared and stay alive while a caller uses them. Bounded: it
// is cleared when it holds kMaxEntries (a kernel seeing ever-new shapes cannot grow it forever).
template <typename V>
class PrimitiveCache {
 public:
  static constexpr size_t kMaxEntries = 64;
  using Key = std::vector<int64_t>;

  // The cached value for `key`, or the one `make` builds (it may throw dnnl::error, which
  // propagates and caches nothing).
  std::shared_ptr<const V> GetOrCreate(const Key& key, const std::function<V()>& make) {
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end()) return it->second;
    }
    auto v = std::make_shared<const V>(make());  // outside the lock: creation can take milliseconds
    std::lock_guard<std::mutex> l(mu_);
    if (entries_.size() >= kMaxEntries) entries_.clear();
    return entries_.emplace(key, std::move(v)).first->second;
  }

 private:
  std::mutex mu_;
  std::map<Key, std::shared_ptr<const V>> entries_;
};

// A created primitive with what running it needs: the layouts its primitive descriptor chose
// for its tensor arguments (where they may differ from the caller's, e.g. blocked weights), the
// descriptors of its user-managed scratchpad (allocated per run, so concurrent runs of one
// primitive share nothing) and, for max pooling trained forward, of its workspace.
struct DnnlPrimitive {
  dnnl::primitive prim;
  std::unordered_map<int, dnnl::memory::desc> arg_descs;
  dnnl::memory::desc scratchpad;
  dnnl::memory::desc workspace;
};

// The attrs every NN primitive is created with: a user-managed scratchpad.
dnnl::primitive_attr DnnlAttr();

// Runs `p` on a fresh stream with `args` (the caller's memories, plus the scratchpad) and waits.
// An argument whose layout differs from p.arg_descs is reordered into a temporary first (inputs)
// or from one afterwards (outputs: DST, DIFF_SRC, DIFF_WEIGHTS).
void ExecuteDnnl(const DnnlPrimitive& p, std::unordered_map<int, dnnl::memory> args);

// Wraps a user buffer (not owned) as oneDNN memory.
inline dnnl::memory UserMemory(const dnnl::memory::desc& md, const void* data) {
  return dnnl::memory(md, CpuEngine(), const_cast<void*>(data));
}

// Runs `fn` (which uses oneDNN) and turns a dnnl::error into Internal naming `what`. Counts the
// successful runs for tests (DnnlRunsForTesting).
Status RunDnnl(const char* what, const std::function<void()>& fn);
int64_t DnnlRunsForTesting();

}  // namespace dflow
