#include "ops/lookup/lookup_table.h"

#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"

namespace dflow {
namespace {

template <typename T>
std::string Show(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    return absl::StrCat(static_cast<int>(v));
  } else {
    return absl::StrCat(v);
  }
}

}  // namespace

class LookupTable::Impl {
 public:
  virtual ~Impl() = default;
  virtual int64_t size() const = 0;
  virtual void Find(const Tensor& keys, const Tensor& dflt, bool per_key, Tensor* out) const = 0;
  // Adds entries; `strict`: a key already present with another value is an error (initialization).
  virtual Status Insert(const Tensor& keys, const Tensor& values, bool strict) = 0;
  virtual void Remove(const Tensor& keys) = 0;
  virtual void Clear() = 0;
  virtual Status Export(Tensor* keys, Tensor* values) const = 0;
};

namespace {

template <typename K, typename V>
class TypedImpl : public LookupTable::Impl {
 public:
  int64_t size() const override { return static_cast<int64_t>(map_.size()); }
  void Find(const Tensor& keys, const Tensor& dflt, bool per_key, Tensor* out) const override {
    const K* k = keys.data<K>();
    const V* d = dflt.data<V>();
    V* o = out->data<V>();
    const int64_t n = keys.NumElements();
    for (int64_t i = 0; i < n; ++i) {
      auto it = map_.find(k[i]);
      o[i] = it != map_.end() ? it->second : d[per_key ? i : 0];
    }
  }
  Status Insert(const Tensor& keys, const Tensor& values, bool strict) override {
    const K* k = keys.data<K>();
    const V* v = values.data<V>();
    const int64_t n = keys.NumElements();
    for (int64_t i = 0; i < n; ++i) {
      auto [it, added] = map_.emplace(k[i], v[i]);
      if (added) continue;
      if (!strict) {
        it->second = v[i];
      } else if (!(it->second == v[i])) {
        return errors::FailedPrecondition("HashTable has different value for same key. Key ", Show(k[i]), " has ",
                                          Show(it->second), " and trying to add value ", Show(v[i]));
      }
    }
    return absl::OkStatus();
  }
  void Remove(const Tensor& keys) override {
    const K* k = keys.data<K>();
    for (int64_t i = 0; i < keys.NumElements(); ++i) map_.erase(k[i]);
  }
  void Clear() override { map_.clear(); }
  Status Export(Tensor* keys, Tensor* values) const override {
    const int64_t n = size();
    ASSIGN_OR_RETURN(*keys, Tensor::Allocate(DTypeOf<K>::value, TensorShape{n}));
    ASSIGN_OR_RETURN(*values, Tensor::Allocate(DTypeOf<V>::value, TensorShape{n}));
    K* k = keys->data<K>();
    V* v = values->data<V>();
    int64_t i = 0;
    for (const auto& [key, value] : map_) {
      k[i] = key;
      v[i] = value;
      ++i;
    }
    return absl::OkStatus();
  }

 private:
  std::unordered_map<K, V> map_;
};

template <typename K>
std::unique_ptr<LookupTable::Impl> MakeForKey(DType value_dtype) {
  std::unique_ptr<LookupTable::Impl> impl;
  auto make = [&]<typename V>() { impl = std::make_unique<TypedImpl<K, V>>(); };
  if (value_dtype == DT_STRING) {
    make.template operator()<std::string>();
  } else {
    VisitPOD(value_dtype, make);
  }
  return impl;
}

}  // namespace

LookupTable::LookupTable(DType k, DType v, bool m, std::unique_ptr<Impl> impl)
    : key_dtype_(k), value_dtype_(v), mutable_(m), impl_(std::move(impl)) {}
LookupTable::~LookupTable() = default;

