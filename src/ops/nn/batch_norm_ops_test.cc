// FusedBatchNorm{,V2,V3} and FusedBatchNormGrad{,V2,V3} against loops written out here: training
// (biased normalization, Bessel-corrected batch_variance, exponential_avg_factor blending) and
// inference, NHWC / NCHW / NDHWC, empty inputs, bad inputs; the gradient kernels against numerical
// derivatives of the forward op.
#include <cmath>

#include "gmock/gmock.h"
#include "ops/nn/nn_test_util.h"

namespace dflow {
namespace {

using nn_testing::ExpectClose;
using nn_testing::Random;
using nn_testing::RunError;
using nn_testing::RunOp;

Tensor Vec(const std::vector<float>& v) { return testing::MakeTensor<float>(v, TensorShape{int64_t(v.size())}); }
Tensor Empty() { return Tensor(DT_FLOAT, TensorShape{0}); }

AttrMap Attrs(bool training, const char* format = "NHWC", float eps = 1e-3f, float factor = 1.0f) {
  AttrMap a;
  a["is_training"] = training;
  a["data_format"] = std::string(format);
  a["epsilon"] = eps;
  a["exponential_avg_factor"] = factor;
  return a;
}

// Per-channel statistics of an NHWC tensor of `c` channels.
void Moments(const std::vector<double>& x, int64_t c, std::vector<double>* mean, std::vector<double>* var) {
  const int64_t n = int64_t(x.size()) / c;
  mean->assign(c, 0.0);
  var->assign(c, 0.0);
  for (size_t i = 0; i < x.size(); ++i) (*mean)[i % c] += x[i] / double(n);
  for (size_t i = 0; i < x.size(); ++i) (*var)[i % c] += (x[i] - (*mean)[i % c]) * (x[i] - (*mean)[i % c]) / double(n);
}

// NHWC <-> NCHW of a [n, h, w, c] tensor.
Tensor ToNchw(const Tensor& t) {
  const TensorShape& s = t.shape();
  const int64_t N = s.dim_size(0), H = s.dim_size(1), W = s.dim_size(2), C = s.dim_size(3);
  Tensor out(DT_FLOAT, TensorShape{N, C, H, W});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w)
        for (int64_t c = 0; c < C; ++c)
          out.flat<float>()[((n * C + c) * H + h) * W + w] = t.flat<float>()[((n * H + h) * W + w) * C + c];
  return out;
}

struct Inputs {
  Tensor x, scale, offset, mean, var;
};

Inputs MakeInputs(std::mt19937* rng, const TensorShape& shape) {
  const int64_t c = shape.dim_size(shape.dims() - 1);
  Inputs in;
  in.x = Random<float>(shape, rng, -2, 3);
  in.scale = Random<float>(TensorShape{c}, rng, 0.5, 1.5);
  in.offset = Random<float>(TensorShape{c}, rng);
  in.mean = Random<float>(TensorShape{c}, rng);
  in.var = Random<float>(TensorShape{c}, rng, 0.5, 1.5);
  return in;
}

TEST(BatchNormTest, TrainingAllVersions) {
  std::mt19937 rng(1);
  const TensorShape shape{2, 3, 2, 4};
  Inputs in = MakeInputs(&rng, shape);
  const std::vector<double> x = nn_testing::ToDoubles(in.x), s = nn_testing::ToDoubles(in.scale),
                            o = nn_testing::ToDoubles(in.offset);
  std::vector<double> m, v;
  Moments(x, 4, &m, &v);
  std::vector<double> y(x.size()), unbiased(4);
  for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - m[i % 4]) / std::sqrt(v[i % 4] + 1e-3) * s[i % 4] + o[i % 4];
  for (int c = 0; c < 4; ++c) unbiased[c] = v[c] * 12.0 / 11.0;
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    SCOPED_TRACE(op);
    auto out = RunOp(op, {in.x, in.scale, in.offset, Empty(), Empty()}, Attrs(true));
    ASSERT_EQ(out.size(), std::string(op) == "FusedBatchNormV3" ? 6u : 5u);
    ExpectClose(out[0], y, shape, 1e-5);
    ExpectClose(out[1], m, TensorShape{4}, 1e-6);
    ExpectClose(out[2], unbiased, TensorShape{4}, 1e-6);
    ExpectClose(out[3], m, TensorShape{4}, 1e-6);
    ExpectClose(out[4], v, TensorShape{4}, 1e-6);
    if (out.size() == 6) EXPECT_EQ(out[5].shape(), TensorShape{0});
  }
  // exponential_avg_factor blends the running statistics.
  auto out = RunOp("FusedBatchNormV3", {in.x, in.scale, in.offset, in.mean, in.var}, Attrs(true, "NHWC", 1e-3f, 0.3f));
  ASSERT_EQ(out.size(), 6u);
  std::vector<double> bm(4), bv(4);
  for (int c = 0; c < 4; ++c) {
    bm[c] = 0.7 * in.mean.flat<float>()[c] + 0.3 * m[c];
    bv[c] = 0.7 * in.var.flat<float>()[c] + 0.3 * unbiased[c];
  }
  ExpectClose(out[0], y, shape, 1e-5);
  ExpectClose(out[1], bm, TensorShape{4}, 1e-6);
  ExpectClose(out[2], bv, TensorShape{4}, 1e-6);
  ExpectClose(out[3], m, TensorShape{4}, 1e-6);
  // NCHW gives the transposed result.
  auto nchw = RunOp("FusedBatchNormV3", {ToNchw(in.x), in.scale, in.offset, Empty(), Empty()}, Attrs(true, "NCHW"));
  ASSERT_EQ(nchw.size(), 6u);
  ExpectClose(nchw[0], ToNchw(out[0]), 1e-5);
  ExpectClose(nchw[2], unbiased, TensorShape{4}, 1e-6);
}

