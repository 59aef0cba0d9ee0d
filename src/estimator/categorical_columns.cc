// Categorical feature columns (vocabulary list, identity, hash bucket) and the dense wrappers of
// categorical columns (indicator, embedding). Every categorical column turns its feature into
// int64 ids of the feature's shape, -1 where the feature holds the missing marker ("" or -1).
#include <cmath>

#include "absl/strings/str_cat.h"
#include "dflow/array_ops.h"
#include "dflow/feature_column.h"
#include "dflow/feature_ops.h"
#include "dflow/lookup_ops.h"
#include "dflow/math_ops.h"
#include "estimator/column_util.h"
#include "ops/feature/feature_ops.h"

namespace dflow::feature_column {

using internal::Built;

namespace {

constexpr int64_t kMaxBuckets = int64_t{1} << 40;

// The feature `key` checked to be [batch] or [batch, k] of a string type (want_string) or an
// integer type; integer features come back as `int_dtype`.
StatusOr<Output> CategoricalInput(const Scope& s, TransformCache* cache, const std::string& key,
                                  const std::string& column, bool want_string, DType int_dtype = DT_INT64) {
  ASSIGN_OR_RETURN(Output raw, cache->Get(key, column));
  RETURN_IF_ERROR(internal::CheckCategoricalRank(raw, column));
  const DType t = BaseType(raw.dtype());
  if (want_string ? t != DT_STRING : !internal::IsIntegerType(t)) {
    return errors::InvalidArgument("Feature column '", column, "' needs a ", want_string ? "string" : "integer",
                                   " feature (its dtype must be compatible), got ", DTypeString(t), " (", raw.name(),
                                   ")");
  }
  if (!want_string && t != int_dtype) raw = ops::Cast(s, raw, int_dtype);
  return Built(s, raw);
}

// ids where the input is present, -1 where it holds the missing marker.
StatusOr<Output> MaskMissing(const Scope& s, const Output& input, const Output& ids) {
  Output missing = BaseType(input.dtype()) == DT_STRING ? ops::Equal(s, input, std::string())
                                                        : ops::Equal(s, input, -1);
  return Built(s, ops::SelectV2(s, missing, int64_t{-1}, ids));
}

// ---- vocabulary list ----

class VocabularyColumn : public FeatureColumn {
 public:
  VocabularyColumn(std::string key, Tensor vocab, int64_t oov, int64_t def, Status status)
      : FeatureColumn(key, std::move(status)), key_(std::move(key)), vocab_(std::move(vocab)), oov_(oov), def_(def) {}
  bool is_categorical() const override { return true; }
  int64_t num_buckets() const override { return status().ok() ? vocab_.NumElements() + oov_ : 0; }

 protected:
  StatusOr<Output> MakeIds(const Scope& s, TransformCache* cache) const override {
    const bool strings = vocab_.dtype() == DT_STRING;
    ASSIGN_OR_RETURN(Output x, CategoricalInput(s, cache, key_, name(), strings, DT_INT64));
    // TensorFlow's graph: index_table_from_tensor (a HashTableV2 whose InitializeTableV2 is a table
    // initializer) looked up with LookupTableFindV2, OOV keys hashed into buckets after the vocabulary.
    Output ids = IndexTableLookup(s, vocab_, x, oov_, def_);
    return MaskMissing(s, x, ids);
  }

 private:
  std::string key_;
  Tensor vocab_;
  int64_t oov_, def_;
};

Status CheckVocabularyArgs(const std::string& key, const Tensor& vocab, int64_t oov, int64_t def) {
  if (key.empty()) return errors::InvalidArgument("CategoricalColumnWithVocabularyList: key must not be empty");
  if (vocab.NumElements() == 0) {
    return errors::InvalidArgument("CategoricalColumnWithVocabularyList '", key,
                                   "': vocabulary_list must be non-empty");
  }
  if (oov > kMaxBuckets) return errors::InvalidArgument("Invalid num_oov_buckets ", oov, " for column '", key, "'");
  Status s = feature::CheckVocabulary(vocab, oov, def);
  if (!s.ok()) return errors::InvalidArgument("CategoricalColumnWithVocabularyList '", key, "': ", s.message());
  return absl::OkStatus();
}

// ---- identity ----

class IdentityColumn : public FeatureColumn {
 public:
  IdentityColumn(std::string key, int64_t n, int64_t def, Status status)
      : FeatureColumn(key, std::move(status)), key_(std::move(key)), n_(n), def_(def) {}
  bool is_categorical() const override { return true; }
  int64_t num_buckets() const override { return status().ok() ? n_ : 0; }

 protected:
  StatusOr<Output> MakeIds(const Scope& s, TransformCache* cache) const override {
    ASSIGN_OR_RETURN(Output x, CategoricalInput(s, cache, key_, name(), /*want_string=*/false));
    Output missing = ops::Equal(s, x, int64_t{-1});
    if (def_ >= 0) {
      Output outside = ops::LogicalOr(s, ops::Less(s, x, int64_t{0}), ops::GreaterEqual(s, x, n_));
      Output replace = ops::LogicalAnd(s, outside, ops::LogicalNot(s, missing));
      return Built(s, ops::SelectV2(s, replace, def_, x));
    }
    // Without a default, an id outside [0, num_buckets) (other than -1) fails the step.
    Output flat = ops::Reshape(s, x, {-1});
    Operation below = ops::Assert(s.WithOpName("assert_less_than_num_buckets"), ops::Less(s, ops::Max(s, flat, 0), n_),
                                  {Input(absl::StrCat("Bucket index for categorical column \"", name(),
                                                      "\" exceeds number of buckets (", n_, "); ids:")),
                                   flat});
    Operation above = ops::Assert(s.WithOpName("assert_greater_or_equal_0"),
                                  ops::GreaterEqual(s, ops::Min(s, flat, 0), int64_t{-1}),
                                  {Input(absl::StrCat("Negative bucket index for categorical column \"", name(),
                                                      "\" (only -1, missing, may be negative); ids:")),
                                   flat});
    if (!s.ok()) return s.status();
    return Built(s, ops::Identity(s.WithControlDependencies({below, above}), x));
  }

 private:
  std::string key_;
  int64_t n_, def_;
};

// ---- hash bucket ----

class HashColumn : public FeatureColumn {
 public:
  HashColumn(std::string key, int64_t size, DType dtype, Status status)
      : FeatureColumn(key, std::move(status)), key_(std::move(key)), size_(size), dtype_(dtype) {}
  bool is_categorical() const override { return true; }
  int64_t num_buckets() const override { return status().ok() ? size_ : 0; }

 protected:
  StatusOr<Output> MakeIds(const Scope& s, TransformCache* cache) const override {
    const bool strings = dtype_ == DT_STRING;
    ASSIGN_OR_RETURN(Output x, CategoricalInput(s, cache, key_, name(), strings, dtype_));
    // Integers are hashed as their decimal text, as TensorFlow's as_string + hash does.
    Output text = strings ? x : ops::AsString(s, x);
    return MaskMissing(s, x, ops::StringToHashBucketFast(s, text, size_));
  }

 private:
  std::string key_;
  int64_t size_;
  DType dtype_;
};

// ---- indicator and embedding ----

Status CheckCategorical(const Column& c, const char* who) {
  if (!c) return errors::InvalidArgument(who, ": categorical_column is null");
  RETURN_IF_ERROR(c->status());
  if (!c->is_categorical()) {
    return errors::InvalidArgument(who, ": '", c->name(), "' is not a categorical column");
  }
  return absl::OkStatus();
}

class IndicatorColumnImpl : public FeatureColumn {
 public:
  IndicatorColumnImpl(Column cat, Status status)
      : FeatureColumn((cat ? cat->name() : std::string("?")) + "_indicator", std::move(status)), cat_(std::move(cat)) {}
  bool is_dense() const override { return true; }
  int64_t dense_dimension() const override { return status().ok() ? cat_->num_buckets() : 0; }

  StatusOr<Output> DenseTensor(const Scope& s, TransformCache* cache) const override {
    RETURN_IF_ERROR(status());
    ASSIGN_OR_RETURN(Output ids, cat_->IdTensor(s, cache));
    const int64_t n = cat_->num_buckets();
    if (n > (int64_t{1} << 31) - 1) {
      return errors::InvalidArgument("IndicatorColumn '", name(), "': ", n, " buckets are too many for a dense vector");
    }
    // One-hot rows of the ids (a missing -1 is all zeros), summed over the example's values.
    Output hot = ops::OneHot(s, internal::ToBatchMatrix(s, ids), static_cast<int32_t>(n), 1.0f, 0.0f);
    return Built(s, ops::Sum(s, hot, 1));
  }

 private:
  Column cat_;
};

class EmbeddingColumnImpl : public FeatureColumn {
 public:
  EmbeddingColumnImpl(Column cat, int64_t dimension, std::string combiner, init::Initializer init, Status status)
      : FeatureColumn((cat ? cat->name() : std::string("?")) + "_embedding", std::move(status)),
        cat_(std::move(cat)),
        dimension_(dimension),
        combiner_(std::move(combiner)),
        init_(std::move(init)) {}
  bool is_dense() const override { return true; }
  int64_t dense_dimension() const override { return status().ok() ? dimension_ : 0; }

  StatusOr<Output> DenseTensor(const Scope& s, TransformCache* cache) const override {
    RETURN_IF_ERROR(status());
    ASSIGN_OR_RETURN(Output ids, cat_->IdTensor(s, cache));
    Variable table = Variable::Create(s.WithOpName("embedding_weights"), TensorShape({cat_->num_buckets(), dimension_}),
                                      DT_FLOAT, init_);
    if (!s.ok()) return s.status();
    return CombineRows(s, table.read(), ids, combiner_);
  }

 private:
  Column cat_;
  int64_t dimension_;
  std::string combiner_;
  init::Initializer init_;
};

}  // namespace

Column CategoricalColumnWithVocabularyList(const std::string& key, const std::vector<std::string>& vocabulary,
                                           int64_t num_oov_buckets, int64_t default_value) {
  Tensor vocab(DT_STRING, TensorShape({static_cast<int64_t>(vocabulary.size())}));
  for (size_t i = 0; i < vocabulary.size(); ++i) vocab.data<std::string>()[i] = vocabulary[i];
  Status s = CheckVocabularyArgs(key, vocab, num_oov_buckets, default_value);
  return std::make_shared<VocabularyColumn>(key, std::move(vocab), num_oov_buckets, default_value, s);
}

Column CategoricalColumnWithVocabularyList(const std::string& key, const std::vector<int64_t>& vocabulary,
                                           int64_t num_oov_buckets, int64_t default_value, DType dtype) {
  Status s;
  Tensor vocab;
  if (dtype == DT_INT64) {
    vocab = Tensor(DT_INT64, TensorShape({static_cast<int64_t>(vocabulary.size())}));
    for (size_t i = 0; i < vocabulary.size(); ++i) vocab.data<int64_t>()[i] = vocabulary[i];
  } else if (dtype == DT_INT32) {
    vocab = Tensor(DT_INT32, TensorShape({static_cast<int64_t>(vocabulary.size())}));
    for (size_t i = 0; i < vocabulary.size() && s.ok(); ++i) {
      if (vocabulary[i] < INT32_MIN || vocabulary[i] > INT32_MAX) {
        s = errors::InvalidArgument("CategoricalColumnWithVocabularyList '", key, "': ", vocabulary[i],
                                    " does not fit the column's dtype int32");
      }
      vocab.data<int32_t>()[i] = static_cast<int32_t>(vocabulary[i]);
    }
  } else {
    s = errors::InvalidArgument("CategoricalColumnWithVocabularyList '", key,
                                "': dtype must be int32 or int64 for an integer vocabulary, got ", DTypeString(dtype));
  }
  if (s.ok()) s = CheckVocabularyArgs(key, vocab, num_oov_buckets, default_value);
  return std::make_shared<VocabularyColumn>(key, std::move(vocab), num_oov_buckets, default_value, s);
}

Column CategoricalColumnWithIdentity(const std::string& key, int64_t num_buckets, int64_t default_value) {
  Status s;
  if (key.empty()) s = errors::InvalidArgument("CategoricalColumnWithIdentity: key must not be empty");
  else if (num_buckets < 1 || num_buckets > kMaxBuckets) {
    s = errors::InvalidArgument("CategoricalColumnWithIdentity '", key, "': Invalid num_buckets ", num_buckets);
  } else if (default_value != -1 && (default_value < 0 || default_value >= num_buckets)) {
    s = errors::InvalidArgument("CategoricalColumnWithIdentity '", key, "': Invalid default_value ", default_value,
                                ": it must be in [0, ", num_buckets, ")");
  }
  return std::make_shared<IdentityColumn>(key, num_buckets, default_value, s);
}

Column CategoricalColumnWithHashBucket(const std::string& key, int64_t hash_bucket_size, DType dtype) {
  Status s;
  if (key.empty()) s = errors::InvalidArgument("CategoricalColumnWithHashBucket: key must not be empty");
  else if (hash_bucket_size < 1 || hash_bucket_size > kMaxBuckets) {
    s = errors::InvalidArgument("CategoricalColumnWithHashBucket '", key,
                                "': hash_bucket_size must be at least 1, got ", hash_bucket_size);
  } else if (dtype != DT_STRING && dtype != DT_INT32 && dtype != DT_INT64) {
    s = errors::InvalidArgument("CategoricalColumnWithHashBucket '", key, "': dtype must be string or integer, got ",
                                DTypeString(dtype));
  }
  return std::make_shared<HashColumn>(key, hash_bucket_size, dtype, s);
}

Column IndicatorColumn(const Column& categorical_column) {
  return std::make_shared<IndicatorColumnImpl>(categorical_column,
                                               CheckCategorical(categorical_column, "IndicatorColumn"));
}

Column EmbeddingColumn(const Column& categorical_column, int64_t dimension, const std::string& combiner) {
  const double stddev = dimension > 0 ? 1.0 / std::sqrt(static_cast<double>(dimension)) : 1.0;
  return EmbeddingColumn(categorical_column, dimension, combiner, init::TruncatedNormal(0.0, stddev));
}

Column EmbeddingColumn(const Column& categorical_column, int64_t dimension, const std::string& combiner,
                       const init::Initializer& initializer) {
  Status s = CheckCategorical(categorical_column, "EmbeddingColumn");
  if (s.ok() && (dimension < 1 || dimension > kMaxBuckets)) {
    s = errors::InvalidArgument("EmbeddingColumn '", categorical_column->name(), "': Invalid dimension ", dimension);
  }
  if (s.ok() && combiner != "mean" && combiner != "sum" && combiner != "sqrtn") {
    s = errors::InvalidArgument("EmbeddingColumn '", categorical_column->name(), "': unknown combiner '", combiner,
                                "' (expected \"mean\", \"sum\" or \"sqrtn\")");
  }
  return std::make_shared<EmbeddingColumnImpl>(categorical_column, dimension, combiner, initializer, s);
}

}  // namespace dflow::feature_column
