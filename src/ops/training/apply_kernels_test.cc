// The Apply* kernels against TensorFlow's documented update formulas, computed here step by step
// in double precision, plus hand-computed values and bad input.
#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/training/apply_test_util.h"

namespace dflow {
namespace {

using testing::ApplyRunner;
using ::testing::HasSubstr;

Tensor Vec(const std::vector<double>& v, DType dtype, TensorShape shape = {}) {
  if (shape.dims() == 0 && !v.empty()) shape = TensorShape{static_cast<int64_t>(v.size())};
  if (dtype == DT_FLOAT) {
    std::vector<float> f(v.begin(), v.end());
    return Tensor::FromValues<float>(f, shape).value();
  }
  return Tensor::FromValues<double>(v, shape).value();
}
Tensor Scalar(double v, DType dtype) { return dtype == DT_FLOAT ? Tensor(static_cast<float>(v)) : Tensor(v); }

double Tol(DType dtype) { return dtype == DT_FLOAT ? 1e-5 : 1e-12; }

class ApplyKernelTest : public ::testing::TestWithParam<DType> {};
INSTANTIATE_TEST_SUITE_P(FloatAndDouble, ApplyKernelTest, ::testing::Values(DT_FLOAT, DT_DOUBLE),
                         [](const auto& info) { return std::string(DTypeString(info.param)); });

// ---- GradientDescent ----

TEST_P(ApplyKernelTest, GradientDescentHandComputed) {
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyGradientDescent", dt, {Vec({1, 2}, dt)}, 2).value();
  ASSERT_TRUE(r->Run({Scalar(0.5, dt), Vec({0.2, -0.4}, dt)}).ok());
  EXPECT_NEAR(r->at(0, 0), 0.9, Tol(dt));
  EXPECT_NEAR(r->at(0, 1), 2.2, Tol(dt));
  ASSERT_TRUE(r->Run({Scalar(0.5, dt), Vec({0.2, -0.4}, dt)}).ok());
  EXPECT_NEAR(r->at(0, 0), 0.8, Tol(dt));
  EXPECT_NEAR(r->at(0, 1), 2.4, Tol(dt));
}

TEST_P(ApplyKernelTest, UpdatesInPlaceWhenTheBufferIsNotShared) {
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyGradientDescent", dt, {Vec({1, 2}, dt)}, 2).value();
  const void* before = r->var(0)->tensor()->raw_data();
  ASSERT_TRUE(r->Run({Scalar(1, dt), Vec({1, 1}, dt)}).ok());
  EXPECT_EQ(r->var(0)->tensor()->raw_data(), before);
}

TEST_P(ApplyKernelTest, CopiesFirstWhenAReaderHoldsTheBuffer) {
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyMomentum", dt, {Vec({1, 2}, dt), Vec({0, 0}, dt)}, 3).value();
  Tensor var_snapshot = r->value(0);
  Tensor accum_snapshot = r->value(1);
  ASSERT_TRUE(r->Run({Scalar(0.5, dt), Vec({2, 2}, dt), Scalar(0.9, dt)}).ok());
  // The readers' snapshots keep the old values; the variables hold the new ones.
  EXPECT_EQ(var_snapshot.ToString(), "[1 2]");
  EXPECT_EQ(accum_snapshot.ToString(), "[0 0]");
  EXPECT_FALSE(var_snapshot.SharesBufferWith(*r->var(0)->tensor()));
  EXPECT_NEAR(r->at(0, 0), 0.0, Tol(dt));
  EXPECT_NEAR(r->at(0, 1), 1.0, Tol(dt));
  EXPECT_NEAR(r->at(1, 0), 2.0, Tol(dt));
}

// ---- Momentum ----

TEST_P(ApplyKernelTest, MomentumHandComputed) {
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyMomentum", dt, {Vec({1}, dt), Vec({0}, dt)}, 3).value();
  ASSERT_TRUE(r->Run({Scalar(0.1, dt), Vec({2}, dt), Scalar(0.9, dt)}).ok());
  EXPECT_NEAR(r->at(1, 0), 2.0, Tol(dt));
  EXPECT_NEAR(r->at(0, 0), 0.8, Tol(dt));
  ASSERT_TRUE(r->Run({Scalar(0.1, dt), Vec({2}, dt), Scalar(0.9, dt)}).ok());
  EXPECT_NEAR(r->at(1, 0), 3.8, Tol(dt));
  EXPECT_NEAR(r->at(0, 0), 0.42, Tol(dt));
}

TEST_P(ApplyKernelTest, NesterovMomentumHandComputed) {
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyMomentum", dt, {Vec({1}, dt), Vec({0}, dt)}, 3, {{"use_nesterov", true}}).value();
  ASSERT_TRUE(r->Run({Scalar(0.1, dt), Vec({2}, dt), Scalar(0.9, dt)}).ok());
  EXPECT_NEAR(r->at(0, 0), 1 - (0.2 + 0.1 * 0.9 * 2), Tol(dt));  // 0.62
  ASSERT_TRUE(r->Run({Scalar(0.1, dt), Vec({2}, dt), Scalar(0.9, dt)}).ok());
  EXPECT_NEAR(r->at(1, 0), 3.8, Tol(dt));
  EXPECT_NEAR(r->at(0, 0), 0.62 - (0.2 + 0.1 * 0.9 * 3.8), Tol(dt));  // 0.078
}

// ---- Adagrad ----

TEST_P(ApplyKernelTest, AdagradMatchesFormula) {
  const DType dt = GetParam();
  std::vector<double> var = {1, -2, 0.5}, accum = {0.1, 0.1, 0.1};
  auto r = ApplyRunner::Create("ApplyAdagrad", dt, {Vec(var, dt), Vec(accum, dt)}, 2).value();
  const double lr = 0.5;
  const std::vector<std::vector<double>> grads = {{1, 0.5, -3}, {-0.25, 2, 1}, {0.75, -1, 0.125}};
  for (const auto& g : grads) {
    ASSERT_TRUE(r->Run({Scalar(lr, dt), Vec(g, dt)}).ok());
    for (int i = 0; i < 3; ++i) {
      accum[i] = accum[i] + g[i] * g[i];
      var[i] = var[i] - lr * g[i] / std::sqrt(accum[i]);
      EXPECT_NEAR(r->at(1, i), accum[i], Tol(dt));
      EXPECT_NEAR(r->at(0, i), var[i], Tol(dt));
    }
  }
  // First step of element 0 by hand: accum 1.1, var 1 - 0.5 / sqrt(1.1).
  auto h = ApplyRunner::Create("ApplyAdagrad", dt, {Vec({1}, dt), Vec({0.1}, dt)}, 2).value();
  ASSERT_TRUE(h->Run({Scalar(0.5, dt), Vec({1}, dt)}).ok());
  EXPECT_NEAR(h->at(0, 0), 0.52326872, 1e-6);
}

TEST_P(ApplyKernelTest, AdagradWithoutSlotUpdateLeavesAccum) {
  const DType dt = GetParam();
  auto r =
      ApplyRunner::Create("ApplyAdagrad", dt, {Vec({1}, dt), Vec({0.1}, dt)}, 2, {{"update_slots", false}}).value();
  ASSERT_TRUE(r->Run({Scalar(0.5, dt), Vec({1}, dt)}).ok());
  EXPECT_NEAR(r->at(1, 0), 0.1, Tol(dt));
  EXPECT_NEAR(r->at(0, 0), 1 - 0.5 / std::sqrt(0.1), 1e-5);
}

// ---- Adam ----

void CheckAdam(DType dt, bool nesterov) {
  std::vector<double> var = {1, -0.5}, m = {0, 0}, v = {0, 0};
  auto r = ApplyRunner::Create("ApplyAdam", dt, {Vec(var, dt), Vec(m, dt), Vec(v, dt)}, 7, {{"use_nesterov", nesterov}})
               .value();
  const double lr = 0.01, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  const std::vector<std::vector<double>> grads = {{0.5, -1}, {0.25, 2}, {-1, 0.1}};
  for (size_t t = 1; t <= grads.size(); ++t) {
    const auto& g = grads[t - 1];
    const double b1p = std::pow(beta1, t), b2p = std::pow(beta2, t);
    ASSERT_TRUE(r->Run({Scalar(b1p, dt), Scalar(b2p, dt), Scalar(lr, dt), Scalar(beta1, dt), Scalar(beta2, dt),
                        Scalar(eps, dt), Vec(g, dt)})
                    .ok());
    // The documented form: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t).
    const double lr_t = lr * std::sqrt(1 - b2p) / (1 - b1p);
    for (int i = 0; i < 2; ++i) {
      m[i] = beta1 * m[i] + (1 - beta1) * g[i];
      v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
      double step = nesterov ? (m[i] * beta1 + g[i] * (1 - beta1)) : m[i];
      var[i] = var[i] - step * lr_t / (std::sqrt(v[i]) + eps);
      EXPECT_NEAR(r->at(1, i), m[i], Tol(dt)) << "step " << t;
      EXPECT_NEAR(r->at(2, i), v[i], Tol(dt)) << "step " << t;
      EXPECT_NEAR(r->at(0, i), var[i], dt == DT_FLOAT ? 1e-5 : 1e-10) << "step " << t;
    }
  }
}

TEST_P(ApplyKernelTest, AdamMatchesFormula) { CheckAdam(GetParam(), false); }
TEST_P(ApplyKernelTest, NesterovAdamMatchesFormula) { CheckAdam(GetParam(), true); }

TEST_P(ApplyKernelTest, AdamFirstStepIsAboutLr) {
  // With m = v = 0 the first step moves each element by lr * g / (|g| + eps / sqrt(1 - beta2)).
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyAdam", dt, {Vec({1}, dt), Vec({0}, dt), Vec({0}, dt)}, 7).value();
  ASSERT_TRUE(r->Run({Scalar(0.9, dt), Scalar(0.999, dt), Scalar(0.001, dt), Scalar(0.9, dt), Scalar(0.999, dt),
                      Scalar(1e-8, dt), Vec({0.5}, dt)})
                  .ok());
  EXPECT_NEAR(r->at(0, 0), 0.999000000632, dt == DT_FLOAT ? 1e-6 : 1e-11);
}

// ---- RMSProp ----

TEST_P(ApplyKernelTest, RMSPropMatchesFormula) {
  const DType dt = GetParam();
  std::vector<double> var = {1, 2}, ms = {1, 1}, mom = {0, 0};
  auto r = ApplyRunner::Create("ApplyRMSProp", dt, {Vec(var, dt), Vec(ms, dt), Vec(mom, dt)}, 5).value();
  const double lr = 0.01, rho = 0.9, momentum = 0.5, eps = 1e-10;
  const std::vector<std::vector<double>> grads = {{2, -1}, {0.5, 0.5}, {-3, 0.25}};
  for (const auto& g : grads) {
    ASSERT_TRUE(r->Run({Scalar(lr, dt), Scalar(rho, dt), Scalar(momentum, dt), Scalar(eps, dt), Vec(g, dt)}).ok());
    for (int i = 0; i < 2; ++i) {
      ms[i] = rho * ms[i] + (1 - rho) * g[i] * g[i];
      mom[i] = momentum * mom[i] + lr * g[i] / std::sqrt(ms[i] + eps);
      var[i] = var[i] - mom[i];
      EXPECT_NEAR(r->at(1, i), ms[i], Tol(dt));
      EXPECT_NEAR(r->at(2, i), mom[i], Tol(dt));
      EXPECT_NEAR(r->at(0, i), var[i], Tol(dt));
    }
  }
}

TEST_P(ApplyKernelTest, RMSPropHandComputed) {
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyRMSProp", dt, {Vec({1}, dt), Vec({1}, dt), Vec({0}, dt)}, 5).value();
  ASSERT_TRUE(r->Run({Scalar(0.01, dt), Scalar(0.9, dt), Scalar(0, dt), Scalar(1e-10, dt), Vec({2}, dt)}).ok());
  EXPECT_NEAR(r->at(1, 0), 1.3, Tol(dt));
  EXPECT_NEAR(r->at(2, 0), 0.0175411603, 1e-7);
  EXPECT_NEAR(r->at(0, 0), 0.9824588397, 1e-7);
}

TEST_P(ApplyKernelTest, CenteredRMSPropMatchesNaiveLoop) {
  const DType dt = GetParam();
  std::vector<double> var = {1, 2, -0.5}, mg = {0, 0.1, -0.2}, ms = {1, 0.5, 2}, mom = {0, 0.3, 0};
  auto r = ApplyRunner::Create("ApplyCenteredRMSProp", dt, {Vec(var, dt), Vec(mg, dt), Vec(ms, dt), Vec(mom, dt)}, 5)
               .value();
  const double lr = 0.01, rho = 0.9, momentum = 0.5, eps = 1e-6;
  const std::vector<std::vector<double>> grads = {{2, -1, 0.5}, {0.5, 0.5, 0}, {-3, 0.25, 1}, {0, 0, 0}};
  for (const auto& g : grads) {
    ASSERT_TRUE(r->Run({Scalar(lr, dt), Scalar(rho, dt), Scalar(momentum, dt), Scalar(eps, dt), Vec(g, dt)}).ok());
    for (int i = 0; i < 3; ++i) {
      mg[i] = rho * mg[i] + (1 - rho) * g[i];
      ms[i] = rho * ms[i] + (1 - rho) * g[i] * g[i];
      mom[i] = momentum * mom[i] + lr * g[i] / std::sqrt(ms[i] - mg[i] * mg[i] + eps);
      var[i] = var[i] - mom[i];
      EXPECT_NEAR(r->at(1, i), mg[i], Tol(dt));
      EXPECT_NEAR(r->at(2, i), ms[i], Tol(dt));
      EXPECT_NEAR(r->at(3, i), mom[i], Tol(dt));
      EXPECT_NEAR(r->at(0, i), var[i], Tol(dt));
    }
  }
}

TEST_P(ApplyKernelTest, CenteredRMSPropRejectsAMismatchedMeanGradient) {
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyCenteredRMSProp", dt,
                               {Vec({1, 2}, dt), Vec({0}, dt), Vec({1, 1}, dt), Vec({0, 0}, dt)}, 5)
               .value();
  Status s = r->Run({Scalar(0.01, dt), Scalar(0.9, dt), Scalar(0, dt), Scalar(1e-6, dt), Vec({1, 1}, dt)});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("ApplyCenteredRMSProp 'node': var and mg do not have the same shape"));
  EXPECT_EQ(r->value(0).ToString(), "[1 2]");
}

