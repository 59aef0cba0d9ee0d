// Abs, Sign, Square, Sqrt, Rsqrt, Reciprocal, Log1p, Tanh, Sigmoid, Floor, Ceil, Round: values
// against the C++ library computed in the test (long double where it matters), special values,
// banker's rounding, integer kernels, static shapes and unsupported types.
#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "ops/math/cwise_test_util.h"
#include "ops/testing/kernel_test_util.h"

namespace dflow {
namespace {

using testing::ExpectValues;
using testing::InferShapes;
using testing::MakeTensor;
using testing::RunOpKernel;

TensorShape S(std::initializer_list<int64_t> d) { return TensorShape(d); }

Tensor Eval(const std::string& op, const Tensor& x) {
  auto out = RunOpKernel(op, {x});
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

template <typename T>
std::vector<T> Inputs() {
  std::vector<T> v;
  for (int i = -20; i <= 20; ++i) v.push_back(static_cast<T>(i * 0.37));
  v.push_back(static_cast<T>(1e-7));
  v.push_back(static_cast<T>(-35));
  v.push_back(static_cast<T>(40));
  return v;
}

template <typename T, typename F>
void CheckReal(const std::string& op, const std::vector<T>& x, F ref) {
  SCOPED_TRACE(op);
  std::vector<T> want;
  for (T v : x) want.push_back(static_cast<T>(ref(static_cast<long double>(v))));
  ExpectValues<T>(Eval(op, MakeTensor<T>(x, S({static_cast<int64_t>(x.size())}))), want,
                  S({static_cast<int64_t>(x.size())}));
}

template <typename T>
class RealUnaryTest : public ::testing::Test {};
using RealTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(RealUnaryTest, RealTypes);

TYPED_TEST(RealUnaryTest, MatchesLongDoubleReference) {
  using T = TypeParam;
  using L = long double;
  const std::vector<T> all = Inputs<T>();
  std::vector<T> positive;
  for (T v : all)
    if (v > 0) positive.push_back(v);
  std::vector<T> above_minus_one;
  for (T v : all)
    if (v > -1) above_minus_one.push_back(v);
  CheckReal<T>("Abs", all, [](L v) { return std::fabs(v); });
  CheckReal<T>("Square", all, [](L v) { return v * v; });
  CheckReal<T>("Sqrt", positive, [](L v) { return std::sqrt(v); });
  CheckReal<T>("Rsqrt", positive, [](L v) { return 1 / std::sqrt(v); });
  CheckReal<T>("Reciprocal", positive, [](L v) { return 1 / v; });
  CheckReal<T>("Log1p", above_minus_one, [](L v) { return std::log1p(v); });
  CheckReal<T>("Tanh", all, [](L v) { return std::tanh(v); });
  CheckReal<T>("Sigmoid", all, [](L v) { return 1 / (1 + std::exp(-v)); });
  CheckReal<T>("Floor", all, [](L v) { return std::floor(v); });
  CheckReal<T>("Ceil", all, [](L v) { return std::ceil(v); });
  CheckReal<T>("Sign", all, [](L v) { return v > 0 ? 1 : v < 0 ? -1 : 0; });
}

TYPED_TEST(RealUnaryTest, SpecialValues) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  auto t = [](std::vector<T> v) { return MakeTensor<T>(v, S({static_cast<int64_t>(v.size())})); };
  ExpectValues<T>(Eval("Sqrt", t({0, 4, -1, inf})), {0, 2, nan, inf}, S({4}));
  ExpectValues<T>(Eval("Rsqrt", t({0, 4, inf})), {inf, 0.5, 0}, S({3}));
  ExpectValues<T>(Eval("Reciprocal", t({0, -4, inf})), {inf, -0.25, 0}, S({3}));
  ExpectValues<T>(Eval("Log1p", t({-1, 0, -2})), {-inf, 0, nan}, S({3}));
  ExpectValues<T>(Eval("Tanh", t({inf, -inf, 0})), {1, -1, 0}, S({3}));
  // Sigmoid saturates without overflowing in either direction.
  ExpectValues<T>(Eval("Sigmoid", t({1000, -1000, 0, inf, -inf})), {1, 0, 0.5, 1, 0}, S({5}));
  ExpectValues<T>(Eval("Sign", t({nan, -0.0f, inf, -inf})), {nan, 0, 1, -1}, S({4}));
  ExpectValues<T>(Eval("Abs", t({-inf, nan})), {inf, nan}, S({2}));
  ExpectValues<T>(Eval("Floor", t({-0.5, inf, nan})), {-1, inf, nan}, S({3}));
  ExpectValues<T>(Eval("Ceil", t({-0.5, 0.5, -inf})), {0, 1, -inf}, S({3}));
}

TYPED_TEST(RealUnaryTest, RoundHalfToEven) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  Tensor x = MakeTensor<T>({0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 2.4, 2.6, -2.6, 7, 1e10 + 0.5, inf, nan}, S({2, 7}));
  ExpectValues<T>(Eval("Round", x),
                  {0, 2, 2, 4, -0.0, -2, -2, 2, 3, -3, 7, static_cast<T>(std::nearbyint(1e10 + 0.5)), inf, nan},
                  S({2, 7}));
  // A loop against nearbyint in the default (round-to-nearest-even) mode.
  std::vector<T> v, want;
  for (int i = -40; i <= 40; ++i) {
    v.push_back(static_cast<T>(i * 0.25));
    want.push_back(static_cast<T>(std::nearbyint(i * 0.25)));
  }
  ExpectValues<T>(Eval("Round", MakeTensor<T>(v, S({81}))), want, S({81}));
}

template <typename T>
class IntegerUnaryTest : public ::testing::Test {};
using IntTypes = ::testing::Types<int32_t, int64_t>;
TYPED_TEST_SUITE(IntegerUnaryTest, IntTypes);

TYPED_TEST(IntegerUnaryTest, Values) {
  using T = TypeParam;
  const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  Tensor x = MakeTensor<T>({-3, 0, 5, lo, hi}, S({5}));
  ExpectValues<T>(Eval("Abs", x), {3, 0, 5, lo, hi}, S({5}));  // |min| wraps to min
  ExpectValues<T>(Eval("Sign", x), {-1, 0, 1, -1, 1}, S({5}));
  ExpectValues<T>(Eval("Square", x), {9, 0, 25, 0, 1}, S({5}));  // wraps modulo 2^bits
  ExpectValues<T>(Eval("Round", x), {-3, 0, 5, lo, hi}, S({5}));
  for (const char* op : {"Sqrt", "Rsqrt", "Reciprocal", "Log1p", "Tanh", "Sigmoid", "Floor", "Ceil"}) {
    EXPECT_FALSE(RunOpKernel(op, {x}).ok()) << op << " has no integer kernel";
  }
}

TEST(UnaryMathTest, ShapesAndUnsupportedTypes) {
  for (const char* op :
       {"Abs", "Sign", "Square", "Sqrt", "Rsqrt", "Reciprocal", "Log1p", "Tanh", "Sigmoid", "Floor", "Ceil", "Round"}) {
    SCOPED_TRACE(op);
    auto shapes = InferShapes(op, {Tensor(DT_FLOAT, S({2, 0, 3}))});
    ASSERT_TRUE(shapes.ok()) << shapes.status();
    EXPECT_EQ((*shapes)[0], PartialTensorShape({2, 0, 3}));
    ExpectValues<double>(Eval(op, Tensor(DT_DOUBLE, S({0}))), {}, S({0}));
    EXPECT_EQ(Eval(op, MakeTensor<float>({4}, S({}))).shape(), S({}));
    EXPECT_FALSE(RunOpKernel(op, {Tensor(true)}).ok());
    EXPECT_FALSE(RunOpKernel(op, {Tensor("s")}).ok());
  }
}

}  // namespace
}  // namespace dflow
