// Blocking queue operations across threads and sessions: waiting dequeues and enqueues, batches
// larger than the capacity, timeout_ms, step deadlines, Session::Close, closing while others
// wait, and what a cancelled wait leaves behind. Every wait in these tests is bounded.
#include <algorithm>
#include <chrono>
#include <future>
#include <thread>

#include "base/status.h"
#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// A queue of float scalars with its ops.
struct FloatQueue {
  Scope root = Scope::NewRootScope();
  Output q, x, n, size;
  Operation enqueue, enqueue_many, close, close_cancel;
  std::vector<Output> dequeue, dequeue_many, dequeue_timeout;
  explicit FloatQueue(int64_t capacity = -1, const std::string& shared_name = "") {
    q = ops::FIFOQueue(root.WithOpName("q"), {DT_FLOAT},
                       {.shapes = {PartialTensorShape({})}, .capacity = capacity, .shared_name = shared_name});
    x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
    n = ops::Placeholder(root.WithOpName("n"), DT_INT32);
    enqueue = ops::QueueEnqueue(root, q, {x});
    enqueue_many = ops::QueueEnqueueMany(root, q, {x});
    dequeue = ops::QueueDequeue(root, q, {DT_FLOAT});
    dequeue_many = ops::QueueDequeueMany(root, q, n, {DT_FLOAT});
    dequeue_timeout = ops::QueueDequeue(root, q, {DT_FLOAT}, /*timeout_ms=*/50);
    close = ops::QueueClose(root, q);
    close_cancel = ops::QueueClose(root, q, true);
    size = ops::QueueSize(root, q);
  }
  int32_t Size(ClientSession& s) const {
    auto r = s.Run({size});
    return r.ok() ? (*r)[0].scalar<int32_t>() : -1;
  }
  Status Enqueue(ClientSession& s, float v) const { return s.Run({{x, v}}, {}, {enqueue}).status(); }
};

template <typename T>
bool StillWaiting(std::future<T>& f) {
  return f.wait_for(100ms) == std::future_status::timeout;
}
template <typename T>
bool Finishes(std::future<T>& f) {
  return f.wait_for(20s) == std::future_status::ready;
}

TEST(QueueBlockingTest, ADequeueWaitsForAnotherThreadsEnqueue) {
  FloatQueue fq;
  ClientSession s(fq.root);
  auto deq = std::async(std::launch::async, [&] { return s.Run(fq.dequeue); });
  ASSERT_TRUE(StillWaiting(deq));
  ASSERT_TRUE(fq.Enqueue(s, 42.0f).ok());
  ASSERT_TRUE(Finishes(deq));
  auto r = deq.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 42.0f);
  EXPECT_EQ(fq.Size(s), 0);
}

TEST(QueueBlockingTest, AnEnqueueWaitsWhileTheQueueIsFull) {
  FloatQueue fq(/*capacity=*/1);
  ClientSession s(fq.root);
  ASSERT_TRUE(fq.Enqueue(s, 1.0f).ok());
  auto enq = std::async(std::launch::async, [&] { return fq.Enqueue(s, 2.0f); });
  ASSERT_TRUE(StillWaiting(enq));
  EXPECT_EQ(fq.Size(s), 1);
  auto first = s.Run(fq.dequeue);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)[0].scalar<float>(), 1.0f);
  ASSERT_TRUE(Finishes(enq));
  EXPECT_TRUE(enq.get().ok());
  auto second = s.Run(fq.dequeue);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)[0].scalar<float>(), 2.0f);
}

TEST(QueueBlockingTest, BatchesLargerThanTheCapacityFlowThrough) {
  FloatQueue fq(/*capacity=*/2);
  ClientSession s(fq.root);
  // EnqueueMany of 5 into a queue of 2 and DequeueMany of 5 must both progress element-wise.
  auto deq = std::async(std::launch::async, [&] { return s.Run({{fq.n, 5}}, fq.dequeue_many); });
  ASSERT_TRUE(StillWaiting(deq));
  Tensor batch = Tensor::FromValues<float>({1, 2, 3, 4, 5}, {5}).value();
  auto enq = std::async(std::launch::async, [&] { return s.Run({{fq.x, batch}}, {}, {fq.enqueue_many}).status(); });
  ASSERT_TRUE(Finishes(deq));
  ASSERT_TRUE(Finishes(enq));
  EXPECT_TRUE(enq.get().ok());
  auto r = deq.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[1 2 3 4 5]");
}

