// LeakyRelu and LeakyReluGrad: values for alphas below 0, between 0 and 1 and above 1 (no max()),
// float and double; shape mismatch; numerical gradients of both.
#include "ops/nn/nn_test_util.h"

namespace dflow {
namespace {

using nn_testing::ExpectClose;
using nn_testing::RunError;
using nn_testing::RunOp;

template <typename T>
void CheckValues() {
  const std::vector<double> xs = {-3, -0.5, 0, 1e-3, 2.5};
  const std::vector<double> gs = {1, 2, 3, 4, 5};
  for (float alpha : {0.2f, 1.5f, -0.1f}) {
    AttrMap a{{"alpha", alpha}};
    std::vector<T> x(xs.begin(), xs.end()), g(gs.begin(), gs.end());
    auto y = RunOp("LeakyRelu", {testing::MakeTensor<T>(x, TensorShape{5})}, a);
    auto d = RunOp("LeakyReluGrad",
                   {testing::MakeTensor<T>(g, TensorShape{5}), testing::MakeTensor<T>(x, TensorShape{5})}, a);
    ASSERT_EQ(y.size(), 1u);
    ASSERT_EQ(d.size(), 1u);
    std::vector<double> wy, wd;
    for (size_t i = 0; i < xs.size(); ++i) {
      wy.push_back(xs[i] > 0 ? xs[i] : xs[i] * double(T(alpha)));
      wd.push_back(xs[i] > 0 ? gs[i] : gs[i] * double(T(alpha)));
    }
    ExpectClose(y[0], wy, TensorShape{5}, 1e-7);
    ExpectClose(d[0], wd, TensorShape{5}, 1e-7);
  }
}

TEST(LeakyReluTest, FloatValues) { CheckValues<float>(); }
TEST(LeakyReluTest, DoubleValues) { CheckValues<double>(); }

TEST(LeakyReluTest, DefaultAlphaAndShapeMismatch) {
  auto y = RunOp("LeakyRelu", {testing::MakeTensor<float>({-1.f, 2.f}, TensorShape{2})});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_FLOAT_EQ(y[0].flat<float>()[0], -0.2f);
  EXPECT_EQ(RunError("LeakyReluGrad", {testing::MakeTensor<float>({1.f}, TensorShape{1}),
                                       testing::MakeTensor<float>({1.f, 2.f}, TensorShape{2})})
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(LeakyReluTest, NumericalGradients) {
  Tensor x = testing::MakeTensor<double>({-2.0, -0.7, 0.3, 1.1, 2.4, -0.05}, TensorShape{2, 3});
  Tensor g = testing::MakeTensor<double>({0.5, -1.0, 2.0, 0.25, -0.75, 1.5}, TensorShape{2, 3});
  for (float alpha : {0.2f, 1.7f}) {
    AttrMap a{{"alpha", alpha}};
    EXPECT_LT(nn_testing::OpGradientError("LeakyRelu", {x}, a), 1e-9);
    EXPECT_LT(nn_testing::OpGradientError("LeakyReluGrad", {g}, a, {x}), 1e-9);
  }
}

}  // namespace
}  // namespace dflow
