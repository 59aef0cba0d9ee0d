// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter against a naive 7-loop convolution
// (conv_test_util.h): SAME/VALID/EXPLICIT, strides 1 and 2, dilation 2, NHWC and NCHW, float
// (oneDNN) and double (reference loops); empty tensors, bad inputs, primitive reuse across
// shapes and concurrent runs of one kernel.
#include <thread>

#include "gmock/gmock.h"
#include "ops/math/kernel_runner_test_util.h"
#include "ops/nn/conv_test_util.h"
#include "ops/nn/dnnl_util.h"
#include "ops/nn/nn_test_util.h"

namespace dflow {
namespace {

using nn_testing::ConvCase;
using nn_testing::ExpectClose;
using nn_testing::Random;
using nn_testing::RunError;
using nn_testing::RunOp;
using nn_testing::ToDoubles;
using ::testing::HasSubstr;

std::vector<ConvCase> Cases() {
  std::vector<ConvCase> cases;
  for (const char* format : {"NHWC", "NCHW"}) {
    for (const char* padding : {"SAME", "VALID"}) {
      for (auto [s, d] : std::vector<std::pair<int, int>>{{1, 1}, {2, 1}, {1, 2}, {2, 2}}) {
        ConvCase k;
        k.format = format;
        k.padding = padding;
        k.stride_h = k.stride_w = s;
        k.dil_h = k.dil_w = d;
        cases.push_back(k);
      }
    }
    ConvCase asym;  // different strides and dilations per dimension, odd sizes
    asym.format = format;
    asym.stride_h = 2;
    asym.stride_w = 3;
    asym.dil_w = 2;
    asym.h = 9;
    asym.w = 8;
    cases.push_back(asym);
    ConvCase ex = asym;
    ex.padding = "EXPLICIT";
    ex.pads = {1, 2, 0, 3};
    cases.push_back(ex);
    ConvCase big_filter;  // SAME with a window wider than the input
    big_filter.format = format;
    big_filter.h = 2;
    big_filter.w = 3;
    big_filter.kh = 4;
    big_filter.kw = 5;
    cases.push_back(big_filter);
    ConvCase pointwise;
    pointwise.format = format;
    pointwise.kh = pointwise.kw = 1;
    pointwise.padding = "VALID";
    pointwise.stride_h = 2;
    cases.push_back(pointwise);
  }
  return cases;
}

template <typename T>
void CheckConv(const ConvCase& k, std::mt19937* rng) {
  SCOPED_TRACE(absl::StrCat(DTypeString(DTypeOf<T>::value), " ", k.Name()));
  const double tol = std::is_same_v<T, float> ? 2e-5 : 1e-12;
  Tensor x = Random<T>(k.InputShape(), rng), f = Random<T>(k.FilterShape(), rng);
  Tensor g = Random<T>(k.OutputShape(), rng);
  const std::vector<double> xd = ToDoubles(x), fd = ToDoubles(f), gd = ToDoubles(g);

  auto y = RunOp("Conv2D", {x, f}, k.Attrs());
  ASSERT_EQ(y.size(), 1u);
  ExpectClose(y[0], nn_testing::NaiveConv(k, xd, fd), k.OutputShape(), tol);

  Tensor input_sizes =
      testing::MakeTensor<int32_t>({int32_t(k.InputShape().dim_size(0)), int32_t(k.InputShape().dim_size(1)),
                                    int32_t(k.InputShape().dim_size(2)), int32_t(k.InputShape().dim_size(3))},
                                   TensorShape{4});
  auto dx = RunOp("Conv2DBackpropInput", {input_sizes, f, g}, k.Attrs());
  ASSERT_EQ(dx.size(), 1u);
  ExpectClose(dx[0], nn_testing::NaiveConvBackpropInput(k, fd, gd), k.InputShape(), tol);

  Tensor filter_sizes = testing::MakeTensor<int32_t>({int32_t(k.kh), int32_t(k.kw), int32_t(k.c), int32_t(k.oc)},
                                                     TensorShape{4});
  auto df = RunOp("Conv2DBackpropFilter", {x, filter_sizes, g}, k.Attrs());
  ASSERT_EQ(df.size(), 1u);
  ExpectClose(df[0], nn_testing::NaiveConvBackpropFilter(k, xd, gd), k.FilterShape(), tol);
}

TEST(ConvOpsTest, DoubleMatchesNaiveConvolution) {
  std::mt19937 rng(1);
  for (const ConvCase& k : Cases()) CheckConv<double>(k, &rng);
}

TEST(ConvOpsTest, FloatThroughOneDnnMatchesNaiveConvolution) {
  std::mt19937 rng(2);
  const int64_t runs = DnnlRunsForTesting();
  for (const ConvCase& k : Cases()) CheckConv<float>(k, &rng);
  // Every float case above is non-empty, so each of the 3 ops ran on oneDNN.
  EXPECT_GE(DnnlRunsForTesting() - runs, 3 * static_cast<int64_t>(Cases().size()));
}

TEST(ConvOpsTest, LargeFloatConvolutionMayUseEveryCore) {
  ConvCase k;  // 2*16*16*16 outputs x 3*3*8 taps: above the multi-threading threshold
  k.n = 2;
  k.h = k.w = 16;
  k.c = 8;
  k.kh = k.kw = 3;
  k.oc = 16;
  std::mt19937 rng(3);
  CheckConv<float>(k, &rng);
  k.format = "NCHW";
  k.stride_h = 2;
  CheckConv<float>(k, &rng);
}

// A big call is cut along the batch (BatchShards): 7 images make pieces of 2, 2, 2 and 1, each
// run by its own cached primitive; then 5 images through the same kernels (other pieces).
TEST(ConvOpsTest, BatchCutIntoPiecesMatchesNaiveConvolution) {
  std::mt19937 rng(5);
  for (const char* format : {"NHWC", "NCHW"}) {
    for (int64_t n : {7, 5, 7}) {
      ConvCase k;  // 7*12*12*16 outputs x 3*3*8 taps: above the threshold for cutting
      k.format = format;
      k.n = n;
      k.h = k.w = 12;
      k.c = 8;
      k.kh = k.kw = 3;
      k.oc = 16;
      CheckConv<float>(k, &rng);
    }
  }
}

TEST(ConvOpsTest, HandComputed) {
  // 1x3x3x1 input 1..9, 2x2 filter of ones, VALID: sums of each 2x2 block.
  Tensor x = testing::MakeTensor<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, TensorShape{1, 3, 3, 1});
  Tensor f = testing::MakeTensor<float>({1, 1, 1, 1}, TensorShape{2, 2, 1, 1});
  AttrMap a{{"strides", std::vector<int64_t>{1, 1, 1, 1}}, {"padding", "VALID"}};
  auto y = RunOp("Conv2D", {x, f}, a);
  ASSERT_EQ(y.size(), 1u);
  ExpectClose(y[0], {12, 16, 24, 28}, TensorShape{1, 2, 2, 1}, 0);
  // SAME pads one row and column after (pad_total 1: 0 before, 1 after).
  a["padding"] = "SAME";
  y = RunOp("Conv2D", {x, f}, a);
  ASSERT_EQ(y.size(), 1u);
  ExpectClose(y[0], {12, 16, 9, 24, 28, 15, 15, 17, 9}, TensorShape{1, 3, 3, 1}, 0);
}

TEST(ConvOpsTest, EmptyTensors) {
  ConvCase k;
  AttrMap a = k.Attrs();
  // No batch: an empty output.
  auto y = RunOp("Conv2D", {Tensor(DT_FLOAT, TensorShape{0, 5, 5, 3}), Tensor(DT_FLOAT, TensorShape{3, 3, 3, 2})}, a);
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape(), (TensorShape{0, 5, 5, 2}));
  // No input channels: every output is an empty sum.
  for (DType t : {DT_FLOAT, DT_DOUBLE}) {
    y = RunOp("Conv2D", {Tensor(t, TensorShape{1, 2, 2, 0}), Tensor(t, TensorShape{1, 1, 0, 2})}, a);
    ASSERT_EQ(y.size(), 1u);
    ExpectClose(y[0], std::vector<double>(8, 0.0), TensorShape{1, 2, 2, 2}, 0);
  }
  // No output channels.
  y = RunOp("Conv2D", {Tensor(DT_FLOAT, TensorShape{1, 2, 2, 3}), Tensor(DT_FLOAT, TensorShape{1, 1, 3, 0})}, a);
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape(), (TensorShape{1, 2, 2, 0}));
  // Backprop filter over an empty batch: zeros.
  auto df = RunOp("Conv2DBackpropFilter",
                  {Tensor(DT_FLOAT, TensorShape{0, 4, 4, 2}),
                   testing::MakeTensor<int32_t>({3, 3, 2, 2}, TensorShape{4}),
                   Tensor(DT_FLOAT, TensorShape{0, 4, 4, 2})},
                  a);
  ASSERT_EQ(df.size(), 1u);
  ExpectClose(df[0], std::vector<double>(36, 0.0), TensorShape{3, 3, 2, 2}, 0);
  // VALID with a window one wider than the input: TensorFlow's shape function rejects the node
  // ("Negative dimension size"), so does dflow's.
  a["padding"] = "VALID";
  a["strides"] = std::vector<int64_t>{1, 2, 2, 1};
  Status s = RunError("Conv2D", {Tensor(DT_FLOAT, TensorShape{1, 2, 2, 1}), Tensor(DT_FLOAT, TensorShape{3, 3, 1, 1})},
                      a);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("Negative dimension size"));
}

