// MaxPool, AvgPool, MaxPoolGrad and AvgPoolGrad against naive pooling written here, for SAME and
// VALID padding, NHWC and NCHW, float (oneDNN) and double (reference loops); bad inputs; empty
// tensors.
#include <limits>

#include "gmock/gmock.h"
#include "ops/nn/conv_test_util.h"
#include "ops/nn/dnnl_util.h"
#include "ops/nn/nn_test_util.h"

namespace dflow {
namespace {

using nn_testing::Distinct;
using nn_testing::ExpectClose;
using nn_testing::Nhwc;
using nn_testing::RunError;
using nn_testing::RunOp;
using nn_testing::ToDoubles;
using ::testing::HasSubstr;

struct PoolCase {
  std::string format = "NHWC";
  std::string padding = "SAME";
  int64_t kh = 2, kw = 2, sh = 2, sw = 2;
  int64_t n = 2, h = 5, w = 6, c = 3;

  std::string Name() const {
    return absl::StrCat(format, " ", padding, " ksize ", kh, "x", kw, " stride ", sh, "x", sw, " input ",
                        InputShape().DebugString());
  }
  AttrMap Attrs() const {
    auto list = [&](int64_t a, int64_t b) {
      return format == "NHWC" ? std::vector<int64_t>{1, a, b, 1} : std::vector<int64_t>{1, 1, a, b};
    };
    return {{"ksize", list(kh, kw)}, {"strides", list(sh, sw)}, {"padding", padding}, {"data_format", format}};
  }
  TensorShape Shape(int64_t rows, int64_t cols) const {
    return format == "NHWC" ? TensorShape{n, rows, cols, c} : TensorShape{n, c, rows, cols};
  }
  TensorShape InputShape() const { return Shape(h, w); }
  // TensorFlow's rules, written out: VALID (in - k + s) / s; SAME ceil(in / s) with half the
  // padding (rounded down) before.
  void Out(int64_t in, int64_t k, int64_t s, int64_t* out, int64_t* before) const {
    if (padding == "VALID") {
      *out = (in - k + s) / s;
      *before = 0;
    } else {
      *out = (in + s - 1) / s;
      *before = std::max<int64_t>((*out - 1) * s + k - in, 0) / 2;
    }
  }
  TensorShape OutputShape() const {
    int64_t oh, ow, p;
    Out(h, kh, sh, &oh, &p);
    Out(w, kw, sw, &ow, &p);
    return Shape(oh, ow);
  }
};

// The real input positions of each window, by brute force over the padded window.
template <typename F>
void ForEachWindow(const PoolCase& k, F f) {
  int64_t oh_n, ow_n, pt, pl;
  k.Out(k.h, k.kh, k.sh, &oh_n, &pt);
  k.Out(k.w, k.kw, k.sw, &ow_n, &pl);
  const Nhwc in{k.format, k.n, k.h, k.w, k.c}, out{k.format, k.n, oh_n, ow_n, k.c};
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t oh = 0; oh < oh_n; ++oh)
      for (int64_t ow = 0; ow < ow_n; ++ow)
        for (int64_t c = 0; c < k.c; ++c) {
          std::vector<int64_t> window;
          for (int64_t i = 0; i < k.kh; ++i)
            for (int64_t j = 0; j < k.kw; ++j) {
              const int64_t ih = oh * k.sh - pt + i, iw = ow * k.sw - pl + j;
              if (ih >= 0 && ih < k.h && iw >= 0 && iw < k.w) window.push_back(in.Index(n, ih, iw, c));
            }
          f(out.Index(n, oh, ow, c), window);
        }
}

std::vector<PoolCase> Cases() {
  std::vector<PoolCase> cases;
  for (const char* format : {"NHWC", "NCHW"}) {
    for (const char* padding : {"SAME", "VALID"}) {
      for (auto [kh, kw, sh, sw] : std::vector<std::array<int64_t, 4>>{
               {2, 2, 2, 2}, {3, 3, 1, 1}, {3, 2, 2, 1}, {1, 1, 2, 2}, {3, 3, 2, 2}, {5, 6, 1, 1}}) {
        PoolCase k;
        k.format = format;
        k.padding = padding;
        k.kh = kh;
        k.kw = kw;
        k.sh = sh;
        k.sw = sw;
        cases.push_back(k);
      }
    }
  }
  return cases;
}

template <typename T>
void CheckPool(const PoolCase& k, std::mt19937* rng) {
  SCOPED_TRACE(absl::StrCat(DTypeString(DTypeOf<T>::value), " ", k.Name()));
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  // Values spread over [-1, 1] (float sums stay accurate), distinct so that maxima are unique.
  Tensor x = Distinct<T>(k.InputShape(), rng, std::min(0.05, 2.0 / double(k.InputShape().num_elements())));
  Tensor g = nn_testing::Random<T>(k.OutputShape(), rng);
  const std::vector<double> xd = ToDoubles(x), gd = ToDoubles(g);
  const int64_t out_n = k.OutputShape().num_elements();
  std::vector<double> max(out_n), avg(out_n), dmax(xd.size(), 0.0), davg(xd.size(), 0.0);
  ForEachWindow(k, [&](int64_t o, const std::vector<int64_t>& window) {
    ASSERT_FALSE(window.empty());
    int64_t best = window[0];
    double sum = 0;
    for (int64_t i : window) {
      if (xd[i] > xd[best]) best = i;
      sum += xd[i];
    }
    max[o] = xd[best];
    avg[o] = sum / double(window.size());
    dmax[best] += gd[o];
    for (int64_t i : window) davg[i] += gd[o] / double(window.size());
  });
  auto y = RunOp("MaxPool", {x}, k.Attrs());
  ASSERT_EQ(y.size(), 1u);
  ExpectClose(y[0], max, k.OutputShape(), tol);
  y = RunOp("AvgPool", {x}, k.Attrs());
  ASSERT_EQ(y.size(), 1u);
  ExpectClose(y[0], avg, k.OutputShape(), tol);
  Tensor orig_out = RunOp("MaxPool", {x}, k.Attrs()).at(0);
  auto dx = RunOp("MaxPoolGrad", {x, orig_out, g}, k.Attrs());
  ASSERT_EQ(dx.size(), 1u);
  ExpectClose(dx[0], dmax, k.InputShape(), tol);
  const TensorShape s = k.InputShape();
  Tensor shape = testing::MakeTensor<int32_t>({int32_t(s.dim_size(0)), int32_t(s.dim_size(1)), int32_t(s.dim_size(2)),
                                               int32_t(s.dim_size(3))},
                                              TensorShape{4});
  dx = RunOp("AvgPoolGrad", {shape, g}, k.Attrs());
  ASSERT_EQ(dx.size(), 1u);
  ExpectClose(dx[0], davg, k.InputShape(), tol);
}

TEST(PoolingOpsTest, DoubleMatchesNaivePooling) {
  std::mt19937 rng(1);
  for (const PoolCase& k : Cases()) CheckPool<double>(k, &rng);
}

TEST(PoolingOpsTest, FloatThroughOneDnnMatchesNaivePooling) {
  std::mt19937 rng(2);
  const int64_t runs = DnnlRunsForTesting();
  for (const PoolCase& k : Cases()) CheckPool<float>(k, &rng);
  // MaxPool twice, AvgPool, MaxPoolGrad, AvgPoolGrad per case.
  EXPECT_GE(DnnlRunsForTesting() - runs, 5 * static_cast<int64_t>(Cases().size()));
}

TEST(PoolingOpsTest, LargeFloatPooling) {
  PoolCase k;
  k.n = 4;
  k.h = k.w = 40;
  k.c = 16;
  k.kh = k.kw = 3;
  std::mt19937 rng(3);
  CheckPool<float>(k, &rng);
}

// Big enough to be cut along the batch (BatchShards): 7 images in pieces of 2, 2, 2 and 1.
TEST(PoolingOpsTest, BatchCutIntoPiecesMatchesNaivePooling) {
  std::mt19937 rng(4);
  for (const char* format : {"NHWC", "NCHW"}) {
    PoolCase k;
    k.format = format;
    k.n = 7;
    k.h = k.w = 32;
    k.c = 16;
    CheckPool<float>(k, &rng);
  }
}

TEST(PoolingOpsTest, HandComputed) {
  Tensor x = testing::MakeTensor<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, TensorShape{1, 3, 3, 1});
  AttrMap a{{"ksize", std::vector<int64_t>{1, 2, 2, 1}},
            {"strides", std::vector<int64_t>{1, 2, 2, 1}},
            {"padding", "SAME"}};
  auto y = RunOp("MaxPool", {x}, a);
  ASSERT_EQ(y.size(), 1u);
  ExpectClose(y[0], {5, 6, 8, 9}, TensorShape{1, 2, 2, 1}, 0);
  // The average leaves the padded row and column out: (3+6)/2, (7+8)/2, 9/1.
  y = RunOp("AvgPool", {x}, a);
  ASSERT_EQ(y.size(), 1u);
  ExpectClose(y[0], {3, 4.5, 7.5, 9}, TensorShape{1, 2, 2, 1}, 1e-7);
}

