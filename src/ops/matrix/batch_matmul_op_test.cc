// BatchMatMulV2 against a naive loop over broadcast batches, for every dtype and adjoint
// combination, large float products (oneDNN), static shapes and bad inputs.
#include <cmath>
#include <random>
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

AttrMap Adj(bool ax, bool ay) { return {{"adj_x", ax}, {"adj_y", ay}}; }

// x: batch dims + [m,k] (or [k,m] with ax); y: batch dims + [k,n] (or [n,k]).
template <typename T>
std::vector<T> NaiveBatchMatMul(const std::vector<T>& x, const std::vector<int64_t>& xd, bool ax,
                                const std::vector<T>& y, const std::vector<int64_t>& yd, bool ay,
                                std::vector<int64_t>* out_dims) {
  const int rx = xd.size(), ry = yd.size();
  const int64_t m = ax ? xd[rx - 1] : xd[rx - 2], k = ax ? xd[rx - 2] : xd[rx - 1];
  const int64_t n = ay ? yd[ry - 2] : yd[ry - 1];
  const int rank = std::max(rx, ry) - 2;
  std::vector<int64_t> batch(rank);
  for (int i = 0; i < rank; ++i) {
    const int ix = i - (rank - (rx - 2)), iy = i - (rank - (ry - 2));
    const int64_t a = ix >= 0 ? xd[ix] : 1, b = iy >= 0 ? yd[iy] : 1;
    batch[i] = a == 1 ? b : a;
  }
  *out_dims = batch;
  out_dims->push_back(m);
  out_dims->push_back(n);
  int64_t batches = 1;
  for (int64_t d : batch) batches *= d;
  std::vector<T> out(batches * m * n);
  for (int64_t bi = 0; bi < batches; ++bi) {
    // Unravel bi, then ravel into x's and y's own batch dims (index 0 where they are 1).
    std::vector<int64_t> c(rank);
    int64_t rem = bi;
    for (int i = rank - 1; i >= 0; --i) {
      c[i] = rem % batch[i];
      rem /= batch[i];
    }
    int64_t xb = 0, yb = 0;
    for (int i = 0; i < rx - 2; ++i) xb = xb * xd[i] + (xd[i] == 1 ? 0 : c[rank - (rx - 2) + i]);
    for (int i = 0; i < ry - 2; ++i) yb = yb * yd[i] + (yd[i] == 1 ? 0 : c[rank - (ry - 2) + i]);
    const T* xm = x.data() + xb * m * k;
    const T* ym = y.data() + yb * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc += double(ax ? xm[p * m + i] : xm[i * k + p]) * double(ay ? ym[j * k + p] : ym[p * n + j]);
        }
        out[(bi * m + i) * n + j] = static_cast<T>(acc);
      }
    }
  }
  return out;
}

TensorShape Shape(const std::vector<int64_t>& d) { return TensorShape::FromDims(d).value(); }

template <typename T>
class BatchMatMulTest : public ::testing::Test {};
using Types = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(BatchMatMulTest, Types);

TYPED_TEST(BatchMatMulTest, MatchesNaiveWithBroadcastBatches) {
  using T = TypeParam;
  struct Case {
    std::vector<int64_t> xb, yb;  // batch dims
    int64_t m, k, n;
  };
  const std::vector<Case> cases = {{{}, {}, 2, 3, 4},      {{3}, {3}, 2, 3, 2},   {{2, 1}, {1, 3}, 2, 2, 3},
                                   {{4}, {}, 3, 2, 1},     {{}, {2, 2}, 1, 4, 3}, {{1}, {5}, 2, 3, 2},
                                   {{2, 3}, {3}, 3, 1, 2}, {{0}, {1}, 2, 3, 2},   {{2}, {2}, 0, 3, 2},
                                   {{2}, {1}, 2, 0, 3}};
  for (const Case& c : cases) {
    for (bool ax : {false, true}) {
      for (bool ay : {false, true}) {
        std::vector<int64_t> xd = c.xb, yd = c.yb;
        xd.push_back(ax ? c.k : c.m);
        xd.push_back(ax ? c.m : c.k);
        yd.push_back(ay ? c.n : c.k);
        yd.push_back(ay ? c.k : c.n);
        SCOPED_TRACE(Shape(xd).DebugString() + " x " + Shape(yd).DebugString() + " adj " + std::to_string(ax) +
                     std::to_string(ay));
        std::vector<T> x(Shape(xd).num_elements()), y(Shape(yd).num_elements());
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<T>(int(i % 7) - 3);
        for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<T>(int(i % 5) - 2);
        std::vector<int64_t> out_dims;
        std::vector<T> want = NaiveBatchMatMul<T>(x, xd, ax, y, yd, ay, &out_dims);
        auto out = RunOpKernel("BatchMatMulV2", {MakeTensor<T>(x, Shape(xd)), MakeTensor<T>(y, Shape(yd))},
                               Adj(ax, ay));
        ASSERT_TRUE(out.ok()) << out.status();
        ExpectValues<T>((*out)[0], want, Shape(out_dims));
      }
    }
  }
}

