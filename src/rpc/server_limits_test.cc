// The resource limits of a server, reached through gRPC as a client in another process reaches
// them: the memory budget, the graph limits, sessions per client and the message size; after each
// refusal the server still serves a well-behaved client.
#include "base/net.h"
#include "dflow/dflow.h"
#include "dflow/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Server> StartServer(const ServerOptions& base) {
  ServerOptions o = base;
  o.cluster = ClusterSpec::FromJobs({{"worker", {"127.0.0.1:" + std::to_string(PickFreePorts(1).value()[0])}}}).value();
  o.job_name = "worker";
  auto s = Server::Create(o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(s).value() : nullptr;
}

SessionOptions Rpc(const Server& server) {
  SessionOptions so;
  so.target = server.target();
  so.direct_to_local_master = false;  // through the MasterService, as another process
  return so;
}

// 3 + 4 through a fresh RPC session.
void ExpectServes(const Server& server) {
  Scope root = Scope::NewRootScope();
  auto r = ClientSession(root, Rpc(server)).Run({ops::Add(root, 3, 4)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<int>(), 7);
}

TEST(ServerLimitsTest, AStepOverTheMemoryBudgetFailsAndTheServerGoesOn) {
  ServerOptions o;
  o.step_memory_limit_bytes = int64_t{64} << 20;
  auto server = StartServer(o);
  ASSERT_NE(server, nullptr);
  Scope root = Scope::NewRootScope();
  Output big = ops::Fill(root, ops::Const(root, {int64_t{1} << 28}), 1.0f);  // 1 GiB
  auto r = ClientSession(root, Rpc(*server)).Run({big});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("--step_memory_limit"));
  ExpectServes(*server);
}

// A DequeueMany batch is a new buffer: charged like any other, while the elements it copies are
// still charged in the queue.
TEST(ServerLimitsTest, ADequeueManyBatchIsChargedToTheBudget) {
  ServerOptions o;
  o.step_memory_limit_bytes = int64_t{64} << 20;
  auto server = StartServer(o);
  ASSERT_NE(server, nullptr);
  Scope root = Scope::NewRootScope();
  constexpr int64_t kRow = int64_t{1} << 20;  // 4 MiB elements
  Output q = ops::FIFOQueue(root, {DT_FLOAT}, {.shapes = {PartialTensorShape({kRow})}});
  Output rows = ops::Fill(root, ops::Const(root, {int64_t{10}, kRow}), 0.0f);  // 40 MiB kept in the queue
  Operation enqueue = ops::QueueEnqueueMany(root, q, {rows});
  std::vector<Output> batch = ops::QueueDequeueMany(root, q, 10, {DT_FLOAT});  // 40 MiB more
  std::vector<Output> two = ops::QueueDequeueMany(root, q, 2, {DT_FLOAT});
  ClientSession session(root, Rpc(*server));
  ASSERT_TRUE(session.Run({enqueue}).ok());
  auto r = session.Run({batch[0]});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("memory budget"));
  // The elements went back to the queue; a batch that fits is served (bounded: a lost element
  // would leave this dequeue waiting).
  RunOptions bounded;
  bounded.timeout_in_ms = 20000;
  auto ok = session.Run({}, {two[0]}, {}, nullptr, bounded);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->at(0).dim_size(0), 2);
}

TEST(ServerLimitsTest, AGraphOverTheNodeLimitIsRefused) {
  ServerOptions o;
  o.max_graph_nodes = 100;
  auto server = StartServer(o);
  ASSERT_NE(server, nullptr);
  Scope root = Scope::NewRootScope();
  Output x = ops::Const(root, 1.0f);
  for (int i = 0; i < 150; ++i) x = ops::Add(root, x, 1.0f);
  auto r = ClientSession(root, Rpc(*server)).Run({x});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("max_graph_nodes"));
  ExpectServes(*server);
}

TEST(ServerLimitsTest, OneClientHostHoldsAtMostItsSessions) {
  ServerOptions o;
  o.max_sessions_per_client = 3;
  auto server = StartServer(o);
  ASSERT_NE(server, nullptr);
  Scope root = Scope::NewRootScope();
  Output sum = ops::Add(root, 3, 4);
  std::vector<std::unique_ptr<ClientSession>> open;
  for (int i = 0; i < 3; ++i) {
    open.push_back(std::make_unique<ClientSession>(root, Rpc(*server)));
    ASSERT_TRUE(open.back()->Run({sum}).ok());
  }
  ClientSession fourth(root, Rpc(*server));
  auto r = fourth.Run({sum});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("max_sessions_per_client"));
  // Closing one frees its place; sessions of the server's own process are not counted.
  open.pop_back();
  ExpectServes(*server);
  ClientSession direct(root, server->target());
  EXPECT_TRUE(direct.Run({sum}).ok());
}

TEST(ServerLimitsTest, ARequestOverTheMessageLimitIsRefusedBeforeItIsRead) {
  ServerOptions o;
  o.max_message_bytes = 1 << 20;
  auto server = StartServer(o);
  ASSERT_NE(server, nullptr);
  Scope root = Scope::NewRootScope();
  auto fed = ops::Placeholder(root, DT_FLOAT);
  Output total = ops::Sum(root, fed, 0);
  ClientSession session(root, Rpc(*server));
  Tensor two_mib(DT_FLOAT, TensorShape({1 << 19}));
  for (int64_t i = 0; i < two_mib.NumElements(); ++i) two_mib.flat<float>()[i] = 1.0f;
  auto r = session.Run({{fed, two_mib}}, {total});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  Tensor small(DT_FLOAT, TensorShape({4}));
  for (int i = 0; i < 4; ++i) small.flat<float>()[i] = 1.0f;
  auto ok = session.Run({{fed, small}}, {total});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].scalar<float>(), 4.0f);
}

}  // namespace
}  // namespace dflow
