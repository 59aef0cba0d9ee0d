// The Apply* ops in graphs: shape functions, attrs, and updates of real variables in a session
// (reference edges, copy on write against fetched snapshots, the "Variable" alias).
#include <thread>

#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

TEST(TrainingOpsTest, SignaturesAreTensorFlows) {
  InitDflow();
  const OpDef* adam = OpRegistry::Global()->LookUp("ApplyAdam");
  ASSERT_NE(adam, nullptr);
  std::vector<std::string> names;
  for (const ArgDef& a : adam->inputs) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2",
                                             "epsilon", "grad"}));
  EXPECT_TRUE(adam->inputs[0].is_ref && adam->inputs[1].is_ref && adam->inputs[2].is_ref);
  EXPECT_FALSE(adam->inputs[3].is_ref);
  EXPECT_TRUE(adam->outputs[0].is_ref);
  EXPECT_NE(adam->FindAttr("use_nesterov"), nullptr);
  EXPECT_NE(adam->FindAttr("use_locking"), nullptr);
  const OpDef* ftrl = OpRegistry::Global()->LookUp("ApplyFtrl");
  ASSERT_NE(ftrl, nullptr);
  names.clear();
  for (const ArgDef& a : ftrl->inputs) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"var", "accum", "linear", "grad", "lr", "l1", "l2", "lr_power"}));
  EXPECT_NE(ftrl->FindAttr("multiply_linear_by_lr"), nullptr);
  const OpDef* adagrad = OpRegistry::Global()->LookUp("ApplyAdagrad");
  ASSERT_NE(adagrad, nullptr);
  EXPECT_NE(adagrad->FindAttr("update_slots"), nullptr);
  bool none = false;
  const OpDef* rms = OpRegistry::Global()->LookUp("ApplyRMSProp");
  ASSERT_NE(rms, nullptr);
  EXPECT_EQ(rms->inputs[4].name, "rho");
  const OpDef* centered = OpRegistry::Global()->LookUp("ApplyCenteredRMSProp");
  ASSERT_NE(centered, nullptr);
  names.clear();
  for (const ArgDef& a : centered->inputs) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad"}));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(centered->inputs[i].is_ref) << i;
  EXPECT_EQ(LookupGradient("ApplyCenteredRMSProp", &none), nullptr);
  EXPECT_TRUE(none);
  const OpDef* momentum = OpRegistry::Global()->LookUp("ApplyMomentum");
  ASSERT_NE(momentum, nullptr);
  EXPECT_EQ(momentum->inputs[4].name, "momentum");
  EXPECT_NE(OpRegistry::Global()->LookUp("Variable"), nullptr);
  // Not differentiable: they stop backpropagation instead of failing it.
  EXPECT_EQ(LookupGradient("ApplyAdam", &none), nullptr);
  EXPECT_TRUE(none);
}

TEST(TrainingOpsTest, ShapeFunctionChecksShapesWhileBuilding) {
  Scope root = Scope::NewRootScope();
  Output var = ops::VariableV2(root.WithOpName("v"), PartialTensorShape({2, 3}), DT_FLOAT);
  Output accum = ops::VariableV2(root.WithOpName("a"), PartialTensorShape({2, 3}), DT_FLOAT);
  Output ok = ops::ApplyAdagrad(root, var, accum, 0.1f, ops::Placeholder(root, DT_FLOAT, PartialTensorShape({2, -1})));
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(ok.shape(), PartialTensorShape({2, 3}));
  EXPECT_EQ(ok.dtype(), MakeRefType(DT_FLOAT));

  Scope bad_grad = Scope::NewRootScope();
  Output v2 = ops::VariableV2(bad_grad, PartialTensorShape({2}), DT_FLOAT);
  ops::ApplyGradientDescent(bad_grad, v2, 0.1f, ops::Const(bad_grad, {1.0f, 2.0f, 3.0f}));
  EXPECT_THAT(bad_grad.status().message(), HasSubstr("var and delta do not have compatible shapes"));

  Scope bad_lr = Scope::NewRootScope();
  Output v3 = ops::VariableV2(bad_lr, PartialTensorShape({2}), DT_FLOAT);
  ops::ApplyGradientDescent(bad_lr, v3, ops::Const(bad_lr, {0.1f, 0.2f}), ops::Const(bad_lr, {1.0f, 2.0f}));
  EXPECT_THAT(bad_lr.status().message(), HasSubstr("alpha must be a scalar"));

  Scope bad_slot = Scope::NewRootScope();
  Output v4 = ops::VariableV2(bad_slot, PartialTensorShape({2}), DT_DOUBLE);
  Output m4 = ops::VariableV2(bad_slot, PartialTensorShape({3}), DT_DOUBLE);
  ops::ApplyMomentum(bad_slot, v4, m4, 0.1, ops::Const(bad_slot, {1.0, 2.0}), 0.9);
  EXPECT_THAT(bad_slot.status().message(), HasSubstr("var and accum"));

  // An int variable has no Apply kernels: refused while building.
  Scope bad_type = Scope::NewRootScope();
  Output v5 = ops::VariableV2(bad_type, PartialTensorShape({2}), DT_INT32);
  ops::ApplyGradientDescent(bad_type, v5, 1, ops::Const(bad_type, {1, 2}));
  EXPECT_FALSE(bad_type.ok());

  // A plain tensor where a variable reference is needed.
  Scope not_ref = Scope::NewRootScope();
  ops::ApplyGradientDescent(not_ref, ops::Const(not_ref, {1.0f}), 0.1f, ops::Const(not_ref, {1.0f}));
  EXPECT_FALSE(not_ref.ok());
}

