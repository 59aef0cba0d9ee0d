// Op fusion seen from a session (graph/op_fusion.h): a small CNN trains to the same losses and
// weights with SessionOptions::fuse_ops on and off, the fused session runs _FusedConv2D and
// _FusedMatMul in place of the separate ops, and a fetched intermediate keeps its chain apart.
#include <set>

#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

struct Net {
  Scope root = Scope::NewRootScope();
  Output x, labels, conv, relu, loss;
  Operation train;
  std::vector<Output> vars;
};

// conv 3x3x2->4 + bias + relu / maxpool 2 / fc 32 + relu / fc 3, softmax cross-entropy, SGD;
// initial values from fixed seeds, so two builds start from the same weights.
std::unique_ptr<Net> BuildNet() {
  auto n = std::make_unique<Net>();
  Scope& s = n->root;
  n->x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, PartialTensorShape({8, 8, 8, 2}));
  n->labels = ops::Placeholder(s.WithOpName("labels"), DT_INT32, PartialTensorShape({8}));
  auto var = [&](const std::string& name, const TensorShape& shape, int64_t seed) {
    Variable v = Variable::Create(s.WithOpName(name), shape, DT_FLOAT, init::TruncatedNormal(0, 0.3, seed));
    n->vars.push_back(v.ref());
    return v.read();
  };
  Output w1 = var("w1", {3, 3, 2, 4}, 1), b1 = var("b1", {4}, 2);
  n->conv = ops::Conv2D(s.WithOpName("conv"), n->x, w1);
  n->relu = ops::Relu(s.WithOpName("relu"), ops::BiasAdd(s.WithOpName("bias_add"), n->conv, b1));
  Output pool = ops::MaxPool(s, n->relu, {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  Output flat = ops::Reshape(s, pool, {8, 4 * 4 * 4});
  Output w2 = var("w2", {64, 32}, 3), b2 = var("b2", {32}, 4);
  Output h = ops::Relu(s, ops::BiasAdd(s, ops::MatMul(s, flat, w2), b2));
  Output w3 = var("w3", {32, 3}, 5), b3 = var("b3", {3}, 6);
  Output logits = ops::BiasAdd(s, ops::MatMul(s, h, w3), b3);
  Operation xent = ops::BuildOp(s, "SparseSoftmaxCrossEntropyWithLogits", {logits, n->labels});
  n->loss = ops::Mean(s, Output(xent, 0), {0});
  std::vector<Output> grads = Gradients(s, {n->loss}, n->vars);
  std::vector<Operation> updates;
  for (size_t i = 0; i < n->vars.size(); ++i) {
    updates.push_back(ops::BuildOp(s, "ApplyGradientDescent", {n->vars[i], 0.1f, grads[i]}));
  }
  n->train = ops::Group(s, updates);
  return n;
}

struct Trained {
  std::vector<float> losses;
  std::vector<Tensor> weights;
  std::multiset<std::string> ops_run;  // the ops of one training step
};

Trained Train(bool fuse) {
  std::unique_ptr<Net> n = BuildNet();
  EXPECT_TRUE(n->root.ok()) << n->root.status();
  SessionOptions o;
  o.fuse_ops = fuse;
  ClientSession session(n->root, o);
  EXPECT_TRUE(session.Run({GlobalVariablesInitializer(n->root)}).ok());
  Tensor x(DT_FLOAT, TensorShape{8, 8, 8, 2});
  for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = std::sin(0.37f * float(i));
  Tensor labels(DT_INT32, TensorShape{8});
  for (int i = 0; i < 8; ++i) labels.flat<int32_t>()[i] = i % 3;
  Trained t;
  for (int step = 0; step < 6; ++step) {
    RunMetadata md;
    auto r = session.Run({{n->x, x}, {n->labels, labels}}, {n->loss}, {n->train}, &md);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return t;
    t.losses.push_back((*r)[0].scalar<float>());
    if (step == 0) {
      for (const NodeExecStats& st : md.step_stats) t.ops_run.insert(st.op);
    }
  }
  auto w = session.Run(n->vars);
  EXPECT_TRUE(w.ok()) << w.status();
  if (w.ok()) t.weights = *w;
  return t;
}

TEST(OpFusionSessionTest, TrainingMatchesTheUnfusedGraph) {
  const Trained fused = Train(true);
  const Trained plain = Train(false);
  ASSERT_EQ(fused.losses.size(), 6u);
  ASSERT_EQ(plain.losses.size(), 6u);
  // The fused step ran the fused kernels in place of the separate ops.
  EXPECT_EQ(fused.ops_run.count("_FusedConv2D"), 1u);
  EXPECT_EQ(fused.ops_run.count("_FusedMatMul"), 2u);
  EXPECT_EQ(fused.ops_run.count("Conv2D"), 0u);
  EXPECT_EQ(fused.ops_run.count("BiasAdd"), 0u);
  EXPECT_EQ(fused.ops_run.count("Relu"), 0u);
  EXPECT_EQ(plain.ops_run.count("_FusedConv2D") + plain.ops_run.count("_FusedMatMul"), 0u);
  EXPECT_EQ(plain.ops_run.count("BiasAdd"), 3u);
  // The gradient ops are untouched.
  EXPECT_EQ(fused.ops_run.count("ReluGrad"), 2u);
  EXPECT_EQ(fused.ops_run.count("BiasAddGrad"), 3u);
  EXPECT_EQ(fused.ops_run.count("Conv2DBackpropFilter"), 1u);
  // Same training, up to float rounding.
  EXPECT_LT(plain.losses.back(), plain.losses.front());
  for (size_t i = 0; i < fused.losses.size(); ++i) {
    EXPECT_NEAR(fused.losses[i], plain.losses[i], 1e-4 * std::max(1.0f, std::abs(plain.losses[i]))) << "step " << i;
  }
  ASSERT_EQ(fused.weights.size(), plain.weights.size());
  for (size_t v = 0; v < fused.weights.size(); ++v) {
    ASSERT_EQ(fused.weights[v].shape(), plain.weights[v].shape());
    for (int64_t i = 0; i < fused.weights[v].NumElements(); ++i) {
      ASSERT_NEAR(fused.weights[v].flat<float>()[i], plain.weights[v].flat<float>()[i], 1e-4)
          << "var " << v << " " << i;
    }
  }
}

// Fetching the convolution's output keeps its chain apart (the value must exist); the values
// are the unfused ones.
TEST(OpFusionSessionTest, FetchedIntermediateIsNotFusedAway) {
  std::unique_ptr<Net> n = BuildNet();
  ASSERT_TRUE(n->root.ok()) << n->root.status();
  ClientSession session(n->root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(n->root)}).ok());
  Tensor x(DT_FLOAT, TensorShape{8, 8, 8, 2});
  for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = std::cos(0.21f * float(i));
  RunMetadata md;
  auto r = session.Run({{n->x, x}}, {n->conv, n->relu}, {}, &md);
  ASSERT_TRUE(r.ok()) << r.status();
  std::multiset<std::string> ran;
  for (const NodeExecStats& st : md.step_stats) ran.insert(st.op);
  EXPECT_EQ(ran.count("Conv2D"), 1u);
  EXPECT_EQ(ran.count("_FusedConv2D"), 0u);
  // relu = max(conv + b1, 0), with b1 read from the session.
  auto b1 = session.Run({n->vars[1]});
  ASSERT_TRUE(b1.ok()) << b1.status();
  const Tensor& conv = (*r)[0];
  const Tensor& relu = (*r)[1];
  ASSERT_EQ(conv.shape(), relu.shape());
  for (int64_t i = 0; i < conv.NumElements(); ++i) {
    const float want = std::max(0.0f, conv.flat<float>()[i] + (*b1)[0].flat<float>()[i % 4]);
    ASSERT_EQ(relu.flat<float>()[i], want) << i;
  }
}

}  // namespace
}  // namespace dflow
