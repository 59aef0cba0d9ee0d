#include "base/memory.h"

#include <malloc.h>

#include <mutex>

namespace dflow {

void TuneMemoryAllocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    // Threads other than the main one get arenas whose heaps hold at most 64 MiB: bigger blocks
    // would be fresh mappings again. One arena (small blocks still come from per-thread caches).
    mallopt(M_ARENA_MAX, 1);
  });
}

namespace {
[[maybe_unused]] const bool tuned_at_load = (TuneMemoryAllocator(), true);
}  // namespace

}  // namespace dflow
