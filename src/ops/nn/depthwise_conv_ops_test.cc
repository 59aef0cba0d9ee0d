// DepthwiseConv2dNative and its two backprop ops against loops written out here (NHWC/NCHW,
// SAME/VALID/EXPLICIT, strides, dilations, depth multipliers 1 and 2), float and double; bad
// attrs and shapes; numerical gradient checks of all three ops.
#include "gmock/gmock.h"
#include "ops/nn/conv_test_util.h"
#include "ops/nn/dnnl_util.h"
#include "ops/nn/nn_test_util.h"

namespace dflow {
namespace {

using nn_testing::ConvCase;
using nn_testing::ExpectClose;
using nn_testing::Nhwc;
using nn_testing::Random;
using nn_testing::RunError;
using nn_testing::RunOp;

ConvCase Case(const char* format, const char* padding, int64_t stride_h, int64_t stride_w, int64_t dilation,
              int64_t multiplier) {
  ConvCase k;
  k.format = format;
  k.padding = padding;
  k.stride_h = stride_h;
  k.stride_w = stride_w;
  k.dil_h = k.dil_w = dilation;
  k.n = 2;
  k.h = 6;
  k.w = 5;
  k.c = 3;
  k.kh = 3;
  k.kw = 2;
  k.oc = multiplier;
  return k;
}

std::vector<ConvCase> Cases() {
  std::vector<ConvCase> v = {Case("NHWC", "SAME", 1, 1, 1, 1), Case("NHWC", "VALID", 2, 1, 1, 2),
                             Case("NCHW", "SAME", 2, 2, 1, 2), Case("NCHW", "VALID", 1, 1, 2, 1),
                             Case("NHWC", "SAME", 1, 2, 2, 3)};
  ConvCase ex = Case("NHWC", "EXPLICIT", 2, 1, 1, 2);
  ex.pads = {1, 2, 0, 1};
  v.push_back(ex);
  ConvCase exc = Case("NCHW", "EXPLICIT", 1, 1, 1, 1);
  exc.pads = {0, 1, 2, 0};
  v.push_back(exc);
  return v;
}

// Output channel c * multiplier + m, the layout of the output in the case's format.
Nhwc OutLayout(const ConvCase& k) {
  int64_t oh, ow, pt, pl;
  k.Geometry(&oh, &ow, &pt, &pl);
  return Nhwc{k.format, k.n, oh, ow, k.c * k.oc};
}

TensorShape OutShape(const ConvCase& k) {
  Nhwc o = OutLayout(k);
  return k.format == "NHWC" ? TensorShape{o.n, o.h, o.w, o.c} : TensorShape{o.n, o.c, o.h, o.w};
}

std::vector<double> NaiveDepthwise(const ConvCase& k, const std::vector<double>& x, const std::vector<double>& f) {
  const Nhwc in{k.format, k.n, k.h, k.w, k.c}, out = OutLayout(k);
  std::vector<double> y(static_cast<size_t>(out.n * out.h * out.w * out.c), 0.0);
  nn_testing::ForEachTerm(k, [&](int64_t n, int64_t oh, int64_t ow, int64_t m, int64_t ih, int64_t iw, int64_t c,
                                 int64_t kh, int64_t kw) {
    y[out.Index(n, oh, ow, c * k.oc + m)] += x[in.Index(n, ih, iw, c)] * f[nn_testing::FilterIndex(k, kh, kw, c, m)];
  });
  return y;
}

Tensor Sizes(const TensorShape& s) {
  return testing::MakeTensor<int32_t>({int32_t(s.dim_size(0)), int32_t(s.dim_size(1)), int32_t(s.dim_size(2)),
                                       int32_t(s.dim_size(3))},
                                      TensorShape{4});
}

template <typename T>
void CheckValues() {
  std::mt19937 rng(7);
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  for (const ConvCase& k : Cases()) {
    SCOPED_TRACE(k.Name());
    Tensor x = Random<T>(k.InputShape(), &rng), f = Random<T>(k.FilterShape(), &rng);
    const std::vector<double> xv = nn_testing::ToDoubles(x), fv = nn_testing::ToDoubles(f);
    auto out = RunOp("DepthwiseConv2dNative", {x, f}, k.Attrs());
    ASSERT_EQ(out.size(), 1u);
    ExpectClose(out[0], NaiveDepthwise(k, xv, fv), OutShape(k), tol);

    // The backprops against the transposed sums of the same terms.
    Tensor g = Random<T>(OutShape(k), &rng);
    const std::vector<double> gv = nn_testing::ToDoubles(g);
    const Nhwc in{k.format, k.n, k.h, k.w, k.c}, o = OutLayout(k);
    std::vector<double> dx(xv.size(), 0.0), df(fv.size(), 0.0);
    nn_testing::ForEachTerm(k, [&](int64_t n, int64_t oh, int64_t ow, int64_t m, int64_t ih, int64_t iw, int64_t c,
                                   int64_t kh, int64_t kw) {
      const double gy = gv[o.Index(n, oh, ow, c * k.oc + m)];
      dx[in.Index(n, ih, iw, c)] += gy * fv[nn_testing::FilterIndex(k, kh, kw, c, m)];
      df[nn_testing::FilterIndex(k, kh, kw, c, m)] += gy * xv[in.Index(n, ih, iw, c)];
    });
    auto bi = RunOp("DepthwiseConv2dNativeBackpropInput", {Sizes(k.InputShape()), f, g}, k.Attrs());
    ASSERT_EQ(bi.size(), 1u);
    ExpectClose(bi[0], dx, k.InputShape(), tol);
    auto bf = RunOp("DepthwiseConv2dNativeBackpropFilter", {x, Sizes(k.FilterShape()), g}, k.Attrs());
    ASSERT_EQ(bf.size(), 1u);
    ExpectClose(bf[0], df, k.FilterShape(), tol);
  }
}

TEST(DepthwiseConvTest, FloatValuesThroughOneDnn) {
  const int64_t runs = DnnlRunsForTesting();
  CheckValues<float>();
  // Every case's three ops ran through oneDNN.
  EXPECT_GE(DnnlRunsForTesting() - runs, 3 * static_cast<int64_t>(Cases().size()));
}
TEST(DepthwiseConvTest, DoubleValues) { CheckValues<double>(); }

TEST(DepthwiseConvTest, EmptyBatch) {
  ConvCase k = Case("NHWC", "SAME", 1, 1, 1, 2);
  k.n = 0;
  std::mt19937 rng(1);
  auto out = RunOp("DepthwiseConv2dNative", {Random<float>(k.InputShape(), &rng), Random<float>(k.FilterShape(), &rng)},
                   k.Attrs());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), OutShape(k));
}

