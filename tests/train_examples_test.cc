// The training examples, run in process: both must fit y = 0.1 x + 0.3 within 0.001. Each is
// skipped (not failed) while an op, kernel or gradient it needs is not registered (NotFound).
#include "examples/linear_regression.h"
#include "examples/tf_regression.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

template <typename R>
bool MissingOp(const R& r) {
  return !r.ok() && absl::IsNotFound(r.status()) &&
         (absl::StrContains(r.status().message(), "not registered") ||
          absl::StrContains(r.status().message(), "No gradient") ||
          absl::StrContains(r.status().message(), "kernel"));
}

TEST(TrainExamplesTest, LinearRegressionFromScratch) {
  auto r = examples::TrainLinearRegression();
  if (MissingOp(r)) GTEST_SKIP() << r.status();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(r->first, 0.1, 1e-3);
  EXPECT_NEAR(r->second, 0.3, 1e-3);
}

TEST(TrainExamplesTest, TensorFlowRegressionGraph) {
  auto r = examples::TrainTfRegression(DFLOW_SOURCE_DIR "/testdata/tf/rust_regression_train.pb");
  if (MissingOp(r)) GTEST_SKIP() << r.status();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(r->first, 0.1, 1e-3);
  EXPECT_NEAR(r->second, 0.3, 1e-3);
}

TEST(TrainExamplesTest, TensorFlowRegressionMissingFile) {
  auto r = examples::TrainTfRegression(DFLOW_SOURCE_DIR "/testdata/tf/no_such_graph.pb");
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace dflow
