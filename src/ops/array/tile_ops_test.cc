// Tile and BroadcastTo: values against naive loops, static shapes, bad inputs and gradients.
#include <string>
#include <vector>

#include "ops/array/array_test_util.h"

namespace dflow {
namespace {

using namespace testing;  // NOLINT

// out[i] = x[i % in] per dimension (right-aligned; in dims of 1 broadcast): both Tile and
// BroadcastTo read this way.
std::vector<int64_t> NaiveRepeat(const Tensor& x, const TensorShape& out) {
  std::vector<int64_t> r;
  const int lead = out.dims() - x.dims();
  for (int64_t f = 0; f < out.num_elements(); ++f) {
    std::vector<int64_t> idx(out.dims());
    int64_t rem = f;
    for (int d = out.dims() - 1; d >= 0; --d) {
      idx[d] = rem % out.dim_size(d);
      rem /= out.dim_size(d);
    }
    int64_t src = 0;
    for (int d = 0; d < x.dims(); ++d) src = src * x.dim_size(d) + idx[lead + d] % x.dim_size(d);
    r.push_back(x.flat<int64_t>()[src]);
  }
  return r;
}

TEST(TileTest, HandComputed) {
  Tensor x = MakeTensor<float>({1, 2, 3, 4}, S({2, 2}));
  ExpectValues<float>(Eval("Tile", {x, I32({1, 2})}), {1, 2, 1, 2, 3, 4, 3, 4}, S({2, 4}));
  ExpectValues<float>(Eval("Tile", {x, I64({2, 1})}), {1, 2, 3, 4, 1, 2, 3, 4}, S({4, 2}));
  ExpectValues<float>(Eval("Tile", {x, I32({0, 3})}), {}, S({0, 6}));
  EXPECT_TRUE(Eval("Tile", {x, I32({1, 1})}).SharesBufferWith(x));
  ExpectValues<std::string>(Eval("Tile", {MakeTensor<std::string>({"a", "b"}, S({2})), I32({2})}), {"a", "b", "a", "b"},
                            S({4}));
  ExpectValues<int32_t>(Eval("Tile", {Tensor(int32_t{3}), I32({})}), {3}, S({}));
}

TEST(TileTest, AgainstNaiveLoop) {
  Tensor x = Iota<int64_t>(S({2, 1, 3}));
  for (auto m : std::vector<std::vector<int32_t>>{{1, 1, 2}, {3, 2, 1}, {2, 4, 2}}) {
    TensorShape out = S({2 * m[0], 1 * m[1], 3 * m[2]});
    ExpectValues<int64_t>(Eval("Tile", {x, I32(m)}), NaiveRepeat(x, out), out);
  }
}

TEST(TileTest, BadInputs) {
  Tensor x(DT_FLOAT, S({2, 2}));
  ExpectKernelError("Tile", {x, I32({2})}, {},
                    "Expected multiples argument to be a vector of length 2 but got length 1");
  ExpectKernelError("Tile", {x, I32({2, -1})}, {}, "Expected multiples[1] >= 0, but got -1");
  ExpectKernelError("Tile", {x, I64({int64_t{1} << 40, int64_t{1} << 40})}, {}, "too many elements");
  ExpectKernelError("Tile", {x, I64({2, int64_t{1} << 62})}, {}, "too large");
  // As TensorFlow's: a negative multiple fails the kernel, not the shape function.
  auto neg = InferShapes("Tile", {x, I32({2, -1})});
  ASSERT_TRUE(neg.ok()) << neg.status();
  EXPECT_EQ((*neg)[0].dims(), 2);
  EXPECT_EQ((*neg)[0].dim_size(1), -1);
  auto s = InferShapes("Tile", {x, I32({3, 2})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({6, 4}));
}

TEST(BroadcastToTest, HandComputedAndNaive) {
  Tensor row = MakeTensor<int64_t>({1, 2, 3}, S({3}));
  ExpectValues<int64_t>(Eval("BroadcastTo", {row, I32({2, 3})}), {1, 2, 3, 1, 2, 3}, S({2, 3}));
  Tensor col = MakeTensor<int64_t>({1, 2}, S({2, 1}));
  ExpectValues<int64_t>(Eval("BroadcastTo", {col, I64({2, 3})}), {1, 1, 1, 2, 2, 2}, S({2, 3}));
  ExpectValues<int64_t>(Eval("BroadcastTo", {Tensor(int64_t{7}), I32({2})}), {7, 7}, S({2}));
  ExpectValues<int64_t>(Eval("BroadcastTo", {col, I32({0, 2, 0})}), {}, S({0, 2, 0}));
  EXPECT_TRUE(Eval("BroadcastTo", {col, I32({2, 1})}).SharesBufferWith(col));
  Tensor x = Iota<int64_t>(S({3, 1, 2}));
  TensorShape out = S({2, 3, 4, 2});
  ExpectValues<int64_t>(Eval("BroadcastTo", {x, I32({2, 3, 4, 2})}), NaiveRepeat(x, out), out);
}

TEST(BroadcastToTest, BadInputs) {
  Tensor x(DT_FLOAT, S({2, 3}));
  ExpectKernelError("BroadcastTo", {x, I32({3, 3})}, {}, "Incompatible shapes: [2,3] vs. [3,3]");
  ExpectKernelError("BroadcastTo", {x, I32({3})}, {},
                    "Rank of input (2) must be no greater than rank of output shape (1)");
  ExpectKernelError("BroadcastTo", {x, I32({-1, 3})}, {}, "must be non-negative");
  ExpectInvalid(InferShapes("BroadcastTo", {x, I32({3, 3})}), "Incompatible shapes");
}

// ---- gradients ----

TEST(TileGradTest, Tile) {
  EXPECT_GRAD_OK(OpGradientError("Tile", {Doubles(S({2, 3})), I32({2, 2})}, {0}), 1e-8);
  EXPECT_GRAD_OK(OpGradientError("Tile", {Doubles(S({3})), I64({3})}, {0}), 1e-8);
  EXPECT_GRAD_OK(OpGradientError("Tile", {Floats(S({2, 1})), I32({1, 3})}, {0}), 1e-3);
}

TEST(TileGradTest, BroadcastToStaticShapes) {
  EXPECT_GRAD_OK(OpGradientError("BroadcastTo", {Doubles(S({3, 1})), I32({2, 3, 4})}, {0}), 1e-8);
  EXPECT_GRAD_OK(OpGradientError("BroadcastTo", {Doubles(S({2})), I64({2})}, {0}), 1e-8);
  EXPECT_GRAD_OK(OpGradientError("BroadcastTo", {Floats(S({1})), I32({3})}, {0}), 1e-3);
}

TEST(TileGradTest, BroadcastToDynamicShapes) {
  auto err = MaxGradientError({Doubles(S({3, 1}))}, [](GraphBuilder* b, const std::vector<NodeOut>& x) {
    NodeOut hidden = b->Op("PlaceholderWithDefault", {x[0]}, {{"shape", PartialTensorShape()}});
    NodeOut shape = b->Op("Identity", {b->Const(I32({2, 3, 4}))});
    return std::vector<NodeOut>{b->Op("BroadcastTo", {hidden, shape})};
  });
  EXPECT_GRAD_OK(err, 1e-8);
}

}  // namespace
}  // namespace dflow
