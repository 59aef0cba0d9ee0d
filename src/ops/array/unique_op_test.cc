// Unique: values in order of first appearance and indices, both out_idx types, strings, -0.0 and
// NaN, empty input, and inputs that are not vectors.
#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "ops/testing/kernel_test_util.h"

namespace dflow {
namespace {

using testing::MakeTensor;
using testing::RunOpKernel;

template <typename T>
std::vector<T> Values(const Tensor& t) {
  auto f = t.flat<T>();
  return std::vector<T>(f.begin(), f.end());
}

TEST(UniqueTest, FirstAppearanceOrder) {
  auto out = RunOpKernel("Unique", {MakeTensor<int32_t>({4, 1, 4, 7, 1, 1}, TensorShape({6}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{4, 1, 7}));
  EXPECT_EQ((*out)[1].dtype(), DT_INT32);
  EXPECT_EQ(Values<int32_t>((*out)[1]), (std::vector<int32_t>{0, 1, 0, 2, 1, 1}));
  out = RunOpKernel("Unique", {MakeTensor<int64_t>({9, 9}, TensorShape({2}))}, {{"out_idx", DT_INT64}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{9}));
  EXPECT_EQ(Values<int64_t>((*out)[1]), (std::vector<int64_t>{0, 0}));
}

TEST(UniqueTest, FloatsAndStrings) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = RunOpKernel("Unique", {MakeTensor<float>({0.0f, -0.0f, nan, 1.5f, nan}, TensorShape({5}))});
  ASSERT_TRUE(out.ok()) << out.status();
  // 0.0 == -0.0; NaN equals nothing, so each NaN is its own value.
  ASSERT_EQ((*out)[0].NumElements(), 4);
  EXPECT_EQ(Values<int32_t>((*out)[1]), (std::vector<int32_t>{0, 0, 1, 2, 3}));
  out = RunOpKernel("Unique", {MakeTensor<std::string>({"b", "a", "b"}, TensorShape({3}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<std::string>((*out)[0]), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(Values<int32_t>((*out)[1]), (std::vector<int32_t>{0, 1, 0}));
}

TEST(UniqueTest, EveryDTypeTheOpDefAllows) {
  // T: type, as in TensorFlow: uint8 and bool have kernels too.
  auto u8 = RunOpKernel("Unique", {MakeTensor<uint8_t>({255, 0, 255}, TensorShape({3}))});
  ASSERT_TRUE(u8.ok()) << u8.status();
  EXPECT_EQ(Values<uint8_t>((*u8)[0]), (std::vector<uint8_t>{255, 0}));
  Tensor b(DT_BOOL, TensorShape({3}));
  b.data<bool>()[0] = false;
  b.data<bool>()[1] = false;
  b.data<bool>()[2] = true;
  auto bo = RunOpKernel("Unique", {b}, {{"out_idx", DT_INT64}});
  ASSERT_TRUE(bo.ok()) << bo.status();
  ASSERT_EQ((*bo)[0].NumElements(), 2);
  EXPECT_EQ(Values<int64_t>((*bo)[1]), (std::vector<int64_t>{0, 0, 1}));
}

TEST(UniqueTest, EmptyAndBadShapes) {
  auto out = RunOpKernel("Unique", {Tensor(DT_INT32, TensorShape({0}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({0}));
  EXPECT_EQ((*out)[1].shape(), TensorShape({0}));
  for (const TensorShape& s : {TensorShape({}), TensorShape({2, 2})}) {
    auto bad = RunOpKernel("Unique", {Tensor(DT_INT32, s)});
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << s.DebugString();
  }
  auto shapes = testing::InferShapes("Unique", {Tensor(DT_INT32, TensorShape({5}))});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0].DebugString(), PartialTensorShape({-1}).DebugString());
  EXPECT_EQ((*shapes)[1].DebugString(), PartialTensorShape({5}).DebugString());
}

}  // namespace
}  // namespace dflow
