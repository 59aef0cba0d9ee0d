// Heads: predictions, losses and metric values for fixed logits and labels against hand-computed
// values, the loss reductions, and bad logits and labels.
#include <cmath>
#include <vector>

#include "dflow/dflow.h"
#include "dflow/model_fn.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

namespace est = estimator;
using ::testing::HasSubstr;

template <typename T>
Tensor Values(const std::vector<T>& v, const TensorShape& shape) {
  return Tensor::FromValues<T>(v, shape).value();
}
std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.flat<float>().begin(), t.flat<float>().end());
}

// Runs every eval metric's update op once, then returns the metrics' values and the loss.
std::map<std::string, float> EvalOnce(const Scope& root, const est::EstimatorSpec& spec) {
  ClientSession session(root);
  EXPECT_TRUE(session.Run({LocalVariablesInitializer(root)}).ok());
  std::vector<Output> updates, values;
  std::vector<std::string> keys;
  for (const auto& [k, m] : spec.eval_metric_ops) {
    keys.push_back(k);
    updates.push_back(m.update_op);
    values.push_back(m.value);
  }
  EXPECT_TRUE(session.Run(updates).ok());
  values.push_back(spec.loss);
  auto out = session.Run(values);
  EXPECT_TRUE(out.ok()) << out.status();
  std::map<std::string, float> r;
  if (!out.ok()) return r;
  for (size_t i = 0; i < keys.size(); ++i) r[keys[i]] = (*out)[i].scalar<float>();
  r["<loss tensor>"] = out->back().scalar<float>();
  return r;
}

TEST(MultiClassHeadTest, EvalValuesByHand) {
  Scope root = Scope::NewRootScope();
  Output logits = ops::Const(root, Values<float>({1, 2, 3, 3, 2, 1}, {2, 3}));
  Output labels = ops::Const(root, Values<int64_t>({2, 1}, {2, 1}));
  auto spec = est::MultiClassHead(3)->CreateEstimatorSpec(root, logits, labels, est::ModeKeys::kEval, nullptr);
  ASSERT_TRUE(spec.ok()) << spec.status();
  // softmax(1, 2, 3) = (0.0900, 0.2447, 0.6652); the second row reversed.
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  const double ce0 = -std::log(std::exp(3.0) / z), ce1 = -std::log(std::exp(2.0) / z);
  auto m = EvalOnce(root, *spec);
  EXPECT_NEAR(m["accuracy"], 0.5, 1e-6);  // argmax 2 (right), 0 (wrong)
  EXPECT_NEAR(m["average_loss"], (ce0 + ce1) / 2, 1e-5);
  EXPECT_NEAR(m["loss"], (ce0 + ce1) / 2, 1e-5);
  EXPECT_NEAR(m["<loss tensor>"], (ce0 + ce1) / 2, 1e-5);
  ClientSession session(root);
  auto p = session.Run({spec->predictions["class_ids"], spec->predictions["probabilities"],
                        spec->predictions["classes"]});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ((*p)[0].shape(), TensorShape({2, 1}));
  EXPECT_EQ((*p)[0].flat<int64_t>()[0], 2);
  EXPECT_EQ((*p)[0].flat<int64_t>()[1], 0);
  EXPECT_NEAR(Floats((*p)[1])[2], std::exp(3.0) / z, 1e-6);
  EXPECT_EQ((*p)[2].flat<std::string>()[0], "2");
  EXPECT_NE(root.graph()->FindNode("metrics/accuracy/total"), nullptr);
  EXPECT_NE(root.graph()->FindNode("metrics/average_loss/count"), nullptr);
}

TEST(MultiClassHeadTest, SumReductionAndLabelChecks) {
  Scope root = Scope::NewRootScope();
  Output logits = ops::Const(root, Values<float>({0, 0, 0, 0, 0, 0}, {2, 3}));
  Output labels = ops::Placeholder(root, DT_INT32, PartialTensorShape({-1}));
  auto spec = est::MultiClassHead(3, est::LossReduction::kSum)
                  ->CreateEstimatorSpec(root, logits, labels, est::ModeKeys::kEval, nullptr);
  ASSERT_TRUE(spec.ok()) << spec.status();
  ClientSession session(root);
  auto loss = session.Run({{labels, Values<int32_t>({0, 2}, {2})}}, {spec->loss});
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_NEAR((*loss)[0].scalar<float>(), 2 * std::log(3.0), 1e-5);  // summed, not averaged
  auto bad = session.Run({{labels, Values<int32_t>({0, 3}, {2})}}, {spec->loss});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("Labels must be <= n_classes - 1"));
  auto neg = session.Run({{labels, Values<int32_t>({-1, 0}, {2})}}, {spec->loss});
  ASSERT_FALSE(neg.ok());
  EXPECT_THAT(std::string(neg.status().message()), HasSubstr("Labels must be >= 0"));
}

