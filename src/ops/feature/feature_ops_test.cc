// Bucketize, StringToHashBucketFast, VocabularyLookup and Assert: values against a naive scan and
// the ids TensorFlow's own tests document, static shapes, and bad attrs and inputs.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_test_util.h"

namespace dflow {
namespace {

using testing::InferShapes;
using testing::MakeTensor;
using testing::RunOpKernel;

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

Tensor Strings(const std::vector<std::string>& v) {
  return MakeTensor<std::string>(v, TensorShape({(int64_t)v.size()}));
}

// ---- Bucketize ----

// The bucket by its definition: the number of boundaries <= v.
int32_t NaiveBucket(double v, const std::vector<float>& b) {
  int32_t n = 0;
  for (float x : b) n += (static_cast<double>(x) <= v) ? 1 : 0;
  return n;
}

TEST(BucketizeTest, FloatValuesMatchNaiveCountIncludingTies) {
  const std::vector<float> b = {0.0f, 1.0f, 2.5f, 10.0f};
  std::vector<float> x = {-5, -0.0001f, 0, 0.5f, 1, 2.4999f, 2.5f, 9.99f, 10, 11, 1e30f};
  auto out = RunOpKernel("Bucketize", {MakeTensor<float>(x, TensorShape({11}))}, {{"boundaries", b}});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dtype(), DT_INT32);
  std::vector<int32_t> want;
  for (float v : x) want.push_back(NaiveBucket(v, b));
  EXPECT_EQ(Values<int32_t>((*out)[0]), want);
  EXPECT_EQ(want, (std::vector<int32_t>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 4}));  // the rule, spelled out
}

TEST(BucketizeTest, IntegerAndDoubleInputsKeepTheirShape) {
  const std::vector<float> b = {-3, 0, 5};
  auto i64 = RunOpKernel("Bucketize", {MakeTensor<int64_t>({-4, -3, -1, 0, 4, 5, 100}, TensorShape({7}))},
                         {{"boundaries", b}});
  ASSERT_TRUE(i64.ok()) << i64.status();
  EXPECT_EQ(Values<int32_t>((*i64)[0]), (std::vector<int32_t>{0, 1, 1, 2, 2, 3, 3}));
  auto f64 = RunOpKernel("Bucketize", {MakeTensor<double>({-3.5, 0.25, 4.75, 6}, TensorShape({2, 2}))},
                         {{"boundaries", b}});
  ASSERT_TRUE(f64.ok()) << f64.status();
  EXPECT_EQ((*f64)[0].shape(), TensorShape({2, 2}));
  EXPECT_EQ(Values<int32_t>((*f64)[0]), (std::vector<int32_t>{0, 2, 2, 3}));
  auto none = RunOpKernel("Bucketize", {MakeTensor<int32_t>({-1, 7}, TensorShape({2}))},
                          {{"boundaries", std::vector<float>{}}});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(Values<int32_t>((*none)[0]), (std::vector<int32_t>{0, 0}));
}

TEST(BucketizeTest, RejectsUnsortedBoundariesAndStrings) {
  auto bad = RunOpKernel("Bucketize", {MakeTensor<float>({1}, TensorShape({1}))},
                         {{"boundaries", std::vector<float>{1, 3, 2}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("Expected sorted boundaries"), std::string::npos) << bad.status();
  auto nan = RunOpKernel("Bucketize", {MakeTensor<float>({1}, TensorShape({1}))},
                         {{"boundaries", std::vector<float>{1, NAN, 0}}});
  EXPECT_FALSE(nan.ok());
  // As in TensorFlow, the shape function leaves the boundaries to the kernel: a graph holding
  // unsorted boundaries builds (and imports), and fails when it runs.
  auto shapes = testing::InferShapes("Bucketize", {MakeTensor<float>({1}, TensorShape({1}))},
                                     {{"boundaries", std::vector<float>{1, 3, 2}}});
  EXPECT_TRUE(shapes.ok()) << shapes.status();
  auto str = RunOpKernel("Bucketize", {Strings({"a"})}, {{"boundaries", std::vector<float>{1}}});
  EXPECT_FALSE(str.ok());
  auto missing = RunOpKernel("Bucketize", {MakeTensor<float>({1}, TensorShape({1}))});
  EXPECT_FALSE(missing.ok());
}

// ---- StringToHashBucketFast ----

TEST(StringToHashBucketFastTest, IdsEqualTensorFlows) {
  // TensorFlow's StringToHashBucketFast test: Fingerprint64 mod 10.
  auto out = RunOpKernel("StringToHashBucketFast", {Strings({"a", "b", "c", "d"})}, {{"num_buckets", 10}});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dtype(), DT_INT64);
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{9, 2, 2, 5}));
  // tf.feature_column.categorical_column_with_hash_bucket('wire', 10)'s documented ids.
  auto wire = RunOpKernel("StringToHashBucketFast", {Strings({"omar", "stringer", "marlo"})}, {{"num_buckets", 10}});
  ASSERT_TRUE(wire.ok()) << wire.status();
  EXPECT_EQ(Values<int64_t>((*wire)[0]), (std::vector<int64_t>{6, 4, 1}));
  auto one = RunOpKernel("StringToHashBucketFast", {Strings({"a", "b", "c"})}, {{"num_buckets", 1}});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(Values<int64_t>((*one)[0]), (std::vector<int64_t>{0, 0, 0}));
}

TEST(StringToHashBucketFastTest, RejectsZeroBucketsAndNumbers) {
  EXPECT_FALSE(RunOpKernel("StringToHashBucketFast", {Strings({"a"})}, {{"num_buckets", 0}}).ok());
  EXPECT_FALSE(
      RunOpKernel("StringToHashBucketFast", {MakeTensor<int64_t>({1}, TensorShape({1}))}, {{"num_buckets", 3}}).ok());
}

// ---- VocabularyLookup ----

TEST(VocabularyLookupTest, StringKeysWithOovBucketsMatchTensorFlow) {
  // TensorFlow's vocabulary-list test with num_oov_buckets=100.
  AttrMap attrs = {{"vocabulary", Strings({"omar", "stringer", "marlo"})}, {"num_oov_buckets", 100}};
  auto out = RunOpKernel("VocabularyLookup", {Strings({"marlo", "skywalker", "omar", "heisenberg"})}, attrs);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{2, 33, 0, 62}));
}

TEST(VocabularyLookupTest, IntegerKeysHashTheirDecimalText) {
  Tensor vocab = MakeTensor<int32_t>({30, 35, 11, 23, 22}, TensorShape({5}));
  auto oov = RunOpKernel("VocabularyLookup", {MakeTensor<int32_t>({11, 100, 30, 22}, TensorShape({4}))},
                         {{"vocabulary", vocab}, {"num_oov_buckets", 100}});
  ASSERT_TRUE(oov.ok()) << oov.status();
  EXPECT_EQ(Values<int64_t>((*oov)[0]), (std::vector<int64_t>{2, 60, 0, 4}));  // TensorFlow's values
  auto def = RunOpKernel("VocabularyLookup", {MakeTensor<int32_t>({11, 100, 30, 22}, TensorShape({2, 2}))},
                         {{"vocabulary", vocab}, {"default_value", -100}});
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ((*def)[0].shape(), TensorShape({2, 2}));
  EXPECT_EQ(Values<int64_t>((*def)[0]), (std::vector<int64_t>{2, -100, 0, 4}));
  auto i64 = RunOpKernel("VocabularyLookup", {MakeTensor<int64_t>({7, 9}, TensorShape({2}))},
                         {{"vocabulary", MakeTensor<int64_t>({9, 8}, TensorShape({2}))}});
  ASSERT_TRUE(i64.ok()) << i64.status();
  EXPECT_EQ(Values<int64_t>((*i64)[0]), (std::vector<int64_t>{-1, 0}));  // default_value -1
}

TEST(VocabularyLookupTest, RejectsBadVocabularies) {
  auto run = [](const Tensor& vocab, AttrMap more = {}, Tensor keys = Tensor()) {
    more["vocabulary"] = vocab;
    if (!keys.IsInitialized())
      keys = vocab.dtype() == DT_STRING ? Strings({"x"}) : MakeTensor<int64_t>({1}, TensorShape({1}));
    return RunOpKernel("VocabularyLookup", {keys}, more).status();
  };
  Status dup = run(MakeTensor<int64_t>({12, 24, 12}, TensorShape({3})));
  EXPECT_NE(dup.message().find("Duplicate keys"), std::string::npos) << dup;
  Status empty = run(MakeTensor<std::string>({}, TensorShape({0})));
  EXPECT_NE(empty.message().find("non-empty"), std::string::npos) << empty;
  Status oov = run(Strings({"a"}), {{"num_oov_buckets", -1}});
  EXPECT_FALSE(oov.ok());
  Status both = run(Strings({"a"}), {{"num_oov_buckets", 3}, {"default_value", 2}});
  EXPECT_NE(both.message().find("both num_oov_buckets and default_value"), std::string::npos) << both;
  Status floats = run(MakeTensor<float>({1}, TensorShape({1})), {}, MakeTensor<float>({1}, TensorShape({1})));
  EXPECT_FALSE(floats.ok());
  Status mismatch = run(Strings({"a"}), {}, MakeTensor<int64_t>({1}, TensorShape({1})));
  EXPECT_NE(mismatch.message().find("compatible"), std::string::npos) << mismatch;
  Status matrix = run(MakeTensor<int64_t>({1, 2}, TensorShape({1, 2})));
  EXPECT_FALSE(matrix.ok());
}

