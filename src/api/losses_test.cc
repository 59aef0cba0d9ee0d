// dflow::losses: values against hand-computed references, gradients against the analytic
// derivatives (and central differences), and bad input.
#include <cmath>

#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

double Scalar(const StatusOr<std::vector<Tensor>>& r) {
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return NAN;
  const Tensor& t = (*r)[0];
  EXPECT_EQ(t.dims(), 0);
  return t.dtype() == DT_FLOAT ? t.scalar<float>() : t.scalar<double>();
}

TEST(LossesTest, MeanSquaredError) {
  Scope root = Scope::NewRootScope();
  Output loss = losses::MeanSquaredError(root, {1.0f, 2.0f, 3.0f}, ops::Const(root, {1.5f, 2.0f, 2.0f}));
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(loss.node()->name(), "mean_squared_error/value");
  EXPECT_NEAR(Scalar(ClientSession(root).Run({loss})), (0.25 + 0 + 1) / 3, 1e-7);
  // A matrix: the mean over every element.
  Scope r2 = Scope::NewRootScope();
  Output l2 = losses::MeanSquaredError(r2, ops::Const(r2, {{0.0, 0.0}, {0.0, 0.0}}), {{1.0, 2.0}, {3.0, 4.0}});
  EXPECT_DOUBLE_EQ(Scalar(ClientSession(r2).Run({l2})), 30.0 / 4);
}

TEST(LossesTest, MeanSquaredErrorOfUnknownRank) {
  Scope root = Scope::NewRootScope();
  Output p = ops::Placeholder(root, DT_DOUBLE);
  Output loss = losses::MeanSquaredError(root, ops::Placeholder(root, DT_DOUBLE), p);
  ASSERT_TRUE(root.ok()) << root.status();
  Output labels(root.graph()->FindNode("Placeholder_1"), 0);
  auto r = ClientSession(root).Run({{p, {{1.0, 2.0, 3.0}}}, {labels, {{0.0, 0.0, 0.0}}}}, {loss});
  EXPECT_DOUBLE_EQ(Scalar(r), 14.0 / 3);
}

TEST(LossesTest, MeanSquaredErrorShapeMismatchIsABuildError) {
  Scope root = Scope::NewRootScope();
  Output loss = losses::MeanSquaredError(root, ops::Const(root, {1.0f, 2.0f}), ops::Const(root, {1.0f, 2.0f, 3.0f}));
  EXPECT_FALSE(loss.valid());
  EXPECT_FALSE(root.ok());
}

