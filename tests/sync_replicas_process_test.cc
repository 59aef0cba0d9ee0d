// Synchronous replicas and job completion with real processes on 127.0.0.1: 1 ps (`dflow
// server`) and 3 workers (examples/sync_trainer) with replicas_to_aggregate = 2. Every step
// applies exactly two gradients; a worker killed in the middle does not stop training; when the
// chief reaches the last step every process exits 0, also under `dflow launch`, whose default rule
// lets the other tasks go on when a worker other than the chief dies. Every wait is bounded.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "base/net.h"
#include "base/temp_dir.h"
#include "dflow/ops.h"
#include "dflow/session.h"
#include "framework/credentials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_processes.h"
#include "tools/commands.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

// What the chief prints at the end, and the gradients every worker says it sent.
struct Summary {
  int64_t global_step = -1, dropped = -1, held = -1, sent = 0;
  double w = 0;
  int workers = 0;
};

Summary Parse(const std::string& text) {
  Summary s;
  std::regex sent(R"(worker (\d): sent (\d+) gradients)");
  for (std::sregex_iterator it(text.begin(), text.end(), sent), end; it != end; ++it) {
    ++s.workers;
    s.sent += std::stoll((*it)[2]);
  }
  std::smatch m;
  std::regex chief(R"(chief: global step (\d+), w ([0-9.e+-]+), dropped (\d+), held (\d+))");
  if (std::regex_search(text, m, chief)) {
    s.global_step = std::stoll(m[1]);
    s.w = std::stod(m[2]);
    s.dropped = std::stoll(m[3]);
    s.held = std::stoll(m[4]);
  }
  return s;
}

TEST(SyncReplicasProcessTest, EveryStepAppliesTwoGradientsAndEveryProcessExitsZero) {
  std::ostringstream out, err;
  // The ps tasks are told the job is complete and exit 0 by themselves: launch's grace period
  // is not what stops them.
  int code = tools::RunDflowCommand({"launch", "--ps", "1", "--workers", "3", "--timeout", "240", "--",
                                     BinDir() + "/sync_trainer", "--replicas_to_aggregate=2", "--last_step=40"},
                                    out, err);
  ASSERT_EQ(code, 0) << out.str() << err.str();
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("[ps 0] dflow server: the job is complete; stopped"));
  EXPECT_THAT(err.str(), ::testing::Not(HasSubstr("SIGTERM")));
  Summary s = Parse(text);
  EXPECT_EQ(s.workers, 3) << text;
  EXPECT_GE(s.global_step, 40) << text;
  // Each step applied the mean gradient (1) once with learning rate 1.
  EXPECT_EQ(s.w, -static_cast<double>(s.global_step)) << text;
  // Every gradient sent went into exactly one step (two per step), was dropped, or is held.
  EXPECT_EQ(2 * s.global_step + s.dropped + s.held, s.sent) << text;
  EXPECT_GT(s.dropped, 0) << text;  // the backup worker's surplus
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The global step as the ps task at `ps_address` holds it; nullopt while the chief has not
// initialized it or the ps does not answer. A client reads it by name from the server's default
// container, without a part in the job.
std::optional<int64_t> ReadGlobalStep(const std::string& ps_address, const ClusterCredentials& creds) {
  Scope root = Scope::NewRootScope();
  Output global_step = ops::Identity(root, ops::VariableV2(root.WithDevice("/job:ps/task:0").WithOpName("global_step"),
                                                           PartialTensorShape::Scalar(), DT_INT64));
  SessionOptions options;
  options.target = "grpc://" + ps_address;
  options.device_filters = {"/job:ps"};
  options.credentials = creds;
  ClientSession session(root, options);
  RunOptions run_options;
  run_options.timeout_in_ms = 10000;
  auto r = session.Run({}, {global_step}, {}, nullptr, run_options);
  if (!r.ok()) return std::nullopt;
  return (*r)[0].scalar<int64_t>();
}