TEST(BatchNormTest, Inference) {
  std::mt19937 rng(2);
  const TensorShape shape{3, 2, 2, 3};
  Inputs in = MakeInputs(&rng, shape);
  std::vector<double> y;
  const auto x = nn_testing::ToDoubles(in.x);
  for (size_t i = 0; i < x.size(); ++i) {
    const int c = i % 3;
    y.push_back((x[i] - in.mean.flat<float>()[c]) / std::sqrt(double(in.var.flat<float>()[c]) + 0.01) *
                    in.scale.flat<float>()[c] +
                in.offset.flat<float>()[c]);
  }
  auto out = RunOp("FusedBatchNormV3", {in.x, in.scale, in.offset, in.mean, in.var}, Attrs(false, "NHWC", 0.01f));
  ASSERT_EQ(out.size(), 6u);
  ExpectClose(out[0], y, shape, 1e-5);
  ExpectClose(out[1], in.mean, 0);
  ExpectClose(out[2], in.var, 0);
  ExpectClose(out[3], in.mean, 0);
  ExpectClose(out[4], in.var, 0);
}

TEST(BatchNormTest, FiveDimensionalV3) {
  std::mt19937 rng(3);
  Inputs in = MakeInputs(&rng, TensorShape{2, 2, 2, 3, 2});
  auto out = RunOp("FusedBatchNormV3", {in.x, in.scale, in.offset, Empty(), Empty()}, Attrs(true, "NDHWC"));
  ASSERT_EQ(out.size(), 6u);
  std::vector<double> m, v;
  Moments(nn_testing::ToDoubles(in.x), 2, &m, &v);
  ExpectClose(out[3], m, TensorShape{2}, 1e-6);
  ExpectClose(out[4], v, TensorShape{2}, 1e-6);
  // V1 takes 4-D inputs only.
  EXPECT_EQ(RunError("FusedBatchNorm", {in.x, in.scale, in.offset, Empty(), Empty()}, Attrs(true, "NDHWC")).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BatchNormTest, EmptyInputGivesNaNStatistics) {
  Tensor x(DT_FLOAT, TensorShape{0, 2, 2, 2});
  auto out = RunOp("FusedBatchNormV3", {x, Vec({1, 1}), Vec({0, 0}), Vec({0, 0}), Vec({1, 1})}, Attrs(true));
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[0].shape(), x.shape());
  EXPECT_TRUE(std::isnan(out[1].flat<float>()[0]));
  EXPECT_TRUE(std::isnan(out[2].flat<float>()[1]));
  EXPECT_EQ(out[3].flat<float>()[0], 0.0f);
}

TEST(BatchNormTest, BadInputs) {
  std::mt19937 rng(4);
  Inputs in = MakeInputs(&rng, TensorShape{2, 2, 2, 3});
  auto code = [&](const std::vector<Tensor>& args, AttrMap a) { return RunError("FusedBatchNormV3", args, a).code(); };
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(code({Random<float>(TensorShape{2, 3}, &rng), in.scale, in.offset, Empty(), Empty()}, Attrs(true)),
            kInvalid);
  EXPECT_EQ(code({in.x, Vec({1, 1}), in.offset, Empty(), Empty()}, Attrs(true)), kInvalid);
  EXPECT_EQ(code({in.x, in.scale, in.offset, Empty(), Empty()}, Attrs(false)), kInvalid);  // inference needs stats
  EXPECT_EQ(code({in.x, in.scale, in.offset, Empty(), Empty()}, Attrs(true, "HWCN")), kInvalid);
  EXPECT_EQ(code({in.x, in.scale, in.offset, Empty(), Empty()}, Attrs(true, "NHWC", 1e-3f, 0.5f)), kInvalid);
}

