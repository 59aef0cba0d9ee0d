// Canned model functions trained with a plain ClientSession loop on small synthetic problems:
// the DNN classifier reaches a known accuracy on separable clusters, its EVAL graph (variables
// copied by name, as a checkpoint would restore them) computes the same accuracy and loss as a
// hand computation from its predictions; linear and DNN regressors and the linear classifier
// learn; variable names are TensorFlow's; dropout only in TRAIN.
#include "dflow/canned.h"

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "dflow/dflow.h"
#include "dflow/lookup_ops.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

namespace est = estimator;
namespace fc = feature_column;
using ::testing::HasSubstr;

template <typename T>
Tensor Values(const std::vector<T>& v, const TensorShape& shape) {
  return Tensor::FromValues<T>(v, shape).value();
}

// Three well separated clusters in the plane (class c around angle 2 pi c / 3, radius 3, jitter
// +-1 by a fixed LCG) and a noise tag string that carries no information.
struct Clusters {
  std::vector<float> x;
  std::vector<std::string> tag;
  std::vector<int64_t> label;
  int64_t n = 0;
  explicit Clusters(int64_t count) : n(count) {
    uint64_t state = 12345;
    auto next = [&] {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      return static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53);
    };
    for (int64_t i = 0; i < n; ++i) {
      const int64_t c = i % 3;
      const double a = 2 * M_PI * static_cast<double>(c) / 3;
      x.push_back(static_cast<float>(3 * std::cos(a) + (2 * next() - 1)));
      x.push_back(static_cast<float>(3 * std::sin(a) + (2 * next() - 1)));
      const char* tags[] = {"red", "green", "blue", "mauve"};
      tag.push_back(tags[static_cast<int>(next() * 4) % 4]);
      label.push_back(c);
    }
  }
  fc::Features Features(const Scope& root) const {
    return {{"x", ops::Const(root.WithOpName("x"), Values<float>(x, {n, 2}))},
            {"tag", ops::Const(root.WithOpName("tag"), Values<std::string>(tag, {n}))}};
  }
  Output Labels(const Scope& root) const { return ops::Const(root.WithOpName("labels"), Values<int64_t>(label, {n})); }
};

std::vector<fc::Column> ClusterColumns() {
  return {fc::NumericColumn("x", {2}),
          fc::EmbeddingColumn(fc::CategoricalColumnWithVocabularyList("tag", {"red", "green", "blue"}, 1), 2)};
}

// name -> value of every variable of `root`'s graph.
std::map<std::string, Tensor> ReadVariables(const Scope& root, ClientSession* session) {
  std::map<std::string, Tensor> out;
  for (Node* n : root.graph()->nodes()) {
    if (n->op() != "VariableV2") continue;
    auto v = session->Run({Output(n, 0)});
    EXPECT_TRUE(v.ok()) << n->name() << ": " << v.status();
    if (v.ok()) out[n->name()] = (*v)[0];
  }
  return out;
}

