// Add, AddV2, Sub, Mul, Div, RealDiv, Pow: values for every registered dtype against hand-computed
// values and a naive broadcasting reference, static shapes, and bad inputs.
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
Tensor Eval(const std::string& op, const Tensor& x, const Tensor& y) {
  auto out = RunOpKernel(op, {x, y});
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

// Integer powers by repeated multiplication.
template <typename T>
T NaivePow(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::pow(a, b);
  } else {
    T r = 1;
    for (T i = 0; i < b; ++i) r = static_cast<T>(r * a);
    return r;
  }
}

// Runs `op` on x (shape xs) and y (shape ys) filled with small positive values, against `ref`.
template <typename T, typename F>
void CheckAgainstNaive(const std::string& op, const TensorShape& xs, const TensorShape& ys, F ref) {
  std::vector<T> x(xs.num_elements()), y(ys.num_elements());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(i % 7 + 1);
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<T>(i % 3 + 1);
  TensorShape out_shape = testing::NaiveBroadcastShape(xs, ys);
  std::vector<T> want = NaiveBroadcast<T>(x, xs, y, ys, out_shape, ref);
  Tensor got = Eval<T>(op, MakeTensor<T>(x, xs), MakeTensor<T>(y, ys));
  SCOPED_TRACE(op + " " + xs.DebugString() + " " + ys.DebugString());
  ExpectValues<T>(got, want, out_shape);
}

template <typename T>
class ArithmeticTest : public ::testing::Test {};
using AllTypes = ::testing::Types<float, double, int32_t, int64_t, uint8_t>;
TYPED_TEST_SUITE(ArithmeticTest, AllTypes);

template <typename T>
class SignedArithmeticTest : public ::testing::Test {};
using SignedTypes = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(SignedArithmeticTest, SignedTypes);

const std::vector<std::pair<TensorShape, TensorShape>>& ShapePairs() {
  static const auto* pairs = new std::vector<std::pair<TensorShape, TensorShape>>{
      {S({2, 3}), S({2, 3})}, {S({2, 3}), S({3})}, {S({2, 1}), S({1, 3})},          {S({}), S({2, 2})},
      {S({2, 2}), S({})},     {S({}), S({})},      {S({3, 1, 4}), S({2, 1})},       {S({4, 1, 5}), S({1, 6, 1})},
      {S({0, 3}), S({3})},    {S({1}), S({2, 3})}, {S({2, 3, 4, 5}), S({3, 1, 5})},
  };
  return *pairs;
}

TYPED_TEST(ArithmeticTest, HandComputedBroadcasts) {
  using T = TypeParam;
  auto t = [](std::vector<T> v, TensorShape s) { return MakeTensor<T>(v, s); };
  // [2,3] + [3]
  ExpectValues<T>(Eval<T>("Add", t({1, 2, 3, 4, 5, 6}, S({2, 3})), t({10, 20, 30}, S({3}))), {11, 22, 33, 14, 25, 36},
                  S({2, 3}));
  ExpectValues<T>(Eval<T>("AddV2", t({1, 2, 3, 4, 5, 6}, S({2, 3})), t({10, 20, 30}, S({3}))), {11, 22, 33, 14, 25, 36},
                  S({2, 3}));
  // [2,1] * [1,3]
  ExpectValues<T>(Eval<T>("Mul", t({1, 2}, S({2, 1})), t({3, 4, 5}, S({1, 3}))), {3, 4, 5, 6, 8, 10}, S({2, 3}));
  // scalar + [2,2] and [2,2] - scalar
  ExpectValues<T>(Eval<T>("Add", t({5}, S({})), t({1, 2, 3, 4}, S({2, 2}))), {6, 7, 8, 9}, S({2, 2}));
  ExpectValues<T>(Eval<T>("Sub", t({9, 8, 7, 6}, S({2, 2})), t({5}, S({}))), {4, 3, 2, 1}, S({2, 2}));
  ExpectValues<T>(Eval<T>("Sub", t({10}, S({})), t({1, 2, 3, 4}, S({2, 2}))), {9, 8, 7, 6}, S({2, 2}));
  // Division, exact in every type.
  ExpectValues<T>(Eval<T>("Div", t({8, 9, 12, 21}, S({2, 2})), t({2, 3}, S({2}))), {4, 3, 6, 7}, S({2, 2}));
}

TYPED_TEST(ArithmeticTest, MatchesNaiveBroadcast) {
  using T = TypeParam;
  for (const auto& [xs, ys] : ShapePairs()) {
    CheckAgainstNaive<T>("Add", xs, ys, [](T a, T b) { return static_cast<T>(a + b); });
    CheckAgainstNaive<T>("AddV2", xs, ys, [](T a, T b) { return static_cast<T>(a + b); });
    CheckAgainstNaive<T>("Sub", xs, ys, [](T a, T b) { return static_cast<T>(a - b); });
    CheckAgainstNaive<T>("Mul", xs, ys, [](T a, T b) { return static_cast<T>(a * b); });
    CheckAgainstNaive<T>("Div", xs, ys, [](T a, T b) { return static_cast<T>(a / b); });
    if constexpr (!std::is_same_v<T, uint8_t>) {
      CheckAgainstNaive<T>("RealDiv", xs, ys, [](T a, T b) { return static_cast<T>(a / b); });
      CheckAgainstNaive<T>("Pow", xs, ys, [](T a, T b) { return NaivePow<T>(a, b); });
    }
  }
}

TYPED_TEST(SignedArithmeticTest, NegativeValues) {
  using T = TypeParam;
  auto t = [](std::vector<T> v) { return MakeTensor<T>(v, S({static_cast<int64_t>(v.size())})); };
  ExpectValues<T>(Eval<T>("Sub", t({1, -2, 3}), t({4, 5, -6})), {-3, -7, 9}, S({3}));
  ExpectValues<T>(Eval<T>("Mul", t({-1, -2, 3}), t({4, -5, -6})), {-4, 10, -18}, S({3}));
  ExpectValues<T>(Eval<T>("Pow", t({-3, 2, 5, 0}), t({3, 4, 0, 0})), {-27, 16, 1, 1}, S({4}));
  if constexpr (std::is_integral_v<T>) {
    // C++ division truncates toward zero.
    ExpectValues<T>(Eval<T>("Div", t({-7, 7, -7, 7}), t({2, -2, -2, 2})), {-3, -3, 3, 3}, S({4}));
  } else {
    ExpectValues<T>(Eval<T>("Div", t({-7, 7, -7, 7}), t({2, -2, -2, 2})), {-3.5, -3.5, 3.5, 3.5}, S({4}));
  }
}

TEST(ArithmeticTest, FloatSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  ExpectValues<float>(Eval<float>("Div", MakeTensor<float>({1, -1, 3}, S({3})), MakeTensor<float>({0, 0, 4}, S({3}))),
                      {inf, -inf, 0.75f}, S({3}));
  ExpectValues<float>(Eval<float>("RealDiv", MakeTensor<float>({1}, S({1})), MakeTensor<float>({8}, S({1}))), {0.125f},
                      S({1}));
  ExpectValues<double>(Eval<double>("Pow", MakeTensor<double>({2, 9, 4}, S({3})),
                                    MakeTensor<double>({0.5, 0.5, -1}, S({3}))),
                       {1.4142135623730951, 3, 0.25}, S({3}));
}

TEST(ArithmeticTest, IntegerWrapAround) {
  const int32_t imax = std::numeric_limits<int32_t>::max(), imin = std::numeric_limits<int32_t>::min();
  ExpectValues<int32_t>(Eval<int32_t>("Add", MakeTensor<int32_t>({imax}, S({})), MakeTensor<int32_t>({1}, S({}))),
                        {imin}, S({}));
  ExpectValues<int32_t>(Eval<int32_t>("Div", MakeTensor<int32_t>({imin}, S({})), MakeTensor<int32_t>({-1}, S({}))),
                        {imin}, S({}));
  ExpectValues<uint8_t>(Eval<uint8_t>("Add", MakeTensor<uint8_t>({250, 3}, S({2})),
                                      MakeTensor<uint8_t>({10, 5}, S({2}))),
                        {4, 8}, S({2}));
  ExpectValues<uint8_t>(Eval<uint8_t>("Sub", MakeTensor<uint8_t>({3, 9}, S({2})), MakeTensor<uint8_t>({5, 4}, S({2}))),
                        {254, 5}, S({2}));
  ExpectValues<uint8_t>(Eval<uint8_t>("Mul", MakeTensor<uint8_t>({16, 15}, S({2})), MakeTensor<uint8_t>({16}, S({}))),
                        {0, 240}, S({2}));
  // 3^39 is the largest power of 3 in int64; 2^64 wraps to 0.
  ExpectValues<int64_t>(Eval<int64_t>("Pow", MakeTensor<int64_t>({2, 3, 2}, S({3})),
                                      MakeTensor<int64_t>({62, 39, 64}, S({3}))),
                        {int64_t{1} << 62, 4052555153018976267, 0}, S({3}));
}

