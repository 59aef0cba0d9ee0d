// Resource limits of a task (docs/SECURITY.md, "Resource limits"): the per-task memory budget of
// steps, the size of graphs a master and a worker accept, open sessions per client and idle
// sessions. Each over-limit request fails with ResourceExhausted naming the limit, and the
// master keeps serving well-behaved clients afterwards.
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "base/notification.h"
#include "dflow/dflow.h"
#include "distributed/in_process_cluster.h"
#include "distributed/master.h"
#include "distributed/master_test_util.h"
#include "gmock/gmock.h"
#include "graph/graph_def.h"
#include "gtest/gtest.h"
#include "proto/graph.pb.h"
#include "tensor/tensor_proto.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

constexpr char kTask[] = "/job:worker/replica:0/task:0";

class ResourceLimitsTest : public ::testing::Test {
 protected:
  ResourceLimitsTest() : cluster_(ClusterSpec::FromJobs({{"worker", {"w0:1"}}}).value()) { InitDflow(); }

  void StartMaster(MasterOptions o) {
    o.startup_wait_ms = 300;
    o.probe_timeout_ms = 100;
    master_ = std::make_unique<Master>(kTask, cluster_.cache(), o);
  }

  StatusOr<std::string> NewSession(const proto::GraphDef& def, const std::string& client = "") {
    proto::CreateSessionRequest req;
    *req.mutable_graph_def() = def;
    proto::CreateSessionResponse resp;
    RETURN_IF_ERROR(master_->CreateSession(req, &resp, client));
    return resp.session_handle();
  }
  StatusOr<std::string> NewSession(const Scope& root, const std::string& client = "") {
    proto::GraphDef def;
    ExportGraphDef(*root.graph(), &def);
    return NewSession(def, client);
  }

  StatusOr<std::vector<Tensor>> Run(const std::string& session,
                                    const std::vector<std::pair<std::string, Tensor>>& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets = {}) {
    return RunStepOnMaster(master_.get(), session, feeds, fetches, targets);
  }

  // A graph that sums Fill(dims, 1): the size of the filled tensor comes from the feed.
  static Scope FillGraph() {
    Scope root = Scope::NewRootScope();
    Output dims = ops::Placeholder(root.WithOpName("dims"), DT_INT64, PartialTensorShape({-1}));
    Output filled = ops::Fill(root.WithOpName("fill"), dims, 1.0f);
    ops::Sum(root.WithOpName("sum"), filled, ops::Const(root, {0}));
    return root;
  }

  // A chain of `n` Identity nodes after a constant.
  static proto::GraphDef Chain(int n, const std::string& prefix = "n") {
    Scope root = Scope::NewRootScope();
    Output v = ops::Const(root.WithOpName(prefix + "0"), 1.0f);
    for (int i = 1; i < n; ++i) v = ops::Identity(root.WithOpName(absl::StrCat(prefix, i)), v);
    proto::GraphDef def;
    ExportGraphDef(*root.graph(), &def);
    return def;
  }

  Worker* worker() { return cluster_.worker(kTask); }

  InProcessCluster cluster_;
  std::unique_ptr<Master> master_;
};

TEST(MemoryBudgetTest, ChargesAndReleasesWithTheBuffer) {
  auto budget = std::make_shared<MemoryBudget>(1000);
  {
    StatusOr<Tensor> t = Tensor::Allocate(DT_FLOAT, TensorShape({100}), budget);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(budget->in_use(), 400);
    // A slice or a copy shares the buffer: no second charge.
    StatusOr<Tensor> s = t->Slice(10, 20);
    ASSERT_TRUE(s.ok());
    Tensor copy = *t;
    EXPECT_EQ(budget->in_use(), 400);
    StatusOr<Tensor> big = Tensor::Allocate(DT_FLOAT, TensorShape({200}), budget);
    ASSERT_FALSE(big.ok());
    EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(big.status().message(), HasSubstr("Allocating 800 bytes would exceed this task's memory budget"));
    EXPECT_THAT(big.status().message(), HasSubstr("1000 bytes, of which 400 bytes in use"));
    EXPECT_EQ(budget->in_use(), 400);  // a refused charge takes nothing
  }
  EXPECT_EQ(budget->in_use(), 0);
  EXPECT_EQ(budget->peak(), 400);
  // The biggest shape there is (2^56 elements) is refused by the budget, not attempted.
  StatusOr<Tensor> huge = Tensor::Allocate(DT_STRING, TensorShape({int64_t{1} << 28, int64_t{1} << 28}), budget);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(budget->in_use(), 0);
  // Byte sizes that do not fit in 64 bits are reported, not wrapped around.
  EXPECT_EQ(TensorBytesOrOverflow(INT64_MAX / 2, 4), -1);
  EXPECT_EQ(TensorBytesOrOverflow(int64_t{1} << 56, 32), int64_t{1} << 61);
  // Unlimited budgets count too.
  budget->set_limit(0);
  StatusOr<Tensor> any = Tensor::Allocate(DT_INT32, TensorShape({1000}), budget);
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(budget->in_use(), 4000);
}

