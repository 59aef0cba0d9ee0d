// IdentityN: mixed-type lists pass through unchanged; its gradient passes each output's gradient
// to the input of the same position.
#include "ops/nn/nn_test_util.h"

namespace dflow {
namespace {

TEST(IdentityNTest, PassesMixedTypes) {
  Tensor a = testing::MakeTensor<float>({1.5f, -2.f}, TensorShape{2});
  Tensor b = testing::MakeTensor<int32_t>({7}, TensorShape{});
  auto out = testing::RunOpKernel("IdentityN", {a, b}, {{"T", std::vector<DType>{DT_FLOAT, DT_INT32}}});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].flat<float>()[1], -2.f);
  EXPECT_EQ((*out)[1].dtype(), DT_INT32);
  EXPECT_EQ((*out)[1].flat<int32_t>()[0], 7);
}

TEST(IdentityNTest, Gradient) {
  Tensor x = testing::MakeTensor<double>({0.5, -1.0, 2.0}, TensorShape{3});
  Tensor y = testing::MakeTensor<double>({3.0, 4.0}, TensorShape{2});
  auto err = MaxGradientError({x, y}, [](GraphBuilder* b, const std::vector<NodeOut>& in) {
    Node* n = b->AddNode("IdentityN", {in[0], in[1]});
    return std::vector<NodeOut>{b->Op("Mul", {NodeOut{n, 0}, NodeOut{n, 0}}), NodeOut{n, 1}};
  });
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, 1e-8);
}

}  // namespace
}  // namespace dflow