TEST(DepthwiseConvTest, BadInputs) {
  std::mt19937 rng(3);
  ConvCase k = Case("NHWC", "SAME", 1, 1, 1, 1);
  Tensor x = Random<float>(k.InputShape(), &rng), f = Random<float>(k.FilterShape(), &rng);
  AttrMap a = k.Attrs();
  a["strides"] = std::vector<int64_t>{2, 1, 1, 1};
  EXPECT_EQ(RunError("DepthwiseConv2dNative", {x, f}, a).code(), absl::StatusCode::kUnimplemented);
  Tensor f_bad = Random<float>(TensorShape{3, 2, 2, 1}, &rng);  // depth 2, input depth 3
  EXPECT_EQ(RunError("DepthwiseConv2dNative", {x, f_bad}, k.Attrs()).code(), absl::StatusCode::kInvalidArgument);
  Tensor x3 = Random<float>(TensorShape{6, 5, 3}, &rng);
  EXPECT_EQ(RunError("DepthwiseConv2dNative", {x3, f}, k.Attrs()).code(), absl::StatusCode::kInvalidArgument);
  a = k.Attrs();
  a["data_format"] = "NCDHW";
  EXPECT_EQ(RunError("DepthwiseConv2dNative", {x, f}, a).code(), absl::StatusCode::kInvalidArgument);
  // out_backprop of the wrong shape.
  Tensor g = Random<float>(TensorShape{2, 6, 5, 2}, &rng);
  EXPECT_EQ(RunError("DepthwiseConv2dNativeBackpropInput", {Sizes(k.InputShape()), f, g}, k.Attrs()).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DepthwiseConvTest, FloatGradientsMatchDouble) {
  std::mt19937 rng(9);
  for (const ConvCase& k : Cases()) {
    SCOPED_TRACE(k.Name());
    Tensor x = Random<float>(k.InputShape(), &rng), f = Random<float>(k.FilterShape(), &rng);
    nn_testing::ExpectFloatGradientsMatchDouble("DepthwiseConv2dNative", {x, f}, {0, 1},
                                                Random<float>(OutShape(k), &rng), k.Attrs(), 1e-4);
  }
}

TEST(DepthwiseConvTest, NumericalGradients) {
  std::mt19937 rng(5);
  for (const ConvCase& base : Cases()) {
    ConvCase k = base;
    k.n = 1;
    SCOPED_TRACE(k.Name());
    Tensor x = Random<double>(k.InputShape(), &rng), f = Random<double>(k.FilterShape(), &rng);
    Tensor g = Random<double>(OutShape(k), &rng);
    EXPECT_LT(nn_testing::OpGradientError("DepthwiseConv2dNative", {x, f}, k.Attrs()), 1e-8);
    // BackpropInput(sizes, f, g) is differentiable in f and g; BackpropFilter(x, sizes, g) in x and g.
    auto err = MaxGradientError({f, g}, [&](GraphBuilder* b, const std::vector<NodeOut>& in) {
      return std::vector<NodeOut>{
          b->Op("DepthwiseConv2dNativeBackpropInput", {b->Const(Sizes(k.InputShape())), in[0], in[1]}, k.Attrs())};
    });
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-8);
    err = MaxGradientError({x, g}, [&](GraphBuilder* b, const std::vector<NodeOut>& in) {
      return std::vector<NodeOut>{
          b->Op("DepthwiseConv2dNativeBackpropFilter", {in[0], b->Const(Sizes(k.FilterShape())), in[1]}, k.Attrs())};
    });
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-8);
  }
}

}  // namespace
}  // namespace dflow
