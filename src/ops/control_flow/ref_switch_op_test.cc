// RefSwitch: the reference goes to the output pred picks (the other is dead), also for a variable
// not yet initialized; a bad pred is InvalidArgument.
#include <memory>

#include "framework/device.h"
#include "framework/op_kernel.h"
#include "framework/variable.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

struct RefSwitchRun {
  Status status;
  std::vector<TensorValue> outputs;
};

RefSwitchRun RunRefSwitch(const std::shared_ptr<Var>& var, const Tensor& pred) {
  RegisterAllOps();
  Graph graph;
  NodeSpec v{"v", "VariableV2", {}, {}, {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape()}}, ""};
  NodeSpec p{"p", "Placeholder", {}, {}, {{"dtype", pred.dtype()}}, ""};
  Node* vn = graph.AddNode(std::move(v)).value();
  Node* pn = graph.AddNode(std::move(p)).value();
  NodeSpec s{"s", "RefSwitch", {{vn, 0}, {pn, 0}}, {}, {}, ""};
  Node* sn = graph.AddNode(std::move(s)).value();
  static Device* device = new Device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU");
  auto kernel = KernelRegistry::Global()->CreateKernel(device, "CPU", sn->props_ptr()).value();
  std::vector<TensorValue> in(2);
  in[0].ref = var;
  in[1].tensor = pred;
  StepParams step;
  step.device = device;
  OpKernelContext ctx(&step, kernel.get(), in.data(), 2);
  kernel->Compute(&ctx);
  return {ctx.status(), std::vector<TensorValue>(ctx.outputs().begin(), ctx.outputs().end())};
}

TEST(RefSwitchTest, ForwardsTheReference) {
  auto var = std::make_shared<Var>("v", DT_FLOAT, PartialTensorShape());
  *var->tensor() = Tensor(1.5f);
  for (bool pred : {false, true}) {
    RefSwitchRun r = RunRefSwitch(var, Tensor(pred));
    ASSERT_TRUE(r.status.ok()) << r.status;
    const int taken = pred ? 1 : 0;
    EXPECT_EQ(r.outputs[taken].ref, var);
    EXPECT_FALSE(r.outputs[taken].is_dead);
    EXPECT_TRUE(r.outputs[1 - taken].is_dead);
  }
}

TEST(RefSwitchTest, UninitializedVariableAndBadPred) {
  auto var = std::make_shared<Var>("v", DT_FLOAT, PartialTensorShape());
  RefSwitchRun r = RunRefSwitch(var, Tensor(false));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.outputs[0].ref, var);
  r = RunRefSwitch(var, Tensor::FromValues<bool>({true, false}, TensorShape{2}).value());
  EXPECT_TRUE(absl::IsInvalidArgument(r.status)) << r.status;
}

}  // namespace
}  // namespace dflow
