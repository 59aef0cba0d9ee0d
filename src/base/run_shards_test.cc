// RunShards: every shard runs exactly once, the call returns only after all of them, and it
// finishes even when no pool thread is free to help. The pool's spinning workers lose no task.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "base/notification.h"
#include "base/threadpool.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

TEST(RunShardsTest, EachShardRunsExactlyOnce) {
  for (int n : {0, 1, 2, 3, 7, 64}) {
    std::vector<std::atomic<int>> runs(n);
    RunShards(n, [&](int i) { runs[i].fetch_add(1); });
    for (int i = 0; i < n; ++i) EXPECT_EQ(runs[i].load(), 1) << "shard " << i << " of " << n;
  }
}

TEST(RunShardsTest, ReturnsOnlyAfterEveryShardFinished) {
  std::atomic<int> finished{0};
  RunShards(8, [&](int) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    finished.fetch_add(1);
  });
  EXPECT_EQ(finished.load(), 8);
}

TEST(RunShardsTest, CallerRunsEverythingWhenThePoolIsBusy) {
  // The pool's only thread is blocked until the shards are done: if RunShards waited for a
  // helper to start, this would never return.
  ThreadPool pool("busy", 1);
  Notification release;
  pool.Schedule([&] { release.Wait(); });
  std::atomic<int> sum{0};
  RunShards(
      16, [&](int i) { sum.fetch_add(i); }, &pool);
  EXPECT_EQ(sum.load(), 15 * 16 / 2);
  release.Notify();
}

TEST(RunShardsTest, NestedInsideAPoolTask) {
  ThreadPool pool("nested", 1);
  Notification done;
  std::atomic<int> count{0};
  pool.Schedule([&] {
    RunShards(
        10, [&](int) { count.fetch_add(1); }, &pool);
    done.Notify();
  });
  ASSERT_TRUE(done.WaitFor(std::chrono::seconds(30)));
  EXPECT_EQ(count.load(), 10);
}

TEST(RunShardsTest, ConcurrentCallers) {
  std::vector<std::thread> callers;
  std::vector<std::atomic<int>> totals(4);
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      for (int rep = 0; rep < 50; ++rep) RunShards(5, [&](int i) { totals[c].fetch_add(i + 1); });
    });
  }
  for (auto& t : callers) t.join();
  for (int c = 0; c < 4; ++c) EXPECT_EQ(totals[c].load(), 50 * 15);
}

// Workers spin for a while before they sleep, and Schedule wakes a sleeper only for tasks no
// spinner will take: tasks scheduled at every spacing around the spin time must all run.
TEST(ThreadPoolSpinTest, TasksScheduledWhileWorkersSpinOrSleepAllRun) {
  ThreadPool pool("spin", 2);
  std::atomic<int> ran{0};
  int scheduled = 0;
  for (int gap_us : {0, 5, 20, kIdleSpinMicros / 2, kIdleSpinMicros, kIdleSpinMicros * 2, 500}) {
    for (int i = 0; i < 20; ++i) {
      for (int burst = 0; burst < (i % 3) + 1; ++burst) {
        pool.Schedule([&] { ran.fetch_add(1); });
        ++scheduled;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(gap_us));
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ran.load() < scheduled && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(ran.load(), scheduled);
}

TEST(ThreadPoolSpinTest, SpinUntilStopsAtTheDeadlineOrWhenDone) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(SpinUntil([] { return false; }, start + std::chrono::microseconds(200)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::microseconds(200));
  int calls = 0;
  EXPECT_TRUE(SpinUntil([&] { return ++calls == 3; }, start + std::chrono::hours(1)));
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace dflow
