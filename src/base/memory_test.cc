// TuneMemoryAllocator: in effect from the start of the process, for every thread.
#include "base/memory.h"

#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "gtest/gtest.h"

namespace dflow {
namespace {

// Whether a block of `bytes` allocated (and touched) on a new thread lies in the main heap, below
// the program break, rather than in a fresh mapping (which glibc places far above the heap).
bool NewThreadAllocatesFromTheHeap(size_t bytes) {
  bool in_heap = false;
  std::thread t([&] {
    char* p = static_cast<char*>(std::malloc(bytes));
    ASSERT_NE(p, nullptr);
    p[0] = p[bytes - 1] = 1;
    in_heap = p + bytes <= static_cast<char*>(sbrk(0));
    std::free(p);
  });
  t.join();
  return in_heap;
}

// No call to TuneMemoryAllocator() comes first: the library tunes the allocator when it is loaded,
// so a thread started before anything of dflow ran (gRPC's, say) shares the heap that keeps big
// blocks. Untuned, a 64 MiB block on a second thread is a fresh mapping every time.
TEST(MemoryTest, BigBlocksOfEveryThreadComeFromTheHeapFromTheStart) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer has its own allocator, which glibc's settings do not reach";
#endif
  EXPECT_TRUE(NewThreadAllocatesFromTheHeap(size_t{64} << 20));
  EXPECT_TRUE(NewThreadAllocatesFromTheHeap(size_t{256} << 20));
  TuneMemoryAllocator();  // idempotent (and it links this file's load-time tuning in)
  EXPECT_TRUE(NewThreadAllocatesFromTheHeap(size_t{64} << 20));
}

}  // namespace
}  // namespace dflow
