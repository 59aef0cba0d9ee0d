// ShapeN: the shapes of several tensors of different types and ranks, int32 and int64 outputs,
// static shapes; ConcatOffset with int64 shapes (shape_type).
#include "gtest/gtest.h"
#include "ops/testing/kernel_test_util.h"

namespace dflow {
namespace {

using testing::MakeTensor;
using testing::RunOpKernel;

TEST(ShapeNTest, ShapesOfEachInput) {
  for (DType out_type : {DT_INT32, DT_INT64}) {
    auto out = RunOpKernel("ShapeN",
                           {Tensor(DT_FLOAT, TensorShape({2, 3})), Tensor(DT_FLOAT, TensorShape({})),
                            Tensor(DT_FLOAT, TensorShape({0, 4, 1}))},
                           {{"out_type", out_type}});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 3u);
    const std::vector<std::vector<int64_t>> want = {{2, 3}, {}, {0, 4, 1}};
    for (size_t i = 0; i < 3; ++i) {
      const Tensor& t = (*out)[i];
      EXPECT_EQ(t.dtype(), out_type);
      ASSERT_EQ(t.shape(), TensorShape({static_cast<int64_t>(want[i].size())}));
      for (size_t d = 0; d < want[i].size(); ++d) {
        const int64_t v = out_type == DT_INT32 ? t.flat<int32_t>()[d] : t.flat<int64_t>()[d];
        EXPECT_EQ(v, want[i][d]) << i << " " << d;
      }
    }
  }
}

TEST(ShapeNTest, StaticShapes) {
  auto shapes = testing::InferShapes("ShapeN",
                                     {Tensor(DT_INT32, TensorShape({2, 3})), Tensor(DT_INT32, TensorShape({5}))});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  ASSERT_EQ(shapes->size(), 2u);
  EXPECT_EQ((*shapes)[0].DebugString(), PartialTensorShape({2}).DebugString());
  EXPECT_EQ((*shapes)[1].DebugString(), PartialTensorShape({1}).DebugString());
}

TEST(ConcatOffsetTest, Int64Shapes) {
  auto out = RunOpKernel("ConcatOffset", {Tensor(int32_t{1}), MakeTensor<int64_t>({2, 3}, TensorShape({2})),
                                          MakeTensor<int64_t>({2, 5}, TensorShape({2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[1].dtype(), DT_INT64);
  EXPECT_EQ((*out)[1].flat<int64_t>()[0], 0);
  EXPECT_EQ((*out)[1].flat<int64_t>()[1], 3);
}

}  // namespace
}  // namespace dflow
