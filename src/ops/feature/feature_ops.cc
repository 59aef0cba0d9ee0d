// Bucketize (TensorFlow's math op), StringToHashBucketFast and AsString (its string ops; AsString
// for integers and bools only) and VocabularyLookup:
// the id-making ops of feature columns. None is differentiable (ids are piecewise constant).
//
// VocabularyLookup is dflow's own: TensorFlow looks a vocabulary up through a table resource
// (HashTableV2 filled by LookupTableImportV2, read by LookupTableFindV2) plus a hash of the misses
// (IdTableWithHashBuckets). Here the vocabulary is an attr and the kernel builds its hash map once,
// so there is no table to initialize before the first step, nothing stateful to place, and the ids
// are TensorFlow's: index in the vocabulary, else vocabulary size + Fingerprint64(key) % buckets
// (integer keys hashed by their decimal text, as TensorFlow's as_string does), else default_value.
#include "ops/feature/feature_ops.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/fingerprint.h"
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/array/array_util.h"

namespace dflow {
namespace {

using array::KernelError;

// ---- Bucketize ----

Status CheckBoundaries(const std::vector<float>& b) {
  for (float x : b) {
    if (std::isnan(x)) return errors::InvalidArgument("Expected sorted boundaries, got a NaN");
  }
  if (!std::is_sorted(b.begin(), b.end())) return errors::InvalidArgument("Expected sorted boundaries");
  return absl::OkStatus();
}

// The boundaries are checked by the kernel (when the graph runs), as TensorFlow's are.
Status BucketizeShape(InferenceContext* c) {
  std::vector<float> boundaries;
  RETURN_IF_ERROR(c->GetAttr("boundaries", &boundaries));
  return UnchangedShape(c);
}

template <typename T>
class BucketizeOp : public OpKernel {
 public:
  explicit BucketizeOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    Status s = ctx->GetAttr("boundaries", &boundaries_);
    if (s.ok()) s = CheckBoundaries(boundaries_);
    ctx->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    const T* in = x.data<T>();
    int32_t* o = out->data<int32_t>();
    // Bucket i holds boundaries[i-1] <= v < boundaries[i]: the index of the first boundary above v.
    // The comparison is TensorFlow's (T against float), so ties resolve the same way.
    for (int64_t i = 0, n = x.NumElements(); i < n; ++i) {
      o[i] = static_cast<int32_t>(std::upper_bound(boundaries_.begin(), boundaries_.end(), in[i]) -
                                  boundaries_.begin());
    }
  }

 private:
  std::vector<float> boundaries_;
};

// ---- StringToHashBucketFast ----

class StringToHashBucketFastOp : public OpKernel {
 public:
  explicit StringToHashBucketFastOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("num_buckets", &num_buckets_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    const std::string* in = x.data<std::string>();
    int64_t* o = out->data<int64_t>();
    const uint64_t buckets = static_cast<uint64_t>(num_buckets_);
    for (int64_t i = 0, n = x.NumElements(); i < n; ++i) {
      o[i] = static_cast<int64_t>(Fingerprint64(in[i]) % buckets);
    }
  }

 private:
  int64_t num_buckets_ = 1;
};

// ---- AsString (integers and bools) ----

Status CheckAsStringAttrs(int64_t width, const std::string& fill) {
  if (fill.size() > 1) return errors::InvalidArgument("Fill string must be one or fewer characters");
  if (!fill.empty() && fill != " " && fill != "0") {
    return errors::InvalidArgument("AsString: fill '", fill, "' is not supported (only \" \" and \"0\")");
  }
  if (width > 4096) return errors::InvalidArgument("AsString: width ", width, " is larger than 4096");
  return absl::OkStatus();
}

// The attrs are checked by the kernel (when the graph runs), as TensorFlow's are.
Status AsStringShape(InferenceContext* c) { return UnchangedShape(c); }

template <typename T>
class AsStringOp : public OpKernel {
 public:
  explicit AsStringOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    int64_t precision = -1;
    bool scientific = false, shortest = false;
    Status s = ctx->GetAttr("width", &width_);
    if (s.ok()) s = ctx->GetAttr("fill", &fill_);
    if (s.ok()) s = ctx->GetAttr("precision", &precision);
    if (s.ok()) s = ctx->GetAttr("scientific", &scientific);
    if (s.ok()) s = ctx->GetAttr("shortest", &shortest);
    // TensorFlow's checks, in its order: integers and bools take neither notation nor precision.
    const std::string type = DTypeString(DTypeOf<T>::value);
    if (s.ok() && !std::is_same_v<T, bool> && (scientific || shortest)) {
      s = errors::InvalidArgument("scientific and shortest format not supported for datatype ", type);
    }
    if (s.ok() && precision >= 0) s = errors::InvalidArgument("precision not supported for datatype ", type);
    if (s.ok()) s = CheckAsStringAttrs(width_, fill_);
    ctx->SetStatus(s);
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    const T* in = x.data<T>();
    std::string* o = out->data<std::string>();
    for (int64_t i = 0, n = x.NumElements(); i < n; ++i) {
      std::string s;
      if constexpr (std::is_same_v<T, bool>) s = in[i] ? "true" : "false";
      else s = absl::StrCat(in[i]);
      if (!std::is_same_v<T, bool> && width_ > static_cast<int64_t>(s.size())) {  // bools: no padding
        const size_t pad = static_cast<size_t>(width_) - s.size();
        if (fill_ == "0" && !s.empty() && s[0] == '-') s.insert(1, pad, '0');  // printf's %0*d
        else s.insert(0, pad, fill_ == "0" ? '0' : ' ');
      }
      o[i] = std::move(s);
    }
  }

 private:
  int64_t width_ = -1;
  std::string fill_;
};

// ---- VocabularyLookup ----

template <typename K>
Status FindDuplicate(const Tensor& vocab) {
  std::unordered_map<K, int64_t> seen;
  const K* v = vocab.data<K>();
  for (int64_t i = 0; i < vocab.NumElements(); ++i) {
    auto [it, fresh] = seen.emplace(v[i], i);
    if (!fresh) {
      return errors::InvalidArgument("Duplicate keys in the vocabulary: entries ", it->second, " and ", i, " are both ",
                                     absl::StrCat(v[i]));
    }
  }
  return absl::OkStatus();
}

Status VocabularyLookupShape(InferenceContext* c) {
  Tensor vocab;
  int64_t oov = 0, def = -1;
  RETURN_IF_ERROR(c->GetAttr("vocabulary", &vocab));
  RETURN_IF_ERROR(c->GetAttr("num_oov_buckets", &oov));
  RETURN_IF_ERROR(c->GetAttr("default_value", &def));
  RETURN_IF_ERROR(feature::CheckVocabulary(vocab, oov, def));
  if (vocab.dtype() != c->input_type(0)) {
    return errors::InvalidArgument("The vocabulary holds ", DTypeString(vocab.dtype()), " keys but the input is ",
                                   DTypeString(c->input_type(0)), ": dtype must be compatible");
  }
  return UnchangedShape(c);
}

template <typename K>
class VocabularyLookupOp : public OpKernel {
 public:
  explicit VocabularyLookupOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    Tensor vocab;
    Status s = ctx->GetAttr("vocabulary", &vocab);
    if (s.ok()) s = ctx->GetAttr("num_oov_buckets", &num_oov_buckets_);
    if (s.ok()) s = ctx->GetAttr("default_value", &default_value_);
    if (s.ok()) s = feature::CheckVocabulary(vocab, num_oov_buckets_, default_value_);
    if (s.ok() && vocab.dtype() != DTypeOf<K>::value) {
      s = errors::InvalidArgument("The vocabulary holds ", DTypeString(vocab.dtype()), " keys, the input ",
                                  DTypeString(DTypeOf<K>::value));
    }
    if (!s.ok()) {
      ctx->SetStatus(s);
      return;
    }
    const K* v = vocab.data<K>();
    size_ = vocab.NumElements();
    index_.reserve(static_cast<size_t>(size_));
    for (int64_t i = 0; i < size_; ++i) index_.emplace(v[i], i);
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    const K* in = x.data<K>();
    int64_t* o = out->data<int64_t>();
    for (int64_t i = 0, n = x.NumElements(); i < n; ++i) {
      auto it = index_.find(in[i]);
      if (it != index_.end()) {
        o[i] = it->second;
      } else if (num_oov_buckets_ > 0) {
        uint64_t h;
        if constexpr (std::is_same_v<K, std::string>) h = Fingerprint64(in[i]);
        else h = Fingerprint64(absl::StrCat(in[i]));
        o[i] = size_ + static_cast<int64_t>(h % static_cast<uint64_t>(num_oov_buckets_));
      } else {
        o[i] = default_value_;
      }
    }
  }

 private:
  std::unordered_map<K, int64_t> index_;
  int64_t size_ = 0;
  int64_t num_oov_buckets_ = 0;
  int64_t default_value_ = -1;
};

}  // namespace