// Waits (bounded) until the global step at `ps_address` reaches `step`: training is under way.
// The step it read last (nullopt if none).
std::optional<int64_t> WaitForGlobalStep(const std::string& ps_address, const ClusterCredentials& creds, int64_t step,
                                         std::chrono::seconds limit) {
  std::optional<int64_t> seen;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    seen = ReadGlobalStep(ps_address, creds);
    if (seen.has_value() && *seen >= step) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return seen;
}

TEST(SyncReplicasProcessTest, AKilledWorkerDoesNotStopTraining) {
  TempDir dir;
  std::vector<int> ports = PickFreePorts(4).value();
  auto addr = [&](int i) { return "127.0.0.1:" + std::to_string(ports[i]); };
  std::vector<std::string> flags = {"--ps_hosts=" + addr(0),
                                    "--worker_hosts=" + addr(1) + "," + addr(2) + "," + addr(3)};
  auto log = [&](const std::string& name) { return dir.path() + "/" + name + ".log"; };
  ChildProcess ps({BinDir() + "/dflow", "server", flags[0], flags[1], "--job_name=ps", "--task_index=0"}, log("ps"));
  std::vector<std::unique_ptr<ChildProcess>> workers;
  for (int i = 0; i < 3; ++i) {
    workers.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{BinDir() + "/sync_trainer", flags[0], flags[1], "--job_name=worker",
                                 "--task_index=" + std::to_string(i), "--replicas_to_aggregate=2", "--last_step=1500"},
        log("worker" + std::to_string(i))));
  }
  // Wait (bounded) until training runs, then kill worker 2 for good. The client finds the
  // cluster's credentials in the store the ps keeps them in.
  const std::optional<int64_t> step_at_kill = WaitForGlobalStep(addr(0), ClusterCredentials(), 10,
                                                                std::chrono::seconds(60));
  EXPECT_GE(step_at_kill.value_or(-1), 10) << "training did not start\n" << ReadFile(log("worker0"));
  EXPECT_LT(step_at_kill.value_or(0), 1500);
  workers[2]->Signal(SIGKILL);
  // The kill came in the middle: the chief has not finished yet.
  EXPECT_THAT(ReadFile(log("worker0")), ::testing::Not(HasSubstr("chief:")));
  EXPECT_EQ(workers[2]->Wait(10), 128 + SIGKILL);
  std::optional<int> chief = workers[0]->Wait(180);
  std::optional<int> other = workers[1]->Wait(30);
  std::optional<int> ps_code = ps.Wait(30);
  const std::string chief_log = ReadFile(log("worker0"));
  ASSERT_EQ(chief, std::optional<int>(0)) << chief_log;
  EXPECT_EQ(other, std::optional<int>(0)) << ReadFile(log("worker1"));
  EXPECT_EQ(ps_code, std::optional<int>(0)) << ReadFile(log("ps"));
  Summary s = Parse(chief_log);
  EXPECT_GE(s.global_step, 1500) << chief_log;
  EXPECT_EQ(s.w, -static_cast<double>(s.global_step)) << chief_log;
  // The chief waited for the live worker, and not forever for the dead one.
  EXPECT_THAT(chief_log, HasSubstr("chief: 1 of 2 other workers finished")) << chief_log;
  EXPECT_THAT(ReadFile(log("ps")), HasSubstr("the job is complete; stopped"));
}

// What follows `prefix` in `text` up to the first `end`, or "".
std::string Between(const std::string& text, const std::string& prefix, char end) {
  size_t at = text.find(prefix);
  if (at == std::string::npos) return "";
  at += prefix.size();
  size_t stop = text.find(end, at);
  return stop == std::string::npos ? "" : text.substr(at, stop - at);
}

