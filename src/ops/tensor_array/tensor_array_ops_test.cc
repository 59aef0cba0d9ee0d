// TensorArray kernels one op at a time: values, TensorFlow's errors (unwritten, written twice,
// out of range, cleared after read, closed), dynamic size, split/concat, gradient arrays
// (shared per source, writes that add up), and the lifetime of an array (freed with its handle).
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/testing/kernel_test_util.h"
#include "tensor/resource_handle.h"

namespace dflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeTensor;
using testing::RunOpKernel;

struct TA {
  Tensor handle;
  Tensor flow;
};

TA NewTA(int32_t size, AttrMap extra = {}) {
  AttrMap attrs{{"dtype", DT_FLOAT}};
  for (auto& [k, v] : extra) attrs[k] = v;
  auto r = RunOpKernel("TensorArrayV3", {Tensor(size)}, attrs);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? TA{(*r)[0], (*r)[1]} : TA{};
}

Status Write(const TA& ta, int32_t i, const Tensor& v) {
  return RunOpKernel("TensorArrayWriteV3", {ta.handle, Tensor(i), v, ta.flow}).status();
}

StatusOr<Tensor> Read(const TA& ta, int32_t i) {
  ASSIGN_OR_RETURN(auto r, RunOpKernel("TensorArrayReadV3", {ta.handle, Tensor(i), ta.flow}, {{"dtype", DT_FLOAT}}));
  return r[0];
}

StatusOr<Tensor> Gather(const TA& ta, std::vector<int32_t> idx, AttrMap extra = {}) {
  AttrMap attrs{{"dtype", DT_FLOAT}};
  for (auto& [k, v] : extra) attrs[k] = v;
  ASSIGN_OR_RETURN(auto r,
                   RunOpKernel("TensorArrayGatherV3",
                               {ta.handle, MakeTensor<int32_t>(idx, {static_cast<int64_t>(idx.size())}), ta.flow},
                               attrs));
  return r[0];
}

std::vector<float> Values(const Tensor& t) { return {t.flat<float>().begin(), t.flat<float>().end()}; }

TEST(TensorArrayOpsTest, WriteReadGather) {
  TA ta = NewTA(3, {{"clear_after_read", false}});
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Write(ta, i, MakeTensor<float>({1.0f * i, 10.0f * i}, {2})).ok());
  auto r = Read(ta, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Values(*r), ElementsAre(1, 10));
  auto g = Gather(ta, {2, 0});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->shape().DebugString(), TensorShape({2, 2}).DebugString());
  EXPECT_THAT(Values(*g), ElementsAre(2, 20, 0, 0));
  auto size = RunOpKernel("TensorArraySizeV3", {ta.handle, ta.flow});
  ASSERT_TRUE(size.ok());
  EXPECT_EQ((*size)[0].scalar<int32_t>(), 3);
}

TEST(TensorArrayOpsTest, TensorFlowErrors) {
  TA ta = NewTA(2);
  EXPECT_EQ(Write(ta, 2, Tensor(1.0f)).code(), absl::StatusCode::kInvalidArgument);  // not resizeable
  EXPECT_EQ(Write(ta, -1, Tensor(1.0f)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Read(ta, 0).status().code(), absl::StatusCode::kInvalidArgument);  // unwritten, shape unknown
  EXPECT_EQ(Read(ta, 5).status().code(), absl::StatusCode::kInvalidArgument);  // out of range
  ASSERT_TRUE(Write(ta, 0, Tensor(1.0f)).ok());
  Status twice = Write(ta, 0, Tensor(2.0f));
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(twice.message()), HasSubstr("already been written to"));
  EXPECT_EQ(Write(ta, 1, Tensor(int32_t{1})).code(), absl::StatusCode::kInvalidArgument);  // dtype
  ASSERT_TRUE(Read(ta, 0).ok());
  Status cleared = Read(ta, 0).status();  // clear_after_read
  EXPECT_THAT(std::string(cleared.message()), HasSubstr("cleared"));
  ASSERT_TRUE(RunOpKernel("TensorArrayCloseV3", {ta.handle}).ok());
  Status closed = Write(ta, 1, Tensor(1.0f));
  EXPECT_EQ(closed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(closed.message()), HasSubstr("closed"));
  EXPECT_EQ(RunOpKernel("TensorArrayReadV3", {Tensor(1.0f), Tensor(0), ta.flow}, {{"dtype", DT_FLOAT}}).status().code(),
            absl::StatusCode::kInvalidArgument);  // not a handle
}