TEST_P(ApplyKernelTest, CenteredRMSPropHandComputed) {
  // mg = 0.2, ms = 1.3, denom = sqrt(1.3 - 0.04) = 1.1224972, mom = 0.02 / denom, var = 1 - mom.
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyCenteredRMSProp", dt, {Vec({1}, dt), Vec({0}, dt), Vec({1}, dt), Vec({0}, dt)}, 5)
               .value();
  ASSERT_TRUE(r->Run({Scalar(0.01, dt), Scalar(0.9, dt), Scalar(0, dt), Scalar(0, dt), Vec({2}, dt)}).ok());
  EXPECT_NEAR(r->at(1, 0), 0.2, Tol(dt));
  EXPECT_NEAR(r->at(2, 0), 1.3, Tol(dt));
  EXPECT_NEAR(r->at(3, 0), 0.0178174161, 1e-7);
  EXPECT_NEAR(r->at(0, 0), 0.9821825839, 1e-7);
}

// ---- Ftrl ----

// TensorFlow's documented FTRL-proximal step, in double.
void FtrlReference(double* var, double* accum, double* linear, double g, double lr, double l1, double l2,
                   double lr_power, bool multiply_by_lr) {
  const double accum_new = *accum + g * g;
  const double sigma = std::pow(accum_new, -lr_power) - std::pow(*accum, -lr_power);
  double quadratic, threshold;
  if (multiply_by_lr) {
    *linear += g * lr - sigma * *var;
    quadratic = std::pow(accum_new, -lr_power) + 2 * l2 * lr;
    threshold = l1 * lr;
  } else {
    *linear += g - sigma / lr * *var;
    quadratic = 1.0 / (std::pow(accum_new, lr_power) * lr) + 2 * l2;
    threshold = l1;
  }
  double sign = *linear > 0 ? 1 : (*linear < 0 ? -1 : 0);
  *var = std::abs(*linear) > threshold ? (sign * threshold - *linear) / quadratic : 0.0;
  *accum = accum_new;
}

