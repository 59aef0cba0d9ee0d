// BatchShards: how a call is cut along its batch, the claim on all cores it holds, and errors
// from its pieces.
#include "ops/nn/dnnl_util.h"

#include <atomic>
#include <stdexcept>
#include <vector>

#include "base/threadpool.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

constexpr int64_t kBig = int64_t{1} << 30;

TEST(BatchShardsTest, SmallWorkOrOneImageIsOnePiece) {
  BatchShards small(1000, 64);
  EXPECT_EQ(small.count(), 1);
  EXPECT_EQ(small.size(0), 64);
  BatchShards one(kBig, 1);
  EXPECT_EQ(one.count(), 1);
  EXPECT_EQ(one.size(0), 1);
}

// On one core there is nothing to cut for: one piece, which must still cover the batch.
TEST(BatchShardsTest, BigWorkIsCutIntoEqualPiecesCoveringTheBatch) {
  for (int64_t batch : {2, 7, 64, 65}) {
    BatchShards s(kBig, batch);
    if (NumCores() > 1) {
      ASSERT_GT(s.count(), 1) << batch;
    } else {
      ASSERT_EQ(s.count(), 1) << batch;
    }
    EXPECT_LE(s.count(), BatchShards::kShardsPerCore * NumCores());
    std::vector<std::atomic<int>> seen(static_cast<size_t>(batch));
    s.Run([&](int i) {
      for (int64_t b = s.begin(i); b < s.begin(i) + s.size(i); ++b) seen[b].fetch_add(1);
    });
    for (int64_t b = 0; b < batch; ++b) EXPECT_EQ(seen[b].load(), 1) << batch << " image " << b;
    for (int i = 1; i + 1 < s.count(); ++i) EXPECT_EQ(s.size(i), s.size(0));
  }
}

TEST(BatchShardsTest, OnlyOneCallHoldsTheCoresAtATime) {
  BatchShards first(kBig, 64);
  EXPECT_EQ(first.count() > 1, NumCores() > 1);
  BatchShards second(kBig, 64);  // the claim is taken: runs whole, on its caller's thread
  EXPECT_EQ(second.count(), 1);
}

TEST(BatchShardsTest, AnErrorInAPieceIsRethrownAfterAllPiecesRan) {
  BatchShards s(kBig, 16);
  std::atomic<int> ran{0};
  EXPECT_THROW(s.Run([&](int i) {
    ran.fetch_add(1);
    if (i == 0) throw std::runtime_error("piece failed");
  }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), s.count());
}

}  // namespace
}  // namespace dflow
