// ResourceApply*: each update on resource variables (VarHandleOp) gives what the Apply* op gives on
// reference variables (VariableV2) for the same inputs, over two steps; an update of a variable
// never assigned is FailedPrecondition; a non-scalar hyperparameter is refused while building.
#include <string>
#include <vector>

#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

struct Case {
  std::string op;  // without the Resource prefix
  int vars;
  std::vector<double> scalars;
  int grad_at;  // position of grad among the value inputs
  bool step_last = false;
};

std::vector<Case> Cases() {
  return {
      {"ApplyGradientDescent", 1, {0.1}, 1},
      {"ApplyMomentum", 2, {0.1, 0.9}, 1},
      {"ApplyAdagrad", 2, {0.1}, 1},
      {"ApplyAdam", 3, {0.9, 0.999, 0.01, 0.9, 0.999, 1e-7}, 6},
      {"ApplyRMSProp", 3, {0.01, 0.9, 0.5, 1e-7}, 4},
      {"ApplyCenteredRMSProp", 4, {0.01, 0.9, 0.5, 1e-7}, 4},
      {"ApplyFtrl", 3, {0.1, 0.01, 0.1, -0.5}, 0},
      {"ApplyFtrlV2", 3, {0.1, 0.01, 0.1, 0.05, -0.5}, 0},
      {"ApplyAdadelta", 3, {1.0, 0.95, 1e-6}, 3},
      {"ApplyProximalGradientDescent", 1, {0.1, 0.01, 0.1}, 3},
      {"ApplyProximalAdagrad", 2, {0.1, 0.01, 0.1}, 3},
      {"ApplyAdagradDA", 3, {0.1, 0.01, 0.1, 3}, 0, true},
  };
}

std::vector<Input> Values(const Case& c, const Scope& s) {
  std::vector<Input> v;
  for (double x : c.scalars) v.push_back(ops::Const(s, x));
  if (c.step_last) v.back() = ops::Const(s, static_cast<int64_t>(c.scalars.back()));
  v.insert(v.begin() + c.grad_at, ops::Const(s, {0.3, -0.2, 0.05}));
  return v;
}

// The variables' values after two steps of `op` (resource or reference variables).
std::vector<Tensor> TwoSteps(const Case& c, bool resource) {
  Scope root = Scope::NewRootScope();
  std::vector<Input> inputs;
  std::vector<Output> reads;
  std::vector<Operation> inits;
  for (int i = 0; i < c.vars; ++i) {
    const std::vector<double> init = i == 0 ? std::vector<double>{0.5, -1, 0.001} : std::vector<double>{0.1, 0.2, 0.3};
    Scope s = root.WithOpName("v" + std::to_string(i));
    if (resource) {
      Output h = ops::VarHandleOp(s, DT_DOUBLE, PartialTensorShape({3}));
      inits.push_back(ops::AssignVariableOp(root, h, ops::Const(root, init)));
      inputs.push_back(h);
      reads.push_back(ops::ReadVariableOp(root, h, DT_DOUBLE));
    } else {
      Variable v = Variable::Create(s, {3}, DT_DOUBLE, init::Constant(init));
      inits.push_back(v.initializer());
      inputs.push_back(v.ref());
      reads.push_back(v.read());
    }
  }
  for (const Input& in : Values(c, root)) inputs.push_back(in);
  Operation update = ops::BuildOp(root, (resource ? "Resource" : "") + c.op, inputs);
  EXPECT_TRUE(root.ok()) << root.status();
  if (!root.ok()) return {};
  ClientSession session(root);
  EXPECT_TRUE(session.Run(inits).ok());
  for (int step = 0; step < 2; ++step) {
    Status s = session.Run(std::vector<Operation>{update});
    EXPECT_TRUE(s.ok()) << s;
  }
  auto r = session.Run(reads);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::vector<Tensor>{};
}

TEST(ResourceApplyTest, SameUpdatesAsOnReferenceVariables) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.op);
    std::vector<Tensor> ref = TwoSteps(c, false), res = TwoSteps(c, true);
    ASSERT_EQ(ref.size(), static_cast<size_t>(c.vars));
    ASSERT_EQ(res.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i) {
      for (int j = 0; j < 3; ++j) EXPECT_EQ(res[i].flat<double>()[j], ref[i].flat<double>()[j]) << i << " " << j;
    }
    EXPECT_NE(ref[0].flat<double>()[0], 0.5);  // the update changed var
  }
}

// ResourceSparseApply*: the same rows updated as SparseApply* does on reference variables.
TEST(ResourceApplyTest, SparseSameAsOnReferenceVariables) {
  for (const char* op : {"SparseApplyAdagrad", "SparseApplyMomentum", "SparseApplyFtrl"}) {
    SCOPED_TRACE(op);
    std::vector<Tensor> results[2];
    for (bool resource : {false, true}) {
      Scope root = Scope::NewRootScope();
      std::vector<Input> inputs;
      std::vector<Output> reads;
      std::vector<Operation> inits;
      const int vars = std::string(op) == "SparseApplyFtrl" ? 3 : 2;
      for (int i = 0; i < vars; ++i) {
        Scope s = root.WithOpName("v" + std::to_string(i));
        // var, then slots (accumulators: positive)
        const Input::Initializer init = i == 0 ? Input::Initializer({{0.5, -1.0}, {0.25, 2.0}, {-0.75, 0.1}})
                                               : Input::Initializer({{0.1, 0.2}, {0.3, 0.4}, {0.5, 0.6}});
        if (resource) {
          Output h = ops::VarHandleOp(s, DT_DOUBLE, PartialTensorShape({3, 2}));
          inits.push_back(ops::AssignVariableOp(root, h, ops::Const(root, init)));
          inputs.push_back(h);
          reads.push_back(ops::ReadVariableOp(root, h, DT_DOUBLE));
        } else {
          Variable v = Variable::Create(s, {3, 2}, DT_DOUBLE, init::Constant(init));
          inits.push_back(v.initializer());
          inputs.push_back(v.ref());
          reads.push_back(v.read());
        }
      }
      Output grad = ops::Const(root, {{0.3, -0.2}, {0.05, 0.4}});
      Output indices = ops::Const(root, {2, 0});
      std::vector<Input> rest;
      if (std::string(op) == "SparseApplyAdagrad") rest = {ops::Const(root, 0.1), grad, indices};
      if (std::string(op) == "SparseApplyMomentum") {
        rest = {ops::Const(root, 0.1), grad, indices, ops::Const(root, 0.9)};
      }
      if (std::string(op) == "SparseApplyFtrl") {
        rest = {grad,
                indices,
                ops::Const(root, 0.1),
                ops::Const(root, 0.01),
                ops::Const(root, 0.1),
                ops::Const(root, -0.5)};
      }
      for (const Input& in : rest) inputs.push_back(in);
      Operation update = ops::BuildOp(root, (resource ? std::string("Resource") : std::string()) + op, inputs);
      ASSERT_TRUE(root.ok()) << root.status();
      ClientSession session(root);
      ASSERT_TRUE(session.Run(inits).ok());
      Status s = session.Run(std::vector<Operation>{update});
      ASSERT_TRUE(s.ok()) << s;
      auto r = session.Run(reads);
      ASSERT_TRUE(r.ok()) << r.status();
      results[resource] = *r;
    }
    for (size_t i = 0; i < results[0].size(); ++i) {
      EXPECT_EQ(results[1][i].ToString(), results[0][i].ToString()) << i;
    }
    EXPECT_EQ(results[0][0].flat<double>()[2], 0.25);  // row 1 was not in indices
  }
}

TEST(ResourceApplyTest, NeverAssignedVariableAndBadScalar) {
  Scope root = Scope::NewRootScope();
  Output h = ops::VarHandleOp(root.WithOpName("w"), DT_DOUBLE, PartialTensorShape({3}));
  Operation update = ops::BuildOp(root, "ResourceApplyGradientDescent",
                                  {h, ops::Const(root, 0.1), ops::Const(root, {1.0, 2.0, 3.0})});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  Status s = session.Run(std::vector<Operation>{update});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("w"));

  Scope bad = Scope::NewRootScope();
  Output h2 = ops::VarHandleOp(bad, DT_DOUBLE, PartialTensorShape({3}));
  ops::BuildOp(bad, "ResourceApplyGradientDescent", {h2, ops::Const(bad, {0.1, 0.2}), ops::Const(bad, {1.0})});
  EXPECT_THAT(bad.status().message(), HasSubstr("alpha must be a scalar"));
}

}  // namespace
}  // namespace dflow
