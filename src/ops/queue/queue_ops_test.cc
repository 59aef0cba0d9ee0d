// FIFOQueueV2 and the queue ops without concurrency: order and values, batches, sizes, the
// validation of components, closing, sharing by name, and bad attrs and inputs.
#include "dflow/dflow.h"
#include "tensor/resource_handle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

// A queue of (float scalar, int32 [2]) elements fed through placeholders.
struct PairQueue {
  Scope root = Scope::NewRootScope();
  Output q, a, b, n;
  Operation enqueue, enqueue_many, close, close_cancel;
  std::vector<Output> dequeue, dequeue_many;
  Output size;
  explicit PairQueue(int64_t capacity = -1) {
    q = ops::FIFOQueue(root.WithOpName("q"), {DT_FLOAT, DT_INT32},
                       {.shapes = {PartialTensorShape({}), PartialTensorShape({2})}, .capacity = capacity});
    a = ops::Placeholder(root.WithOpName("a"), DT_FLOAT);
    b = ops::Placeholder(root.WithOpName("b"), DT_INT32);
    n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
    enqueue = ops::QueueEnqueue(root, q, {a, b});
    enqueue_many = ops::QueueEnqueueMany(root, q, {a, b});
    dequeue = ops::QueueDequeue(root, q, {DT_FLOAT, DT_INT32});
    dequeue_many = ops::QueueDequeueMany(root, q, n, {DT_FLOAT, DT_INT32});
    close = ops::QueueClose(root, q);
    close_cancel = ops::QueueClose(root, q, /*cancel_pending_enqueues=*/true);
    size = ops::QueueSize(root, q);
  }
};

Tensor I32(std::vector<int32_t> v, TensorShape s) { return Tensor::FromValues<int32_t>(v, s).value(); }
Tensor F32(std::vector<float> v, TensorShape s) { return Tensor::FromValues<float>(v, s).value(); }

int32_t SizeOf(ClientSession& s, const PairQueue& p) {
  auto r = s.Run({p.size});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? (*r)[0].scalar<int32_t>() : -1;
}

TEST(FIFOQueueTest, ElementsLeaveInArrivalOrder) {
  PairQueue p;
  ASSERT_TRUE(p.root.ok()) << p.root.status();
  ClientSession s(p.root);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(s.Run({{p.a, 1.5f * i}, {p.b, {i, -i}}}, {}, {p.enqueue}).ok());
  }
  EXPECT_EQ(SizeOf(s, p), 3);
  for (int i = 0; i < 3; ++i) {
    auto r = s.Run(p.dequeue);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)[0].scalar<float>(), 1.5f * i);
    EXPECT_EQ((*r)[1].ToString(), absl::StrCat("[", i, " ", -i, "]"));
  }
  EXPECT_EQ(SizeOf(s, p), 0);
}

TEST(FIFOQueueTest, EnqueueManyAndDequeueManyBatchAlongDimensionZero) {
  PairQueue p;
  ClientSession s(p.root);
  ASSERT_TRUE(s.Run({{p.a, F32({1, 2, 3}, {3})}, {p.b, I32({1, 2, 3, 4, 5, 6}, {3, 2})}}, {}, {p.enqueue_many}).ok());
  ASSERT_TRUE(s.Run({{p.a, 4.0f}, {p.b, {7, 8}}}, {}, {p.enqueue}).ok());
  EXPECT_EQ(SizeOf(s, p), 4);
  auto r = s.Run({{p.n, 3}}, p.dequeue_many);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[1 2 3]");
  EXPECT_EQ((*r)[1].ToString(), "[[1 2] [3 4] [5 6]]");
  auto one = s.Run(p.dequeue);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)[0].scalar<float>(), 4.0f);
  EXPECT_EQ((*one)[1].ToString(), "[7 8]");
}

TEST(FIFOQueueTest, DequeueManyOfZeroReturnsEmptyBatchesAtOnce) {
  PairQueue p;
  ClientSession s(p.root);
  auto r = s.Run({{p.n, 0}}, p.dequeue_many);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].shape(), (TensorShape{0}));
  EXPECT_EQ((*r)[1].shape(), (TensorShape{0, 2}));
}