void CheckFtrl(DType dt, double lr_power, bool multiply_by_lr) {
  std::vector<double> var = {0, 1, -0.5}, accum = {0.1, 0.1, 0.1}, linear = {0, 0, 0};
  auto r = ApplyRunner::Create("ApplyFtrl", dt, {Vec(var, dt), Vec(accum, dt), Vec(linear, dt)}, 5,
                               {{"multiply_linear_by_lr", multiply_by_lr}})
               .value();
  const double lr = 0.5, l1 = 0.05, l2 = 0.1;
  const std::vector<std::vector<double>> grads = {{1, -0.5, 0.01}, {0.5, 2, -0.02}, {-2, 0.1, 0.03}};
  for (const auto& g : grads) {
    ASSERT_TRUE(r->Run({Vec(g, dt), Scalar(lr, dt), Scalar(l1, dt), Scalar(l2, dt), Scalar(lr_power, dt)}).ok());
    for (int i = 0; i < 3; ++i) {
      FtrlReference(&var[i], &accum[i], &linear[i], g[i], lr, l1, l2, lr_power, multiply_by_lr);
      EXPECT_NEAR(r->at(0, i), var[i], dt == DT_FLOAT ? 1e-5 : 1e-11) << i;
      EXPECT_NEAR(r->at(1, i), accum[i], Tol(dt)) << i;
      EXPECT_NEAR(r->at(2, i), linear[i], dt == DT_FLOAT ? 1e-5 : 1e-11) << i;
    }
  }
  // Element 2 has tiny gradients: |linear| stays below l1, so it is clipped to exactly 0.
  EXPECT_EQ(r->at(0, 2), 0.0);
}

