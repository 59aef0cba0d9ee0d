// The NN op functions of the client API: Dropout's semantics, loss structs, and a small
// convolutional network trained end to end through Gradients.
#include "dflow/nn_ops.h"

#include <cmath>
#include <random>

#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

Tensor Iota(const TensorShape& s, float scale = 1) {
  Tensor t(DT_FLOAT, s);
  for (int64_t i = 0; i < t.NumElements(); ++i) t.flat<float>()[i] = scale * float(i + 1);
  return t;
}

TEST(NNOpsApiTest, DropoutWithKeepProbOneReturnsXExactly) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT);
  Output y = ops::Dropout(root, x, 1.0f, /*seed=*/7);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_THAT(y.name(), HasSubstr("dropout/"));
  Tensor xv = Iota(TensorShape{64, 33}, 0.37f);
  auto r = ClientSession(root).Run({{x, xv}}, {y});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ((*r)[0].shape(), xv.shape());
  for (int64_t i = 0; i < xv.NumElements(); ++i) ASSERT_EQ((*r)[0].flat<float>()[i], xv.flat<float>()[i]) << i;
}

TEST(NNOpsApiTest, DropoutKeepsAboutKeepProbAndScales) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  Output keep = ops::Placeholder(root, DT_DOUBLE);
  Output y = ops::Dropout(root, x, keep, /*seed=*/3);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  Tensor xv(DT_DOUBLE, TensorShape{100, 100});
  for (double& v : xv.flat<double>()) v = 2.0;
  for (double p : {0.25, 0.5, 0.9}) {
    auto r = session.Run({{x, xv}, {keep, Tensor(p)}}, {y});
    ASSERT_TRUE(r.ok()) << r.status();
    int64_t kept = 0;
    for (double v : (*r)[0].flat<double>()) {
      if (v != 0) {
        EXPECT_DOUBLE_EQ(v, 2.0 / p);
        ++kept;
      }
    }
    // 10000 Bernoulli(p) draws: within 5 standard deviations.
    const double sd = std::sqrt(1e4 * p * (1 - p));
    EXPECT_NEAR(double(kept), 1e4 * p, 5 * sd) << p;
  }
}

TEST(NNOpsApiTest, DropoutSeedsAreDeterministic) {
  auto run = [](int64_t seed) {
    Scope root = Scope::NewRootScope();
    Output y = ops::Dropout(root, ops::Const(root, Iota(TensorShape{50})), 0.5f, seed);
    auto r = ClientSession(root).Run({y});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? (*r)[0].ToString() : std::string();
  };
  EXPECT_EQ(run(11), run(11));
  EXPECT_NE(run(11), run(12));
}

TEST(NNOpsApiTest, DropoutRejectsLiteralKeepProbOutsideRange) {
  for (float p : {0.0f, -0.5f, 1.5f}) {
    Scope root = Scope::NewRootScope();
    Output y = ops::Dropout(root, ops::Const(root, Iota(TensorShape{4})), p);
    EXPECT_FALSE(y.valid());
    EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument) << p;
    EXPECT_THAT(std::string(root.status().message()), HasSubstr("keep_prob"));
  }
}

