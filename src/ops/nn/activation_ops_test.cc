// Relu, Relu6, Elu, Selu, Softplus and their gradient kernels against the formulas written out
// here, bad inputs, and numerical gradient checks.
#include <cmath>
#include <functional>

#include "gmock/gmock.h"
#include "ops/nn/nn_test_util.h"

namespace dflow {
namespace {

using nn_testing::ExpectClose;
using nn_testing::OpGradientError;
using nn_testing::Random;
using nn_testing::RunError;
using nn_testing::RunOp;
using ::testing::HasSubstr;

const double kScale = 1.0507009873554804934193349852946;
const double kAlpha = 1.6732632423543772848170429916717;

struct Case {
  const char* op;
  std::function<double(double)> f;
};

std::vector<Case> Activations() {
  return {
      {"Relu", [](double x) { return x > 0 ? x : 0; }},
      {"Relu6", [](double x) { return std::min(std::max(x, 0.0), 6.0); }},
      {"Elu", [](double x) { return x > 0 ? x : std::exp(x) - 1; }},
      {"Selu", [](double x) { return x > 0 ? kScale * x : kScale * kAlpha * (std::exp(x) - 1); }},
      {"Softplus", [](double x) { return std::log(1 + std::exp(x)); }},
  };
}

const std::vector<double> kInputs = {-7.5, -2.0, -0.5, -1e-3, 0.0, 1e-3, 0.25, 3.0, 5.999, 6.0, 6.5, 20.0};

template <typename T>
void CheckActivations() {
  const TensorShape shape{3, 4};
  std::vector<T> in(kInputs.begin(), kInputs.end());
  for (const Case& c : Activations()) {
    SCOPED_TRACE(c.op);
    auto out = RunOp(c.op, {testing::MakeTensor<T>(in, shape)});
    ASSERT_EQ(out.size(), 1u);
    std::vector<double> want;
    for (double x : kInputs) want.push_back(c.f(double(T(x))));
    ExpectClose(out[0], want, shape, std::is_same_v<T, float> ? 2e-6 : 1e-13);
  }
}

TEST(ActivationOpsTest, FloatValues) { CheckActivations<float>(); }
TEST(ActivationOpsTest, DoubleValues) { CheckActivations<double>(); }

TEST(ActivationOpsTest, SoftplusIsStableForLargeMagnitudes) {
  auto out = RunOp("Softplus", {testing::MakeTensor<float>({-200.f, 200.f, 1000.f}, TensorShape{3})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[0], 0.0f);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[1], 200.0f);
  EXPECT_FLOAT_EQ(out[0].flat<float>()[2], 1000.0f);
}

// TensorFlow computes exp(x) - 1 (not expm1): a tiny negative input gives an output of exactly 0,
// so SeluGrad/EluGrad (outputs < 0) take the positive branch there, as in TensorFlow.
TEST(ActivationOpsTest, EluAndSeluOfTinyNegativesAreZero) {
  for (const char* op : {"Elu", "Selu"}) {
    auto y = RunOp(op, {testing::MakeTensor<double>({-1e-30, -0.5}, TensorShape{2})});
    ASSERT_EQ(y.size(), 1u);
    EXPECT_EQ(y[0].flat<double>()[0], 0.0) << op;
    EXPECT_LT(y[0].flat<double>()[1], 0.0) << op;
    auto g = RunOp(std::string(op) + "Grad", {testing::MakeTensor<double>({1, 1}, TensorShape{2}), y[0]});
    ASSERT_EQ(g.size(), 1u);
    EXPECT_NEAR(g[0].flat<double>()[0], std::string(op) == "Elu" ? 1.0 : kScale, 1e-12) << op;
  }
}

TEST(ActivationOpsTest, EmptyAndScalarInputs) {
  for (const Case& c : Activations()) {
    auto empty = RunOp(c.op, {Tensor(DT_FLOAT, TensorShape{0, 3})});
    ASSERT_EQ(empty.size(), 1u);
    EXPECT_EQ(empty[0].shape(), (TensorShape{0, 3}));
    auto scalar = RunOp(c.op, {Tensor(2.0)});
    ASSERT_EQ(scalar.size(), 1u);
    EXPECT_NEAR(scalar[0].scalar<double>(), c.f(2.0), 1e-12);
  }
}

TEST(ActivationOpsTest, IntegerInputsAreRejected) { EXPECT_FALSE(RunError("Relu", {Tensor(int32_t{3})}).ok()); }

// The gradient kernels: (gradients, features or outputs) -> backprops.
TEST(ActivationOpsTest, GradKernelValues) {
  const std::vector<double> g = {0.5, -1.5, 2.0, 3.0, -0.25, 1.0};
  const std::vector<double> v = {-2.0, -0.5, 0.5, 5.5, 6.5, 3.0};
  const TensorShape shape{2, 3};
  struct GradCase {
    const char* op;
    std::function<double(double, double)> f;
  };
  const std::vector<GradCase> cases = {
      {"ReluGrad", [](double g, double x) { return x > 0 ? g : 0; }},
      {"Relu6Grad", [](double g, double x) { return x > 0 && x < 6 ? g : 0; }},
      {"EluGrad", [](double g, double y) { return y < 0 ? g * (y + 1) : g; }},
      {"SeluGrad", [](double g, double y) { return y < 0 ? g * (y + kScale * kAlpha) : g * kScale; }},
      {"SoftplusGrad", [](double g, double x) { return g / (1 + std::exp(-x)); }},
  };
  for (const GradCase& c : cases) {
    SCOPED_TRACE(c.op);
    auto out = RunOp(c.op, {testing::MakeTensor<double>(g, shape), testing::MakeTensor<double>(v, shape)});
    ASSERT_EQ(out.size(), 1u);
    std::vector<double> want;
    for (size_t i = 0; i < g.size(); ++i) want.push_back(c.f(g[i], v[i]));
    ExpectClose(out[0], want, shape, 1e-14);
  }
}

TEST(ActivationOpsTest, GradKernelsRejectMismatchedShapes) {
  for (const char* op : {"ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "SoftplusGrad"}) {
    Status s = RunError(op, {Tensor(DT_FLOAT, TensorShape{2, 3}), Tensor(DT_FLOAT, TensorShape{3, 2})});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << op;
    EXPECT_THAT(std::string(s.message()), HasSubstr("[2,3]")) << op;
  }
  // With unknown static shapes the kernel itself must refuse.
  auto runner = testing::KernelRunner::Create("ReluGrad", {DT_FLOAT, DT_FLOAT});
  ASSERT_TRUE(runner.ok()) << runner.status();
  auto r = (*runner)->Run({Tensor(DT_FLOAT, TensorShape{4}), Tensor(DT_FLOAT, TensorShape{5})});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("ReluGrad 'node'"));
}

// Values away from the kinks at 0 and 6, where finite differences are exact up to rounding.
Tensor KinkFreeInput(bool is_double) {
  std::vector<double> v = {-3.1, -1.2, -0.4, 0.3, 0.9, 2.2, 4.7, 5.6, 6.8, 7.9, -0.05, 0.05};
  Tensor t = testing::MakeTensor<double>(v, TensorShape{3, 4});
  return is_double ? t : nn_testing::Cast<float>(t);
}

TEST(ActivationGradTest, NumericalGradientsDouble) {
  for (const Case& c : Activations()) {
    EXPECT_LT(OpGradientError(c.op, {KinkFreeInput(true)}, {}, {}, {0}, 1e-4), 1e-8) << c.op;
  }
}

TEST(ActivationGradTest, NumericalGradientsFloat) {
  for (const Case& c : Activations()) {
    EXPECT_LT(OpGradientError(c.op, {KinkFreeInput(false)}, {}, {}, {0}, 1e-2), 5e-3) << c.op;
  }
}

// ReluGrad and Relu6Grad have gradients too: linear in `gradients`, flat in `features`.
TEST(ActivationGradTest, MaskGradKernelsHaveGradients) {
  std::mt19937 rng(7);
  for (const char* op : {"ReluGrad", "Relu6Grad"}) {
    Tensor g = Random<double>(TensorShape{3, 4}, &rng);
    EXPECT_LT(OpGradientError(op, {g, KinkFreeInput(true)}), 1e-9) << op;
  }
}

// EluGrad, SeluGrad and SoftplusGrad have gradients in both inputs (values away from y = 0,
// where EluGrad's and SeluGrad's factor jumps).
TEST(ActivationGradTest, GradKernelsHaveGradients) {
  std::mt19937 rng(8);
  for (const char* op : {"EluGrad", "SeluGrad", "SoftplusGrad", "ReluGrad", "Relu6Grad"}) {
    Tensor g = Random<double>(TensorShape{3, 4}, &rng);
    EXPECT_LT(OpGradientError(op, {g, KinkFreeInput(true)}, {}, {}, {0}, 1e-5), 1e-8) << op;
  }
}

// Second derivatives: the gradient graph of each activation, differentiated again with respect
// to the input and the incoming gradient, against central differences of the first gradient.
TEST(ActivationGradTest, SecondDerivatives) {
  std::mt19937 rng(9);
  Tensor g = Random<double>(TensorShape{3, 4}, &rng);
  for (const Case& c : Activations()) {
    auto err = MaxGradientError(
        {KinkFreeInput(true), g},
        [&](GraphBuilder* b, const std::vector<NodeOut>& in) {
          NodeOut y = b->Op(c.op, {in[0]});
          auto grads = AddGradients(b->graph(), {y}, {in[0]}, {in[1]});
          if (!grads.ok()) b->SetError(grads.status());
          return grads.ok() ? *grads : std::vector<NodeOut>{};
        },
        1e-5);
    ASSERT_TRUE(err.ok()) << c.op << ": " << err.status();
    EXPECT_LT(*err, 1e-7) << c.op;
  }
  // And against the closed forms at one point: d2/dx2 Softplus = sigmoid'(x), Elu'' = e^x (x < 0).
  for (auto [op, x, want] :
       std::vector<std::tuple<const char*, double, double>>{{"Softplus", 0.7,
                                                             std::exp(-0.7) / std::pow(1 + std::exp(-0.7), 2)},
                                                            {"Elu", -0.8, std::exp(-0.8)},
                                                            {"Selu", -0.8, kScale * kAlpha * std::exp(-0.8)},
                                                            {"Selu", 0.8, 0.0}}) {
    Scope root = Scope::NewRootScope();
    Output xo = ops::Const(root, x);
    Output y(ops::BuildOp(root, op, {xo}), 0);
    std::vector<Output> d1 = Gradients(root, {y}, {xo});
    ASSERT_TRUE(root.ok()) << root.status();
    std::vector<Output> d2 = Gradients(root, {d1[0]}, {xo});
    ASSERT_TRUE(root.ok()) << root.status();
    auto v = ClientSession(root).Run({d2[0]});
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_NEAR((*v)[0].scalar<double>(), want, 1e-12) << op << " at " << x;
  }
}

}  // namespace
}  // namespace dflow
