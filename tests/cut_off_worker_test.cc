// A worker cut off from its cluster while the job completes (real processes on 127.0.0.1, every
// link of worker 1 through a DelayProxy that the test cuts and heals): once its links are back it
// learns the job is over and exits 0, as every other task does. Every wait is bounded.
#include <signal.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "base/net.h"
#include "base/temp_dir.h"
#include "framework/credentials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/delay_proxy.h"
#include "tests/test_processes.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Polls the log until it holds `text` (the child writes it; there is no other signal to block
// on), at most `seconds`.
bool WaitForLog(const std::string& path, const std::string& text, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (ReadFile(path).find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

TEST(CutOffWorkerTest, LearnsTheJobCompletedWhenItsLinksComeBack) {
  TempDir dir;
  std::vector<int> ports = PickFreePorts(3).value();  // ps, worker 0 (the chief), worker 1
  DelayProxy to_ps(ports[0], 0), to_chief(ports[1], 0), to_w1(ports[2], 0);
  ASSERT_TRUE(to_ps.port() != 0 && to_chief.port() != 0 && to_w1.port() != 0);
  auto addr = [](int port) { return "127.0.0.1:" + std::to_string(port); };
  // The ps and the chief reach worker 1 through its proxy; worker 1 reaches them through theirs.
  std::vector<std::string> main_side = {"--ps_hosts=" + addr(ports[0]),
                                        "--worker_hosts=" + addr(ports[1]) + "," + addr(to_w1.port())};
  std::vector<std::string> cut_side = {"--ps_hosts=" + addr(to_ps.port()),
                                       "--worker_hosts=" + addr(to_chief.port()) + "," + addr(ports[2])};
  auto log = [&](const std::string& name) { return dir.path() + "/" + name + ".log"; };
  auto trainer = [&](const std::vector<std::string>& hosts, int index) {
    return std::vector<std::string>{
        BinDir() + "/distributed_trainer",       hosts[0],          hosts[1], "--job_name=worker",
        "--task_index=" + std::to_string(index), "--last_step=6000"};
  };
  // The two sides see different cluster specs (the other side through the proxies), so the
  // tasks are given the cluster's credentials, the chief's copy with the chief's secret.
  const ClusterCredentials creds = GenerateClusterCredentials({}).value();
  ASSERT_TRUE(WriteCredentials(creds, dir.File("chief")).ok());
  ASSERT_TRUE(WriteCredentials(creds.WithoutChief(), dir.File("member")).ok());
  ::setenv(kCredentialsEnv, dir.File("member").c_str(), 1);
  ChildProcess ps({BinDir() + "/dflow", "server", main_side[0], main_side[1], "--job_name=ps", "--task_index=0"},
                  log("ps"));
  ::setenv(kCredentialsEnv, dir.File("chief").c_str(), 1);
  ChildProcess chief(trainer(main_side, 0), log("worker0"));
  ::setenv(kCredentialsEnv, dir.File("member").c_str(), 1);
  ChildProcess worker1(trainer(cut_side, 1), log("worker1"));
  ::unsetenv(kCredentialsEnv);

  // Worker 1 has its training session; then its links are cut while the chief goes on to the
  // last step (worker 1's step in flight fails when keepalive pings go unanswered).
  ASSERT_TRUE(WaitForLog(log("worker1"), "worker 1: session 1 starts", 60)) << ReadFile(log("worker1"));
  to_ps.SetCut(true);
  to_chief.SetCut(true);
  to_w1.SetCut(true);
  // The chief finished and told the ps (which exits 0), but could not tell worker 1.
  std::optional<int> ps_code = ps.Wait(120);
  ASSERT_EQ(ps_code, std::optional<int>(0)) << ReadFile(log("ps")) << ReadFile(log("worker0"));
  EXPECT_THAT(ReadFile(log("worker1")), Not(HasSubstr("local steps")));
  ASSERT_TRUE(WaitForLog(log("worker0"), "was not told yet", 30)) << ReadFile(log("worker0"));
  // The links come back: worker 1 learns the job is over and ends like the others.
  to_ps.SetCut(false);
  to_chief.SetCut(false);
  to_w1.SetCut(false);
  std::optional<int> w1_code = worker1.Wait(60);
  std::optional<int> chief_code = chief.Wait(60);
  const std::string w1_log = ReadFile(log("worker1")), chief_log = ReadFile(log("worker0"));
  EXPECT_EQ(w1_code, std::optional<int>(0)) << w1_log;
  EXPECT_EQ(chief_code, std::optional<int>(0)) << chief_log;
  EXPECT_THAT(w1_log, HasSubstr("the job is complete")) << w1_log;
  EXPECT_THAT(w1_log, HasSubstr("worker 1: ")) << w1_log;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(chief_log, m, std::regex(R"(worker 0: \d+ local steps .*, global step (\d+))")))
      << chief_log;
  EXPECT_GE(std::stoll(m[1]), 6000) << chief_log;
}

}  // namespace
}  // namespace dflow
