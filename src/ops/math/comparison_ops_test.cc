// Greater, Less, Equal: values for every registered dtype, broadcasting, static shapes, errors.
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
using testing::NaiveBroadcastShape;
using testing::RunOpKernel;

TensorShape S(std::initializer_list<int64_t> d) { return TensorShape(d); }

Tensor Eval(const std::string& op, const Tensor& x, const Tensor& y, AttrMap attrs = {}) {
  auto out = RunOpKernel(op, {x, y}, std::move(attrs));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

template <typename T>
class ComparisonTest : public ::testing::Test {};
using NumericTypes = ::testing::Types<float, double, int32_t, int64_t, uint8_t>;
TYPED_TEST_SUITE(ComparisonTest, NumericTypes);

TYPED_TEST(ComparisonTest, HandComputed) {
  using T = TypeParam;
  Tensor x = MakeTensor<T>({1, 5, 3, 4, 2, 6}, S({2, 3}));
  Tensor y = MakeTensor<T>({3, 2, 6}, S({3}));
  // x = [[1 5 3] [4 2 6]], y = [3 2 6]
  ExpectValues<bool>(Eval("Greater", x, y), {false, true, false, true, false, false}, S({2, 3}));
  ExpectValues<bool>(Eval("Less", x, y), {true, false, true, false, false, false}, S({2, 3}));
  ExpectValues<bool>(Eval("Equal", x, y), {false, false, false, false, true, true}, S({2, 3}));
  // scalar against a matrix
  Tensor three = MakeTensor<T>({3}, S({}));
  ExpectValues<bool>(Eval("Greater", three, x), {true, false, false, false, true, false}, S({2, 3}));
  ExpectValues<bool>(Eval("Less", x, three), {true, false, false, false, true, false}, S({2, 3}));
  // [2,1] vs [1,3]
  ExpectValues<bool>(Eval("Equal", MakeTensor<T>({1, 2}, S({2, 1})), MakeTensor<T>({2, 1, 2}, S({1, 3}))),
                     {false, true, false, true, false, true}, S({2, 3}));
}

TYPED_TEST(ComparisonTest, MatchesNaiveBroadcast) {
  using T = TypeParam;
  const std::vector<std::pair<TensorShape, TensorShape>> pairs = {{S({4}), S({4})},
                                                                  {S({3, 1, 4}), S({2, 1})},
                                                                  {S({4, 1, 5}), S({1, 6, 1})},
                                                                  {S({2, 3, 4}), S({})}};
  for (const auto& [xs, ys] : pairs) {
    std::vector<T> x(xs.num_elements()), y(ys.num_elements());
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(i % 5);
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<T>(i % 3 + 1);
    TensorShape out = NaiveBroadcastShape(xs, ys);
    Tensor tx = MakeTensor<T>(x, xs), ty = MakeTensor<T>(y, ys);
    ExpectValues<bool>(Eval("Greater", tx, ty), NaiveBroadcast<bool>(x, xs, y, ys, out, [](T a, T b) { return a > b; }),
                       out);
    ExpectValues<bool>(Eval("Less", tx, ty), NaiveBroadcast<bool>(x, xs, y, ys, out, [](T a, T b) { return a < b; }),
                       out);
    ExpectValues<bool>(Eval("Equal", tx, ty), NaiveBroadcast<bool>(x, xs, y, ys, out, [](T a, T b) { return a == b; }),
                       out);
  }
}

TEST(ComparisonTest, EqualBoolAndString) {
  ExpectValues<bool>(Eval("Equal", MakeTensor<bool>({true, false, true}, S({3})),
                          MakeTensor<bool>({true, true, false}, S({3}))),
                     {true, false, false}, S({3}));
  ExpectValues<bool>(Eval("Equal", MakeTensor<std::string>({"a", "bc", ""}, S({3})), Tensor("bc")),
                     {false, true, false}, S({3}));
  // Strings and bools are not ordered in TensorFlow's Greater.
  EXPECT_FALSE(RunOpKernel("Greater", {Tensor("a"), Tensor("b")}).ok());
  EXPECT_FALSE(RunOpKernel("Less", {Tensor(true), Tensor(false)}).ok());
}

TEST(ComparisonTest, FloatNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = MakeTensor<float>({nan, 1}, S({2}));
  ExpectValues<bool>(Eval("Equal", x, x), {false, true}, S({2}));
  ExpectValues<bool>(Eval("Greater", x, MakeTensor<float>({0}, S({}))), {false, true}, S({2}));
}

TEST(ComparisonTest, StaticShapes) {
  auto f = [](TensorShape s) { return Tensor(DT_INT32, s); };
  for (const char* op : {"Greater", "Less", "Equal"}) {
    SCOPED_TRACE(op);
    auto shapes = InferShapes(op, {f(S({2, 1})), f(S({1, 3}))});
    ASSERT_TRUE(shapes.ok()) << shapes.status();
    EXPECT_EQ((*shapes)[0], PartialTensorShape({2, 3}));
    shapes = InferShapes(op, {f(S({2, 3})), f(S({2}))});
    ASSERT_FALSE(shapes.ok());
    EXPECT_EQ(shapes.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

TEST(ComparisonTest, EqualIncompatibleShapeErrorFalse) {
  AttrMap attrs;
  attrs["incompatible_shape_error"] = false;
  Tensor x = MakeTensor<int32_t>({1, 2, 3}, S({3}));
  Tensor y = MakeTensor<int32_t>({1, 2}, S({2}));
  auto shapes = InferShapes("Equal", {x, y}, attrs);
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialTensorShape::Scalar());
  ExpectValues<bool>(Eval("Equal", x, y, attrs), {false}, S({}));
  // Compatible shapes still compare element-wise.
  ExpectValues<bool>(Eval("Equal", x, MakeTensor<int32_t>({2}, S({1})), attrs), {false, true, false}, S({3}));
  // The default rejects them, at build time and in the kernel.
  EXPECT_FALSE(InferShapes("Equal", {x, y}).ok());
  auto r = KernelRunner::Create("Equal", {DT_INT32, DT_INT32});
  ASSERT_TRUE(r.ok()) << r.status();
  auto out = (*r)->Run({x, y});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  auto lenient = KernelRunner::Create("Equal", {DT_INT32, DT_INT32}, attrs);
  ASSERT_TRUE(lenient.ok());
  auto v = (*lenient)->Run1({x, y});
  ASSERT_TRUE(v.ok()) << v.status();
  ExpectValues<bool>(*v, {false}, S({}));
}

}  // namespace
}  // namespace dflow