TEST(MemoryBudgetTest, DefaultIsHalfOfTheUsableMemory) {
  const int64_t d = MemoryBudget::DefaultLimit();
  EXPECT_GT(d, int64_t{64} << 20);  // any machine that runs the tests has 128 MiB
  EXPECT_EQ(MemoryBudget::ResolveLimit(-1), d);
  EXPECT_EQ(MemoryBudget::ResolveLimit(0), 0);
  EXPECT_EQ(MemoryBudget::ResolveLimit(12345), 12345);
  EXPECT_EQ(HumanReadableBytes(int64_t{5} << 30), "5.00 GiB");
  EXPECT_EQ(HumanReadableBytes(int64_t{3} << 19), "1.50 MiB");
}

TEST_F(ResourceLimitsTest, AStepOverTheMemoryBudgetFailsAndTheTaskGoesOn) {
  StartMaster({});
  worker()->memory_budget()->set_limit(int64_t{4} << 30);
  Scope root = FillGraph();
  ASSERT_TRUE(root.ok()) << root.status();
  StatusOr<std::string> s = NewSession(root);
  ASSERT_TRUE(s.ok()) << s.status();
  // 5 GiB of floats: refused before any memory is taken.
  Tensor dims = Tensor::FromValues<int64_t>({int64_t{5} << 28}, TensorShape({1})).value();
  auto r = Run(*s, {{"dims:0", dims}}, {"sum:0"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("[node fill (Fill)]"));
  EXPECT_THAT(r.status().message(),
              HasSubstr("Allocating 5.00 GiB would exceed this task's memory budget for steps (4.00 GiB"));
  EXPECT_THAT(r.status().message(), HasSubstr("--step_memory_limit"));
  EXPECT_EQ(worker()->memory_budget()->in_use(), 0);
  // A well-behaved step on the same task and session still runs, and gives its memory back.
  Tensor small = Tensor::FromValues<int64_t>({1000000}, TensorShape({1})).value();
  r = Run(*s, {{"dims:0", small}}, {"sum:0"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 1e6f);
  EXPECT_GE(worker()->memory_budget()->peak(), 4000000);
  EXPECT_EQ(worker()->memory_budget()->in_use(), 0);
}

TEST_F(ResourceLimitsTest, ValuesKeptInVariablesStayCharged) {
  StartMaster({});
  Scope root = Scope::NewRootScope();
  Variable v = Variable::Create(root.WithOpName("v"), TensorShape({1024}), DT_FLOAT, init::Constant(0.0f));
  ops::Assign(root.WithOpName("set"), v.ref(), ops::Fill(root, ops::Const(root, {int64_t{1024}}), 2.0f));
  ASSERT_TRUE(root.ok()) << root.status();
  StatusOr<std::string> s = NewSession(root);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(Run(*s, {}, {}, {"set"}).ok());
  // The variable holds the Fill's buffer (or a copy charged the same way): 4 KiB stays in use.
  EXPECT_GE(worker()->memory_budget()->in_use(), 4096);
  EXPECT_LT(worker()->memory_budget()->in_use(), 3 * 4096);
}

TEST_F(ResourceLimitsTest, AGraphOverTheNodeLimitIsRefusedAndTheMasterGoesOn) {
  MasterOptions o;
  o.max_graph_nodes = 100;
  StartMaster(o);
  StatusOr<std::string> s = NewSession(Chain(150));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.status().message(), HasSubstr("150 nodes, more than the limit of 100"));
  EXPECT_THAT(s.status().message(), HasSubstr("(max_graph_nodes)"));
  EXPECT_EQ(master_->num_sessions(), 0u);
  // The limit is on the session's whole graph: extensions count.
  s = NewSession(Chain(60));
  ASSERT_TRUE(s.ok()) << s.status();
  proto::ExtendSessionRequest ext;
  ext.set_session_handle(*s);
  *ext.mutable_graph_def() = Chain(60, "m");
  proto::ExtendSessionResponse ext_resp;
  Status st = master_->ExtendSession(ext, &ext_resp);
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted) << st;
  EXPECT_THAT(st.message(), HasSubstr("120 nodes, more than the limit of 100"));
  // The session keeps its graph and runs.
  auto r = Run(*s, {}, {"n59:0"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 1.0f);
  // An extension within the limit is imported with the kept graph, which it may refer to.
  proto::GraphDef more = Chain(30, "m");
  more.mutable_node(0)->set_op("Identity");
  more.mutable_node(0)->clear_attr();
  (*more.mutable_node(0)->mutable_attr())["T"].set_type(proto::DT_FLOAT);
  more.mutable_node(0)->add_input("n59");
  *ext.mutable_graph_def() = more;
  st = master_->ExtendSession(ext, &ext_resp);
  ASSERT_TRUE(st.ok()) << st;
  r = Run(*s, {}, {"m29:0", "n3:0"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 1.0f);
  // Now at 90 nodes: 11 more are too many.
  *ext.mutable_graph_def() = Chain(11, "k");
  EXPECT_EQ(master_->ExtendSession(ext, &ext_resp).code(), absl::StatusCode::kResourceExhausted);
}

TEST_F(ResourceLimitsTest, AGraphOverTheByteLimitIsRefused) {
  MasterOptions o;
  proto::GraphDef big = Chain(200);
  o.max_graph_bytes = static_cast<int64_t>(big.ByteSizeLong()) - 1;
  StartMaster(o);
  StatusOr<std::string> s = NewSession(big);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.status().message(), HasSubstr("(max_graph_bytes)"));
  s = NewSession(Chain(20));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(Run(*s, {}, {"n19:0"}).ok());
}

TEST_F(ResourceLimitsTest, AWorkerRefusesAPartitionOverItsLimits) {
  WorkerOptions wo;
  wo.max_graph_nodes = 10;
  Worker w("/job:worker/replica:0/task:0", nullptr, wo);
  proto::RegisterGraphRequest req;
  req.set_session_handle("s");
  *req.mutable_graph_def() = Chain(11);
  proto::RegisterGraphResponse resp;
  Status st = CallAndWait([&](StatusCallback done) { w.RegisterGraphAsync(&req, &resp, std::move(done)); });
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted) << st;
  EXPECT_THAT(st.message(), HasSubstr("11 nodes, more than this task's limit of 10 (max_graph_nodes)"));
  *req.mutable_graph_def() = Chain(10);
  st = CallAndWait([&](StatusCallback done) { w.RegisterGraphAsync(&req, &resp, std::move(done)); });
  EXPECT_TRUE(st.ok()) << st;

  WorkerOptions bo;
  bo.max_graph_bytes = 100;
  Worker small("/job:worker/replica:0/task:0", nullptr, bo);
  *req.mutable_graph_def() = Chain(20);
  st = CallAndWait([&](StatusCallback done) { small.RegisterGraphAsync(&req, &resp, std::move(done)); });
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted) << st;
  EXPECT_THAT(st.message(), HasSubstr("(max_graph_bytes)"));
}

