// Feature columns: InputLayer and LinearModel values for known inputs of every column kind
// (hand-computed, or TensorFlow's documented ids), the column order and variable names
// TensorFlow uses, and the errors of bad columns and bad features.
#include "dflow/feature_column.h"

#include <cmath>
#include <string>
#include <vector>

#include "api/scope_internal.h"
#include "base/fingerprint.h"
#include "dflow/dflow.h"
#include "dflow/lookup_ops.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "train/gradient_checker.h"

namespace dflow {
namespace {

namespace fc = feature_column;
using ::testing::HasSubstr;

Tensor Strings(const std::vector<std::string>& v, const TensorShape& shape) {
  return Tensor::FromValues<std::string>(v, shape).value();
}
template <typename T>
Tensor Values(const std::vector<T>& v, const TensorShape& shape) {
  return Tensor::FromValues<T>(v, shape).value();
}
std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.flat<float>().begin(), t.flat<float>().end());
}
std::vector<int64_t> Ints(const Tensor& t) {
  return std::vector<int64_t>(t.flat<int64_t>().begin(), t.flat<int64_t>().end());
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-6f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// Runs InputLayer over constant features; initializes variables first.
StatusOr<Tensor> RunInputLayer(const std::map<std::string, Tensor>& values, const std::vector<fc::Column>& columns,
                               Scope* out_root = nullptr) {
  Scope root = Scope::NewRootScope();
  fc::Features features;
  for (const auto& [k, v] : values) features[k] = ops::Const(root.WithOpName(k), v);
  Output net = fc::InputLayer(root, features, columns);
  if (!root.ok()) return root.status();
  Operation init = GlobalVariablesInitializer(root);
  Operation tables = TablesInitializer(root);
  ClientSession session(root);
  RETURN_IF_ERROR(session.Run({init, tables}));
  ASSIGN_OR_RETURN(std::vector<Tensor> out, session.Run({net}));
  if (out_root != nullptr) *out_root = root;
  return out[0];
}

// The ids a categorical column makes for `value`.
StatusOr<Tensor> RunIds(const Tensor& value, const fc::Column& column, const std::string& key = "aaa") {
  Scope root = Scope::NewRootScope();
  fc::Features features = {{key, ops::Const(root, value)}};
  fc::TransformCache cache(features);
  ASSIGN_OR_RETURN(Output ids, column->IdTensor(root.NewSubScope(column->name()), &cache));
  Operation tables = TablesInitializer(root);
  ClientSession session(root);
  RETURN_IF_ERROR(session.Run({tables}));
  ASSIGN_OR_RETURN(std::vector<Tensor> out, session.Run({ids}));
  return out[0];
}

// ---- numeric and bucketized ----

TEST(NumericColumnTest, NormalizerThenFloatCastThenBatchMatrix) {
  fc::Column age = fc::NumericColumn("age", {1}, {}, DT_FLOAT, [](const Scope& s, const Output& x) {
    return ops::RealDiv(s, ops::Sub(s, x, 2.0f), 2.0f);
  });
  auto out = RunInputLayer({{"age", Values<float>({1, 2, 3}, TensorShape({3}))}}, {age});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({3, 1}));
  ExpectNear(Floats(*out), {-0.5f, 0.0f, 0.5f});

  fc::Column pos = fc::NumericColumn("pos", {2, 2}, {}, DT_INT64);
  auto two = RunInputLayer({{"pos", Values<int64_t>({1, 2, 3, 4, 5, 6, 7, 8}, TensorShape({2, 2, 2}))}}, {pos});
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->shape(), TensorShape({2, 4}));
  ExpectNear(Floats(*two), {1, 2, 3, 4, 5, 6, 7, 8});
}

TEST(NumericColumnTest, WrongWidthAndTypeAreErrors) {
  fc::Column pos = fc::NumericColumn("pos", {2});
  auto wide = RunInputLayer({{"pos", Values<float>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}))}}, {pos});
  ASSERT_FALSE(wide.ok());
  EXPECT_THAT(std::string(wide.status().message()), HasSubstr("'pos'"));
  auto str = RunInputLayer({{"pos", Strings({"a", "b"}, TensorShape({1, 2}))}}, {pos});
  EXPECT_FALSE(str.ok());
  EXPECT_FALSE(fc::NumericColumn("x", {0})->status().ok());
  EXPECT_FALSE(fc::NumericColumn("x", {2}, {1, 2, 3})->status().ok());
  EXPECT_FALSE(fc::NumericColumn("x", {1}, {}, DT_STRING)->status().ok());
}

