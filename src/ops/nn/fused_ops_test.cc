// _FusedConv2D and _FusedMatMul against the naive convolution / product, plus bias, plus each
// activation computed in double here: both data formats, strides, dilation and EXPLICIT padding,
// float (oneDNN with post-ops; gemm with its epilogue, sharded and not) and double (reference
// loops); bad attrs and biases.
#include <cmath>

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

struct Activation {
  std::string op;  // "" for BiasAdd alone
  float alpha = 0.2f;
};

std::vector<Activation> Activations() { return {{""}, {"Relu"}, {"Relu6"}, {"Elu"}, {"LeakyRelu", 0.3f}}; }

double Apply(const Activation& a, double x) {
  if (a.op == "Relu") return x < 0 ? 0 : x;
  if (a.op == "Relu6") return x < 0 ? 0 : (x > 6 ? 6 : x);
  if (a.op == "Elu") return x < 0 ? std::exp(x) - 1 : x;
  if (a.op == "LeakyRelu") return x > 0 ? x : x * double(a.alpha);
  return x;
}

AttrMap FusionAttrs(AttrMap attrs, const Activation& a) {
  std::vector<std::string> ops{"BiasAdd"};
  if (!a.op.empty()) ops.push_back(a.op);
  attrs["fused_ops"] = ops;
  attrs["num_args"] = int64_t{1};
  attrs["leakyrelu_alpha"] = a.alpha;
  return attrs;
}

// Inputs scaled so that outputs cross 0 and 6 (Relu6's clip) often.
template <typename T>
void CheckFusedConv(const ConvCase& k, const Activation& a, std::mt19937* rng) {
  SCOPED_TRACE(absl::StrCat(DTypeString(DTypeOf<T>::value), " ", k.Name(), " ", a.op));
  const double tol = std::is_same_v<T, float> ? 3e-5 : 1e-12;
  Tensor x = Random<T>(k.InputShape(), rng, -3, 3), f = Random<T>(k.FilterShape(), rng);
  Tensor bias = Random<T>(TensorShape{k.oc}, rng, -4, 4);
  std::vector<double> want = nn_testing::NaiveConv(k, ToDoubles(x), ToDoubles(f));
  const std::vector<double> b = ToDoubles(bias);
  const TensorShape out = k.OutputShape();
  const int64_t inner = k.format == "NHWC" ? 1 : out.dim_size(2) * out.dim_size(3);
  for (size_t i = 0; i < want.size(); ++i) want[i] = Apply(a, want[i] + b[(i / inner) % k.oc]);
  auto y = RunOp("_FusedConv2D", {x, f, bias}, FusionAttrs(k.Attrs(), a));
  ASSERT_EQ(y.size(), 1u);
  ExpectClose(y[0], want, out, tol);
}

std::vector<ConvCase> ConvCases() {
  std::vector<ConvCase> cases;
  for (const char* format : {"NHWC", "NCHW"}) {
    ConvCase same;
    same.format = format;
    cases.push_back(same);
    ConvCase strided = same;
    strided.padding = "VALID";
    strided.stride_h = strided.stride_w = 2;
    cases.push_back(strided);
    ConvCase dilated = same;
    dilated.dil_h = dilated.dil_w = 2;
    dilated.h = 9;
    cases.push_back(dilated);
    ConvCase ex = same;
    ex.padding = "EXPLICIT";
    ex.pads = {1, 2, 0, 3};
    ex.stride_w = 3;
    cases.push_back(ex);
    ConvCase big = same;  // cut along the batch into pieces (BatchShards), each with its bias
    big.n = 7;
    big.h = big.w = 12;
    big.c = 8;
    big.kh = big.kw = 3;
    big.oc = 16;
    cases.push_back(big);
  }
  return cases;
}

TEST(FusedConv2DTest, FloatThroughOneDnnMatchesConvolutionBiasAndActivation) {
  std::mt19937 rng(11);
  const int64_t runs = DnnlRunsForTesting();
  int checked = 0;
  for (const ConvCase& k : ConvCases()) {
    for (const Activation& a : Activations()) {
      CheckFusedConv<float>(k, a, &rng);
      ++checked;
    }
  }
  // Each float case ran on oneDNN (with its post-ops), not the reference loops.
  EXPECT_GE(DnnlRunsForTesting() - runs, checked);
}

TEST(FusedConv2DTest, DoubleThroughTheReferenceLoops) {
  std::mt19937 rng(12);
  for (const ConvCase& k : ConvCases()) {
    for (const Activation& a : Activations()) CheckFusedConv<double>(k, a, &rng);
  }
}

TEST(FusedConv2DTest, EmptyBatchGivesAnEmptyOutput) {
  ConvCase k;
  k.n = 0;
  std::mt19937 rng(13);
  auto y = RunOp("_FusedConv2D",
                 {Random<float>(k.InputShape(), &rng), Random<float>(k.FilterShape(), &rng),
                  Random<float>(TensorShape{k.oc}, &rng)},
                 FusionAttrs(k.Attrs(), {"Relu"}));
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape(), k.OutputShape());
}