void ExpectInvalid(const Status& s, const std::string& substr) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(substr));
}

TEST(ConvOpsTest, BadInputsAndAttrs) {
  const Tensor x(DT_FLOAT, TensorShape{1, 5, 5, 3}), f(DT_FLOAT, TensorShape{3, 3, 3, 2});
  ConvCase k;
  ExpectInvalid(RunError("Conv2D", {Tensor(DT_FLOAT, TensorShape{5, 5, 3}), f}, k.Attrs()), "4-D");
  ExpectInvalid(RunError("Conv2D", {x, Tensor(DT_FLOAT, TensorShape{3, 3, 3})}, k.Attrs()), "4-D");
  ExpectInvalid(RunError("Conv2D", {x, Tensor(DT_FLOAT, TensorShape{3, 3, 2, 2})}, k.Attrs()), "in_depth");
  ExpectInvalid(RunError("Conv2D", {x, Tensor(DT_FLOAT, TensorShape{0, 3, 3, 2})}, k.Attrs()), "empty");
  auto with = [&](const char* name, AttrValue v) {
    AttrMap a = k.Attrs();
    a[name] = std::move(v);
    return a;
  };
  ExpectInvalid(RunError("Conv2D", {x, f}, with("strides", std::vector<int64_t>{1, 0, 1, 1})), "strides");
  ExpectInvalid(RunError("Conv2D", {x, f}, with("strides", std::vector<int64_t>{1, -2, 1, 1})), "strides");
  ExpectInvalid(RunError("Conv2D", {x, f}, with("strides", std::vector<int64_t>{2, 1, 1, 1})), "batch and depth");
  ExpectInvalid(RunError("Conv2D", {x, f}, with("strides", std::vector<int64_t>{1, 1, 1})), "4 dimensions");
  ExpectInvalid(RunError("Conv2D", {x, f}, with("strides", std::vector<int64_t>{})), "4 dimensions");
  ExpectInvalid(RunError("Conv2D", {x, f}, with("dilations", std::vector<int64_t>{1, 0, 1, 1})), "dilations");
  ExpectInvalid(RunError("Conv2D", {x, f}, with("padding", "FULL")), "padding");
  ExpectInvalid(RunError("Conv2D", {x, f}, with("data_format", "HWCN")), "data_format");
  ExpectInvalid(RunError("Conv2D", {x, f}, with("explicit_paddings", std::vector<int64_t>{0, 0, 1, 1, 1, 1, 0, 0})),
                "explicit_paddings");
  AttrMap ex = with("padding", "EXPLICIT");
  ExpectInvalid(RunError("Conv2D", {x, f}, ex), "8 entries");
  ex["explicit_paddings"] = std::vector<int64_t>{0, 0, 1, -1, 1, 1, 0, 0};
  ExpectInvalid(RunError("Conv2D", {x, f}, ex), "non-negative");
  ex["explicit_paddings"] = std::vector<int64_t>{1, 0, 1, 1, 1, 1, 0, 0};
  ExpectInvalid(RunError("Conv2D", {x, f}, ex), "batch or depth");
  // VALID with a filter larger than the input: a negative output size.
  ExpectInvalid(RunError("Conv2D", {x, Tensor(DT_FLOAT, TensorShape{7, 1, 3, 2})}, with("padding", "VALID")),
                "negative");
  // Huge dilations overflow nothing.
  ExpectInvalid(RunError("Conv2D", {x, f}, with("dilations", std::vector<int64_t>{1, int64_t{1} << 40, 1, 1})),
                "dilations");
}