TEST(BucketizedColumnTest, OneHotPerSourceElementAndIds) {
  fc::Column price = fc::NumericColumn("price", {2});
  fc::Column b = fc::BucketizedColumn(price, {0, 10});
  EXPECT_EQ(b->name(), "price_bucketized");
  EXPECT_EQ(b->num_buckets(), 6);
  EXPECT_EQ(b->dense_dimension(), 6);
  Tensor v = Values<float>({-1, 0, 5, 10}, TensorShape({2, 2}));  // buckets (0, 1), (1, 2)
  auto dense = RunInputLayer({{"price", v}}, {b});
  ASSERT_TRUE(dense.ok()) << dense.status();
  ExpectNear(Floats(*dense), {1, 0, 0, 0, 1, 0, /**/ 0, 1, 0, 0, 0, 1});
  auto ids = RunIds(v, b, "price");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(Ints(*ids), (std::vector<int64_t>{0, 4, 1, 5}));  // element j's bucket + 3 j
}

TEST(BucketizedColumnTest, BadArguments) {
  fc::Column x = fc::NumericColumn("x");
  EXPECT_THAT(std::string(fc::BucketizedColumn(x, {1, 0})->status().message()), HasSubstr("sorted"));
  EXPECT_FALSE(fc::BucketizedColumn(x, {1, 1})->status().ok());
  EXPECT_FALSE(fc::BucketizedColumn(x, {})->status().ok());
  EXPECT_FALSE(fc::BucketizedColumn(fc::CategoricalColumnWithIdentity("i", 3), {1})->status().ok());
  auto run = RunInputLayer({{"x", Values<float>({1}, TensorShape({1}))}}, {fc::BucketizedColumn(x, {2, 1})});
  EXPECT_FALSE(run.ok());
}

// ---- categorical ----

TEST(VocabularyColumnTest, OovBucketsAndMissingMarkerAsTensorFlow) {
  fc::Column c = fc::CategoricalColumnWithVocabularyList("aaa", {"omar", "stringer", "marlo"}, 100);
  EXPECT_EQ(c->num_buckets(), 103);
  // TensorFlow: marlo 2, skywalker 33, omar 0, heisenberg 62; "" is not there.
  auto ids = RunIds(Strings({"marlo", "", "skywalker", "omar", "heisenberg", ""}, TensorShape({2, 3})), c);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(Ints(*ids), (std::vector<int64_t>{2, -1, 33, 0, 62, -1}));
}

TEST(VocabularyColumnTest, IntegerVocabularyWithDefaultValue) {
  fc::Column c = fc::CategoricalColumnWithVocabularyList("aaa", std::vector<int64_t>{30, 35, 11, 23, 22}, 0, -100,
                                                         DT_INT32);
  // TensorFlow's dense-input test: ((11, -1, -1), (100, 30, -1), (-1, -1, 22)).
  auto ids = RunIds(Values<int32_t>({11, -1, -1, 100, 30, -1, -1, -1, 22}, TensorShape({3, 3})), c);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(Ints(*ids), (std::vector<int64_t>{2, -1, -1, -100, 0, -1, -1, -1, 4}));
  fc::Column oov = fc::CategoricalColumnWithVocabularyList("aaa", std::vector<int64_t>{30, 35, 11, 23, 22}, 100);
  auto hashed = RunIds(Values<int64_t>({11, 100, 30, 22}, TensorShape({4})), oov);
  ASSERT_TRUE(hashed.ok()) << hashed.status();
  EXPECT_EQ(Ints(*hashed), (std::vector<int64_t>{2, 60, 0, 4}));  // TensorFlow's values
}

TEST(VocabularyColumnTest, BadArgumentsAndInputs) {
  EXPECT_THAT(std::string(fc::CategoricalColumnWithVocabularyList("a", std::vector<std::string>{})->status().message()),
              HasSubstr("must be non-empty"));
  EXPECT_THAT(
      std::string(fc::CategoricalColumnWithVocabularyList("a", std::vector<int64_t>{12, 24, 12})->status().message()),
      HasSubstr("Duplicate keys"));
  EXPECT_THAT(std::string(fc::CategoricalColumnWithVocabularyList("a", {"x"}, -1)->status().message()),
              HasSubstr("Invalid num_oov_buckets"));
  EXPECT_THAT(std::string(fc::CategoricalColumnWithVocabularyList("a", {"x"}, 3, 2)->status().message()),
              HasSubstr("both num_oov_buckets and default_value"));
  fc::Column c = fc::CategoricalColumnWithVocabularyList("aaa", {"x"});
  auto ints = RunIds(Values<int64_t>({1}, TensorShape({1})), c);
  ASSERT_FALSE(ints.ok());
  EXPECT_THAT(std::string(ints.status().message()), HasSubstr("dtype must be compatible"));
  auto rank3 = RunIds(Strings({"x"}, TensorShape({1, 1, 1})), c);
  EXPECT_FALSE(rank3.ok());
}

TEST(IdentityColumnTest, RangeCheckedOrDefaulted) {
  fc::Column c = fc::CategoricalColumnWithIdentity("aaa", 4);
  auto ids = RunIds(Values<int32_t>({1, -1, 3, 0}, TensorShape({2, 2})), c);
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(Ints(*ids), (std::vector<int64_t>{1, -1, 3, 0}));
  auto big = RunIds(Values<int64_t>({1, 4}, TensorShape({2})), c);
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(std::string(big.status().message()), HasSubstr("exceeds number of buckets"));
  auto neg = RunIds(Values<int64_t>({1, -2}, TensorShape({2})), c);
  ASSERT_FALSE(neg.ok());
  EXPECT_THAT(std::string(neg.status().message()), HasSubstr("Negative bucket index"));
  fc::Column d = fc::CategoricalColumnWithIdentity("aaa", 4, 3);
  auto def = RunIds(Values<int64_t>({1, 4, -1, -7}, TensorShape({4})), d);
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ(Ints(*def), (std::vector<int64_t>{1, 3, -1, 3}));
  EXPECT_FALSE(fc::CategoricalColumnWithIdentity("a", 0)->status().ok());
  EXPECT_FALSE(fc::CategoricalColumnWithIdentity("a", 4, 4)->status().ok());
  EXPECT_FALSE(RunIds(Values<float>({1}, TensorShape({1})), c).ok());
}

TEST(HashColumnTest, IdsEqualTensorFlows) {
  fc::Column c = fc::CategoricalColumnWithHashBucket("wire", 10);
  auto ids = RunIds(Strings({"omar", "stringer", "marlo", ""}, TensorShape({2, 2})), c, "wire");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(Ints(*ids), (std::vector<int64_t>{6, 4, 1, -1}));  // TensorFlow's 6, 4, 1
  fc::Column n = fc::CategoricalColumnWithHashBucket("n", 1000, DT_INT64);
  auto nids = RunIds(Values<int64_t>({100, -1, 7}, TensorShape({3})), n, "n");
  ASSERT_TRUE(nids.ok()) << nids.status();
  EXPECT_EQ(Ints(*nids), (std::vector<int64_t>{static_cast<int64_t>(Fingerprint64("100") % 1000), -1,
                                               static_cast<int64_t>(Fingerprint64("7") % 1000)}));
  EXPECT_FALSE(fc::CategoricalColumnWithHashBucket("a", 0)->status().ok());
}

// ---- indicator and embedding ----

TEST(IndicatorColumnTest, CountsIdsPerExample) {
  fc::Column c = fc::IndicatorColumn(fc::CategoricalColumnWithIdentity("aaa", 4));
  EXPECT_EQ(c->name(), "aaa_indicator");
  EXPECT_EQ(c->dense_dimension(), 4);
  auto out = RunInputLayer({{"aaa", Values<int64_t>({1, -1, 3, 3, -1, -1}, TensorShape({3, 2}))}}, {c});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Floats(*out), {0, 1, 0, 0, /**/ 0, 0, 0, 2, /**/ 0, 0, 0, 0});
  fc::Column one = fc::IndicatorColumn(fc::CategoricalColumnWithVocabularyList("v", {"a", "b"}, 1));
  auto single = RunInputLayer({{"v", Strings({"b", "zzz", ""}, TensorShape({3}))}}, {one});
  ASSERT_TRUE(single.ok()) << single.status();
  ExpectNear(Floats(*single), {0, 1, 0, /**/ 0, 0, 1, /**/ 0, 0, 0});
  EXPECT_FALSE(fc::IndicatorColumn(fc::NumericColumn("x"))->status().ok());
}

