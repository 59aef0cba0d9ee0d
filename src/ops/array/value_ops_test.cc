// ZerosLike, OnesLike, StopGradient, Range, OneHot: values, static shapes, bad inputs, and the
// ops that stop backpropagation.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/gradients.h"
#include "ops/array/array_test_util.h"

namespace dflow {
namespace {

using namespace testing;  // NOLINT

TEST(ZerosOnesLikeTest, EveryType) {
  ExpectValues<float>(Eval("ZerosLike", {Iota<float>(S({2, 2}), 1)}), {0, 0, 0, 0}, S({2, 2}));
  ExpectValues<int64_t>(Eval("ZerosLike", {Iota<int64_t>(S({3}), 1)}), {0, 0, 0}, S({3}));
  ExpectValues<std::string>(Eval("ZerosLike", {Tensor("x")}), {""}, S({}));
  ExpectValues<bool>(Eval("ZerosLike", {MakeTensor<bool>({true}, S({1}))}), {false}, S({1}));
  ExpectValues<double>(Eval("OnesLike", {Iota<double>(S({2}))}), {1, 1}, S({2}));
  ExpectValues<int32_t>(Eval("OnesLike", {Tensor(DT_INT32, S({0, 2}))}), {}, S({0, 2}));
  ExpectValues<uint8_t>(Eval("OnesLike", {Tensor(DT_UINT8, S({2}))}), {1, 1}, S({2}));
  ExpectValues<bool>(Eval("OnesLike", {Tensor(DT_BOOL, S({1}))}), {true}, S({1}));
  EXPECT_FALSE(RunOpKernel("OnesLike", {Tensor("x")}).ok());
  Tensor x = Iota<float>(S({3}));
  EXPECT_TRUE(Eval("StopGradient", {x}).SharesBufferWith(x));
}

TEST(RangeTest, ValuesAndStaticShapes) {
  ExpectValues<int32_t>(Eval("Range", {Tensor(int32_t{3}), Tensor(int32_t{18}), Tensor(int32_t{3})}), {3, 6, 9, 12, 15},
                        S({5}));
  ExpectValues<int32_t>(Eval("Range", {Tensor(int32_t{3}), Tensor(int32_t{1}), Tensor(int32_t{-1})}), {3, 2}, S({2}));
  ExpectValues<int64_t>(Eval("Range", {Tensor(int64_t{0}), Tensor(int64_t{0}), Tensor(int64_t{5})}), {}, S({0}));
  ExpectValues<float>(Eval("Range", {Tensor(0.5f), Tensor(2.0f), Tensor(0.5f)}), {0.5f, 1.0f, 1.5f}, S({3}));
  ExpectValues<double>(Eval("Range", {Tensor(1.0), Tensor(0.0), Tensor(-0.3)}), {1.0, 0.7, 0.4, 0.1}, S({4}));
  // Extreme int32 bounds: the span does not overflow.
  Tensor r = Eval("Range", {Tensor(int32_t{INT32_MIN}), Tensor(int32_t{INT32_MAX}), Tensor(int32_t{INT32_MAX})});
  ExpectValues<int32_t>(r, {INT32_MIN, -1, INT32_MAX - 1}, S({3}));
  auto s = InferShapes("Range", {Tensor(int32_t{0}), Tensor(int32_t{10}), Tensor(int32_t{4})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({3}));
}

TEST(RangeTest, BadInputs) {
  ExpectKernelError("Range", {Tensor(int32_t{0}), Tensor(int32_t{5}), Tensor(int32_t{0})}, {}, "Requires delta != 0");
  ExpectKernelError("Range", {Tensor(int32_t{5}), Tensor(int32_t{0}), Tensor(int32_t{1})}, {},
                    "Requires start <= limit when delta > 0: 5/0");
  ExpectKernelError("Range", {Tensor(int32_t{0}), Tensor(int32_t{5}), Tensor(int32_t{-1})}, {},
                    "Requires start >= limit when delta < 0");
  ExpectKernelError("Range", {Tensor(int64_t{INT64_MIN}), Tensor(int64_t{INT64_MAX}), Tensor(int64_t{1})}, {},
                    "too many elements");
  ExpectKernelError("Range", {Tensor(0.0f), Tensor(INFINITY), Tensor(1.0f)}, {}, "finite");
  ExpectKernelError("Range", {I32({0}), Tensor(int32_t{5}), Tensor(int32_t{1})}, {}, "start must be a scalar");
  ExpectInvalid(InferShapes("Range", {Tensor(int32_t{0}), Tensor(int32_t{5}), Tensor(int32_t{0})}), "delta != 0");
}

TEST(OneHotTest, ValuesEveryAxis) {
  // indices [2] = {0, 2}, depth 3.
  ExpectValues<float>(Eval("OneHot", {I64({0, 2}), Tensor(int32_t{3}), Tensor(1.0f), Tensor(0.0f)}), {1, 0, 0, 0, 0, 1},
                      S({2, 3}));
  ExpectValues<float>(Eval("OneHot", {I32({0, 2}), Tensor(int32_t{3}), Tensor(5.0f), Tensor(-1.0f)},
                           {{"axis", int64_t{0}}}),
                      {5, -1, -1, -1, -1, 5}, S({3, 2}));
  // Out-of-range and negative indices give a row of off_value.
  ExpectValues<int32_t>(Eval("OneHot", {I64({-1, 3, 1}), Tensor(int32_t{3}), Tensor(int32_t{1}), Tensor(int32_t{0})}),
                        {0, 0, 0, 0, 0, 0, 0, 1, 0}, S({3, 3}));
  ExpectValues<std::string>(Eval("OneHot",
                                 {MakeTensor<uint8_t>({1}, S({1})), Tensor(int32_t{2}), Tensor("y"), Tensor("n")}),
                            {"n", "y"}, S({1, 2}));
  // Rank 2 indices against a naive loop, axis 1.
  Tensor idx = MakeTensor<int64_t>({0, 1, 2, 1, 1, 0}, S({2, 3}));
  std::vector<double> want(2 * 4 * 3, 0.0);
  for (int p = 0; p < 2; ++p)
    for (int s = 0; s < 3; ++s) want[(p * 4 + idx.flat<int64_t>()[p * 3 + s]) * 3 + s] = 1.0;
  ExpectValues<double>(Eval("OneHot", {idx, Tensor(int32_t{4}), Tensor(1.0), Tensor(0.0)}, {{"axis", int64_t{1}}}),
                       want, S({2, 4, 3}));
}

TEST(OneHotTest, BadInputs) {
  ExpectKernelError("OneHot", {I64({0}), Tensor(int32_t{-1}), Tensor(1.0f), Tensor(0.0f)}, {},
                    "depth must be non-negative");
  ExpectKernelError("OneHot", {I64({0}), Tensor(int32_t{2}), Tensor(1.0f), Tensor(0.0f)}, {{"axis", int64_t{2}}},
                    "Expected axis to be -1 or between [0, 1]");
  ExpectKernelError("OneHot", {I64({0}), Tensor(int32_t{2}), MakeTensor<float>({1, 1}, S({2})), Tensor(0.0f)}, {},
                    "on_value must be a scalar");
  ExpectInvalid(InferShapes("OneHot", {I64({0}), Tensor(int32_t{2}), Tensor(1.0f), Tensor(0.0f)},
                            {{"axis", int64_t{-2}}}),
                "Expected axis");
  // An axis beyond the output's rank fails the kernel only (TensorFlow's shape function lets it by).
  EXPECT_TRUE(
      InferShapes("OneHot", {I64({0}), Tensor(int32_t{2}), Tensor(1.0f), Tensor(0.0f)}, {{"axis", int64_t{2}}}).ok());
}

TEST(NoGradientOpsTest, StopBackpropagation) {
  // d/dx (x + StopGradient(x)) flows only through the first term. Identity stands in for the
  // addition, so only the array family is needed.
  auto err = MaxGradientError({Doubles(S({3}))}, [](GraphBuilder* b, const std::vector<NodeOut>& x) {
    return std::vector<NodeOut>{b->Op("Identity", {x[0]}), b->Op("StopGradient", {x[0]})};
  });
  // The numerical Jacobian of the StopGradient output is the identity, the built one is zero.
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_NEAR(*err, 1.0, 1e-6);
  for (const char* op : {"ZerosLike", "OnesLike", "StopGradient", "Range", "OneHot", "InvertPermutation", "Shape",
                         "Rank", "Size", "ConcatOffset", "RandomShuffle", "Multinomial"}) {
    bool none = false;
    EXPECT_EQ(LookupGradient(op, &none), nullptr) << op;
    EXPECT_TRUE(none) << op;
  }
}

}  // namespace
}  // namespace dflow
