// Synchronous replicas and job completion with real processes on 127.0.0.1: 1 ps (`dflow
// server`) and 3 workers (examples/sync_trainer) with replicas_to_aggregate = 2. Every step
// applies exactly two gradients; a worker killed in the middle does not stop training; when the
// chief reaches the last step every process exits 0. Every wait is bounded.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "base/net.h"
#include "base/temp_dir.h"
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
                                 "--task_index=" + std::to_string(i), "--replicas_to_aggregate=2",
                                 "--last_step=1500"},
        log("worker" + std::to_string(i))));
  }
  // Wait (bounded) until training runs, then kill worker 2 for good.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
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

}  // namespace
}  // namespace dflow