TEST(VocabularyLookupTest, ShapeIsTheInputs) {
  auto shapes = InferShapes("VocabularyLookup", {MakeTensor<int64_t>({1, 2, 3, 4, 5, 6}, TensorShape({2, 3}))},
                            {{"vocabulary", MakeTensor<int64_t>({1}, TensorShape({1}))}});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0].DebugString(), PartialTensorShape(TensorShape({2, 3})).DebugString());
}

// ---- AsString ----

TEST(AsStringTest, IntegersAsDecimalText) {
  auto out = RunOpKernel("AsString", {MakeTensor<int64_t>({0, -12, 100, 9007199254740993LL}, TensorShape({2, 2}))});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 2}));
  EXPECT_EQ(Values<std::string>((*out)[0]), (std::vector<std::string>{"0", "-12", "100", "9007199254740993"}));
  auto padded = RunOpKernel("AsString", {MakeTensor<int32_t>({7, -7, 12345}, TensorShape({3}))},
                            {{"width", 4}, {"fill", "0"}});
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_EQ(Values<std::string>((*padded)[0]), (std::vector<std::string>{"0007", "-007", "12345"}));
  auto spaces = RunOpKernel("AsString", {MakeTensor<int32_t>({7}, TensorShape({1}))}, {{"width", 3}});
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  EXPECT_EQ(Values<std::string>((*spaces)[0]), (std::vector<std::string>{"  7"}));
}

TEST(AsStringTest, RejectsBadFillAndFloats) {
  EXPECT_FALSE(RunOpKernel("AsString", {MakeTensor<int32_t>({7}, TensorShape({1}))}, {{"fill", "ab"}}).ok());
  EXPECT_FALSE(RunOpKernel("AsString", {MakeTensor<int32_t>({7}, TensorShape({1}))}, {{"fill", "x"}}).ok());
  EXPECT_FALSE(RunOpKernel("AsString", {MakeTensor<int32_t>({7}, TensorShape({1}))}, {{"width", 1 << 30}}).ok());
  EXPECT_FALSE(RunOpKernel("AsString", {MakeTensor<float>({7}, TensorShape({1}))}).ok());
  // TensorFlow's kernel checks: no precision, scientific or shortest for integers (nor precision
  // for bools); the shape function checks nothing.
  auto precision = RunOpKernel("AsString", {MakeTensor<int32_t>({7}, TensorShape({1}))}, {{"precision", 2}});
  ASSERT_FALSE(precision.ok());
  EXPECT_NE(precision.status().message().find("precision not supported for datatype int32"), std::string::npos)
      << precision.status();
  EXPECT_FALSE(RunOpKernel("AsString", {MakeTensor<int64_t>({7}, TensorShape({1}))}, {{"scientific", true}}).ok());
  EXPECT_FALSE(RunOpKernel("AsString", {Tensor(true)}, {{"precision", 1}}).ok());
  EXPECT_TRUE(testing::InferShapes("AsString", {MakeTensor<int32_t>({7}, TensorShape({1}))}, {{"fill", "ab"}}).ok());
}

TEST(AsStringTest, BoolsAreNotPadded) {
  Tensor tf(DT_BOOL, TensorShape({2}));
  tf.data<bool>()[0] = true;
  tf.data<bool>()[1] = false;
  auto out = RunOpKernel("AsString", {tf}, {{"width", 7}, {"fill", "0"}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<std::string>((*out)[0]), (std::vector<std::string>{"true", "false"}));
}

// ---- Assert ----

TEST(AssertTest, PassesOrFailsWithItsData) {
  auto ok = RunOpKernel("Assert", {Tensor(true), Tensor("never shown")});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->empty());
  auto bad = RunOpKernel("Assert", {Tensor(false), Tensor("Bucket index exceeds"),
                                    MakeTensor<int64_t>({7, 8, 9, 10, 11}, TensorShape({5}))});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  const std::string msg(bad.status().message());
  EXPECT_NE(msg.find("assertion failed: [Bucket index exceeds] [7 8 9...]"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("10"), std::string::npos) << msg;  // summarize = 3
}

TEST(AssertTest, ConditionMustBeABoolScalar) {
  Tensor two(DT_BOOL, TensorShape({2}));
  two.data<bool>()[0] = two.data<bool>()[1] = true;
  EXPECT_FALSE(RunOpKernel("Assert", {two, Tensor("m")}).ok());
  EXPECT_FALSE(RunOpKernel("Assert", {Tensor(1), Tensor("m")}).ok());
  // TensorFlow's kernel takes only a scalar (not a [1] vector); its shape function checks nothing.
  Tensor one(DT_BOOL, TensorShape({1}));
  one.data<bool>()[0] = true;
  EXPECT_FALSE(RunOpKernel("Assert", {one, Tensor("m")}).ok());
  EXPECT_TRUE(testing::InferShapes("Assert", {two, Tensor("m")}).ok());
}

}  // namespace
}  // namespace dflow
