// Pack and Unpack: values against naive loops, static shapes, bad inputs and gradients.
#include <string>
#include <vector>

#include "ops/array/array_test_util.h"

namespace dflow {
namespace {

using namespace testing;  // NOLINT

TEST(PackTest, HandComputed) {
  Tensor a = MakeTensor<float>({1, 2}, S({2}));
  Tensor b = MakeTensor<float>({3, 4}, S({2}));
  ExpectValues<float>(Eval("Pack", {a, b}), {1, 2, 3, 4}, S({2, 2}));
  ExpectValues<float>(Eval("Pack", {a, b}, {{"axis", int64_t{1}}}), {1, 3, 2, 4}, S({2, 2}));
  ExpectValues<float>(Eval("Pack", {a, b}, {{"axis", int64_t{-1}}}), {1, 3, 2, 4}, S({2, 2}));
  ExpectValues<int32_t>(Eval("Pack", {Tensor(int32_t{7}), Tensor(int32_t{8}), Tensor(int32_t{9})}), {7, 8, 9}, S({3}));
  ExpectValues<std::string>(Eval("Pack", {Tensor("x")}), {"x"}, S({1}));
  ExpectValues<double>(Eval("Pack", {Tensor(DT_DOUBLE, S({0, 2})), Tensor(DT_DOUBLE, S({0, 2}))},
                            {{"axis", int64_t{1}}}),
                       {}, S({0, 2, 2}));
}

TEST(PackTest, AgainstNaiveLoopEveryAxis) {
  std::vector<Tensor> xs = {Iota<int64_t>(S({2, 3}), 0), Iota<int64_t>(S({2, 3}), 10), Iota<int64_t>(S({2, 3}), 20)};
  for (int axis = 0; axis <= 2; ++axis) {
    TensorShape out;
    for (int d = 0, k = 0; d < 3; ++d) out.AddDimUnchecked(d == axis ? 3 : xs[0].dim_size(k++));
    std::vector<int64_t> want;
    for (int64_t f = 0; f < out.num_elements(); ++f) {
      std::vector<int64_t> idx(3);
      int64_t rem = f;
      for (int d = 2; d >= 0; --d) {
        idx[d] = rem % out.dim_size(d);
        rem /= out.dim_size(d);
      }
      const int64_t which = idx[axis];
      idx.erase(idx.begin() + axis);
      want.push_back(xs[which].flat<int64_t>()[idx[0] * 3 + idx[1]]);
    }
    ExpectValues<int64_t>(Eval("Pack", xs, {{"axis", int64_t{axis}}}), want, out);
    // Unpack is the inverse.
    std::vector<Tensor> back = EvalAll("Unpack", {Eval("Pack", xs, {{"axis", int64_t{axis}}})},
                                       {{"num", int64_t{3}}, {"axis", int64_t{axis}}});
    ASSERT_EQ(back.size(), 3u);
    for (int i = 0; i < 3; ++i) ExpectValues<int64_t>(back[i], Values<int64_t>(xs[i]), S({2, 3}));
  }
}

TEST(PackTest, BadInputs) {
  ExpectKernelError("Pack", {Tensor(DT_FLOAT, S({2})), Tensor(DT_FLOAT, S({3}))}, {},
                    "Shapes of all inputs must match: values[0].shape = [2] != values[1].shape = [3]");
  ExpectKernelError("Pack", {Tensor(DT_FLOAT, S({2}))}, {{"axis", int64_t{2}}}, "out of range");
  ExpectKernelError("Pack", {Tensor(DT_FLOAT, S({2}))}, {{"axis", int64_t{-3}}}, "out of range");
  ExpectInvalid(InferShapes("Pack", {Tensor(DT_FLOAT, S({2})), Tensor(DT_FLOAT, S({3}))}),
                "Shapes of all inputs must match");
  auto s = InferShapes("Pack", {Tensor(DT_FLOAT, S({2, 5})), Tensor(DT_FLOAT, S({2, 5}))}, {{"axis", int64_t{1}}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 2, 5}));
}

TEST(UnpackTest, HandComputed) {
  Tensor m = Iota<float>(S({2, 3}));
  auto rows = EvalAll("Unpack", {m}, {{"num", int64_t{2}}});
  ASSERT_EQ(rows.size(), 2u);
  ExpectValues<float>(rows[1], {3, 4, 5}, S({3}));
  EXPECT_TRUE(rows[1].SharesBufferWith(m));
  auto cols = EvalAll("Unpack", {m}, {{"num", int64_t{3}}, {"axis", int64_t{-1}}});
  ASSERT_EQ(cols.size(), 3u);
  ExpectValues<float>(cols[0], {0, 3}, S({2}));
  ExpectValues<float>(cols[2], {2, 5}, S({2}));
  EXPECT_TRUE(EvalAll("Unpack", {Tensor(DT_FLOAT, S({0, 3}))}, {{"num", int64_t{0}}}).empty());
}

TEST(UnpackTest, BadInputs) {
  ExpectKernelError("Unpack", {Tensor(DT_FLOAT, S({2, 3}))}, {{"num", int64_t{3}}}, "Input shape axis 0 must equal 3");
  ExpectKernelError("Unpack", {Tensor(1.0f)}, {{"num", int64_t{1}}}, "can't unpack a scalar");
  ExpectKernelError("Unpack", {Tensor(DT_FLOAT, S({2}))}, {{"num", int64_t{2}}, {"axis", int64_t{1}}}, "out of range");
  ExpectInvalid(InferShapes("Unpack", {Tensor(DT_FLOAT, S({2, 3}))}, {{"num", int64_t{3}}}), "must be num = 3");
}

TEST(PackGradTest, PackAndUnpack) {
  EXPECT_GRAD_OK(OpGradientError("Pack", {Doubles(S({2, 3})), Doubles(S({2, 3}), 0.2)}, {0, 1}, {{"axis", int64_t{1}}}),
                 1e-8);
  EXPECT_GRAD_OK(OpGradientError("Unpack", {Doubles(S({2, 3}))}, {0}, {{"num", int64_t{3}}, {"axis", int64_t{1}}}),
                 1e-8);
  // Only one output of Unpack used: zeros flow to the others.
  EXPECT_GRAD_OK(OpGradientError("Unpack", {Doubles(S({3, 2}))}, {0}, {{"num", int64_t{3}}}, 2), 1e-8);
  EXPECT_GRAD_OK(OpGradientError("Pack", {Floats(S({2})), Floats(S({2}))}, {0, 1}), 1e-3);
}

}  // namespace
}  // namespace dflow
