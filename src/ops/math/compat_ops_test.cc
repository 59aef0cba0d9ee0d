// DivNoNan, MulNoNan, Xdivy, Xlogy: values (the guarded zeros included, with inf/NaN on the other
// side), broadcasting, static shapes, and gradients against central differences.
#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "ops/math/cwise_test_util.h"
#include "ops/math/grad_test_util.h"
#include "ops/testing/kernel_test_util.h"

namespace dflow {
namespace {

using testing::ExpectGradientMatches;
using testing::MakeTensor;
using testing::OneOp;
using testing::RunOpKernel;
using testing::Uniform;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename T>
std::vector<T> Eval(const std::string& op, const std::vector<T>& x, const TensorShape& xs, const std::vector<T>& y,
                    const TensorShape& ys, TensorShape* out_shape = nullptr) {
  auto out = RunOpKernel(op, {MakeTensor<T>(x, xs), MakeTensor<T>(y, ys)});
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  if (!out.ok()) return {};
  if (out_shape != nullptr) *out_shape = (*out)[0].shape();
  auto f = (*out)[0].template flat<T>();
  return std::vector<T>(f.begin(), f.end());
}

// Same NaN-ness, else equal within a few ulps.
template <typename T>
void ExpectNear(const std::vector<T>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(static_cast<double>(got[i]), want[i]) << i;
    } else {
      EXPECT_NEAR(static_cast<double>(got[i]), want[i], 1e-6 * std::max(1.0, std::abs(want[i]))) << i;
    }
  }
}

template <typename T>
class CompatOpsTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CompatOpsTest, FloatTypes);

TYPED_TEST(CompatOpsTest, GuardedZeros) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const TensorShape s({6});
  const std::vector<T> x = {6, -3, inf, nan, 0, 0};
  const std::vector<T> y = {2, 0, 0, 0, 0, nan};
  // DivNoNan / MulNoNan: 0 wherever y is 0, whatever x is.
  ExpectNear(Eval<T>("DivNoNan", x, s, y, s), {3, 0, 0, 0, 0, kNaN});
  ExpectNear(Eval<T>("MulNoNan", x, s, y, s), {12, 0, 0, 0, 0, kNaN});
  // Xdivy / Xlogy: 0 wherever x is 0, whatever y is.
  ExpectNear(Eval<T>("Xdivy", x, s, y, s), {3, -kInf, kInf, kNaN, 0, 0});
  ExpectNear(Eval<T>("Xlogy", x, s, y, s), {6 * std::log(2.0), kInf, -kInf, kNaN, 0, 0});
}

TYPED_TEST(CompatOpsTest, Broadcasting) {
  using T = TypeParam;
  TensorShape out;
  // [2, 1] against [3]: a [2, 3] result.
  auto got = Eval<T>("DivNoNan", {1, 2}, TensorShape({2, 1}), {1, 0, 4}, TensorShape({3}), &out);
  EXPECT_EQ(out, TensorShape({2, 3}));
  ExpectNear(got, {1, 0, 0.25, 2, 0, 0.5});
  got = Eval<T>("Xlogy", {0, 2}, TensorShape({2, 1}), {1, 0.5, 4}, TensorShape({3}), &out);
  EXPECT_EQ(out, TensorShape({2, 3}));
  ExpectNear(got, {0, 0, 0, 0, 2 * std::log(0.5), 2 * std::log(4.0)});
  auto bad = RunOpKernel("MulNoNan",
                         {MakeTensor<T>({1, 2}, TensorShape({2})), MakeTensor<T>({1, 2, 3}, TensorShape({3}))});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CompatOpsTest, StaticShapesAndTypes) {
  auto shapes = testing::InferShapes("DivNoNan",
                                     {Tensor(DT_FLOAT, TensorShape({4, 1})), Tensor(DT_FLOAT, TensorShape({3}))});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0].DebugString(), PartialTensorShape({4, 3}).DebugString());
  // Integer inputs are not in the OpDef's types (TensorFlow's are floating and complex only).
  EXPECT_FALSE(RunOpKernel("DivNoNan", {Tensor(int32_t{1}), Tensor(int32_t{0})}).ok());
}

TEST(CompatOpsTest, Gradients) {
  const std::vector<std::pair<TensorShape, TensorShape>> shapes = {{TensorShape({2, 3}), TensorShape({2, 3})},
                                                                   {TensorShape({2, 3}), TensorShape({3})},
                                                                   {TensorShape({}), TensorShape({2, 2})},
                                                                   {TensorShape({2, 1}), TensorShape({1, 3})}};
  for (const char* op : {"DivNoNan", "MulNoNan", "Xdivy", "Xlogy"}) {
    for (const auto& [xs, ys] : shapes) {
      SCOPED_TRACE(std::string(op) + " " + xs.DebugString() + " " + ys.DebugString());
      // Away from the guarded zeros (where the functions are not smooth).
      ExpectGradientMatches({Uniform(xs, 0.5, 2.0, 3), Uniform(ys, 0.5, 2.0, 4)}, OneOp(op), 1e-6);
    }
  }
}

// MulNoNan is continuous where y is 0: its gradient there (0 for x, x for y) is the derivative.
TEST(CompatOpsTest, MulNoNanGradientAtTheGuard) {
  ExpectGradientMatches({Uniform(TensorShape({3}), 0.5, 2.0, 5), MakeTensor<double>({0, 0, 0}, TensorShape({3}))},
                        OneOp("MulNoNan"), 1e-6);
}

}  // namespace
}  // namespace dflow