TEST(TensorArrayOpsTest, UnwrittenReadsAsZerosWhenTheShapeIsKnown) {
  TA ta = NewTA(3, {{"element_shape", PartialTensorShape({2})}});
  auto r = Read(ta, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Values(*r), ElementsAre(0, 0));
  // identical_element_shapes: the first write fixes the shape for the unwritten ones.
  TA id = NewTA(2, {{"identical_element_shapes", true}});
  ASSERT_TRUE(Write(id, 0, MakeTensor<float>({1, 2}, {2})).ok());
  auto g = Gather(id, {0, 1});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(Values(*g), ElementsAre(1, 2, 0, 0));
  EXPECT_EQ(Write(id, 1, MakeTensor<float>({1, 2, 3}, {3})).code(), absl::StatusCode::kInvalidArgument);
  // Zero elements: the shape must be known.
  TA empty = NewTA(0);
  EXPECT_EQ(Gather(empty, {}).status().code(), absl::StatusCode::kUnimplemented);
  auto e = Gather(empty, {}, {{"element_shape", PartialTensorShape({3})}});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->shape().DebugString(), TensorShape({0, 3}).DebugString());
}

TEST(TensorArrayOpsTest, DynamicSizeScatterSplitConcat) {
  TA ta = NewTA(0, {{"dynamic_size", true}});
  auto s = RunOpKernel("TensorArrayScatterV3",
                       {ta.handle, MakeTensor<int32_t>({3, 1}, {2}), MakeTensor<float>({1, 2, 3, 4}, {2, 2}), ta.flow});
  ASSERT_TRUE(s.ok()) << s.status();
  auto size = RunOpKernel("TensorArraySizeV3", {ta.handle, ta.flow});
  ASSERT_TRUE(size.ok());
  EXPECT_EQ((*size)[0].scalar<int32_t>(), 4);

  TA sp = NewTA(2);
  auto w = RunOpKernel("TensorArraySplitV3", {sp.handle, MakeTensor<float>({1, 2, 3, 4, 5, 6}, {3, 2}),
                                              MakeTensor<int64_t>({1, 2}, {2}), sp.flow});
  ASSERT_TRUE(w.ok()) << w.status();
  auto c = RunOpKernel("TensorArrayConcatV3", {sp.handle, sp.flow}, {{"dtype", DT_FLOAT}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(Values((*c)[0]), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT((*c)[1].flat<int64_t>(), ElementsAre(1, 2));
  TA bad = NewTA(3);
  EXPECT_EQ(RunOpKernel("TensorArraySplitV3",
                        {bad.handle, MakeTensor<float>({1, 2}, {2}), MakeTensor<int64_t>({1, 1}, {2}), bad.flow})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);  // 2 lengths for 3 elements
}

TEST(TensorArrayOpsTest, GradientArraysAddUpAndAreSharedPerSource) {
  TA ta = NewTA(2);
  ASSERT_TRUE(Write(ta, 0, Tensor(1.0f)).ok());
  auto g1 = RunOpKernel("TensorArrayGradV3", {ta.handle, ta.flow}, {{"source", std::string("gradients")}});
  auto g2 = RunOpKernel("TensorArrayGradV3", {ta.handle, ta.flow}, {{"source", std::string("gradients")}});
  ASSERT_TRUE(g1.ok() && g2.ok());
  TA a{(*g1)[0], (*g1)[1]}, b{(*g2)[0], (*g2)[1]};
  ASSERT_TRUE(Write(a, 1, Tensor(2.0f)).ok());
  ASSERT_TRUE(Write(b, 1, Tensor(3.0f)).ok());  // same array: adds up
  auto r = Read(a, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->scalar<float>(), 5.0f);
  auto size = RunOpKernel("TensorArraySizeV3", {a.handle, a.flow});
  ASSERT_TRUE(size.ok());
  EXPECT_EQ((*size)[0].scalar<int32_t>(), 2);
  auto other = RunOpKernel("TensorArrayGradV3", {ta.handle, ta.flow}, {{"source", std::string("gradients_1")}});
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(Read(TA{(*other)[0], (*other)[1]}, 1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorArrayOpsTest, GradWithShapePrependsDimensions) {
  TA ta = NewTA(2, {{"element_shape", PartialTensorShape({3})}});
  auto g = RunOpKernel("TensorArrayGradWithShape", {ta.handle, ta.flow, MakeTensor<int32_t>({2}, {1})},
                       {{"source", std::string("gradients")}});
  ASSERT_TRUE(g.ok()) << g.status();
  auto r = Read(TA{(*g)[0], (*g)[1]}, 1);  // unwritten: zeros of [2] + [3]
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape().DebugString(), TensorShape({2, 3}).DebugString());
  ASSERT_TRUE(RunOpKernel("TensorArrayCloseV3", {ta.handle}).ok());
  EXPECT_EQ(RunOpKernel("TensorArrayGradV3", {ta.handle, ta.flow}, {{"source", std::string("g")}}).status().code(),
            absl::StatusCode::kInvalidArgument);  // closed
}

TEST(TensorArrayOpsTest, FreedWithTheLastHandle) {
  std::weak_ptr<void> weak;
  {
    TA ta = NewTA(2);
    ASSERT_TRUE(Write(ta, 0, Tensor(1.0f)).ok());
    weak = ta.handle.scalar<ResourceHandle>().payload;
    EXPECT_FALSE(weak.expired());
  }
  EXPECT_TRUE(weak.expired());
}

}  // namespace
}  // namespace dflow