TEST(MultiClassHeadTest, BadLogitsAndLabels) {
  Scope root = Scope::NewRootScope();
  Output logits = ops::Const(root, Values<float>({0, 0, 0, 0}, {2, 2}));
  Output labels = ops::Const(root, Values<int64_t>({0, 1}, {2}));
  auto wrong = est::MultiClassHead(3)->CreateEstimatorSpec(root, logits, labels, est::ModeKeys::kEval, nullptr);
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(std::string(wrong.status().message()), HasSubstr("logits shape must be [D0, 3]"));
  Output l3 = ops::Const(root, Values<float>({0, 0, 0}, {1, 3}));
  auto floats = est::MultiClassHead(3)->CreateEstimatorSpec(root, l3, ops::Const(root, Values<float>({1}, {1})),
                                                            est::ModeKeys::kEval, nullptr);
  EXPECT_FALSE(floats.ok());
  auto no_labels = est::MultiClassHead(3)->CreateEstimatorSpec(root, l3, Output(), est::ModeKeys::kEval, nullptr);
  EXPECT_FALSE(no_labels.ok());
  auto no_opt = est::MultiClassHead(3)->CreateEstimatorSpec(root, l3, ops::Const(root, Values<int64_t>({1}, {1})),
                                                            est::ModeKeys::kTrain, nullptr);
  EXPECT_FALSE(no_opt.ok());
  EXPECT_FALSE(est::ClassificationHead(1).ok());
  auto two = est::MultiClassHead(2)->CreateEstimatorSpec(root, logits, labels, est::ModeKeys::kEval, nullptr);
  EXPECT_FALSE(two.ok());
}

TEST(BinaryClassHeadTest, EvalValuesByHand) {
  Scope root = Scope::NewRootScope();
  Output logits = ops::Const(root, Values<float>({-1, 2}, {2, 1}));
  Output labels = ops::Const(root, Values<int32_t>({0, 0}, {2}));
  auto spec = est::BinaryClassHead()->CreateEstimatorSpec(root, logits, labels, est::ModeKeys::kEval, nullptr);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const double l0 = std::log1p(std::exp(-1.0)), l1 = 2 + std::log1p(std::exp(-2.0));
  auto sig = [](double x) { return 1 / (1 + std::exp(-x)); };
  auto m = EvalOnce(root, *spec);
  EXPECT_NEAR(m["accuracy"], 0.5, 1e-6);
  EXPECT_NEAR(m["average_loss"], (l0 + l1) / 2, 1e-5);
  EXPECT_NEAR(m["loss"], (l0 + l1) / 2, 1e-5);
  EXPECT_NEAR(m["label/mean"], 0.0, 1e-6);
  EXPECT_NEAR(m["accuracy_baseline"], 1.0, 1e-6);
  EXPECT_NEAR(m["prediction/mean"], (sig(-1) + sig(2)) / 2, 1e-6);
  ClientSession session(root);
  auto p = session.Run({spec->predictions["probabilities"], spec->predictions["class_ids"]});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_NEAR(Floats((*p)[0])[0], 1 - sig(-1), 1e-6);
  EXPECT_NEAR(Floats((*p)[0])[3], sig(2), 1e-6);
  EXPECT_EQ((*p)[1].flat<int64_t>()[0], 0);
  EXPECT_EQ((*p)[1].flat<int64_t>()[1], 1);
  // A label of 2 is not a binary label.
  Scope r2 = Scope::NewRootScope();
  auto spec2 = est::BinaryClassHead()->CreateEstimatorSpec(r2, ops::Const(r2, Values<float>({1}, {1, 1})),
                                                           ops::Const(r2, Values<int64_t>({2}, {1})),
                                                           est::ModeKeys::kEval, nullptr);
  ASSERT_TRUE(spec2.ok()) << spec2.status();
  EXPECT_FALSE(ClientSession(r2).Run({spec2->loss}).ok());
}

TEST(RegressionHeadTest, EvalValuesByHand) {
  Scope root = Scope::NewRootScope();
  Output logits = ops::Const(root, Values<float>({1, 4, 3, 0}, {2, 2}));
  Output labels = ops::Const(root, Values<double>({2, 2, 2, 2}, {2, 2}));
  auto spec = est::RegressionHead(2)->CreateEstimatorSpec(root, logits, labels, est::ModeKeys::kEval, nullptr);
  ASSERT_TRUE(spec.ok()) << spec.status();
  auto m = EvalOnce(root, *spec);
  EXPECT_NEAR(m["average_loss"], (1 + 4 + 1 + 4) / 4.0, 1e-6);  // over every element
  EXPECT_NEAR(m["<loss tensor>"], 2.5, 1e-6);
  EXPECT_NEAR(m["prediction/mean"], 2.0, 1e-6);
  EXPECT_NEAR(m["label/mean"], 2.0, 1e-6);
  auto bad = est::RegressionHead(3)->CreateEstimatorSpec(root, logits, labels, est::ModeKeys::kEval, nullptr);
  EXPECT_FALSE(bad.ok());
  auto pred = est::RegressionHead(2)->CreateEstimatorSpec(root, logits, Output(), est::ModeKeys::kPredict, nullptr);
  ASSERT_TRUE(pred.ok()) << pred.status();
  EXPECT_FALSE(pred->loss.valid());
  EXPECT_TRUE(pred->eval_metric_ops.empty());
  EXPECT_EQ(pred->predictions.count("predictions"), 1u);
}

}  // namespace
}  // namespace dflow