TEST(BatchMatMulTest, LargeFloatProductsUseOneDnn) {
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  const std::vector<int64_t> xd = {3, 40, 50}, yd = {1, 50, 30};
  std::vector<float> x(3 * 40 * 50), y(50 * 30);
  for (float& v : x) v = dist(gen);
  for (float& v : y) v = dist(gen);
  for (bool ax : {false, true}) {
    std::vector<int64_t> xdims = ax ? std::vector<int64_t>{3, 50, 40} : xd;
    std::vector<int64_t> out_dims;
    std::vector<float> want = NaiveBatchMatMul<float>(x, xdims, ax, y, yd, false, &out_dims);
    auto out = RunOpKernel("BatchMatMulV2", {MakeTensor<float>(x, Shape(xdims)), MakeTensor<float>(y, Shape(yd))},
                           Adj(ax, false));
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].shape(), Shape(out_dims));
    auto got = (*out)[0].flat<float>();
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
  }
}

TEST(BatchMatMulTest, StaticShapes) {
  auto infer = [](std::vector<int64_t> x, std::vector<int64_t> y, bool ax = false, bool ay = false) {
    return InferShapes("BatchMatMulV2", {Tensor(DT_FLOAT, Shape(x)), Tensor(DT_FLOAT, Shape(y))}, Adj(ax, ay));
  };
  auto s = infer({2, 1, 3, 4}, {5, 4, 6});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 5, 3, 6}));
  s = infer({4, 3}, {2, 5, 4}, true, true);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 3, 5}));
  EXPECT_FALSE(infer({2, 3}, {4, 5}).ok());        // inner dims
  EXPECT_FALSE(infer({2, 2, 3}, {3, 3, 2}).ok());  // batch dims
  EXPECT_FALSE(infer({3}, {3, 2}).ok());           // rank 1
  EXPECT_FALSE(InferShapes("BatchMatMulV2", {Tensor(true), Tensor(true)}).ok());
}

TEST(BatchMatMulTest, KernelRejectsBadShapes) {
  auto r = KernelRunner::Create("BatchMatMulV2", {DT_DOUBLE, DT_DOUBLE});
  ASSERT_TRUE(r.ok()) << r.status();
  auto out = (*r)->Run({Tensor(DT_DOUBLE, TensorShape{2, 3}), Tensor(DT_DOUBLE, TensorShape{4, 2})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("inner dimensions 3 and 4"), absl::string_view::npos) << out.status();
  EXPECT_NE(out.status().message().find("node"), absl::string_view::npos) << out.status();
  out = (*r)->Run({Tensor(DT_DOUBLE, TensorShape{2, 2, 3}), Tensor(DT_DOUBLE, TensorShape{3, 3, 2})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("do not broadcast"), absl::string_view::npos) << out.status();
  out = (*r)->Run({Tensor(DT_DOUBLE, TensorShape{3}), Tensor(DT_DOUBLE, TensorShape{3, 2})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  out = (*r)->Run({Tensor(1.0), Tensor(2.0)});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow
