// Env (files), ThreadPool, Notification and the Status helpers.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "base/env.h"
#include "base/notification.h"
#include "base/status.h"
#include "base/temp_dir.h"
#include "base/threadpool.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

// ---- Env ----

TEST(EnvTest, WriteThenReadRoundTrips) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Env* env = Env::Default();
  const std::string path = dir.File("data.bin");
  std::string contents = "hello\n";
  contents.push_back('\0');  // binary-safe
  contents += std::string(10000, 'x');
  ASSERT_TRUE(env->WriteFileAtomic(path, contents).ok());
  EXPECT_TRUE(env->FileExists(path));
  StatusOr<std::string> read = env->ReadFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, contents);
}

TEST(EnvTest, WriteReplacesAndLeavesNoTemporaryFile) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Env* env = Env::Default();
  const std::string path = dir.File("f.txt");
  ASSERT_TRUE(env->WriteFileAtomic(path, "first version, longer").ok());
  ASSERT_TRUE(env->WriteFileAtomic(path, "second").ok());
  StatusOr<std::string> read = env->ReadFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "second");
  // Only the file itself is left in the directory: the temporary was renamed over it.
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"f.txt"});
}

TEST(EnvTest, EmptyFileRoundTrips) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.File("empty");
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(path, "").ok());
  StatusOr<std::string> read = Env::Default()->ReadFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "");
}

TEST(EnvTest, MissingFileIsNotFound) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.File("no_such_file");
  EXPECT_FALSE(Env::Default()->FileExists(path));
  StatusOr<std::string> read = Env::Default()->ReadFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(read.status().message().find("no_such_file"), absl::string_view::npos) << read.status();
}

TEST(EnvTest, ReadPastMaxBytesIsResourceExhausted) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.File("big");
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(path, std::string(100, 'a')).ok());
  StatusOr<std::string> read = Env::Default()->ReadFile(path, /*max_bytes=*/99);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(read.status().message().find(path), absl::string_view::npos) << read.status();
  // Exactly at the limit is fine.
  StatusOr<std::string> at_limit = Env::Default()->ReadFile(path, /*max_bytes=*/100);
  ASSERT_TRUE(at_limit.ok()) << at_limit.status();
  EXPECT_EQ(at_limit->size(), 100u);
}

TEST(EnvTest, ReadingADirectoryIsAnError) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  StatusOr<std::string> read = Env::Default()->ReadFile(dir.path());
  EXPECT_FALSE(read.ok());
}

TEST(EnvTest, WriteIntoMissingDirectoryFails) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  Status s = Env::Default()->WriteFileAtomic(dir.File("missing_dir/f"), "x");
  EXPECT_FALSE(s.ok());
}

TEST(EnvTest, ConcurrentWritersToOnePathStayAtomic) {
  // Several threads of one process replace the same file while others read it: every write
  // succeeds, and a reader sees one whole version, never a mix or a truncated file.
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.File("shared");
  auto version = [](int k) { return std::string(4096 * (k + 1), static_cast<char>('a' + k)); };
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(path, version(0)).ok());
  constexpr int kWriters = 4, kRounds = 50;
  std::atomic<int> write_errors{0}, bad_reads{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int r = 0; r < kRounds; ++r) {
        if (!Env::Default()->WriteFileAtomic(path, version(w)).ok()) write_errors.fetch_add(1);
      }
    });
  }
  std::thread reader([&] {
    while (!done.load()) {
      StatusOr<std::string> got = Env::Default()->ReadFile(path);
      if (!got.ok() || got->empty()) {
        bad_reads.fetch_add(1);
        continue;
      }
      int k = (*got)[0] - 'a';
      if (k < 0 || k >= kWriters || *got != version(k)) bad_reads.fetch_add(1);
    }
  });
  for (auto& t : threads) t.join();
  done = true;
  reader.join();
  EXPECT_EQ(write_errors.load(), 0);
  EXPECT_EQ(bad_reads.load(), 0);
  StatusOr<std::string> last = Env::Default()->ReadFile(path);
  ASSERT_TRUE(last.ok());
  ASSERT_FALSE(last->empty());
  EXPECT_EQ(*last, version((*last)[0] - 'a'));
}

TEST(EnvTest, NowMicrosAdvances) {
  int64_t a = Env::Default()->NowMicros();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  int64_t b = Env::Default()->NowMicros();
  EXPECT_GT(a, 0);
  EXPECT_GE(b, a);
}

// ---- ThreadPool ----

TEST(ThreadPoolTest, RunsEveryScheduledTask) {
  std::atomic<int> counter{0};
  constexpr int kTasks = 1000;
  {
    ThreadPool pool("test", 4);
    EXPECT_EQ(pool.NumThreads(), 4);
    for (int i = 0; i < kTasks; ++i) pool.Schedule([&counter] { counter.fetch_add(1); });
    // The destructor runs every task already scheduled, then joins.
  }
  EXPECT_EQ(counter.load(), kTasks);
}