TEST(DNNClassifierTest, LearnsSeparableClustersAndEvaluatesLikeAHandComputation) {
  Clusters data(150);
  est::DNNOptions opts;
  opts.hidden_units = {16, 8};
  opts.feature_columns = ClusterColumns();
  est::ModelFn model_fn = est::DNNClassifierModelFn(opts, 3);

  Scope root = Scope::NewRootScope();
  root.SetRandomSeed(7);
  auto spec = model_fn(root, data.Features(root), data.Labels(root), est::ModeKeys::kTrain, {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->train_op.valid());
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root), TablesInitializer(root)}).ok());
  auto first = session.Run({spec->loss});
  ASSERT_TRUE(first.ok()) << first.status();
  for (int step = 0; step < 300; ++step) ASSERT_TRUE(session.Run({spec->train_op}).ok());
  auto last = session.Run({spec->loss, spec->predictions["class_ids"]});
  ASSERT_TRUE(last.ok()) << last.status();
  int correct = 0;
  for (int64_t i = 0; i < data.n; ++i) correct += (*last)[1].flat<int64_t>()[i] == data.label[i];
  EXPECT_GE(correct, 147) << "accuracy " << correct / 150.0;  // 98%: the clusters do not overlap
  EXPECT_LT((*last)[0].scalar<float>(), 0.2f * (*first)[0].scalar<float>());

  // Variable names and shapes are TensorFlow's.
  std::map<std::string, Tensor> vars = ReadVariables(root, &session);
  const std::map<std::string, TensorShape> want = {
      {"dnn/input_from_feature_columns/input_layer/tag_embedding/embedding_weights", TensorShape({4, 2})},
      {"dnn/hiddenlayer_0/kernel", TensorShape({4, 16})},
      {"dnn/hiddenlayer_0/bias", TensorShape({16})},
      {"dnn/hiddenlayer_1/kernel", TensorShape({16, 8})},
      {"dnn/hiddenlayer_1/bias", TensorShape({8})},
      {"dnn/logits/kernel", TensorShape({8, 3})},
      {"dnn/logits/bias", TensorShape({3})},
      {"global_step", TensorShape({})},
  };
  for (const auto& [name, shape] : want) {
    ASSERT_EQ(vars.count(name), 1u) << name;
    EXPECT_EQ(vars[name].shape(), shape) << name;
  }
  EXPECT_EQ(vars["global_step"].scalar<int64_t>(), 300);
  EXPECT_EQ(vars.count("dnn/hiddenlayer_0/kernel/Adagrad"), 1u);  // the default optimizer's slot

  // EVAL in a graph of its own, the trained values copied in by name.
  Scope eval = Scope::NewRootScope();
  auto espec = model_fn(eval, data.Features(eval), data.Labels(eval), est::ModeKeys::kEval, {});
  ASSERT_TRUE(espec.ok()) << espec.status();
  EXPECT_FALSE(espec->train_op.valid());
  std::vector<Operation> restore;
  int model_vars = 0;
  std::set<std::string> locals;
  for (const Output& v : LocalVariables(eval)) locals.insert(v.node()->name());
  EXPECT_EQ(locals.count("metrics/accuracy/total"), 1u);
  for (Node* n : eval.graph()->nodes()) {
    if (n->op() != "VariableV2" || locals.count(n->name()) > 0) continue;
    ASSERT_EQ(vars.count(n->name()), 1u) << n->name() << " is not in the training graph";
    restore.push_back(ops::Assign(eval, Output(n, 0), ops::Const(eval, vars[n->name()])).op());
    ++model_vars;
  }
  EXPECT_EQ(model_vars, 7);  // the model's variables only: no global step or slots in EVAL
  ClientSession es(eval);
  ASSERT_TRUE(es.Run(restore).ok());
  ASSERT_TRUE(es.Run({LocalVariablesInitializer(eval), TablesInitializer(eval)}).ok());
  std::vector<Output> updates, values;
  for (const char* k : {"accuracy", "average_loss", "loss"}) {
    ASSERT_EQ(espec->eval_metric_ops.count(k), 1u) << k;
    updates.push_back(espec->eval_metric_ops[k].update_op);
    values.push_back(espec->eval_metric_ops[k].value);
  }
  ASSERT_TRUE(es.Run(updates).ok());
  values.push_back(espec->predictions["probabilities"]);
  auto ev = es.Run(values);
  ASSERT_TRUE(ev.ok()) << ev.status();
  double ce = 0;
  for (int64_t i = 0; i < data.n; ++i) ce -= std::log((*ev)[3].flat<float>()[i * 3 + data.label[i]]);
  EXPECT_NEAR((*ev)[0].scalar<float>(), correct / 150.0, 1e-6);
  EXPECT_NEAR((*ev)[1].scalar<float>(), ce / 150, 1e-4);
  EXPECT_NEAR((*ev)[2].scalar<float>(), ce / 150, 1e-4);
  EXPECT_NEAR((*ev)[1].scalar<float>(), (*last)[0].scalar<float>(), 1e-4);  // the same model

  // PREDICT needs no labels and builds no loss.
  Scope pred = Scope::NewRootScope();
  auto pspec = model_fn(pred, data.Features(pred), Output(), est::ModeKeys::kPredict, {});
  ASSERT_TRUE(pspec.ok()) << pspec.status();
  EXPECT_FALSE(pspec->loss.valid());
  for (const char* k : {"logits", "probabilities", "class_ids", "classes"})
    EXPECT_EQ(pspec->predictions.count(k), 1u) << k;
}

