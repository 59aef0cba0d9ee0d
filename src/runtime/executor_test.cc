// Executor scheduling, built from Graphs directly with test-only kernels: independent branches
// run in parallel, errors stop the step, cancellation unblocks waiting kernels, deadlines hold.
#include "runtime/executor.h"

#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "base/notification.h"
#include "framework/cancellation.h"
#include "framework/shape_inference.h"
#include "gmock/gmock.h"
#include "graph/graph_def.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"
#include "proto/graph.pb.h"
#include "runtime/direct_session.h"
#include "runtime/executor_test_util.h"
#include "runtime/local_device.h"

namespace dflow {
namespace {

using executor_test::Add;
using executor_test::MakeExecutor;
using executor_test::RunSync;
using executor_test::StepProbe;

using ::testing::HasSubstr;

// Two of these meet: each waits (up to 5 s) until the other has arrived. They can only both
// succeed when they run at the same time.
struct Meeting {
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::set<std::thread::id> threads;
};
Meeting* g_meeting = nullptr;

class MeetOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return true; }
  void Compute(OpKernelContext* ctx) override {
    std::unique_lock<std::mutex> l(g_meeting->mu);
    g_meeting->arrived++;
    g_meeting->threads.insert(std::this_thread::get_id());
    g_meeting->cv.notify_all();
    bool met = g_meeting->cv.wait_for(l, std::chrono::seconds(5), [] { return g_meeting->arrived >= 2; });
    OP_REQUIRES(ctx, met, errors::DeadlineExceeded("the other branch never ran alongside"));
    ctx->set_output(0, Tensor(1.0f));
  }
};

class SleepOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ctx->set_output(0, ctx->input(0));
  }
};

class FailOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override { ctx->SetStatus(errors::InvalidArgument("FailOp always fails")); }
};

void RegisterTestOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterAllOps();
    RegisterDirectSessionFactory();
    executor_test::RegisterStepProbeOps();  // TestBlock
    RegisterOp(OpDefBuilder("TestMeet").Input("x: float").Output("y: float").SetShapeFn(ScalarShape));
    RegisterOp(OpDefBuilder("TestFail").Input("x: float").Output("y: float").SetShapeFn(ScalarShape));
    RegisterKernel<MeetOp>(KernelBuilder("TestMeet"));
    RegisterKernel<FailOp>(KernelBuilder("TestFail"));
    RegisterOp(OpDefBuilder("TestSleep").Input("x: float").Output("y: float").SetShapeFn(ScalarShape));
    RegisterKernel<SleepOp>(KernelBuilder("TestSleep"));
  });
}

TEST(ExecutorTest, IndependentBranchesRunInParallel) {
  RegisterTestOps();
  Meeting meeting;
  g_meeting = &meeting;
  auto g = std::make_unique<Graph>();
  Node* c = Add(g.get(), "c", "Const", {}, {{"value", Tensor(1.0f)}, {"dtype", DT_FLOAT}});
  Add(g.get(), "left", "TestMeet", {{c, 0}});
  Add(g.get(), "right", "TestMeet", {{c, 0}});
  auto e = MakeExecutor(std::move(g));
  CancellationManager cm;
  Status s = RunSync(*e, &cm);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(meeting.threads.size(), 2u);
  g_meeting = nullptr;
}

TEST(ExecutorTest, AnErrorEndsTheStepAndNamesTheNode) {
  RegisterTestOps();
  auto g = std::make_unique<Graph>();
  Node* c = Add(g.get(), "c", "Const", {}, {{"value", Tensor(1.0f)}, {"dtype", DT_FLOAT}});
  Node* f = Add(g.get(), "broken", "TestFail", {{c, 0}});
  Add(g.get(), "after", "Identity", {{f, 0}});
  auto e = MakeExecutor(std::move(g));
  CancellationManager cm;
  Status s = RunSync(*e, &cm);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("broken"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("FailOp always fails"));
}

TEST(ExecutorTest, AFailureCancelsKernelsThatWait) {
  RegisterTestOps();
  auto g = std::make_unique<Graph>();
  Add(g.get(), "wait", "TestBlock", {});
  Node* c = Add(g.get(), "c", "Const", {}, {{"value", Tensor(1.0f)}, {"dtype", DT_FLOAT}});
  Add(g.get(), "broken", "TestFail", {{c, 0}});
  auto e = MakeExecutor(std::move(g));
  CancellationManager cm;
  Status s = RunSync(*e, &cm, std::chrono::seconds(10));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(ExecutorTest, CancellationUnblocksTheStep) {
  RegisterTestOps();
  StepProbe& probe = StepProbe::Get();
  probe.Reset();
  auto g = std::make_unique<Graph>();
  Add(g.get(), "wait", "TestBlock", {});
  auto e = MakeExecutor(std::move(g));
  CancellationManager cm;
  std::thread canceller([&] {
    EXPECT_TRUE(probe.WaitBlocked(1)) << "the step never blocked";
    cm.StartCancel();  // (a step that did not block ends with it too)
  });
  Status s = RunSync(*e, &cm, std::chrono::seconds(30));
  canceller.join();
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
  EXPECT_EQ(probe.cancelled(), 1) << "the cancellation did not reach the blocked kernel";
}

TEST(ExecutorTest, SessionDeadlineStopsABlockedStep) {
  RegisterTestOps();
  Graph g;
  Add(&g, "wait", "TestBlock", {});
  proto::GraphDef def;
  ExportGraphDef(g, &def);
  auto session = NewDirectSession(SessionOptions(), {LocalCpuDevice()});
  ASSERT_TRUE(session->Create(def).ok());
  RunOptions opts;
  opts.timeout_in_ms = 100;
  std::vector<Tensor> out;
  auto start = std::chrono::steady_clock::now();
  Status st = session->Run(opts, {}, {"wait:0"}, {}, &out, nullptr);
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The session still works for other steps.
  Graph g2;
  Add(&g2, "c", "Const", {}, {{"value", Tensor(2.0f)}, {"dtype", DT_FLOAT}});
  proto::GraphDef def2;
  ExportGraphDef(g2, &def2);
  ASSERT_TRUE(session->Extend(def2).ok());
  ASSERT_TRUE(session->Run({}, {"c:0"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<float>(), 2.0f);
}

TEST(ExecutorTest, ADeadlineStopsAChainRunningInline) {
  RegisterTestOps();
  Graph g;
  Node* prev = Add(&g, "c", "Const", {}, {{"value", Tensor(2.0f)}, {"dtype", DT_FLOAT}});
  for (int i = 0; i < 10; ++i) prev = Add(&g, absl::StrCat("sleep", i), "TestSleep", {{prev, 0}});
  proto::GraphDef def;
  ExportGraphDef(g, &def);
  SessionOptions so;
  so.operation_timeout_ms = 50;  // the chain needs 200 ms
  auto session = NewDirectSession(so, {LocalCpuDevice()});
  ASSERT_TRUE(session->Create(def).ok());
  RunMetadata md;
  std::vector<Tensor> out;
  Status st = session->Run(RunOptions(), {}, {"sleep9:0"}, {}, &out, &md);
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
}

TEST(ExecutorTest, CloseCancelsActiveSteps) {
  RegisterTestOps();
  Graph g;
  Add(&g, "wait", "TestBlock", {});
  proto::GraphDef def;
  ExportGraphDef(g, &def);
  auto session = NewDirectSession(SessionOptions(), {LocalCpuDevice()});
  ASSERT_TRUE(session->Create(def).ok());
  StepProbe& probe = StepProbe::Get();
  probe.Reset();
  Status st;
  std::thread runner([&] {
    std::vector<Tensor> out;
    st = session->Run({}, {"wait:0"}, {}, &out);
  });
  EXPECT_TRUE(probe.WaitBlocked(1)) << "the step never blocked";
  EXPECT_TRUE(session->Close().ok());
  runner.join();
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled) << st;
  EXPECT_EQ(probe.cancelled(), 1) << "Close did not cancel the blocked kernel";
}

}  // namespace
}  // namespace dflow
