// Matrix products shared by MatMul and BatchMatMulV2.
//
// float goes to oneDNN's sgemm unless the product is tiny. oneDNN runs on OpenMP, but OpenMP
// teams on a machine whose cores the executor's threads already keep busy oversubscribe them,
// and a team whose member is preempted stalls at its barriers. So every sgemm call runs on one
// OpenMP thread, and a big product is cut into shards (blocks of rows or columns of the output)
// that the executor's pool helps with (RunShards): a helper that is busy takes fewer shards, and
// nothing ever waits for a descheduled thread. Only one big product at a time is sharded (the
// process-wide claim on all cores, which the oneDNN convolutions take too); others run whole on
// their own thread, which is what two products ready at once want anyway. Other types use a
// plain cache-friendly loop (rows of the output accumulated from rows of B), as do tiny float
// products.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "base/status.h"
#include "tensor/tensor_shape.h"
#include "ops/math/cwise_functors.h"

namespace dflow {

// Below this M*N*K, oneDNN's per-call dispatch (~0.5 us here) costs more than a plain loop.
constexpr int64_t kTinyGemmWork = 512;

// M*N*K, or -1 when it overflows (m*n must be an element count).
inline int64_t GemmWork(int64_t m, int64_t n, int64_t k) { return MultiplyWithoutOverflow(m * n, k); }
inline bool IsTinyGemm(int64_t work) { return work >= 0 && work <= kTinyGemmWork; }

// How FloatGemm cuts one product into shards for `cores` threads: along M (rows of C) or N
// (columns of C), `count` pieces of `step` rows or columns (the last may be shorter). count is
// 1 when the product is not worth cutting.
struct GemmSharding {
  bool along_m = false;
  int count = 1;
  int64_t step = 0;
};
GemmSharding ShardGemm(int64_t m, int64_t n, int64_t k, int cores);

// C[m,n] = op(A) * op(B), all row-major and dense; a is [m,k] (or [k,m] when transposed), b is
// [k,n] (or [n,k]). Integer products wrap around.
template <typename T>
void NaiveGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  // Bring B into [k,n] layout so the inner loop runs along contiguous rows of B and C.
  std::vector<T> bt;
  if (tb) {
    bt.resize(static_cast<size_t>(k * n));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) bt[p * n + j] = b[j * k + p];
    b = bt.data();
  }
  for (int64_t i = 0; i < m; ++i) {
    T* crow = c + i * n;
    for (int64_t j = 0; j < n; ++j) crow[j] = T{0};
    for (int64_t p = 0; p < k; ++p) {
      const T av = ta ? a[p * m + i] : a[i * k + p];
      const T* brow = b + p * n;
      for (int64_t j = 0; j < n; ++j) {
        crow[j] = functor::WrapAdd(crow[j], functor::WrapMul(av, brow[j]));
      }
    }
  }
}

// The same product for one float gemm: oneDNN unless tiny, sharded over the cores when big (see
// above). Internal error if oneDNN fails.
// `epilogue` (may be null) runs on every finished block of C, rows [row0, row0 + rows) by
// columns [col0, col0 + cols), on the thread that computed it while the block is still in its
// cache: how _FusedMatMul adds its bias and activation without another pass over C.
using GemmEpilogue = std::function<void(int64_t row0, int64_t rows, int64_t col0, int64_t cols)>;
Status FloatGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
                 const GemmEpilogue* epilogue = nullptr);

// One float product (not tiny) cut as `sh` says, the shards run by RunShards: what FloatGemm
// does with ShardGemm(m, n, k, NumCores()) once it holds the claim on all cores.
Status ShardedFloatGemm(const GemmSharding& sh, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                        const float* b, float* c, const GemmEpilogue* epilogue = nullptr);

// Dispatches on T: FloatGemm for float, NaiveGemm otherwise. m, n, k > 0.
template <typename T>
Status Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  if constexpr (std::is_same_v<T, float>) {
    return FloatGemm(ta, tb, m, n, k, a, b, c);
  } else {
    NaiveGemm<T>(ta, tb, m, n, k, a, b, c);
    return absl::OkStatus();
  }
}

}  // namespace dflow
