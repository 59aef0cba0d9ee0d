// Sessions on a server of their own process reach its master directly (LocalMaster); sessions
// asked to use the RPC path, and sessions on other processes' servers, use the MasterService.
#include <chrono>
#include <thread>

#include "base/net.h"
#include "dflow/dflow.h"
#include "dflow/server.h"
#include "distributed/local_master.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/executor_test_util.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

SessionOptions Options(const std::string& target, bool direct) {
  SessionOptions o;
  o.target = target;
  o.direct_to_local_master = direct;
  return o;
}

TEST(LocalMasterTest, FoundByLoopbackNamesAndPortOnly) {
  auto server = Server::CreateLocalServer();
  ASSERT_TRUE(server.ok()) << server.status();
  int port = (*server)->port();
  EXPECT_NE(LocalMaster::Find("localhost", port), nullptr);
  EXPECT_NE(LocalMaster::Find("127.0.0.1", port), nullptr);
  EXPECT_EQ(LocalMaster::Find("10.1.2.3", port), nullptr);  // another machine's server
  std::vector<int> free = PickFreePorts(1).value();
  EXPECT_EQ(LocalMaster::Find("localhost", free[0]), nullptr);
  (*server)->Stop();
  EXPECT_EQ(LocalMaster::Find("localhost", port), nullptr);
}

TEST(LocalMasterTest, DirectAndRpcPathsGiveTheSameResultsAndShareVariables) {
  std::vector<int> ports = PickFreePorts(2).value();
  ClusterSpec spec = ClusterSpec::FromJobs({{"ps", {"127.0.0.1:" + std::to_string(ports[0])}},
                                            {"worker", {"127.0.0.1:" + std::to_string(ports[1])}}})
                         .value();
  std::vector<std::unique_ptr<Server>> servers;
  for (const char* job : {"ps", "worker"}) {
    ServerOptions o;
    o.cluster = spec;
    o.job_name = job;
    servers.push_back(Server::Create(o).value());
  }
  Scope root = Scope::NewRootScope();
  Variable v = Variable::Create(root.WithDevice("/job:ps/task:0").WithOpName("v"), {2}, DT_FLOAT, init::Constant(1.0));
  Output bump = ops::AssignAdd(root, v.ref(), ops::Const(root, {1.0f, 2.0f}));
  Output doubled = ops::Mul(root.WithDevice("/job:worker/task:0"), v.read(), 2.0f);
  Operation init = GlobalVariablesInitializer(root);
  std::string target = servers[1]->target();
  ClientSession direct(root, Options(target, true));
  ClientSession rpc(root, Options(target, false));
  ASSERT_TRUE(direct.Run({init}).ok());
  ASSERT_TRUE(rpc.Run({bump}).ok());  // [2, 3]
  auto a = direct.Run({doubled});     // sees the RPC session's update
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)[0].flat<float>()[0], 4.0f);
  EXPECT_EQ((*a)[0].flat<float>()[1], 6.0f);
  ASSERT_TRUE(direct.Run({bump}).ok());  // [3, 5]
  auto b = rpc.Run({doubled});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)[0].flat<float>()[0], 6.0f);
  EXPECT_EQ((*b)[0].flat<float>()[1], 10.0f);
  // Errors read the same on both paths.
  Output missing = ops::Placeholder(root.WithOpName("feed_me"), DT_FLOAT);
  for (ClientSession* s : {&direct, &rpc}) {
    auto r = s->Run({missing});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("feed_me"));
  }
}

TEST(LocalMasterTest, AStoppedServerFailsTheSessionInsteadOfHanging) {
  auto server = Server::CreateLocalServer();
  ASSERT_TRUE(server.ok());
  Scope root = Scope::NewRootScope();
  Output c = ops::Const(root, 5);
  ClientSession session(root, (*server)->target());
  ASSERT_TRUE(session.Run({c}).ok());
  (*server)->Stop();
  auto r = session.Run({c});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsUnavailable(r.status()) || absl::IsAborted(r.status())) << r.status();
}

TEST(LocalMasterTest, StoppingTheServerCancelsABlockedStep) {
  executor_test::RegisterStepProbeOps();
  executor_test::StepProbe& probe = executor_test::StepProbe::Get();
  probe.Reset();
  auto server = Server::CreateLocalServer();
  ASSERT_TRUE(server.ok());
  Scope root = Scope::NewRootScope();
  Output q = ops::FIFOQueue(root.WithOpName("q"), {DT_FLOAT});
  std::vector<Output> take = ops::QueueDequeue(root, q, {DT_FLOAT});
  Operation block = ops::BuildOp(root.WithOpName("block"), "TestBlock", {});  // tells the probe it waits
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root, (*server)->target());
  StatusOr<std::vector<Tensor>> r;
  std::thread t([&] { r = session.Run({}, {take[0]}, {block}); });  // waits: the queue is empty
  EXPECT_TRUE(probe.WaitBlocked(1)) << "the step never blocked";
  (*server)->Stop();  // must not wait for the dequeue
  t.join();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsCancelled(r.status()) || absl::IsUnavailable(r.status()) || absl::IsAborted(r.status()))
      << r.status();
  EXPECT_EQ(probe.cancelled(), 1) << "stopping the server did not cancel the blocked step";
}

TEST(LocalMasterTest, ARestartOnTheSamePortAbortsTheOldSession) {
  std::vector<int> ports = PickFreePorts(1).value();
  ClusterSpec spec = ClusterSpec::FromJobs({{"worker", {"127.0.0.1:" + std::to_string(ports[0])}}}).value();
  ServerOptions o;
  o.cluster = spec;
  o.job_name = "worker";
  auto first = Server::Create(o);
  ASSERT_TRUE(first.ok()) << first.status();
  Scope root = Scope::NewRootScope();
  Output c = ops::Const(root, 7);
  std::string target = (*first)->target();
  ClientSession session(root, target);
  ASSERT_TRUE(session.Run({c}).ok());
  (*first)->Stop();
  first->reset();
  auto second = Server::Create(o);
  ASSERT_TRUE(second.ok()) << second.status();
  auto r = session.Run({c});  // the new master does not know the old session
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted) << r.status();
  auto fresh = ClientSession(root, target).Run({c});
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ((*fresh)[0].scalar<int>(), 7);
}

}  // namespace
}  // namespace dflow