StatusOr<std::shared_ptr<LookupTable>> LookupTable::Create(DType key_dtype, DType value_dtype, bool is_mutable) {
  std::unique_ptr<Impl> impl;
  switch (key_dtype) {
    case DT_INT32: impl = MakeForKey<int32_t>(value_dtype); break;
    case DT_INT64: impl = MakeForKey<int64_t>(value_dtype); break;
    case DT_STRING: impl = MakeForKey<std::string>(value_dtype); break;
    default: break;
  }
  if (impl == nullptr) {
    return errors::InvalidArgument(is_mutable ? "MutableHashTable" : "HashTable", " does not support keys of type ",
                                   DTypeString(key_dtype), " with values of type ", DTypeString(value_dtype),
                                   " (keys: int32, int64, string; values: float, double, int32, int64, uint8, bool, "
                                   "string)");
  }
  return std::shared_ptr<LookupTable>(new LookupTable(key_dtype, value_dtype, is_mutable, std::move(impl)));
}

std::string LookupTable::DebugString() const {
  return absl::StrCat(kind(), " of ", DTypeString(key_dtype_), " to ", DTypeString(value_dtype_));
}

int64_t LookupTable::size() {
  std::lock_guard<std::mutex> l(mu_);
  return impl_->size();
}

bool LookupTable::is_initialized() {
  std::lock_guard<std::mutex> l(mu_);
  return mutable_ || initialized_;
}

Status LookupTable::Find(const Tensor& keys, const Tensor& default_value, Tensor* values) {
  // As TensorFlow: a static table uses the first element of default_value; a mutable one takes
  // one default, or one per key (dynamic default values).
  const int64_t nd = default_value.NumElements();
  if (mutable_ ? nd != 1 && !(default_value.shape() == keys.shape()) : nd < 1) {
    return errors::InvalidArgument("Expected shape [] or ", keys.shape().DebugString(),
                                   " for argument 'default_value', got ", default_value.shape().DebugString());
  }
  ASSIGN_OR_RETURN(*values, Tensor::Allocate(value_dtype_, keys.shape()));
  std::lock_guard<std::mutex> l(mu_);
  if (!mutable_ && !initialized_) return errors::FailedPrecondition("Table not initialized.");
  impl_->Find(keys, default_value, /*per_key=*/mutable_ && nd != 1, values);
  return absl::OkStatus();
}

static Status CheckSameShape(const Tensor& keys, const Tensor& values) {
  if (!(keys.shape() == values.shape())) {
    return errors::InvalidArgument("Expected shape ", keys.shape().DebugString(), " for values, got ",
                                   values.shape().DebugString());
  }
  return absl::OkStatus();
}

Status LookupTable::Import(const Tensor& keys, const Tensor& values) {
  RETURN_IF_ERROR(CheckSameShape(keys, values));
  std::lock_guard<std::mutex> l(mu_);
  if (mutable_) {
    impl_->Clear();
    return impl_->Insert(keys, values, /*strict=*/false);
  }
  if (keys.NumElements() == 0) return errors::InvalidArgument("keys and values cannot be empty tensors.");
  if (initialized_) {
    // TensorFlow's HashTable::AreEntriesSame compares the number of entries only.
    if (impl_->size() == keys.NumElements()) return absl::OkStatus();
    return errors::FailedPrecondition("Table was already initialized with different data.");
  }
  Status s = impl_->Insert(keys, values, /*strict=*/true);
  if (!s.ok()) {
    impl_->Clear();
    return s;
  }
  initialized_ = true;
  return absl::OkStatus();
}

Status LookupTable::Insert(const Tensor& keys, const Tensor& values) {
  if (!mutable_) return errors::Unimplemented("Insert not supported by InitializableLookupTable implementations");
  RETURN_IF_ERROR(CheckSameShape(keys, values));
  std::lock_guard<std::mutex> l(mu_);
  return impl_->Insert(keys, values, /*strict=*/false);
}

Status LookupTable::Remove(const Tensor& keys) {
  if (!mutable_) return errors::Unimplemented("Remove not supported by InitializableLookupTable implementations");
  std::lock_guard<std::mutex> l(mu_);
  impl_->Remove(keys);
  return absl::OkStatus();
}

Status LookupTable::Export(Tensor* keys, Tensor* values) {
  std::lock_guard<std::mutex> l(mu_);
  return impl_->Export(keys, values);
}

}  // namespace dflow