TEST_F(ResourceLimitsTest, SessionsPerClientAreLimited) {
  MasterOptions o;
  o.max_sessions_per_client = 2;
  StartMaster(o);
  proto::GraphDef def = Chain(2);
  StatusOr<std::string> a = NewSession(def, "ipv4:10.0.0.5:1000");
  StatusOr<std::string> b = NewSession(def, "ipv4:10.0.0.5:1001");  // same host, another port
  ASSERT_TRUE(a.ok() && b.ok());
  StatusOr<std::string> c = NewSession(def, "ipv4:10.0.0.5:1002");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(c.status().message(), HasSubstr("Client ipv4:10.0.0.5 already has 2 open sessions"));
  EXPECT_THAT(c.status().message(), HasSubstr("max_sessions_per_client = 2"));
  // Other hosts and the server's own process are not affected.
  EXPECT_TRUE(NewSession(def, "ipv4:10.0.0.6:1000").ok());
  EXPECT_TRUE(NewSession(def, "ipv6:[::1]:1000").ok());
  EXPECT_TRUE(NewSession(def).ok());
  EXPECT_TRUE(NewSession(def).ok());
  EXPECT_TRUE(NewSession(def).ok());
  // The existing sessions still run; closing one makes room.
  EXPECT_TRUE(Run(*a, {}, {"n1:0"}).ok());
  proto::CloseSessionRequest close;
  close.set_session_handle(*a);
  proto::CloseSessionResponse close_resp;
  ASSERT_TRUE(master_->CloseSession(close, &close_resp).ok());
  EXPECT_TRUE(NewSession(def, "ipv4:10.0.0.5:1003").ok());
  EXPECT_FALSE(NewSession(def, "ipv4:10.0.0.5:1004").ok());
  // A session that failed to start gives its place back.
  proto::GraphDef bad = def;
  bad.mutable_node(1)->set_op("NoSuchOp");
  proto::CloseSessionRequest close_b;
  close_b.set_session_handle(*b);
  ASSERT_TRUE(master_->CloseSession(close_b, &close_resp).ok());
  EXPECT_FALSE(NewSession(bad, "ipv4:10.0.0.5:1005").ok());
  EXPECT_TRUE(NewSession(def, "ipv4:10.0.0.5:1006").ok());
}

