// The training API: every optimizer's values against TensorFlow's update formulas (one and two
// steps, hand-computed), convergence on a quadratic, Minimize with autodiff, initializers of
// slots, the global step and learning-rate schedules. Losses are in losses_test.cc.
#include <cmath>
#include <functional>

#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

const std::vector<double> kTarget = {1.0, -2.0};

// sum((w - t)^2) has the gradient 2 * (w - t); built here without autodiff so that the optimizers
// are tested on their own.
struct Quadratic {
  Scope root = Scope::NewRootScope();
  DType dtype;
  Variable w;
  Output grad;
  explicit Quadratic(DType dt) : dtype(dt) {
    w = Variable::Create(root.WithOpName("w"), {2}, dt, init::Zeros());
    Output t = dt == DT_FLOAT ? ops::Const(root, {1.0f, -2.0f}) : ops::Const(root, {1.0, -2.0});
    grad = ops::Mul(root.WithOpName("grad"), ops::Sub(root, w.read(), t), 2);
  }
};

double At(const Tensor& t, int i) {
  return t.dtype() == DT_FLOAT ? static_cast<double>(t.flat<float>()[i]) : t.flat<double>()[i];
}

// A reference step of one element: (w, g, state, t) -> new w.
using RefStep = std::function<double(double w, double g, std::vector<double>* state, int t)>;

struct Case {
  std::string name;
  std::function<train::Optimizer()> make;
  std::vector<double> state0;  // the reference's per-element state at the start (slots)
  RefStep step;
  int converge_steps;
  double converge_tolerance = 1e-3;
};

std::vector<Case> Cases() {
  std::vector<Case> c;
  c.push_back({"GradientDescent",
               [] { return train::GradientDescentOptimizer(0.1); },
               {},
               [](double w, double g, std::vector<double>*, int) { return w - 0.1 * g; },
               100});
  c.push_back({"Momentum",
               [] { return train::MomentumOptimizer(0.05, 0.9); },
               {0},
               [](double w, double g, std::vector<double>* s, int) {
                 (*s)[0] = 0.9 * (*s)[0] + g;
                 return w - 0.05 * (*s)[0];
               },
               300});
  c.push_back({"NesterovMomentum",
               [] { return train::MomentumOptimizer(0.05, 0.9, true); },
               {0},
               [](double w, double g, std::vector<double>* s, int) {
                 (*s)[0] = 0.9 * (*s)[0] + g;
                 return w - (0.05 * g + 0.05 * 0.9 * (*s)[0]);
               },
               300});
  c.push_back({"Adagrad",
               [] { return train::AdagradOptimizer(0.5); },
               {0.1},
               [](double w, double g, std::vector<double>* s, int) {
                 (*s)[0] += g * g;
                 return w - 0.5 * g / std::sqrt((*s)[0]);
               },
               300});
  c.push_back({"Adam",
               [] { return train::AdamOptimizer(0.1); },
               {0, 0},
               [](double w, double g, std::vector<double>* s, int t) {
                 const double b1 = 0.9, b2 = 0.999;
                 (*s)[0] = b1 * (*s)[0] + (1 - b1) * g;
                 (*s)[1] = b2 * (*s)[1] + (1 - b2) * g * g;
                 const double lr_t = 0.1 * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
                 return w - lr_t * (*s)[0] / (std::sqrt((*s)[1]) + 1e-8);
               },
               1000});
  c.push_back({"RMSProp",
               [] { return train::RMSPropOptimizer(0.01); },
               {1, 0},
               [](double w, double g, std::vector<double>* s, int) {
                 (*s)[0] = 0.9 * (*s)[0] + 0.1 * g * g;
                 (*s)[1] = 0.01 * g / std::sqrt((*s)[0] + 1e-10);
                 return w - (*s)[1];
               },
               500});
  // With momentum RMSProp keeps oscillating around the minimum at about the learning rate.
  c.push_back({"RMSPropMomentum",
               [] { return train::RMSPropOptimizer(0.01, 0.9, 0.5); },
               {1, 0},
               [](double w, double g, std::vector<double>* s, int) {
                 (*s)[0] = 0.9 * (*s)[0] + 0.1 * g * g;
                 (*s)[1] = 0.5 * (*s)[1] + 0.01 * g / std::sqrt((*s)[0] + 1e-10);
                 return w - (*s)[1];
               },
               500,
               1e-2});
  // Centered: ms, mg and mom per element; the step divides by sqrt(ms - mg^2 + epsilon).
  c.push_back({"RMSPropCentered",
               [] { return train::RMSPropOptimizer(0.01, 0.9, 0.5, 1e-2, false, true); },
               {1, 0, 0},
               [](double w, double g, std::vector<double>* s, int) {
                 (*s)[0] = 0.9 * (*s)[0] + 0.1 * g * g;
                 (*s)[1] = 0.9 * (*s)[1] + 0.1 * g;
                 (*s)[2] = 0.5 * (*s)[2] + 0.01 * g / std::sqrt((*s)[0] - (*s)[1] * (*s)[1] + 1e-2);
                 return w - (*s)[2];
               },
               1000,
               1e-3});
  c.push_back({"Ftrl",
               [] { return train::FtrlOptimizer(0.5); },
               {0.1, 0},
               [](double w, double g, std::vector<double>* s, int) {
                 const double lr = 0.5, accum_new = (*s)[0] + g * g;
                 (*s)[1] += g - (std::sqrt(accum_new) - std::sqrt((*s)[0])) / lr * w;
                 (*s)[0] = accum_new;
                 const double quadratic = std::sqrt(accum_new) / lr;
                 return std::abs((*s)[1]) > 0 ? -(*s)[1] / quadratic : 0.0;
               },
               300});
  return c;
}