// The gradient kernels (through the registered gradient) against numerical derivatives of y.
TEST(BatchNormTest, GradientsMatchNumericalDerivatives) {
  std::mt19937 rng(5);
  for (bool training : {true, false}) {
    for (const char* format : {"NHWC", "NCHW"}) {
      for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
        SCOPED_TRACE(absl::StrCat(op, " ", format, training ? " training" : " inference"));
        Inputs in = MakeInputs(&rng, TensorShape{2, 3, 2, 3});
        Tensor x = std::string(format) == "NCHW" ? ToNchw(in.x) : in.x;
        const std::vector<Tensor> fixed = training ? std::vector<Tensor>{Empty(), Empty()}
                                                   : std::vector<Tensor>{in.mean, in.var};
        const double err = nn_testing::OpGradientError(op, {x, in.scale, in.offset}, Attrs(training, format), fixed,
                                                       {0}, 1e-2);
        EXPECT_LT(err, 2e-2);
      }
    }
  }
}

TEST(BatchNormTest, GradKernelValues) {
  std::mt19937 rng(6);
  Inputs in = MakeInputs(&rng, TensorShape{2, 2, 3, 2});
  Tensor dy = Random<float>(in.x.shape(), &rng);
  const auto x = nn_testing::ToDoubles(in.x), g = nn_testing::ToDoubles(dy);
  std::vector<double> m, v;
  Moments(x, 2, &m, &v);
  const double n = 12, eps = 1e-3;
  std::vector<double> sum_g(2, 0), sum_gx(2, 0);
  for (size_t i = 0; i < x.size(); ++i) {
    sum_g[i % 2] += g[i];
    sum_gx[i % 2] += g[i] * (x[i] - m[i % 2]);
  }
  std::vector<double> dx(x.size()), ds(2), doff(2);
  for (int c = 0; c < 2; ++c) {
    ds[c] = sum_gx[c] / std::sqrt(v[c] + eps);
    doff[c] = sum_g[c];
  }
  for (size_t i = 0; i < x.size(); ++i) {
    const int c = i % 2;
    const double r = 1 / std::sqrt(v[c] + eps);
    dx[i] = in.scale.flat<float>()[c] * r * (g[i] - sum_g[c] / n - (x[i] - m[c]) * sum_gx[c] / n * r * r);
  }
  Tensor mt = nn_testing::Cast<float>(testing::MakeTensor<double>(m, TensorShape{2}));
  Tensor vt = nn_testing::Cast<float>(testing::MakeTensor<double>(v, TensorShape{2}));
  AttrMap a = Attrs(true);
  a.erase("exponential_avg_factor");
  auto out = RunOp("FusedBatchNormGradV3", {dy, in.x, in.scale, mt, vt, Empty()}, a);
  ASSERT_EQ(out.size(), 5u);
  ExpectClose(out[0], dx, in.x.shape(), 1e-5);
  ExpectClose(out[1], ds, TensorShape{2}, 1e-5);
  ExpectClose(out[2], doff, TensorShape{2}, 1e-5);
  EXPECT_EQ(out[3].shape(), TensorShape{});
  // Shapes that disagree.
  EXPECT_EQ(RunError("FusedBatchNormGradV3",
                     {Random<float>(TensorShape{2, 2, 3, 3}, &rng), in.x, in.scale, mt, vt, Empty()}, a)
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// Second order: d/d(x, scale, offset) of sum(w * dx) where dx is the gradient (through
// FusedBatchNormGrad*) of sum(v * y), against numerical derivatives of that first gradient.
TEST(BatchNormTest, SecondOrderGradients) {
  std::mt19937 rng(8);
  for (bool training : {true, false}) {
    for (const char* format : {"NHWC", "NCHW"}) {
      SCOPED_TRACE(absl::StrCat(format, training ? " training" : " inference"));
      Inputs in = MakeInputs(&rng, TensorShape{2, 2, 3, 2});
      Tensor x = std::string(format) == "NCHW" ? ToNchw(in.x) : in.x;
      Tensor v = Random<float>(x.shape(), &rng);
      AttrMap a = Attrs(training, format, 0.01f);
      auto err = MaxGradientError(
          {x, in.scale, in.offset},
          [&](GraphBuilder* b, const std::vector<NodeOut>& xs) {
            std::vector<NodeOut> args = xs;
            if (training) {
              args.push_back(b->Const(Empty()));
              args.push_back(b->Const(Empty()));
            } else {
              args.push_back(b->Const(in.mean));
              args.push_back(b->Const(in.var));
            }
            Node* bn = b->AddNode("FusedBatchNormV3", args, a);
            NodeOut loss = b->Op("Mul", {NodeOut{bn, 0}, b->Const(v)});
            auto g = AddGradients(b->graph(), {loss}, {xs[0], xs[1]});
            EXPECT_TRUE(g.ok()) << g.status();
            return g.ok() ? std::vector<NodeOut>{(*g)[0], (*g)[1]} : std::vector<NodeOut>{};
          },
          1e-2);
      ASSERT_TRUE(err.ok()) << err.status();
      EXPECT_LT(*err, 3e-2);
    }
  }
}

}  // namespace
}  // namespace dflow
