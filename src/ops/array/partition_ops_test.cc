// DynamicPartition: values against a naive loop, static shapes, bad partitions and the gradient.
#include <string>
#include <vector>

#include "ops/array/array_test_util.h"

namespace dflow {
namespace {

using namespace testing;  // NOLINT

TEST(DynamicPartitionTest, HandComputed) {
  // Rows of a [5,2] tensor into 3 partitions; partition 1 gets none.
  std::vector<Tensor> out = EvalAll("DynamicPartition", {Iota<float>(S({5, 2})), I32({2, 0, 2, 0, 0})},
                                    {{"num_partitions", int64_t{3}}});
  ASSERT_EQ(out.size(), 3u);
  ExpectValues<float>(out[0], {2, 3, 6, 7, 8, 9}, S({3, 2}));
  ExpectValues<float>(out[1], {}, S({0, 2}));
  ExpectValues<float>(out[2], {0, 1, 4, 5}, S({2, 2}));
  // Partitions of rank 2 over data of rank 2: elements.
  out = EvalAll("DynamicPartition", {Iota<int64_t>(S({2, 2})), MakeTensor<int32_t>({1, 0, 0, 1}, S({2, 2}))},
                {{"num_partitions", int64_t{2}}});
  ExpectValues<int64_t>(out[0], {1, 2}, S({2}));
  ExpectValues<int64_t>(out[1], {0, 3}, S({2}));
  out = EvalAll("DynamicPartition", {MakeTensor<std::string>({"a", "b", "c"}, S({3})), I32({1, 1, 0})},
                {{"num_partitions", int64_t{2}}});
  ExpectValues<std::string>(out[0], {"c"}, S({1}));
  ExpectValues<std::string>(out[1], {"a", "b"}, S({2}));
}

TEST(DynamicPartitionTest, AgainstNaiveLoop) {
  const Tensor data = Iota<int32_t>(S({7, 3}));
  const std::vector<int32_t> p = {3, 1, 1, 0, 3, 3, 1};
  std::vector<Tensor> out = EvalAll("DynamicPartition", {data, I32(p)}, {{"num_partitions", int64_t{4}}});
  ASSERT_EQ(out.size(), 4u);
  for (int k = 0; k < 4; ++k) {
    std::vector<int32_t> want;
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] != k) continue;
      for (int j = 0; j < 3; ++j) want.push_back(data.flat<int32_t>()[i * 3 + j]);
    }
    ExpectValues<int32_t>(out[k], want, S({static_cast<int64_t>(want.size() / 3), 3}));
  }
}

TEST(DynamicPartitionTest, StaticShapes) {
  auto shapes = InferShapes("DynamicPartition", {Iota<float>(S({4, 3, 2})), I32({0, 1, 1, 0})},
                            {{"num_partitions", int64_t{2}}});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  ASSERT_EQ(shapes->size(), 2u);
  EXPECT_EQ((*shapes)[0], PartialTensorShape({-1, 3, 2}));
  EXPECT_EQ((*shapes)[1], PartialTensorShape({-1, 3, 2}));
}

TEST(DynamicPartitionTest, BadInputs) {
  AttrMap two = {{"num_partitions", int64_t{2}}};
  ExpectInvalid(RunKernelOnly("DynamicPartition", {Iota<float>(S({3})), I32({0, 2, 1})}, two),
                "partitions[1] = 2 is not in [0, 2)");
  ExpectInvalid(RunKernelOnly("DynamicPartition", {Iota<float>(S({3})), I32({0, -1, 1})}, two),
                "partitions[1] = -1 is not in [0, 2)");
  ExpectKernelError("DynamicPartition", {Iota<float>(S({3, 2})), I32({0, 1})}, two, "does not start with");
  auto shapes = InferShapes("DynamicPartition", {Iota<float>(S({3, 2})), I32({0, 1})}, two);
  ExpectInvalid(shapes, "does not start with partitions.shape");
  EXPECT_FALSE(
      RunOpKernel("DynamicPartition", {Iota<float>(S({3})), I32({0, 1, 1})}, {{"num_partitions", int64_t{0}}}).ok());
}

TEST(DynamicPartitionTest, Gradient) {
  // Every partition reaches the output; the gradient of each data row comes from its partition.
  EXPECT_GRAD_OK(OpGradientError("DynamicPartition", {Doubles(S({5, 2})), I32({1, 0, 1, 2, 0})}, {0},
                                 {{"num_partitions", int64_t{3}}}),
                 1e-8);
  // One output only: the rows of the other partition get zeros.
  EXPECT_GRAD_OK(OpGradientError("DynamicPartition",
                                 {Doubles(S({2, 3})), MakeTensor<int32_t>({0, 1, 1, 0, 1, 0}, S({2, 3}))}, {0},
                                 {{"num_partitions", int64_t{2}}}, /*output=*/1),
                 1e-8);
  EXPECT_GRAD_OK(OpGradientError("DynamicPartition", {Floats(S({4})), I32({1, 1, 0, 1})}, {0},
                                 {{"num_partitions", int64_t{2}}}),
                 1e-3);
}

}  // namespace
}  // namespace dflow