TEST(SyncReplicasProcessTest, UnderLaunchAKilledWorkerIsReportedAndTheJobCompletes) {
  constexpr int64_t kLastStep = 1500;
  SharedText out_text, err_text;
  std::ostream out(&out_text), err(&err_text);
  std::atomic<int> code{-1};
  // The cluster's credentials, so that this test can read the global step as a client.
  TempDir creds_dir;
  const ClusterCredentials creds = GenerateClusterCredentials({}).value();
  ASSERT_TRUE(WriteCredentials(creds, creds_dir.File("c/chief")).ok());
  ASSERT_TRUE(WriteCredentials(creds.WithoutChief(), creds_dir.File("c/member")).ok());
  std::thread launch([&] {
    code = tools::RunDflowCommand({"launch", "--ps", "1", "--workers", "3", "--timeout", "240", "--credentials",
                                   creds_dir.File("c"), "--", BinDir() + "/sync_trainer", "--replicas_to_aggregate=2",
                                   "--last_step=" + std::to_string(kLastStep)},
                                  out, err);
  });
  // The launcher names the ps address and every task's pid as it starts them.
  const bool started =
      err_text.WaitFor([](const std::string& t) { return !Between(t, "started worker 2 (pid ", ')').empty(); }, 60);
  const std::string err_so_far = err_text.str();
  const std::string ps_address = Between(err_so_far, "cluster ps: [", ']');
  const pid_t worker2 = std::atoi(Between(err_so_far, "started worker 2 (pid ", ')').c_str());
  const pid_t chief = std::atoi(Between(err_so_far, "started worker 0 (pid ", ')').c_str());
  EXPECT_TRUE(started && !ps_address.empty() && worker2 > 0) << err_so_far;

  // Wait (bounded) until training runs, then kill worker 2 for good in the middle of it.
  std::optional<int64_t> step_at_kill;
  if (started && worker2 > 0) {
    step_at_kill = WaitForGlobalStep(ps_address, creds.WithoutChief(), 10, std::chrono::seconds(60));
  }
  // A client without the cluster's secret reads nothing: neither in plaintext nor over TLS.
  ClusterCredentials plaintext, no_secret = creds.WithoutChief();
  plaintext.insecure = true;
  no_secret.secret.clear();
  EXPECT_FALSE(ReadGlobalStep(ps_address, plaintext).has_value());
  EXPECT_FALSE(ReadGlobalStep(ps_address, no_secret).has_value());
  const bool killed = step_at_kill.has_value() && *step_at_kill >= 10 && kill(worker2, SIGKILL) == 0;
  const std::string out_at_kill = out_text.str();
  EXPECT_TRUE(killed) << "global step " << step_at_kill.value_or(-1) << "\n" << err_text.str();
  if (!killed && chief > 0) kill(chief, SIGKILL);  // ends the launch now: the chief failed
  EXPECT_LT(step_at_kill.value_or(0), kLastStep);
  EXPECT_THAT(out_at_kill, ::testing::Not(HasSubstr("chief:")));  // the chief had not finished
  EXPECT_TRUE(err_text.WaitFor(
      [](const std::string& t) {
        return absl::StrContains(t, "dflow launch: worker 2 was killed by signal 9 (Killed); the other tasks go on\n");
      },
      30))
      << err_text.str();
  launch.join();  // bounded by --timeout

  const std::string text = out_text.str();
  ASSERT_EQ(code.load(), 0) << text << err_text.str();
  EXPECT_THAT(err_text.str(), HasSubstr("dflow launch: worker 0 (the chief) exited 0: the job is complete\n"));
  EXPECT_THAT(err_text.str(), ::testing::Not(HasSubstr("stopping all tasks")));
  Summary s = Parse(text);
  EXPECT_GE(s.global_step, kLastStep) << text;
  EXPECT_EQ(s.w, -static_cast<double>(s.global_step)) << text;
  EXPECT_THAT(text, ::testing::Not(HasSubstr("[worker 2] worker 2: sent"))) << text;  // it died in its loop
}

}  // namespace
}  // namespace dflow
