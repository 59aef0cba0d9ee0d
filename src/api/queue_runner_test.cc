// QueueRunner and Coordinator: threads that fill a queue, stop when asked (also while blocked),
// end quietly on a closed queue, report errors to the coordinator, and run the close op. Every
// wait is bounded.
#include <chrono>
#include <thread>

#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

struct Queue {
  Scope root = Scope::NewRootScope();
  Output q, size, is_closed;
  Operation enqueue, close, close_cancel;
  std::vector<Output> dequeue;
  explicit Queue(int64_t capacity) {
    q = ops::FIFOQueue(root.WithOpName("q"), {DT_FLOAT}, {.shapes = {PartialTensorShape({})}, .capacity = capacity});
    enqueue = ops::QueueEnqueue(root, q, {ops::Const(root, 1.0f)});
    close = ops::QueueClose(root, q);
    close_cancel = ops::QueueClose(root, q, /*cancel_pending_enqueues=*/true);
    dequeue = ops::QueueDequeue(root, q, {DT_FLOAT});
    size = ops::QueueSize(root, q);
  }
  int32_t Size(ClientSession& s) const {
    auto r = s.Run({size});
    return r.ok() ? (*r)[0].scalar<int32_t>() : -1;
  }
};

// Polls `cond` for up to 20 s.
template <typename F>
bool Eventually(F cond) {
  for (int i = 0; i < 2000; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(QueueRunnerTest, FillsAQueueAndStopsWhileBlockedOnAFullQueue) {
  Queue q(5);
  ClientSession s(q.root);
  auto runner = std::make_shared<train::QueueRunner>(std::vector<Operation>{q.enqueue, q.enqueue});
  ASSERT_TRUE(runner->Start(&s).ok());
  ASSERT_TRUE(Eventually([&] { return q.Size(s) == 5; }));
  EXPECT_TRUE(runner->IsRunning());  // both threads wait for room
  runner->RequestStop();
  EXPECT_TRUE(runner->Join().ok());
  EXPECT_FALSE(runner->IsRunning());
  EXPECT_EQ(runner->runs(), 5);
  EXPECT_EQ(q.Size(s), 5);  // the cancelled enqueues added nothing
}

TEST(QueueRunnerTest, AClosedQueueEndsTheThreadsQuietlyAndTheCloseOpRuns) {
  Queue q(2);
  ClientSession s(q.root);
  Output other = ops::FIFOQueue(q.root.WithOpName("other"), {DT_FLOAT}, {.shapes = {PartialTensorShape({})}});
  Operation close_other = ops::QueueClose(q.root, other);
  Output other_closed(ops::BuildOp(q.root, "QueueIsClosedV2", {other}), 0);
  train::QueueRunner runner({q.enqueue}, /*close_op=*/close_other);
  ASSERT_TRUE(runner.Start(&s).ok());
  ASSERT_TRUE(Eventually([&] { return q.Size(s) == 2; }));
  ASSERT_TRUE(s.Run({q.close_cancel}).ok());  // the waiting enqueue fails: "closed"
  EXPECT_TRUE(runner.Join().ok());
  EXPECT_TRUE(runner.GetStatus().ok());
  auto closed = s.Run({other_closed});
  ASSERT_TRUE(closed.ok());
  EXPECT_TRUE((*closed)[0].scalar<bool>());  // the close op ran after the last thread
}

TEST(QueueRunnerTest, AnErrorIsKeptAndStopsTheCoordinator) {
  Queue q(-1);
  Output x = ops::Placeholder(q.root.WithOpName("x"), DT_FLOAT);
  Operation needs_feed = ops::QueueEnqueue(q.root, q.q, {x});
  ClientSession s(q.root);
  train::Coordinator coord;
  auto failing = std::make_shared<train::QueueRunner>(std::vector<Operation>{needs_feed});
  auto filling = std::make_shared<train::QueueRunner>(std::vector<Operation>{q.enqueue});
  ASSERT_TRUE(filling->Start(&s, &coord).ok());
  ASSERT_TRUE(failing->Start(&s, &coord).ok());
  EXPECT_TRUE(coord.WaitForStop(20000));
  Status joined = coord.Join();
  EXPECT_EQ(joined.code(), absl::StatusCode::kInvalidArgument) << joined;
  EXPECT_THAT(joined.message(), HasSubstr("You must feed a value for placeholder tensor 'x'"));
  EXPECT_EQ(failing->GetStatus().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(filling->GetStatus().ok());  // stopped by the coordinator, no error of its own
  EXPECT_TRUE(coord.AllRunnersStopped());
}

TEST(QueueRunnerTest, OutOfRangeIsACleanStopForTheCoordinator) {
  Queue q(-1);
  ClientSession s(q.root);
  ASSERT_TRUE(s.Run({q.close}).ok());
  Operation drain = ops::Identity(q.root, q.dequeue[0]).op();  // OutOfRange: closed and empty
  train::Coordinator coord;
  auto runner = std::make_shared<train::QueueRunner>(std::vector<Operation>{drain}, Operation(), Operation(),
                                                     std::vector<absl::StatusCode>{absl::StatusCode::kCancelled});
  ASSERT_TRUE(runner->Start(&s, &coord).ok());
  EXPECT_TRUE(coord.WaitForStop(20000));  // reported, so stop was requested...
  EXPECT_TRUE(coord.Join().ok());         // ...but OutOfRange is not an error
  EXPECT_EQ(runner->GetStatus().code(), absl::StatusCode::kOutOfRange);
}

TEST(QueueRunnerTest, StartChecksItsArguments) {
  Queue q(1);
  ClientSession s(q.root);
  train::QueueRunner none({});
  EXPECT_EQ(none.Start(&s).code(), absl::StatusCode::kInvalidArgument);
  train::QueueRunner invalid({Operation()});
  EXPECT_THAT(invalid.Start(&s).message(), HasSubstr("enqueue op #0 is invalid"));
  train::QueueRunner unowned({q.enqueue});
  train::Coordinator coord;
  EXPECT_THAT(unowned.Start(&s, &coord).message(), HasSubstr("owned by a std::shared_ptr"));
  train::QueueRunner twice({q.enqueue});
  ASSERT_TRUE(twice.Start(&s).ok());
  EXPECT_EQ(twice.Start(&s).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(Eventually([&] { return q.Size(s) == 1; }));
  twice.RequestStop();
  EXPECT_TRUE(twice.Join().ok());
  // After Join it may start again.
  RunOptions o;
  o.timeout_in_ms = 20000;
  ASSERT_TRUE(s.Run({}, q.dequeue, {}, nullptr, o).ok());
  EXPECT_TRUE(twice.Start(&s).ok());
  ASSERT_TRUE(Eventually([&] { return q.Size(s) == 1; }));
}

TEST(CoordinatorTest, StopReachesRunnersRegisteredLater) {
  train::Coordinator coord;
  EXPECT_FALSE(coord.WaitForStop(10));
  coord.RequestStop();
  EXPECT_TRUE(coord.ShouldStop());
  EXPECT_TRUE(coord.WaitForStop(0));
  Queue q(1);
  ClientSession s(q.root);
  auto runner = std::make_shared<train::QueueRunner>(std::vector<Operation>{q.enqueue});
  ASSERT_TRUE(runner->Start(&s, &coord).ok());  // asked to stop at once
  EXPECT_TRUE(coord.Join().ok());
  EXPECT_FALSE(runner->IsRunning());
  coord.ReportStatus(errors::Internal("boom"));
  EXPECT_EQ(coord.GetStatus().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace dflow