class OptimizerValuesTest : public ::testing::TestWithParam<std::tuple<int, DType>> {
 protected:
  Case c_ = Cases()[std::get<0>(GetParam())];
  DType dt_ = std::get<1>(GetParam());
};

std::string CaseName(const ::testing::TestParamInfo<std::tuple<int, DType>>& info) {
  return Cases()[std::get<0>(info.param)].name + "_" + DTypeString(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllOptimizers, OptimizerValuesTest,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(Cases().size())),
                                            ::testing::Values(DT_FLOAT, DT_DOUBLE)),
                         CaseName);

TEST_P(OptimizerValuesTest, FirstStepsMatchTensorFlowsFormula) {
  Quadratic q(dt_);
  train::Optimizer opt = c_.make();
  Operation train_op = opt.ApplyGradients(q.root, {{q.grad, q.w.ref()}});
  Operation init = GlobalVariablesInitializer(q.root);
  ASSERT_TRUE(q.root.ok()) << q.root.status();
  ClientSession session(q.root);
  ASSERT_TRUE(session.Run({init}).ok());
  std::vector<double> w = {0, 0};
  std::vector<std::vector<double>> state(2, c_.state0);
  for (int t = 1; t <= 3; ++t) {
    ASSERT_TRUE(session.Run({train_op}).ok());
    auto r = session.Run({q.w.read()});
    ASSERT_TRUE(r.ok()) << r.status();
    for (int i = 0; i < 2; ++i) {
      w[i] = c_.step(w[i], 2 * (w[i] - kTarget[i]), &state[i], t);
      EXPECT_NEAR(At((*r)[0], i), w[i], dt_ == DT_FLOAT ? 2e-6 : 1e-12) << "step " << t << " element " << i;
    }
  }
}

TEST_P(OptimizerValuesTest, ConvergesToTheMinimum) {
  Quadratic q(dt_);
  train::Optimizer opt = c_.make();
  Operation train_op = opt.ApplyGradients(q.root, {{q.grad, q.w.ref()}});
  Operation init = GlobalVariablesInitializer(q.root);
  ClientSession session(q.root);
  ASSERT_TRUE(session.Run({init}).ok());
  for (int t = 0; t < c_.converge_steps; ++t) ASSERT_TRUE(session.Run({train_op}).ok());
  auto r = session.Run({q.w.read()});
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(At((*r)[0], 0), 1.0, c_.converge_tolerance);
  EXPECT_NEAR(At((*r)[0], 1), -2.0, c_.converge_tolerance);
}

