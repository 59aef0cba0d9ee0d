// MemoryBudget: a limit on the bytes that tensor buffers charged to it may hold at once.
//
// A worker task owns one and runs every step with it (StepParams::memory_budget): each buffer a
// kernel allocates through its OpKernelContext (allocate_output, allocate_temp, the allocating
// side of forward_input_or_allocate_output) is charged before the memory is taken and released
// when the buffer is freed — which may be long after the step, for a value kept in a variable or
// a queue. A charge that would go past the limit fails instead, with ResourceExhausted, so that
// one client's oversized step fails rather than the task being killed for running out of memory.
//
// Buffers hold a reference to the budget they were charged to, so a budget outlives them.
// Thread-safe; a charge is one atomic compare-and-swap loop.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"

namespace dflow {

class MemoryBudget {
 public:
  // `limit_bytes` <= 0: unlimited (charges are still counted).
  explicit MemoryBudget(int64_t limit_bytes) : limit_(limit_bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  int64_t limit() const { return limit_.load(std::memory_order_relaxed); }
  void set_limit(int64_t limit_bytes) { limit_.store(limit_bytes, std::memory_order_relaxed); }
  // Bytes charged and not yet released.
  int64_t in_use() const { return in_use_.load(std::memory_order_relaxed); }
  // The most bytes ever in use at once.
  int64_t peak() const { return peak_.load(std::memory_order_relaxed); }

  // Charges `bytes`, or ResourceExhausted naming the amount, the limit and what is in use when
  // that would exceed the limit (nothing is charged then).
  Status Charge(int64_t bytes);
  void Release(int64_t bytes) { in_use_.fetch_sub(bytes, std::memory_order_relaxed); }

  // Half of the memory this process may use: min(MemTotal of /proc/meminfo, the memory.max of
  // its cgroup v2 or memory.limit_in_bytes of cgroup v1 when set); 0 (unlimited) when neither
  // can be read. Computed once.
  static int64_t DefaultLimit();
  // Resolves a configured limit: < 0 is DefaultLimit(), 0 unlimited, > 0 itself.
  static int64_t ResolveLimit(int64_t configured) { return configured < 0 ? DefaultLimit() : configured; }

 private:
  std::atomic<int64_t> limit_;
  std::atomic<int64_t> in_use_{0};
  std::atomic<int64_t> peak_{0};
};

// "5.00 GiB", "1.50 MiB", "300 bytes".
std::string HumanReadableBytes(int64_t bytes);

// The bytes a tensor of `count` elements of `element_size` bytes takes, or -1 when that does
// not fit in an int64 (a shape of hostile size).
inline int64_t TensorBytesOrOverflow(int64_t count, int64_t element_size) {
  if (count < 0 || element_size < 0) return -1;
  if (element_size != 0 && count > INT64_MAX / element_size) return -1;
  return count * element_size;
}

}  // namespace dflow
