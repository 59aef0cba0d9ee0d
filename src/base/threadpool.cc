#include "base/threadpool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>

namespace dflow {
namespace {
thread_local const ThreadPool* t_current_pool = nullptr;
std::atomic<int> g_all_cores_claimed{0};
}  // namespace

bool TryClaimAllCores() {
  int expected = 0;
  return g_all_cores_claimed.compare_exchange_strong(expected, 1, std::memory_order_acq_rel);
}

void ReleaseAllCores() { g_all_cores_claimed.store(0, std::memory_order_release); }

namespace {

// One RunShards call, shared with its helper tasks (which may start after the call returned).
struct ShardRun {
  int total = 0;
  const std::function<void(int)>* fn = nullptr;  // valid while a shard is unfinished
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  std::mutex mu;  // with cv: the caller sleeping until done == total
  std::condition_variable cv;
};

// Takes shards until none is left; wakes the caller when this finished the last one.
void RunSomeShards(ShardRun* run) {
  int ran = 0;
  for (int i = run->next.fetch_add(1, std::memory_order_relaxed); i < run->total;
       i = run->next.fetch_add(1, std::memory_order_relaxed)) {
    (*run->fn)(i);
    ++ran;
  }
  if (ran == 0) return;
  if (run->done.fetch_add(ran, std::memory_order_acq_rel) + ran == run->total) {
    // Under the lock, so that a caller between checking `done` and sleeping cannot miss it.
    std::lock_guard<std::mutex> l(run->mu);
    run->cv.notify_all();
  }
}

}  // namespace

void RunShards(int num_shards, const std::function<void(int)>& fn, ThreadPool* pool) {
  if (num_shards <= 0) return;
  if (num_shards == 1) {
    fn(0);
    return;
  }
  if (pool == nullptr) pool = ThreadPool::Default();
  auto run = std::make_shared<ShardRun>();
  run->total = num_shards;
  run->fn = &fn;
  const int helpers = std::min(num_shards - 1, NumCores() - 1);
  for (int h = 0; h < helpers; ++h) {
    pool->Schedule([run] { RunSomeShards(run.get()); });
  }
  RunSomeShards(run.get());
  // Shards a helper took are running now: wait for them, spinning first, since a shard is short
  // and waking this thread would take about as long again.
  SpinUntil([&] { return run->done.load(std::memory_order_acquire) == run->total; },
            std::chrono::steady_clock::now() + std::chrono::microseconds(kIdleSpinMicros));
  std::unique_lock<std::mutex> l(run->mu);
  run->cv.wait(l, [&] { return run->done.load(std::memory_order_acquire) == run->total; });
}

bool SpinUntil(const std::function<bool()>& done, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    for (int i = 0; i < 16; ++i) {
      if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

int NumCores() {
  // Asked by every MatMul: the system call is made once.
  static const int cores = [] {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
      int n = CPU_COUNT(&set);
      if (n > 0) return n;
    }
    unsigned n = std::thread::hardware_concurrency();
    return n > 0 ? static_cast<int>(n) : 1;
  }();
  return cores;
}

ThreadPool::ThreadPool(std::string name, int num_threads) : name_(std::move(name)) {
  if (num_threads < 1) num_threads = 1;
  threads_.reserve(num_threads);
  for (int i = 0; i < num_threads; ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::Schedule(std::function<void()> fn) {
  bool wake;
  {
    std::lock_guard<std::mutex> l(mu_);
    queue_.push_back(std::move(fn));
    const int queued = static_cast<int>(queue_.size());
    queued_.store(queued, std::memory_order_release);
    // Spinning workers will take it: wake a sleeper only for tasks nobody spins for.
    wake = sleeping_ > 0 && queued > spinning_;
  }
  if (wake) cv_.notify_one();
}

bool ThreadPool::InPool() const { return t_current_pool == this; }

void ThreadPool::WorkerLoop() {
  t_current_pool = this;
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    if (queue_.empty() && !stopping_) {
      // Spin (unlocked) for a while for new work, then sleep. spinning_ changes only under mu_,
      // so Schedule never counts on a spinner that has already given up.
      ++spinning_;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(kIdleSpinMicros);
      while (queue_.empty() && !stopping_) {
        l.unlock();
        const bool seen = SpinUntil([this] { return queued_.load(std::memory_order_acquire) > 0; }, deadline);
        l.lock();
        if (!seen) break;  // else another worker may have taken it first: spin on
      }
      --spinning_;
      if (queue_.empty() && !stopping_) {
        ++sleeping_;
        cv_.wait(l, [this] { return stopping_ || !queue_.empty(); });
        --sleeping_;
      }
    }
    if (queue_.empty()) return;  // stopping and drained
    std::function<void()> fn = std::move(queue_.front());
    queue_.pop_front();
    queued_.store(static_cast<int>(queue_.size()), std::memory_order_release);
    l.unlock();
    fn();
    fn = nullptr;  // the task's captures are destroyed unlocked
    l.lock();
  }
}

ThreadPool* ThreadPool::Default() {
  // Leaked on purpose: worker threads may still be finishing a step during static destruction.
  static ThreadPool* pool = new ThreadPool("dflow_compute", NumCores());
  return pool;
}

}  // namespace dflow
