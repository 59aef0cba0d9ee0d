// Streaming metrics: values after several update runs against hand-computed running means,
// weights, resetting through the local-variables initializer, TensorFlow's names, and that the
// totals are local variables (neither global nor trainable).
#include "dflow/metrics.h"

#include <cmath>
#include <vector>

#include "api/scope_internal.h"
#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

template <typename T>
Tensor Values(const std::vector<T>& v, const TensorShape& shape) {
  return Tensor::FromValues<T>(v, shape).value();
}

float Scalar(const StatusOr<std::vector<Tensor>>& r, int i = 0) {
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? (*r)[i].scalar<float>() : NAN;
}

TEST(MetricsTest, AccuracyOverSeveralBatchesAndReset) {
  Scope root = Scope::NewRootScope();
  Output labels = ops::Placeholder(root.WithOpName("labels"), DT_INT64);
  Output preds = ops::Placeholder(root.WithOpName("preds"), DT_INT64, PartialTensorShape({-1, 1}));
  metrics::Metric acc = metrics::Accuracy(root, labels, preds);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(acc.value.node()->name(), "accuracy/value");
  EXPECT_EQ(acc.update_op.node()->name(), "accuracy/update_op");
  EXPECT_NE(root.graph()->FindNode("accuracy/total"), nullptr);
  EXPECT_NE(root.graph()->FindNode("accuracy/count"), nullptr);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({LocalVariablesInitializer(root)}).ok());
  EXPECT_EQ(Scalar(session.Run({acc.value})), 0.0f);  // no examples yet
  // Batch 1: 2 of 3 right; batch 2: 1 of 1; batch 3: 0 of 2.
  EXPECT_FLOAT_EQ(Scalar(session.Run({{labels, Values<int64_t>({1, 2, 3}, {3})},
                                      {preds, Values<int64_t>({1, 0, 3}, {3, 1})}},
                                     {acc.update_op})),
                  2.0f / 3);
  EXPECT_FLOAT_EQ(Scalar(session.Run({{labels, Values<int64_t>({5}, {1})}, {preds, Values<int64_t>({5}, {1, 1})}},
                                     {acc.update_op})),
                  3.0f / 4);
  EXPECT_FLOAT_EQ(Scalar(session.Run({{labels, Values<int64_t>({0, 0}, {2})}, {preds, Values<int64_t>({1, 1}, {2, 1})}},
                                     {acc.update_op})),
                  3.0f / 6);
  EXPECT_FLOAT_EQ(Scalar(session.Run({acc.value})), 0.5f);
  ASSERT_TRUE(session.Run({LocalVariablesInitializer(root)}).ok());
  EXPECT_EQ(Scalar(session.Run({acc.value})), 0.0f);
}

TEST(MetricsTest, WeightedMeanAndMeanSquaredError) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output w = ops::Placeholder(root.WithOpName("w"), DT_FLOAT);
  Output y = ops::Placeholder(root.WithOpName("y"), DT_FLOAT);
  metrics::Metric mean = metrics::Mean(root, x, w);
  metrics::Metric plain = metrics::Mean(root, x);
  metrics::Metric mse = metrics::MeanSquaredError(root, y, x);
  metrics::Metric rmse = metrics::RootMeanSquaredError(root, y, x);
  metrics::Metric mae = metrics::MeanAbsoluteError(root, y, x);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(plain.value.node()->name(), "mean_1/value");  // a second "mean" is uniquified
  ClientSession session(root);
  ASSERT_TRUE(session.Run({LocalVariablesInitializer(root)}).ok());
  // Reference: running sums by hand.
  double wsum = 0, wtot = 0, n = 0, tot = 0, sq = 0, ab = 0;
  const std::vector<std::vector<float>> xs = {{1, 2, 3}, {4, -1}, {10}};
  const std::vector<std::vector<float>> ws = {{1, 0, 2}, {0.5f, 0.5f}, {3}};
  const std::vector<std::vector<float>> ys = {{0, 2, 5}, {4, 1}, {7}};
  for (size_t b = 0; b < xs.size(); ++b) {
    const int64_t k = static_cast<int64_t>(xs[b].size());
    for (int64_t i = 0; i < k; ++i) {
      wsum += xs[b][i] * ws[b][i];
      wtot += ws[b][i];
      tot += xs[b][i];
      n += 1;
      sq += (ys[b][i] - xs[b][i]) * (ys[b][i] - xs[b][i]);
      ab += std::fabs(ys[b][i] - xs[b][i]);
    }
    auto r =
        session.Run({{x, Values<float>(xs[b], {k})}, {w, Values<float>(ws[b], {k})}, {y, Values<float>(ys[b], {k})}},
                    {mean.update_op, plain.update_op, mse.update_op, rmse.update_op, mae.update_op});
    EXPECT_NEAR(Scalar(r, 0), wsum / wtot, 1e-6) << "batch " << b;
    EXPECT_NEAR(Scalar(r, 1), tot / n, 1e-6) << "batch " << b;
    EXPECT_NEAR(Scalar(r, 2), sq / n, 1e-5) << "batch " << b;
    EXPECT_NEAR(Scalar(r, 3), std::sqrt(sq / n), 1e-5) << "batch " << b;
    EXPECT_NEAR(Scalar(r, 4), ab / n, 1e-6) << "batch " << b;
  }
  auto v = session.Run({mean.value, mse.value});
  EXPECT_NEAR(Scalar(v, 0), wsum / wtot, 1e-6);
  EXPECT_NEAR(Scalar(v, 1), sq / n, 1e-5);
}

TEST(MetricsTest, TotalsAreLocalNotGlobalOrTrainable) {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), {1}, DT_FLOAT);
  metrics::Metric m = metrics::Mean(root, w.read());
  ASSERT_TRUE(root.ok()) << root.status();
  const std::vector<Output> locals = LocalVariables(root);
  ASSERT_EQ(locals.size(), 2u);
  EXPECT_EQ(locals[0].node()->name(), "mean/total");
  EXPECT_EQ(locals[1].node()->name(), "mean/count");
  for (const Output& t : root.collections()->trainable_variables) EXPECT_EQ(t.node()->name(), "w");
  EXPECT_EQ(root.collections()->initializers.size(), 1u);  // w's only
  // The global initializer leaves the totals uninitialized; the local one sets them.
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  EXPECT_FALSE(session.Run({m.value}).ok());
  ASSERT_TRUE(session.Run({LocalVariablesInitializer(root)}).ok());
  EXPECT_EQ(Scalar(session.Run({m.value})), 0.0f);
}

TEST(MetricsTest, BadInputsAreRecorded) {
  Scope a = Scope::NewRootScope();
  metrics::Accuracy(a, ops::Const(a, {1, 2, 3}), ops::Const(a, {1, 2}));
  EXPECT_THAT(std::string(a.status().message()), HasSubstr("not compatible"));
  Scope b = Scope::NewRootScope();
  metrics::Mean(b, ops::Const(b, {std::string("x")}));
  EXPECT_FALSE(b.ok());
  Scope c = Scope::NewRootScope();
  metrics::Mean(c, ops::Const(c, {1.0f, 2.0f}), ops::Const(c, {{1.0f, 2.0f}, {3.0f, 4.0f}}));
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("broadcast"));
}

}  // namespace
}  // namespace dflow
