// A fixed-size pool of worker threads fed from one FIFO queue.
//
// A worker that runs out of work spins for a short while (kIdleSpinMicros) before it sleeps:
// waking a sleeping thread costs tens of microseconds on a virtual machine (measured here:
// ~45 us from Schedule to the task starting), which is as long as many nodes run, and a step
// hands work between threads many times.
//
// The pool is the single owner of the cores for graph execution: the executor schedules ready
// nodes here, and math kernels that want more threads split their work into shards that the
// pool's threads help with (RunShards, below) instead of starting threads of their own.
// Thread-safe. The destructor runs every task already scheduled, then joins.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dflow {

class ThreadPool {
 public:
  ThreadPool(std::string name, int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Schedule(std::function<void()> fn);
  int NumThreads() const { return static_cast<int>(threads_.size()); }
  // True when called from one of this pool's threads.
  bool InPool() const;

  // The process-wide pool that runs graph steps: one thread per core.
  static ThreadPool* Default();

 private:
  void WorkerLoop();

  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  int sleeping_ = 0;                         // workers waiting on cv_; guarded by mu_
  int spinning_ = 0;                         // workers spinning for work; guarded by mu_
  std::atomic<int> queued_{0};               // queue_.size(), for spinning workers to watch
  std::vector<std::thread> threads_;
};

// Number of hardware threads this process may use (sched affinity when first asked), at least 1.
int NumCores();

// How long an idle worker, or a RunShards caller waiting for its helpers, spins before it sleeps.
constexpr int kIdleSpinMicros = 50;

// Spins (pausing the core) until done() or the deadline; returns done().
bool SpinUntil(const std::function<bool()>& done, std::chrono::steady_clock::time_point deadline);

// The one process-wide claim on all cores for a multi-threaded math call (a big MatMul, a big
// convolution): true if this caller got it, and must then ReleaseAllCores(). Everyone else
// runs single-threaded meanwhile, so math threads never oversubscribe the cores.
bool TryClaimAllCores();
void ReleaseAllCores();

// Runs fn(0), ..., fn(num_shards - 1), each exactly once, and returns when all have returned.
// The calling thread runs shards itself, and up to NumCores() - 1 helper tasks on `pool`
// (ThreadPool::Default() when null) take the others as they come free: shards are handed out
// one at a time, so a helper whose thread is busy elsewhere simply takes fewer (or none), and the
// caller never waits for a helper that has not started (no deadlock when called from a pool
// thread, and no convoy behind a preempted thread). `fn` runs concurrently on different shards.
void RunShards(int num_shards, const std::function<void(int)>& fn, ThreadPool* pool = nullptr);

}  // namespace dflow
