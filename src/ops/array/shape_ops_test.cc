// Shape, Rank, Size, Reshape, Fill: values, static shapes and bad inputs.
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "ops/math/cwise_test_util.h"
#include "ops/math/kernel_runner_test_util.h"
#include "ops/testing/kernel_test_util.h"

namespace dflow {
namespace {

using testing::ExpectValues;
using testing::InferShapes;
using testing::KernelRunner;
using testing::MakeTensor;
using testing::RunOpKernel;

TensorShape S(std::initializer_list<int64_t> d) { return TensorShape(d); }

Tensor Eval(const std::string& op, const std::vector<Tensor>& inputs, AttrMap attrs = {}) {
  auto out = RunOpKernel(op, inputs, std::move(attrs));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

Tensor I32(std::vector<int32_t> v) { return MakeTensor<int32_t>(v, S({static_cast<int64_t>(v.size())})); }
Tensor I64(std::vector<int64_t> v) { return MakeTensor<int64_t>(v, S({static_cast<int64_t>(v.size())})); }

void ExpectError(const StatusOr<std::vector<Tensor>>& s, absl::string_view text) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  EXPECT_NE(s.status().message().find(text), absl::string_view::npos) << s.status();
}
void ExpectError(const StatusOr<Tensor>& s, absl::string_view text) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  EXPECT_NE(s.status().message().find(text), absl::string_view::npos) << s.status();
}
void ExpectError(const StatusOr<std::vector<PartialTensorShape>>& s, absl::string_view text) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  EXPECT_NE(s.status().message().find(text), absl::string_view::npos) << s.status();
}

// ---- Shape, Rank, Size ----

TEST(ShapeOpTest, Values) {
  Tensor x(DT_FLOAT, S({2, 3, 4}));
  ExpectValues<int32_t>(Eval("Shape", {x}), {2, 3, 4}, S({3}));
  AttrMap i64;
  i64["out_type"] = DT_INT64;
  ExpectValues<int64_t>(Eval("Shape", {x}, i64), {2, 3, 4}, S({3}));
  ExpectValues<int32_t>(Eval("Shape", {Tensor("s")}), {}, S({0}));
  ExpectValues<int32_t>(Eval("Shape", {Tensor(DT_BOOL, S({0, 5}))}), {0, 5}, S({2}));
}

TEST(ShapeOpTest, StaticShapes) {
  auto s = InferShapes("Shape", {Tensor(DT_INT32, S({7, 1}))});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2}));
  s = InferShapes("Rank", {Tensor(DT_INT32, S({7, 1}))});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0], PartialTensorShape::Scalar());
  s = InferShapes("Size", {Tensor(DT_INT32, S({7, 1}))});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0], PartialTensorShape::Scalar());
  // Unknown input rank: Shape is a vector of unknown length.
  auto r = KernelRunner::Create("Shape", {DT_FLOAT});
  ASSERT_TRUE(r.ok()) << r.status();
  auto v = (*r)->Run1({Tensor(DT_FLOAT, S({5, 6}))});
  ASSERT_TRUE(v.ok()) << v.status();
  ExpectValues<int32_t>(*v, {5, 6}, S({2}));
}

TEST(RankOpTest, Values) {
  ExpectValues<int32_t>(Eval("Rank", {Tensor(DT_FLOAT, S({2, 3, 4}))}), {3}, S({}));
  ExpectValues<int32_t>(Eval("Rank", {Tensor(1.0f)}), {0}, S({}));
  ExpectValues<int32_t>(Eval("Rank", {MakeTensor<std::string>({"a", "b"}, S({2}))}), {1}, S({}));
}

TEST(SizeOpTest, Values) {
  ExpectValues<int32_t>(Eval("Size", {Tensor(DT_FLOAT, S({2, 3, 4}))}), {24}, S({}));
  ExpectValues<int32_t>(Eval("Size", {Tensor(int64_t{3})}), {1}, S({}));
  ExpectValues<int32_t>(Eval("Size", {Tensor(DT_DOUBLE, S({4, 0}))}), {0}, S({}));
  AttrMap i64;
  i64["out_type"] = DT_INT64;
  ExpectValues<int64_t>(Eval("Size", {Tensor(DT_UINT8, S({5, 5}))}, i64), {25}, S({}));
}

// ---- Reshape ----

TEST(ReshapeOpTest, Values) {
  Tensor x = MakeTensor<float>({1, 2, 3, 4, 5, 6}, S({2, 3}));
  Tensor y = Eval("Reshape", {x, I32({3, 2})});
  ExpectValues<float>(y, {1, 2, 3, 4, 5, 6}, S({3, 2}));
  EXPECT_TRUE(y.SharesBufferWith(x));  // no copy
  ExpectValues<float>(Eval("Reshape", {x, I64({6})}), {1, 2, 3, 4, 5, 6}, S({6}));
  ExpectValues<float>(Eval("Reshape", {x, I32({-1, 2})}), {1, 2, 3, 4, 5, 6}, S({3, 2}));
  ExpectValues<float>(Eval("Reshape", {x, I64({1, -1, 1, 3})}), {1, 2, 3, 4, 5, 6}, S({1, 2, 1, 3}));
  ExpectValues<int32_t>(Eval("Reshape", {MakeTensor<int32_t>({9}, S({1, 1})), I32({})}), {9}, S({}));
  ExpectValues<std::string>(Eval("Reshape", {MakeTensor<std::string>({"a", "b"}, S({2})), I32({2, 1})}), {"a", "b"},
                            S({2, 1}));
  // Empty tensors: -1 is inferred as 0 when the other sizes are non-zero.
  ExpectValues<float>(Eval("Reshape", {Tensor(DT_FLOAT, S({0, 3})), I32({-1, 3})}), {}, S({0, 3}));
}