TEST(TrainTest, HandComputedSteps) {
  // Gradient descent, lr 0.1, from 0 towards [1, -2]: [0.2, -0.4], then [0.36, -0.72].
  Quadratic q(DT_FLOAT);
  Operation gd = train::GradientDescentOptimizer(0.1f).ApplyGradients(q.root, {{q.grad, q.w.ref()}});
  // Momentum 0.9, lr 0.05: accum [-2, 4] and w [0.1, -0.2]; then accum [-3.6, 7.2], w [0.28, -0.56].
  Quadratic m(DT_FLOAT);
  train::MomentumOptimizer mo(0.05f, 0.9f);
  Operation mom = mo.ApplyGradients(m.root, {{m.grad, m.w.ref()}});
  ClientSession s1(q.root), s2(m.root);
  ASSERT_TRUE(s1.Run({GlobalVariablesInitializer(q.root)}).ok());
  ASSERT_TRUE(s2.Run({GlobalVariablesInitializer(m.root)}).ok());
  ASSERT_TRUE(s1.Run({gd}).ok());
  ASSERT_TRUE(s2.Run({mom}).ok());
  Output accum = mo.GetSlot(m.w.ref(), "momentum");
  ASSERT_TRUE(accum.valid());
  EXPECT_EQ(accum.node()->name(), "w/Momentum");
  auto a = s1.Run({q.w.read()});
  auto b = s2.Run({m.w.read(), accum});
  EXPECT_NEAR(At((*a)[0], 0), 0.2, 1e-7);
  EXPECT_NEAR(At((*a)[0], 1), -0.4, 1e-7);
  EXPECT_NEAR(At((*b)[0], 0), 0.1, 1e-7);
  EXPECT_NEAR(At((*b)[1], 1), 4.0, 1e-7);
  ASSERT_TRUE(s1.Run({gd}).ok());
  ASSERT_TRUE(s2.Run({mom}).ok());
  a = s1.Run({q.w.read()});
  b = s2.Run({m.w.read(), accum});
  EXPECT_NEAR(At((*a)[0], 0), 0.36, 1e-6);
  EXPECT_NEAR(At((*a)[0], 1), -0.72, 1e-6);
  EXPECT_NEAR(At((*b)[0], 0), 0.28, 1e-6);
  EXPECT_NEAR(At((*b)[0], 1), -0.56, 1e-6);
  EXPECT_NEAR(At((*b)[1], 0), -3.6, 1e-6);
}

TEST(TrainTest, AdamAdvancesTheBetaPowers) {
  Quadratic q(DT_DOUBLE);
  Operation adam = train::AdamOptimizer(0.1).ApplyGradients(q.root, {{q.grad, q.w.ref()}});
  ClientSession session(q.root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(q.root)}).ok());
  Output b1(q.root.graph()->FindNode("beta1_power"), 0), b2(q.root.graph()->FindNode("beta2_power"), 0);
  ASSERT_TRUE(b1.valid() && b2.valid());
  auto r = session.Run({b1, b2});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ((*r)[0].scalar<double>(), 0.9);
  EXPECT_DOUBLE_EQ((*r)[1].scalar<double>(), 0.999);
  ASSERT_TRUE(session.Run({adam}).ok());
  ASSERT_TRUE(session.Run({adam}).ok());
  r = session.Run({b1, b2});
  EXPECT_NEAR((*r)[0].scalar<double>(), 0.729, 1e-15);
  EXPECT_NEAR((*r)[1].scalar<double>(), 0.997002999, 1e-15);
}

TEST(TrainTest, InitializerIncludesSlotsAndGlobalStep) {
  Quadratic q(DT_FLOAT);
  Output step = train::CreateGlobalStep(q.root);
  EXPECT_EQ(step.node()->name(), "global_step");
  EXPECT_EQ(step.dtype(), MakeRefType(DT_INT64));
  Operation op = train::AdamOptimizer(0.1f).ApplyGradients(q.root.WithOpName("train"), {{q.grad, q.w.ref()}}, step);
  ASSERT_TRUE(q.root.ok()) << q.root.status();
  EXPECT_EQ(op.name(), "train");
  EXPECT_NE(q.root.graph()->FindNode("train/update_w/ApplyAdam"), nullptr);
  Operation init = GlobalVariablesInitializer(q.root);
  ClientSession session(q.root);
  ASSERT_TRUE(session.Run({init}).ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(session.Run({op}).ok()) << i;
  auto r = session.Run({step});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].scalar<int64_t>(), 5);
}

TEST(TrainTest, InitializerBuiltBeforeTheOptimizerMissesTheSlots) {
  Quadratic q(DT_FLOAT);
  Operation early = GlobalVariablesInitializer(q.root);
  Operation op = train::MomentumOptimizer(0.1f, 0.9f).ApplyGradients(q.root, {{q.grad, q.w.ref()}});
  ClientSession session(q.root);
  ASSERT_TRUE(session.Run({early}).ok());
  Status s = session.Run({op});
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("w/Momentum"));
}

