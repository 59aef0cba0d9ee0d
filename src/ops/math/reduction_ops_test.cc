// Sum, Mean, Max, Min, Prod: every subset of axes of rank-3 inputs against a naive loop, negative
// and duplicate axes, keep_dims, empty reductions, dtypes, static shapes and bad axes.
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
Tensor Axes(std::vector<int32_t> a) { return MakeTensor<int32_t>(a, S({static_cast<int64_t>(a.size())})); }

Tensor Eval(const std::string& op, const Tensor& x, const Tensor& axes, bool keep_dims = false) {
  auto out = RunOpKernel(op, {x, axes}, {{"keep_dims", keep_dims}});
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

// Reduces with a plain odometer over the input: out[index with reduced coords dropped].
template <typename T>
std::vector<T> NaiveReduce(const std::string& op, const std::vector<T>& x, const TensorShape& shape,
                           const std::vector<bool>& reduced, TensorShape* out_shape, bool keep_dims) {
  *out_shape = TensorShape();
  int64_t count = 1;
  for (int i = 0; i < shape.dims(); ++i) {
    if (!reduced[i]) out_shape->AddDimUnchecked(shape.dim_size(i));
    else {
      count *= shape.dim_size(i);
      if (keep_dims) out_shape->AddDimUnchecked(1);
    }
  }
  const int64_t n = out_shape->num_elements();
  std::vector<long double> acc(n, op == "Prod" ? 1.0L : 0.0L);
  std::vector<T> ext(n, op == "Max" ? (std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity()
                                                                   : std::numeric_limits<T>::lowest())
                                    : (std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity()
                                                                   : std::numeric_limits<T>::max()));
  std::vector<int64_t> coord(shape.dims(), 0);
  for (int64_t flat = 0; flat < shape.num_elements(); ++flat) {
    int64_t rem = flat;
    for (int i = shape.dims() - 1; i >= 0; --i) {
      coord[i] = rem % shape.dim_size(i);
      rem /= shape.dim_size(i);
    }
    int64_t o = 0;
    for (int i = 0; i < shape.dims(); ++i)
      if (!reduced[i]) o = o * shape.dim_size(i) + coord[i];
    acc[o] = op == "Prod" ? acc[o] * x[flat] : acc[o] + x[flat];
    if (op == "Max") ext[o] = std::max(ext[o], x[flat]);
    if (op == "Min") ext[o] = std::min(ext[o], x[flat]);
  }
  std::vector<T> r(n);
  for (int64_t i = 0; i < n; ++i) {
    if (op == "Max" || op == "Min") r[i] = ext[i];
    else if (op == "Mean") r[i] = static_cast<T>(acc[i] / count);
    else r[i] = static_cast<T>(acc[i]);
  }
  return r;
}

template <typename T>
class ReductionTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(ReductionTest, Types);

TYPED_TEST(ReductionTest, EverySubsetOfAxesMatchesNaive) {
  using T = TypeParam;
  for (TensorShape shape : {S({2, 3, 4}), S({1, 5, 1}), S({3, 1, 2}), S({4, 2, 3})}) {
    std::vector<T> x(shape.num_elements());
    // Values in {-2, -1, 1, 2}: products of 24 of them fit in int32.
    const int kValues[] = {-2, -1, 1, 2};
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(kValues[(i * 3 + i / 5) % 4]);
    if constexpr (std::is_floating_point_v<T>) {
      for (size_t i = 0; i < x.size(); ++i) x[i] = x[i] / 4 + static_cast<T>(0.125);
    }
    for (int mask = 0; mask < 8; ++mask) {
      std::vector<int32_t> axes;
      std::vector<bool> reduced(3);
      for (int i = 0; i < 3; ++i) {
        reduced[i] = (mask >> i) & 1;
        // Alternate positive and negative spellings of the same axis.
        if (reduced[i]) axes.push_back((mask + i) % 2 ? i : i - 3);
      }
      for (bool keep : {false, true}) {
        for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
          SCOPED_TRACE(std::string(op) + " " + shape.DebugString() + " mask " + std::to_string(mask) +
                       (keep ? " keep_dims" : ""));
          TensorShape out_shape;
          std::vector<T> want = NaiveReduce<T>(op, x, shape, reduced, &out_shape, keep);
          ExpectValues<T>(Eval(op, MakeTensor<T>(x, shape), Axes(axes), keep), want, out_shape);
        }
      }
    }
  }
}