TEST(ArithmeticTest, StringAdd) {
  auto t = [](std::vector<std::string> v, TensorShape s) { return MakeTensor<std::string>(v, s); };
  ExpectValues<std::string>(Eval<std::string>("Add", t({"a", "bc"}, S({2})), t({"x", "yz"}, S({2}))), {"ax", "bcyz"},
                            S({2}));
  ExpectValues<std::string>(Eval<std::string>("Add", t({"a", "b"}, S({2, 1})), t({"1", "2", "3"}, S({3}))),
                            {"a1", "a2", "a3", "b1", "b2", "b3"}, S({2, 3}));
  ExpectValues<std::string>(Eval<std::string>("Add", t({"<"}, S({})), t({"p", "q"}, S({2}))), {"<p", "<q"}, S({2}));
  EXPECT_FALSE(RunOpKernel("AddV2", {t({"a"}, S({})), t({"b"}, S({}))}).ok());  // AddV2 has no strings
}

TEST(ArithmeticTest, StaticShapes) {
  auto f = [](TensorShape s) { return Tensor(DT_FLOAT, s); };
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "Pow"}) {
    SCOPED_TRACE(op);
    auto shapes = InferShapes(op, {f(S({2, 3})), f(S({3}))});
    ASSERT_TRUE(shapes.ok()) << shapes.status();
    EXPECT_EQ((*shapes)[0], PartialTensorShape({2, 3}));
    shapes = InferShapes(op, {f(S({2, 1})), f(S({1, 3}))});
    ASSERT_TRUE(shapes.ok());
    EXPECT_EQ((*shapes)[0], PartialTensorShape({2, 3}));
    shapes = InferShapes(op, {f(S({})), f(S({2, 2}))});
    ASSERT_TRUE(shapes.ok());
    EXPECT_EQ((*shapes)[0], PartialTensorShape({2, 2}));
    // Incompatible shapes fail while the graph is built.
    shapes = InferShapes(op, {f(S({2, 3})), f(S({2}))});
    ASSERT_FALSE(shapes.ok());
    EXPECT_EQ(shapes.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(shapes.status().message().find("Incompatible shapes"), absl::string_view::npos) << shapes.status();
  }
}

TEST(ArithmeticTest, KernelRejectsIncompatibleShapes) {
  auto r = KernelRunner::Create("Add", {DT_FLOAT, DT_FLOAT});
  ASSERT_TRUE(r.ok()) << r.status();
  auto out = (*r)->Run({Tensor(DT_FLOAT, S({2, 3})), Tensor(DT_FLOAT, S({2}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("Incompatible shapes: [2,3] vs. [2]"), absl::string_view::npos) << out.status();
  EXPECT_NE(out.status().message().find("node"), absl::string_view::npos) << out.status();
  // The same kernel computes compatible shapes.
  auto ok = (*r)->Run1({MakeTensor<float>({1, 2}, S({2, 1})), MakeTensor<float>({10, 20, 30}, S({3}))});
  ASSERT_TRUE(ok.ok()) << ok.status();
  ExpectValues<float>(*ok, {11, 21, 31, 12, 22, 32}, S({2, 3}));
}

TEST(ArithmeticTest, IntegerDivisionByZero) {
  for (const char* op : {"Div", "RealDiv"}) {
    auto out = RunOpKernel(op, {MakeTensor<int32_t>({1, 2}, S({2})), MakeTensor<int32_t>({1, 0}, S({2}))});
    ASSERT_FALSE(out.ok()) << op;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find("Integer division by zero"), absl::string_view::npos) << out.status();
  }
  auto out = RunOpKernel("Div", {MakeTensor<int64_t>({5}, S({})), MakeTensor<int64_t>({0}, S({}))});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  out = RunOpKernel("Div", {MakeTensor<uint8_t>({5, 6}, S({2})), MakeTensor<uint8_t>({0}, S({}))});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  // Through broadcasting, with shapes unknown while building.
  auto r = KernelRunner::Create("Div", {DT_INT32, DT_INT32});
  ASSERT_TRUE(r.ok());
  out = (*r)->Run({MakeTensor<int32_t>({1, 2, 3, 4}, S({2, 2})), MakeTensor<int32_t>({0, 1}, S({2, 1}))});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ArithmeticTest, NegativeIntegerPower) {
  auto out = RunOpKernel("Pow", {MakeTensor<int32_t>({2, 2}, S({2})), MakeTensor<int32_t>({1, -1}, S({2}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("Integers to negative integer powers are not allowed"), absl::string_view::npos)
      << out.status();
  out = RunOpKernel("Pow", {MakeTensor<int64_t>({2}, S({})), MakeTensor<int64_t>({-3}, S({}))});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ArithmeticTest, EmptyTensors) {
  auto out = RunOpKernel("Mul", {Tensor(DT_FLOAT, S({0, 3})), Tensor(DT_FLOAT, S({1, 3}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), S({0, 3}));
}

TEST(ArithmeticTest, UnsupportedType) {
  auto out = RunOpKernel("Sub", {Tensor(true), Tensor(false)});
  EXPECT_FALSE(out.ok());
}

}  // namespace
}  // namespace dflow
