// Tensor lives in the public API (include/dflow/tensor.h); this header adds what only dflow's
// own code sees: TensorBuffer, the storage behind Tensors, and the ResourceHandle and Variant
// element types.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "base/logging.h"
#include "base/status.h"
#include "dflow/tensor.h"
#include "tensor/dtype.h"
#include "tensor/resource_handle.h"
#include "tensor/tensor_shape.h"
#include "tensor/variant.h"

namespace dflow {

// The storage behind one or more Tensors. Intrusively reference counted.
class TensorBuffer {
 public:
  // Allocates `count` elements of `dtype` (strings are default-constructed; other types are left
  // uninitialized unless `zero` is set). Returns nullptr when memory runs out or the size does
  // not fit in memory at all.
  static TensorBuffer* Allocate(DType dtype, int64_t count, bool zero);

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) Destroy();
  }
  bool RefCountIsOne() const { return refs_.load(std::memory_order_acquire) == 1; }
  void* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  friend class Tensor;
  TensorBuffer() = default;
  void Destroy();

  std::atomic<int32_t> refs_{1};
  DType dtype_ = DT_INVALID;
  int64_t count_ = 0;
  size_t bytes_ = 0;
  void* data_ = nullptr;
  // The budget bytes_ were charged to (null for most buffers), released in Destroy. The header
  // stays within one 64-byte block with it.
  std::shared_ptr<MemoryBudget> budget_;
};

}  // namespace dflow
