// FloorDiv, FloorMod, Maximum, Minimum, SquaredDifference: hand-computed values (signs, wrap
// around, NaN), a naive broadcasting reference for every registered dtype, and bad inputs.
#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "ops/math/cwise_test_util.h"
#include "ops/math/kernel_runner_test_util.h"
#include "ops/testing/kernel_test_util.h"

namespace dflow {
namespace {

using testing::ExpectValues;
using testing::InferShapes;
using testing::KernelRunner;
using testing::MakeTensor;
using testing::NaiveBroadcast;
using testing::RunOpKernel;

TensorShape S(std::initializer_list<int64_t> d) { return TensorShape(d); }

template <typename T>
Tensor V(std::vector<T> v) {
  return MakeTensor<T>(v, S({static_cast<int64_t>(v.size())}));
}

Tensor Eval(const std::string& op, const Tensor& x, const Tensor& y) {
  auto out = RunOpKernel(op, {x, y});
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

// Python's // and % on integers, by repeated subtraction-free reasoning on doubles (exact for
// the small values used here).
double PyFloorDiv(double a, double b) { return std::floor(a / b); }
double PyMod(double a, double b) { return a - std::floor(a / b) * b; }

template <typename T>
class SignedBinaryTest : public ::testing::Test {};
using SignedTypes = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(SignedBinaryTest, SignedTypes);

TYPED_TEST(SignedBinaryTest, FloorDivAndFloorModFollowTheSignOfTheDivisor) {
  using T = TypeParam;
  // Every sign combination, exact and inexact.
  std::vector<T> x = {7, -7, 7, -7, 6, -6, 0, 1};
  std::vector<T> y = {2, 2, -2, -2, 3, 3, 5, -5};
  std::vector<T> div, mod;
  for (size_t i = 0; i < x.size(); ++i) {
    div.push_back(static_cast<T>(PyFloorDiv(x[i], y[i])));
    mod.push_back(static_cast<T>(PyMod(x[i], y[i])));
  }
  EXPECT_EQ(div, (std::vector<T>{3, -4, -4, 3, 2, -2, 0, -1}));
  EXPECT_EQ(mod, (std::vector<T>{1, 1, -1, -1, 0, 0, 0, -4}));
  ExpectValues<T>(Eval("FloorDiv", V<T>(x), V<T>(y)), div, S({8}));
  ExpectValues<T>(Eval("FloorMod", V<T>(x), V<T>(y)), mod, S({8}));
}

TYPED_TEST(SignedBinaryTest, MatchesNaiveBroadcast) {
  using T = TypeParam;
  const std::vector<std::pair<TensorShape, TensorShape>> pairs = {{S({2, 3}), S({2, 3})},         {S({2, 3}), S({3})},
                                                                  {S({2, 1}), S({1, 3})},         {S({}), S({2, 2})},
                                                                  {S({3, 1, 4}), S({2, 1})},      {S({0, 3}), S({3})},
                                                                  {S({2, 3, 4, 5}), S({3, 1, 5})}};
  for (const auto& [xs, ys] : pairs) {
    SCOPED_TRACE(xs.DebugString() + " " + ys.DebugString());
    std::vector<T> x(xs.num_elements()), y(ys.num_elements());
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(static_cast<int>(i % 11) - 5);
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<T>(static_cast<int>(i % 5) - 2 == 0 ? 3 : int(i % 5) - 2);
    TensorShape out = testing::NaiveBroadcastShape(xs, ys);
    auto check = [&](const char* op, auto f) {
      SCOPED_TRACE(op);
      ExpectValues<T>(Eval(op, MakeTensor<T>(x, xs), MakeTensor<T>(y, ys)), NaiveBroadcast<T>(x, xs, y, ys, out, f),
                      out);
    };
    check("FloorDiv", [](T a, T b) { return static_cast<T>(PyFloorDiv(a, b)); });
    check("FloorMod", [](T a, T b) { return static_cast<T>(PyMod(a, b)); });
    check("Maximum", [](T a, T b) { return a > b ? a : b; });
    check("Minimum", [](T a, T b) { return a < b ? a : b; });
    check("SquaredDifference", [](T a, T b) { return static_cast<T>((a - b) * (a - b)); });
  }
}

TEST(BinaryMathTest, FloatFloorDivAndModOfFractions) {
  ExpectValues<double>(Eval("FloorDiv", V<double>({7.5, -7.5, 7.5, 1e300}), V<double>({2, 2, -2, 1e-300})),
                       {3, -4, -4, std::numeric_limits<double>::infinity()}, S({4}));
  ExpectValues<double>(Eval("FloorMod", V<double>({7.5, -7.5, 7.5, -0.25}), V<double>({2, 2, -2, 1})),
                       {1.5, 0.5, -0.5, 0.75}, S({4}));
  // Floating point division by zero follows IEEE rules instead of failing.
  Tensor d = Eval("FloorDiv", V<float>({1, -1}), V<float>({0, 0}));
  EXPECT_TRUE(std::isinf(d.flat<float>()[0]) && d.flat<float>()[0] > 0);
  EXPECT_TRUE(std::isinf(d.flat<float>()[1]) && d.flat<float>()[1] < 0);
  EXPECT_TRUE(std::isnan(Eval("FloorMod", V<float>({1}), V<float>({0})).flat<float>()[0]));
}

TEST(BinaryMathTest, IntegerEdgeCases) {
  const int32_t imin = std::numeric_limits<int32_t>::min();
  ExpectValues<int32_t>(Eval("FloorDiv", V<int32_t>({imin, imin}), V<int32_t>({-1, 1})), {imin, imin}, S({2}));
  ExpectValues<int32_t>(Eval("FloorMod", V<int32_t>({imin, imin, -1}), V<int32_t>({-1, 3, imin})), {0, 1, -1}, S({3}));
  ExpectValues<uint8_t>(Eval("FloorDiv", V<uint8_t>({255, 7}), V<uint8_t>({16, 2})), {15, 3}, S({2}));
  ExpectValues<int32_t>(Eval("SquaredDifference", V<int32_t>({-3, 4}), V<int32_t>({4, -3})), {49, 49}, S({2}));
  for (const char* op : {"FloorDiv", "FloorMod"}) {
    auto out = RunOpKernel(op, {V<int32_t>({1, 2}), V<int32_t>({3, 0})});
    ASSERT_FALSE(out.ok()) << op;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find("Integer division by zero"), absl::string_view::npos) << out.status();
    EXPECT_NE(out.status().message().find(op), absl::string_view::npos) << out.status();
  }
  EXPECT_FALSE(RunOpKernel("FloorDiv", {V<int64_t>({1}), V<int64_t>({0})}).ok());
}

TEST(BinaryMathTest, MaximumAndMinimumPropagateNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ExpectValues<double>(Eval("Maximum", V<double>({nan, 1, 3, -0.5}), V<double>({1, nan, 2, -0.25})),
                       {nan, nan, 3, -0.25}, S({4}));
  ExpectValues<double>(Eval("Minimum", V<double>({nan, 1, 3, -0.5}), V<double>({1, nan, 2, -0.25})),
                       {nan, nan, 2, -0.5}, S({4}));
  ExpectValues<int64_t>(Eval("Maximum", MakeTensor<int64_t>({1, 5, 3, 4}, S({2, 2})), V<int64_t>({2, 4})), {2, 5, 3, 4},
                        S({2, 2}));
}

TEST(BinaryMathTest, StaticShapesAndBadInputs) {
  for (const char* op : {"FloorDiv", "FloorMod", "Maximum", "Minimum", "SquaredDifference"}) {
    SCOPED_TRACE(op);
    auto shapes = InferShapes(op, {Tensor(DT_FLOAT, S({2, 1})), Tensor(DT_FLOAT, S({1, 3}))});
    ASSERT_TRUE(shapes.ok()) << shapes.status();
    EXPECT_EQ((*shapes)[0], PartialTensorShape({2, 3}));
    EXPECT_FALSE(InferShapes(op, {Tensor(DT_FLOAT, S({2, 3})), Tensor(DT_FLOAT, S({2}))}).ok());
    EXPECT_FALSE(InferShapes(op, {Tensor(DT_FLOAT, S({2})), Tensor(DT_DOUBLE, S({2}))}).ok());
    auto r = KernelRunner::Create(op, {DT_DOUBLE, DT_DOUBLE});
    ASSERT_TRUE(r.ok()) << r.status();
    auto out = (*r)->Run({Tensor(DT_DOUBLE, S({2, 3})), Tensor(DT_DOUBLE, S({4}))});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find("[2,3] vs. [4]"), absl::string_view::npos) << out.status();
    auto empty = (*r)->Run1({Tensor(DT_DOUBLE, S({0, 3})), Tensor(DT_DOUBLE, S({3}))});
    ASSERT_TRUE(empty.ok()) << empty.status();
    EXPECT_EQ(empty->shape(), S({0, 3}));
  }
  EXPECT_FALSE(RunOpKernel("FloorMod", {Tensor(true), Tensor(false)}).ok());  // no bool kernels
}

}  // namespace
}  // namespace dflow
