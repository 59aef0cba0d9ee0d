// Transpose, InvertPermutation, ExpandDims, Squeeze (and the Reshape and Fill gradients):
// values, static shapes, bad inputs and gradients.
#include <algorithm>
#include <string>
#include <vector>

#include "ops/array/array_test_util.h"

namespace dflow {
namespace {

using namespace testing;  // NOLINT

TEST(TransposeTest, HandComputed) {
  Tensor m = Iota<float>(S({2, 3}));
  ExpectValues<float>(Eval("Transpose", {m, I32({1, 0})}), {0, 3, 1, 4, 2, 5}, S({3, 2}));
  EXPECT_TRUE(Eval("Transpose", {m, I64({0, 1})}).SharesBufferWith(m));
  ExpectValues<std::string>(Eval("Transpose", {MakeTensor<std::string>({"a", "b", "c", "d"}, S({2, 2})), I32({1, 0})}),
                            {"a", "c", "b", "d"}, S({2, 2}));
  ExpectValues<int32_t>(Eval("Transpose", {Tensor(int32_t{4}), I32({})}), {4}, S({}));
}

TEST(TransposeTest, EveryPermutationOfRank4AgainstNaiveLoop) {
  const TensorShape in_shape = S({2, 3, 1, 4});
  Tensor x = Iota<int64_t>(in_shape);
  std::vector<int> perm = {0, 1, 2, 3};
  do {
    TensorShape out;
    for (int p : perm) out.AddDimUnchecked(in_shape.dim_size(p));
    std::vector<int64_t> want;
    for (int64_t f = 0; f < out.num_elements(); ++f) {
      std::vector<int64_t> oi(4), ii(4);
      int64_t rem = f;
      for (int d = 3; d >= 0; --d) {
        oi[d] = rem % out.dim_size(d);
        rem /= out.dim_size(d);
      }
      for (int d = 0; d < 4; ++d) ii[perm[d]] = oi[d];
      int64_t src = 0;
      for (int d = 0; d < 4; ++d) src = src * in_shape.dim_size(d) + ii[d];
      want.push_back(src);
    }
    ExpectValues<int64_t>(Eval("Transpose", {x, I32({perm[0], perm[1], perm[2], perm[3]})}), want, out);
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST(TransposeTest, BadInputs) {
  Tensor m(DT_FLOAT, S({2, 3}));
  ExpectKernelError("Transpose", {m, I32({0})}, {}, "transpose expects a vector of size 2");
  ExpectKernelError("Transpose", {m, I32({0, 2})}, {}, "2 is out of range [0 .. 2)");
  ExpectKernelError("Transpose", {m, I32({-3, 0})}, {}, "-1 is out of range [0 .. 2)");
  // As TensorFlow's: the shape function lets a repeated dim through, the kernel names the missing one.
  ExpectKernelError("Transpose", {m, I32({1, 1})}, {}, "0 is missing from {1,1}.");
  auto dup = InferShapes("Transpose", {m, I32({1, 1})});
  ASSERT_TRUE(dup.ok()) << dup.status();
  EXPECT_EQ((*dup)[0], PartialTensorShape({3, 3}));
  ExpectInvalid(InferShapes("Transpose", {m, I32({0, 2})}), "out of range");
  // Entries in [-rank, 0) count from the end (TensorFlow's kernel takes them so).
  ExpectValues<float>(Eval("Transpose", {MakeTensor<float>({0, 1, 2, 3, 4, 5}, S({2, 3})), I32({-1, 0})}),
                      {0, 3, 1, 4, 2, 5}, S({3, 2}));
  auto neg = InferShapes("Transpose", {m, I32({1, -2})});
  ASSERT_TRUE(neg.ok()) << neg.status();
  EXPECT_EQ((*neg)[0], PartialTensorShape({3, 2}));
  auto s = InferShapes("Transpose", {Tensor(DT_FLOAT, S({2, 3, 4})), I32({2, 0, 1})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({4, 2, 3}));
}

TEST(InvertPermutationTest, ValuesAndErrors) {
  ExpectValues<int32_t>(Eval("InvertPermutation", {I32({3, 4, 0, 2, 1})}), {2, 4, 3, 0, 1}, S({5}));
  ExpectValues<int64_t>(Eval("InvertPermutation", {I64({})}), {}, S({0}));
  ExpectKernelError("InvertPermutation", {I32({0, 2})}, {}, "x[1] = 2 is not between 0 and 2");
  ExpectKernelError("InvertPermutation", {I32({0, -1})}, {}, "is not between 0 and 2");
  ExpectKernelError("InvertPermutation", {I64({1, 1})}, {}, "1 is duplicated in the input");
  ExpectKernelError("InvertPermutation", {MakeTensor<int32_t>({0}, S({1, 1}))}, {}, "expects a 1D vector");
}

TEST(ExpandDimsTest, ValuesShapesAndErrors) {
  Tensor m = Iota<float>(S({2, 3}));
  for (auto [dim, shape] : std::vector<std::pair<int, TensorShape>>{
           {0, S({1, 2, 3})}, {1, S({2, 1, 3})}, {2, S({2, 3, 1})}, {-1, S({2, 3, 1})}, {-3, S({1, 2, 3})}}) {
    Tensor y = Eval("ExpandDims", {m, Tensor(int32_t{dim})});
    ExpectValues<float>(y, Values<float>(m), shape);
    EXPECT_TRUE(y.SharesBufferWith(m));
  }
  ExpectValues<float>(Eval("ExpandDims", {m, I64({1})}), Values<float>(m), S({2, 1, 3}));
  ExpectValues<int32_t>(Eval("ExpandDims", {Tensor(int32_t{5}), Tensor(int32_t{0})}), {5}, S({1}));
  ExpectKernelError("ExpandDims", {m, Tensor(int32_t{3})}, {},
                    "Tried to expand dim index 3 for tensor with 2 dimensions");
  ExpectKernelError("ExpandDims", {m, Tensor(int32_t{-4})}, {}, "Tried to expand dim index -4");
  ExpectKernelError("ExpandDims", {m, I32({0, 1})}, {}, "must be a scalar");
  ExpectInvalid(InferShapes("ExpandDims", {m, Tensor(int32_t{4})}), "out of range");
}

TEST(SqueezeTest, ValuesShapesAndErrors) {
  Tensor x = Iota<int32_t>(S({1, 2, 1, 3, 1}));
  ExpectValues<int32_t>(Eval("Squeeze", {x}), Values<int32_t>(x), S({2, 3}));
  ExpectValues<int32_t>(Eval("Squeeze", {x}, {{"squeeze_dims", std::vector<int64_t>{0, -1}}}), Values<int32_t>(x),
                        S({2, 1, 3}));
  EXPECT_TRUE(Eval("Squeeze", {x}).SharesBufferWith(x));
  ExpectValues<int32_t>(Eval("Squeeze", {MakeTensor<int32_t>({4}, S({1, 1}))}), {4}, S({}));
  ExpectKernelError("Squeeze", {x}, {{"squeeze_dims", std::vector<int64_t>{1}}},
                    "Can not squeeze dim[1], expected a dimension of 1, got 2");
  ExpectKernelError("Squeeze", {x}, {{"squeeze_dims", std::vector<int64_t>{5}}}, "out of range");
  ExpectInvalid(InferShapes("Squeeze", {x}, {{"squeeze_dims", std::vector<int64_t>{3}}}), "Can not squeeze dim[3]");
}

// ---- gradients ----

TEST(TransposeGradTest, ConstantAndComputedPermutations) {
  EXPECT_GRAD_OK(OpGradientError("Transpose", {Doubles(S({2, 3, 4})), I32({2, 0, 1})}, {0}), 1e-8);
  EXPECT_GRAD_OK(OpGradientError("Transpose", {Floats(S({2, 3})), I64({1, 0})}, {0}), 1e-3);
  // A permutation computed in the graph goes through InvertPermutation.
  auto err = MaxGradientError({Doubles(S({2, 3, 4}))}, [](GraphBuilder* b, const std::vector<NodeOut>& x) {
    NodeOut perm = b->Op("Identity", {b->Const(I32({1, 2, 0}))});
    return std::vector<NodeOut>{b->Op("Transpose", {x[0], perm})};
  });
  EXPECT_GRAD_OK(err, 1e-8);
}

TEST(TransposeGradTest, ReshapingOps) {
  EXPECT_GRAD_OK(OpGradientError("ExpandDims", {Doubles(S({2, 3})), Tensor(int32_t{1})}, {0}), 1e-8);
  EXPECT_GRAD_OK(OpGradientError("Squeeze", {Doubles(S({2, 1, 3}))}, {0}), 1e-8);
  EXPECT_GRAD_OK(OpGradientError("Reshape", {Doubles(S({2, 3})), I32({3, -1})}, {0}), 1e-8);
  EXPECT_GRAD_OK(OpGradientError("Squeeze", {Floats(S({1, 3}))}, {0}), 1e-3);
  // Unknown static shapes: the gradient reshapes to a computed Shape.
  auto err = MaxGradientError({Doubles(S({2, 3}))}, [](GraphBuilder* b, const std::vector<NodeOut>& x) {
    NodeOut hidden = b->Op("PlaceholderWithDefault", {x[0]}, {{"shape", PartialTensorShape()}});
    return std::vector<NodeOut>{b->Op("ExpandDims", {hidden, b->Scalar(DT_INT32, 0)})};
  });
  EXPECT_GRAD_OK(err, 1e-8);
}

TEST(TransposeGradTest, Fill) { EXPECT_GRAD_OK(OpGradientError("Fill", {I32({2, 3}), Tensor(0.7)}, {1}), 1e-8); }

}  // namespace
}  // namespace dflow
