// The master and workers of a cluster in one process (no network): placement across tasks,
// partitions with tensors between them, variables shared by sessions, errors that name the task,
// and unreachable tasks.
#include "distributed/in_process_cluster.h"
#include "distributed/master.h"
#include "distributed/master_test_util.h"
#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "graph/graph_def.h"
#include "gtest/gtest.h"
#include "proto/graph.pb.h"
#include "tensor/tensor_proto.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

constexpr char kWorker0[] = "/job:worker/replica:0/task:0";

ClusterSpec TwoPsOneWorker() {
  return ClusterSpec::FromJobs({{"ps", {"ps0:1", "ps1:1"}}, {"worker", {"w0:1"}}}).value();
}

class MasterWorkerTest : public ::testing::Test {
 protected:
  MasterWorkerTest() : cluster_(TwoPsOneWorker()) {
    InitDflow();
    MasterOptions o;
    o.startup_wait_ms = 300;
    o.probe_timeout_ms = 100;
    master_ = std::make_unique<Master>(kWorker0, cluster_.cache(), o);
  }

  std::string NewSession(const Scope& root) {
    proto::CreateSessionRequest req;
    ExportGraphDef(*root.graph(), req.mutable_graph_def());
    proto::CreateSessionResponse resp;
    Status s = master_->CreateSession(req, &resp);
    EXPECT_TRUE(s.ok()) << s;
    return resp.session_handle();
  }

  StatusOr<std::vector<Tensor>> Run(const std::string& session,
                                    const std::vector<std::pair<std::string, Tensor>>& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets = {}) {
    return RunStepOnMaster(master_.get(), session, feeds, fetches, targets);
  }

  InProcessCluster cluster_;
  std::unique_ptr<Master> master_;
};

TEST_F(MasterWorkerTest, TensorsFlowBetweenTasks) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output a = ops::Mul(root.WithDevice("/job:ps/task:0").WithOpName("a"), x, 2.0f);
  Output b = ops::Add(root.WithDevice("/job:ps/task:1").WithOpName("b"), a, 1.0f);
  Output c = ops::Mul(root.WithOpName("c"), b, a);  // on the master's task
  ASSERT_TRUE(root.ok()) << root.status();
  std::string s = NewSession(root);
  for (float v : {1.0f, -3.0f}) {
    auto r = Run(s, {{"x:0", Tensor(v)}}, {"c:0", "a:0"});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)[0].scalar<float>(), (2 * v + 1) * (2 * v));
    EXPECT_EQ((*r)[1].scalar<float>(), 2 * v);
  }
}

TEST_F(MasterWorkerTest, VariablesOnPsAreSharedBySessions) {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithDevice("/job:ps/task:1").WithOpName("w"), TensorShape({2}), DT_FLOAT,
                                init::Constant(1.5));
  Output inc = ops::AssignAdd(root.WithOpName("inc"), w.ref(), ops::Const(root, {1.0f, 2.0f}));
  GlobalVariablesInitializer(root);
  ASSERT_TRUE(root.ok()) << root.status();
  std::string s1 = NewSession(root);
  ASSERT_TRUE(Run(s1, {}, {}, {"init"}).ok());
  ASSERT_TRUE(Run(s1, {}, {"inc:0"}).ok());
  // A second session (another client) sees the same variable on ps task 1.
  std::string s2 = NewSession(root);
  auto r = Run(s2, {}, {"inc:0"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].flat<float>()[0], 3.5f);
  EXPECT_EQ((*r)[0].flat<float>()[1], 5.5f);
}

TEST_F(MasterWorkerTest, AFailingPartitionNamesItsTask) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root.WithOpName("x"), DT_INT32);
  Output d = ops::Div(root.WithDevice("/job:ps/task:1").WithOpName("d"), ops::Const(root, 6), x);
  Output y = ops::Add(root.WithOpName("y"), d, 1);
  ASSERT_TRUE(root.ok()) << root.status();
  std::string s = NewSession(root);
  auto ok = Run(s, {{"x:0", Tensor(int32_t{3})}}, {"y:0"});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].scalar<int32_t>(), 3);
  auto bad = Run(s, {{"x:0", Tensor(int32_t{0})}}, {"y:0"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("/job:ps/replica:0/task:1"));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("division by zero"));
  // The session still works after a failed step.
  auto again = Run(s, {{"x:0", Tensor(int32_t{2})}}, {"y:0"});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)[0].scalar<int32_t>(), 4);
}

TEST_F(MasterWorkerTest, UnknownDeviceListsTheClusterDevices) {
  Scope root = Scope::NewRootScope();
  Output a = ops::Const(root.WithDevice("/job:ps/task:7").WithOpName("a"), 1.0f);
  ASSERT_TRUE(root.ok());
  std::string s = NewSession(root);
  auto r = Run(s, {}, {"a:0"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("/job:ps/task:7"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("/job:ps/replica:0/task:1/device:CPU:0"));
}

TEST(MasterStartupTest, AnUnreachableTaskIsUnavailableNamingIt) {
  InitDflow();
  InProcessCluster cluster(TwoPsOneWorker());
  static_cast<InProcessWorkerCache*>(cluster.cache())->Remove("/job:ps/replica:0/task:1");
  MasterOptions o;
  o.startup_wait_ms = 200;
  o.probe_timeout_ms = 50;
  Master master(kWorker0, cluster.cache(), o);
  proto::CreateSessionRequest req;
  proto::CreateSessionResponse resp;
  Status s = master.CreateSession(req, &resp);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()), HasSubstr("/job:ps/replica:0/task:1"));
  // With a device filter that leaves it out, the session starts.
  req.mutable_config()->add_device_filters("/job:ps/task:0");
  EXPECT_TRUE(master.CreateSession(req, &resp).ok());
}

}  // namespace
}  // namespace dflow
