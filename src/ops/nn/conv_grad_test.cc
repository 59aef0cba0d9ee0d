// Numerical gradient checks of Conv2D and of its two backprop ops (which have gradients too),
// on the double reference path and the float oneDNN path; and the float path's symbolic
// gradients against the double path's on the same values.
#include "ops/nn/conv_test_util.h"
#include "ops/nn/nn_test_util.h"

namespace dflow {
namespace {

using nn_testing::ConvCase;
using nn_testing::Random;

ConvCase Case(const char* format, const char* padding, int64_t stride, int64_t dilation) {
  ConvCase k;
  k.format = format;
  k.padding = padding;
  k.stride_h = k.stride_w = stride;
  k.dil_h = k.dil_w = dilation;
  k.n = 1;
  k.h = 5;
  k.w = 4;
  k.c = 2;
  k.kh = 3;
  k.kw = 2;
  k.oc = 2;
  return k;
}

std::vector<ConvCase> GradCases() {
  std::vector<ConvCase> cases = {Case("NHWC", "SAME", 1, 1), Case("NCHW", "VALID", 2, 1), Case("NHWC", "SAME", 2, 2),
                                 Case("NCHW", "SAME", 1, 2)};
  ConvCase ex = Case("NHWC", "EXPLICIT", 2, 1);
  ex.pads = {1, 0, 2, 1};
  cases.push_back(ex);
  cases[1].n = 2;
  return cases;
}

Tensor Sizes(const TensorShape& s) {
  return testing::MakeTensor<int32_t>({int32_t(s.dim_size(0)), int32_t(s.dim_size(1)), int32_t(s.dim_size(2)),
                                       int32_t(s.dim_size(3))},
                                      TensorShape{4});
}

double Conv2DGradError(const ConvCase& k, DType dtype, double delta, std::mt19937* rng) {
  Tensor x = Random<double>(k.InputShape(), rng), f = Random<double>(k.FilterShape(), rng);
  if (dtype == DT_FLOAT) {
    x = nn_testing::Cast<float>(x);
    f = nn_testing::Cast<float>(f);
  }
  return nn_testing::OpGradientError("Conv2D", {x, f}, k.Attrs(), {}, {0}, delta);
}

TEST(ConvGradTest, Conv2DDouble) {
  std::mt19937 rng(1);
  for (const ConvCase& k : GradCases()) EXPECT_LT(Conv2DGradError(k, DT_DOUBLE, 1e-3, &rng), 1e-9) << k.Name();
}

TEST(ConvGradTest, Conv2DFloatThroughOneDnn) {
  std::mt19937 rng(2);
  for (const ConvCase& k : GradCases()) EXPECT_LT(Conv2DGradError(k, DT_FLOAT, 1e-2, &rng), 2e-3) << k.Name();
}

TEST(ConvGradTest, BackpropInputAndFilterHaveGradients) {
  std::mt19937 rng(3);
  for (const ConvCase& k : GradCases()) {
    SCOPED_TRACE(k.Name());
    Tensor f = Random<double>(k.FilterShape(), &rng), g = Random<double>(k.OutputShape(), &rng);
    Tensor x = Random<double>(k.InputShape(), &rng);
    const AttrMap attrs = k.Attrs();
    auto err = MaxGradientError({f, g}, [&](GraphBuilder* b, const std::vector<NodeOut>& xs) {
      return std::vector<NodeOut>{b->Op("Conv2DBackpropInput", {b->Const(Sizes(k.InputShape())), xs[0], xs[1]}, attrs)};
    });
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-9);
    err = MaxGradientError({x, g}, [&](GraphBuilder* b, const std::vector<NodeOut>& xs) {
      return std::vector<NodeOut>{
          b->Op("Conv2DBackpropFilter", {xs[0], b->Const(Sizes(k.FilterShape())), xs[1]}, attrs)};
    });
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-9);
  }
}

// A conv -> relu -> conv chain: gradients compose through both filters.
TEST(ConvGradTest, TwoLayerChain) {
  std::mt19937 rng(4);
  ConvCase k = Case("NHWC", "SAME", 1, 1);
  Tensor x = Random<double>(k.InputShape(), &rng), f1 = Random<double>(k.FilterShape(), &rng);
  Tensor f2 = Random<double>(TensorShape{2, 2, k.oc, 1}, &rng);
  const AttrMap attrs = k.Attrs();
  auto err = MaxGradientError({x, f1, f2}, [&](GraphBuilder* b, const std::vector<NodeOut>& xs) {
    NodeOut h = b->Op("Softplus", {b->Op("Conv2D", {xs[0], xs[1]}, attrs)});
    return std::vector<NodeOut>{b->Op("Conv2D", {h, xs[2]}, attrs)};
  });
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-6);
}

TEST(ConvGradTest, FloatOneDnnGradientsMatchDoubleReference) {
  std::mt19937 rng(5);
  std::vector<ConvCase> cases = GradCases();
  ConvCase big;  // big enough to take the multi-threaded path
  big.n = 2;
  big.h = big.w = 14;
  big.c = 8;
  big.kh = big.kw = 3;
  big.oc = 16;
  big.stride_h = 2;
  cases.push_back(big);
  for (const ConvCase& k : cases) {
    SCOPED_TRACE(k.Name());
    Tensor x = Random<float>(k.InputShape(), &rng), f = Random<float>(k.FilterShape(), &rng);
    Tensor g = Random<float>(k.OutputShape(), &rng);
    nn_testing::ExpectFloatGradientsMatchDouble("Conv2D", {x, f}, {0, 1}, g, k.Attrs());
    // Second order: the backprop ops' own gradients on both paths.
    Tensor dx = Random<float>(k.InputShape(), &rng);
    nn_testing::ExpectFloatGradientsMatchDouble("Conv2DBackpropInput", {Sizes(k.InputShape()), f, g}, {1, 2}, dx,
                                                k.Attrs());
    Tensor dfilter = Random<float>(k.FilterShape(), &rng);
    nn_testing::ExpectFloatGradientsMatchDouble("Conv2DBackpropFilter", {x, Sizes(k.FilterShape()), g}, {0, 2}, dfilter,
                                                k.Attrs());
  }
}

}  // namespace
}  // namespace dflow
