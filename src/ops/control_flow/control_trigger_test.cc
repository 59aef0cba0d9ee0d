// ControlTrigger in a session: it runs even when its inputs are dead (TensorFlow's rule), so the
// syncs of while-loop gradients, which join both branches of a cond, do not kill the loop.
#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

TEST(ControlTriggerTest, RunsWhenItsControlInputsAreDead) {
  Scope root = Scope::NewRootScope();
  Operation sw = ops::BuildOp(root, "Switch", {Input(1.0f), Input(false)}, {});
  Output dead = ops::Identity(root, Output(sw, 1));  // the untaken branch
  Output live = ops::Identity(root, Output(sw, 0));
  Operation trigger = ops::BuildOp(root.WithControlDependencies({dead.op(), live.op()}), "ControlTrigger", {}, {});
  Output after_trigger = ops::Identity(root.WithControlDependencies({trigger}), Input(2.0f));
  Output after_dead = ops::Identity(root.WithControlDependencies({dead.op()}), Input(3.0f));
  ASSERT_TRUE(root.status().ok()) << root.status();
  ClientSession session(root);
  auto r = session.Run({after_trigger});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 2.0f);
  // An ordinary node with a dead control input is dead: fetching it is InvalidArgument, as in
  // TensorFlow ("Retval does not have value").
  auto d = session.Run({after_dead});
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << d.status();
}

}  // namespace
}  // namespace dflow