TEST_P(ApplyKernelTest, FtrlMatchesFormula) { CheckFtrl(GetParam(), -0.5, false); }
TEST_P(ApplyKernelTest, FtrlGeneralPowerMatchesFormula) { CheckFtrl(GetParam(), -0.7, false); }
TEST_P(ApplyKernelTest, FtrlMultiplyLinearByLrMatchesFormula) { CheckFtrl(GetParam(), -0.5, true); }

TEST_P(ApplyKernelTest, FtrlHandComputed) {
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyFtrl", dt, {Vec({0}, dt), Vec({0.1}, dt), Vec({0}, dt)}, 5).value();
  ASSERT_TRUE(r->Run({Vec({1}, dt), Scalar(1, dt), Scalar(0, dt), Scalar(0, dt), Scalar(-0.5, dt)}).ok());
  EXPECT_NEAR(r->at(2, 0), 1.0, Tol(dt));
  EXPECT_NEAR(r->at(0, 0), -1 / std::sqrt(1.1), 1e-6);  // -0.9534626
  EXPECT_NEAR(r->at(1, 0), 1.1, Tol(dt));
}

TEST_P(ApplyKernelTest, FtrlRejectsBadHyperparameters) {
  const DType dt = GetParam();
  auto run = [&](double lr, double l1, double l2, double p) {
    auto r = ApplyRunner::Create("ApplyFtrl", dt, {Vec({0}, dt), Vec({0.1}, dt), Vec({0}, dt)}, 5).value();
    Status s = r->Run({Vec({1}, dt), Scalar(lr, dt), Scalar(l1, dt), Scalar(l2, dt), Scalar(p, dt)});
    EXPECT_NEAR(r->at(0, 0), 0.0, 0.0) << "a rejected update must not change var";
    return s;
  };
  EXPECT_THAT(run(0, 0, 0, -0.5).message(), HasSubstr("lr is not a positive scalar"));
  EXPECT_THAT(run(1, -1, 0, -0.5).message(), HasSubstr("l1 regularization"));
  EXPECT_THAT(run(1, 0, -1, -0.5).message(), HasSubstr("l2 regularization"));
  EXPECT_THAT(run(1, 0, 0, 0.5).message(), HasSubstr("lr_power"));
}