TEST(NNOpsApiTest, DropoutGradientIsTheMaskScaled) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT, PartialTensorShape({200}));
  Output y = ops::Dropout(root, x, 0.5f, /*seed=*/5);
  std::vector<Output> g = Gradients(root, {y}, {x});
  ASSERT_TRUE(root.ok()) << root.status();
  auto r = ClientSession(root).Run({{x, Iota(TensorShape{200})}}, {y, g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  for (int i = 0; i < 200; ++i) {
    const float yi = (*r)[0].flat<float>()[i], gi = (*r)[1].flat<float>()[i];
    EXPECT_EQ(gi, yi == 0 ? 0.0f : 2.0f) << i;
  }
}

TEST(NNOpsApiTest, CrossEntropyStructs) {
  Scope root = Scope::NewRootScope();
  Output logits = ops::Const(root, {{0.0f, 0.0f}, {1.0f, 1.0f}});
  auto dense = ops::SoftmaxCrossEntropyWithLogits(root, logits, ops::Const(root, {{1.0f, 0.0f}, {0.5f, 0.5f}}));
  auto sparse = ops::SparseSoftmaxCrossEntropyWithLogits(root, logits, ops::Const(root, {1, 0}));
  auto bad = ops::SparseSoftmaxCrossEntropyWithLogits(root, logits, ops::Const(root, {2, 0}));
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  auto r = session.Run({dense.loss, dense.backprop, sparse.loss});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR((*r)[0].flat<float>()[0], std::log(2.0), 1e-6);
  EXPECT_NEAR((*r)[0].flat<float>()[1], std::log(2.0), 1e-6);
  const std::vector<float> want = {-0.5f, 0.5f, 0.0f, 0.0f};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR((*r)[1].flat<float>()[i], want[i], 1e-7) << i;
  EXPECT_NEAR((*r)[2].flat<float>()[0], std::log(2.0), 1e-6);
  auto err = session.Run({bad.loss});
  EXPECT_EQ(err.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(err.status().message()), HasSubstr("label value of 2"));
}

// conv -> bias -> relu -> max pool -> reshape -> softmax cross entropy, trained by plain
// gradient steps computed through Gradients: the loss must fall.
TEST(NNOpsApiTest, SmallConvNetLearns) {
  Scope root = Scope::NewRootScope();
  Output images = ops::Placeholder(root, DT_FLOAT, PartialTensorShape({4, 6, 6, 1}));
  Output labels = ops::Placeholder(root, DT_INT32, PartialTensorShape({4}));
  Output filter = ops::Placeholder(root, DT_FLOAT, PartialTensorShape({3, 3, 1, 4}));
  Output bias = ops::Placeholder(root, DT_FLOAT, PartialTensorShape({4}));
  Output weights = ops::Placeholder(root, DT_FLOAT, PartialTensorShape({36, 2}));
  ops::Conv2DAttrs conv;
  conv.padding = "SAME";
  Output h = ops::Relu(root, ops::BiasAdd(root, ops::Conv2D(root, images, filter, conv), bias));
  h = ops::MaxPool(root, h, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");  // [4, 3, 3, 4]
  Output logits = ops::MatMul(root, ops::Reshape(root, h, {4, 36}), weights);
  Output loss = ops::L2Loss(root, ops::SparseSoftmaxCrossEntropyWithLogits(root, logits, labels).loss);
  std::vector<Output> grads = Gradients(root, {loss}, {filter, bias, weights});
  ASSERT_TRUE(root.ok()) << root.status();

  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0, 0.5f);
  auto random = [&](const TensorShape& s) {
    Tensor t(DT_FLOAT, s);
    for (float& v : t.flat<float>()) v = normal(rng);
    return t;
  };
  Tensor img = random(TensorShape{4, 6, 6, 1});
  Tensor lab(DT_INT32, TensorShape{4});
  for (int i = 0; i < 4; ++i) lab.flat<int32_t>()[i] = i % 2;
  std::vector<Tensor> params = {random(TensorShape{3, 3, 1, 4}), Tensor(DT_FLOAT, TensorShape{4}),
                                random(TensorShape{36, 2})};
  for (float& v : params[1].flat<float>()) v = 0.1f;
  ClientSession session(root);
  float first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    auto r = session.Run({{images, img}, {labels, lab}, {filter, params[0]}, {bias, params[1]}, {weights, params[2]}},
                         {loss, grads[0], grads[1], grads[2]});
    ASSERT_TRUE(r.ok()) << r.status();
    if (step == 0) first = (*r)[0].scalar<float>();
    last = (*r)[0].scalar<float>();
    for (int p = 0; p < 3; ++p) {
      ASSERT_EQ((*r)[1 + p].shape(), params[p].shape());
      for (int64_t i = 0; i < params[p].NumElements(); ++i)
        params[p].flat<float>()[i] -= 0.1f * (*r)[1 + p].flat<float>()[i];
    }
  }
  EXPECT_LT(last, 0.5f * first) << "first " << first << " last " << last;
}

TEST(NNOpsApiTest, BadAttrsAreBuildErrors) {
  Scope root = Scope::NewRootScope();
  ops::Conv2DAttrs conv;
  conv.strides = {1, 0, 1, 1};
  Output y = ops::Conv2D(root, ops::Placeholder(root, DT_FLOAT, PartialTensorShape({1, 4, 4, 1})),
                         ops::Placeholder(root, DT_FLOAT, PartialTensorShape({2, 2, 1, 1})), conv);
  EXPECT_FALSE(y.valid());
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  Scope root2 = Scope::NewRootScope();
  Output p = ops::AvgPool(root2, ops::Placeholder(root2, DT_FLOAT, PartialTensorShape({1, 4, 4})), {1, 2, 2, 1},
                          {1, 2, 2, 1}, "SAME");
  EXPECT_FALSE(p.valid());
  EXPECT_EQ(root2.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow
