// AddGradients itself: path finding, summing of fan-out, missing gradients, unconnected xs.
#include "graph/gradients.h"

#include <mutex>

#include "dflow/dflow.h"
#include "framework/shape_inference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"
#include "train/gradient_checker.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

void RegisterTestOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterAllOps();
    RegisterOp(
        OpDefBuilder("GradTestNoGradient").Input("x: T").Output("y: T").Attr("T: type").SetShapeFn(UnchangedShape));
  });
}

TEST(GradientsTest, IdentityChainHasUnitGradient) {
  RegisterTestOps();
  Tensor x = Tensor::FromValues<double>({1.0, -2.0, 3.0}, TensorShape{3}).value();
  auto err = MaxGradientError({x}, [](GraphBuilder* b, const std::vector<NodeOut>& xs) {
    NodeOut y = b->Op("Identity", {xs[0]});
    return std::vector<NodeOut>{b->Op("Identity", {y})};
  });
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-9);
}

TEST(GradientsTest, FanOutGradientsAreSummed) {
  RegisterTestOps();
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT);
  Output a = ops::Identity(root, x);
  Output b = ops::Identity(root, x);
  std::vector<Output> g = Gradients(root, {a, b}, {x});
  ASSERT_TRUE(root.ok()) << root.status();
  auto r = ClientSession(root).Run({{x, {1.0f, 2.0f}}}, {g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[2 2]");
}

TEST(GradientsTest, GradYsWeightTheResult) {
  RegisterTestOps();
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT);
  Output y = ops::Identity(root, x);
  Output gy = ops::Const(root, {3.0f, 4.0f});
  std::vector<Output> g = Gradients(root, {y}, {x}, {gy});
  auto r = ClientSession(root).Run({{x, {1.0f, 2.0f}}}, {g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[3 4]");
}

TEST(GradientsTest, UnconnectedXGetsZeros) {
  RegisterTestOps();
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT, PartialTensorShape({2}));
  Output z = ops::Placeholder(root, DT_FLOAT, PartialTensorShape({2}));
  Output y = ops::Identity(root, x);
  std::vector<Output> g = Gradients(root, {y}, {z});
  ASSERT_TRUE(root.ok()) << root.status();
  auto r = ClientSession(root).Run({{x, {1.0f, 2.0f}}, {z, {5.0f, 6.0f}}}, {g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[0 0]");
}

TEST(GradientsTest, AnOpWithoutGradientOnThePathIsABuildError) {
  RegisterTestOps();
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT);
  Operation op = ops::BuildOp(root.WithOpName("mystery"), "GradTestNoGradient", {x});
  std::vector<Output> g = Gradients(root, {Output(op, 0)}, {x});
  EXPECT_FALSE(g[0].valid());
  EXPECT_EQ(root.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("No gradient defined for op 'GradTestNoGradient'"));
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("mystery"));
}

TEST(GradientsTest, GradientsFlowToVariableReferences) {
  RegisterTestOps();
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), TensorShape{2}, DT_FLOAT, init::Constant({1.0f, 2.0f}));
  std::vector<Output> g = Gradients(root, {w.read()}, {w.ref()});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession s(root);
  ASSERT_TRUE(s.Run({GlobalVariablesInitializer(root)}).ok());
  auto r = s.Run({g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[1 1]");
}

}  // namespace
}  // namespace dflow