namespace feature {
Status CheckVocabulary(const Tensor& vocab, int64_t num_oov_buckets, int64_t default_value) {
  if (num_oov_buckets < 0) return errors::InvalidArgument("Invalid num_oov_buckets ", num_oov_buckets);
  if (num_oov_buckets > 0 && default_value != -1) {
    return errors::InvalidArgument("Can't specify both num_oov_buckets and default_value: num_oov_buckets ",
                                   num_oov_buckets, ", default_value ", default_value);
  }
  const DType t = vocab.dtype();
  if (t != DT_STRING && t != DT_INT32 && t != DT_INT64) {
    return errors::InvalidArgument("The vocabulary dtype must be string or integer, got ", DTypeString(t));
  }
  if (vocab.dims() != 1 || vocab.NumElements() == 0) {
    return errors::InvalidArgument("The vocabulary must be a non-empty vector, got shape ",
                                   vocab.shape().DebugString());
  }
  if (t == DT_STRING) return FindDuplicate<std::string>(vocab);
  if (t == DT_INT32) return FindDuplicate<int32_t>(vocab);
  return FindDuplicate<int64_t>(vocab);
}
}  // namespace feature

void RegisterFeatureOps() {
  RegisterOp(OpDefBuilder("Bucketize")
                 .Input("input: T")
                 .Output("output: int32")
                 .Attr("T: {int32, int64, float, double}")
                 .Attr("boundaries: list(float)")
                 .SetShapeFn(BucketizeShape)
                 .Doc("The bucket of each value: i where boundaries[i-1] <= value < boundaries[i]."));
  RegisterKernel<BucketizeOp<int32_t>>(KernelBuilder("Bucketize").TypeConstraint<int32_t>("T"));
  RegisterKernel<BucketizeOp<int64_t>>(KernelBuilder("Bucketize").TypeConstraint<int64_t>("T"));
  RegisterKernel<BucketizeOp<float>>(KernelBuilder("Bucketize").TypeConstraint<float>("T"));
  RegisterKernel<BucketizeOp<double>>(KernelBuilder("Bucketize").TypeConstraint<double>("T"));

  RegisterOp(OpDefBuilder("StringToHashBucketFast")
                 .Input("input: string")
                 .Output("output: int64")
                 .Attr("num_buckets: int >= 1")
                 .SetShapeFn(UnchangedShape)
                 .Doc("Fingerprint64(input) % num_buckets for every string."));
  RegisterKernel<StringToHashBucketFastOp>(KernelBuilder("StringToHashBucketFast"));

  RegisterOp(OpDefBuilder("VocabularyLookup")
                 .Input("keys: T")
                 .Output("values: int64")
                 .Attr("T: {string, int32, int64}")
                 .Attr("vocabulary: tensor")
                 .Attr("num_oov_buckets: int >= 0 = 0")
                 .Attr("default_value: int = -1")
                 .SetShapeFn(VocabularyLookupShape)
                 .Doc("The index of each key in `vocabulary`; a miss gets size + Fingerprint64(key) % "
                      "num_oov_buckets, or default_value without OOV buckets."));
  RegisterKernel<VocabularyLookupOp<std::string>>(KernelBuilder("VocabularyLookup").TypeConstraint<std::string>("T"));
  RegisterKernel<VocabularyLookupOp<int32_t>>(KernelBuilder("VocabularyLookup").TypeConstraint<int32_t>("T"));
  RegisterKernel<VocabularyLookupOp<int64_t>>(KernelBuilder("VocabularyLookup").TypeConstraint<int64_t>("T"));

  RegisterOp(OpDefBuilder("AsString")
                 .Input("input: T")
                 .Output("output: string")
                 .Attr("T: {int32, int64, bool}")
                 .Attr("precision: int = -1")
                 .Attr("scientific: bool = false")
                 .Attr("shortest: bool = false")
                 .Attr("width: int = -1")
                 .Attr("fill: string = ''")
                 .SetShapeFn(AsStringShape)
                 .Doc("The decimal text of each integer (\"true\"/\"false\" for bools), right-aligned in `width` "
                      "with `fill` (\" \" or \"0\")."));
  RegisterKernel<AsStringOp<int32_t>>(KernelBuilder("AsString").TypeConstraint<int32_t>("T"));
  RegisterKernel<AsStringOp<int64_t>>(KernelBuilder("AsString").TypeConstraint<int64_t>("T"));
  RegisterKernel<AsStringOp<bool>>(KernelBuilder("AsString").TypeConstraint<bool>("T"));

  for (const char* op : {"Bucketize", "StringToHashBucketFast", "VocabularyLookup", "AsString"}) {
    RegisterNoGradient(op);
  }
}

}  // namespace dflow