TEST(ReductionTest, HandComputed) {
  Tensor x = MakeTensor<float>({1, 2, 3, 4, 5, 6}, S({2, 3}));
  ExpectValues<float>(Eval("Sum", x, Axes({0})), {5, 7, 9}, S({3}));
  ExpectValues<float>(Eval("Sum", x, Axes({1})), {6, 15}, S({2}));
  ExpectValues<float>(Eval("Sum", x, Axes({0, 1})), {21}, S({}));
  ExpectValues<float>(Eval("Sum", x, Axes({-1}), true), {6, 15}, S({2, 1}));
  ExpectValues<float>(Eval("Mean", x, Axes({1})), {2, 5}, S({2}));
  ExpectValues<float>(Eval("Max", x, Axes({0})), {4, 5, 6}, S({3}));
  ExpectValues<float>(Eval("Min", x, Axes({1})), {1, 4}, S({2}));
  ExpectValues<float>(Eval("Prod", x, Axes({1})), {6, 120}, S({2}));
  // A scalar axis, no axes at all.
  ExpectValues<float>(Eval("Sum", x, Tensor(int32_t{1})), {6, 15}, S({2}));
  ExpectValues<float>(Eval("Sum", x, MakeTensor<int64_t>({-2}, S({}))), {5, 7, 9}, S({3}));
  ExpectValues<float>(Eval("Max", x, Axes({})), {1, 2, 3, 4, 5, 6}, S({2, 3}));
  ExpectValues<float>(Eval("Sum", Tensor(7.5f), Axes({})), {7.5f}, S({}));
  // Integer means truncate toward zero, and do not wrap where int32 would.
  ExpectValues<int32_t>(Eval("Mean", MakeTensor<int32_t>({1, 2, -7, 2}, S({2, 2})), Axes({1})), {1, -2}, S({2}));
  ExpectValues<int32_t>(Eval("Mean", MakeTensor<int32_t>({2000000000, 2000000000}, S({2})), Axes({0})), {2000000000},
                        S({}));
  ExpectValues<uint8_t>(Eval("Mean", MakeTensor<uint8_t>({200, 250}, S({2})), Axes({0})), {225}, S({}));
  ExpectValues<int32_t>(Eval("Sum", MakeTensor<int32_t>({2147483647, 1}, S({2})), Axes({0})), {-2147483647 - 1}, S({}));
}

TEST(ReductionTest, FloatSumsAccumulateInDouble) {
  // 2^24 + 1 + 1 + ... : a float accumulator would stay at 2^24.
  std::vector<float> x(1001, 1.0f);
  x[0] = 16777216.0f;
  ExpectValues<float>(Eval("Sum", MakeTensor<float>(x, S({1001})), Axes({0})), {16778216.0f}, S({}));
}

TEST(ReductionTest, EmptyReductionsGiveTheIdentity) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor e = Tensor(DT_FLOAT, S({0, 3}));
  ExpectValues<float>(Eval("Sum", e, Axes({0})), {0, 0, 0}, S({3}));
  ExpectValues<float>(Eval("Prod", e, Axes({0})), {1, 1, 1}, S({3}));
  ExpectValues<float>(Eval("Max", e, Axes({0})), {-inf, -inf, -inf}, S({3}));
  ExpectValues<float>(Eval("Min", e, Axes({0}), true), {inf, inf, inf}, S({1, 3}));
  Tensor mean = Eval("Mean", e, Axes({0}));
  ASSERT_EQ(mean.shape(), S({3}));
  EXPECT_TRUE(std::isnan(mean.flat<float>()[0]));
  ExpectValues<float>(Eval("Sum", e, Axes({1})), {}, S({0}));
  ExpectValues<float>(Eval("Sum", e, Axes({0, 1})), {0}, S({}));
  ExpectValues<int32_t>(Eval("Max", Tensor(DT_INT32, S({2, 0})), Axes({1})),
                        {std::numeric_limits<int32_t>::lowest(), std::numeric_limits<int32_t>::lowest()}, S({2}));
  ExpectValues<int64_t>(Eval("Min", Tensor(DT_INT64, S({0})), Axes({0})), {std::numeric_limits<int64_t>::max()}, S({}));
  ExpectValues<int64_t>(Eval("Mean", Tensor(DT_INT64, S({0})), Axes({0})), {0}, S({}));
}

TEST(ReductionTest, MaxAndMinPropagateNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = MakeTensor<double>({1, nan, 3, 4, 5, 6}, S({2, 3}));
  ExpectValues<double>(Eval("Max", x, Axes({1})), {nan, 6}, S({2}));
  ExpectValues<double>(Eval("Min", x, Axes({0})), {1, nan, 3}, S({3}));
}