TEST(ConvOpsTest, KernelChecksShapesUnknownWhileBuilding) {
  ConvCase k;
  auto runner = testing::KernelRunner::Create("Conv2D", {DT_FLOAT, DT_FLOAT}, k.Attrs());
  ASSERT_TRUE(runner.ok()) << runner.status();
  auto r = (*runner)->Run({Tensor(DT_FLOAT, TensorShape{1, 5, 5, 3}), Tensor(DT_FLOAT, TensorShape{3, 3, 4, 2})});
  ExpectInvalid(r.status(), "Conv2D 'node'");
  ExpectInvalid(r.status(), "[1,5,5,3]");
  r = (*runner)->Run({Tensor(DT_FLOAT, TensorShape{25, 3}), Tensor(DT_FLOAT, TensorShape{3, 3, 3, 2})});
  ExpectInvalid(r.status(), "4-dimensional");
}

TEST(ConvOpsTest, BackpropBadInputs) {
  ConvCase k;  // input [2,7,6,3], filter [3,2,3,4], SAME stride 1: output [2,7,6,4]
  const Tensor f(DT_FLOAT, k.FilterShape()), g(DT_FLOAT, k.OutputShape()), x(DT_FLOAT, k.InputShape());
  auto sizes = [](std::vector<int32_t> v) { return testing::MakeTensor<int32_t>(v, TensorShape{int64_t(v.size())}); };
  ExpectInvalid(RunError("Conv2DBackpropInput", {sizes({2, 7, 6}), f, g}, k.Attrs()), "input_sizes");
  ExpectInvalid(RunError("Conv2DBackpropInput", {sizes({2, 7, -6, 3}), f, g}, k.Attrs()), "negative");
  ExpectInvalid(RunError("Conv2DBackpropInput", {sizes({2, 7, 6, 3}), f, Tensor(DT_FLOAT, TensorShape{2, 7, 5, 4})},
                         k.Attrs()),
                "out_backprop");
  ExpectInvalid(RunError("Conv2DBackpropInput", {sizes({2, 7, 6, 2}), f, g}, k.Attrs()), "in_depth");
  ExpectInvalid(RunError("Conv2DBackpropFilter", {x, sizes({3, 2, 3}), g}, k.Attrs()), "filter_sizes");
  ExpectInvalid(RunError("Conv2DBackpropFilter", {x, sizes({3, 2, 3, 5}), g}, k.Attrs()), "out_backprop");
  ExpectInvalid(RunError("Conv2DBackpropFilter", {x, sizes({3, 2, 3, 4}), Tensor(DT_FLOAT, TensorShape{2, 7, 6})},
                         k.Attrs()),
                "out_backprop");
  // Sizes known only when the kernel runs.
  auto runner = testing::KernelRunner::Create("Conv2DBackpropInput", {DT_INT32, DT_FLOAT, DT_FLOAT}, k.Attrs());
  ASSERT_TRUE(runner.ok()) << runner.status();
  ExpectInvalid((*runner)->Run({sizes({2, 7, 6, 3, 1}), f, g}).status(), "input_sizes");
  ExpectInvalid((*runner)->Run({sizes({-1, 7, 6, 3}), f, g}).status(), "negative");
}