TEST(TrainTest, MinimizeWithAutodiffTrainsAllTrainableVariables) {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), {2}, DT_FLOAT);
  Variable b = Variable::Create(root.WithOpName("b"), {}, DT_FLOAT, init::Constant(5.0f));
  Output d1 = ops::Const(root, {1.0f, -2.0f});
  Output l1 = Output(ops::BuildOp(root, "SquaredDifference", {w, d1}), 0);
  Output l2 = Output(ops::BuildOp(root, "SquaredDifference", {b, 3.0f}), 0);
  Output loss = ops::Add(root, Output(ops::BuildOp(root, "Sum", {l1, ops::Const(root, {0})}), 0), l2);
  Output step = train::CreateGlobalStep(root);
  train::GradientDescentOptimizer gd(0.1f);
  std::vector<std::pair<Output, Output>> gvs = gd.ComputeGradients(root, loss);
  ASSERT_TRUE(root.ok()) << root.status();
  ASSERT_EQ(gvs.size(), 2u);  // w and b, not global_step
  EXPECT_EQ(gvs[0].second.node()->name(), "w");
  EXPECT_EQ(gvs[1].second.node()->name(), "b");
  EXPECT_TRUE(gvs[0].first.node()->name().rfind("gradients/", 0) == 0);
  Operation train_op = gd.Minimize(root, loss, {}, step);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(session.Run({train_op}).ok());
  auto r = session.Run({w.read(), b.read(), step, loss});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR((*r)[0].flat<float>()[0], 1.0, 1e-4);
  EXPECT_NEAR((*r)[0].flat<float>()[1], -2.0, 1e-4);
  EXPECT_NEAR((*r)[1].scalar<float>(), 3.0, 1e-4);
  EXPECT_EQ((*r)[2].scalar<int64_t>(), 100);
  EXPECT_LT((*r)[3].scalar<float>(), 1e-6);
}

TEST(TrainTest, MinimizeOnlyTheGivenVariables) {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), {}, DT_DOUBLE);
  Variable frozen = Variable::Create(root.WithOpName("frozen"), {}, DT_DOUBLE, init::Ones());
  Output loss = Output(ops::BuildOp(root, "SquaredDifference", {ops::Add(root, w, frozen), 4.0}), 0);
  Operation train_op = train::AdagradOptimizer(1.0).Minimize(root, loss, {w.ref()});
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root.graph()->FindNode("frozen/Adagrad"), nullptr);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(session.Run({train_op}).ok());
  auto r = session.Run({w.read(), frozen.read()});
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR((*r)[0].scalar<double>(), 3.0, 1e-4);
  EXPECT_EQ((*r)[1].scalar<double>(), 1.0);
}

TEST(TrainTest, ErrorsAreRecordedInTheScope) {
  {
    Quadratic q(DT_FLOAT);
    train::GradientDescentOptimizer bad(Input({1.0f, 2.0f}));
    Operation op = bad.ApplyGradients(q.root, {{q.grad, q.w.ref()}});
    EXPECT_FALSE(op.valid());
    EXPECT_THAT(q.root.status().message(), HasSubstr("learning_rate"));
  }
  {
    Quadratic q(DT_FLOAT);
    train::AdamOptimizer adam;
    EXPECT_TRUE(adam.ComputeGradients(q.root, Output()).empty());
    EXPECT_THAT(q.root.status().message(), HasSubstr("invalid Output"));
  }
  {
    Quadratic q(DT_FLOAT);
    train::MomentumOptimizer m(0.1f, 0.9f);
    Operation op = m.ApplyGradients(q.root, {{Output(), q.w.ref()}});
    EXPECT_FALSE(op.valid());
    EXPECT_THAT(q.root.status().message(), HasSubstr("no gradients provided"));
  }
}

// ---- Learning-rate schedules ----

// Sets global_step to each value and fetches the schedule.
std::vector<double> Evaluate(const Scope& root, const Output& step, const Output& value, std::vector<int64_t> steps) {
  Output feed = ops::Placeholder(root, DT_INT64, PartialTensorShape({}));
  Output set = ops::Assign(root, step, feed);
  ClientSession session(root);
  EXPECT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  std::vector<double> out;
  for (int64_t s : steps) {
    EXPECT_TRUE(session.Run({{feed, s}}, {set}).ok());
    auto r = session.Run({value});
    EXPECT_TRUE(r.ok()) << r.status();
    out.push_back(r.ok() ? At((*r)[0], 0) : NAN);
  }
  return out;
}