TEST(ReductionTest, StaticShapes) {
  Tensor x(DT_FLOAT, S({2, 3, 4}));
  auto infer = [&](const Tensor& axes, bool keep) {
    auto s = InferShapes("Sum", {x, axes}, {{"keep_dims", keep}});
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? (*s)[0] : PartialTensorShape();
  };
  EXPECT_EQ(infer(Axes({1}), false), PartialTensorShape({2, 4}));
  EXPECT_EQ(infer(Axes({-1, 0}), true), PartialTensorShape({1, 3, 1}));
  EXPECT_EQ(infer(Tensor(int32_t{2}), false), PartialTensorShape({2, 3}));
  EXPECT_EQ(infer(Axes({}), false), PartialTensorShape({2, 3, 4}));
  EXPECT_EQ(infer(Axes({0, 1, 2}), false), PartialTensorShape::Scalar());

  // Axes known only at run time: keep_dims keeps the rank; otherwise the rank is unknown.
  Graph g;
  NodeSpec px{"x", "Placeholder", {}, {}, {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape({2, -1, 4})}}};
  NodeSpec pa{"a", "Placeholder", {}, {}, {{"dtype", DT_INT32}, {"shape", PartialTensorShape({1})}}};
  RegisterAllOps();
  Node* xn = g.AddNode(px).value();
  Node* an = g.AddNode(pa).value();
  Node* keep = g.AddNode(NodeSpec{"k", "Max", {{xn, 0}, {an, 0}}, {}, {{"keep_dims", true}}}).value();
  EXPECT_EQ(keep->output_shape(0), PartialTensorShape({-1, -1, -1}));
  Node* drop = g.AddNode(NodeSpec{"d", "Max", {{xn, 0}, {an, 0}}, {}, {}}).value();
  EXPECT_TRUE(drop->output_shape(0).unknown_rank());
  // Constant axes with a partially known input keep the unknown dims.
  NodeSpec c{"c", "Const", {}, {}, {{"value", Axes({0})}, {"dtype", DT_INT32}}};
  Node* cn = g.AddNode(c).value();
  Node* partial = g.AddNode(NodeSpec{"p", "Mean", {{xn, 0}, {cn, 0}}, {}, {}}).value();
  EXPECT_EQ(partial->output_shape(0), PartialTensorShape({-1, 4}));
}

TEST(ReductionTest, BadAxes) {
  Tensor x(DT_FLOAT, S({2, 3}));
  for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
    SCOPED_TRACE(op);
    // Caught while building when the axes are constant...
    auto s = InferShapes(op, {x, Axes({2})});
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find("Invalid reduction dimension 2"), absl::string_view::npos) << s.status();
    EXPECT_FALSE(InferShapes(op, {x, Axes({-3})}).ok());
    EXPECT_FALSE(InferShapes(op, {x, MakeTensor<int32_t>({0, 1}, S({1, 2}))}).ok());
    EXPECT_FALSE(InferShapes(op, {x, MakeTensor<float>({0}, S({1}))}).ok());
    // ... and by the kernel when they are not.
    auto r = KernelRunner::Create(op, {DT_FLOAT, DT_INT64});
    ASSERT_TRUE(r.ok()) << r.status();
    auto out = (*r)->Run({x, MakeTensor<int64_t>({0, 5}, S({2}))});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find("Invalid reduction dimension 5"), absl::string_view::npos) << out.status();
    EXPECT_NE(out.status().message().find("[2,3]"), absl::string_view::npos) << out.status();
    // An axis named twice (also as -1 and 1): the shape function allows it, the kernel does not
    // (TensorFlow's behaviour).
    EXPECT_TRUE(InferShapes(op, {x, Axes({1, -1})}).ok());
    for (auto dup : {MakeTensor<int64_t>({1, -1}, S({2})), MakeTensor<int64_t>({0, 0}, S({2}))}) {
      out = (*r)->Run({x, dup});
      EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(out.status().message().find("duplicate dimension"), absl::string_view::npos) << out.status();
    }
    out = (*r)->Run({x, MakeTensor<int64_t>({0, 1}, S({2, 1}))});
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    out = (*r)->Run({Tensor(1.0f), MakeTensor<int64_t>({0}, S({1}))});
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    out = (*r)->Run({x, MakeTensor<int64_t>({std::numeric_limits<int64_t>::min()}, S({}))});
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_FALSE(RunOpKernel("Sum", {Tensor(true), Axes({})}).ok());  // no bool kernels
}

}  // namespace
}  // namespace dflow
