#include "ops/matrix/gemm.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "base/threadpool.h"
#include "oneapi/dnnl/dnnl.h"

namespace dflow {
namespace {

// A shard below this many multiply-adds (~15 us on one core here) costs more in hand-off (waking
// a pool thread) than it saves.
constexpr int64_t kMinShardWork = int64_t{1} << 20;
// Shards per core: more than one, so that a helper that starts late or is preempted leaves its
// share to the others; few, because each sgemm call re-packs its panels (measured here: 4
// shards of a 128x512x784 product cost ~2% more in total than one call, 8 cost ~12%).
constexpr int kShardsPerCore = 2;
// From this much work per core on, one shard per core: the re-packing is then what costs
// (1024x1024x1024 on 2 cores: 95% of oneDNN's own 2-thread sgemm in 4 shards, 101% in 2), and a
// late start is small beside a shard this long.
constexpr int64_t kOneShardPerCoreWork = int64_t{1} << 28;
// Shard boundaries are multiples of this many rows or columns (64-byte aligned column blocks).
constexpr int64_t kShardAlign = 16;

// One sgemm call on the calling thread. Row-major: C[m,n] = op(A) op(B), with leading
// dimensions of the full matrices.
dnnl_status_t Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                    int64_t ldb, float* c, int64_t ldc) {
  omp_set_num_threads(1);  // this thread's OpenMP regions only
  return dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}

Status SgemmError(dnnl_status_t st, int64_t m, int64_t n, int64_t k) {
  return errors::Internal("oneDNN sgemm failed with status ", static_cast<int>(st), " for [", m, ",", k, "] x [", k,
                          ",", n, "]");
}

}  // namespace

GemmSharding ShardGemm(int64_t m, int64_t n, int64_t k, int cores) {
  GemmSharding s;
  const int64_t work = GemmWork(m, n, k);
  if (cores <= 1 || work < 0) return s;
  s.along_m = m > n;
  const int64_t dim = s.along_m ? m : n;
  const int per_core = work / cores >= kOneShardPerCoreWork ? 1 : kShardsPerCore;
  int64_t count = std::min<int64_t>(work / kMinShardWork, int64_t{per_core} * cores);
  count = std::min(count, (dim + kShardAlign - 1) / kShardAlign);
  if (count <= 1) return s;
  // Equal pieces rounded up to the alignment; the count may shrink by the rounding.
  s.step = ((dim + count - 1) / count + kShardAlign - 1) / kShardAlign * kShardAlign;
  s.count = static_cast<int>((dim + s.step - 1) / s.step);
  if (s.count <= 1) s = GemmSharding();
  return s;
}

Status ShardedFloatGemm(const GemmSharding& sh, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                        const float* b, float* c, const GemmEpilogue* epilogue) {
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  if (sh.count <= 1) {
    dnnl_status_t st = Sgemm(ta, tb, m, n, k, a, lda, b, ldb, c, n);
    if (st != dnnl_success) return SgemmError(st, m, n, k);
    if (epilogue != nullptr) (*epilogue)(0, m, 0, n);
    return absl::OkStatus();
  }
  std::atomic<int> failed{dnnl_success};
  RunShards(sh.count, [&](int i) {
    const int64_t begin = i * sh.step;
    const int64_t len = std::min(sh.step, (sh.along_m ? m : n) - begin);
    dnnl_status_t st;
    if (sh.along_m) {
      // Rows [begin, begin+len) of C come from the same rows of op(A).
      const float* ai = ta ? a + begin : a + begin * lda;
      st = Sgemm(ta, tb, len, n, k, ai, lda, b, ldb, c + begin * n, n);
      if (st == dnnl_success && epilogue != nullptr) (*epilogue)(begin, len, 0, n);
    } else {
      // Columns [begin, begin+len) of C come from the same columns of op(B).
      const float* bi = tb ? b + begin * ldb : b + begin;
      st = Sgemm(ta, tb, m, len, k, a, lda, bi, ldb, c + begin, n);
      if (st == dnnl_success && epilogue != nullptr) (*epilogue)(0, m, begin, len);
    }
    if (st != dnnl_success) failed.store(st, std::memory_order_relaxed);
  });
  const int st = failed.load();
  return st == dnnl_success ? absl::OkStatus() : SgemmError(static_cast<dnnl_status_t>(st), m, n, k);
}

Status FloatGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
                 const GemmEpilogue* epilogue) {
  if (IsTinyGemm(GemmWork(m, n, k))) {
    NaiveGemm<float>(ta, tb, m, n, k, a, b, c);
    if (epilogue != nullptr) (*epilogue)(0, m, 0, n);
    return absl::OkStatus();
  }
  const GemmSharding sh = ShardGemm(m, n, k, NumCores());
  if (sh.count <= 1 || !TryClaimAllCores()) {
    return ShardedFloatGemm(GemmSharding(), ta, tb, m, n, k, a, b, c, epilogue);
  }
  Status s = ShardedFloatGemm(sh, ta, tb, m, n, k, a, b, c, epilogue);
  ReleaseAllCores();
  return s;
}

}  // namespace dflow