TEST(LossesTest, MeanSquaredErrorGradient) {
  Scope root = Scope::NewRootScope();
  Output p = ops::Placeholder(root, DT_DOUBLE, PartialTensorShape({3}));
  Output loss = losses::MeanSquaredError(root, {1.0, 2.0, 3.0}, p);
  std::vector<Output> g = Gradients(root, {loss}, {p});
  ASSERT_TRUE(root.ok()) << root.status();
  auto r = ClientSession(root).Run({{p, {2.0, 2.0, 0.0}}}, {g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  // d/dp mean((p - l)^2) = 2 (p - l) / n.
  const double want[] = {2.0 / 3, 0.0, -2.0};
  for (int i = 0; i < 3; ++i) EXPECT_NEAR((*r)[0].flat<double>()[i], want[i], 1e-12);
}

TEST(LossesTest, SoftmaxCrossEntropy) {
  Scope root = Scope::NewRootScope();
  Output logits = ops::Const(root, {{1.0f, 2.0f, 3.0f}, {1.0f, 1.0f, 1.0f}});
  Output loss = losses::SoftmaxCrossEntropy(root, {{0.0f, 0.0f, 1.0f}, {1.0f, 0.0f, 0.0f}}, logits);
  ASSERT_TRUE(root.ok()) << root.status();
  const double row0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0;
  const double row1 = std::log(3.0);
  EXPECT_NEAR(Scalar(ClientSession(root).Run({loss})), (row0 + row1) / 2, 1e-6);
}

TEST(LossesTest, SparseSoftmaxCrossEntropy) {
  Scope root = Scope::NewRootScope();
  Output logits = ops::Const(root, {{1.0, 2.0, 3.0}, {1.0, 1.0, 1.0}});
  Output loss = losses::SparseSoftmaxCrossEntropy(root, ops::Const(root, {2, 0}), logits);
  ASSERT_TRUE(root.ok()) << root.status();
  const double row0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0;
  EXPECT_NEAR(Scalar(ClientSession(root).Run({loss})), (row0 + std::log(3.0)) / 2, 1e-12);
  // Labels out of range fail when run.
  Scope r2 = Scope::NewRootScope();
  Output bad = losses::SparseSoftmaxCrossEntropy(r2, ops::Const(r2, {3, 0}),
                                                 ops::Const(r2, {{1.0, 2.0, 3.0}, {1.0, 1.0, 1.0}}));
  if (r2.ok()) {
    EXPECT_FALSE(ClientSession(r2).Run({bad}).ok());
  }
}

TEST(LossesTest, SoftmaxCrossEntropyGradient) {
  Scope root = Scope::NewRootScope();
  Output logits = ops::Placeholder(root, DT_DOUBLE, PartialTensorShape({1, 3}));
  Output loss = losses::SoftmaxCrossEntropy(root, {{0.0, 1.0, 0.0}}, logits);
  std::vector<Output> g = Gradients(root, {loss}, {logits});
  ASSERT_TRUE(root.ok()) << root.status();
  auto r = ClientSession(root).Run({{logits, {{0.5, -1.0, 2.0}}}}, {g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  // softmax(logits) - labels.
  const double z = std::exp(0.5) + std::exp(-1.0) + std::exp(2.0);
  const double want[] = {std::exp(0.5) / z, std::exp(-1.0) / z - 1, std::exp(2.0) / z};
  for (int i = 0; i < 3; ++i) EXPECT_NEAR((*r)[0].flat<double>()[i], want[i], 1e-12);
}

double SigmoidXent(double x, double z) { return std::max(x, 0.0) - x * z + std::log1p(std::exp(-std::abs(x))); }

TEST(LossesTest, SigmoidCrossEntropy) {
  Scope root = Scope::NewRootScope();
  Output loss = losses::SigmoidCrossEntropy(root, {1.0, 0.0, 1.0, 0.0}, {0.0, 2.0, -3.0, -50.0});
  ASSERT_TRUE(root.ok()) << root.status();
  const double want = (std::log(2.0) + SigmoidXent(2, 0) + SigmoidXent(-3, 1) + SigmoidXent(-50, 0)) / 4;
  EXPECT_NEAR(Scalar(ClientSession(root).Run({loss})), want, 1e-12);
  // Stable for large logits: log(1 + exp(100)) would overflow a naive formula in float.
  Scope r2 = Scope::NewRootScope();
  Output big = losses::SigmoidCrossEntropy(r2, {0.0f}, ops::Const(r2, {100.0f}));
  EXPECT_NEAR(Scalar(ClientSession(r2).Run({big})), 100.0, 1e-4);
}

TEST(LossesTest, SigmoidCrossEntropyGradientIsSigmoidMinusLabels) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE, PartialTensorShape({4}));
  Output loss = losses::SigmoidCrossEntropy(root, {1.0, 0.0, 1.0, 0.3}, x);
  std::vector<Output> g = Gradients(root, {loss}, {x});
  ASSERT_TRUE(root.ok()) << root.status();
  const std::vector<double> xs = {0.0, 2.0, -3.0, 0.7}, zs = {1.0, 0.0, 1.0, 0.3};
  ClientSession session(root);
  auto r = session.Run({{x, {xs[0], xs[1], xs[2], xs[3]}}}, {g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  for (int i = 0; i < 4; ++i) {
    // (sigmoid(x) - z) / n — including x = 0, where the branches meet.
    double want = (1 / (1 + std::exp(-xs[i])) - zs[i]) / 4;
    EXPECT_NEAR((*r)[0].flat<double>()[i], want, 1e-12) << i;
    // Central differences agree.
    std::vector<double> hi = xs, lo = xs;
    hi[i] += 1e-6;
    lo[i] -= 1e-6;
    double fh = Scalar(session.Run({{x, {hi[0], hi[1], hi[2], hi[3]}}}, {loss}));
    double fl = Scalar(session.Run({{x, {lo[0], lo[1], lo[2], lo[3]}}}, {loss}));
    EXPECT_NEAR((fh - fl) / 2e-6, want, 1e-6) << i;
  }
}

TEST(LossesTest, L2Regularization) {
  Scope root = Scope::NewRootScope();
  Output a = ops::Const(root, {1.0f, 2.0f});
  Output b = ops::Const(root, {{3.0f}});
  Output reg = losses::L2Regularization(root, {a, b}, 0.1);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_NEAR(Scalar(ClientSession(root).Run({reg})), 0.1 * (5.0 / 2 + 9.0 / 2), 1e-6);
  Output one = losses::L2Regularization(root, {a}, 2.0);
  EXPECT_NEAR(Scalar(ClientSession(root).Run({one})), 5.0, 1e-6);
  Scope r2 = Scope::NewRootScope();
  EXPECT_FALSE(losses::L2Regularization(r2, {}, 0.1).valid());
  EXPECT_THAT(r2.status().message(), HasSubstr("no weights"));
}

TEST(LossesTest, L2RegularizationGradient) {
  Scope root = Scope::NewRootScope();
  Output w = ops::Placeholder(root, DT_DOUBLE, PartialTensorShape({2}));
  Output reg = losses::L2Regularization(root, {w}, 0.5);
  std::vector<Output> g = Gradients(root, {reg}, {w});
  ASSERT_TRUE(root.ok()) << root.status();
  auto r = ClientSession(root).Run({{w, {3.0, -4.0}}}, {g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ((*r)[0].flat<double>()[0], 1.5);  // scale * w
  EXPECT_DOUBLE_EQ((*r)[0].flat<double>()[1], -2.0);
}

}  // namespace
}  // namespace dflow