TEST(EmbeddingColumnTest, EveryCombinerOnAKnownTable) {
  const std::vector<float> table = {1, 2, /**/ 3, 5, /**/ 7, 11};  // 3 ids, dimension 2
  // Example 0: ids 0 and 2; example 1: id 1; example 2: nothing.
  Tensor ids = Values<int64_t>({0, 2, 1, -1, -1, -1}, TensorShape({3, 2}));
  const float r2 = std::sqrt(2.0f);
  const std::map<std::string, std::vector<float>> want = {
      {"sum", {8, 13, 3, 5, 0, 0}},
      {"mean", {4, 6.5f, 3, 5, 0, 0}},
      {"sqrtn", {8 / r2, 13 / r2, 3, 5, 0, 0}},
  };
  for (const auto& [combiner, expected] : want) {
    fc::Column c = fc::EmbeddingColumn(fc::CategoricalColumnWithIdentity("aaa", 3), 2, combiner,
                                       init::Constant(Values<float>(table, TensorShape({3, 2}))));
    Scope root = Scope::NewRootScope();
    auto out = RunInputLayer({{"aaa", ids}}, {c}, &root);
    ASSERT_TRUE(out.ok()) << combiner << ": " << out.status();
    ExpectNear(Floats(*out), expected, 1e-5f);
    EXPECT_NE(root.graph()->FindNode("input_layer/aaa_embedding/embedding_weights"), nullptr);
  }
  EXPECT_FALSE(fc::EmbeddingColumn(fc::CategoricalColumnWithIdentity("a", 3), 2, "max")->status().ok());
  EXPECT_FALSE(fc::EmbeddingColumn(fc::CategoricalColumnWithIdentity("a", 3), 0)->status().ok());
}

TEST(EmbeddingColumnTest, DefaultInitializerIsTruncatedNormalWithStddevOneOverSqrtDimension) {
  fc::Column c = fc::EmbeddingColumn(fc::CategoricalColumnWithIdentity("aaa", 2000), 4);
  Scope root = Scope::NewRootScope();
  auto out = RunInputLayer({{"aaa", Values<int64_t>({0}, TensorShape({1}))}}, {c}, &root);
  ASSERT_TRUE(out.ok()) << out.status();
  Node* n = root.graph()->FindNode("input_layer/aaa_embedding/embedding_weights");
  ASSERT_NE(n, nullptr);
  ClientSession session(root);
  auto t = session.Run({Output(n, 0)});
  ASSERT_TRUE(t.ok()) << t.status();
  double sum2 = 0, maxabs = 0;
  for (float v : (*t)[0].flat<float>()) {
    sum2 += static_cast<double>(v) * v;
    maxabs = std::max(maxabs, std::fabs(static_cast<double>(v)));
  }
  const double sd = std::sqrt(sum2 / 8000.0);
  // stddev 0.5 cut at two standard deviations: sd = 0.5 * 0.8796 = 0.44.
  EXPECT_LE(maxabs, 1.0 + 1e-6);
  EXPECT_NEAR(sd, 0.44, 0.02);
}

TEST(EmbeddingColumnTest, CombinerGradientsMatchNumericalOnes) {
  Tensor table(DT_DOUBLE, TensorShape({4, 3}));
  for (int64_t i = 0; i < table.NumElements(); ++i) table.flat<double>()[i] = 0.25 * static_cast<double>(i) - 1.1;
  for (const std::string combiner : {"sum", "mean", "sqrtn"}) {
    SCOPED_TRACE(combiner);
    auto err = MaxGradientError({table}, [&](GraphBuilder* b, const std::vector<NodeOut>& xs) {
      Scope s = ScopeAccess::ForGraph(b->graph());
      // Repeated ids (their gradients add up), missing ids, an empty example, a row no id reaches.
      Output ids = ops::Const(s, Values<int64_t>({0, 2, 2, 1, -1, -1, -1, -1, -1}, TensorShape({3, 3})));
      auto y = fc::CombineRows(s, Output(xs[0].node, xs[0].index), ids, combiner);
      EXPECT_TRUE(y.ok()) << y.status();
      return std::vector<NodeOut>{y.ok() ? NodeOut{y->node(), y->index()} : NodeOut{}};
    });
    ASSERT_TRUE(err.ok()) << err.status();
    EXPECT_LT(*err, 1e-8);
  }
}

// ---- InputLayer and LinearModel ----

TEST(InputLayerTest, ConcatenatesInNameOrder) {
  fc::Column b = fc::NumericColumn("b", {2});
  fc::Column a = fc::NumericColumn("a");
  auto out = RunInputLayer({{"a", Values<float>({1, 2}, TensorShape({2}))},
                            {"b", Values<float>({10, 20, 30, 40}, TensorShape({2, 2}))}},
                           {b, a});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), TensorShape({2, 3}));
  ExpectNear(Floats(*out), {1, 10, 20, 2, 30, 40});
}

TEST(InputLayerTest, Errors) {
  fc::Column a = fc::NumericColumn("a");
  auto missing = RunInputLayer({{"b", Values<float>({1}, TensorShape({1}))}}, {a});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("Feature 'a'"));
  auto cat = RunInputLayer({{"a", Values<int64_t>({1}, TensorShape({1}))}},
                           {fc::CategoricalColumnWithIdentity("a", 3)});
  ASSERT_FALSE(cat.ok());
  EXPECT_THAT(std::string(cat.status().message()), HasSubstr("IndicatorColumn"));
  auto dup = RunInputLayer({{"a", Values<float>({1}, TensorShape({1}))}}, {a, fc::NumericColumn("a")});
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(std::string(dup.status().message()), HasSubstr("Duplicate feature column name"));
  EXPECT_FALSE(RunInputLayer({{"a", Values<float>({1}, TensorShape({1}))}}, {}).ok());
  auto bad = RunInputLayer({{"a", Values<float>({1}, TensorShape({1}))}}, {fc::NumericColumn("a", {-1})});
  EXPECT_FALSE(bad.ok());
}

TEST(LinearModelTest, WeightsPerBucketAndTensorFlowNames) {
  Scope root = Scope::NewRootScope();
  fc::Column wire = fc::CategoricalColumnWithVocabularyList("wire", {"omar", "stringer", "marlo"}, 1);
  fc::Column x = fc::NumericColumn("x");
  fc::Features features = {{"wire", ops::Const(root, Strings({"marlo", "", "skywalker", "omar"}, TensorShape({2, 2})))},
                           {"x", ops::Const(root, Values<float>({1, 2}, TensorShape({2})))}};
  Output logits = fc::LinearModel(root, features, {x, wire});
  ASSERT_TRUE(root.ok()) << root.status();
  Node* wv = root.graph()->FindNode("linear_model/wire/weights");
  Node* xv = root.graph()->FindNode("linear_model/x/weights");
  Node* bias = root.graph()->FindNode("linear_model/bias_weights");
  ASSERT_TRUE(wv != nullptr && xv != nullptr && bias != nullptr);
  Operation init = GlobalVariablesInitializer(root);
  Output set_w = ops::Assign(root, Output(wv, 0), ops::Const(root, Values<float>({1, 2, 3, 4}, TensorShape({4, 1}))));
  Output set_x = ops::Assign(root, Output(xv, 0), ops::Const(root, Values<float>({10}, TensorShape({1, 1}))));
  Output set_b = ops::Assign(root, Output(bias, 0), ops::Const(root, Values<float>({0.5f}, TensorShape({1}))));
  Operation tables = TablesInitializer(root);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({init, tables}).ok());
  auto zero = session.Run({logits});
  ASSERT_TRUE(zero.ok()) << zero.status();
  ExpectNear(Floats((*zero)[0]), {0, 0});
  ASSERT_TRUE(session.Run({set_w, set_x, set_b}).ok());
  auto out = session.Run({logits});
  ASSERT_TRUE(out.ok()) << out.status();
  // 'marlo' -> 2: 3; 'skywalker' -> 3 (the OOV bucket), 'omar' -> 0: 4 + 1 = 5 (TensorFlow's
  // linear_model test), plus 10 x and the bias.
  ExpectNear(Floats((*out)[0]), {3 + 10 + 0.5f, 5 + 20 + 0.5f});
}

}  // namespace
}  // namespace dflow
