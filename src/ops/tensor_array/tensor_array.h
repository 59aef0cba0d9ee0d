// TensorArray: the per-step array of tensors behind TensorArrayV3 and its read/write ops
// (tf.TensorArray, tf.nn.dynamic_rnn), with TensorFlow's semantics: a fixed or dynamic size,
// clear_after_read, an element shape that writes may complete (identical_element_shapes),
// unwritten elements that read as zeros once the element shape is fully defined, and gradient
// arrays (one per gradient source) whose writes to one index add up.
//
// A TensorArray lives for one step: TensorArrayV3 makes a new one each time it runs and its
// handle's payload owns it (as with StackV2), so it is freed with the last copy of the handle.
// Its gradient arrays hang off it, keyed by source.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "framework/op_kernel.h"
#include "tensor/tensor.h"
#include "tensor/tensor_shape.h"

namespace dflow {

constexpr char kTensorArrayKind[] = "TensorArray";

class TensorArray {
 public:
  struct Options {
    DType dtype = DT_INVALID;
    PartialTensorShape element_shape;  // unknown rank by default
    bool dynamic_size = false;
    bool clear_after_read = true;
    bool identical_element_shapes = false;
    bool multiple_writes_aggregate = false;  // gradient arrays: writes to one index add up
    bool is_grad = false;
  };
  TensorArray(std::string name, int64_t size, Options opts);

  const std::string& name() const { return name_; }
  DType dtype() const { return opts_.dtype; }

  // All methods lock the array; the *Many forms hold the lock across their elements.
  Status Write(int64_t index, const Tensor& value);
  Status WriteMany(absl::Span<const int64_t> indices, absl::Span<const Tensor> values);
  Status Read(int64_t index, Tensor* out);
  Status ReadMany(absl::Span<const int64_t> indices, std::vector<Tensor>* out);
  // Every element, in order (Concat).
  Status ReadAll(std::vector<Tensor>* out);
  // Split: resizes a dynamic array to `n` elements or checks that a fixed one has that many.
  Status CheckOrResizeForSplit(int64_t n);
  StatusOr<int32_t> Size();
  void Close();
  // The element shape known so far (the attr merged with the writes).
  StatusOr<PartialTensorShape> ElementShape();
  // The gradient array for `source`, made on first use: as many elements as this array has now,
  // its element shape with `prepend` put in front, writes that add up.
  StatusOr<std::shared_ptr<TensorArray>> Grad(const std::string& source, const std::vector<int64_t>& prepend);

 private:
  struct Elem {
    Tensor tensor;
    bool written = false;
    bool cleared = false;
  };
  Status CheckOpen() const;
  Status LockedWrite(int64_t index, const Tensor& value);
  Status LockedRead(int64_t index, Tensor* out);

  std::string name_;
  Options opts_;
  std::mutex mu_;
  bool closed_ = false;
  std::vector<Elem> elems_;
  std::map<std::string, std::shared_ptr<TensorArray>> grads_;
};

// The TensorArray behind input `i` of `ctx` (a resource scalar made by TensorArrayV3 or
// TensorArrayGradV3); InvalidArgument naming the op and node otherwise.
StatusOr<std::shared_ptr<TensorArray>> GetTensorArray(OpKernelContext* ctx, int i);
// A handle tensor whose payload owns `ta`.
Tensor TensorArrayHandle(OpKernelContext* ctx, std::shared_ptr<TensorArray> ta);

// Copies `parts` (each contiguous, of `dtype`) one after the other into a new tensor of `shape`.
StatusOr<Tensor> ConcatParts(DType dtype, const std::vector<Tensor>& parts, const TensorShape& shape);

}  // namespace dflow
