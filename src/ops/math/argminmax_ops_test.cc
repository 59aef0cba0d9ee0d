// ArgMax, ArgMin: every axis of a rank-3 input against a naive scan, ties, NaN, output types,
// static shapes and bad inputs.
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
using testing::RunOpKernel;

TensorShape S(std::initializer_list<int64_t> d) { return TensorShape(d); }

Tensor Eval(const std::string& op, const Tensor& x, const Tensor& dim, AttrMap attrs = {}) {
  auto out = RunOpKernel(op, {x, dim}, std::move(attrs));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

template <typename T>
class ArgMinMaxTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, int32_t, int64_t, uint8_t>;
TYPED_TEST_SUITE(ArgMinMaxTest, Types);

TYPED_TEST(ArgMinMaxTest, EveryAxisMatchesNaiveScan) {
  using T = TypeParam;
  const std::vector<int64_t> dims = {3, 4, 5};
  std::vector<T> x(60);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>((i * 37) % 11);  // with ties
  for (int axis = -3; axis < 3; ++axis) {
    const int a = axis < 0 ? axis + 3 : axis;
    std::vector<int64_t> want_max, want_min;
    TensorShape out;
    for (int i = 0; i < 3; ++i)
      if (i != a) out.AddDimUnchecked(dims[i]);
    // Naive: for each output coordinate, scan the axis.
    for (int64_t o = 0; o < out.num_elements(); ++o) {
      std::vector<int64_t> c(3);
      int64_t rem = o;
      for (int i = 2; i >= 0; --i) {
        if (i == a) continue;
        c[i] = rem % dims[i];
        rem /= dims[i];
      }
      int64_t best_max = 0, best_min = 0;
      for (int64_t k = 0; k < dims[a]; ++k) {
        c[a] = k;
        const T v = x[(c[0] * 4 + c[1]) * 5 + c[2]];
        c[a] = best_max;
        if (v > x[(c[0] * 4 + c[1]) * 5 + c[2]]) best_max = k;
        c[a] = best_min;
        if (v < x[(c[0] * 4 + c[1]) * 5 + c[2]]) best_min = k;
      }
      want_max.push_back(best_max);
      want_min.push_back(best_min);
    }
    SCOPED_TRACE(axis);
    Tensor tx = MakeTensor<T>(x, S({3, 4, 5}));
    ExpectValues<int64_t>(Eval("ArgMax", tx, Tensor(int32_t(axis))), want_max, out);
    ExpectValues<int64_t>(Eval("ArgMin", tx, Tensor(int64_t(axis))), want_min, out);
    std::vector<int32_t> want32(want_max.begin(), want_max.end());
    ExpectValues<int32_t>(Eval("ArgMax", tx, Tensor(int32_t(axis)), {{"output_type", DT_INT32}}), want32, out);
  }
}

TEST(ArgMinMaxTest, HandComputedTiesAndNaN) {
  Tensor x = MakeTensor<float>({1, 5, 5, 0, -2, -2}, S({2, 3}));
  ExpectValues<int64_t>(Eval("ArgMax", x, Tensor(1)), {1, 0}, S({2}));  // first of ties
  ExpectValues<int64_t>(Eval("ArgMin", x, Tensor(1)), {0, 1}, S({2}));
  ExpectValues<int64_t>(Eval("ArgMax", x, Tensor(0)), {0, 0, 0}, S({3}));
  ExpectValues<int64_t>(Eval("ArgMax", MakeTensor<float>({7}, S({1})), Tensor(0)), {0}, S({}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // NaN is passed over, as by TensorFlow's kernels (values checked against TensorFlow 2.21).
  Tensor n = MakeTensor<double>({1, nan, 3, nan}, S({4}));
  ExpectValues<int64_t>(Eval("ArgMax", n, Tensor(0)), {2}, S({}));
  ExpectValues<int64_t>(Eval("ArgMin", n, Tensor(0)), {0}, S({}));
  ExpectValues<int64_t>(Eval("ArgMax", MakeTensor<double>({nan, 1, 2}, S({3})), Tensor(0)), {2}, S({}));
  ExpectValues<int64_t>(Eval("ArgMin", MakeTensor<double>({nan, 1, 2}, S({3})), Tensor(0)), {1}, S({}));
  ExpectValues<int64_t>(Eval("ArgMax", MakeTensor<double>({nan, nan}, S({2})), Tensor(0)), {0}, S({}));
  ExpectValues<int64_t>(Eval("ArgMax", MakeTensor<double>({nan, -inf}, S({2})), Tensor(0)), {0}, S({}));
  ExpectValues<int64_t>(Eval("ArgMin", MakeTensor<double>({nan, -inf}, S({2})), Tensor(0)), {1}, S({}));
  // One-element vector dimensions are accepted too; empty outer dims give empty outputs.
  ExpectValues<int64_t>(Eval("ArgMin", x, MakeTensor<int32_t>({-1}, S({1}))), {0, 1}, S({2}));
  ExpectValues<int64_t>(Eval("ArgMax", Tensor(DT_FLOAT, S({0, 3})), Tensor(1)), {}, S({0}));
}

TEST(ArgMinMaxTest, StaticShapesAndBadInputs) {
  Tensor x(DT_FLOAT, S({2, 3, 4}));
  auto s = InferShapes("ArgMax", {x, Tensor(-2)});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 4}));
  EXPECT_FALSE(InferShapes("ArgMax", {x, Tensor(3)}).ok());
  EXPECT_FALSE(InferShapes("ArgMin", {x, Tensor(-4)}).ok());
  EXPECT_FALSE(InferShapes("ArgMin", {Tensor(1.0f), Tensor(0)}).ok());
  // An empty reduced dimension fails the kernel (below), not the shape function: TensorFlow's way.
  EXPECT_TRUE(InferShapes("ArgMin", {Tensor(DT_FLOAT, S({2, 0})), Tensor(1)}).ok());
  EXPECT_FALSE(InferShapes("ArgMax", {x, Tensor(0)}, {{"output_type", DT_FLOAT}}).ok());
  EXPECT_FALSE(InferShapes("ArgMax", {Tensor(true), Tensor(0)}).ok());
  for (const char* op : {"ArgMax", "ArgMin"}) {
    SCOPED_TRACE(op);
    auto r = KernelRunner::Create(op, {DT_FLOAT, DT_INT32});
    ASSERT_TRUE(r.ok()) << r.status();
    auto out = (*r)->Run({x, Tensor(3)});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find("range [-3, 3)"), absl::string_view::npos) << out.status();
    out = (*r)->Run({Tensor(DT_FLOAT, S({2, 0})), Tensor(1)});
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("Reduction axis 1 is empty in shape [2,0]"), absl::string_view::npos)
        << out.status();
    out = (*r)->Run({Tensor(1.0f), Tensor(0)});
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    out = (*r)->Run({x, MakeTensor<int32_t>({0, 1}, S({2}))});
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    out = (*r)->Run({x, Tensor(DT_INT32, S({0}))});
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace dflow
