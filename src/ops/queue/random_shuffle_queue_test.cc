// RandomShuffleQueueV2: a permutation of what went in, deterministic with seeds, roughly uniform,
// min_after_dequeue held back until the queue closes, and bad attrs.
#include <algorithm>
#include <map>

#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

struct ShuffleQueue {
  Scope root = Scope::NewRootScope();
  Output q, x, size;
  Operation enqueue_many, close;
  std::vector<Output> dequeue, dequeue_many, dequeue_timeout;
  ShuffleQueue(int64_t min_after_dequeue, int64_t seed, int64_t seed2 = 0, int64_t capacity = -1) {
    q = ops::RandomShuffleQueue(root.WithOpName("rsq"), {DT_INT32},
                                {.shapes = {PartialTensorShape({})},
                                 .capacity = capacity,
                                 .min_after_dequeue = min_after_dequeue,
                                 .seed = seed,
                                 .seed2 = seed2});
    x = ops::Placeholder(root, DT_INT32);
    enqueue_many = ops::QueueEnqueueMany(root, q, {x});
    dequeue = ops::QueueDequeue(root, q, {DT_INT32});
    dequeue_many = ops::QueueDequeueMany(root, q, 10, {DT_INT32});
    dequeue_timeout = ops::QueueDequeue(root, q, {DT_INT32}, /*timeout_ms=*/40);
    close = ops::QueueClose(root, q);
    size = ops::QueueSize(root, q);
  }
};

Tensor Range(int n) {
  std::vector<int32_t> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return Tensor::FromValues<int32_t>(v, {n}).value();
}

std::vector<int32_t> ShuffledOrder(int64_t seed, int64_t seed2) {
  ShuffleQueue sq(0, seed, seed2);
  ClientSession s(sq.root);
  EXPECT_TRUE(s.Run({{sq.x, Range(10)}}, {}, {sq.enqueue_many}).ok());
  auto r = s.Run(sq.dequeue_many);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  auto f = (*r)[0].flat<int32_t>();
  return std::vector<int32_t>(f.begin(), f.end());
}

TEST(RandomShuffleQueueTest, DequeuesAPermutationDeterminedByTheSeeds) {
  std::vector<int32_t> a = ShuffledOrder(7, 0), b = ShuffledOrder(7, 0), c = ShuffledOrder(8, 3);
  ASSERT_EQ(a.size(), 10u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);  // another seed, another order (1 in 10! to fail by chance)
  std::vector<int32_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(sorted[i], i);
  std::vector<int32_t> fifo(10);
  for (int i = 0; i < 10; ++i) fifo[i] = i;
  EXPECT_NE(a, fifo);
}

TEST(RandomShuffleQueueTest, TheFirstElementOutIsRoughlyUniform) {
  // One queue, many rounds: fill with 0..9, take one, drain the rest. Chi-square with 9 degrees
  // of freedom: 27.9 is its 0.1% tail.
  ShuffleQueue sq(0, 1234, 5);
  ClientSession s(sq.root);
  std::map<int32_t, int> count;
  const int rounds = 2000;
  for (int i = 0; i < rounds; ++i) {
    ASSERT_TRUE(s.Run({{sq.x, Range(10)}}, {}, {sq.enqueue_many}).ok());
    auto first = s.Run(sq.dequeue);
    ASSERT_TRUE(first.ok());
    count[(*first)[0].scalar<int32_t>()]++;
    for (int k = 0; k < 9; ++k) ASSERT_TRUE(s.Run(sq.dequeue).ok());
  }
  double chi2 = 0;
  const double expected = rounds / 10.0;
  for (int v = 0; v < 10; ++v) chi2 += (count[v] - expected) * (count[v] - expected) / expected;
  EXPECT_LT(chi2, 27.9);
}

TEST(RandomShuffleQueueTest, MinAfterDequeueHoldsElementsBackUntilClosed) {
  ShuffleQueue sq(/*min_after_dequeue=*/2, 1);
  ClientSession s(sq.root);
  ASSERT_TRUE(s.Run({{sq.x, Range(3)}}, {}, {sq.enqueue_many}).ok());
  std::vector<int32_t> got;
  auto r = s.Run(sq.dequeue);
  ASSERT_TRUE(r.ok()) << r.status();
  got.push_back((*r)[0].scalar<int32_t>());
  // Two left, which min_after_dequeue keeps.
  r = s.Run(sq.dequeue_timeout);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  ASSERT_TRUE(s.Run({sq.close}).ok());
  for (int i = 0; i < 2; ++i) {
    r = s.Run(sq.dequeue);
    ASSERT_TRUE(r.ok()) << r.status();
    got.push_back((*r)[0].scalar<int32_t>());
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 2}));
  r = s.Run(sq.dequeue);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(r.status().message(), HasSubstr("RandomShuffleQueue 'rsq' is closed and has insufficient elements"));
}

TEST(RandomShuffleQueueTest, BadAttrsAreInvalidArgument) {
  for (auto [min_after, capacity] : std::vector<std::pair<int64_t, int64_t>>{{-1, -1}, {5, 5}, {6, 3}}) {
    ShuffleQueue sq(min_after, 0, 0, capacity);
    ClientSession s(sq.root);
    auto r = s.Run({sq.size});
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << min_after << " " << capacity;
    EXPECT_THAT(r.status().message(), HasSubstr("min_after_dequeue"));
  }
}

TEST(RandomShuffleQueueTest, SharingChecksMinAfterDequeue) {
  Scope root = Scope::NewRootScope();
  Output a = ops::RandomShuffleQueue(root.WithOpName("a"), {DT_INT32}, {.min_after_dequeue = 1, .shared_name = "rs"});
  Output b = ops::RandomShuffleQueue(root.WithOpName("b"), {DT_INT32}, {.min_after_dequeue = 2, .shared_name = "rs"});
  ClientSession s(root);
  ASSERT_TRUE(s.Run({a}).ok());
  auto r = s.Run({b});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("min_after_dequeue"));
}

}  // namespace
}  // namespace dflow