TEST_F(ResourceLimitsTest, AClientOpeningSessionsWithoutEndGetsTheDefaultLimit) {
  StartMaster({});
  proto::GraphDef def = Chain(2);
  int opened = 0, refused = 0;
  for (int i = 0; i < 200; ++i) {
    StatusOr<std::string> s = NewSession(def, absl::StrCat("ipv4:10.0.0.9:", 20000 + i));
    if (s.ok()) {
      ++opened;
    } else {
      ASSERT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted) << s.status();
      ++refused;
    }
  }
  EXPECT_EQ(opened, MasterOptions().max_sessions_per_client);
  EXPECT_EQ(refused, 200 - opened);
  // A well-behaved client elsewhere is served.
  StatusOr<std::string> good = NewSession(def, "ipv4:10.0.0.10:1");
  ASSERT_TRUE(good.ok()) << good.status();
  auto r = Run(*good, {}, {"n1:0"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 1.0f);
}

TEST(MasterClientHostTest, DropsThePort) {
  EXPECT_EQ(Master::ClientHost("ipv4:10.0.0.5:41234"), "ipv4:10.0.0.5");
  EXPECT_EQ(Master::ClientHost("ipv6:[::1]:41234"), "ipv6:[::1]");
  EXPECT_EQ(Master::ClientHost("ipv6:[fe80::1%eth0]:5"), "ipv6:[fe80::1%eth0]");
  EXPECT_EQ(Master::ClientHost("unix:/tmp/sock"), "unix:/tmp/sock");
  EXPECT_EQ(Master::ClientHost(""), "");
}

TEST_F(ResourceLimitsTest, IdleSessionsAreClosed) {
  MasterOptions o;
  o.session_idle_timeout_ms = 50;
  o.max_sessions_per_client = 1;
  StartMaster(o);
  Notification closed;
  std::mutex mu;
  std::vector<std::string> closed_handles;
  master_->SetIdleCloseCallbackForTest([&](const std::string& h) {
    std::lock_guard<std::mutex> l(mu);
    closed_handles.push_back(h);
    closed.Notify();
  });
  StatusOr<std::string> s = NewSession(Chain(3), "ipv4:10.0.0.7:1");
  ASSERT_TRUE(s.ok()) << s.status();
  // Whether or not the session was already closed, the client learns which it is.
  auto r = Run(*s, {}, {"n2:0"});
  if (!r.ok()) EXPECT_THAT(r.status().message(), HasSubstr("idle"));
  ASSERT_TRUE(closed.WaitFor(std::chrono::seconds(30)));
  {
    std::lock_guard<std::mutex> l(mu);
    ASSERT_EQ(closed_handles, std::vector<std::string>{*s});
  }
  EXPECT_EQ(master_->num_sessions(), 0u);
  r = Run(*s, {}, {"n2:0"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(r.status().message(), HasSubstr("was closed after it was idle for"));
  EXPECT_THAT(r.status().message(), HasSubstr("session_idle_timeout_ms = 50"));
  // Its client's place is free again, and the master serves the new session.
  StatusOr<std::string> again = NewSession(Chain(3), "ipv4:10.0.0.7:2");
  ASSERT_TRUE(again.ok()) << again.status();
  // Stopping the master with the idle thread waiting ends it (the destructor joins it).
  master_->Stop();
  EXPECT_EQ(master_->num_sessions(), 0u);
}

}  // namespace
}  // namespace dflow
