// TanhGrad, SigmoidGrad, SqrtGrad, RsqrtGrad, ReciprocalGrad: values against the derivatives of
// Tanh, Sigmoid, Sqrt, Rsqrt, Reciprocal; inputs of different sizes; their own gradients.
#include <cmath>
#include <functional>
#include <string>

#include "gtest/gtest.h"
#include "ops/math/grad_test_util.h"
#include "ops/testing/kernel_test_util.h"

namespace dflow {
namespace {

using testing::ExpectGradientMatches;
using testing::MakeTensor;
using testing::OneOp;
using testing::RunOpKernel;
using testing::Uniform;

struct Case {
  const char* op;
  std::function<double(double)> f;   // the forward function
  std::function<double(double)> df;  // its derivative, of x
};

std::vector<Case> Cases() {
  return {
      {"TanhGrad", [](double x) { return std::tanh(x); }, [](double x) { return 1 - std::tanh(x) * std::tanh(x); }},
      {"SigmoidGrad", [](double x) { return 1 / (1 + std::exp(-x)); },
       [](double x) {
         double s = 1 / (1 + std::exp(-x));
         return s * (1 - s);
       }},
      {"SqrtGrad", [](double x) { return std::sqrt(x); }, [](double x) { return 0.5 / std::sqrt(x); }},
      {"RsqrtGrad", [](double x) { return 1 / std::sqrt(x); }, [](double x) { return -0.5 * std::pow(x, -1.5); }},
      {"ReciprocalGrad", [](double x) { return 1 / x; }, [](double x) { return -1 / (x * x); }},
  };
}

TEST(UnaryGradOpsTest, ValuesAreDyTimesTheDerivative) {
  const std::vector<double> xs = {0.25, 0.5, 1.0, 2.0, 3.5};
  const std::vector<double> dy = {1.0, -2.0, 0.5, 3.0, -0.25};
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.op);
    std::vector<double> y;
    std::vector<float> yf, dyf(dy.begin(), dy.end());
    for (double x : xs) y.push_back(c.f(x)), yf.push_back(static_cast<float>(c.f(x)));
    auto d = RunOpKernel(c.op, {MakeTensor<double>(y, TensorShape({5})), MakeTensor<double>(dy, TensorShape({5}))});
    auto f = RunOpKernel(c.op, {MakeTensor<float>(yf, TensorShape({5})), MakeTensor<float>(dyf, TensorShape({5}))});
    ASSERT_TRUE(d.ok() && f.ok()) << d.status() << f.status();
    EXPECT_EQ((*d)[0].shape(), TensorShape({5}));
    for (size_t i = 0; i < xs.size(); ++i) {
      const double want = dy[i] * c.df(xs[i]);
      EXPECT_NEAR((*d)[0].flat<double>()[i], want, 1e-12 * std::max(1.0, std::abs(want))) << i;
      EXPECT_NEAR((*f)[0].flat<float>()[i], want, 1e-5 * std::max(1.0, std::abs(want))) << i;
    }
  }
}

TEST(UnaryGradOpsTest, SizesMustMatch) {
  for (const Case& c : Cases()) {
    auto out = RunOpKernel(c.op, {Tensor(DT_FLOAT, TensorShape({3})), Tensor(DT_FLOAT, TensorShape({4}))});
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << c.op;
    EXPECT_NE(out.status().message().find("same number of elements"), std::string::npos) << out.status();
  }
  // An empty pair is fine.
  auto out = RunOpKernel("TanhGrad", {Tensor(DT_FLOAT, TensorShape({0, 2})), Tensor(DT_FLOAT, TensorShape({0, 2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0, 2}));
}

TEST(UnaryGradOpsTest, StaticShapeMergesBothInputs) {
  auto shapes = testing::InferShapes("SigmoidGrad",
                                     {Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor(DT_FLOAT, TensorShape({2, 3}))});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0].DebugString(), PartialTensorShape({2, 3}).DebugString());
}

// Second derivatives: the gradients of the gradient ops, of both y and dy.
TEST(UnaryGradOpsTest, Gradients) {
  const TensorShape s({2, 3});
  for (const char* op : {"TanhGrad", "SigmoidGrad"}) {
    SCOPED_TRACE(op);
    ExpectGradientMatches({Uniform(s, 0.1, 0.9, 1), Uniform(s, -1, 1, 2)}, OneOp(op), 1e-6);
  }
  for (const char* op : {"SqrtGrad", "RsqrtGrad", "ReciprocalGrad"}) {
    SCOPED_TRACE(op);
    ExpectGradientMatches({Uniform(s, 0.5, 2.0, 3), Uniform(s, -1, 1, 4)}, OneOp(op), 1e-6);
  }
}

}  // namespace
}  // namespace dflow
