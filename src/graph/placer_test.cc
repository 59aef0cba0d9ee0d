// PlaceGraph across several tasks: the default device, colocation of reference and resource
// users with their variables, conflicting requests, "_class" colocation, soft placement.
#include "graph/placer.h"

#include <mutex>

#include "framework/op_kernel.h"
#include "gmock/gmock.h"
#include "graph/graph_test_fixture.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using namespace graph_testing;  // NOLINT
using ::testing::HasSubstr;

constexpr char kPs[] = "/job:ps/replica:0/task:0/device:CPU:0";
constexpr char kWorker[] = "/job:worker/replica:0/task:0/device:CPU:0";
constexpr char kWorker1[] = "/job:worker/replica:0/task:1/device:CPU:0";

class ColocationTest : public GraphTest {
 protected:
  void SetUp() override {
    GraphTest::SetUp();
    if (HasFatalFailure()) return;
    for (const char* op :
         {"ApplyGradientDescent", "ScatterUpdate", "VarHandleOp", "ReadVariableOp", "AssignVariableOp"}) {
      ASSERT_NE(OpRegistry::Global()->LookUp(op), nullptr) << "op " << op << " is not registered";
    }
  }

  Node* VariableAt(const std::string& name, const std::string& device) {
    NodeSpec s;
    s.name = name;
    s.op = "VariableV2";
    s.attrs["dtype"] = DT_FLOAT;
    s.attrs["shape"] = PartialTensorShape{2};
    s.device = device;
    return Add(std::move(s));
  }
  Node* ConstAt(const std::string& name, const std::string& device, Tensor value) {
    NodeSpec s;
    s.name = name;
    s.op = "Const";
    s.attrs["dtype"] = value.dtype();
    s.attrs["value"] = std::move(value);
    s.device = device;
    return Add(std::move(s));
  }
  Node* OpAt(const std::string& name, const std::string& op, std::vector<NodeOut> inputs, const std::string& device,
             AttrMap attrs = {}) {
    NodeSpec s;
    s.name = name;
    s.op = op;
    s.inputs = std::move(inputs);
    s.attrs = std::move(attrs);
    s.device = device;
    return Add(std::move(s));
  }
  Node* HandleAt(const std::string& name, const std::string& device) {
    NodeSpec s;
    s.name = name;
    s.op = "VarHandleOp";
    s.attrs["dtype"] = DT_FLOAT;
    s.attrs["shape"] = PartialTensorShape{2};
    s.device = device;
    return Add(std::move(s));
  }

  Status Place(bool soft = false) {
    PlacementOptions o;
    o.allow_soft_placement = soft;
    return PlaceGraph(&g_, devices_, o);
  }

  Device worker_{kWorker, "CPU"};
  Device ps_{kPs, "CPU"};
  Device worker1_{kWorker1, "CPU"};
  // The worker first: its device is the default.
  std::vector<Device*> devices_{&worker_, &ps_, &worker1_};
};

TEST_F(ColocationTest, UnrequestedNodesGoToTheFirstDevice) {
  Node* a = ConstAt("a", "", Tensor(1.0f));
  Node* b = ConstAt("b", "/job:ps", Tensor(2.0f));
  Node* c = OpAt("c", "AddV2", {{a, 0}, {b, 0}}, "");
  ASSERT_TRUE(Place().ok());
  EXPECT_EQ(a->assigned_device(), kWorker);
  EXPECT_EQ(b->assigned_device(), kPs);
  EXPECT_EQ(c->assigned_device(), kWorker);

  devices_ = {&ps_, &worker_};
  ASSERT_TRUE(Place().ok());
  EXPECT_EQ(a->assigned_device(), kPs) << "the caller's first device is the default";
}

TEST_F(ColocationTest, ReferenceUsersRunWithTheirVariable) {
  Node* v = VariableAt("v", "/job:ps/task:0");
  Node* init = ConstAt("init", "", MakeTensor<float>({1, 2}, TensorShape{2}));
  Node* assign = OpAt("assign", "Assign", {{v, 0}, {init, 0}}, "");
  Node* add = OpAt("add", "AssignAdd", {{v, 0}, {init, 0}}, "");
  Node* lr = ConstAt("lr", "", Tensor(0.1f));
  Node* sgd = OpAt("sgd", "ApplyGradientDescent", {{v, 0}, {lr, 0}, {init, 0}}, "");
  Node* idx = ConstAt("idx", "", MakeTensor<int32_t>({1}, TensorShape{1}));
  Node* upd = ConstAt("upd", "", MakeTensor<float>({5}, TensorShape{1}));
  Node* scatter = OpAt("scatter", "ScatterUpdate", {{v, 0}, {idx, 0}, {upd, 0}}, "");
  // Chained: AssignAdd on the reference that Assign outputs.
  Node* chained = OpAt("chained", "AssignAdd", {{assign, 0}, {init, 0}}, "");
  // A reader that takes the value (not the reference) stays where it is asked to be.
  Node* read = OpAt("read", "Identity", {{v, 0}}, "/job:worker/task:1");
  ASSERT_TRUE(Place().ok());
  for (Node* n : {v, assign, add, sgd, scatter, chained}) EXPECT_EQ(n->assigned_device(), kPs) << n->name();
  for (Node* n : {init, lr, idx, upd}) EXPECT_EQ(n->assigned_device(), kWorker) << n->name();
  EXPECT_EQ(read->assigned_device(), kWorker1);
}

TEST_F(ColocationTest, AVariableFollowsTheRequestOfItsUpdater) {
  // Only the updater asks for a device: the group's request is the merge of its members'.
  Node* v = VariableAt("v", "");
  Node* init = ConstAt("init", "", MakeTensor<float>({1, 2}, TensorShape{2}));
  Node* assign = OpAt("assign", "Assign", {{v, 0}, {init, 0}}, "/job:ps");
  ASSERT_TRUE(Place().ok());
  EXPECT_EQ(v->assigned_device(), kPs);
  EXPECT_EQ(assign->assigned_device(), kPs);
}

