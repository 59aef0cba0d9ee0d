// Slice, Pad, PadV2: values against naive loops, static shapes, bad inputs and gradients.
#include <string>
#include <vector>

#include "ops/array/array_test_util.h"

namespace dflow {
namespace {

using namespace testing;  // NOLINT

// Unravels `flat` into a multi-index of `s`.
std::vector<int64_t> Unravel(const TensorShape& s, int64_t flat) {
  std::vector<int64_t> idx(s.dims());
  for (int d = s.dims() - 1; d >= 0; --d) {
    idx[d] = flat % s.dim_size(d);
    flat /= s.dim_size(d);
  }
  return idx;
}
int64_t Ravel(const TensorShape& s, const std::vector<int64_t>& idx) {
  int64_t flat = 0;
  for (int d = 0; d < s.dims(); ++d) flat = flat * s.dim_size(d) + idx[d];
  return flat;
}

TEST(SliceTest, HandComputed) {
  Tensor x = Iota<int32_t>(S({3, 4}));
  ExpectValues<int32_t>(Eval("Slice", {x, I32({1, 1}), I32({2, 2})}), {5, 6, 9, 10}, S({2, 2}));
  ExpectValues<int32_t>(Eval("Slice", {x, I64({0, 2}), I64({-1, -1})}), {2, 3, 6, 7, 10, 11}, S({3, 2}));
  ExpectValues<int32_t>(Eval("Slice", {x, I32({3, 0}), I32({0, 4})}), {}, S({0, 4}));
  // Whole rows share the input's buffer; the whole tensor is the input itself.
  Tensor rows = Eval("Slice", {x, I32({1, 0}), I32({2, -1})});
  ExpectValues<int32_t>(rows, {4, 5, 6, 7, 8, 9, 10, 11}, S({2, 4}));
  EXPECT_TRUE(rows.SharesBufferWith(x));
  EXPECT_TRUE(Eval("Slice", {x, I32({0, 0}), I32({3, 4})}).SharesBufferWith(x));
  ExpectValues<std::string>(Eval("Slice", {MakeTensor<std::string>({"a", "b", "c"}, S({3})), I32({1}), I32({1})}),
                            {"b"}, S({1}));
  ExpectValues<float>(Eval("Slice", {Tensor(2.5f), I32({}), I32({})}), {2.5f}, S({}));
}

TEST(SliceTest, AgainstNaiveLoop) {
  Tensor x = Iota<double>(S({3, 4, 5}));
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {{{0, 0, 0}, {3, 4, 5}},
                                                                                    {{1, 2, 3}, {2, 2, 2}},
                                                                                    {{2, 0, 4}, {1, 4, 1}},
                                                                                    {{0, 3, 1}, {-1, -1, 3}}};
  for (const auto& [begin, size] : cases) {
    std::vector<int64_t> sz = size;
    for (int d = 0; d < 3; ++d)
      if (sz[d] == -1) sz[d] = x.dim_size(d) - begin[d];
    TensorShape out = *TensorShape::FromDims(sz);
    std::vector<double> want;
    for (int64_t f = 0; f < out.num_elements(); ++f) {
      std::vector<int64_t> idx = Unravel(out, f);
      for (int d = 0; d < 3; ++d) idx[d] += begin[d];
      want.push_back(x.flat<double>()[Ravel(x.shape(), idx)]);
    }
    ExpectValues<double>(Eval("Slice", {x, I64(begin), I64(size)}), want, out);
  }
}

TEST(SliceTest, BadInputs) {
  Tensor x(DT_FLOAT, S({3, 4}));
  ExpectKernelError("Slice", {x, I32({0}), I32({1, 1})}, {},
                    "Expected begin and size arguments to be 1-D tensors of size 2");
  ExpectKernelError("Slice", {x, I32({-1, 0}), I32({1, 1})}, {}, "Expected begin[0] in [0, 3], but got -1");
  ExpectKernelError("Slice", {x, I32({4, 0}), I32({0, 1})}, {}, "Expected begin[0] in [0, 3], but got 4");
  ExpectKernelError("Slice", {x, I32({1, 0}), I32({3, 1})}, {}, "Expected size[0] in [0, 2], but got 3");
  ExpectKernelError("Slice", {x, I32({1, 0}), I32({-2, 1})}, {}, "Expected size[0] in [0, 2], but got -2");
  ExpectKernelError("Slice", {x, I64({0, 0}), I64({1, int64_t{1} << 62})}, {}, "Expected size[1]");
  ExpectKernelError("Slice", {x, MakeTensor<int32_t>({0, 0}, S({1, 2})), I32({1, 1})}, {},
                    "begin must be a 1-D vector");
  // As TensorFlow's: the shape function leaves out-of-range begins and sizes to the kernel, except
  // a size of -1 from beyond the dimension.
  auto big = InferShapes("Slice", {x, I32({1, 0}), I32({3, 1})});
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ((*big)[0], PartialTensorShape({3, 1}));
  EXPECT_TRUE(InferShapes("Slice", {x, I32({-1, 0}), I32({1, 1})}).ok());
  ExpectInvalid(InferShapes("Slice", {x, I32({4, 0}), I32({-1, 1})}), "Expected begin[0] in [0, 3], but got 4");
  auto s = InferShapes("Slice", {x, I32({1, 1}), I32({-1, 2})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 2}));
}

TEST(PadTest, HandComputed) {
  Tensor x = MakeTensor<float>({1, 2, 3, 4}, S({2, 2}));
  ExpectValues<float>(Eval("Pad", {x, MakeTensor<int32_t>({1, 0, 0, 2}, S({2, 2}))}),
                      {0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}, S({3, 4}));
  ExpectValues<float>(Eval("PadV2", {x, MakeTensor<int64_t>({0, 1, 1, 0}, S({2, 2})), Tensor(9.0f)}),
                      {9, 1, 2, 9, 3, 4, 9, 9, 9}, S({3, 3}));
  ExpectValues<std::string>(Eval("Pad",
                                 {MakeTensor<std::string>({"a"}, S({1})), MakeTensor<int32_t>({1, 1}, S({1, 2}))}),
                            {"", "a", ""}, S({3}));
  ExpectValues<int32_t>(Eval("Pad", {Tensor(int32_t{5}), Tensor(DT_INT32, S({0, 2}))}), {5}, S({}));
  ExpectValues<int64_t>(Eval("Pad", {Tensor(DT_INT64, S({0})), MakeTensor<int32_t>({1, 2}, S({1, 2}))}), {0, 0, 0},
                        S({3}));
}

TEST(PadTest, AgainstNaiveLoop) {
  Tensor x = Iota<int32_t>(S({2, 3, 2}), 1);
  const std::vector<int32_t> pads = {1, 0, 0, 2, 2, 1};
  TensorShape out = S({3, 5, 5});
  std::vector<int32_t> want(out.num_elements(), -7);
  for (int64_t f = 0; f < out.num_elements(); ++f) {
    std::vector<int64_t> idx = Unravel(out, f);
    bool inside = true;
    for (int d = 0; d < 3; ++d) {
      idx[d] -= pads[2 * d];
      inside &= idx[d] >= 0 && idx[d] < x.dim_size(d);
    }
    if (inside) want[f] = x.flat<int32_t>()[Ravel(x.shape(), idx)];
  }
  ExpectValues<int32_t>(Eval("PadV2", {x, MakeTensor<int32_t>(pads, S({3, 2})), Tensor(int32_t{-7})}), want, out);
}

TEST(PadTest, BadInputs) {
  Tensor x(DT_FLOAT, S({2, 2}));
  ExpectKernelError("Pad", {x, MakeTensor<int32_t>({1, 1}, S({1, 2}))}, {},
                    "first dimension of paddings must be the rank");
  ExpectKernelError("Pad", {x, MakeTensor<int32_t>({1, 1, 1, 1}, S({4}))}, {}, "matrix with 2 columns");
  ExpectKernelError("Pad", {x, MakeTensor<int32_t>({1, -1, 0, 0}, S({2, 2}))}, {}, "Paddings must be non-negative");
  ExpectKernelError("Pad", {x, MakeTensor<int64_t>({0, 0, int64_t{1} << 60, int64_t{1} << 60}, S({2, 2}))}, {},
                    "too large");
  ExpectKernelError("PadV2", {x, MakeTensor<int32_t>({0, 0, 0, 0}, S({2, 2})), MakeTensor<float>({1, 2}, S({2}))}, {},
                    "constant_values must be a scalar");
  ExpectInvalid(InferShapes("Pad", {x, MakeTensor<int32_t>({1, -1, 0, 0}, S({2, 2}))}), "non-negative");
  auto s = InferShapes("Pad", {x, MakeTensor<int32_t>({1, 2, 0, 3}, S({2, 2}))});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({5, 5}));
}

