// What the executor's tests share: adding a node by hand, an executor on the local CPU device
// with the registered kernels, and running one step with a deadline. Also test ops that let any
// test wait for a step to reach a point instead of sleeping (TestBlock, TestPass, StepProbe).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/notification.h"
#include "framework/cancellation.h"
#include "framework/op_def.h"
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "runtime/executor.h"
#include "runtime/local_device.h"

namespace dflow::executor_test {

// Adds `name` = `op`(inputs) to `g`; a failure fails the test (and returns null).
inline Node* Add(Graph* g, const std::string& name, const std::string& op, std::vector<NodeOut> inputs,
                 AttrMap attrs = {}) {
  NodeSpec s;
  s.name = name;
  s.op = op;
  s.inputs = std::move(inputs);
  s.attrs = std::move(attrs);
  auto n = g->AddNode(std::move(s));
  EXPECT_TRUE(n.ok()) << n.status();
  return n.ok() ? *n : nullptr;
}

// An executor of `g` on the local CPU device, with kernels from the global registry.
inline std::unique_ptr<Executor> MakeExecutor(std::unique_ptr<Graph> g) {
  ExecutorParams p;
  p.device = LocalCpuDevice();
  p.create_kernel = [](const Node& n) -> StatusOr<std::shared_ptr<OpKernel>> {
    ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k,
                     KernelRegistry::Global()->CreateKernel(LocalCpuDevice(), "CPU", n.props_ptr()));
    return std::shared_ptr<OpKernel>(std::move(k));
  };
  auto e = Executor::Create(std::move(p), std::move(g));
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? std::move(e).value() : nullptr;
}

// Runs one step of `e` and waits for it: its status, or DeadlineExceeded after `limit`.
// `cm` (null: a manager of its own) cancels the step.
inline Status RunSync(const Executor& e, CancellationManager* cm = nullptr,
                      std::chrono::seconds limit = std::chrono::seconds(20)) {
  CancellationManager own;
  Executor::Args args;
  args.step.device = LocalCpuDevice();
  args.step.cancellation = cm != nullptr ? cm : &own;
  auto done = std::make_shared<Notification>();
  auto result = std::make_shared<Status>();
  e.RunAsync(args, [done, result](const Status& s, std::vector<NodeExecStats>) {
    *result = s;
    done->Notify();
  });
  if (!done->WaitFor(limit)) return errors::DeadlineExceeded("test step did not finish within ", limit.count(), " s");
  return *result;
}

// ---- Test ops that a test waits on instead of sleeping ----
//
// "TestBlock" (no inputs; output y of attr `dtype`, float by default; stateful) blocks until its
// step is cancelled and then fails with Cancelled: it never produces a value. "TestPass"
// (x: T -> y: T) passes its input through. Both report to StepProbe::Get(), where a test waits
// until a step is blocked (or has run TestPass) and then checks that what it did next (a
// cancellation, a Close, a Stop) reached the kernel that was blocked.
class StepProbe {
 public:
  static StepProbe& Get() {
    static auto* probe = new StepProbe;
    return *probe;
  }
  // Forgets the counts (at the start of a test).
  void Reset() {
    std::lock_guard<std::mutex> l(mu_);
    blocked_ = cancelled_ = passes_ = 0;
  }
  // TestBlock kernels that blocked so far: their cancellation callback was armed.
  int blocked() const { return Read(blocked_); }
  // TestBlock kernels that were blocked when their step's cancellation reached them.
  int cancelled() const { return Read(cancelled_); }
  // TestPass kernels that ran so far.
  int passes() const { return Read(passes_); }
  // Wait at most `limit` until the count reaches `n`; false if it did not.
  bool WaitBlocked(int n, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    return WaitFor(blocked_, n, limit);
  }
  bool WaitCancelled(int n, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    return WaitFor(cancelled_, n, limit);
  }
  bool WaitPasses(int n, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    return WaitFor(passes_, n, limit);
  }
  // Called by the kernels.
  void NoteBlocked() { Add(&blocked_); }
  void NoteCancelled() { Add(&cancelled_); }
  void NotePass() { Add(&passes_); }

 private:
  int Read(const int& count) const {
    std::lock_guard<std::mutex> l(mu_);
    return count;
  }
  void Add(int* count) {
    {
      std::lock_guard<std::mutex> l(mu_);
      ++*count;
    }
    cv_.notify_all();
  }
  bool WaitFor(const int& count, int n, std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, limit, [&] { return count >= n; });
  }
  int blocked_ = 0, cancelled_ = 0, passes_ = 0;  // guarded by mu_
  mutable std::mutex mu_;
  std::condition_variable cv_;
};

class TestBlockOp : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    CancellationManager* cm = ctx->step().cancellation;
    if (cm == nullptr) {
      ctx->SetStatus(errors::FailedPrecondition("TestBlock runs only in a step that can be cancelled"));
      done();
      return;
    }
    auto shared_done = std::make_shared<DoneCallback>(std::move(done));
    const bool armed = cm->RegisterCallback(cm->NewToken(), [ctx, shared_done] {
      StepProbe::Get().NoteCancelled();
      ctx->SetStatus(errors::Cancelled("TestBlock cancelled"));
      (*shared_done)();
    });
    if (!armed) {  // cancelled before it could block
      ctx->SetStatus(errors::Cancelled("TestBlock cancelled"));
      (*shared_done)();
      return;
    }
    StepProbe::Get().NoteBlocked();
  }
};

class TestPassOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    ctx->set_output(0, ctx->input(0));
    StepProbe::Get().NotePass();
  }
};

// Registers TestBlock and TestPass (once per process).
inline void RegisterStepProbeOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterOp(OpDefBuilder("TestBlock")
                   .Output("y: dtype")
                   .Attr("dtype: type = DT_FLOAT")
                   .SetShapeFn(ScalarShape)
                   .SetIsStateful());
    RegisterKernel<TestBlockOp>(KernelBuilder("TestBlock"));
    RegisterOp(OpDefBuilder("TestPass")
                   .Input("x: T")
                   .Output("y: T")
                   .Attr("T: type")
                   .SetShapeFn(UnchangedShape)
                   .SetIsStateful());
    RegisterKernel<TestPassOp>(KernelBuilder("TestPass"));
  });
}

}  // namespace dflow::executor_test