TEST(QueueBlockingTest, TimeoutMsEndsAWaitWithDeadlineExceeded) {
  FloatQueue fq(/*capacity=*/1);
  ClientSession s(fq.root);
  auto start = std::chrono::steady_clock::now();
  auto r = s.Run(fq.dequeue_timeout);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(r.status().message(), HasSubstr("timed out after 50 ms"));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 45ms);
  // The abandoned dequeue took nothing: the next element stays in the queue.
  ASSERT_TRUE(fq.Enqueue(s, 1.0f).ok());
  EXPECT_EQ(fq.Size(s), 1);
  // A full queue: an enqueue with a timeout fails the same way and adds nothing.
  Operation enq_timeout = ops::QueueEnqueue(fq.root, fq.q, {5.0f}, /*timeout_ms=*/30);
  Status st = s.Run({enq_timeout});
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  EXPECT_EQ(fq.Size(s), 1);
  auto one = s.Run(fq.dequeue);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)[0].scalar<float>(), 1.0f);
}

TEST(QueueBlockingTest, ARunDeadlineUnblocksADequeue) {
  FloatQueue fq;
  ClientSession s(fq.root);
  RunOptions opts;
  opts.timeout_in_ms = 80;
  auto r = s.Run({}, fq.dequeue, {}, nullptr, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  ASSERT_TRUE(fq.Enqueue(s, 3.0f).ok());
  EXPECT_EQ(fq.Size(s), 1);  // the cancelled dequeue is gone
  auto one = s.Run(fq.dequeue);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)[0].scalar<float>(), 3.0f);
}

TEST(QueueBlockingTest, SessionCloseCancelsWaitingOperations) {
  FloatQueue fq(/*capacity=*/1);
  ClientSession waiter(fq.root), other(fq.root);
  auto deq = std::async(std::launch::async, [&] { return waiter.Run(fq.dequeue).status(); });
  ASSERT_TRUE(StillWaiting(deq));
  ASSERT_TRUE(waiter.session()->Close().ok());
  ASSERT_TRUE(Finishes(deq));
  Status st = deq.get();
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled) << st;
  // The queue, shared by the graph's sessions, still works without the cancelled waiter.
  ASSERT_TRUE(fq.Enqueue(other, 8.0f).ok());
  EXPECT_EQ(fq.Size(other), 1);

  // The same for an enqueue that waits for room.
  ClientSession enqueuer(fq.root);
  auto enq = std::async(std::launch::async, [&] { return fq.Enqueue(enqueuer, 9.0f); });
  ASSERT_TRUE(StillWaiting(enq));
  ASSERT_TRUE(enqueuer.session()->Close().ok());
  ASSERT_TRUE(Finishes(enq));
  EXPECT_EQ(enq.get().code(), absl::StatusCode::kCancelled);
  auto r = other.Run(fq.dequeue);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].scalar<float>(), 8.0f);
  EXPECT_EQ(fq.Size(other), 0);
}

TEST(QueueBlockingTest, AQueueIsSharedByTwoSessionsOfTheGraph) {
  FloatQueue fq;
  ClientSession producer(fq.root), consumer(fq.root);
  auto deq = std::async(std::launch::async, [&] { return consumer.Run({{fq.n, 3}}, fq.dequeue_many); });
  ASSERT_TRUE(StillWaiting(deq));
  for (float v : {1.0f, 2.0f, 3.0f}) ASSERT_TRUE(fq.Enqueue(producer, v).ok());
  ASSERT_TRUE(Finishes(deq));
  auto r = deq.get();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[1 2 3]");
}

TEST(QueueBlockingTest, ClosingWakesWaitingDequeuesWithOutOfRange) {
  FloatQueue fq;
  ClientSession s(fq.root), closer(fq.root);
  ASSERT_TRUE(fq.Enqueue(s, 1.0f).ok());
  // A DequeueMany of 3 takes the one element and waits for more; closing fails it and puts the
  // element back.
  auto many = std::async(std::launch::async, [&] { return s.Run({{fq.n, 3}}, fq.dequeue_many); });
  ASSERT_TRUE(StillWaiting(many));
  EXPECT_EQ(fq.Size(closer), 0);  // the waiting batch holds it
  ASSERT_TRUE(closer.Run({fq.close}).ok());
  ASSERT_TRUE(Finishes(many));
  auto r = many.get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(r.status().message(), HasSubstr("requested 2, current size 0"));
  EXPECT_EQ(fq.Size(closer), 1);
  auto one = s.Run(fq.dequeue);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)[0].scalar<float>(), 1.0f);
}

