// Feature columns: the base class, numeric and bucketized columns, and the two consumers,
// InputLayer and LinearModel. Categorical columns are in categorical_columns.cc.
#include "dflow/feature_column.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_join.h"
#include "base/status.h"
#include "dflow/array_ops.h"
#include "dflow/feature_ops.h"
#include "dflow/math_ops.h"
#include "dflow/nn_ops.h"
#include "estimator/column_util.h"

namespace dflow::feature_column {

using internal::Built;

namespace internal {

Output BatchSize(const Scope& s, const Output& x) { return ops::Slice(s, ops::Shape(s, x), {0}, {1}); }

Output ToBatchMatrix(const Scope& s, const Output& x, int64_t width) {
  // When every dimension but the batch is known and they make `width`, the batch is whatever
  // is left: [-1, width], one constant instead of reading the shape each step.
  const PartialTensorShape& shape = x.shape();
  bool known = !shape.unknown_rank() && shape.dims() >= 1 && width >= 1;
  int64_t rest = 1;
  for (int d = 1; known && d < shape.dims(); ++d) {
    known = shape.dim_size(d) >= 0;
    rest *= known ? shape.dim_size(d) : 1;
  }
  if (known && rest == width) {
    if (shape.dims() == 2) return x;
    return ops::Reshape(s, x, ops::Const(s, Input::Initializer(std::vector<int32_t>{-1, static_cast<int32_t>(width)})));
  }
  Output w = ops::Const(s, Input::Initializer(std::vector<int32_t>{static_cast<int32_t>(width)}));
  return ops::Reshape(s, x, ops::Concat(s, {BatchSize(s, x), w}, 0));
}

Status CheckCategoricalRank(const Output& x, const std::string& column) {
  const PartialTensorShape& shape = x.shape();
  if (!shape.unknown_rank() && (shape.dims() < 1 || shape.dims() > 2)) {
    return errors::InvalidArgument("Feature column '", column, "' needs a feature of shape [batch] or [batch, k], got ",
                                   shape.DebugString(), " (", x.name(), ")");
  }
  return absl::OkStatus();
}

bool IsIntegerType(DType t) { return t == DT_INT32 || t == DT_INT64; }

}  // namespace internal

StatusOr<Output> TransformCache::Get(const std::string& key, const std::string& column) const {
  auto it = features_.find(key);
  if (it == features_.end()) {
    std::vector<std::string> have;
    for (const auto& [k, v] : features_) have.push_back(k);
    return errors::InvalidArgument("Feature '", key, "' of column '", column,
                                   "' is not in the features (they are: ", absl::StrJoin(have, ", "), ")");
  }
  if (!it->second.valid()) return errors::InvalidArgument("Feature '", key, "' is an invalid Output");
  return it->second;
}

StatusOr<Output> FeatureColumn::DenseTensor(const Scope& scope, TransformCache* cache) const {
  return errors::InvalidArgument("Feature column '", name_, "' is not a dense column");
}

StatusOr<Output> FeatureColumn::MakeIds(const Scope& scope, TransformCache* cache) const {
  return errors::InvalidArgument("Feature column '", name_, "' is not a categorical column");
}

StatusOr<Output> FeatureColumn::IdTensor(const Scope& scope, TransformCache* cache) const {
  RETURN_IF_ERROR(status_);
  auto it = cache->ids().find(this);
  if (it != cache->ids().end()) return it->second;
  ASSIGN_OR_RETURN(Output ids, MakeIds(scope, cache));
  cache->ids()[this] = ids;
  return ids;
}

// ---- numeric ----

namespace {

class NumericColumnImpl : public FeatureColumn {
 public:
  NumericColumnImpl(std::string key, std::vector<int64_t> shape, DType dtype, NormalizerFn fn, Status status,
                    int64_t dimension)
      : FeatureColumn(key, std::move(status)),
        key_(std::move(key)),
        shape_(std::move(shape)),
        dtype_(dtype),
        normalizer_(std::move(fn)),
        dimension_(dimension) {}

  bool is_dense() const override { return true; }
  int64_t dense_dimension() const override { return dimension_; }

  StatusOr<Output> DenseTensor(const Scope& scope, TransformCache* cache) const override {
    RETURN_IF_ERROR(status());
    ASSIGN_OR_RETURN(Output raw, cache->Get(key_, name()));
    const DType t = BaseType(raw.dtype());
    if (t != DT_FLOAT && t != DT_DOUBLE && t != DT_INT32 && t != DT_INT64) {
      return errors::InvalidArgument("Numeric column '", name(), "' needs a number feature, got ", DTypeString(t), " (",
                                     raw.name(), ")");
    }
    const PartialTensorShape& shape = raw.shape();
    if (!shape.unknown_rank()) {
      if (shape.dims() == 0) {
        return errors::InvalidArgument("Numeric column '", name(), "' needs a feature with a batch dimension, got a ",
                                       "scalar (", raw.name(), ")");
      }
      int64_t per = 1;
      bool known = true;
      for (int i = 1; i < shape.dims(); ++i) {
        if (shape.dim_size(i) < 0) known = false;
        else per *= shape.dim_size(i);
      }
      if (known && per != dimension_) {
        return errors::InvalidArgument("Numeric column '", name(), "' of shape [", absl::StrJoin(shape_, ","), "] (",
                                       dimension_, " values per example) got a feature of shape ", shape.DebugString(),
                                       " (", per, " per example)");
      }
    }
    Output x = raw;
    if (normalizer_) {
      x = normalizer_(scope.NewSubScope("normalizer"), raw);
      RETURN_IF_ERROR(scope.status());
      if (!x.valid()) return errors::InvalidArgument("The normalizer_fn of column '", name(), "' returned nothing");
    }
    if (BaseType(x.dtype()) != DT_FLOAT) x = ops::Cast(scope, x, DT_FLOAT);
    return Built(scope, internal::ToBatchMatrix(scope, x, dimension_));
  }

  DType dtype() const { return dtype_; }

 private:
  std::string key_;
  std::vector<int64_t> shape_;
  DType dtype_;
  NormalizerFn normalizer_;
  int64_t dimension_;
};

// ---- bucketized ----

class BucketizedColumnImpl : public FeatureColumn {
 public:
  BucketizedColumnImpl(Column source, std::vector<float> boundaries, Status status)
      : FeatureColumn((source ? source->name() : std::string("?")) + "_bucketized", std::move(status)),
        source_(std::move(source)),
        boundaries_(std::move(boundaries)) {}

  bool is_dense() const override { return true; }
  int64_t dense_dimension() const override { return num_buckets(); }
  bool is_categorical() const override { return true; }
  int64_t num_buckets() const override {
    return status().ok() ? source_->dense_dimension() * static_cast<int64_t>(boundaries_.size() + 1) : 0;
  }

  StatusOr<Output> DenseTensor(const Scope& scope, TransformCache* cache) const override {
    RETURN_IF_ERROR(status());
    ASSIGN_OR_RETURN(Output b, Buckets(scope, cache));
    const int64_t depth = static_cast<int64_t>(boundaries_.size()) + 1;
    Output hot = ops::OneHot(scope, b, static_cast<int32_t>(depth), 1.0f, 0.0f);
    return Built(scope, internal::ToBatchMatrix(scope, hot, num_buckets()));
  }

 protected:
  StatusOr<Output> MakeIds(const Scope& scope, TransformCache* cache) const override {
    ASSIGN_OR_RETURN(Output b, Buckets(scope, cache));
    const int64_t depth = static_cast<int64_t>(boundaries_.size()) + 1;
    // Element j's bucket is id j * depth + bucket.
    Output offsets = ops::Mul(scope, ops::Range(scope, int64_t{0}, source_->dense_dimension(), int64_t{1}), depth);
    return Built(scope, ops::Add(scope, ops::Cast(scope, b, DT_INT64), offsets));
  }

 private:
  // [batch, source dimension] int32 buckets.
  StatusOr<Output> Buckets(const Scope& scope, TransformCache* cache) const {
    ASSIGN_OR_RETURN(Output x, source_->DenseTensor(scope, cache));
    return Built(scope, ops::Bucketize(scope, x, boundaries_));
  }

  Column source_;
  std::vector<float> boundaries_;
};

}  // namespace

Column NumericColumn(const std::string& key, const std::vector<int64_t>& shape, const std::vector<float>& default_value,
                     DType dtype, NormalizerFn normalizer_fn) {
  Status s;
  int64_t dimension = 1;
  if (key.empty()) s = errors::InvalidArgument("NumericColumn: key must not be empty");
  for (int64_t d : shape) {
    if (d < 1 && s.ok()) {
      s = errors::InvalidArgument("NumericColumn '", key, "': shape dimensions must be positive, got [",
                                  absl::StrJoin(shape, ","), "]");
    }
    if (d >= 1) dimension = dimension > (int64_t{1} << 40) / d ? (int64_t{1} << 40) : dimension * d;
  }
  if (s.ok() && dimension >= (int64_t{1} << 40)) {
    s = errors::InvalidArgument("NumericColumn '", key, "': shape [", absl::StrJoin(shape, ","), "] is too large");
  }
  if (s.ok() && dtype != DT_FLOAT && dtype != DT_DOUBLE && dtype != DT_INT32 && dtype != DT_INT64) {
    s = errors::InvalidArgument("NumericColumn '", key, "': dtype must be convertible to float, got ",
                                DTypeString(dtype));
  }
  if (s.ok() && !default_value.empty() && static_cast<int64_t>(default_value.size()) != 1 &&
      static_cast<int64_t>(default_value.size()) != dimension) {
    s = errors::InvalidArgument("NumericColumn '", key, "': default_value has ", default_value.size(),
                                " values, but the shape holds ", dimension);
  }
  return std::make_shared<NumericColumnImpl>(key, shape, dtype, std::move(normalizer_fn), s, s.ok() ? dimension : 0);
}

Column BucketizedColumn(const Column& source_column, const std::vector<float>& boundaries) {
  Status s;
  if (!source_column || dynamic_cast<const NumericColumnImpl*>(source_column.get()) == nullptr) {
    s = errors::InvalidArgument("BucketizedColumn: source_column must be a column made by NumericColumn, got '",
                                source_column ? source_column->name() : std::string("null"), "'");
  } else if (!source_column->status().ok()) {
    s = source_column->status();
  } else if (boundaries.empty()) {
    s = errors::InvalidArgument("BucketizedColumn '", source_column->name(), "': boundaries must not be empty");
  } else {
    for (size_t i = 0; i < boundaries.size(); ++i) {
      if (std::isnan(boundaries[i]) || (i > 0 && !(boundaries[i - 1] < boundaries[i]))) {
        s = errors::InvalidArgument("BucketizedColumn '", source_column->name(),
                                    "': boundaries must be a sorted list of distinct numbers, got [",
                                    absl::StrJoin(boundaries, ", "), "]");
        break;
      }
    }
  }
  return std::make_shared<BucketizedColumnImpl>(source_column, boundaries, s);
}

// ---- consumers ----

namespace {

// Checks the columns and returns them sorted by name.
StatusOr<std::vector<Column>> SortedColumns(const std::vector<Column>& columns, const char* who) {
  if (columns.empty()) return errors::InvalidArgument(who, ": feature_columns must not be empty");
  std::vector<Column> sorted;
  for (const Column& c : columns) {
    if (!c) return errors::InvalidArgument(who, ": a feature column is null");
    RETURN_IF_ERROR(c->status());
    sorted.push_back(c);
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Column& a, const Column& b) { return a->name() < b->name(); });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i]->name() == sorted[i - 1]->name()) {
      return errors::InvalidArgument(who, ": Duplicate feature column name found for columns: ", sorted[i]->name(),
                                     " and ", sorted[i]->name(),
                                     ". This usually means that these columns refer to same base feature.");
    }
  }
  return sorted;
}

Output Fail(const Scope& scope, const Status& s) {
  scope.UpdateStatus(s);
  return Output();
}

}  // namespace

Output InputLayer(const Scope& scope, const Features& features, const std::vector<Column>& columns) {
  if (!scope.ok()) return Output();
  auto sorted = SortedColumns(columns, "InputLayer");
  if (!sorted.ok()) return Fail(scope, sorted.status());
  for (const Column& c : *sorted) {
    if (!c->is_dense()) {
      return Fail(scope, errors::InvalidArgument(
                             "InputLayer: Items of feature_columns must be dense columns. You can wrap a categorical "
                             "column with an EmbeddingColumn or IndicatorColumn. Given: '",
                             c->name(), "'"));
    }
  }
  Scope s = scope.NewSubScope("input_layer");
  TransformCache cache(features);
  std::vector<Input> parts;
  for (const Column& c : *sorted) {
    auto dense = c->DenseTensor(s.NewSubScope(c->name()), &cache);
    if (!dense.ok()) return Fail(scope, dense.status());
    parts.push_back(*dense);
  }
  return ops::Concat(s.WithOpName("concat"), parts, 1);
}

StatusOr<Output> CombineRows(const Scope& s, const Output& weights, const Output& ids, const std::string& combiner) {
  if (combiner != "sum" && combiner != "mean" && combiner != "sqrtn") {
    return errors::InvalidArgument("Unknown combiner '", combiner, "': expected \"mean\", \"sum\" or \"sqrtn\"");
  }
  Output m = internal::ToBatchMatrix(s, ids);            // [batch, k]
  Output present = ops::GreaterEqual(s, m, int64_t{0});  // negative ids are missing
  Output safe = ops::SelectV2(s, present, m, ops::ZerosLike(s, m));
  Output rows = ops::Gather(s, weights, safe);                               // [batch, k, dim]
  Output w = ops::Cast(s, present, BaseType(weights.dtype()));               // [batch, k]
  Output sum = ops::Sum(s, ops::Mul(s, rows, ops::ExpandDims(s, w, 2)), 1);  // [batch, dim]
  if (combiner == "sum") return Built(s, sum);
  Output count = ops::Maximum(s, ops::Sum(s, w, 1, /*keep_dims=*/true), 1.0f);  // [batch, 1], empty rows: 0 / 1
  if (combiner == "mean") return Built(s, ops::RealDiv(s, sum, count));
  return Built(s, ops::RealDiv(s, sum, ops::Sqrt(s, count)));
}

Output LinearModel(const Scope& scope, const Features& features, const std::vector<Column>& columns, int64_t units,
                   const std::string& sparse_combiner) {
  if (!scope.ok()) return Output();
  if (units < 1) return Fail(scope, errors::InvalidArgument("LinearModel: units must be positive, got ", units));
  if (sparse_combiner != "sum" && sparse_combiner != "mean" && sparse_combiner != "sqrtn") {
    return Fail(scope, errors::InvalidArgument("LinearModel: unknown sparse_combiner '", sparse_combiner, "'"));
  }
  auto sorted = SortedColumns(columns, "LinearModel");
  if (!sorted.ok()) return Fail(scope, sorted.status());
  Scope s = scope.NewSubScope("linear_model");
  TransformCache cache(features);
  std::vector<Output> sums;
  for (const Column& c : *sorted) {
    Scope cs = s.NewSubScope(c->name());
    // A column that is both (bucketized) is categorical here, as in TensorFlow: one weight per bucket.
    const bool categorical = c->is_categorical();
    const int64_t rows = categorical ? c->num_buckets() : c->dense_dimension();
    Variable w = Variable::Create(cs.WithOpName("weights"), TensorShape({rows, units}), DT_FLOAT, init::Zeros());
    if (!scope.ok()) return Output();
    StatusOr<Output> part;
    if (categorical) {
      auto ids = c->IdTensor(cs, &cache);
      part = ids.ok() ? CombineRows(cs, w.read(), *ids, sparse_combiner) : ids.status();
    } else {
      auto dense = c->DenseTensor(cs, &cache);
      part = dense.ok() ? Built(cs, ops::MatMul(cs.WithOpName("weighted_sum"), *dense, w.read())) : dense.status();
    }
    if (!part.ok()) return Fail(scope, part.status());
    sums.push_back(*part);
  }
  Variable bias = Variable::Create(s.WithOpName("bias_weights"), TensorShape({units}), DT_FLOAT, init::Zeros());
  if (!scope.ok()) return Output();
  Output total = sums.size() == 1 ? sums[0] : ops::AddN(s.WithOpName("weighted_sum_no_bias"), sums);
  return ops::BiasAdd(s.WithOpName("weighted_sum"), total, bias.read());
}

}  // namespace dflow::feature_column