// ---- gradients ----

TEST(SlicePadGradTest, Slice) {
  EXPECT_GRAD_OK(OpGradientError("Slice", {Doubles(S({3, 4})), I32({1, 1}), I32({2, -1})}, {0}), 1e-8);
  EXPECT_GRAD_OK(OpGradientError("Slice", {Doubles(S({2, 3, 2})), I64({0, 1, 1}), I64({2, 1, 1})}, {0}), 1e-8);
  EXPECT_GRAD_OK(OpGradientError("Slice", {Floats(S({5})), I32({1}), I32({3})}, {0}), 1e-3);
}

TEST(SlicePadGradTest, Pad) {
  EXPECT_GRAD_OK(OpGradientError("Pad", {Doubles(S({2, 3})), MakeTensor<int32_t>({1, 0, 2, 1}, S({2, 2}))}, {0}), 1e-8);
  EXPECT_GRAD_OK(OpGradientError("Pad", {Doubles(S({2})), MakeTensor<int64_t>({0, 3}, S({1, 2}))}, {0}), 1e-8);
  EXPECT_GRAD_OK(OpGradientError("PadV2",
                                 {Doubles(S({2, 2})), MakeTensor<int32_t>({1, 1, 0, 1}, S({2, 2})), Tensor(0.5)}, {0}),
                 1e-8);
  EXPECT_GRAD_OK(OpGradientError("Pad", {Floats(S({3})), MakeTensor<int32_t>({1, 1}, S({1, 2}))}, {0}), 1e-3);
}

TEST(SlicePadGradTest, PadV2ConstantValues) {
  EXPECT_GRAD_OK(OpGradientError("PadV2",
                                 {Doubles(S({2, 2})), MakeTensor<int32_t>({1, 1, 0, 1}, S({2, 2})), Tensor(0.5)},
                                 {0, 2}),
                 1e-8);
}

}  // namespace
}  // namespace dflow
