// Checkpoints survive a crash at any moment: a child process saves over and over and is killed
// with SIGKILL at random times; after each kill, the checkpoint that the state file names
// restores bit-exactly. The child is this test binary re-executed in its child mode (a fresh
// process, not a fork of one that has threads); it tells the parent when it has saved once, and
// the kill comes at a random time after that.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/env.h"
#include "base/temp_dir.h"
#include "dflow/dflow.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

constexpr char kDirVar[] = "DFLOW_CHECKPOINT_CRASH_DIR";
constexpr char kFdVar[] = "DFLOW_CHECKPOINT_CRASH_FD";  // the child's end of the readiness pipe
constexpr int64_t kElements = 1 << 18;                  // 1 MiB of floats: a kill often lands inside a write

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

// The child: saves step after step into `dir` until killed, or until 60 s pass (exit code 0);
// 1 if a step or a save fails. After its first save it writes one byte to `ready_fd`: the
// parent kills it only once it is inside its loop of saves.
int ChildSavesUntilKilled(const std::string& dir, int ready_fd) {
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
    if (!session.Run({{m.value, ValueAt(step)}}, {m.set}).ok()) return 1;
    if (!saver.Save(session, JoinPath(dir, "model"), step).ok()) return 1;
    if (ready_fd >= 0) {
      const char saved = 's';
      if (write(ready_fd, &saved, 1) != 1) return 1;
      close(ready_fd);
      ready_fd = -1;
    }
  }
  return 0;
}

// The child mode of this binary. LatestCheckpointSurvivesSigkill re-executes the binary with
// DFLOW_CHECKPOINT_CRASH_DIR set; then this environment's SetUp, which gtest runs before the
// first test, runs the child and ends the process, so no test runs in the child (and none is
// skipped in a normal run, where SetUp does nothing).
class ChildMode : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* dir = std::getenv(kDirVar);
    if (dir == nullptr) return;
    const char* fd = std::getenv(kFdVar);
    const int code = ChildSavesUntilKilled(dir, fd != nullptr ? std::atoi(fd) : -1);
    std::fflush(nullptr);
    _exit(code);
  }
};
[[maybe_unused]] ::testing::Environment* const child_mode = ::testing::AddGlobalTestEnvironment(new ChildMode);

TEST(CheckpointCrashTest, LatestCheckpointSurvivesSigkill) {
  // A child that got here would start children of its own.
  ASSERT_EQ(std::getenv(kDirVar), nullptr) << "the child mode did not take over";
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
    // The child's readiness pipe: its write end survives the exec, the read end does not.
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    ASSERT_EQ(fcntl(ready[0], F_SETFD, FD_CLOEXEC), 0);
    // Everything the child needs is made before the fork: the parent has threads.
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    env_strings.push_back(std::string(kDirVar) + "=" + dir.path());
    env_strings.push_back(std::string(kFdVar) + "=" + std::to_string(ready[1]));
    std::vector<char*> envp;
    for (std::string& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    char filter[] = "--gtest_filter=CheckpointCrashTest.LatestCheckpointSurvivesSigkill";
    char* argv[] = {exe, filter, nullptr};
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
      execve(exe, argv, envp.data());
      _exit(127);
    }
    close(ready[1]);
    ASSERT_GT(pid, 0);
    // Wait (bounded) until the child has saved once, then kill it anywhere in its later saves.
    pollfd p = {ready[0], POLLIN, 0};
    const int polled = poll(&p, 1, 60000);
    char byte = 0;
    const bool saved = polled == 1 && read(ready[0], &byte, 1) == 1;
    close(ready[0]);
    if (saved) std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 400));
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(saved) << "round " << round << ": the child did not save within 60 s; it ended with " << status;
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child ended by itself: " << status;

    auto latest = train::LatestCheckpoint(dir.path());
    ASSERT_TRUE(latest.ok()) << "round " << round << ": " << latest.status();
    const int64_t step = std::stoll(latest->substr(latest->rfind('-') + 1));
    EXPECT_GT(step, last_step) << "the child saved a new step before it was killed";
    last_step = step;
    Status s = saver.Restore(session, *latest);
    ASSERT_TRUE(s.ok()) << "round " << round << ", " << *latest << ": " << s;
    auto got = session.Run({m.v.read()});
    ASSERT_TRUE(got.ok());
    Tensor want = ValueAt(step);
    ASSERT_EQ(std::memcmp((*got)[0].raw_data(), want.raw_data(), want.TotalBytes()), 0) << *latest;
    ++restored;
  }
  EXPECT_EQ(restored, 12);
  EXPECT_GE(last_step, 12);
}

}  // namespace
}  // namespace dflow
