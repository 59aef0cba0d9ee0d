// TensorArrays in while loops through the C++ API: an array written by every iteration and its
// gradient through the loop, a new array made in each iteration (freed per step), and a closed
// array's error.
#include "api/while_gradients_test_util.h"
#include "dflow/control_flow.h"
#include "dflow/dflow.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

Output TA(const Scope& s, Input size, AttrMap attrs, Output* flow) {
  attrs["dtype"] = DT_DOUBLE;
  Operation op = ops::BuildOp(s, "TensorArrayV3", {size}, attrs);
  *flow = Output(op, 1);
  return Output(op, 0);
}

TEST(TensorArrayLoopTest, WrittenInALoopWithGradients) {
  // out[t] = x * (t + 1) for t < 3; y = sum(stack(out)^2): dy/dx = 2 x (1 + 4 + 9).
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  Output flow;
  Output handle = TA(root, ops::Const(root, 3), {}, &flow);
  V out = WhileLoop(
      root, {ops::Const(root, 0), flow}, [](const Scope& s, const V& v) { return ops::Less(s, v[0], 3); },
      [&](const Scope& s, const V& v) {
        Output scale = ops::Cast(s, v[0] + 1, DT_DOUBLE);
        Operation w = ops::BuildOp(s, "TensorArrayWriteV3", {handle, v[0], ops::Mul(s, x, scale), v[1]});
        return V{v[0] + 1, Output(w, 0)};
      });
  Operation stack = ops::BuildOp(root, "TensorArrayGatherV3", {handle, ops::Const(root, {0, 1, 2}), out[1]},
                                 {{"dtype", DT_DOUBLE}});
  Output y = ops::Sum(root, ops::Mul(root, Output(stack, 0), Output(stack, 0)), {0, 1});
  V g = Gradients(root, {y}, {x});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  for (int run = 0; run < 2; ++run) {  // a new array each step
    auto r = session.Run({{x, Doubles({0.5, -2.0}, TensorShape({2}))}}, {Output(stack, 0), g[0]});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)[0].shape().DebugString(), TensorShape({3, 2}).DebugString());
    EXPECT_DOUBLE_EQ((*r)[0].flat<double>()[4], 1.5);
    EXPECT_DOUBLE_EQ((*r)[1].flat<double>()[0], 2 * 0.5 * 14);
    EXPECT_DOUBLE_EQ((*r)[1].flat<double>()[1], 2 * -2.0 * 14);
  }
}

TEST(TensorArrayLoopTest, NewArrayInEachIteration) {
  // acc += sum(stack(ta)) where ta has i + 1 elements, only the last written with x.
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  V out = WhileLoop(
      root, {ops::Const(root, 0), ops::Const(root, 0.0)},
      [](const Scope& s, const V& v) { return ops::Less(s, v[0], 4); },
      [&](const Scope& s, const V& v) {
        Output flow;
        Output h = TA(s, v[0] + 1, {{"element_shape", PartialTensorShape({})}}, &flow);
        Operation w = ops::BuildOp(s, "TensorArrayWriteV3", {h, v[0], x, flow});
        Operation size = ops::BuildOp(s, "TensorArraySizeV3", {h, Output(w, 0)});
        Operation all = ops::BuildOp(s, "TensorArrayGatherV3", {h, ops::Range(s, 0, Output(size, 0), 1), Output(w, 0)},
                                     {{"dtype", DT_DOUBLE}});
        return V{v[0] + 1, v[1] + ops::Sum(s, Output(all, 0), {0})};
      });
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  auto r = session.Run({{x, Tensor(2.5)}}, {out[1]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ((*r)[0].scalar<double>(), 4 * 2.5);  // the unwritten elements read as zeros
}

TEST(TensorArrayLoopTest, ClosedArrayIsAnError) {
  Scope root = Scope::NewRootScope();
  Output flow;
  Output h = TA(root, ops::Const(root, 2), {}, &flow);
  Operation close = ops::BuildOp(root, "TensorArrayCloseV3", {h});
  Operation w = ops::BuildOp(root.WithControlDependencies({close}), "TensorArrayWriteV3",
                             {h, ops::Const(root, 0), ops::Const(root, 1.0), flow});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  auto r = session.Run({Output(w, 0)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("has already been closed"), absl::string_view::npos) << r.status();
}

}  // namespace
}  // namespace dflow
