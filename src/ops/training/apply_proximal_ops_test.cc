// ApplyAdadelta, ApplyProximalGradientDescent, ApplyProximalAdagrad, ApplyFtrlV2 against
// TensorFlow's update formulas computed here in double precision, for two steps, plus bad input.
#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/training/apply_test_util.h"

namespace dflow {
namespace {

using testing::ApplyRunner;
using ::testing::HasSubstr;

Tensor Vec(const std::vector<double>& v, DType dtype) {
  const TensorShape shape{static_cast<int64_t>(v.size())};
  if (dtype == DT_FLOAT) return Tensor::FromValues<float>(std::vector<float>(v.begin(), v.end()), shape).value();
  return Tensor::FromValues<double>(v, shape).value();
}
Tensor Scalar(double v, DType dtype) { return dtype == DT_FLOAT ? Tensor(static_cast<float>(v)) : Tensor(v); }
double Tol(DType dtype) { return dtype == DT_FLOAT ? 2e-5 : 1e-12; }
double Sign(double x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }
double Prox(double p, double threshold, double l1, double shrink) {
  return l1 > 0 ? Sign(p) * std::max(std::abs(p) - threshold, 0.0) / (1 + shrink) : p / (1 + shrink);
}

class ProximalApplyTest : public ::testing::TestWithParam<DType> {};
INSTANTIATE_TEST_SUITE_P(FloatAndDouble, ProximalApplyTest, ::testing::Values(DT_FLOAT, DT_DOUBLE),
                         [](const auto& info) { return std::string(DTypeString(info.param)); });

const std::vector<double> kVar = {0.5, -1.0, 0.001};
const std::vector<double> kGrad = {0.3, -0.2, 0.05};

TEST_P(ProximalApplyTest, Adadelta) {
  const DType dt = GetParam();
  const double lr = 0.7, rho = 0.95, eps = 1e-6;
  auto r = ApplyRunner::Create("ApplyAdadelta", dt, {Vec(kVar, dt), Vec({0.1, 0.1, 0.1}, dt), Vec({0, 0, 0}, dt)}, 4)
               .value();
  std::vector<double> var = kVar, accum = {0.1, 0.1, 0.1}, upd = {0, 0, 0};
  for (int step = 0; step < 2; ++step) {
    ASSERT_TRUE(r->Run({Scalar(lr, dt), Scalar(rho, dt), Scalar(eps, dt), Vec(kGrad, dt)}).ok());
    for (int i = 0; i < 3; ++i) {
      accum[i] = rho * accum[i] + (1 - rho) * kGrad[i] * kGrad[i];
      const double u = std::sqrt(upd[i] + eps) / std::sqrt(accum[i] + eps) * kGrad[i];
      upd[i] = rho * upd[i] + (1 - rho) * u * u;
      var[i] -= lr * u;
      EXPECT_NEAR(r->at(0, i), var[i], Tol(dt));
      EXPECT_NEAR(r->at(1, i), accum[i], Tol(dt));
      EXPECT_NEAR(r->at(2, i), upd[i], Tol(dt));
    }
  }
}

TEST_P(ProximalApplyTest, ProximalGradientDescent) {
  const DType dt = GetParam();
  for (double l1 : {0.0, 0.1}) {
    const double alpha = 0.5, l2 = 0.2;
    auto r = ApplyRunner::Create("ApplyProximalGradientDescent", dt, {Vec(kVar, dt)}, 4).value();
    std::vector<double> var = kVar;
    for (int step = 0; step < 2; ++step) {
      ASSERT_TRUE(r->Run({Scalar(alpha, dt), Scalar(l1, dt), Scalar(l2, dt), Vec(kGrad, dt)}).ok());
      for (int i = 0; i < 3; ++i) {
        var[i] = Prox(var[i] - alpha * kGrad[i], alpha * l1, l1, alpha * l2);
        EXPECT_NEAR(r->at(0, i), var[i], Tol(dt)) << "l1 " << l1 << " step " << step << " i " << i;
      }
    }
  }
}

TEST_P(ProximalApplyTest, ProximalAdagrad) {
  const DType dt = GetParam();
  for (double l1 : {0.0, 0.1}) {
    const double lr = 0.5, l2 = 0.2;
    auto r = ApplyRunner::Create("ApplyProximalAdagrad", dt, {Vec(kVar, dt), Vec({0.1, 0.1, 0.1}, dt)}, 4).value();
    std::vector<double> var = kVar, accum = {0.1, 0.1, 0.1};
    for (int step = 0; step < 2; ++step) {
      ASSERT_TRUE(r->Run({Scalar(lr, dt), Scalar(l1, dt), Scalar(l2, dt), Vec(kGrad, dt)}).ok());
      for (int i = 0; i < 3; ++i) {
        accum[i] += kGrad[i] * kGrad[i];
        const double rate = lr / std::sqrt(accum[i]);
        var[i] = Prox(var[i] - rate * kGrad[i], rate * l1, l1, rate * l2);
        EXPECT_NEAR(r->at(0, i), var[i], Tol(dt)) << "l1 " << l1 << " step " << step << " i " << i;
        EXPECT_NEAR(r->at(1, i), accum[i], Tol(dt));
      }
    }
  }
}

TEST_P(ProximalApplyTest, FtrlV2) {
  const DType dt = GetParam();
  const double lr = 0.5, l1 = 0.01, l2 = 0.1, shrinkage = 0.05;
  for (double lr_power : {-0.5, -0.7}) {
    auto r = ApplyRunner::Create("ApplyFtrlV2", dt, {Vec(kVar, dt), Vec({0.1, 0.1, 0.1}, dt), Vec({0, 0, 0}, dt)}, 6)
                 .value();
    std::vector<double> var = kVar, accum = {0.1, 0.1, 0.1}, linear = {0, 0, 0};
    for (int step = 0; step < 2; ++step) {
      ASSERT_TRUE(r->Run({Vec(kGrad, dt), Scalar(lr, dt), Scalar(l1, dt), Scalar(l2, dt), Scalar(shrinkage, dt),
                          Scalar(lr_power, dt)})
                      .ok());
      for (int i = 0; i < 3; ++i) {
        const double g = kGrad[i], gs = g + 2 * shrinkage * var[i];
        const double na = accum[i] + g * g;
        linear[i] += gs - (std::pow(na, -lr_power) - std::pow(accum[i], -lr_power)) / lr * var[i];
        const double quadratic = std::pow(na, -lr_power) / lr + 2 * l2;
        var[i] = std::abs(linear[i]) > l1 ? (Sign(linear[i]) * l1 - linear[i]) / quadratic : 0.0;
        accum[i] = na;
        EXPECT_NEAR(r->at(0, i), var[i], Tol(dt)) << "lr_power " << lr_power << " step " << step << " i " << i;
        EXPECT_NEAR(r->at(1, i), accum[i], Tol(dt));
        EXPECT_NEAR(r->at(2, i), linear[i], Tol(dt));
      }
    }
  }
}

TEST_P(ProximalApplyTest, BadInput) {
  const DType dt = GetParam();
  auto r = ApplyRunner::Create("ApplyProximalGradientDescent", dt, {Vec(kVar, dt)}, 4).value();
  Status s = r->Run({Scalar(0.1, dt), Scalar(0, dt), Scalar(0, dt), Vec({1, 2}, dt)});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("same shape"));
  s = r->Run({Vec({1, 2, 3}, dt), Scalar(0, dt), Scalar(0, dt), Vec(kGrad, dt)});
  EXPECT_THAT(std::string(s.message()), HasSubstr("not a scalar"));
  auto u = ApplyRunner::Create("ApplyAdadelta", dt, {Vec(kVar, dt), Tensor(), Vec(kVar, dt)}, 4).value();
  s = u->Run({Scalar(1, dt), Scalar(0.9, dt), Scalar(1e-6, dt), Vec(kGrad, dt)});
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  auto f = ApplyRunner::Create("ApplyFtrlV2", dt, {Vec(kVar, dt), Vec(kVar, dt), Vec(kVar, dt)}, 6).value();
  s = f->Run({Vec(kGrad, dt), Scalar(0.1, dt), Scalar(0, dt), Scalar(0, dt), Scalar(-1, dt), Scalar(-0.5, dt)});
  EXPECT_THAT(std::string(s.message()), HasSubstr("l2 shrinkage"));
}

}  // namespace
}  // namespace dflow