// One kernel instance serves different shapes (separate cached primitives) and then the first
// shape again; and two threads at once.
TEST(ConvOpsTest, OneKernelManyShapesAndThreads) {
  ConvCase a, b;
  b.h = 11;
  b.w = 4;
  b.n = 1;
  auto runner = testing::KernelRunner::Create("Conv2D", {DT_FLOAT, DT_FLOAT}, a.Attrs());
  ASSERT_TRUE(runner.ok()) << runner.status();
  std::mt19937 rng(4);
  Tensor xa = Random<float>(a.InputShape(), &rng), fa = Random<float>(a.FilterShape(), &rng);
  Tensor xb = Random<float>(b.InputShape(), &rng);
  const std::vector<double> want_a = nn_testing::NaiveConv(a, ToDoubles(xa), ToDoubles(fa));
  const std::vector<double> want_b = nn_testing::NaiveConv(b, ToDoubles(xb), ToDoubles(fa));
  for (int round = 0; round < 2; ++round) {
    auto ya = (*runner)->Run1({xa, fa});
    ASSERT_TRUE(ya.ok()) << ya.status();
    ExpectClose(*ya, want_a, a.OutputShape(), 2e-5);
    auto yb = (*runner)->Run1({xb, fa});
    ASSERT_TRUE(yb.ok()) << yb.status();
    ExpectClose(*yb, want_b, b.OutputShape(), 2e-5);
  }
  std::vector<std::thread> threads;
  std::vector<Tensor> results(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        auto y = (*runner)->Run1({t % 2 ? xb : xa, fa});
        if (y.ok()) results[t] = *y;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < 4; ++t)
    ExpectClose(results[t], t % 2 ? want_b : want_a, t % 2 ? b.OutputShape() : a.OutputShape(), 2e-5);
}

TEST(ConvOpsTest, ShapeInference) {
  ConvCase k;
  k.format = "NCHW";
  k.stride_h = 2;
  auto shapes = testing::InferShapes("Conv2D", {Tensor(DT_FLOAT, k.InputShape()), Tensor(DT_FLOAT, k.FilterShape())},
                                     k.Attrs());
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialTensorShape(k.OutputShape()));
}

}  // namespace
}  // namespace dflow
