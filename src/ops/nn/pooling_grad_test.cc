// Numerical gradient checks of MaxPool, AvgPool and AvgPoolGrad on the double reference path and
// the float oneDNN path, and the float path's symbolic gradients against the double path's;
// second derivatives of MaxPool through MaxPoolGrad and MaxPoolGradGrad.
#include "ops/nn/nn_test_util.h"

namespace dflow {
namespace {

using nn_testing::Distinct;
using nn_testing::Random;

struct Pool {
  const char* format;
  const char* padding;
  int64_t k, s;
  AttrMap Attrs() const {
    auto list = [&](int64_t v) {
      return std::string(format) == "NHWC" ? std::vector<int64_t>{1, v, v, 1} : std::vector<int64_t>{1, 1, v, v};
    };
    return {{"ksize", list(k)}, {"strides", list(s)}, {"padding", padding}, {"data_format", format}};
  }
  TensorShape Input() const {
    return std::string(format) == "NHWC" ? TensorShape{2, 5, 4, 2} : TensorShape{2, 2, 5, 4};
  }
};

const std::vector<Pool> kPools = {{"NHWC", "SAME", 2, 2},
                                  {"NHWC", "VALID", 3, 1},
                                  {"NCHW", "SAME", 3, 2},
                                  {"NCHW", "VALID", 2, 1}};

TEST(PoolingGradTest, MaxAndAvgPoolDouble) {
  std::mt19937 rng(1);
  for (const Pool& p : kPools) {
    SCOPED_TRACE(absl::StrCat(p.format, " ", p.padding, " k", p.k, " s", p.s));
    // Distinct values 0.05 apart: the finite-difference step never changes a window's argmax.
    EXPECT_LT(nn_testing::OpGradientError("MaxPool", {Distinct<double>(p.Input(), &rng)}, p.Attrs()), 1e-9);
    EXPECT_LT(nn_testing::OpGradientError("AvgPool", {Random<double>(p.Input(), &rng)}, p.Attrs()), 1e-9);
  }
}

TEST(PoolingGradTest, MaxAndAvgPoolFloat) {
  std::mt19937 rng(2);
  for (const Pool& p : kPools) {
    SCOPED_TRACE(absl::StrCat(p.format, " ", p.padding, " k", p.k, " s", p.s));
    EXPECT_LT(nn_testing::OpGradientError("MaxPool", {Distinct<float>(p.Input(), &rng)}, p.Attrs(), {}, {0}, 1e-2),
              1e-3);
    EXPECT_LT(nn_testing::OpGradientError("AvgPool", {Random<float>(p.Input(), &rng)}, p.Attrs(), {}, {0}, 1e-2), 1e-3);
  }
}

TEST(PoolingGradTest, AvgPoolGradHasAGradient) {
  std::mt19937 rng(3);
  for (const Pool& p : kPools) {
    Tensor y = nn_testing::RunOp("AvgPool", {Random<double>(p.Input(), &rng)}, p.Attrs()).at(0);
    const TensorShape s = p.Input();
    Tensor sizes = testing::MakeTensor<int32_t>({int32_t(s.dim_size(0)), int32_t(s.dim_size(1)), int32_t(s.dim_size(2)),
                                                 int32_t(s.dim_size(3))},
                                                TensorShape{4});
    auto err = MaxGradientError({Random<double>(y.shape(), &rng)}, [&](GraphBuilder* b,
                                                                       const std::vector<NodeOut>& xs) {
      return std::vector<NodeOut>{b->Op("AvgPoolGrad", {b->Const(sizes), xs[0]}, p.Attrs())};
    });
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-9);
  }
}

TEST(PoolingGradTest, FloatOneDnnGradientsMatchDoubleReference) {
  std::mt19937 rng(4);
  for (const Pool& p : kPools) {
    SCOPED_TRACE(absl::StrCat(p.format, " ", p.padding, " k", p.k, " s", p.s));
    Tensor x = Distinct<float>(p.Input(), &rng);
    Tensor y = nn_testing::RunOp("MaxPool", {x}, p.Attrs()).at(0);
    Tensor g = Random<float>(y.shape(), &rng);
    nn_testing::ExpectFloatGradientsMatchDouble("MaxPool", {x}, {0}, g, p.Attrs());
    nn_testing::ExpectFloatGradientsMatchDouble("AvgPool", {x}, {0}, g, p.Attrs());
  }
}

// Second derivatives through MaxPool: its gradient graph (MaxPoolGrad) differentiated again
// with respect to the input (zero: the routing is piecewise constant) and the incoming gradient
// (MaxPoolGradGrad), and MaxPoolGradGrad's own gradient (MaxPoolGrad).
TEST(PoolingGradTest, MaxPoolSecondDerivatives) {
  std::mt19937 rng(5);
  for (const Pool& p : kPools) {
    SCOPED_TRACE(absl::StrCat(p.format, " ", p.padding, " k", p.k, " s", p.s));
    Tensor x = Distinct<double>(p.Input(), &rng);
    Tensor y = nn_testing::RunOp("MaxPool", {x}, p.Attrs()).at(0);
    auto err = MaxGradientError({x, Random<double>(y.shape(), &rng)},
                                [&](GraphBuilder* b, const std::vector<NodeOut>& in) {
                                  NodeOut pooled = b->Op("MaxPool", {in[0]}, p.Attrs());
                                  auto g = AddGradients(b->graph(), {pooled}, {in[0]}, {in[1]});
                                  if (!g.ok()) b->SetError(g.status());
                                  return g.ok() ? *g : std::vector<NodeOut>{};
                                });
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-9);
    EXPECT_LT(nn_testing::OpGradientError("MaxPoolGradGrad", {x, y, Random<double>(x.shape(), &rng)}, p.Attrs()), 1e-9);
  }
}

