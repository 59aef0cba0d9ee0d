// Clusters of real processes on 127.0.0.1: `dflow server` tasks started as children, a task
// killed (SIGKILL) or frozen (SIGSTOP) in the middle of training, and the distributed_trainer
// example under `dflow launch`. Every wait is bounded.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "base/net.h"
#include "dflow/dflow.h"
#include "dflow/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_processes.h"
#include "tools/commands.h"

namespace dflow {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

struct PsAndWorker {
  PsAndWorker() {
    std::vector<int> ports = PickFreePorts(2).value();
    ps_addr = "127.0.0.1:" + std::to_string(ports[0]);
    worker_addr = "127.0.0.1:" + std::to_string(ports[1]);
    ps = std::make_unique<ChildProcess>(std::vector<std::string>{BinDir() + "/dflow", "server", "--ps_hosts=" + ps_addr,
                                                                 "--worker_hosts=" + worker_addr, "--job_name=ps",
                                                                 "--task_index=0"});
    ServerOptions o;
    o.cluster = ClusterSpec::FromJobs({{"ps", {ps_addr}}, {"worker", {worker_addr}}}).value();
    o.job_name = "worker";
    o.startup_wait_ms = 20000;
    auto s = Server::Create(o);
    EXPECT_TRUE(s.ok()) << s.status();
    if (s.ok()) worker = std::move(s).value();
  }
  std::string ps_addr, worker_addr;
  std::unique_ptr<ChildProcess> ps;
  std::unique_ptr<Server> worker;
};

// A training step on a variable held by the ps task.
struct Model {
  explicit Model(const Scope& root) {
    w = Variable::Create(root.WithDevice("/job:ps/task:0").WithOpName("w"), {4}, DT_FLOAT, init::Constant(1.0));
    Output loss = ops::Sum(root, ops::Square(root, w.read()), {0});
    step = train::GradientDescentOptimizer(0.01f).Minimize(root, loss);
    init = GlobalVariablesInitializer(root);
  }
  Variable w;
  Operation step, init;
};

TEST(ClusterProcessTest, AKilledPsFailsTheStepInsteadOfHanging) {
  PsAndWorker c;
  ASSERT_NE(c.worker, nullptr);
  Scope root = Scope::NewRootScope();
  Model m(root);
  ClientSession session(root, c.worker->target());
  ASSERT_TRUE(session.Run({m.init}).ok());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(session.Run({m.step}).ok());
  auto before = session.Run({m.w.read()});
  ASSERT_TRUE(before.ok());
  EXPECT_LT((*before)[0].flat<float>()[0], 1.0f);
  c.ps->Signal(SIGKILL);
  auto start = std::chrono::steady_clock::now();
  Status s = session.Run({m.step});
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_THAT(s.code(), AnyOf(absl::StatusCode::kUnavailable, absl::StatusCode::kAborted)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("/job:ps/replica:0/task:0"));
  EXPECT_LT(secs, 10.0);
}

TEST(ClusterProcessTest, AFrozenPsEndsTheStepAtItsDeadline) {
  PsAndWorker c;
  ASSERT_NE(c.worker, nullptr);
  Scope root = Scope::NewRootScope();
  Model m(root);
  ClientSession session(root, c.worker->target());
  ASSERT_TRUE(session.Run({m.init}).ok());
  ASSERT_TRUE(session.Run({m.step}).ok());  // registered before the freeze
  ASSERT_TRUE(session.Run({m.w.read()}).ok());
  ASSERT_TRUE(c.ps->Freeze(10));
  RunOptions o;
  o.timeout_in_ms = 1000;
  auto start = std::chrono::steady_clock::now();
  auto r = session.Run({}, {}, {m.step}, nullptr, o);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_THAT(r.status().code(), AnyOf(absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kUnavailable))
      << r.status();
  EXPECT_LT(secs, 5.0);
  // A read of the frozen task's variable (its partition runs first, on the master's thread).
  start = std::chrono::steady_clock::now();
  auto read = session.Run({}, {m.w.read()}, {}, nullptr, o);
  secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_THAT(read.status().code(), AnyOf(absl::StatusCode::kDeadlineExceeded, absl::StatusCode::kUnavailable))
      << read.status();
  EXPECT_LT(secs, 5.0);
  c.ps->Thaw();
}

TEST(ClusterProcessTest, DistributedTrainerUnderLaunch) {
  std::ostringstream out, err;
  int code = tools::RunDflowCommand({"launch", "--ps", "2", "--workers", "2", "--timeout", "240", "--",
                                     BinDir() + "/distributed_trainer", "--train_steps", "400"},
                                    out, err);
  ASSERT_EQ(code, 0) << out.str() << err.str();
  // "worker 1: 190 local steps (...), global step 400, loss 0.4 -> 0.01"
  std::regex line(R"(worker (\d): (\d+) local steps .*global step (\d+), loss ([0-9.e+-]+) -> ([0-9.e+-]+))");
  std::string text = out.str();
  int64_t sum = 0, max_global = 0;
  int workers = 0;
  // A worker that starts late sees a model the other one already trained, so the untrained loss
  // is the largest first loss; every final loss must be far below it.
  double untrained = 0, worst_final = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), line), end; it != end; ++it) {
    ++workers;
    sum += std::stoll((*it)[2]);
    max_global = std::max<int64_t>(max_global, std::stoll((*it)[3]));
    untrained = std::max(untrained, std::stod((*it)[4]));
    worst_final = std::max(worst_final, std::stod((*it)[5]));
  }
  EXPECT_EQ(workers, 2) << text;
  EXPECT_LT(worst_final, untrained * 0.05) << text;
  EXPECT_GE(max_global, 400);
  EXPECT_EQ(max_global, sum) << text;
}

}  // namespace
}  // namespace dflow