TEST(TrainingOpsTest, UpdatesVariablesInASession) {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), {2}, DT_FLOAT, init::Constant({1.0f, 2.0f}));
  Variable m = Variable::Create(root.WithOpName("m"), {2}, DT_FLOAT);
  Variable v = Variable::Create(root.WithOpName("v"), {2}, DT_FLOAT);
  Output grad = ops::Placeholder(root.WithOpName("grad"), DT_FLOAT, PartialTensorShape({2}));
  Output b1p = ops::Placeholder(root.WithOpName("b1p"), DT_FLOAT, PartialTensorShape({}));
  Output b2p = ops::Placeholder(root.WithOpName("b2p"), DT_FLOAT, PartialTensorShape({}));
  Output adam = ops::ApplyAdam(root, w.ref(), m.ref(), v.ref(), b1p, b2p, 0.1f, 0.9f, 0.999f, 1e-8f, grad);
  Operation init = GlobalVariablesInitializer(root);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  ASSERT_TRUE(session.Run({init}).ok());
  // A snapshot fetched before the update keeps its values (copy on write).
  auto before = session.Run({w.read()});
  ASSERT_TRUE(before.ok()) << before.status();
  double w0[2] = {1, 2}, m0[2] = {0, 0}, v0[2] = {0, 0};
  const float g[2] = {0.5f, -2.0f};
  for (int t = 1; t <= 3; ++t) {
    double p1 = std::pow(0.9, t), p2 = std::pow(0.999, t);
    auto r = session.Run({{grad, {g[0], g[1]}}, {b1p, static_cast<float>(p1)}, {b2p, static_cast<float>(p2)}}, {adam});
    ASSERT_TRUE(r.ok()) << r.status();
    double lr_t = 0.1 * std::sqrt(1 - p2) / (1 - p1);
    for (int i = 0; i < 2; ++i) {
      m0[i] = 0.9 * m0[i] + 0.1 * g[i];
      v0[i] = 0.999 * v0[i] + 0.001 * g[i] * g[i];
      w0[i] -= lr_t * m0[i] / (std::sqrt(v0[i]) + 1e-8);
      // The fetched output of the op is the variable's new value.
      EXPECT_NEAR((*r)[0].flat<float>()[i], w0[i], 1e-5);
    }
  }
  auto after = session.Run({w.read(), m.read()});
  ASSERT_TRUE(after.ok());
  EXPECT_NEAR((*after)[0].flat<float>()[0], w0[0], 1e-5);
  EXPECT_NEAR((*after)[1].flat<float>()[1], m0[1], 1e-6);
  EXPECT_EQ((*before)[0].ToString(), "[1 2]");
}

TEST(TrainingOpsTest, UninitializedSlotIsAnError) {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), {1}, DT_DOUBLE, init::Ones());
  Output accum = ops::VariableV2(root.WithOpName("accum"), PartialTensorShape({1}), DT_DOUBLE);
  Output up = ops::ApplyAdagrad(root, w.ref(), accum, 0.1, ops::Const(root, {1.0}));
  Operation init = GlobalVariablesInitializer(root);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({init}).ok());
  auto r = session.Run({up});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("accum"));
}

TEST(TrainingOpsTest, OldVariableOpWorksLikeVariableV2) {
  Scope root = Scope::NewRootScope();
  Operation v = ops::BuildOp(root.WithOpName("old"), "Variable", {},
                             {{"shape", PartialTensorShape({2})}, {"dtype", DT_FLOAT}});
  Output ref(v, 0);
  Output assign = ops::Assign(root, ref, {3.0f, 4.0f});
  Output gd = ops::ApplyGradientDescent(root, ref, 0.5f, ops::Const(root, {2.0f, 2.0f}));
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(ref.dtype(), MakeRefType(DT_FLOAT));
  ClientSession session(root);
  ASSERT_TRUE(session.Run({assign}).ok());
  auto r = session.Run({gd});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[2 3]");
}

TEST(TrainingOpsTest, ConcurrentUpdatesAreNotLost) {
  // Four threads apply a constant update while a fifth reads: every update lands (the kernels
  // hold the variable's mutex) and every snapshot read is a whole number of updates.
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), {64}, DT_DOUBLE);
  Variable accum = Variable::Create(root.WithOpName("accum"), {64}, DT_DOUBLE);
  Output one = ops::Fill(root, ops::Const(root, {64}), 1.0);
  Output up = ops::ApplyMomentum(root, w.ref(), accum.ref(), 1.0, one, 0.0);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  constexpr int kThreads = 4, kSteps = 200;
  std::vector<std::thread> threads;
  std::atomic<bool> failed{false};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kSteps; ++i)
        if (!session.Run({up.op()}).ok()) failed = true;
    });
  }
  std::thread reader([&] {
    for (int i = 0; i < 200; ++i) {
      auto r = session.Run({w.read()});
      if (!r.ok()) {
        failed = true;
        continue;
      }
      auto v = (*r)[0].flat<double>();
      for (double x : v)
        if (x != v[0]) failed = true;  // a torn snapshot
    }
  });
  for (auto& t : threads) t.join();
  reader.join();
  EXPECT_FALSE(failed);
  auto r = session.Run({w.read()});
  ASSERT_TRUE(r.ok());
  for (double x : (*r)[0].flat<double>()) EXPECT_EQ(x, -kThreads * kSteps);
}

}  // namespace
}  // namespace dflow