TEST(QueueBlockingTest, ACancelledDequeueManyPutsItsElementsBackInOrder) {
  FloatQueue fq;
  ClientSession s(fq.root);
  for (float v : {1.0f, 2.0f}) ASSERT_TRUE(fq.Enqueue(s, v).ok());
  RunOptions opts;
  opts.timeout_in_ms = 80;
  auto r = s.Run({{fq.n, 3}}, fq.dequeue_many, {}, nullptr, opts);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_EQ(fq.Size(s), 2);
  ASSERT_TRUE(fq.Enqueue(s, 3.0f).ok());
  auto all = s.Run({{fq.n, 3}}, fq.dequeue_many);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ((*all)[0].ToString(), "[1 2 3]");
}

TEST(QueueBlockingTest, CloseWaitsForEarlierEnqueuesUnlessCancellingThem) {
  FloatQueue fq(/*capacity=*/1);
  ClientSession s(fq.root), t(fq.root);
  ASSERT_TRUE(fq.Enqueue(s, 1.0f).ok());
  auto pending = std::async(std::launch::async, [&] { return fq.Enqueue(s, 2.0f); });
  ASSERT_TRUE(StillWaiting(pending));
  // A plain close queues behind the pending enqueue...
  auto close = std::async(std::launch::async, [&] { return t.Run({fq.close}); });
  ASSERT_TRUE(StillWaiting(close));
  // ...so a dequeue lets the enqueue in, and then the close completes.
  auto first = t.Run(fq.dequeue);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(Finishes(pending));
  EXPECT_TRUE(pending.get().ok());
  ASSERT_TRUE(Finishes(close));
  EXPECT_TRUE(close.get().ok());
  auto second = t.Run(fq.dequeue);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)[0].scalar<float>(), 2.0f);

  // With cancel_pending_enqueues, the waiting enqueue fails at once.
  FloatQueue fq2(/*capacity=*/1);
  ClientSession u(fq2.root);
  ASSERT_TRUE(fq2.Enqueue(u, 1.0f).ok());
  auto blocked = std::async(std::launch::async, [&] { return fq2.Enqueue(u, 2.0f); });
  ASSERT_TRUE(StillWaiting(blocked));
  ASSERT_TRUE(u.Run({fq2.close_cancel}).ok());
  ASSERT_TRUE(Finishes(blocked));
  Status st = blocked.get();
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(st.message(), HasSubstr("is already closed"));
  EXPECT_EQ(fq2.Size(u), 1);
}

TEST(QueueBlockingTest, ManyProducersAndConsumersLoseNothing) {
  FloatQueue fq(/*capacity=*/4);
  ClientSession s(fq.root);
  constexpr int kPerProducer = 100;
  std::vector<std::future<Status>> producers;
  for (int p = 0; p < 3; ++p) {
    producers.push_back(std::async(std::launch::async, [&, p] {
      for (int i = 0; i < kPerProducer; ++i) RETURN_IF_ERROR(fq.Enqueue(s, static_cast<float>(p * 1000 + i)));
      return absl::OkStatus();
    }));
  }
  std::vector<std::future<std::vector<float>>> consumers;
  for (int c = 0; c < 2; ++c) {
    consumers.push_back(std::async(std::launch::async, [&] {
      std::vector<float> got;
      for (;;) {
        auto r = s.Run(fq.dequeue);
        if (!r.ok()) {
          EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange) << r.status();
          return got;
        }
        got.push_back((*r)[0].scalar<float>());
      }
    }));
  }
  for (auto& p : producers) {
    ASSERT_TRUE(Finishes(p));
    EXPECT_TRUE(p.get().ok());
  }
  ASSERT_TRUE(s.Run({fq.close}).ok());
  std::vector<float> all;
  for (auto& c : consumers) {
    ASSERT_TRUE(Finishes(c));
    std::vector<float> got = c.get();
    // Each producer's elements arrive in its order.
    std::vector<float> last(3, -1);
    for (float v : got) {
      int p = static_cast<int>(v) / 1000;
      EXPECT_GT(v, last[p]);
      last[p] = v;
    }
    all.insert(all.end(), got.begin(), got.end());
  }
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), 3u * kPerProducer);
  for (int p = 0; p < 3; ++p)
    for (int i = 0; i < kPerProducer; ++i) EXPECT_EQ(all[p * kPerProducer + i], p * 1000 + i);
}

}  // namespace
}  // namespace dflow
