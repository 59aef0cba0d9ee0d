// train_and_evaluate's evaluator waits for checkpoints on Env's monotonic clock and sleeps through
// Env::SleepForMicros: with a test Env whose sleeps are faked and whose wall clock runs backwards,
// an hour's checkpoint timeout ends after exactly the throttled looks it allows, at once.
#include <chrono>

#include "base/fault_injection_env.h"
#include "base/temp_dir.h"
#include "dflow/dflow.h"
#include "dflow/estimator.h"
#include "dflow/server.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

namespace est = estimator;

TEST(RunConfigTest, TheEvaluatorTimesOutOnTheMonotonicClock) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  est::RunConfig c;
  c.model_dir = dir.path();
  c.log_step_count_steps = 0;
  c.task =
      ParseTfConfig(R"({"cluster": {"chief": ["127.0.0.1:1"]}, "task": {"type": "evaluator", "index": 0}})").value();
  // No checkpoint ever comes, so neither function runs.
  est::Estimator evaluator([](const Scope&, const feature_column::Features&, const Output&, est::ModeKeys,
                              const est::Params&)
                               -> StatusOr<est::EstimatorSpec> { return errors::Internal("not expected to run"); },
                           c);
  auto input = [](const Scope&) -> StatusOr<est::InputFnResult> { return errors::Internal("not expected to run"); };
  est::TrainSpec ts{.input_fn = input, .max_steps = 1};
  est::EvalSpec es{.input_fn = input, .throttle_secs = 60, .checkpoint_timeout_secs = 3600};

  TestClockEnv env(/*wall_drift_per_call=*/-int64_t{3600} * 1000000, /*fake_sleep=*/true);
  ScopedDefaultEnv scoped(&env);
  const auto start = std::chrono::steady_clock::now();
  StatusOr<est::EvalResult> r = est::TrainAndEvaluate(evaluator, ts, es);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20)) << "the evaluator really slept";
  // Looks 60.01 s apart (throttle_secs plus 10 ms): the 60th sleep takes it past 3600 s.
  EXPECT_EQ(env.sleeps(), 60);
}

}  // namespace
}  // namespace dflow
