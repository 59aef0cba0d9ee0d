// Feature columns: how raw features become the dense input of a model — TensorFlow's
// tf.feature_column, with its names, ids and variable names.
//
//   namespace fc = dflow::feature_column;
//   fc::Column age = fc::NumericColumn("age");
//   fc::Column age_buckets = fc::BucketizedColumn(age, {18, 25, 30, 40, 50, 65});
//   fc::Column city = fc::CategoricalColumnWithVocabularyList("city", {"paris", "rome"}, /*num_oov_buckets=*/1);
//   fc::Column word = fc::CategoricalColumnWithHashBucket("word", 1000);
//   fc::Features features = {{"age", age_t}, {"city", city_t}, {"word", word_t}};   // Outputs
//   Output net = fc::InputLayer(root, features,
//                               {age, age_buckets, fc::IndicatorColumn(city), fc::EmbeddingColumn(word, 8)});
//
// Inputs are dense tensors (dflow has no SparseTensor). A numeric feature is [batch] (one value
// per example) or [batch, d1, ...] with d1*... equal to the column's shape's size. A categorical
// feature is [batch] (one value per example) or [batch, k] (up to k values per example, a
// multivalent feature such as a bag of words), where the entries that are not there hold the
// missing marker: "" for strings, -1 for integers. That is exactly what TensorFlow does with a
// dense input to a categorical column (it drops "" and -1 when it makes the SparseTensor), so
// the ids, the indicator counts and the embedding combiners agree with TensorFlow's. Inside,
// categorical columns make int64 ids of the input's shape, -1 where the value is missing (or,
// for a vocabulary without OOV buckets, unknown with the default default_value).
//
// Errors: a column made with bad arguments (unsorted boundaries, an empty vocabulary, a
// dimension < 1, ...) carries the error (column->status()); InputLayer and LinearModel record it
// in the scope, like any other build error, together with errors of their own (a missing
// feature, a wrong dtype or shape, a categorical column given to InputLayer unwrapped). Values
// only known when the graph runs (an identity id out of range) fail the step with
// InvalidArgument. Columns are immutable and may be shared between threads and graphs.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dflow/variable.h"

namespace dflow::feature_column {

// A dataset element: feature name -> tensor (the batch dimension first).
using Features = std::map<std::string, Output>;

class FeatureColumn;
using Column = std::shared_ptr<const FeatureColumn>;

// Transformations shared by the columns of one InputLayer/LinearModel call, so that a
// categorical column wrapped twice (indicator and embedding) makes its ids once (TensorFlow's
// FeatureTransformationCache).
class TransformCache {
 public:
  explicit TransformCache(const Features& features) : features_(features) {}
  const Features& features() const { return features_; }
  // The feature `key`; InvalidArgument names the key, the column and the features there are.
  StatusOr<Output> Get(const std::string& key, const std::string& column) const;
  std::map<const FeatureColumn*, Output>& ids() { return ids_; }

 private:
  const Features& features_;
  std::map<const FeatureColumn*, Output> ids_;
};

class FeatureColumn {
 public:
  virtual ~FeatureColumn() = default;

  // The column's name: its key, "<source>_bucketized", "<categorical>_indicator",
  // "<categorical>_embedding". InputLayer and LinearModel order columns by name, as TensorFlow.
  const std::string& name() const { return name_; }
  // The error of a column made with bad arguments (OK otherwise).
  const Status& status() const { return status_; }

  // Dense columns (numeric, bucketized, indicator, embedding) give a float tensor
  // [batch, dense_dimension()].
  virtual bool is_dense() const { return false; }
  virtual int64_t dense_dimension() const { return 0; }
  // Categorical columns (bucketized, vocabulary, identity, hash) give int64 ids in
  // [0, num_buckets()) or -1 (missing), shaped [batch, k].
  virtual bool is_categorical() const { return false; }
  virtual int64_t num_buckets() const { return 0; }

  // The dense tensor, built in `scope` (the column's own name scope: variables such as an
  // embedding's "embedding_weights" are made there). Errors are returned.
  virtual StatusOr<Output> DenseTensor(const Scope& scope, TransformCache* cache) const;
  // The ids, built in `scope` (cached per column in `cache`).
  StatusOr<Output> IdTensor(const Scope& scope, TransformCache* cache) const;

 protected:
  FeatureColumn(std::string name, Status status) : name_(std::move(name)), status_(std::move(status)) {}
  virtual StatusOr<Output> MakeIds(const Scope& scope, TransformCache* cache) const;

 private:
  std::string name_;
  Status status_;
};

// Applied to a numeric feature before it is cast to float (TensorFlow's normalizer_fn).
using NormalizerFn = std::function<Output(const Scope& scope, const Output& x)>;

// A real-valued feature of `shape` per example (dense_dimension = product of shape), cast to
// float32. `default_value` (empty, one value, or one per element) is what a parser fills in
// for a missing feature; the column itself never sees missing values. dtype is the feature's
// (float, double, int32 or int64).
Column NumericColumn(const std::string& key, const std::vector<int64_t>& shape = {1},
                     const std::vector<float>& default_value = {}, DType dtype = DT_FLOAT,
                     NormalizerFn normalizer_fn = nullptr);

// The numeric column's values cut by `boundaries` (sorted, strictly increasing, non-empty):
// bucket i when boundaries[i-1] <= v < boundaries[i] (Bucketize). Dense: one-hot per source
// element, [batch, dimension * (boundaries + 1)]. Categorical: element j's bucket b is id
// j * (boundaries + 1) + b, so num_buckets = dimension * (boundaries + 1).
Column BucketizedColumn(const Column& source_column, const std::vector<float>& boundaries);

// Ids by a vocabulary: the index of the value in `vocabulary`; a value not there gets
// vocabulary size + Fingerprint64(value) % num_oov_buckets (integers hashed as decimal text), or
// default_value (-1: treated as missing) without OOV buckets. num_buckets = vocabulary size +
// num_oov_buckets. The feature is a string tensor, or an integer tensor for an integer
// vocabulary (dtype DT_INT64 or DT_INT32).
Column CategoricalColumnWithVocabularyList(const std::string& key, const std::vector<std::string>& vocabulary,
                                           int64_t num_oov_buckets = 0, int64_t default_value = -1);
// (A braced list of string literals picks the string vocabulary.)
inline Column CategoricalColumnWithVocabularyList(const std::string& key, std::initializer_list<std::string> vocabulary,
                                                  int64_t num_oov_buckets = 0, int64_t default_value = -1) {
  return CategoricalColumnWithVocabularyList(key, std::vector<std::string>(vocabulary), num_oov_buckets, default_value);
}
Column CategoricalColumnWithVocabularyList(const std::string& key, const std::vector<int64_t>& vocabulary,
                                           int64_t num_oov_buckets = 0, int64_t default_value = -1,
                                           DType dtype = DT_INT64);

// Integer features that are their own ids in [0, num_buckets). With default_value (>= 0, <
// num_buckets) an id outside the range becomes default_value; without (-1), it fails the step:
// InvalidArgument "Bucket index for categorical column \"key\" exceeds number of buckets" or
// "Negative bucket index ...". -1 is missing either way.
Column CategoricalColumnWithIdentity(const std::string& key, int64_t num_buckets, int64_t default_value = -1);

// Fingerprint64(value) % hash_bucket_size (StringToHashBucketFast: the ids TensorFlow computes);
// integer features (dtype DT_INT32 / DT_INT64) are hashed as their decimal text, as TensorFlow.
Column CategoricalColumnWithHashBucket(const std::string& key, int64_t hash_bucket_size, DType dtype = DT_STRING);

// A categorical column as a multi-hot dense vector [batch, num_buckets]: the count of each id
// in the example (missing values count nothing).
Column IndicatorColumn(const Column& categorical_column);

// A categorical column as the combination of rows of a trainable [num_buckets, dimension]
// table "embedding_weights" (created in the column's name scope, e.g.
// "input_layer/word_embedding/embedding_weights"): "mean" (default), "sum" or "sqrtn" (sum /
// sqrt(count)) of the rows of the example's ids; an example without ids gives zeros. The
// default initializer is TensorFlow's: truncated normal, mean 0, stddev 1/sqrt(dimension).
Column EmbeddingColumn(const Column& categorical_column, int64_t dimension, const std::string& combiner = "mean");
Column EmbeddingColumn(const Column& categorical_column, int64_t dimension, const std::string& combiner,
                       const init::Initializer& initializer);

// tf.feature_column.input_layer: the dense tensors of `columns` (all dense; sorted by name, as
// TensorFlow orders them) concatenated into [batch, sum of dense_dimension], float32, built
// under "input_layer/<column name>/". Errors are recorded in the scope (invalid Output).
Output InputLayer(const Scope& scope, const Features& features, const std::vector<Column>& columns);

// tf.feature_column.linear_model: sum over columns (sorted by name) of the column's input times
// its weights, plus "bias_weights", as logits [batch, units], built under "linear_model/".
// A dense column's weights are [dense_dimension, units]; a categorical one's
// [num_buckets, units], combined per example by `sparse_combiner` ("sum", the default, "mean",
// "sqrtn"). Variables "linear_model/<column>/weights" and "linear_model/bias_weights", all zeros
// at first. Errors are recorded in the scope.
Output LinearModel(const Scope& scope, const Features& features, const std::vector<Column>& columns, int64_t units = 1,
                   const std::string& sparse_combiner = "sum");

// The [batch, dimension] combination of the rows of `weights` ([num_buckets, dimension]) picked
// by ids [batch, k] (int64, -1 = missing), by `combiner`: what EmbeddingColumn and LinearModel
// do. Built in `scope`; errors are returned.
StatusOr<Output> CombineRows(const Scope& scope, const Output& weights, const Output& ids, const std::string& combiner);

}  // namespace dflow::feature_column