// As TensorFlow's shape functions: a VALID window larger than the input is rejected when the graph
// is built ("Negative dimension size"), for pooling and Conv2D alike.
TEST(PoolingOpsTest, ValidWindowLargerThanInputIsRejectedByTheShapeFunction) {
  AttrMap a{{"ksize", std::vector<int64_t>{1, 2, 2, 1}},
            {"strides", std::vector<int64_t>{1, 1, 1, 1}},
            {"padding", "VALID"}};
  for (const char* op : {"MaxPool", "AvgPool"}) {
    auto s = testing::InferShapes(op, {Tensor(DT_FLOAT, TensorShape{1, 1, 3, 1})}, a);
    ASSERT_FALSE(s.ok()) << op;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(s.status().message()).find("Negative dimension size"), std::string::npos) << s.status();
    EXPECT_TRUE(testing::InferShapes(op, {Tensor(DT_FLOAT, TensorShape{1, 2, 3, 1})}, a).ok()) << op;
  }
  AttrMap c{{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", "VALID"}};
  auto s = testing::InferShapes("Conv2D",
                                {Tensor(DT_FLOAT, TensorShape{1, 2, 2, 1}), Tensor(DT_FLOAT, TensorShape{3, 3, 1, 1})},
                                c);
  EXPECT_FALSE(s.ok());
  c["padding"] = std::string("SAME");
  EXPECT_TRUE(testing::InferShapes(
                  "Conv2D", {Tensor(DT_FLOAT, TensorShape{1, 2, 2, 1}), Tensor(DT_FLOAT, TensorShape{3, 3, 1, 1})}, c)
                  .ok());
}

// Integer MaxPool (TensorFlow's CPU kernels have it): the window's maximum, the lowest value of the
// type as the start (not 0); MaxPoolGrad routes to it.
TEST(PoolingOpsTest, IntegerMaxPool) {
  AttrMap a{{"ksize", std::vector<int64_t>{1, 2, 2, 1}},
            {"strides", std::vector<int64_t>{1, 2, 2, 1}},
            {"padding", "SAME"}};
  Tensor x = testing::MakeTensor<int32_t>({-9, -2, -3, -4, -5, -6, -7, -8, -1}, TensorShape{1, 3, 3, 1});
  auto y = RunOp("MaxPool", {x}, a);
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].ToString(), testing::MakeTensor<int32_t>({-2, -3, -7, -1}, TensorShape{1, 2, 2, 1}).ToString());
  Tensor g = testing::MakeTensor<int32_t>({1, 2, 3, 4}, TensorShape{1, 2, 2, 1});
  auto dx = RunOp("MaxPoolGrad", {x, y[0], g}, a);
  ASSERT_EQ(dx.size(), 1u);
  EXPECT_EQ(dx[0].ToString(),
            testing::MakeTensor<int32_t>({0, 1, 2, 0, 0, 0, 3, 0, 4}, TensorShape{1, 3, 3, 1}).ToString());
  Tensor u = testing::MakeTensor<uint8_t>({0, 0, 0, 0}, TensorShape{1, 2, 2, 1});
  auto yu = RunOp("MaxPool", {u}, a);
  ASSERT_EQ(yu.size(), 1u);
  EXPECT_EQ(yu[0].flat<uint8_t>()[0], 0);
}

