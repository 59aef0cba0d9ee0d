// Stack ops one kernel at a time: last in first out, the element type, max_size, closing, and
// handles that are not stacks.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ops/testing/kernel_test_util.h"
#include "tensor/resource_handle.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;
using testing::RunOpKernel;

Tensor NewStack(int32_t max_size, DType t = DT_FLOAT) {
  auto r = RunOpKernel("StackV2", {Tensor(max_size)}, {{"elem_type", t}, {"stack_name", std::string("s")}});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? (*r)[0] : Tensor();
}

Status Push(const Tensor& stack, const Tensor& v) {
  auto r = RunOpKernel("StackPushV2", {stack, v});
  if (r.ok()) EXPECT_EQ((*r)[0].flat<float>()[0], v.flat<float>()[0]);  // the element passes through
  return r.status();
}

StatusOr<Tensor> Pop(const Tensor& stack, DType t = DT_FLOAT) {
  ASSIGN_OR_RETURN(std::vector<Tensor> r, RunOpKernel("StackPopV2", {stack}, {{"elem_type", t}}));
  return r[0];
}

TEST(StackOpsTest, LastInFirstOut) {
  Tensor s = NewStack(-1);
  for (float v : {1.0f, 2.0f, 3.0f}) ASSERT_TRUE(Push(s, Tensor(v)).ok());
  for (float want : {3.0f, 2.0f, 1.0f}) {
    auto t = Pop(s);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->scalar<float>(), want);
  }
  Status empty = Pop(s).status();
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(empty.message()), HasSubstr("stack 's' is empty"));
}

TEST(StackOpsTest, EachStackV2RunMakesAFreshStack) {
  Tensor a = NewStack(-1), b = NewStack(-1);
  ASSERT_TRUE(Push(a, Tensor(5.0f)).ok());
  EXPECT_FALSE(Pop(b).ok());
  EXPECT_EQ(Pop(a)->scalar<float>(), 5.0f);
}

TEST(StackOpsTest, MaxSizeAndElementType) {
  Tensor s = NewStack(1);
  ASSERT_TRUE(Push(s, Tensor(1.0f)).ok());
  Status full = Push(s, Tensor(2.0f));
  EXPECT_THAT(std::string(full.message()), HasSubstr("overflowed its max_size (1)"));
  Status wrong = RunOpKernel("StackPushV2", {NewStack(-1), Tensor(int32_t{1})}).status();
  EXPECT_EQ(wrong.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wrong.message()), HasSubstr("holds float but the element is int32"));
  Status pop_type = Pop(s, DT_DOUBLE).status();
  EXPECT_THAT(std::string(pop_type.message()), HasSubstr("elem_type is double"));
}

TEST(StackOpsTest, ClosedStacksAndForeignHandles) {
  Tensor s = NewStack(-1);
  ASSERT_TRUE(Push(s, Tensor(1.0f)).ok());
  ASSERT_TRUE(RunOpKernel("StackCloseV2", {s}).ok());
  EXPECT_THAT(std::string(Pop(s).status().message()), HasSubstr("is closed"));
  ResourceHandle h;
  h.name = "v";
  h.type_name = "Var";
  Status foreign = Pop(Tensor(h)).status();
  EXPECT_THAT(std::string(foreign.message()), HasSubstr("not a stack"));
  Status not_handle = Pop(Tensor(1.0f)).status();
  EXPECT_THAT(std::string(not_handle.message()), HasSubstr("does not match type resource"));
}

}  // namespace
}  // namespace dflow