// ---- Bad input, common to all kernels ----

TEST_P(ApplyKernelTest, RejectsMismatchedSlotShape) {
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyAdagrad", dt, {Vec({1, 2}, dt), Vec({0.1, 0.1, 0.1}, dt)}, 2).value();
  Status s = r->Run({Scalar(0.5, dt), Vec({1, 1}, dt)});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("ApplyAdagrad 'node'"));
  EXPECT_THAT(s.message(), HasSubstr("var and accum do not have the same shape"));
  EXPECT_THAT(s.message(), HasSubstr("[3]"));
  EXPECT_EQ(r->value(0).ToString(), "[1 2]");
}

TEST_P(ApplyKernelTest, RejectsMismatchedGradShape) {
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyGradientDescent", dt, {Vec({1, 2}, dt)}, 2).value();
  Status s = r->Run({Scalar(0.5, dt), Vec({1, 1, 1}, dt)});
  EXPECT_THAT(s.message(), HasSubstr("var and delta do not have the same shape"));
  s = r->Run({Scalar(0.5, dt), Vec({1, 1}, dt, TensorShape{2, 1})});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_EQ(r->value(0).ToString(), "[1 2]");
}

TEST_P(ApplyKernelTest, RejectsNonScalarHyperparameter) {
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyAdam", dt, {Vec({1}, dt), Vec({0}, dt), Vec({0}, dt)}, 7).value();
  Status s = r->Run({Scalar(0.9, dt), Scalar(0.999, dt), Vec({0.1, 0.2}, dt), Scalar(0.9, dt), Scalar(0.999, dt),
                     Scalar(1e-8, dt), Vec({0.5}, dt)});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("lr is not a scalar"));
  // A [1] tensor is not a scalar either.
  s = r->Run({Scalar(0.9, dt), Vec({0.999}, dt), Scalar(0.1, dt), Scalar(0.9, dt), Scalar(0.999, dt), Scalar(1e-8, dt),
              Vec({0.5}, dt)});
  EXPECT_THAT(s.message(), HasSubstr("beta2_power is not a scalar"));
}