TEST(DNNClassifierTest, DropoutOnlyWhenTraining) {
  Clusters data(30);
  est::DNNOptions opts;
  opts.hidden_units = {8};
  opts.feature_columns = {fc::NumericColumn("x", {2})};
  opts.dropout = 0.5;
  auto has_dropout = [&](est::ModeKeys mode) {
    Scope root = Scope::NewRootScope();
    auto spec = est::DNNClassifierModelFn(opts, 3)(root, data.Features(root),
                                                   mode == est::ModeKeys::kPredict ? Output() : data.Labels(root), mode,
                                                   {});
    EXPECT_TRUE(spec.ok()) << spec.status();
    for (Node* n : root.graph()->nodes())
      if (n->name().find("dropout") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has_dropout(est::ModeKeys::kTrain));
  EXPECT_FALSE(has_dropout(est::ModeKeys::kEval));
  EXPECT_FALSE(has_dropout(est::ModeKeys::kPredict));
}

TEST(DNNClassifierTest, BadOptions) {
  Clusters data(3);
  auto run = [&](est::DNNOptions o, int64_t n_classes = 3) {
    Scope root = Scope::NewRootScope();
    return est::DNNClassifierModelFn(o, n_classes)(root, data.Features(root), data.Labels(root), est::ModeKeys::kTrain,
                                                   {})
        .status();
  };
  est::DNNOptions o;
  o.hidden_units = {4};
  o.feature_columns = {fc::NumericColumn("x", {2})};
  EXPECT_TRUE(run(o).ok());
  EXPECT_FALSE(run(o, 1).ok());
  est::DNNOptions zero = o;
  zero.hidden_units = {4, 0};
  EXPECT_THAT(std::string(run(zero).message()), HasSubstr("hidden_units[1]"));
  est::DNNOptions drop = o;
  drop.dropout = 1;
  EXPECT_FALSE(run(drop).ok());
  est::DNNOptions cat = o;
  cat.feature_columns = {fc::CategoricalColumnWithIdentity("x", 3)};
  EXPECT_FALSE(run(cat).ok());
  est::DNNOptions none = o;
  none.feature_columns = {};
  EXPECT_FALSE(run(none).ok());
}

TEST(LinearClassifierTest, LearnsABinaryProblemWithTensorFlowNames) {
  // label = x0 > x1, with a bucketized copy of x0 as a second column.
  const int64_t n = 200;
  std::vector<float> x;
  std::vector<int64_t> y;
  uint64_t state = 99;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const float a = static_cast<float>((state >> 40) % 2001) / 1000.0f - 1.0f;
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const float b = static_cast<float>((state >> 40) % 2001) / 1000.0f - 1.0f;
    x.push_back(a);
    x.push_back(b);
    y.push_back(a > b ? 1 : 0);
  }
  fc::Column xs = fc::NumericColumn("x", {2});
  est::LinearOptions opts;
  opts.feature_columns = {xs, fc::BucketizedColumn(xs, {-0.5f, 0, 0.5f})};
  Scope root = Scope::NewRootScope();
  fc::Features f = {{"x", ops::Const(root, Values<float>(x, {n, 2}))}};
  auto spec = est::LinearClassifierModelFn(opts)(root, f, ops::Const(root, Values<int64_t>(y, {n, 1})),
                                                 est::ModeKeys::kTrain, {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  for (const char* name : {"linear/linear_model/x/weights", "linear/linear_model/x_bucketized/weights",
                           "linear/linear_model/bias_weights"}) {
    EXPECT_NE(root.graph()->FindNode(name), nullptr) << name;
  }
  EXPECT_NE(root.graph()->FindNode("linear/linear_model/x/weights/Ftrl"), nullptr);  // FTRL by default
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  for (int step = 0; step < 1000; ++step) ASSERT_TRUE(session.Run({spec->train_op}).ok());
  auto out = session.Run({spec->predictions["class_ids"]});
  ASSERT_TRUE(out.ok()) << out.status();
  int correct = 0;
  for (int64_t i = 0; i < n; ++i) correct += (*out)[0].flat<int64_t>()[i] == y[i];
  EXPECT_GE(correct, 190) << correct;  // 95%
}

// y = 2 x0 - x1 + 1 (one output) on a grid; both regressors must get close.
TEST(RegressorsTest, LinearAndDNNRegressorsFitALinearFunction) {
  const int64_t n = 64;
  std::vector<float> x, y;
  for (int64_t i = 0; i < n; ++i) {
    const float a = static_cast<float>(i % 8) / 4.0f - 1.0f, b = static_cast<float>(i / 8) / 4.0f - 1.0f;
    x.push_back(a);
    x.push_back(b);
    y.push_back(2 * a - b + 1);
  }
  double label_var = 0, mean = 0;
  for (float v : y) mean += v / n;
  for (float v : y) label_var += (v - mean) * (v - mean) / n;
  for (bool dnn : {false, true}) {
    Scope root = Scope::NewRootScope();
    root.SetRandomSeed(3);
    fc::Features f = {{"x", ops::Const(root, Values<float>(x, {n, 2}))}};
    Output labels = ops::Const(root, Values<float>(y, {n}));
    est::ModelFn model_fn;
    if (dnn) {
      est::DNNOptions o;
      o.hidden_units = {16};
      o.feature_columns = {fc::NumericColumn("x", {2})};
      o.optimizer = [] { return std::make_unique<train::AdagradOptimizer>(0.3); };
      model_fn = est::DNNRegressorModelFn(o);
    } else {
      est::LinearOptions o;
      o.feature_columns = {fc::NumericColumn("x", {2})};
      model_fn = est::LinearRegressorModelFn(o);
    }
    auto spec = model_fn(root, f, labels, est::ModeKeys::kTrain, {});
    ASSERT_TRUE(spec.ok()) << spec.status();
    ClientSession session(root);
    ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
    for (int step = 0; step < 400; ++step) ASSERT_TRUE(session.Run({spec->train_op}).ok());
    auto loss = session.Run({spec->loss});
    ASSERT_TRUE(loss.ok()) << loss.status();
    // The mean squared error falls below 2% of the labels' variance (a constant predictor's).
    EXPECT_LT((*loss)[0].scalar<float>(), 0.02 * label_var) << (dnn ? "DNN" : "linear");
  }
}

TEST(DefaultOptimizersTest, LinearLearningRateRule) {
  // min(0.2, 1/sqrt(n)): 0.2 up to 25 columns, then 1/sqrt(n). Checked through one FTRL step on
  // a single weight: with accumulator 0.1 and gradient g, FTRL's first step is
  // w = -lr * g / (sqrt(0.1 + g^2) + ... ) — compared between two column counts instead.
  auto first_step = [](size_t columns) {
    Scope root = Scope::NewRootScope();
    Variable w = Variable::Create(root.WithOpName("w"), {1}, DT_FLOAT);
    Output loss = ops::Sum(root, ops::Mul(root, w.read(), 1.0f), 0);
    Operation train = est::DefaultLinearOptimizer(columns)->Minimize(root, loss);
    ClientSession s(root);
    EXPECT_TRUE(s.Run({GlobalVariablesInitializer(root)}).ok());
    EXPECT_TRUE(s.Run({train}).ok());
    return s.Run({w.read()}).value()[0].flat<float>()[0];
  };
  // FTRL's first step is proportional to the learning rate.
  EXPECT_NEAR(first_step(1) / first_step(25), 1.0, 1e-5);
  EXPECT_NEAR(first_step(1) / first_step(100), 0.2 / 0.1, 1e-4);
}

}  // namespace
}  // namespace dflow