TEST(PoolingOpsTest, EmptyTensors) {
  PoolCase k;
  auto y = RunOp("MaxPool", {Tensor(DT_FLOAT, TensorShape{0, 4, 4, 2})}, k.Attrs());
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape(), (TensorShape{0, 2, 2, 2}));
  y = RunOp("AvgPool", {Tensor(DT_DOUBLE, TensorShape{1, 4, 4, 0})}, k.Attrs());
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape(), (TensorShape{1, 2, 2, 0}));
  y = RunOp("AvgPoolGrad",
            {testing::MakeTensor<int32_t>({0, 4, 4, 2}, TensorShape{4}), Tensor(DT_FLOAT, TensorShape{0, 2, 2, 2})},
            k.Attrs());
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape(), (TensorShape{0, 4, 4, 2}));
}

void ExpectInvalid(const Status& s, const std::string& substr) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(substr));
}

TEST(PoolingOpsTest, BadInputsAndAttrs) {
  PoolCase k;
  const Tensor x(DT_FLOAT, k.InputShape());
  for (const char* op : {"MaxPool", "AvgPool"}) {
    SCOPED_TRACE(op);
    ExpectInvalid(RunError(op, {Tensor(DT_FLOAT, TensorShape{5, 6, 3})}, k.Attrs()), "4-D");
    auto with = [&](const char* name, AttrValue v) {
      AttrMap a = k.Attrs();
      a[name] = std::move(v);
      return a;
    };
    ExpectInvalid(RunError(op, {x}, with("strides", std::vector<int64_t>{1, 0, 2, 1})), "strides");
    ExpectInvalid(RunError(op, {x}, with("ksize", std::vector<int64_t>{1, 0, 2, 1})), "ksize");
    ExpectInvalid(RunError(op, {x}, with("ksize", std::vector<int64_t>{2, 2, 2, 1})), "batch and depth");
    ExpectInvalid(RunError(op, {x}, with("ksize", std::vector<int64_t>{1, 2, 2, 2})), "batch and depth");
    ExpectInvalid(RunError(op, {x}, with("padding", "EXPLICIT")), "padding");
    ExpectInvalid(RunError(op, {x}, with("data_format", "NDHWC")), "data_format");
    // VALID with a window larger than the input.
    AttrMap big = with("ksize", std::vector<int64_t>{1, 9, 2, 1});
    big["padding"] = "VALID";
    big["strides"] = std::vector<int64_t>{1, 1, 1, 1};
    ExpectInvalid(RunError(op, {x}, big), "negative");
    // A too-short list is rejected while building (ksize: list(int) >= 4).
    EXPECT_FALSE(RunError(op, {x}, with("ksize", std::vector<int64_t>{2, 2})).ok());
  }
  const Tensor out(DT_FLOAT, k.OutputShape()), wrong(DT_FLOAT, TensorShape{2, 3, 2, 3});
  ExpectInvalid(RunError("MaxPoolGrad", {x, wrong, out}, k.Attrs()), "orig_output");
  ExpectInvalid(RunError("MaxPoolGrad", {x, out, wrong}, k.Attrs()), "grad");
  ExpectInvalid(RunError("MaxPoolGrad", {Tensor(DT_FLOAT, TensorShape{5, 6}), out, out}, k.Attrs()), "4-D");
  auto sizes = [](std::vector<int32_t> v) { return testing::MakeTensor<int32_t>(v, TensorShape{int64_t(v.size())}); };
  ExpectInvalid(RunError("AvgPoolGrad", {sizes({2, 5, 6}), out}, k.Attrs()), "orig_input_shape");
  ExpectInvalid(RunError("AvgPoolGrad", {sizes({2, -5, 6, 3}), out}, k.Attrs()), "negative");
  ExpectInvalid(RunError("AvgPoolGrad", {sizes({2, 5, 6, 3}), wrong}, k.Attrs()), "grad");
  // Shapes unknown while building: the kernels check.
  auto runner = testing::KernelRunner::Create("MaxPool", {DT_FLOAT}, k.Attrs());
  ASSERT_TRUE(runner.ok()) << runner.status();
  ExpectInvalid((*runner)->Run({Tensor(DT_FLOAT, TensorShape{30})}).status(), "MaxPool 'node'");
  auto grad_runner = testing::KernelRunner::Create("AvgPoolGrad", {DT_INT32, DT_FLOAT}, k.Attrs());
  ASSERT_TRUE(grad_runner.ok()) << grad_runner.status();
  ExpectInvalid((*grad_runner)->Run({sizes({2, 5, 6, 3, 1}), out}).status(), "orig_input_shape");
}

}  // namespace
}  // namespace dflow
