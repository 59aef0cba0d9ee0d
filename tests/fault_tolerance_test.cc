// Fault tolerance of MonitoredTrainingSession with real processes on 127.0.0.1: a ps task killed
// (SIGKILL) and restarted on its port, the chief killed and restarted, and training that stops at
// its last step. Every wait is bounded; children die with the test process.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <regex>
#include <sstream>
#include <thread>

#include "base/env.h"
#include "base/net.h"
#include "base/temp_dir.h"
#include "dflow/basic_session_run_hooks.h"
#include "dflow/dflow.h"
#include "dflow/monitored_session.h"
#include "dflow/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_processes.h"
#include "tools/commands.h"

namespace dflow {
namespace {

using Clock = std::chrono::steady_clock;

std::string ReadLog(const std::string& path) {
  auto r = Env::Default()->ReadFile(path);
  return r.ok() ? *r : std::string();
}

// The step of the latest checkpoint in `dir` (-1 when there is none).
int64_t LatestCheckpointStep(const std::string& dir) {
  std::string state = ReadLog(JoinPath(dir, "checkpoint"));
  std::smatch m;
  if (!std::regex_search(state, m, std::regex(R"(model_checkpoint_path: ".*model\.ckpt-(\d+)\")"))) return -1;
  return std::stoll(m[1]);
}

// Waits until the latest checkpoint of `dir` is at least `step`; false after `timeout_s`.
bool WaitForCheckpoint(const std::string& dir, int64_t step, double timeout_s) {
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < deadline) {
    if (LatestCheckpointStep(dir) >= step) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// The global steps at which a worker's sessions started, from its "session N starts at global
// step G" lines.
std::vector<int64_t> SessionStarts(const std::string& log) {
  std::vector<int64_t> r;
  std::regex line(R"(session \d+ starts at global step (\d+))");
  for (std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it) r.push_back(std::stoll((*it)[1]));
  return r;
}

// The final global step from a worker's last line (-1 when missing).
int64_t FinalGlobalStep(const std::string& log) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex(R"(local steps .*global step (\d+), loss)"))) return -1;
  return std::stoll(m[1]);
}

// 1 ps and 2 workers of distributed_trainer, each logging to a file of its own.
struct Cluster {
  explicit Cluster(int64_t last_step) : last_step(last_step) {
    std::vector<int> ports = PickFreePorts(3).value();
    ps_hosts = "--ps_hosts=127.0.0.1:" + std::to_string(ports[0]);
    worker_hosts = "--worker_hosts=127.0.0.1:" + std::to_string(ports[1]) + ",127.0.0.1:" + std::to_string(ports[2]);
    StartPs();
    for (int i = 0; i < 2; ++i) StartWorker(i);
  }
  std::string Log(const std::string& name) const { return JoinPath(dir.path(), name + ".log"); }
  std::string CheckpointDir() const { return JoinPath(dir.path(), "ckpt"); }
  void StartPs() {
    ps = std::make_unique<ChildProcess>(std::vector<std::string>{BinDir() + "/dflow", "server", ps_hosts, worker_hosts,
                                                                 "--job_name=ps", "--task_index=0"},
                                        Log("ps"));
  }
  void StartWorker(int i) {
    workers[i] = std::make_unique<ChildProcess>(
        std::vector<std::string>{BinDir() + "/distributed_trainer", ps_hosts, worker_hosts, "--job_name=worker",
                                 "--task_index=" + std::to_string(i), "--last_step=" + std::to_string(last_step),
                                 "--checkpoint_dir=" + CheckpointDir(), "--save_checkpoint_steps=20",
                                 "--max_wait_secs=60"},
        Log("worker" + std::to_string(i)));
  }
  // Both workers exit 0, then the ps stops on SIGTERM and exits 0.
  void ExpectEveryTaskExitsZero() {
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(workers[i]->Wait(150), 0) << "worker " << i << ":\n" << ReadLog(Log("worker" + std::to_string(i)));
    }
    ps->Signal(SIGTERM);
    EXPECT_EQ(ps->Wait(20), 0) << ReadLog(Log("ps"));
  }

  TempDir dir;
  int64_t last_step;
  std::string ps_hosts, worker_hosts;
  std::unique_ptr<ChildProcess> ps;
  std::unique_ptr<ChildProcess> workers[2];
};

TEST(FaultToleranceTest, WorkersRecoverFromAKilledAndRestartedPs) {
  Cluster c(/*last_step=*/1200);
  ASSERT_TRUE(WaitForCheckpoint(c.CheckpointDir(), 200, 90)) << ReadLog(c.Log("worker0"));
  c.ps->Signal(SIGKILL);
  ASSERT_EQ(c.ps->Wait(10), 128 + SIGKILL);
  // Nothing can be saved while the ps is gone: this is the checkpoint training resumes from.
  const int64_t last_checkpoint = LatestCheckpointStep(c.CheckpointDir());
  c.StartPs();
  c.ExpectEveryTaskExitsZero();
  for (int i = 0; i < 2; ++i) {
    const std::string log = ReadLog(c.Log("worker" + std::to_string(i)));
    std::vector<int64_t> starts = SessionStarts(log);
    // The first session, then at least one after the ps died; none went back past the checkpoint.
    ASSERT_GE(starts.size(), 2u) << log;
    for (size_t k = 1; k < starts.size(); ++k) EXPECT_GE(starts[k], last_checkpoint) << log;
    EXPECT_GE(FinalGlobalStep(log), 1200) << log;
  }
  EXPECT_GE(LatestCheckpointStep(c.CheckpointDir()), 1200);
}

