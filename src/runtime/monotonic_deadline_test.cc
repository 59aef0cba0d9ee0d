// Step deadlines follow Env::NowMonotonicMicros, never the wall clock: a wall clock that jumps
// forward while a step runs does not end it early, one that jumps back does not stretch its
// deadline, and the executor's deadline check reads the Env's monotonic clock.
#include <chrono>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/fault_injection_env.h"
#include "base/notification.h"
#include "framework/cancellation.h"
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
using executor_test::RegisterStepProbeOps;
using executor_test::StepProbe;

constexpr int64_t kHourMicros = int64_t{3600} * 1000000;

std::unique_ptr<Session> SessionFor(const Graph& g) {
  proto::GraphDef def;
  ExportGraphDef(g, &def);
  auto session = NewDirectSession(SessionOptions(), {LocalCpuDevice()});
  Status s = session->Create(def);
  EXPECT_TRUE(s.ok()) << s;
  return session;
}

TEST(MonotonicDeadlineTest, AWallClockJumpingForwardDoesNotEndAStep) {
  RegisterAllOps();
  RegisterStepProbeOps();
  Graph g;
  Node* prev = Add(&g, "c", "Const", {}, {{"value", Tensor(3.0f)}, {"dtype", DT_FLOAT}});
  for (int i = 0; i < 5; ++i) prev = Add(&g, absl::StrCat("pass", i), "TestPass", {{prev, 0}}, {{"T", DT_FLOAT}});
  auto session = SessionFor(g);
  // Every reading of the wall clock is an hour later than the one before: a deadline taken from
  // it would pass before the second node.
  TestClockEnv env(/*wall_drift_per_call=*/kHourMicros);
  ScopedDefaultEnv scoped(&env);
  RunOptions opts;
  opts.timeout_in_ms = 60000;
  std::vector<Tensor> out;
  Status s = session->Run(opts, {}, {"pass4:0"}, {}, &out, nullptr);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].scalar<float>(), 3.0f);
}

TEST(MonotonicDeadlineTest, AWallClockJumpingBackDoesNotStretchADeadline) {
  RegisterAllOps();
  RegisterStepProbeOps();
  StepProbe::Get().Reset();
  Graph g;
  Add(&g, "wait", "TestBlock", {});
  auto session = SessionFor(g);
  // Every reading of the wall clock is an hour earlier: the time left to a deadline taken from
  // it would grow by an hour at each look.
  TestClockEnv env(/*wall_drift_per_call=*/-kHourMicros);
  ScopedDefaultEnv scoped(&env);
  Notification done;
  Status result;
  const auto start = std::chrono::steady_clock::now();
  std::thread runner([&] {
    RunOptions opts;
    opts.timeout_in_ms = 200;
    std::vector<Tensor> out;
    result = session->Run(opts, {}, {"wait:0"}, {}, &out, nullptr);
    done.Notify();
  });
  const bool finished = done.WaitFor(std::chrono::seconds(20));
  if (!finished) session->Close().IgnoreError();  // cancels the step, so that the thread ends
  runner.join();
  ASSERT_TRUE(finished) << "the 200 ms deadline did not end the step within 20 s";
  EXPECT_EQ(result.code(), absl::StatusCode::kDeadlineExceeded) << result;
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  EXPECT_EQ(StepProbe::Get().blocked(), 1);
}

TEST(MonotonicDeadlineTest, TheExecutorReadsTheEnvMonotonicClock) {
  RegisterAllOps();
  RegisterStepProbeOps();
  auto g = std::make_unique<Graph>();
  Node* c = Add(g.get(), "c", "Const", {}, {{"value", Tensor(1.0f)}, {"dtype", DT_FLOAT}});
  Add(g.get(), "pass", "TestPass", {{c, 0}}, {{"T", DT_FLOAT}});
  auto e = MakeExecutor(std::move(g));
  ASSERT_NE(e, nullptr);
  TestClockEnv env;
  ScopedDefaultEnv scoped(&env);
  auto run = [&](int64_t deadline) {
    CancellationManager cm;
    Executor::Args args;
    args.step.device = LocalCpuDevice();
    args.step.cancellation = &cm;
    args.deadline_micros = deadline;
    Notification done;
    Status result;
    e->RunAsync(args, [&](const Status& s, std::vector<NodeExecStats>) {
      result = s;
      done.Notify();
    });
    EXPECT_TRUE(done.WaitFor(std::chrono::seconds(20)));
    return result;
  };
  // A minute ahead on the monotonic clock: the step runs.
  Status ok = run(env.NowMonotonicMicros() + 60 * 1000000);
  EXPECT_TRUE(ok.ok()) << ok;
  // The same deadline after the monotonic clock moved two minutes on: past it, although the
  // wall clock did not move.
  const int64_t deadline = env.NowMonotonicMicros() + 60 * 1000000;
  env.AdvanceMonotonic(120 * int64_t{1000000});
  Status late = run(deadline);
  EXPECT_EQ(late.code(), absl::StatusCode::kDeadlineExceeded) << late;
}

}  // namespace
}  // namespace dflow
