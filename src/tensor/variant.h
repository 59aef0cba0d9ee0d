// Variant: the element of a DT_VARIANT tensor — an opaque, immutable, reference-counted value
// that travels between ops of one process (a dataset, in input pipelines). Copying a Variant
// shares the value. Variants cannot be serialized: a DT_VARIANT tensor never leaves its process
// (TensorProto conversion and the RPC transport reject it with an error naming the dtype).
#pragma once

#include <memory>
#include <string>

namespace dflow {

// What a Variant holds. Subclasses must be immutable after construction (readers on many
// threads share them) or guard their mutable state themselves.
class VariantValue {
 public:
  virtual ~VariantValue() = default;
  // "Dataset", ... for error messages.
  virtual std::string TypeName() const = 0;
  virtual std::string DebugString() const { return "<" + TypeName() + ">"; }
};

struct Variant {
  std::shared_ptr<const VariantValue> value;

  bool empty() const { return value == nullptr; }
  // The value as a T, or nullptr when it holds something else (or nothing).
  template <typename T>
  const T* get() const {
    return dynamic_cast<const T*>(value.get());
  }
  std::string DebugString() const { return value ? value->DebugString() : "<empty variant>"; }
};

}  // namespace dflow