TEST(FaultToleranceTest, AKilledChiefRestartsFromTheLatestCheckpoint) {
  Cluster c(/*last_step=*/1200);
  ASSERT_TRUE(WaitForCheckpoint(c.CheckpointDir(), 200, 90)) << ReadLog(c.Log("worker0"));
  c.workers[0]->Signal(SIGKILL);
  ASSERT_EQ(c.workers[0]->Wait(10), 128 + SIGKILL);
  const int64_t last_checkpoint = LatestCheckpointStep(c.CheckpointDir());
  const size_t before = SessionStarts(ReadLog(c.Log("worker0"))).size();
  c.StartWorker(0);
  c.ExpectEveryTaskExitsZero();
  const std::string log = ReadLog(c.Log("worker0"));
  std::vector<int64_t> starts = SessionStarts(log);
  ASSERT_EQ(starts.size(), before + 1) << log;
  EXPECT_GE(starts.back(), last_checkpoint) << log;  // restored, not initialized from scratch
  EXPECT_GE(FinalGlobalStep(log), 1200) << log;
}

TEST(FaultToleranceTest, EveryTaskStopsAtTheLastStepAndExitsZero) {
  std::ostringstream out, err;
  int code = tools::RunDflowCommand({"launch", "--ps", "1", "--workers", "2", "--timeout", "120", "--",
                                     BinDir() + "/distributed_trainer", "--last_step", "150"},
                                    out, err);
  ASSERT_EQ(code, 0) << out.str() << err.str();
  std::string text = out.str();
  std::regex line(R"(worker (\d): (\d+) local steps .*global step (\d+), loss)");
  int workers = 0;
  int64_t sum = 0, max_global = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), line), end; it != end; ++it) {
    ++workers;
    sum += std::stoll((*it)[2]);
    const int64_t global = std::stoll((*it)[3]);
    if ((*it)[1] == "0") {
      // The chief stopped at 150, or a little past it: steps of the other worker that were
      // already running when the global step reached 150 still count.
      EXPECT_GE(global, 150) << text;
      EXPECT_LE(global, 154) << text;
    }
    // The other worker reports the last step it saw: the chief may have ended the job first.
    max_global = std::max(max_global, global);
  }
  EXPECT_EQ(workers, 2) << text;
  EXPECT_EQ(sum, max_global) << text;  // every step counted once
  EXPECT_THAT(text, ::testing::ContainsRegex("\\[ps 0\\] dflow server: .*stopped"));
}

TEST(FaultToleranceTest, SyncTrainingStopsExactlyAtTheLastStep) {
  TempDir dir;
  std::ostringstream out, err;
  int code = tools::RunDflowCommand({"launch", "--ps", "1", "--workers", "3", "--timeout", "120", "--",
                                     BinDir() + "/distributed_trainer", "--sync", "--replicas_to_aggregate", "2",
                                     "--last_step", "60", "--checkpoint_dir", dir.path(), "--save_checkpoint_steps",
                                     "25"},
                                    out, err);
  ASSERT_EQ(code, 0) << out.str() << err.str();
  std::string text = out.str();
  std::regex line(R"(worker (\d): (\d+) local steps .*global step (\d+), loss)");
  int workers = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), line), end; it != end; ++it) {
    ++workers;
    // The chief stops at 60; its queue runner may apply one more step before the chief's hook
    // stops it. The others report the last step they saw before the job ended.
    if ((*it)[1] == "0") {
      EXPECT_GE(std::stoll((*it)[3]), 60) << text;
    }
    EXPECT_LE(std::stoll((*it)[3]), 61) << text;
  }
  EXPECT_EQ(workers, 3) << text;
  EXPECT_GE(LatestCheckpointStep(dir.path()), 60);
}