TEST(ReshapeOpTest, StaticShapes) {
  Tensor x(DT_FLOAT, S({2, 3}));
  auto s = InferShapes("Reshape", {x, I32({3, 2})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({3, 2}));
  s = InferShapes("Reshape", {x, I64({-1, 3})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({2, 3}));
  ExpectError(InferShapes("Reshape", {x, I32({4})}),
              "Input to reshape is a tensor with 6 values, but the requested shape has 4");
  // A second -1 is the kernel's to reject (TensorFlow's shape function lets it by).
  s = InferShapes("Reshape", {x, I32({-1, -1})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({-1, -1}));
}

TEST(ReshapeOpTest, KernelErrors) {
  auto r = KernelRunner::Create("Reshape", {DT_FLOAT, DT_INT32});
  ASSERT_TRUE(r.ok()) << r.status();
  Tensor x(DT_FLOAT, S({2, 3}));
  ExpectError((*r)->Run1({x, I32({4})}), "Input to reshape is a tensor with 6 values, but the requested shape has 4");
  ExpectError((*r)->Run1({x, I32({-1, 4})}), "requested shape requires a multiple of 4");
  ExpectError((*r)->Run1({x, I32({-1, -1})}), "Only one input size may be -1, not both 0 and 1");
  ExpectError((*r)->Run1({x, I32({-2, -3})}), "Size 0 must be non-negative, not -2");
  ExpectError((*r)->Run1({x, MakeTensor<int32_t>({2, 3}, S({1, 2}))}), "shape must be a 1-D vector");
  // Empty tensors, TensorFlow's rule: with a 0 among the sizes, zero dims are left out of the
  // products that give -1.
  for (auto [in, req, want] :
       std::vector<std::tuple<TensorShape, std::vector<int32_t>, TensorShape>>{{S({0, 2}), {-1, 0}, S({2, 0})},
                                                                               {S({0, 4}), {0, -1}, S({0, 4})},
                                                                               {S({0, 4}), {-1, 2}, S({0, 2})},
                                                                               {S({0, 4}), {3, -1, 0}, S({3, 1, 0})},
                                                                               {S({0, 4, 0}), {-1, 0}, S({4, 0})}}) {
    auto out = (*r)->Run1({Tensor(DT_FLOAT, in), I32(req)});
    ASSERT_TRUE(out.ok()) << in.DebugString() << ": " << out.status();
    EXPECT_EQ(out->shape(), want) << in.DebugString();
  }
  ExpectError((*r)->Run1({x, I32({0, -1})}),
              "Input to reshape is a tensor with 6 values, but the requested shape has 0");
  // Sizes whose product overflows are rejected before any arithmetic goes wrong.
  auto r64 = KernelRunner::Create("Reshape", {DT_FLOAT, DT_INT64});
  ASSERT_TRUE(r64.ok());
  ExpectError((*r64)->Run1({x, I64({int64_t{1} << 40, int64_t{1} << 40})}), "too many elements");
  ExpectError((*r64)->Run1({x, I64({int64_t{1} << 40, -1, int64_t{1} << 40})}), "too many elements");
  // The error names the node and the input shape.
  auto s = (*r)->Run1({x, I32({5})});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("Reshape 'node'"), absl::string_view::npos) << s.status();
  EXPECT_NE(s.status().message().find("[2,3]"), absl::string_view::npos) << s.status();
}

// ---- Fill ----

TEST(FillOpTest, Values) {
  ExpectValues<float>(Eval("Fill", {I32({2, 3}), Tensor(7.5f)}), {7.5, 7.5, 7.5, 7.5, 7.5, 7.5}, S({2, 3}));
  AttrMap attrs;
  ExpectValues<int64_t>(Eval("Fill", {I64({3}), Tensor(int64_t{-4})}), {-4, -4, -4}, S({3}));
  ExpectValues<std::string>(Eval("Fill", {I32({2}), Tensor("ab")}), {"ab", "ab"}, S({2}));
  ExpectValues<bool>(Eval("Fill", {I32({1, 2}), Tensor(true)}), {true, true}, S({1, 2}));
  ExpectValues<double>(Eval("Fill", {I32({}), Tensor(2.0)}), {2.0}, S({}));
  ExpectValues<int32_t>(Eval("Fill", {I32({0, 4}), Tensor(int32_t{1})}), {}, S({0, 4}));
}

TEST(FillOpTest, StaticShapes) {
  auto s = InferShapes("Fill", {I64({4, 1, 2}), Tensor(1.0f)});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({4, 1, 2}));
  ExpectError(InferShapes("Fill", {I32({2, -1}), Tensor(1.0f)}), "must be >= 0");
  ExpectError(InferShapes("Fill", {I32({2}), MakeTensor<float>({1, 2}, S({2}))}), "rank 0");
}

TEST(FillOpTest, KernelErrors) {
  auto r = KernelRunner::Create("Fill", {DT_INT64, DT_FLOAT});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectError((*r)->Run1({I64({2, -3}), Tensor(1.0f)}), "Dimension -3 must be >= 0");
  ExpectError((*r)->Run1({I64({2}), MakeTensor<float>({1, 2}, S({2}))}), "value must be a scalar");
  ExpectError((*r)->Run1({MakeTensor<int64_t>({2, 2}, S({1, 2})), Tensor(1.0f)}), "dims must be a 1-D vector");
  ExpectError((*r)->Run1({I64({int64_t{1} << 40, int64_t{1} << 40}), Tensor(1.0f)}), "too many elements");
  auto ok = (*r)->Run1({I64({2}), Tensor(3.0f)});
  ASSERT_TRUE(ok.ok()) << ok.status();
  ExpectValues<float>(*ok, {3, 3}, S({2}));
}

}  // namespace
}  // namespace dflow