TEST(FIFOQueueTest, EnqueueManyOfAnEmptyBatchAddsNothing) {
  PairQueue p;
  ClientSession s(p.root);
  ASSERT_TRUE(s.Run({{p.a, Tensor(DT_FLOAT, {0})}, {p.b, Tensor(DT_INT32, {0, 2})}}, {}, {p.enqueue_many}).ok());
  EXPECT_EQ(SizeOf(s, p), 0);
}

TEST(FIFOQueueTest, ComponentsAreValidatedAndNamed) {
  PairQueue p;
  ClientSession s(p.root);
  struct Case {
    Tensor a, b;
    Operation op;
    const char* want;
  };
  std::vector<Case> cases = {
      {Tensor(1.0f), I32({1, 2, 3}, {3}), p.enqueue, "shape mismatch in component 1"},
      {F32({1, 2}, {2}), I32({1, 2}, {2}), p.enqueue, "shape mismatch in component 0"},
      {Tensor(1.0f), I32({1, 2}, {2}), p.enqueue_many, "component 0 must be at least a vector"},
      {F32({1, 2}, {2}), I32({1, 2}, {1, 2}), p.enqueue_many, "component 1 has 1 elements"},
      {F32({1}, {1}), I32({1, 2, 3}, {1, 3}), p.enqueue_many, "shape mismatch in component 1"},
  };
  for (const Case& c : cases) {
    auto r = s.Run({{p.a, c.a}, {p.b, c.b}}, {}, {c.op});
    ASSERT_FALSE(r.ok()) << c.want;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    EXPECT_THAT(r.status().message(), HasSubstr(c.want));
  }
  EXPECT_EQ(SizeOf(s, p), 0);

  // Wrong count and dtype of components, wrong component_types on a dequeue.
  Operation three = ops::QueueEnqueue(p.root, p.q, {1.0f, {1, 2}, 3});
  Operation swapped = ops::QueueEnqueue(p.root, p.q, {{1, 2}, 1.0f});
  std::vector<Output> wrong = ops::QueueDequeue(p.root, p.q, {DT_INT32});
  ASSERT_TRUE(p.root.ok());
  auto r = s.Run({}, {}, {three});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("has 2 components, but 3 were given"));
  r = s.Run({}, {}, {swapped});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("type mismatch in component 0"));
  r = s.Run(wrong);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("component types"));
}

TEST(FIFOQueueTest, DequeueManyNeedsShapesAndANonNegativeCount) {
  PairQueue p;
  ClientSession s(p.root);
  auto r = s.Run({{p.n, -1}}, p.dequeue_many);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("-1"));

  Scope root = Scope::NewRootScope();
  Output q = ops::FIFOQueue(root, {DT_FLOAT});
  Operation enq = ops::QueueEnqueue(root, q, {1.0f});
  std::vector<Output> many = ops::QueueDequeueMany(root, q, 1, {DT_FLOAT});
  std::vector<Output> one = ops::QueueDequeue(root, q, {DT_FLOAT});
  ClientSession s2(root);
  ASSERT_TRUE(s2.Run({enq}).ok());
  r = s2.Run(many);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("shapes"));
  // Without shapes, elements of any shape are fine one at a time.
  r = s2.Run(one);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 1.0f);
}

TEST(FIFOQueueTest, StringComponents) {
  Scope root = Scope::NewRootScope();
  Output q = ops::FIFOQueue(root, {DT_STRING}, {.shapes = {PartialTensorShape({})}});
  Operation enq = ops::QueueEnqueueMany(root, q, {ops::Const(root, {"alpha", "beta", "gamma"})});
  std::vector<Output> deq = ops::QueueDequeueMany(root, q, 2, {DT_STRING});
  ClientSession s(root);
  ASSERT_TRUE(s.Run({enq}).ok());
  auto r = s.Run(deq);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].flat<std::string>()[0], "alpha");
  EXPECT_EQ((*r)[0].flat<std::string>()[1], "beta");
}

TEST(FIFOQueueTest, EnqueueAfterCloseIsCancelled) {
  PairQueue p;
  ClientSession s(p.root);
  ASSERT_TRUE(s.Run({p.close}).ok());
  auto r = s.Run({{p.a, 1.0f}, {p.b, {1, 2}}}, {}, {p.enqueue});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(r.status().message(), HasSubstr("FIFOQueue 'q' is closed."));
}

TEST(FIFOQueueTest, AClosedQueueIsDrainedThenOutOfRange) {
  PairQueue p;
  ClientSession s(p.root);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(s.Run({{p.a, 1.0f * i}, {p.b, {i, i}}}, {}, {p.enqueue}).ok());
  ASSERT_TRUE(s.Run({p.close}).ok());
  // DequeueMany of more than is left fails and leaves the elements.
  auto r = s.Run({{p.n, 5}}, p.dequeue_many);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(r.status().message(),
              HasSubstr("FIFOQueue 'q' is closed and has insufficient elements (requested 5, current size 3)"));
  EXPECT_EQ(SizeOf(s, p), 3);
  r = s.Run({{p.n, 2}}, p.dequeue_many);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[0 1]");
  r = s.Run(p.dequeue);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].scalar<float>(), 2.0f);
  r = s.Run(p.dequeue);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(r.status().message(), HasSubstr("is closed and has insufficient elements (requested 1, current size 0)"));
}

TEST(FIFOQueueTest, ClosingTwice) {
  PairQueue p;
  ClientSession s(p.root);
  ASSERT_TRUE(s.Run({p.close}).ok());
  Status again = s.Run({p.close});
  EXPECT_EQ(again.code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(again.message(), HasSubstr("is already closed"));
  EXPECT_TRUE(s.Run({p.close_cancel}).ok());  // closing with cancel_pending_enqueues always succeeds
}

TEST(FIFOQueueTest, QueuesAreSharedByNameAndAttrsMustAgree) {
  Scope root = Scope::NewRootScope();
  Output q1 = ops::FIFOQueue(root.WithOpName("q1"), {DT_FLOAT}, {.shared_name = "common"});
  Output q2 = ops::FIFOQueue(root.WithOpName("q2"), {DT_FLOAT}, {.shared_name = "common"});
  Output other_types = ops::FIFOQueue(root.WithOpName("q3"), {DT_INT32}, {.shared_name = "common"});
  Output other_capacity = ops::FIFOQueue(root.WithOpName("q4"), {DT_FLOAT}, {.capacity = 3, .shared_name = "common"});
  Output other_kind = ops::RandomShuffleQueue(root.WithOpName("q5"), {DT_FLOAT}, {.shared_name = "common"});
  Operation enq = ops::QueueEnqueue(root, q1, {7.0f});
  std::vector<Output> deq = ops::QueueDequeue(root, q2, {DT_FLOAT});
  ClientSession s(root);
  ASSERT_TRUE(s.Run({enq}).ok());
  auto r = s.Run(deq);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 7.0f);
  for (Output bad : {other_types, other_capacity, other_kind}) {
    auto b = s.Run({bad});
    ASSERT_FALSE(b.ok()) << bad.name();
    EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(b.status().message(), HasSubstr("Shared queue 'common'"));
  }
}

TEST(FIFOQueueTest, BadAttrsAreInvalidArgument) {
  Scope root = Scope::NewRootScope();
  Output two_shapes = ops::FIFOQueue(root, {DT_FLOAT}, {.shapes = {PartialTensorShape({}), PartialTensorShape({})}});
  Output partial = ops::FIFOQueue(root, {DT_FLOAT}, {.shapes = {PartialTensorShape({-1, 2})}});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession s(root);
  auto r = s.Run({two_shapes});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("shapes has 2 entries"));
  r = s.Run({partial});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("fully defined"));
  Scope root2 = Scope::NewRootScope();
  ops::FIFOQueue(root2, {});  // component_types needs at least one type
  EXPECT_EQ(root2.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(FIFOQueueTest, AHandleToAMissingQueueIsNotFound) {
  Scope root = Scope::NewRootScope();
  Output h = ops::Placeholder(root, DT_RESOURCE);
  Output size = ops::QueueSize(root, h);
  ClientSession s(root);
  ResourceHandle handle;
  handle.name = "no_such_queue";
  auto r = s.Run({{h, Tensor(handle)}}, {size});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("no_such_queue"));
}

TEST(FIFOQueueTest, CapacityZeroNeverAcceptsAnElement) {
  Scope root = Scope::NewRootScope();
  Output q = ops::FIFOQueue(root, {DT_FLOAT}, {.capacity = 0});
  Operation enq = ops::QueueEnqueue(root, q, {1.0f}, /*timeout_ms=*/20);
  ClientSession s(root);
  Status st = s.Run({enq});
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
}

}  // namespace
}  // namespace dflow