TEST_F(ColocationTest, ResourceUsersRunWithTheirHandle) {
  Node* h = HandleAt("h", "/job:ps/replica:0/task:0/device:CPU:0");
  Node* value = ConstAt("value", "", MakeTensor<float>({1, 2}, TensorShape{2}));
  Node* assign = OpAt("assign", "AssignVariableOp", {{h, 0}, {value, 0}}, "", {{"dtype", DT_FLOAT}});
  Node* read = OpAt("read", "ReadVariableOp", {{h, 0}}, "", {{"dtype", DT_FLOAT}});
  Node* add = OpAt("add", "AssignAddVariableOp", {{h, 0}, {value, 0}}, "", {{"dtype", DT_FLOAT}});
  Node* use = OpAt("use", "Identity", {{read, 0}}, "");
  ASSERT_TRUE(Place().ok());
  for (Node* n : {h, assign, read, add}) EXPECT_EQ(n->assigned_device(), kPs) << n->name();
  EXPECT_EQ(value->assigned_device(), kWorker);
  EXPECT_EQ(use->assigned_device(), kWorker);
}

TEST_F(ColocationTest, ConflictingRequestIsAnErrorNamingBothNodesAndDevices) {
  Node* v = VariableAt("v", "/job:ps/task:0");
  Node* init = ConstAt("init", "", MakeTensor<float>({1, 2}, TensorShape{2}));
  Node* assign = OpAt("assign", "Assign", {{v, 0}, {init, 0}}, "/job:worker/task:1");
  Status s = Place();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("'v'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("'assign'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("/job:ps/task:0"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("/job:worker/task:1"));

  // Soft placement: the variable's device wins.
  ASSERT_TRUE(Place(/*soft=*/true).ok());
  EXPECT_EQ(v->assigned_device(), kPs);
  EXPECT_EQ(assign->assigned_device(), kPs);
}

TEST_F(ColocationTest, ConflictingResourceRequest) {
  Node* h = HandleAt("h", "/job:ps");
  Node* read = OpAt("read", "ReadVariableOp", {{h, 0}}, "/job:worker", {{"dtype", DT_FLOAT}});
  Status s = Place();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("'read'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("'h'"));
  ASSERT_TRUE(Place(/*soft=*/true).ok());
  EXPECT_EQ(read->assigned_device(), kPs);
}

TEST_F(ColocationTest, CompatiblePartialRequestsMerge) {
  Node* v = VariableAt("v", "/job:ps");
  Node* init = ConstAt("init", "", MakeTensor<float>({1, 2}, TensorShape{2}));
  Node* assign = OpAt("assign", "Assign", {{v, 0}, {init, 0}}, "/cpu:0");
  ASSERT_TRUE(Place().ok());
  EXPECT_EQ(assign->assigned_device(), kPs);
}

TEST_F(ColocationTest, ClassAttrColocates) {
  Node* a = ConstAt("a", "/job:worker/task:1", Tensor(1.0f));
  NodeSpec s = Unary("b", "Identity", a);
  s.attrs["_class"] = std::vector<std::string>{"loc:@a", "loc:@pruned_away", "not_a_location"};
  Node* b = Add(std::move(s));
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(Place().ok());
  EXPECT_EQ(b->assigned_device(), kWorker1);
}

TEST_F(ColocationTest, SoftPlacementKeepsTheRequestedTask) {
  // No GPU anywhere: the request's task is kept, its device type dropped.
  Node* a = ConstAt("a", "/job:worker/task:1/device:GPU:0", Tensor(1.0f));
  Node* b = ConstAt("b", "/job:nowhere/device:GPU:0", Tensor(1.0f));
  ASSERT_TRUE(Place(/*soft=*/true).ok());
  EXPECT_EQ(a->assigned_device(), kWorker1);
  EXPECT_EQ(b->assigned_device(), kWorker) << "nothing of the request exists: the first device";
}

TEST_F(ColocationTest, UnknownDeviceMessageIsUnchanged) {
  Node* v = VariableAt("v", "/job:nowhere/task:0");
  Node* init = ConstAt("init", "", MakeTensor<float>({1, 2}, TensorShape{2}));
  OpAt("assign", "Assign", {{v, 0}, {init, 0}}, "");
  Status s = Place();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("Cannot assign a device for node 'v'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("'/job:nowhere/task:0' matches none of the available devices"));
  EXPECT_THAT(std::string(s.message()), HasSubstr(kPs));
}

// Takes a reference and has a kernel only on FAKE devices.
class FakeOnlyOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext*) override {}
};

TEST_F(ColocationTest, AGroupNeedsADeviceWithKernelsForAllItsMembers) {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterOp(OpDefBuilder("PlacerTestFakeOnly").Input("ref: Ref(float)"));
    RegisterKernel<FakeOnlyOp>(KernelBuilder("PlacerTestFakeOnly").Device("FAKE"));
  });
  Device fake("/job:ps/replica:0/task:0/device:FAKE:0", "FAKE");
  devices_ = {&worker_, &ps_, &fake};
  Node* v = VariableAt("v", "/job:ps");
  Node* f = OpAt("f", "PlacerTestFakeOnly", {{v, 0}}, "");
  ASSERT_NE(f, nullptr);
  // The variable has kernels on the CPUs, its user only on FAKE: no device can run both.
  Status s = Place();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("'v'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("colocated"));
  s = Place(/*soft=*/true);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("no device has kernels for all of them"));
}

}  // namespace
}  // namespace dflow