TEST_P(ApplyKernelTest, RejectsUninitializedVariables) {
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyMomentum", dt, {Vec({1}, dt), Tensor()}, 3).value();
  Status s = r->Run({Scalar(0.1, dt), Vec({2}, dt), Scalar(0.9, dt)});
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("uninitialized value var1"));
  EXPECT_EQ(r->value(0).ToString(), "[1]");
}

TEST_P(ApplyKernelTest, EmptyVariablesAreUpdatedTrivially) {
  const DType dt = GetParam();
  Tensor empty = Vec({}, dt, TensorShape{0});
  auto r = ApplyRunner::Create("ApplyRMSProp", dt, {empty, empty, empty}, 5).value();
  EXPECT_TRUE(r->Run({Scalar(0.01, dt), Scalar(0.9, dt), Scalar(0, dt), Scalar(1e-10, dt), empty}).ok());
  EXPECT_EQ(r->value(0).NumElements(), 0);
}

TEST_P(ApplyKernelTest, BigVariablesAreUpdatedOnEveryElement) {
  // Every element of a big variable (an odd size: the vectorized loop's tail too) gets exactly
  // its own update, with several variables and a dense input in step.
  const DType dt = GetParam();
  const int64_t n = 4 * 65536 + 7;
  std::vector<double> var(n), accum(n), grad(n);
  for (int64_t i = 0; i < n; ++i) {
    var[i] = 0.001 * (i % 1000);
    accum[i] = 0.5 + (i % 7);
    grad[i] = (i % 13) - 6.0;
  }
  auto r = ApplyRunner::Create("ApplyMomentum", dt, {Vec(var, dt), Vec(accum, dt)}, 3).value();
  const double lr = 0.25, momentum = 0.5;
  ASSERT_TRUE(r->Run({Scalar(lr, dt), Vec(grad, dt), Scalar(momentum, dt)}).ok());
  for (int64_t i = 0; i < n; ++i) {
    const double a = accum[i] * momentum + grad[i];
    ASSERT_NEAR(r->at(1, i), a, Tol(dt)) << "at " << i;
    ASSERT_NEAR(r->at(0, i), var[i] - lr * a, 1e-5) << "at " << i;
  }
}

TEST_P(ApplyKernelTest, SameVariableTwiceDoesNotDeadlock) {
  const DType dt = GetParam();
  // var and accum naming one Var: the kernel must lock it once.
  RegisterAllOps();
  Graph g;
  NodeSpec v{"v", "VariableV2", {}, {}, {{"dtype", dt}, {"shape", PartialTensorShape()}}};
  Node* vn = g.AddNode(v).value();
  std::vector<NodeOut> in = {{vn, 0}, {vn, 0}};
  for (int i = 0; i < 2; ++i) {
    NodeSpec p{absl::StrCat("p", i), "Placeholder", {}, {}, {{"dtype", dt}}};
    in.push_back({g.AddNode(p).value(), 0});
  }
  NodeSpec a{"adagrad", "ApplyAdagrad", in, {}, {}};
  Node* an = g.AddNode(a).value();
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU");
  auto kernel = KernelRegistry::Global()->CreateKernel(&device, "CPU", an->props_ptr()).value();
  auto var = std::make_shared<Var>("v", dt, PartialTensorShape());
  *var->tensor() = Vec({1}, dt);
  std::vector<TensorValue> vals(4);
  vals[0].ref = var;
  vals[1].ref = var;
  vals[2].tensor = Scalar(0.5, dt);
  vals[3].tensor = Vec({1}, dt);
  StepParams step;
  step.device = &device;
  OpKernelContext ctx(&step, kernel.get(), vals.data(), 4);
  kernel->Compute(&ctx);
  EXPECT_TRUE(ctx.status().ok()) << ctx.status();
}

}  // namespace
}  // namespace dflow