TEST(ScheduleTest, ExponentialDecay) {
  Scope root = Scope::NewRootScope();
  Output step = train::CreateGlobalStep(root);
  Output lr = train::ExponentialDecay(root, 0.5f, step, 100, 0.96);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(lr.node()->name(), "ExponentialDecay");
  EXPECT_EQ(lr.dtype(), DT_FLOAT);
  std::vector<double> v = Evaluate(root, step, lr, {0, 50, 100, 250});
  EXPECT_NEAR(v[0], 0.5, 1e-7);
  EXPECT_NEAR(v[1], 0.5 * std::pow(0.96, 0.5), 1e-6);
  EXPECT_NEAR(v[2], 0.48, 1e-6);
  EXPECT_NEAR(v[3], 0.5 * std::pow(0.96, 2.5), 1e-6);
}

TEST(ScheduleTest, ExponentialDecayStaircase) {
  Scope root = Scope::NewRootScope();
  Output step = train::CreateGlobalStep(root);
  Output lr = train::ExponentialDecay(root, 0.1, step, 10, 0.5, true);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(lr.dtype(), DT_DOUBLE);
  std::vector<double> v = Evaluate(root, step, lr, {0, 9, 10, 25});
  EXPECT_DOUBLE_EQ(v[0], 0.1);
  EXPECT_DOUBLE_EQ(v[1], 0.1);
  EXPECT_DOUBLE_EQ(v[2], 0.05);
  EXPECT_DOUBLE_EQ(v[3], 0.025);
}

TEST(ScheduleTest, ExponentialDecayRejectsBadArguments) {
  Scope root = Scope::NewRootScope();
  Output step = train::CreateGlobalStep(root);
  EXPECT_FALSE(train::ExponentialDecay(root, 0.1f, step, 0, 0.5).valid());
  EXPECT_THAT(root.status().message(), HasSubstr("decay_steps must be positive"));
}

TEST(ScheduleTest, PiecewiseConstant) {
  Scope root = Scope::NewRootScope();
  Output step = train::CreateGlobalStep(root);
  Output lr = train::PiecewiseConstant(root, step, {10, 20}, {1.0, 0.5, 0.1});
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(lr.node()->name(), "PiecewiseConstant");
  std::vector<double> v = Evaluate(root, step, lr, {0, 10, 11, 20, 21, 1000});
  // Exactly the float values: no rounding from the arithmetic that selects them.
  EXPECT_EQ(v, (std::vector<double>{1.0, 1.0, 0.5, 0.5, static_cast<double>(0.1f), static_cast<double>(0.1f)}));
}

TEST(ScheduleTest, PiecewiseConstantRejectsBadArguments) {
  Scope root = Scope::NewRootScope();
  Output step = train::CreateGlobalStep(root);
  EXPECT_FALSE(train::PiecewiseConstant(root, step, {10}, {1.0}).valid());
  EXPECT_THAT(root.status().message(), HasSubstr("one more value"));
  Scope r2 = Scope::NewRootScope();
  Output s2 = train::CreateGlobalStep(r2);
  EXPECT_FALSE(train::PiecewiseConstant(r2, s2, {10.5}, {1.0, 2.0}).valid());
  EXPECT_FALSE(r2.ok());
  Scope r3 = Scope::NewRootScope();
  Output s3 = train::CreateGlobalStep(r3);
  EXPECT_FALSE(train::PiecewiseConstant(r3, s3, {20, 10}, {1.0, 2.0, 3.0}).valid());
  EXPECT_THAT(r3.status().message(), HasSubstr("increasing"));
}

TEST(ScheduleTest, ScheduleDrivesTheOptimizer) {
  // lr 0.1 for steps 0..1, then 0.01: the third update is ten times smaller.
  Quadratic q(DT_FLOAT);
  Output step = train::CreateGlobalStep(q.root);
  Output lr = train::PiecewiseConstant(q.root, step, {1}, {0.1, 0.01});
  Operation op = train::GradientDescentOptimizer(lr).ApplyGradients(q.root, {{q.grad, q.w.ref()}}, step);
  ASSERT_TRUE(q.root.ok()) << q.root.status();
  ClientSession session(q.root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(q.root)}).ok());
  std::vector<double> w = {0};
  for (int t = 0; t < 3; ++t) {
    ASSERT_TRUE(session.Run({op}).ok());
    double rate = t <= 1 ? 0.1 : 0.01;
    w[0] -= rate * 2 * (w[0] - 1);
    auto r = session.Run({q.w.read()});
    EXPECT_NEAR(At((*r)[0], 0), w[0], 1e-6) << t;
  }
}

}  // namespace
}  // namespace dflow
