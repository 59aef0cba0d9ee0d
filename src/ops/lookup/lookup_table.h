// LookupTable: the resource behind TensorFlow's lookup-table ops (HashTableV2, MutableHashTableV2),
// stored in the device's ResourceMgr. One class for every key/value dtype pair, so that the
// ResourceMgr lookup by C++ type finds any table; the typed storage lives behind it.
//
// Semantics follow TensorFlow's lookup_table_op.cc: a static (initializable) table is filled once
// by InitializeTableV2 / InitializeTableFromTextFileV2 / LookupTableImportV2; a lookup before that
// is FailedPrecondition "Table not initialized."; no entries is InvalidArgument; a second initialization with the same number of
// entries is a no-op and with another number FailedPrecondition "Table was already initialized
// with different data."; a key given twice with different values is FailedPrecondition. A mutable
// table takes inserts, removals and imports (which replace its contents).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "framework/resource_mgr.h"
#include "tensor/tensor.h"

namespace dflow {

class LookupTable : public ResourceBase {
 public:
  class Impl;
  // InvalidArgument for key or value dtypes that tables do not support.
  static StatusOr<std::shared_ptr<LookupTable>> Create(DType key_dtype, DType value_dtype, bool is_mutable);
  ~LookupTable() override;

  DType key_dtype() const { return key_dtype_; }
  DType value_dtype() const { return value_dtype_; }
  bool is_mutable() const { return mutable_; }
  std::string DebugString() const override;
  // "HashTable" or "MutableHashTable".
  const char* kind() const { return mutable_ ? "MutableHashTable" : "HashTable"; }

  // 0 for a static table not yet initialized.
  int64_t size();
  bool is_initialized();
  // values[i] = table[keys[i]] or the default: default_value's first element for a static table;
  // for a mutable one, its only element or element i (one per key). Shape of keys.
  Status Find(const Tensor& keys, const Tensor& default_value, Tensor* values);
  // Static tables: the one-time initialization (see above). Mutable tables: replaces the contents.
  Status Import(const Tensor& keys, const Tensor& values);
  // Mutable tables only (Unimplemented otherwise, as in TensorFlow).
  Status Insert(const Tensor& keys, const Tensor& values);
  Status Remove(const Tensor& keys);
  // Every entry, in the table's (unspecified) order.
  Status Export(Tensor* keys, Tensor* values);

 private:
  LookupTable(DType k, DType v, bool m, std::unique_ptr<Impl> impl);
  DType key_dtype_, value_dtype_;
  bool mutable_;
  bool initialized_ = false;
  std::mutex mu_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dflow
