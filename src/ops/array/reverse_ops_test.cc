// ReverseV2 and ReverseSequence: values, strings, and TensorFlow's errors.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/testing/kernel_test_util.h"

namespace dflow {
namespace {

using ::testing::ElementsAre;
using testing::MakeTensor;
using testing::RunOpKernel;

TEST(ReverseOpsTest, ReverseV2) {
  Tensor x = MakeTensor<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto r = RunOpKernel("ReverseV2", {x, MakeTensor<int32_t>({-1}, {1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)[0].flat<int32_t>(), ElementsAre(3, 2, 1, 6, 5, 4));
  r = RunOpKernel("ReverseV2", {x, MakeTensor<int64_t>({0, 1}, {2})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)[0].flat<int32_t>(), ElementsAre(6, 5, 4, 3, 2, 1));
  Tensor s = MakeTensor<std::string>({"a", "b"}, {2});
  r = RunOpKernel("ReverseV2", {s, MakeTensor<int32_t>({0}, {1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)[0].flat<std::string>(), ElementsAre("b", "a"));
  EXPECT_EQ(RunOpKernel("ReverseV2", {x, MakeTensor<int32_t>({2}, {1})}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunOpKernel("ReverseV2", {x, MakeTensor<int32_t>({0, -2}, {2})}).status().code(),
            absl::StatusCode::kInvalidArgument);  // the same axis twice
}

TEST(ReverseOpsTest, ReverseSequence) {
  Tensor x = MakeTensor<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  auto r = RunOpKernel("ReverseSequence", {x, MakeTensor<int64_t>({3, 0}, {2})},
                       {{"seq_dim", int64_t{1}}, {"batch_dim", int64_t{0}}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)[0].flat<float>(), ElementsAre(3, 2, 1, 4, 5, 6, 7, 8));
  EXPECT_EQ(
      RunOpKernel("ReverseSequence", {x, MakeTensor<int64_t>({5, 0}, {2})}, {{"seq_dim", int64_t{1}}}).status().code(),
      absl::StatusCode::kInvalidArgument);  // longer than the sequence
  EXPECT_EQ(
      RunOpKernel("ReverseSequence", {x, MakeTensor<int64_t>({1}, {1})}, {{"seq_dim", int64_t{1}}}).status().code(),
      absl::StatusCode::kInvalidArgument);  // one length per batch row
  EXPECT_EQ(
      RunOpKernel("ReverseSequence", {x, MakeTensor<int64_t>({1, 1}, {2})}, {{"seq_dim", int64_t{0}}}).status().code(),
      absl::StatusCode::kInvalidArgument);  // seq_dim == batch_dim
}

TEST(ReverseOpsTest, ShapeFunctionsCheckWhatTensorFlowsDo) {
  Tensor x(DT_FLOAT, TensorShape({3, 4}));
  // Constant axes out of range or named twice fail while building, as in TensorFlow.
  EXPECT_FALSE(testing::InferShapes("ReverseV2", {x, MakeTensor<int32_t>({2}, {1})}).ok());
  EXPECT_FALSE(testing::InferShapes("ReverseV2", {x, MakeTensor<int32_t>({0, -2}, {2})}).ok());
  EXPECT_TRUE(testing::InferShapes("ReverseV2", {x, MakeTensor<int32_t>({-1, 0}, {2})}).ok());
  // seq_dim / batch_dim beyond the rank, and seq_lengths not of the batch size.
  AttrMap seq1 = {{"seq_dim", int64_t{1}}, {"batch_dim", int64_t{0}}};
  EXPECT_TRUE(testing::InferShapes("ReverseSequence", {x, MakeTensor<int64_t>({1, 1, 1}, {3})}, seq1).ok());
  EXPECT_FALSE(testing::InferShapes("ReverseSequence", {x, MakeTensor<int64_t>({1, 1}, {2})}, seq1).ok());
  EXPECT_FALSE(testing::InferShapes("ReverseSequence", {x, MakeTensor<int64_t>({1, 1, 1}, {3})},
                                    {{"seq_dim", int64_t{2}}, {"batch_dim", int64_t{0}}})
                   .ok());
  EXPECT_FALSE(testing::InferShapes("ReverseSequence", {x, MakeTensor<int64_t>({1, 1, 1}, {3})},
                                    {{"seq_dim", int64_t{0}}, {"batch_dim", int64_t{2}}})
                   .ok());
}

}  // namespace
}  // namespace dflow
