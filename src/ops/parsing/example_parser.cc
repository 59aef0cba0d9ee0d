#include "ops/parsing/example_parser.h"

#include <cstring>
#include <string_view>
#include <unordered_map>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace dflow::parsing {
namespace {

// ---- the wire format ----

constexpr uint32_t kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

// A cursor over protobuf wire-format bytes. Every read returns false on malformed or truncated input.
class Reader {
 public:
  explicit Reader(std::string_view s) : p_(reinterpret_cast<const uint8_t*>(s.data())), end_(p_ + s.size()) {}
  bool done() const { return p_ >= end_; }

  bool Varint(uint64_t* v) {
    if (p_ < end_ && *p_ < 0x80) {  // the common one-byte case
      *v = *p_++;
      return true;
    }
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) return false;
      const uint8_t b = *p_++;
      r |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) {
        *v = r;
        return true;
      }
    }
    return false;  // more than 10 bytes
  }
  bool Tag(uint32_t* field, uint32_t* wire_type) {
    uint64_t t;
    if (!Varint(&t) || t > 0xffffffffu) return false;
    *field = static_cast<uint32_t>(t >> 3);
    *wire_type = static_cast<uint32_t>(t & 7);
    return *field != 0;
  }
  bool Bytes(std::string_view* out) {
    uint64_t n;
    if (!Varint(&n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    *out = std::string_view(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return true;
  }
  // A length-delimited value whose length may run past the end: what is there.
  bool BytesUpToEnd(std::string_view* out) {
    uint64_t n;
    if (!Varint(&n)) return false;
    n = std::min<uint64_t>(n, static_cast<uint64_t>(end_ - p_));
    *out = std::string_view(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return true;
  }
  bool Fixed32(uint32_t* v) {
    if (end_ - p_ < 4) return false;
    std::memcpy(v, p_, 4);  // little-endian hosts only (as the rest of dflow's formats)
    p_ += 4;
    return true;
  }
  // Skips a field's value (groups are malformed input here, as for TensorFlow's parser).
  bool Skip(uint32_t wire_type) {
    uint64_t v;
    std::string_view s;
    switch (wire_type) {
      case kVarint: return Varint(&v);
      case kFixed64:
        if (end_ - p_ < 8) return false;
        p_ += 8;
        return true;
      case kLengthDelimited: return Bytes(&s);
      case kFixed32:
        if (end_ - p_ < 4) return false;
        p_ += 4;
        return true;
      default: return false;
    }
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// Calls f(key, feature bytes) for every entry of every Features of an Example, in order.
// False on malformed bytes (or when f returns false).
template <typename F>
bool ForEachFeature(std::string_view example, F&& f) {
  Reader ex(example);
  uint32_t field, wt;
  while (!ex.done()) {
    if (!ex.Tag(&field, &wt)) return false;
    if (field != 1 || wt != kLengthDelimited) {
      if (!ex.Skip(wt)) return false;
      continue;
    }
    // A message length that runs past the end of its enclosing bytes (Features, a map entry, a
    // list, a packed run) reads what is there, as TensorFlow's parser does; keys, Feature values
    // and bytes values must be whole.
    std::string_view features;
    if (!ex.BytesUpToEnd(&features)) return false;
    Reader fs(features);
    while (!fs.done()) {
      // Only map entries, each exactly a key and a value (in either order), as TensorFlow's parser.
      std::string_view entry;
      if (!fs.Tag(&field, &wt) || field != 1 || wt != kLengthDelimited || !fs.BytesUpToEnd(&entry)) return false;
      Reader en(entry);
      std::string_view key, value;
      for (int k = 0; k < 2; ++k) {
        if (!en.Tag(&field, &wt) || wt != kLengthDelimited || (field != 1 && field != 2)) return false;
        if (!en.Bytes(field == 1 ? &key : &value)) return false;
      }
      if (!en.done()) return false;
      if (!f(key, value)) return false;
    }
  }
  return true;
}

// The list type of a Feature (its first field: 1 bytes, 2 float, 3 int64) and that list's bytes;
// DT_INVALID for an empty Feature. False on malformed bytes or another field.
bool FeatureKind(std::string_view feature, DType* dtype, std::string_view* list) {
  if (feature.empty()) {
    *dtype = DT_INVALID;
    return true;
  }
  Reader r(feature);
  uint32_t field, wt;
  if (!r.Tag(&field, &wt) || wt != kLengthDelimited) return false;
  switch (field) {
    case 1: *dtype = DT_STRING; break;
    case 2: *dtype = DT_FLOAT; break;
    case 3: *dtype = DT_INT64; break;
    default: return false;
  }
  return r.BytesUpToEnd(list);  // a list length past the end reads what is there (as TensorFlow)
}

// Appends the values of a FloatList / Int64List / BytesList to `out`, by the rules of
// TensorFlow's parser: a list starting with a packed run holds that run only (what follows is
// ignored); otherwise every field must be an unpacked value. A float run must be whole (a trailing
// partial float is dropped); an int64 run that runs past the end reads what is there.
constexpr uint8_t kPackedTag = 0x0a;  // field 1, length-delimited

bool DecodeList(std::string_view list, std::vector<float>* out) {
  if (list.empty()) return true;
  Reader r(list);
  if (static_cast<uint8_t>(list[0]) == kPackedTag) {
    uint32_t field, wt;
    std::string_view packed;
    if (!r.Tag(&field, &wt) || !r.Bytes(&packed)) return false;
    const size_t n = out->size(), k = packed.size() / 4;
    out->resize(n + k);
    std::memcpy(out->data() + n, packed.data(), k * 4);
    return true;
  }
  // Unpacked: list.size() / 5 values, each tag 0x0d (field 1, fixed32) and 4 bytes.
  const size_t k = list.size() / 5;
  const size_t n = out->size();
  out->resize(n + k);
  for (size_t i = 0; i < k; ++i) {
    if (static_cast<uint8_t>(list[5 * i]) != 0x0d) return false;
    std::memcpy(out->data() + n + i, list.data() + 5 * i + 1, 4);
  }
  return true;
}

bool DecodeList(std::string_view list, std::vector<int64_t>* out) {
  Reader r(list);
  uint32_t field, wt;
  uint64_t v;
  if (!list.empty() && static_cast<uint8_t>(list[0]) == kPackedTag) {
    std::string_view packed;
    if (!r.Tag(&field, &wt) || !r.BytesUpToEnd(&packed)) return false;
    Reader p(packed);
    while (!p.done()) {
      if (!p.Varint(&v)) return false;
      out->push_back(static_cast<int64_t>(v));
    }
    return true;
  }
  while (!r.done()) {
    if (!r.Tag(&field, &wt) || field != 1 || wt != kVarint || !r.Varint(&v)) return false;
    out->push_back(static_cast<int64_t>(v));
  }
  return true;
}

bool DecodeList(std::string_view list, std::vector<std::string_view>* out) {
  Reader r(list);
  uint32_t field, wt;
  while (!r.done()) {
    std::string_view s;
    if (!r.Tag(&field, &wt) || field != 1 || wt != kLengthDelimited || !r.Bytes(&s)) return false;
    out->push_back(s);
  }
  return true;
}

// Values gathered per dtype: one of the three vectors is used.
struct Values {
  std::vector<float> f;
  std::vector<int64_t> i;
  std::vector<std::string_view> s;
  size_t size(DType t) const { return t == DT_FLOAT ? f.size() : t == DT_INT64 ? i.size() : s.size(); }
  void clear() {
    f.clear();
    i.clear();
    s.clear();
  }
  bool Decode(DType t, std::string_view list) {
    return t == DT_FLOAT ? DecodeList(list, &f) : t == DT_INT64 ? DecodeList(list, &i) : DecodeList(list, &s);
  }
  // Copies values [from, from + n) to out[at...].
  void CopyTo(DType t, size_t from, size_t n, Tensor* out, int64_t at) const {
    if (t == DT_FLOAT) {
      std::memcpy(out->data<float>() + at, f.data() + from, n * sizeof(float));
    } else if (t == DT_INT64) {
      std::memcpy(out->data<int64_t>() + at, i.data() + from, n * sizeof(int64_t));
    } else {
      std::string* o = out->data<std::string>() + at;
      for (size_t k = 0; k < n; ++k) o[k].assign(s[from + k].data(), s[from + k].size());
    }
  }
};

const char* TypeWord(DType t) { return t == DT_FLOAT ? "float" : t == DT_INT64 ? "int64" : "bytes"; }

// Copies `n` elements of `src` (same dtype) to out[at...].
void CopyElements(const Tensor& src, int64_t n, Tensor* out, int64_t at) {
  switch (src.dtype()) {
    case DT_FLOAT: std::memcpy(out->data<float>() + at, src.data<float>(), n * sizeof(float)); break;
    case DT_INT64: std::memcpy(out->data<int64_t>() + at, src.data<int64_t>(), n * sizeof(int64_t)); break;
    default:
      for (int64_t k = 0; k < n; ++k) out->data<std::string>()[at + k] = src.data<std::string>()[k];
  }
}

// Fills out[at, at + n) with the single element of `pad`.
void FillWith(const Tensor& pad, int64_t n, Tensor* out, int64_t at) {
  switch (pad.dtype()) {
    case DT_FLOAT: std::fill_n(out->data<float>() + at, n, pad.data<float>()[0]); break;
    case DT_INT64: std::fill_n(out->data<int64_t>() + at, n, pad.data<int64_t>()[0]); break;
    default: std::fill_n(out->data<std::string>() + at, n, pad.data<std::string>()[0]);
  }
}

// Error messages take absl::string_view (not the same type as std::string_view in every absl).
absl::string_view A(std::string_view s) { return absl::string_view(s.data(), s.size()); }

enum class Kind : uint8_t { kDense, kSparse, kRagged };
struct Slot {
  Kind kind;
  int index;
};

// What one var-length feature (sparse, ragged or variable-length dense) gathers over the batch.
struct Gathered {
  Values values;
  std::vector<int64_t> counts;  // per example
};

}  // namespace

Status ParseConfig::Finalize() {
  auto check_type = [](DType t, const char* what, size_t i) -> Status {
    if (t != DT_FLOAT && t != DT_INT64 && t != DT_STRING) {
      return errors::InvalidArgument(what, "[", i, "] has type ", DTypeString(t),
                                     ": only float, int64 and string are supported");
    }
    return absl::OkStatus();
  };
  for (size_t d = 0; d < dense.size(); ++d) {
    DenseSpec& s = dense[d];
    RETURN_IF_ERROR(check_type(s.dtype, "Tdense", d));
    bool ok = !s.shape.unknown_rank();
    for (int k = 1; ok && k < s.shape.dims(); ++k) ok = s.shape.dim_size(k) >= 0;
    if (!ok) {
      return errors::InvalidArgument("dense_shapes[", d,
                                     "] has unknown rank or unknown inner dimensions: ", s.shape.DebugString());
    }
    s.variable_length = s.shape.dims() > 0 && s.shape.dim_size(0) < 0;
    s.elements_per_stride = 1;
    for (int k = s.variable_length ? 1 : 0; k < s.shape.dims(); ++k) {
      s.elements_per_stride = MultiplyWithoutOverflow(s.elements_per_stride, s.shape.dim_size(k));
      if (s.elements_per_stride < 0) {
        return errors::InvalidArgument("dense_shapes[", d, "] has too many elements: ", s.shape.DebugString());
      }
    }
    const Tensor& def = s.default_value;
    if (s.variable_length) {
      if (def.NumElements() != 1) {
        return errors::InvalidArgument("dense_shape[", d, "] is a variable length shape: ", s.shape.DebugString(),
                                       ", therefore def_value[", d,
                                       "] must contain a single element (the padding element).  But its shape is: ",
                                       def.shape().DebugString());
      }
    } else if (def.NumElements() > 0 && !s.shape.IsCompatibleWith(def.shape())) {
      return errors::InvalidArgument("def_value[", d, "].shape() == ", def.shape().DebugString(),
                                     " is not compatible with dense_shapes_[", d, "]: ", s.shape.DebugString());
    }
    if (def.dtype() != s.dtype) {
      return errors::InvalidArgument("dense_defaults[", d, "].dtype() == ", DTypeString(def.dtype()), " != Tdense[", d,
                                     "] == ", DTypeString(s.dtype));
    }
  }
  for (size_t i = 0; i < sparse.size(); ++i) RETURN_IF_ERROR(check_type(sparse[i].dtype, "sparse_types", i));
  for (size_t i = 0; i < ragged.size(); ++i) {
    RETURN_IF_ERROR(check_type(ragged[i].dtype, "ragged_value_types", i));
    if (ragged[i].split_dtype != DT_INT32 && ragged[i].split_dtype != DT_INT64) {
      return errors::InvalidArgument("ragged_split_types[", i, "] must be int32 or int64, got ",
                                     DTypeString(ragged[i].split_dtype));
    }
  }
  return absl::OkStatus();
}

namespace {

// Allocates the fixed-length dense outputs, [batch..., shape...]: they are filled as the
// examples are read. The other outputs are built from what was gathered, after.
Status AllocateFixedDense(const ParseConfig& config, const TensorShape& batch_shape, ParseResult* result) {
  const size_t nd = config.dense.size();
  result->dense_values.assign(nd, Tensor());
  for (size_t d = 0; d < nd; ++d) {
    const DenseSpec& s = config.dense[d];
    if (s.variable_length) continue;
    TensorShape shape = batch_shape;
    for (int k = 0; k < s.shape.dims(); ++k) RETURN_IF_ERROR(shape.AddDim(s.shape.dim_size(k)));
    // Sizes come from the input: allocation failures are ResourceExhausted, not a crash. Every
    // element is written below (values or the default), so nothing is zero-filled.
    ASSIGN_OR_RETURN(result->dense_values[d], Tensor::Allocate(s.dtype, shape));
  }
  return absl::OkStatus();
}

// Reads a batch's examples one at a time: fixed-length dense values go straight into their
// outputs (allocated by AllocateFixedDense), the values of the other features are gathered per
// feature (dense_var, sparse, ragged) for the outputs built after the last example.
class BatchReader {
 public:
  BatchReader(const ParseConfig& config, absl::Span<const std::string> names, bool single, int64_t n,
              ParseResult* result)
      : config_(config), names_(names), single_(single), result_(result) {
    const size_t nd = config.dense.size(), ns = config.sparse.size(), nr = config.ragged.size();
    slots_.reserve(2 * (nd + ns + nr) + 1);
    // A key listed twice: its first entry gets the values (TensorFlow checks for duplicates in Python).
    for (size_t d = 0; d < nd; ++d) slots_.emplace(config.dense[d].key, Slot{Kind::kDense, static_cast<int>(d)});
    for (size_t i = 0; i < ns; ++i) slots_.emplace(config.sparse[i].key, Slot{Kind::kSparse, static_cast<int>(i)});
    for (size_t i = 0; i < nr; ++i) slots_.emplace(config.ragged[i].key, Slot{Kind::kRagged, static_cast<int>(i)});
    dense_var_.resize(nd);
    sparse_.resize(ns);
    ragged_.resize(nr);
    for (size_t d = 0; d < nd; ++d) {
      if (config.dense[d].variable_length) dense_var_[d].counts.reserve(n);
    }
    for (auto& g : sparse_) g.counts.reserve(n);
    for (auto& g : ragged_) g.counts.reserve(n);
    seen_dense_.assign(nd, -1);
    seen_sparse_.assign(ns, -1);
    seen_ragged_.assign(nr, -1);
    bytes_dense_.resize(nd);
    bytes_sparse_.resize(ns);
    bytes_ragged_.resize(nr);
  }

  // Reads example e.
  Status Read(int64_t e, std::string_view serialized) {
    bool ok = ForEachFeature(serialized, [&](std::string_view key, std::string_view feature) {
      auto it = slots_.find(key);
      if (it == slots_.end()) return true;
      const Slot slot = it->second;
      if (slot.kind == Kind::kDense) {
        seen_dense_[slot.index] = e;
        bytes_dense_[slot.index] = feature;
      } else if (slot.kind == Kind::kSparse) {
        seen_sparse_[slot.index] = e;
        bytes_sparse_[slot.index] = feature;
      } else {
        seen_ragged_[slot.index] = e;
        bytes_ragged_[slot.index] = feature;
      }
      return true;
    });
    Status error;
    for (size_t d = 0; ok && d < seen_dense_.size(); ++d) {
      if (seen_dense_[d] == e) {
        ok = Process(e, {Kind::kDense, static_cast<int>(d)}, config_.dense[d].key, bytes_dense_[d], &error);
      }
    }
    for (size_t i = 0; ok && i < seen_sparse_.size(); ++i) {
      if (seen_sparse_[i] == e) {
        ok = Process(e, {Kind::kSparse, static_cast<int>(i)}, config_.sparse[i].key, bytes_sparse_[i], &error);
      }
    }
    for (size_t i = 0; ok && i < seen_ragged_.size(); ++i) {
      if (seen_ragged_[i] == e) {
        ok = Process(e, {Kind::kRagged, static_cast<int>(i)}, config_.ragged[i].key, bytes_ragged_[i], &error);
      }
    }
    if (!error.ok()) return error;
    if (!ok) {
      std::string_view s = serialized;
      return errors::InvalidArgument("Could not parse example input, value: '", absl::CHexEscape(A(s.substr(0, 256))),
                                     s.size() > 256 ? "...'" : "'");
    }
    return FillMissingDense(e);
  }

  std::vector<Gathered>& dense_var() { return dense_var_; }
  std::vector<Gathered>& sparse() { return sparse_; }
  std::vector<Gathered>& ragged() { return ragged_; }

 private:
  std::string_view Name(int64_t e) const {
    return names_.empty() ? std::string_view("<unknown>") : std::string_view(names_[e]);
  }

  // An error about feature `key` of example e, in TensorFlow's words.
  template <typename... Suffix>
  Status ExampleError(int64_t e, std::string_view key, const Suffix&... suffix) const {
    if (single_) return errors::InvalidArgument("Key: ", A(key), ".  ", suffix...);
    return errors::InvalidArgument("Name: ", A(Name(e)), ", Key: ", A(key), ", Index: ", e, ".  ", suffix...);
  }

  // Decodes the feature of `slot` in example e. False when it cannot be taken: with *error set,
  // or, on malformed bytes, not.
  bool Process(int64_t e, Slot slot, std::string_view key, std::string_view feature, Status* error) {
    DType want = slot.kind == Kind::kDense    ? config_.dense[slot.index].dtype
                 : slot.kind == Kind::kSparse ? config_.sparse[slot.index].dtype
                                              : config_.ragged[slot.index].dtype;
    DType got;
    std::string_view list;
    if (!FeatureKind(feature, &got, &list)) return false;
    if (got == DT_INVALID) {                                        // a Feature without a list: no values
      if (slot.kind == Kind::kDense) seen_dense_[slot.index] = -1;  // a fixed dense one counts as missing
      return true;
    }
    if (got != want) {
      *error = slot.kind == Kind::kDense
                   ? ExampleError(e, key, "Data types don't match. Data type: ", DTypeString(got),
                                  " but expected type: ", DTypeString(want))
                   : ExampleError(e, key, "Data types don't match. Expected type: ", DTypeString(want),
                                  ", Actual type: ", DTypeString(got));
      return false;
    }
    if (slot.kind == Kind::kDense && !config_.dense[slot.index].variable_length) {
      return ReadFixedDense(e, slot.index, key, want, list, error);
    }
    return Gather(e, slot, key, want, list, error);
  }

  // Decodes fixed-length dense feature d's values straight into its output.
  bool ReadFixedDense(int64_t e, int d, std::string_view key, DType want, std::string_view list, Status* error) {
    const DenseSpec& s = config_.dense[d];
    scratch_.clear();
    if (!scratch_.Decode(want, list)) return false;
    const int64_t per_example = s.elements_per_stride;
    const size_t got_n = scratch_.size(want);
    if (static_cast<int64_t>(got_n) != per_example && single_) {
      const bool long_bytes = want == DT_STRING && static_cast<int64_t>(got_n) > per_example;
      *error = ExampleError(e, key, "Can't parse serialized Example: ",
                            long_bytes ? "Parsing bytes_list failed."
                                       : absl::StrCat("Some ", TypeWord(want), "_list slice was not parsed."));
      return false;
    }
    if (static_cast<int64_t>(got_n) != per_example) {
      *error = ExampleError(e, key, "Number of ", TypeWord(want), " values != expected.  Values size: ", got_n,
                            " but output shape: ", s.shape.DebugString());
      return false;
    }
    scratch_.CopyTo(want, 0, got_n, &result_->dense_values[d], e * per_example);
    return true;
  }

  // Appends a var-length feature's values (sparse, ragged or variable-length dense) to what its
  // feature gathered, and their count as example e's.
  bool Gather(int64_t e, Slot slot, std::string_view key, DType want, std::string_view list, Status* error) {
    Gathered& g = slot.kind == Kind::kDense    ? dense_var_[slot.index]
                  : slot.kind == Kind::kSparse ? sparse_[slot.index]
                                               : ragged_[slot.index];
    const size_t before = g.values.size(want);
    if (!g.values.Decode(want, list)) return false;
    const int64_t added = static_cast<int64_t>(g.values.size(want) - before);
    if (slot.kind == Kind::kDense) {
      const DenseSpec& s = config_.dense[slot.index];
      if (s.elements_per_stride == 0 ? added != 0 : added % s.elements_per_stride != 0) {
        if (single_) {
          *error = errors::InvalidArgument("Error while parsing feature with key ", A(key),
                                           ": number of elements should be divisible by ", s.elements_per_stride,
                                           ", found ", added, " instead");
          return false;
        }
        *error = ExampleError(e, key, "Number of ", TypeWord(want), " values is not a multiple of stride length. Saw ",
                              added, " values but output shape is: ", s.shape.DebugString());
        return false;
      }
    }
    g.counts.resize(e + 1, 0);
    g.counts[e] = added;
    return true;
  }

  // Missing fixed-length dense features of example e: the default, or an error when there is none.
  Status FillMissingDense(int64_t e) {
    for (size_t d = 0; d < config_.dense.size(); ++d) {
      const DenseSpec& s = config_.dense[d];
      if (s.variable_length || seen_dense_[d] == e) continue;
      if (s.default_value.NumElements() == 0 && s.elements_per_stride > 0) {
        if (single_) {
          return errors::InvalidArgument("Feature: ", s.key, " (data type: ", DTypeString(s.dtype),
                                         ") is required but could not be found.");
        }
        return errors::InvalidArgument("Name: ", A(Name(e)), ", Feature: ", s.key,
                                       " (data type: ", DTypeString(s.dtype), ")",
                                       " is required but could not be found.");
      }
      CopyElements(s.default_value, s.elements_per_stride, &result_->dense_values[d], e * s.elements_per_stride);
    }
    return absl::OkStatus();
  }

  const ParseConfig& config_;
  const absl::Span<const std::string> names_;
  // One example (a scalar input) has TensorFlow's single-example messages: no name, no index.
  const bool single_;
  ParseResult* const result_;
  std::unordered_map<std::string_view, Slot> slots_;
  std::vector<Gathered> dense_var_, sparse_, ragged_;
  // The example each feature was last seen in, and its bytes there (the last occurrence in an
  // example wins, as in protobuf maps and TensorFlow's parser).
  std::vector<int64_t> seen_dense_, seen_sparse_, seen_ragged_;
  std::vector<std::string_view> bytes_dense_, bytes_sparse_, bytes_ragged_;
  Values scratch_;
};

// Sparse: indices (batch index..., position), values, dense shape (batch shape..., longest).
Status BuildSparse(const ParseConfig& config, const TensorShape& batch_shape, int64_t n, std::vector<Gathered>& sparse,
                   ParseResult* result) {
  const size_t ns = config.sparse.size();
  const int batch_rank = batch_shape.dims();
  result->sparse_indices.assign(ns, Tensor());
  result->sparse_values.assign(ns, Tensor());
  result->sparse_shapes.assign(ns, Tensor());
  for (size_t i = 0; i < ns; ++i) {
    Gathered& g = sparse[i];
    g.counts.resize(n, 0);
    const DType t = config.sparse[i].dtype;
    const int64_t total = static_cast<int64_t>(g.values.size(t));
    ASSIGN_OR_RETURN(Tensor idx, Tensor::Allocate(DT_INT64, TensorShape({total, batch_rank + 1})));
    ASSIGN_OR_RETURN(Tensor vals, Tensor::Allocate(t, TensorShape({total})));
    Tensor shape(DT_INT64, TensorShape({batch_rank + 1}));
    g.values.CopyTo(t, 0, static_cast<size_t>(total), &vals, 0);
    int64_t* ix = idx.data<int64_t>();
    int64_t longest = 0;
    std::vector<int64_t> coord(batch_rank, 0);  // the example's index in the batch, row-major
    for (int64_t e = 0; e < n; ++e) {
      const int64_t c = g.counts[e];
      longest = std::max(longest, c);
      for (int64_t k = 0; k < c; ++k) {
        for (int r = 0; r < batch_rank; ++r) *ix++ = coord[r];
        *ix++ = k;
      }
      for (int r = batch_rank - 1; r >= 0; --r) {
        if (++coord[r] < batch_shape.dim_size(r)) break;
        coord[r] = 0;
      }
    }
    int64_t* sh = shape.data<int64_t>();
    for (int r = 0; r < batch_rank; ++r) sh[r] = batch_shape.dim_size(r);
    sh[batch_rank] = longest;
    result->sparse_indices[i] = std::move(idx);
    result->sparse_values[i] = std::move(vals);
    result->sparse_shapes[i] = std::move(shape);
  }
  return absl::OkStatus();
}

// Variable-length dense: [batch..., longest rows, inner...], padded with the default.
Status BuildVarLenDense(const ParseConfig& config, const TensorShape& batch_shape, int64_t n,
                        std::vector<Gathered>& dense_var, ParseResult* result) {
  for (size_t d = 0; d < config.dense.size(); ++d) {
    const DenseSpec& s = config.dense[d];
    if (!s.variable_length) continue;
    Gathered& g = dense_var[d];
    g.counts.resize(n, 0);
    const int64_t stride = s.elements_per_stride;
    int64_t rows = 0;
    if (stride > 0) {
      for (int64_t c : g.counts) rows = std::max(rows, c / stride);
    }
    TensorShape shape = batch_shape;
    RETURN_IF_ERROR(shape.AddDim(rows));
    for (int k = 1; k < s.shape.dims(); ++k) RETURN_IF_ERROR(shape.AddDim(s.shape.dim_size(k)));
    ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(s.dtype, shape));
    const int64_t per_example = rows * stride;
    size_t from = 0;
    for (int64_t e = 0; e < n; ++e) {
      const int64_t c = g.counts[e];
      g.values.CopyTo(s.dtype, from, static_cast<size_t>(c), &out, e * per_example);
      from += static_cast<size_t>(c);
      if (c < per_example) FillWith(s.default_value, per_example - c, &out, e * per_example + c);
    }
    result->dense_values[d] = std::move(out);
  }
  return absl::OkStatus();
}

// Ragged: the values and the row splits over the examples.
Status BuildRagged(const ParseConfig& config, bool single, int64_t n, std::vector<Gathered>& ragged,
                   ParseResult* result) {
  const size_t nr = config.ragged.size();
  result->ragged_values.assign(nr, Tensor());
  result->ragged_splits.assign(nr, Tensor());
  for (size_t i = 0; i < nr; ++i) {
    Gathered& g = ragged[i];
    g.counts.resize(n, 0);
    const DType t = config.ragged[i].dtype;
    const int64_t total = static_cast<int64_t>(g.values.size(t));
    ASSIGN_OR_RETURN(Tensor vals, Tensor::Allocate(t, TensorShape({total})));
    g.values.CopyTo(t, 0, static_cast<size_t>(total), &vals, 0);
    // One example (a scalar input) has no rows to split: empty row_splits, as TensorFlow.
    Tensor splits(config.ragged[i].split_dtype, TensorShape({single ? 0 : n + 1}));
    int64_t acc = 0;
    for (int64_t e = 0; !single && e <= n; ++e) {
      if (config.ragged[i].split_dtype == DT_INT32) splits.data<int32_t>()[e] = static_cast<int32_t>(acc);
      else splits.data<int64_t>()[e] = acc;
      if (e < n) acc += g.counts[e];
    }
    result->ragged_values[i] = std::move(vals);
    result->ragged_splits[i] = std::move(splits);
  }
  return absl::OkStatus();
}

}  // namespace

Status ParseExamples(const ParseConfig& config, absl::Span<const std::string> serialized,
                     absl::Span<const std::string> names, const TensorShape& batch_shape, ParseResult* result) {
  const int64_t n = static_cast<int64_t>(serialized.size());
  if (n != batch_shape.num_elements()) {
    return errors::Internal("ParseExamples: ", n, " examples for a batch of shape ", batch_shape.DebugString());
  }
  if (!names.empty() && static_cast<int64_t>(names.size()) != n) {
    return errors::InvalidArgument("Expected len(names) == 0 or len(names) == len(serialized), got ", names.size(),
                                   " names for ", n, " examples");
  }
  // One example (a scalar input) has TensorFlow's single-example messages: no name, no index.
  const bool single = batch_shape.dims() == 0;
  RETURN_IF_ERROR(AllocateFixedDense(config, batch_shape, result));
  BatchReader reader(config, names, single, n, result);
  for (int64_t e = 0; e < n; ++e) RETURN_IF_ERROR(reader.Read(e, serialized[e]));
  RETURN_IF_ERROR(BuildSparse(config, batch_shape, n, reader.sparse(), result));
  RETURN_IF_ERROR(BuildVarLenDense(config, batch_shape, n, reader.dense_var(), result));
  return BuildRagged(config, single, n, reader.ragged(), result);
}

}  // namespace dflow::parsing