// MaxPoolGradGrad is MaxPoolGrad's adjoint: <MaxPoolGrad(x, y, a), b> = <a, MaxPoolGradGrad(x, y, b)>.
TEST(PoolingGradTest, MaxPoolGradGradIsTheAdjointOfMaxPoolGrad) {
  std::mt19937 rng(6);
  for (const Pool& p : kPools) {
    SCOPED_TRACE(absl::StrCat(p.format, " ", p.padding, " k", p.k, " s", p.s));
    Tensor x = Distinct<double>(p.Input(), &rng);
    Tensor y = nn_testing::RunOp("MaxPool", {x}, p.Attrs()).at(0);
    Tensor a = Random<double>(y.shape(), &rng), bt = Random<double>(x.shape(), &rng);
    Tensor ga = nn_testing::RunOp("MaxPoolGrad", {x, y, a}, p.Attrs()).at(0);
    Tensor gb = nn_testing::RunOp("MaxPoolGradGrad", {x, y, bt}, p.Attrs()).at(0);
    ASSERT_EQ(gb.shape(), y.shape());
    double lhs = 0, rhs = 0;
    for (int64_t i = 0; i < x.NumElements(); ++i) lhs += ga.flat<double>()[i] * bt.flat<double>()[i];
    for (int64_t i = 0; i < y.NumElements(); ++i) rhs += a.flat<double>()[i] * gb.flat<double>()[i];
    EXPECT_NEAR(lhs, rhs, 1e-12);
  }
}

TEST(PoolingGradTest, MaxPoolGradGradValuesAndBadInputs) {
  // 1x4x4x1, 2x2 windows, stride 2 (NHWC): each output takes grad at its window's maximum.
  Tensor x = testing::MakeTensor<float>({1, 9, 2, 3,   //
                                         4, 0, 8, 7,   //
                                         5, 6, 1, 1,   //
                                         2, 3, 1, 0},  // ties: the first maximum wins
                                        TensorShape{1, 4, 4, 1});
  Tensor g = testing::MakeTensor<float>({10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25},
                                        TensorShape{1, 4, 4, 1});
  AttrMap attrs = {{"ksize", std::vector<int64_t>{1, 2, 2, 1}},
                   {"strides", std::vector<int64_t>{1, 2, 2, 1}},
                   {"padding", "VALID"}};
  Tensor y = nn_testing::RunOp("MaxPool", {x}, attrs).at(0);
  Tensor out = nn_testing::RunOp("MaxPoolGradGrad", {x, y, g}, attrs).at(0);
  ASSERT_EQ(out.shape(), TensorShape({1, 2, 2, 1}));
  EXPECT_EQ(std::vector<float>(out.flat<float>().begin(), out.flat<float>().end()),
            (std::vector<float>{11, 16, 19, 20}));
  Status bad = nn_testing::RunError("MaxPoolGradGrad", {x, y, y}, attrs);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("grad has shape [1,2,2,1] but orig_input has shape [1,4,4,1]"), std::string::npos)
      << bad;
  bad = nn_testing::RunError("MaxPoolGradGrad", {x, x, g}, attrs);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("orig_output"), std::string::npos) << bad;
}

}  // namespace
}  // namespace dflow