template <typename T>
void CheckFusedMatMul(int64_t m, int64_t n, int64_t k, bool ta, bool tb, const Activation& a, std::mt19937* rng) {
  SCOPED_TRACE(absl::StrCat(DTypeString(DTypeOf<T>::value), " ", m, "x", k, "x", n, ta ? " ta" : "", tb ? " tb" : "",
                            " ", a.op));
  const double tol = std::is_same_v<T, float> ? 3e-5 : 1e-12;
  Tensor at = Random<T>(ta ? TensorShape{k, m} : TensorShape{m, k}, rng, -2, 2);
  Tensor bt = Random<T>(tb ? TensorShape{n, k} : TensorShape{k, n}, rng);
  Tensor bias = Random<T>(TensorShape{n}, rng, -3, 3);
  const std::vector<double> av = ToDoubles(at), bv = ToDoubles(bt), biasv = ToDoubles(bias);
  std::vector<double> want(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += av[ta ? p * m + i : i * k + p] * bv[tb ? j * k + p : p * n + j];
      want[i * n + j] = Apply(a, s + biasv[j]);
    }
  }
  AttrMap attrs{{"transpose_a", ta}, {"transpose_b", tb}};
  auto y = RunOp("_FusedMatMul", {at, bt, bias}, FusionAttrs(attrs, a));
  ASSERT_EQ(y.size(), 1u);
  ExpectClose(y[0], want, TensorShape{m, n}, tol * std::max<double>(1, std::sqrt(double(k))));
}

// Tiny (plain loop), one sgemm call, and big enough to be cut into shards along M or N (the
// epilogue then runs per shard, with the shard's columns of the bias).
TEST(FusedMatMulTest, FloatMatchesProductBiasAndActivation) {
  std::mt19937 rng(21);
  for (const Activation& a : Activations()) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        CheckFusedMatMul<float>(3, 5, 4, ta, tb, a, &rng);
        CheckFusedMatMul<float>(33, 17, 20, ta, tb, a, &rng);
      }
    }
    CheckFusedMatMul<float>(512, 64, 256, false, false, a, &rng);  // cut along M
    CheckFusedMatMul<float>(64, 512, 256, false, true, a, &rng);   // cut along N
  }
}

TEST(FusedMatMulTest, DoubleAndEmptyInner) {
  std::mt19937 rng(22);
  for (const Activation& a : Activations()) CheckFusedMatMul<double>(6, 7, 5, true, false, a, &rng);
  // k = 0: the product is zeros, the output is act(bias) in every row.
  Tensor bias = testing::MakeTensor<float>({-1, 2, 7}, TensorShape{3});
  auto y = RunOp("_FusedMatMul", {Tensor(DT_FLOAT, TensorShape{2, 0}), Tensor(DT_FLOAT, TensorShape{0, 3}), bias},
                 FusionAttrs({}, {"Relu6"}));
  ASSERT_EQ(y.size(), 1u);
  ExpectClose(y[0], {0, 2, 6, 0, 2, 6}, TensorShape{2, 3}, 0);
}

TEST(FusedOpsTest, BadFusionsAreUnimplementedNamingThem) {
  std::mt19937 rng(31);
  ConvCase k;
  const Tensor x = Random<float>(k.InputShape(), &rng), f = Random<float>(k.FilterShape(), &rng);
  const Tensor bias = Random<float>(TensorShape{k.oc}, &rng);
  AttrMap attrs = FusionAttrs(k.Attrs(), {"Relu"});
  attrs["fused_ops"] = std::vector<std::string>{"Relu"};
  Status s = RunError("_FusedConv2D", {x, f, bias}, attrs);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("[Relu]"));
  attrs["fused_ops"] = std::vector<std::string>{"BiasAdd", "Sigmoid"};
  s = RunError("_FusedConv2D", {x, f, bias}, attrs);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("Sigmoid"));
}

// A bias that does not fit: the shape function rejects it when the shapes are known while
// building, the kernel when they are not.
TEST(FusedOpsTest, BiasOfTheWrongSizeIsInvalidArgument) {
  std::mt19937 rng(32);
  ConvCase k;
  const Tensor x = Random<float>(k.InputShape(), &rng), f = Random<float>(k.FilterShape(), &rng);
  const Tensor bad = Random<float>(TensorShape{k.oc + 1}, &rng);
  Status s = RunError("_FusedConv2D", {x, f, bad}, FusionAttrs(k.Attrs(), {"Relu"}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("bias has 5 elements"));

  auto conv = testing::KernelRunner::Create("_FusedConv2D", {DT_FLOAT, DT_FLOAT, DT_FLOAT},
                                            FusionAttrs(k.Attrs(), {"Relu"}));
  ASSERT_TRUE(conv.ok()) << conv.status();
  s = (*conv)->Run({x, f, bad}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("bias must be 1-D with 4 elements"));
  EXPECT_TRUE((*conv)->Run({x, f, Random<float>(TensorShape{k.oc}, &rng)}).ok());

  auto mm = testing::KernelRunner::Create("_FusedMatMul", {DT_FLOAT, DT_FLOAT, DT_FLOAT}, FusionAttrs({}, {""}));
  ASSERT_TRUE(mm.ok()) << mm.status();
  s = (*mm)
          ->Run({Random<float>(TensorShape{2, 3}, &rng), Random<float>(TensorShape{3, 5}, &rng),
                 Random<float>(TensorShape{2}, &rng)})
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("5 elements"));
  s = (*mm)
          ->Run({Random<float>(TensorShape{2, 3}, &rng), Random<float>(TensorShape{4, 5}, &rng),
                 Random<float>(TensorShape{5}, &rng)})
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("size-incompatible"));
}

}  // namespace
}  // namespace dflow