TEST(ThreadPoolTest, TasksSeeInPool) {
  ThreadPool pool("test", 2);
  ThreadPool other("other", 1);
  EXPECT_FALSE(pool.InPool());
  std::atomic<int> in_pool{0}, in_other{0};
  Notification done;
  pool.Schedule([&] {
    in_pool = pool.InPool() ? 1 : -1;
    in_other = other.InPool() ? 1 : -1;
    done.Notify();
  });
  ASSERT_TRUE(done.WaitFor(std::chrono::seconds(30)));
  EXPECT_EQ(in_pool.load(), 1);
  EXPECT_EQ(in_other.load(), -1);
}

TEST(ThreadPoolTest, AtLeastOneThread) {
  ThreadPool pool("zero", 0);
  EXPECT_GE(pool.NumThreads(), 1);
  Notification done;
  pool.Schedule([&] { done.Notify(); });
  EXPECT_TRUE(done.WaitFor(std::chrono::seconds(30)));
}

TEST(ThreadPoolTest, TasksMayScheduleMoreTasks) {
  std::atomic<int> counter{0};
  {
    ThreadPool pool("nested", 2);
    for (int i = 0; i < 10; ++i) {
      pool.Schedule([&pool, &counter] {
        counter.fetch_add(1);
        pool.Schedule([&counter] { counter.fetch_add(1); });
      });
    }
  }
  EXPECT_EQ(counter.load(), 20);
}

TEST(ThreadPoolTest, DefaultPoolAndNumCores) {
  EXPECT_GE(NumCores(), 1);
  ThreadPool* d = ThreadPool::Default();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d, ThreadPool::Default());
  EXPECT_EQ(d->NumThreads(), NumCores());
  EXPECT_FALSE(d->InPool());
}

// ---- Notification ----

TEST(NotificationTest, WaitForTimesOutWhenNotNotified) {
  Notification n;
  EXPECT_FALSE(n.HasBeenNotified());
  EXPECT_FALSE(n.WaitFor(std::chrono::milliseconds(5)));
  EXPECT_FALSE(n.HasBeenNotified());
}

TEST(NotificationTest, WaitForReturnsTrueAfterNotify) {
  Notification n;
  n.Notify();
  EXPECT_TRUE(n.HasBeenNotified());
  EXPECT_TRUE(n.WaitFor(std::chrono::microseconds(0)));
  n.Wait();  // returns at once
}

TEST(NotificationTest, NotifyFromAnotherThreadWakesWaiter) {
  Notification n;
  std::thread t([&n] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    n.Notify();
  });
  EXPECT_TRUE(n.WaitFor(std::chrono::seconds(30)));
  t.join();
}

// ---- Status helpers ----

TEST(StatusTest, AnnotateKeepsCodeAndPrependsPrefix) {
  Status s = errors::NotFound("thing ", 42, " missing");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "thing 42 missing");
  Status a = errors::Annotate(s, "while loading: ");
  EXPECT_EQ(a.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(a.message(), "while loading: thing 42 missing");
}

TEST(StatusTest, AnnotateOkStaysOk) { EXPECT_TRUE(errors::Annotate(absl::OkStatus(), "prefix: ").ok()); }

TEST(StatusTest, ErrorHelpersSetTheirCodes) {
  EXPECT_EQ(errors::InvalidArgument("x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(errors::FailedPrecondition("x").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(errors::OutOfRange("x").code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(errors::Internal("x").code(), absl::StatusCode::kInternal);
  EXPECT_EQ(errors::Unimplemented("x").code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(errors::AlreadyExists("x").code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(errors::Unavailable("x").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(errors::Aborted("x").code(), absl::StatusCode::kAborted);
  EXPECT_EQ(errors::DataLoss("x").code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(errors::DeadlineExceeded("x").code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(errors::Cancelled("x").code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(errors::ResourceExhausted("x").code(), absl::StatusCode::kResourceExhausted);
}

Status FailIfNegative(int v) {
  if (v < 0) return errors::InvalidArgument("negative: ", v);
  return absl::OkStatus();
}
StatusOr<int> Double(int v) {
  RETURN_IF_ERROR(FailIfNegative(v));
  return 2 * v;
}
StatusOr<int> Quadruple(int v) {
  ASSIGN_OR_RETURN(int d, Double(v));
  ASSIGN_OR_RETURN(int q, Double(d));
  return q;
}

TEST(StatusTest, MacrosPropagate) {
  StatusOr<int> ok = Quadruple(3);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 12);
  StatusOr<int> bad = Quadruple(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "negative: -1");
}

}  // namespace
}  // namespace dflow
