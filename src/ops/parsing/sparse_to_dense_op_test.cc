// SparseToDense: values placed at their indices, the default elsewhere, and TensorFlow's errors
// (an index out of bounds, indices out of order or repeated when validated).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_test_util.h"

namespace dflow {
namespace {

using testing::MakeTensor;
using testing::RunOpKernel;

TEST(SparseToDenseTest, PlacesValuesAndDefault) {
  auto out = RunOpKernel("SparseToDense",
                         {MakeTensor<int64_t>({0, 1, 2, 0}, TensorShape({2, 2})),
                          MakeTensor<int64_t>({3, 2}, TensorShape({2})), MakeTensor<float>({5, 7}, TensorShape({2})),
                          MakeTensor<float>({-1}, TensorShape({}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({3, 2}));
  const float* v = (*out)[0].data<float>();
  EXPECT_EQ(std::vector<float>(v, v + 6), (std::vector<float>{-1, 5, -1, -1, 7, -1}));
  auto strings = RunOpKernel("SparseToDense",
                             {MakeTensor<int32_t>({1}, TensorShape({1})), MakeTensor<int32_t>({3}, TensorShape({1})),
                              MakeTensor<std::string>({"x"}, TensorShape({})),
                              MakeTensor<std::string>({""}, TensorShape({}))});
  ASSERT_TRUE(strings.ok()) << strings.status();
  const std::string* s = (*strings)[0].data<std::string>();
  EXPECT_EQ(std::vector<std::string>(s, s + 3), (std::vector<std::string>{"", "x", ""}));
}

TEST(SparseToDenseTest, RejectsBadIndices) {
  auto run = [](std::vector<int64_t> idx, bool validate) {
    return RunOpKernel("SparseToDense",
                       {MakeTensor<int64_t>(idx, TensorShape({(int64_t)idx.size()})),
                        MakeTensor<int64_t>({4}, TensorShape({1})), MakeTensor<int64_t>({1}, TensorShape({})),
                        MakeTensor<int64_t>({0}, TensorShape({}))},
                       {{"validate_indices", validate}});
  };
  auto oob = run({1, 4}, true);
  ASSERT_FALSE(oob.ok());
  EXPECT_NE(oob.status().message().find("indices[1] = [4] is out of bounds: need 0 <= index < [4]"), std::string::npos)
      << oob.status();
  auto order = run({2, 1}, true);
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().message().find("is out of order"), std::string::npos) << order.status();
  auto repeated = run({2, 2}, true);
  ASSERT_FALSE(repeated.ok());
  EXPECT_NE(repeated.status().message().find("is repeated"), std::string::npos) << repeated.status();
  EXPECT_TRUE(run({2, 1}, false).ok());
}

}  // namespace
}  // namespace dflow
