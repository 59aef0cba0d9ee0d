// How big float products are cut into shards, and that every cut gives the product a naive
// loop computes, for each transpose combination (whatever the number of cores of the machine
// running the test: the shardings are given explicitly).
#include "ops/matrix/gemm.h"

#include <cmath>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

TEST(ShardGemmTest, SmallProductsAndOneCoreAreNotCut) {
  EXPECT_EQ(ShardGemm(128, 512, 784, 1).count, 1);
  EXPECT_EQ(ShardGemm(128, 10, 512, 2).count, 1);   // 655k multiply-adds: one shard's worth
  EXPECT_EQ(ShardGemm(8, 8, 1 << 30, 4).count, 1);  // too narrow to cut
}

TEST(ShardGemmTest, CutsTheLongerSideOfTheOutputIntoAlignedPieces) {
  GemmSharding s = ShardGemm(128, 512, 784, 2);  // a layer's forward product
  EXPECT_FALSE(s.along_m);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.step, 128);
  s = ShardGemm(784, 512, 128, 2);  // its weight gradient
  EXPECT_TRUE(s.along_m);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.step, 208);              // 196 rounded up to a multiple of 16; the last piece is 160
  s = ShardGemm(1024, 1024, 1024, 2);  // big pieces: one per core
  EXPECT_EQ(s.count, 2);
  EXPECT_EQ(s.step, 512);
}

TEST(ShardGemmTest, PiecesCoverTheOutputExactly) {
  for (int64_t m : {1, 17, 128, 300, 1000, 4097}) {
    for (int64_t n : {1, 10, 64, 513, 2048}) {
      for (int64_t k : {1, 100, 5000}) {
        for (int cores : {1, 2, 3, 8}) {
          SCOPED_TRACE(absl::StrCat(m, "x", n, "x", k, " on ", cores));
          GemmSharding s = ShardGemm(m, n, k, cores);
          ASSERT_GE(s.count, 1);
          ASSERT_LE(s.count, 2 * cores);
          if (s.count == 1) continue;
          const int64_t dim = s.along_m ? m : n;
          EXPECT_EQ(s.step % 16, 0);
          EXPECT_LT((s.count - 1) * s.step, dim);  // no empty piece
          EXPECT_GE(s.count * s.step, dim);        // nothing left out
        }
      }
    }
  }
}

std::vector<float> Random(int64_t n, std::mt19937* rng) {
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(*rng);
  return v;
}

void CheckSharded(const GemmSharding& sh, bool ta, bool tb, int64_t m, int64_t n, int64_t k) {
  SCOPED_TRACE(absl::StrCat(m, "x", n, "x", k, " ta=", ta, " tb=", tb, " along_m=", sh.along_m, " count=", sh.count,
                            " step=", sh.step));
  std::mt19937 rng(m * 31 + n * 7 + k);
  std::vector<float> a = Random(m * k, &rng), b = Random(k * n, &rng);
  std::vector<float> c(m * n, std::nanf(""));
  ASSERT_TRUE(ShardedFloatGemm(sh, ta, tb, m, n, k, a.data(), b.data(), c.data()).ok());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p) {
        want += double(ta ? a[p * m + i] : a[i * k + p]) * double(tb ? b[j * k + p] : b[p * n + j]);
      }
      ASSERT_NEAR(c[i * n + j], want, 1e-4 * std::sqrt(double(k))) << "at " << i << "," << j;
    }
  }
}

TEST(ShardedFloatGemmTest, EveryCutMatchesANaiveProduct) {
  const int64_t m = 200, n = 150, k = 70;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      CheckSharded(GemmSharding(), ta, tb, m, n, k);
      CheckSharded({/*along_m=*/true, /*count=*/3, /*step=*/80}, ta, tb, m, n, k);    // 80, 80, 40 rows
      CheckSharded({/*along_m=*/false, /*count=*/5, /*step=*/32}, ta, tb, m, n, k);   // 4 x 32 + 22 columns
      CheckSharded({/*along_m=*/false, /*count=*/10, /*step=*/16}, ta, tb, m, n, k);  // 9 x 16 + 6 columns
      CheckSharded(ShardGemm(m, n, k, 2), ta, tb, m, n, k);
    }
  }
}

TEST(ShardedFloatGemmTest, FloatGemmOfABigProduct) {
  // Big enough to be cut on any machine with more than one core.
  const int64_t m = 256, n = 192, k = 96;
  std::mt19937 rng(3);
  std::vector<float> a = Random(m * k, &rng), b = Random(k * n, &rng), c(m * n);
  ASSERT_TRUE(FloatGemm(false, true, m, n, k, a.data(), b.data(), c.data()).ok());
  for (int64_t i = 0; i < m; i += 37) {
    for (int64_t j = 0; j < n; j += 11) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p) want += double(a[i * k + p]) * double(b[j * k + p]);
      ASSERT_NEAR(c[i * n + j], want, 1e-3) << "at " << i << "," << j;
    }
  }
}

}  // namespace
}  // namespace dflow
