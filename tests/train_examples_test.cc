// The training examples, run in process: both must fit y = 0.1 x + 0.3 within 0.001.
#include "examples/linear_regression.h"
#include "examples/tf_regression.h"

#include "gtest/gtest.h"

namespace dflow {
namespace {

TEST(TrainExamplesTest, LinearRegressionFromScratch) {
  auto r = examples::TrainLinearRegression();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(r->first, 0.1, 1e-3);
  EXPECT_NEAR(r->second, 0.3, 1e-3);
}

TEST(TrainExamplesTest, TensorFlowRegressionGraph) {
  auto r = examples::TrainTfRegression(DFLOW_SOURCE_DIR "/testdata/tf/rust_regression_train.pb");
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
