// Checkpoints survive a crash at any moment: a child process saves over and over and is killed
// with SIGKILL at random times; after each kill, the checkpoint that the state file names
// restores bit-exactly. The child is this test binary re-executed with one test selected (a fresh
// process, not a fork of one that has threads).
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "base/env.h"
#include "base/temp_dir.h"
#include "dflow/dflow.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

constexpr char kDirVar[] = "DFLOW_CHECKPOINT_CRASH_DIR";
constexpr int64_t kElements = 1 << 18;  // 1 MiB of floats: a kill often lands inside a write

// The value saved at `step`: every element depends on the step, so a mix of two saves shows.
Tensor ValueAt(int64_t step) {
  Tensor t(DT_FLOAT, TensorShape({kElements}));
  float* p = t.data<float>();
  for (int64_t i = 0; i < kElements; ++i) p[i] = static_cast<float>(step * 1000003 + i) * 0.5f;
  return t;
}

struct Model {
  Variable v;
  Output value;
  Output set;
};

Model Build(const Scope& root) {
  Model m;
  m.v = Variable::Create(root.WithOpName("v"), {kElements}, DT_FLOAT, init::Zeros());
  m.value = ops::Placeholder(root.WithOpName("value"), DT_FLOAT);
  m.set = ops::Assign(root.WithOpName("set"), m.v.ref(), m.value);
  return m;
}

// The child: saves step after step into $DFLOW_CHECKPOINT_CRASH_DIR until killed (or 60 s pass).
TEST(CheckpointCrashTest, ChildSavesUntilKilled) {
  const char* dir = std::getenv(kDirVar);
  if (dir == nullptr) GTEST_SKIP() << "run by CheckpointCrashTest.LatestCheckpointSurvivesSigkill";
  Scope root = Scope::NewRootScope();
  Model m = Build(root);
  train::SaverOptions o;
  o.max_to_keep = 2;
  train::Saver saver(root, o);
  ClientSession session(root);
  (void)saver.RecoverLastCheckpoints(dir);
  int64_t step = 0;
  if (auto latest = train::LatestCheckpoint(dir); latest.ok()) {
    step = std::stoll(latest->substr(latest->rfind('-') + 1));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    ++step;
    ASSERT_TRUE(session.Run({{m.value, ValueAt(step)}}, {m.set}).ok());
    ASSERT_TRUE(saver.Save(session, JoinPath(dir, "model"), step).ok());
  }
}

TEST(CheckpointCrashTest, LatestCheckpointSurvivesSigkill) {
  TempDir dir;
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  ASSERT_GT(n, 0);
  exe[n] = '\0';
  std::mt19937 rng(12345);
  Scope root = Scope::NewRootScope();
  Model m = Build(root);
  train::Saver saver(root);
  ClientSession session(root);
  int restored = 0;
  int64_t last_step = 0;
  for (int round = 0; round < 12; ++round) {
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      int devnull = open("/dev/null", O_WRONLY);
      if (devnull >= 0) {
        dup2(devnull, 1);
        dup2(devnull, 2);
      }
      setenv(kDirVar, dir.path().c_str(), 1);
      char filter[] = "--gtest_filter=CheckpointCrashTest.ChildSavesUntilKilled";
      char* argv[] = {exe, filter, nullptr};
      execv(exe, argv);
      _exit(127);
    }
    ASSERT_GT(pid, 0);
    // Long enough for the child to start and save a few times, then anywhere inside a save.
    std::this_thread::sleep_for(std::chrono::milliseconds(300 + rng() % 400));
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child ended by itself: " << status;

    auto latest = train::LatestCheckpoint(dir.path());
    if (!latest.ok()) {
      ASSERT_EQ(latest.status().code(), absl::StatusCode::kNotFound) << latest.status();
      ASSERT_EQ(last_step, 0) << "a checkpoint was named before and is gone: " << latest.status();
      continue;
    }
    const int64_t step = std::stoll(latest->substr(latest->rfind('-') + 1));
    EXPECT_GE(step, last_step);
    last_step = step;
    Status s = saver.Restore(session, *latest);
    ASSERT_TRUE(s.ok()) << "round " << round << ", " << *latest << ": " << s;
    auto got = session.Run({m.v.read()});
    ASSERT_TRUE(got.ok());
    Tensor want = ValueAt(step);
    ASSERT_EQ(std::memcmp((*got)[0].raw_data(), want.raw_data(), want.TotalBytes()), 0) << *latest;
    ++restored;
  }
  EXPECT_GE(restored, 10);
  EXPECT_GT(last_step, 12);
}

}  // namespace
}  // namespace dflow
