// The op functions of dflow/state_ops.h build TensorFlow's ops with the attrs given, and report
// bad arguments through the scope.
#include "dflow/state_ops.h"

#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

template <typename T>
T Attr(const Operation& op, const std::string& name) {
  T v{};
  EXPECT_TRUE(GetAttr(op.node()->attrs(), name, &v).ok()) << name;
  return v;
}

TEST(StateOpsApiTest, OpsHaveTensorFlowsNamesAndAttrs) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VarHandleOp(root.WithOpName("v"), DT_FLOAT, PartialTensorShape({2}),
                              {.container = "c", .shared_name = "s"});
  EXPECT_EQ(v.op().type(), "VarHandleOp");
  EXPECT_EQ(Attr<std::string>(v.op(), "container"), "c");
  EXPECT_EQ(Attr<std::string>(v.op(), "shared_name"), "s");
  EXPECT_EQ(Attr<DType>(v.op(), "dtype"), DT_FLOAT);
  EXPECT_EQ(ops::ReadVariableOp(root, v, DT_FLOAT).op().type(), "ReadVariableOp");
  Operation assign = ops::AssignVariableOp(root, v, {1.0f, 2.0f});
  EXPECT_EQ(assign.type(), "AssignVariableOp");
  EXPECT_EQ(Attr<DType>(assign, "dtype"), DT_FLOAT);
  EXPECT_EQ(ops::AssignAddVariableOp(root, v, {1.0f, 2.0f}).type(), "AssignAddVariableOp");
  EXPECT_EQ(ops::AssignSubVariableOp(root, v, {1.0f, 2.0f}).type(), "AssignSubVariableOp");
  EXPECT_EQ(ops::VarIsInitializedOp(root, v).dtype(), DT_BOOL);
  EXPECT_EQ(ops::ResourceGather(root, v, {0}, DT_FLOAT).op().type(), "ResourceGather");

  Output ref = ops::VariableV2(root, PartialTensorShape({3}), DT_INT32);
  Output up = ops::ScatterUpdate(root, ref, {0}, {1});
  EXPECT_EQ(up.op().type(), "ScatterUpdate");
  EXPECT_TRUE(Attr<bool>(up.op(), "use_locking"));
  EXPECT_EQ(up.dtype(), DT_INT32_REF);
  EXPECT_FALSE(Attr<bool>(ops::ScatterAdd(root, ref, {0}, {1}).op(), "use_locking"));
  EXPECT_EQ(ops::ScatterSub(root, ref, {0}, {1}).op().type(), "ScatterSub");
  Output scalar = ops::VariableV2(root, PartialTensorShape({}), DT_INT64);
  Output c = ops::CountUpTo(root, scalar, 10);
  EXPECT_EQ(Attr<int64_t>(c.op(), "limit"), 10);
  EXPECT_EQ(c.dtype(), DT_INT64);

  Output q = ops::FIFOQueue(root, {DT_FLOAT, DT_INT32},
                            {.shapes = {PartialTensorShape({}), PartialTensorShape({2})}, .capacity = 5});
  EXPECT_EQ(q.op().type(), "FIFOQueueV2");
  EXPECT_EQ(Attr<int64_t>(q.op(), "capacity"), 5);
  EXPECT_EQ(Attr<std::vector<DType>>(q.op(), "component_types"), (std::vector<DType>{DT_FLOAT, DT_INT32}));
  Output rq = ops::RandomShuffleQueue(root, {DT_FLOAT}, {.min_after_dequeue = 3, .seed = 4, .seed2 = 5});
  EXPECT_EQ(rq.op().type(), "RandomShuffleQueueV2");
  EXPECT_EQ(Attr<int64_t>(rq.op(), "min_after_dequeue"), 3);
  EXPECT_EQ(Attr<int64_t>(rq.op(), "seed2"), 5);
  Operation enq = ops::QueueEnqueue(root, q, {1.0f, {1, 2}}, 7);
  EXPECT_EQ(enq.type(), "QueueEnqueueV2");
  EXPECT_EQ(Attr<int64_t>(enq, "timeout_ms"), 7);
  EXPECT_EQ(Attr<std::vector<DType>>(enq, "Tcomponents"), (std::vector<DType>{DT_FLOAT, DT_INT32}));
  EXPECT_EQ(ops::QueueEnqueueMany(root, q, {{1.0f}, {{1, 2}}}).type(), "QueueEnqueueManyV2");
  std::vector<Output> deq = ops::QueueDequeue(root, q, {DT_FLOAT, DT_INT32});
  ASSERT_EQ(deq.size(), 2u);
  EXPECT_EQ(deq[1].dtype(), DT_INT32);
  std::vector<Output> many = ops::QueueDequeueMany(root, q, 3, {DT_FLOAT, DT_INT32});
  ASSERT_EQ(many.size(), 2u);
  EXPECT_EQ(many[0].op().type(), "QueueDequeueManyV2");
  EXPECT_TRUE(Attr<bool>(ops::QueueClose(root, q, true), "cancel_pending_enqueues"));
  EXPECT_EQ(ops::QueueSize(root, q).dtype(), DT_INT32);

  Output m = ops::Mutex(root);
  EXPECT_EQ(m.op().type(), "MutexV2");
  Output lock = ops::MutexLock(root, m);
  EXPECT_EQ(lock.dtype(), DT_RESOURCE);
  EXPECT_EQ(ops::ConsumeMutexLock(root, lock).type(), "ConsumeMutexLock");
  EXPECT_TRUE(root.ok()) << root.status();
}

TEST(StateOpsApiTest, BadArgumentsGoToTheScope) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Const(root, 1.0f);
  // A float where a resource handle is expected.
  Output r = ops::ReadVariableOp(root, x, DT_FLOAT);
  EXPECT_FALSE(r.valid());
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  // Later ops build nothing.
  EXPECT_TRUE(ops::QueueDequeue(root, x, {DT_FLOAT}).empty());

  Scope root2 = Scope::NewRootScope();
  Output value = ops::Const(root2, {1.0f});
  ops::ScatterUpdate(root2, value, {0}, {1.0f});  // not a reference
  EXPECT_EQ(root2.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow
