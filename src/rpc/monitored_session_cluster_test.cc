// MonitoredTrainingSession on a server of this process: once that task is told the job is
// complete, a step that fails because the ps task is gone ends training (OutOfRange) instead of
// being recovered from, with no job_complete callback set by the trainer.
#include "base/net.h"
#include "dflow/dflow.h"
#include "dflow/monitored_session.h"
#include "dflow/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

TEST(MonitoredSessionClusterTest, AFailureAfterTheJobCompletedEndsTrainingWithoutACallback) {
  std::vector<int> ports = PickFreePorts(2).value();
  auto addr = [&](int i) { return "127.0.0.1:" + std::to_string(ports[i]); };
  ClusterSpec spec = ClusterSpec::FromJobs({{"ps", {addr(0)}}, {"worker", {addr(1)}}}).value();
  std::vector<std::unique_ptr<Server>> servers;
  for (const char* job : {"ps", "worker"}) {
    ServerOptions o;
    o.cluster = spec;
    o.job_name = job;
    o.startup_wait_ms = 2000;
    auto s = Server::Create(o);
    ASSERT_TRUE(s.ok()) << s.status();
    servers.push_back(std::move(s).value());
  }
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithDevice("/job:ps/task:0").WithOpName("w"), {}, DT_FLOAT, init::Zeros());
  Output step = ops::AssignAdd(root.WithDevice("/job:ps/task:0"), w.ref(), ops::Const(root, 1.0f));
  train::MonitoredTrainingSessionOptions o;
  o.master = servers[1]->target();
  o.is_chief = true;
  o.recovery.max_recovery_attempts = 3;
  o.recovery.initial_backoff_ms = 10;
  o.recovery.max_backoff_ms = 10;
  ASSERT_FALSE(o.recovery.job_complete);  // nothing set by the trainer
  auto session = train::MonitoredTrainingSession(root, o);
  ASSERT_TRUE(session.ok()) << session.status();
  auto r = (*session)->Run({step});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 1.0f);
  // The ps task goes away, then the worker's task is told the job is complete.
  servers[0]->Stop();
  JobCompleteOptions jc;
  jc.drain_ms = 100;
  jc.retry_ms = 0;
  ASSERT_TRUE(servers[1]->NotifyJobComplete(jc).ok());
  ASSERT_TRUE(servers[1]->job_complete());
  // Its server drains (100 ms) and stops: the next step fails with Unavailable, as when the
  // tasks it needs are gone, not with the OutOfRange a draining task answers.
  servers[1]->Join();
  auto after = (*session)->Run({step});
  ASSERT_FALSE(after.ok());
  EXPECT_TRUE(absl::IsOutOfRange(after.status())) << after.status();
  EXPECT_TRUE((*session)->ShouldStop());
}

}  // namespace
}  // namespace dflow