// A chief in this process (so that the test can look at its variables) and a ps child process.
TEST(FaultToleranceTest, AfterAPsRestartTheChiefResumesWithExactlyTheCheckpointedValues) {
  TempDir dir;
  std::vector<int> ports = PickFreePorts(2).value();
  const std::string ps_addr = "127.0.0.1:" + std::to_string(ports[0]);
  const std::string worker_addr = "127.0.0.1:" + std::to_string(ports[1]);
  auto start_ps = [&] {
    return std::make_unique<ChildProcess>(std::vector<std::string>{BinDir() + "/dflow", "server",
                                                                   "--ps_hosts=" + ps_addr,
                                                                   "--worker_hosts=" + worker_addr, "--job_name=ps",
                                                                   "--task_index=0"},
                                          JoinPath(dir.path(), "ps.log"));
  };
  std::unique_ptr<ChildProcess> ps = start_ps();
  ServerOptions so;
  so.cluster = ClusterSpec::FromJobs({{"ps", {ps_addr}}, {"worker", {worker_addr}}}).value();
  so.job_name = "worker";
  so.startup_wait_ms = 20000;
  auto server = Server::Create(so);
  ASSERT_TRUE(server.ok()) << server.status();

  Scope root = Scope::NewRootScope();
  Scope ps0 = root.WithDevice("/job:ps/task:0");
  Output global_step = train::CreateGlobalStep(ps0);
  Variable w = Variable::Create(ps0.WithOpName("w"), {64}, DT_FLOAT, init::RandomUniform(-1, 1, 7));
  Output loss = ops::Sum(root, ops::Square(root, w.read()), {0});
  Operation train_op = train::GradientDescentOptimizer(0.01f).Minimize(root, loss, {}, global_step);
  ASSERT_TRUE(root.ok()) << root.status();

  class Snapshot : public train::SessionRunHook {
   public:
    explicit Snapshot(std::vector<Output> v) : v_(std::move(v)) {}
    Status AfterCreateSession(ClientSession* s, train::Coordinator*) override {
      ASSIGN_OR_RETURN(std::vector<Tensor> r, s->Run(v_));
      taken.push_back(std::move(r));
      return absl::OkStatus();
    }
    std::vector<std::vector<Tensor>> taken;
    std::vector<Output> v_;
  };
  auto snapshot = std::make_shared<Snapshot>(std::vector<Output>{w.read(), global_step});
  train::MonitoredTrainingSessionOptions o;
  o.master = (*server)->target();
  o.checkpoint_dir = JoinPath(dir.path(), "ckpt");
  o.save_checkpoint_steps = 7;
  train::SaverOptions keep_all;
  keep_all.sharded = true;
  keep_all.max_to_keep = 0;  // keep model.ckpt-28 to compare
  o.scaffold.saver = train::NewSaver(train::Saver(root, keep_all));
  o.log_step_count_steps = 0;
  o.recovery.initial_backoff_ms = 50;
  o.recovery.max_recovery_attempts = 4;
  // A step that hangs fails the test with an error instead of running into the test timeout.
  o.config.operation_timeout_ms = 20000;
  o.hooks = {std::make_shared<train::StopAtStepHook>(global_step, 0, 60), snapshot};
  auto session = train::MonitoredTrainingSession(root, o);
  ASSERT_TRUE(session.ok()) << session.status();
  int64_t last_checkpoint = -1;
  int steps = 0;
  while (!(*session)->ShouldStop() && steps < 500) {
    auto r = (*session)->Run({}, {global_step}, {train_op});
    ASSERT_TRUE(r.ok()) << r.status();
    ++steps;
    if ((*r)[0].scalar<int64_t>() == 30 && last_checkpoint < 0) {
      ps->Signal(SIGKILL);
      ASSERT_EQ(ps->Wait(10), 128 + SIGKILL);
      last_checkpoint = LatestCheckpointStep(o.checkpoint_dir);
      ps = start_ps();
    }
  }
  auto final_step = (*session)->raw_session()->Run({global_step});
  ASSERT_TRUE(final_step.ok()) << final_step.status();
  EXPECT_EQ((*final_step)[0].scalar<int64_t>(), 60);
  ASSERT_TRUE((*session)->Close().ok());
  EXPECT_EQ(last_checkpoint, 28);
  ASSERT_EQ(snapshot->taken.size(), 2u);
  EXPECT_EQ(snapshot->taken[1][1].scalar<int64_t>(), last_checkpoint);
  // The values the second session started with are the checkpoint's, bit for bit.
  Scope check = Scope::NewRootScope();
  train::CreateGlobalStep(check);
  Variable w2 = Variable::Create(check.WithOpName("w"), {64}, DT_FLOAT);
  auto saver = train::NewSaver(train::Saver(check));
  ClientSession local(check);
  ASSERT_TRUE(saver->Restore(local, JoinPath(o.checkpoint_dir, "model.ckpt-28")).ok());
  auto expected = local.Run({w2.read()});
  ASSERT_TRUE(expected.ok());
  const Tensor& got = snapshot->taken[1][0];
  ASSERT_EQ(got.NumElements(), 64);
  EXPECT_EQ(std::memcmp(got.raw_data(), (*expected)[0].raw_data(), 64 * sizeof(float)), 0);
  // And differ from the values at the start (training happened before the checkpoint).
  EXPECT_NE(std::memcmp(got.raw_data(), snapshot->taken[0][0].raw_data(), 64 * sizeof(float)), 0);
  ps->Signal(SIGTERM);
  EXPECT_EQ(ps->Wait(20), 0);
}

}  // namespace
}  // namespace dflow
