// ResizeBilinear, ResizeNearestNeighbor and their *Grad kernels against values worked out by
// hand (legacy, align_corners and half_pixel_centers sampling), the float output of bilinear for
// integer images, bad inputs, the static output shape, and numerical gradients.
#include "ops/nn/nn_test_util.h"

namespace dflow {
namespace {

using nn_testing::ExpectClose;
using nn_testing::RunError;
using nn_testing::RunOp;

Tensor Size(int h, int w) { return testing::MakeTensor<int32_t>({h, w}, TensorShape{2}); }
AttrMap Attrs(bool align, bool half) { return AttrMap{{"align_corners", align}, {"half_pixel_centers", half}}; }

// A 1x2x2x1 image [[0, 1], [2, 3]].
Tensor Image2x2() { return testing::MakeTensor<float>({0, 1, 2, 3}, TensorShape{1, 2, 2, 1}); }

TEST(ResizeTest, BilinearLegacy) {
  // scale 2/4 = 0.5: rows sample 0, 0.5, 1 (clamped), 1.5 (lower 1, upper 1).
  auto out = RunOp("ResizeBilinear", {Image2x2(), Size(4, 4)});
  ASSERT_EQ(out.size(), 1u);
  ExpectClose(out[0], {0, 0.5, 1, 1, 1, 1.5, 2, 2, 2, 2.5, 3, 3, 2, 2.5, 3, 3}, TensorShape{1, 4, 4, 1}, 1e-7);
}

TEST(ResizeTest, BilinearAlignCorners) {
  auto out = RunOp("ResizeBilinear", {Image2x2(), Size(3, 3)}, Attrs(true, false));
  ASSERT_EQ(out.size(), 1u);
  ExpectClose(out[0], {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3}, TensorShape{1, 3, 3, 1}, 1e-7);
}

TEST(ResizeTest, BilinearHalfPixel) {
  // scale 0.5, samples (i + 0.5) * 0.5 - 0.5 = -0.25, 0.25, 0.75, 1.25: lerps 0.75 (clamped to
  // pixel 0), 0.25, 0.75, 0.25 (clamped to pixel 1).
  auto out = RunOp("ResizeBilinear", {Image2x2(), Size(1, 4)}, Attrs(false, true));
  ASSERT_EQ(out.size(), 1u);
  // One output row samples 2 * 0.5 - 0.5 = 0.5 between rows 0 and 1: [1, 2] on average.
  ExpectClose(out[0], {1, 1.25, 1.75, 2}, TensorShape{1, 1, 4, 1}, 1e-7);
}

TEST(ResizeTest, BilinearOfIntegersIsFloat) {
  Tensor img = testing::MakeTensor<uint8_t>({0, 10, 20, 30}, TensorShape{1, 2, 2, 1});
  auto out = RunOp("ResizeBilinear", {img, Size(3, 3)}, Attrs(true, false));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype(), DT_FLOAT);
  ExpectClose(out[0], {0, 5, 10, 10, 15, 20, 20, 25, 30}, TensorShape{1, 3, 3, 1}, 1e-7);
}

TEST(ResizeTest, NearestModes) {
  Tensor img = testing::MakeTensor<int32_t>({0, 1, 2, 3, 4, 5}, TensorShape{1, 1, 3, 2});  // 3 pixels, 2 channels
  // Legacy: scale 3/2: x 0 -> 0, 1 -> floor(1.5) = 1.
  auto out = RunOp("ResizeNearestNeighbor", {img, Size(1, 2)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype(), DT_INT32);
  std::vector<int32_t> want = {0, 1, 2, 3};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[0].flat<int32_t>()[i], want[i]) << i;
  // align_corners: scale (3-1)/(2-1) = 2: x 1 -> 2.
  out = RunOp("ResizeNearestNeighbor", {img, Size(1, 2)}, Attrs(true, false));
  want = {0, 1, 4, 5};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[0].flat<int32_t>()[i], want[i]) << i;
  // half_pixel_centers: floor((x + 0.5) * 1.5): 0 -> 0, 1 -> 2.
  out = RunOp("ResizeNearestNeighbor", {img, Size(1, 2)}, Attrs(false, true));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[0].flat<int32_t>()[i], want[i]) << i;
}

TEST(ResizeTest, GradKernels) {
  // Nearest 2x2 -> 4x4 legacy: every input pixel gets a 2x2 block of the gradient.
  std::vector<float> g(16, 1.0f);
  auto out = RunOp("ResizeNearestNeighborGrad", {testing::MakeTensor<float>(g, TensorShape{1, 4, 4, 1}), Size(2, 2)});
  ASSERT_EQ(out.size(), 1u);
  ExpectClose(out[0], {4, 4, 4, 4}, TensorShape{1, 2, 2, 1}, 0);
  // Bilinear 2x2 -> 3x3 align_corners: the weights of each input pixel sum to (1 + 0.5)^2.
  std::vector<float> ones(9, 1.0f);
  out = RunOp("ResizeBilinearGrad", {testing::MakeTensor<float>(ones, TensorShape{1, 3, 3, 1}), Image2x2()},
              Attrs(true, false));
  ASSERT_EQ(out.size(), 1u);
  ExpectClose(out[0], {2.25, 2.25, 2.25, 2.25}, TensorShape{1, 2, 2, 1}, 1e-7);
}

TEST(ResizeTest, BadInputs) {
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(RunError("ResizeBilinear", {Image2x2(), Size(0, 2)}).code(), kInvalid);
  EXPECT_EQ(RunError("ResizeBilinear", {Image2x2(), testing::MakeTensor<int32_t>({2}, TensorShape{1})}).code(),
            kInvalid);
  EXPECT_EQ(RunError("ResizeBilinear", {testing::MakeTensor<float>({1, 2}, TensorShape{1, 2, 1}), Size(2, 2)}).code(),
            kInvalid);
  EXPECT_EQ(RunError("ResizeNearestNeighbor", {Image2x2(), Size(2, 2)}, Attrs(true, true)).code(), kInvalid);
  EXPECT_EQ(RunError("ResizeBilinear", {Tensor(DT_FLOAT, TensorShape{1, 0, 2, 1}), Size(2, 2)}).code(), kInvalid);
  EXPECT_EQ(RunError("ResizeBilinearGrad", {Tensor(DT_FLOAT, TensorShape{2, 3, 3, 1}), Image2x2()}).code(), kInvalid);
}

TEST(ResizeTest, StaticShape) {
  auto shapes = testing::InferShapes("ResizeBilinear", {Tensor(DT_FLOAT, TensorShape{2, 5, 6, 3}), Size(7, 8)});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0].DebugString(), PartialTensorShape({2, 7, 8, 3}).DebugString());
}

TEST(ResizeTest, NumericalGradients) {
  std::mt19937 rng(3);
  Tensor img = nn_testing::Random<double>(TensorShape{2, 3, 4, 2}, &rng);
  for (auto [align, half] : std::vector<std::pair<bool, bool>>{{false, false}, {true, false}, {false, true}}) {
    SCOPED_TRACE(absl::StrCat(align, half));
    // Bilinear's gradient kernel takes float grads: check a float image with a looser bound.
    Tensor fimg = nn_testing::Cast<float>(img);
    EXPECT_LT(nn_testing::OpGradientError("ResizeBilinear", {fimg}, Attrs(align, half), {Size(5, 3)}, {0}, 1e-2), 2e-3);
    EXPECT_LT(nn_testing::OpGradientError("ResizeNearestNeighbor", {img}, Attrs(align, half), {Size(5, 7)}), 1e-9);
  }
}

}  // namespace
}  // namespace dflow
