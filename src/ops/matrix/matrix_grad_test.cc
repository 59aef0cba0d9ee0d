// Numerical gradient checks of MatMul (all transpose combinations), BatchMatMulV2 (adjoints and
// broadcast batch dimensions, static and run-time shapes), MatrixInverse and MatrixDeterminant.
#include <string>

#include "gtest/gtest.h"
#include "ops/math/grad_test_util.h"

namespace dflow {
namespace {

using testing::ExpectGradientMatches;
using testing::HideShapes;
using testing::OneOp;
using testing::Uniform;

TensorShape Shape(std::vector<int64_t> d) { return TensorShape::FromDims(d).value(); }

// Well-conditioned matrices: random entries plus 3 on the diagonal.
Tensor Conditioned(const TensorShape& s, unsigned seed) {
  Tensor t = Uniform(s, -1, 1, seed);
  const int64_t n = s.dim_size(s.dims() - 1);
  auto v = t.flat<double>();
  for (int64_t b = 0; b < t.NumElements() / (n * n); ++b)
    for (int64_t i = 0; i < n; ++i) v[(b * n + i) * n + i] += 3;
  return t;
}

TEST(MatrixGradTest, MatMulAllTransposes) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(std::to_string(ta) + std::to_string(tb));
      TensorShape a = ta ? Shape({3, 2}) : Shape({2, 3});
      TensorShape b = tb ? Shape({4, 3}) : Shape({3, 4});
      AttrMap attrs = {{"transpose_a", ta}, {"transpose_b", tb}};
      ExpectGradientMatches({Uniform(a, -1, 1, 1), Uniform(b, -1, 1, 2)}, OneOp("MatMul", attrs), 1e-8);
      ExpectGradientMatches({Uniform<float>(a, -1, 1, 3), Uniform<float>(b, -1, 1, 4)}, OneOp("MatMul", attrs), 5e-3,
                            1e-2);
    }
  }
}

TEST(MatrixGradTest, BatchMatMulWithBroadcastBatches) {
  struct Case {
    std::vector<int64_t> xb, yb;
  };
  for (const Case& c : std::vector<Case>{{{}, {}}, {{2}, {2}}, {{2, 1}, {3}}, {{}, {2}}, {{1}, {2, 2}}, {{3}, {1}}}) {
    for (bool ax : {false, true}) {
      for (bool ay : {false, true}) {
        for (bool hide : {false, true}) {
          std::vector<int64_t> xd = c.xb, yd = c.yb;
          const int64_t m = 2, k = 3, n = 2;
          xd.push_back(ax ? k : m);
          xd.push_back(ax ? m : k);
          yd.push_back(ay ? n : k);
          yd.push_back(ay ? k : n);
          SCOPED_TRACE(Shape(xd).DebugString() + " " + Shape(yd).DebugString() + " adj " + std::to_string(ax) +
                       std::to_string(ay) + (hide ? " hidden" : ""));
          AttrMap attrs = {{"adj_x", ax}, {"adj_y", ay}};
          ExpectGradientMatches(
              {Uniform(Shape(xd), -1, 1, 5), Uniform(Shape(yd), -1, 1, 6)},
              [attrs, hide](GraphBuilder* b, const std::vector<NodeOut>& in) {
                std::vector<NodeOut> v = hide ? HideShapes(b, in, true) : in;
                return std::vector<NodeOut>{b->Op("BatchMatMulV2", v, attrs)};
              },
              1e-8);
        }
      }
    }
  }
}

TEST(MatrixGradTest, MatrixInverse) {
  for (bool adjoint : {false, true}) {
    SCOPED_TRACE(adjoint);
    ExpectGradientMatches({Conditioned(Shape({3, 3}), 7)}, OneOp("MatrixInverse", {{"adjoint", adjoint}}), 1e-6);
    ExpectGradientMatches({Conditioned(Shape({2, 2, 2}), 8)}, OneOp("MatrixInverse", {{"adjoint", adjoint}}), 1e-6);
  }
  // Through a product: d/dA of sum(inv(A) * B).
  ExpectGradientMatches(
      {Conditioned(Shape({3, 3}), 9), Uniform(Shape({3, 2}), -1, 1, 10)},
      [](GraphBuilder* b, const std::vector<NodeOut>& in) {
        NodeOut inv = b->Op("MatrixInverse", {in[0]});
        return std::vector<NodeOut>{b->Op("MatMul", {inv, in[1]})};
      },
      1e-6);
}

TEST(MatrixGradTest, MatrixDeterminant) {
  ExpectGradientMatches({Conditioned(Shape({3, 3}), 11)}, OneOp("MatrixDeterminant"), 1e-6);
  ExpectGradientMatches({Conditioned(Shape({2, 2, 2}), 12)}, OneOp("MatrixDeterminant"), 1e-6);
  ExpectGradientMatches({Uniform(Shape({1, 1}), 0.5, 1, 13)}, OneOp("MatrixDeterminant"), 1e-6);
  ExpectGradientMatches(
      {Conditioned(Shape({2, 3, 3}), 14)},
      [](GraphBuilder* b, const std::vector<NodeOut>& in) {
        return std::vector<NodeOut>{b->Op("MatrixDeterminant", HideShapes(b, in))};
      },
      1e-6);
}

}  // namespace
}  // namespace dflow
