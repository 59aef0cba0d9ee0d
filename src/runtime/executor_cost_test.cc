// Where the executor runs a node: a kernel that calls itself expensive goes to another thread
// only while it is measured to be slow, and the successors of an async kernel that finishes
// within ComputeAsync run on the step's own thread. Which thread ran each node is recorded.
#include <mutex>
#include <set>
#include <thread>

#include "base/notification.h"
#include "framework/cancellation.h"
#include "framework/shape_inference.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"
#include "runtime/executor.h"
#include "runtime/executor_test_util.h"
#include "runtime/local_device.h"

namespace dflow {
namespace {

using executor_test::Add;
using executor_test::MakeExecutor;
using executor_test::RunSync;

std::mutex g_mu;
std::set<std::thread::id> g_threads;

void Record() {
  std::lock_guard<std::mutex> l(g_mu);
  g_threads.insert(std::this_thread::get_id());
}

std::set<std::thread::id> TakeThreads() {
  std::lock_guard<std::mutex> l(g_mu);
  return std::exchange(g_threads, {});
}

// Says it is expensive; takes no time at all.
class QuickExpensiveOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return true; }
  void Compute(OpKernelContext* ctx) override {
    Record();
    ctx->set_output(0, ctx->input(0));
  }
};

// Says it is expensive and is: 20 ms.
class SlowExpensiveOp : public QuickExpensiveOp {
 public:
  using QuickExpensiveOp::QuickExpensiveOp;
  void Compute(OpKernelContext* ctx) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    QuickExpensiveOp::Compute(ctx);
  }
};

// A cheap node that records its thread.
class WhereOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    Record();
    ctx->set_output(0, ctx->input(0));
  }
};

// An async kernel that is done before ComputeAsync returns.
class DoneAtOnceOp : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    ctx->set_output(0, ctx->input(0));
    done();
  }
};

void RegisterOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterAllOps();
    for (const char* op : {"TestQuickExpensive", "TestSlowExpensive", "TestWhere", "TestDoneAtOnce"}) {
      RegisterOp(OpDefBuilder(op).Input("x: float").Output("y: float").SetShapeFn(UnchangedShape));
    }
    RegisterKernel<QuickExpensiveOp>(KernelBuilder("TestQuickExpensive"));
    RegisterKernel<SlowExpensiveOp>(KernelBuilder("TestSlowExpensive"));
    RegisterKernel<WhereOp>(KernelBuilder("TestWhere"));
    RegisterKernel<DoneAtOnceOp>(KernelBuilder("TestDoneAtOnce"));
  });
}

// Two expensive nodes ready together.
std::unique_ptr<Executor> TwoBranches(const char* op) {
  auto g = std::make_unique<Graph>();
  Node* c = Add(g.get(), "c", "Const", {}, {{"value", Tensor(1.0f)}, {"dtype", DT_FLOAT}});
  Add(g.get(), "left", op, {{c, 0}});
  Add(g.get(), "right", op, {{c, 0}});
  return MakeExecutor(std::move(g));
}

TEST(ExecutorCostTest, AnExpensiveKernelMeasuredQuickStaysOnTheStepsThread) {
  RegisterOps();
  auto e = TwoBranches("TestQuickExpensive");
  TakeThreads();
  // Not measured yet: one of the two goes to the pool.
  ASSERT_TRUE(RunSync(*e).ok());
  EXPECT_EQ(TakeThreads().size(), 2u);
  // Measured far below the hand-off threshold: both run here, one after the other.
  ASSERT_TRUE(RunSync(*e).ok());
  EXPECT_EQ(TakeThreads(), std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(ExecutorCostTest, AnExpensiveKernelMeasuredSlowGoesToThePool) {
  RegisterOps();
  auto e = TwoBranches("TestSlowExpensive");
  for (int run = 0; run < 2; ++run) {
    TakeThreads();
    ASSERT_TRUE(RunSync(*e).ok());
    EXPECT_EQ(TakeThreads().size(), 2u) << "run " << run;
  }
}

TEST(ExecutorCostTest, SuccessorsOfAnAsyncKernelDoneAtOnceRunHere) {
  RegisterOps();
  auto g = std::make_unique<Graph>();
  Node* c = Add(g.get(), "c", "Const", {}, {{"value", Tensor(2.0f)}, {"dtype", DT_FLOAT}});
  Node* a = Add(g.get(), "a", "TestDoneAtOnce", {{c, 0}});
  for (int i = 0; i < 4; ++i) Add(g.get(), "w" + std::to_string(i), "TestWhere", {{a, 0}});
  auto e = MakeExecutor(std::move(g));
  TakeThreads();
  ASSERT_TRUE(RunSync(*e).ok());
  EXPECT_EQ(TakeThreads(), std::set<std::thread::id>{std::this_thread::get_id()});
}

}  // namespace
}  // namespace dflow
