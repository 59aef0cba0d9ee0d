// Summary ops: the serialized protos against hand-computed ones, TensorFlow's histogram buckets,
// and bad inputs.
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#include "gtest/gtest.h"
#include "ops/register_all.h"
#include "ops/summary/histogram.h"
#include "ops/testing/kernel_test_util.h"
#include "proto/summary.pb.h"

namespace dflow {
namespace {

using testing::MakeTensor;
using testing::RunOpKernel;

proto::Summary RunSummary(const std::string& op, const std::vector<Tensor>& inputs, AttrMap attrs = {}) {
  RegisterAllOps();
  auto out = RunOpKernel(op, inputs, std::move(attrs));
  EXPECT_TRUE(out.ok()) << out.status();
  proto::Summary s;
  if (!out.ok()) return s;
  EXPECT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].dtype(), DT_STRING);
  EXPECT_EQ((*out)[0].dims(), 0);
  EXPECT_TRUE(s.ParseFromString((*out)[0].scalar<std::string>()));
  return s;
}

void ExpectError(const std::string& op, const std::vector<Tensor>& inputs, const std::string& fragment) {
  RegisterAllOps();
  auto out = RunOpKernel(op, inputs);
  ASSERT_FALSE(out.ok()) << op << " succeeded";
  EXPECT_TRUE(absl::IsInvalidArgument(out.status())) << out.status();
  EXPECT_NE(out.status().message().find(fragment), std::string::npos) << out.status();
}

Tensor Strings(const std::vector<std::string>& v, const TensorShape& shape) {
  return MakeTensor<std::string>(v, shape);
}

TEST(ScalarSummaryTest, OneSimpleValuePerTag) {
  proto::Summary s = RunSummary("ScalarSummary", {Strings({"a", "b", "c", "d"}, TensorShape({2, 2})),
                                                  MakeTensor<double>({1.5, -2, 0.1, 1e300}, TensorShape({2, 2}))});
  proto::Summary expected;
  const std::vector<std::pair<std::string, float>> want = {{"a", 1.5f},
                                                           {"b", -2.f},
                                                           {"c", 0.1f},
                                                           {"d", std::numeric_limits<float>::infinity()}};
  for (const auto& [tag, v] : want) {
    auto* value = expected.add_value();
    value->set_tag(tag);
    value->set_simple_value(v);
  }
  EXPECT_EQ(s.SerializeAsString(), expected.SerializeAsString()) << s.DebugString();

  s = RunSummary("ScalarSummary", {Tensor("loss"), Tensor(int32_t{7})});
  ASSERT_EQ(s.value_size(), 1);
  EXPECT_EQ(s.value(0).tag(), "loss");
  EXPECT_EQ(s.value(0).simple_value(), 7.0f);
}

TEST(ScalarSummaryTest, ShapeMismatchIsInvalidArgument) {
  ExpectError("ScalarSummary", {Strings({"a", "b"}, TensorShape({2})), MakeTensor<float>({1, 2, 3}, TensorShape({3}))},
              "tags and values not the same shape: [2] != [3]");
  ExpectError("ScalarSummary", {Tensor("x"), MakeTensor<float>({1, 2}, TensorShape({2}))},
              "tags and values not the same shape");
  // A float tag is a dtype error of the graph.
  auto out = RunOpKernel("ScalarSummary", {Tensor(1.0f), Tensor(1.0f)});
  EXPECT_FALSE(out.ok());
}

TEST(HistogramTest, DefaultBucketLimitsAreTensorFlows) {
  const std::vector<double>& l = Histogram::DefaultBucketLimits();
  // 1e-12 * 1.1^k < 1e20 for k = 0..773: 774 positive limits, DBL_MAX, mirrored, and 0.
  ASSERT_EQ(l.size(), 1551u);
  EXPECT_EQ(l.front(), -DBL_MAX);
  EXPECT_EQ(l.back(), DBL_MAX);
  EXPECT_EQ(l[775], 0.0);
  EXPECT_EQ(l[776], 1e-12);
  EXPECT_EQ(l[774], -1e-12);
  EXPECT_DOUBLE_EQ(l[777], 1.1e-12);
  EXPECT_LT(l[1549], 1e20);
  EXPECT_GT(l[1549] * 1.1, 1e20 * (1 - 1e-12));
  for (size_t i = 0; i < l.size(); ++i) EXPECT_EQ(l[i], -l[l.size() - 1 - i]) << i;
  for (size_t i = 1; i < l.size(); ++i) EXPECT_LT(l[i - 1], l[i]) << i;
}

TEST(HistogramSummaryTest, HandComputedHistogram) {
  proto::Summary s = RunSummary("HistogramSummary",
                                {Tensor("w"), MakeTensor<float>({0.5f, 2, 2, -1}, TensorShape({2, 2}))});
  ASSERT_EQ(s.value_size(), 1);
  EXPECT_EQ(s.value(0).tag(), "w");
  const proto::HistogramProto& h = s.value(0).histo();
  EXPECT_EQ(h.min(), -1);
  EXPECT_EQ(h.max(), 2);
  EXPECT_EQ(h.num(), 4);
  EXPECT_EQ(h.sum(), 3.5);
  EXPECT_EQ(h.sum_squares(), 0.25 + 4 + 4 + 1);
  // Computed separately (Python, the same bucket rule): each value's bucket is the first limit
  // above it, and every run of empty buckets is one entry ending at the run's last limit.
  const std::vector<double> limits = {-1.0089710279437536,
                                      -0.917246389039776,
                                      0.47069243095356195,
                                      0.5177616740489182,
                                      1.9661990955585713,
                                      2.1628190051144287,
                                      DBL_MAX};
  const std::vector<double> counts = {0, 1, 0, 1, 0, 2, 0};
  ASSERT_EQ(h.bucket_limit_size(), 7);
  ASSERT_EQ(h.bucket_size(), 7);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(h.bucket_limit(i), limits[i]) << i;
    EXPECT_EQ(h.bucket(i), counts[i]) << i;
  }
}

TEST(HistogramSummaryTest, EmptyAndZeroValues) {
  proto::Summary s = RunSummary("HistogramSummary", {Tensor("e"), Tensor(DT_DOUBLE, TensorShape({0}))});
  const proto::HistogramProto& e = s.value(0).histo();
  EXPECT_EQ(e.num(), 0);
  EXPECT_EQ(e.min(), DBL_MAX);
  EXPECT_EQ(e.max(), -DBL_MAX);
  ASSERT_EQ(e.bucket_size(), 1);
  EXPECT_EQ(e.bucket_limit(0), DBL_MAX);
  EXPECT_EQ(e.bucket(0), 0);

  s = RunSummary("HistogramSummary", {Tensor("z"), MakeTensor<int32_t>({0, 0, 0}, TensorShape({3}))});
  const proto::HistogramProto& z = s.value(0).histo();
  ASSERT_EQ(z.bucket_size(), 3);  // [..0) empty, [0, 1e-12) three, [1e-12, DBL_MAX] empty
  EXPECT_EQ(z.bucket_limit(0), 0.0);
  EXPECT_EQ(z.bucket_limit(1), 1e-12);
  EXPECT_EQ(z.bucket(1), 3);
  EXPECT_EQ(z.bucket_limit(2), DBL_MAX);
}

TEST(HistogramSummaryTest, AgainstNaiveBucketing) {
  // A naive linear search over the limits for each value, on many values of all magnitudes.
  const std::vector<double>& l = Histogram::DefaultBucketLimits();
  std::vector<double> values;
  for (int i = -300; i <= 300; ++i) values.push_back(std::copysign(std::pow(1.37, i / 3.0), i % 2 ? -1.0 : 1.0));
  values.push_back(0);
  values.push_back(1e-13);
  values.push_back(-1e25);
  Histogram h;
  std::vector<double> naive(l.size(), 0);
  for (double v : values) {
    h.Add(v);
    size_t b = 0;
    while (b < l.size() && l[b] <= v) ++b;
    naive[b] += 1;
  }
  EXPECT_EQ(h.bucket_counts(), naive);
}

TEST(HistogramSummaryTest, NonFiniteValuesAreInvalidArgument) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  ExpectError("HistogramSummary", {Tensor("h"), MakeTensor<float>({1, nan}, TensorShape({2}))},
              "Nan in summary histogram for: ");
  ExpectError("HistogramSummary", {Tensor("h"), MakeTensor<float>({-inf}, TensorShape({1}))},
              "Infinity in summary histogram for: ");
  ExpectError("HistogramSummary", {Strings({"a", "b"}, TensorShape({2})), MakeTensor<float>({1}, TensorShape({1}))},
              "tags must be scalar");
}

TEST(MergeSummaryTest, ConcatenatesValuesInOrder) {
  proto::Summary a, b;
  a.add_value()->set_tag("x");
  a.mutable_value(0)->set_simple_value(1);
  b.add_value()->set_tag("y");
  b.mutable_value(0)->set_simple_value(2);
  b.add_value()->set_tag("z");
  b.mutable_value(1)->mutable_histo()->set_num(5);
  proto::Summary untagged;  // a TensorSummary value without a tag: never a duplicate
  untagged.add_value();
  proto::Summary s = RunSummary(
      "MergeSummary",
      {Tensor(a.SerializeAsString()),
       Strings({b.SerializeAsString(), untagged.SerializeAsString(), untagged.SerializeAsString()}, TensorShape({3}))});
  ASSERT_EQ(s.value_size(), 5);
  EXPECT_EQ(s.value(0).tag(), "x");
  EXPECT_EQ(s.value(0).simple_value(), 1);
  EXPECT_EQ(s.value(1).tag(), "y");
  EXPECT_EQ(s.value(2).tag(), "z");
  EXPECT_EQ(s.value(2).histo().num(), 5);
  EXPECT_EQ(s.value(3).tag(), "");
}

TEST(MergeSummaryTest, DuplicateTagAndGarbageAreInvalidArgument) {
  proto::Summary a;
  a.add_value()->set_tag("loss");
  ExpectError("MergeSummary", {Tensor(a.SerializeAsString()), Tensor(a.SerializeAsString())},
              "Duplicate tag loss found in summary inputs");
  ExpectError("MergeSummary", {Tensor(std::string("\xff\xff\xff\xff", 4))},
              "Could not parse one of the summary inputs");
}

TEST(TensorSummaryV2Test, KeepsTheTensorAndMetadata) {
  proto::SummaryMetadata md;
  md.mutable_plugin_data()->set_plugin_name("scalars");
  md.set_data_class(proto::DATA_CLASS_SCALAR);
  proto::Summary s = RunSummary("TensorSummaryV2", {Tensor("acc"), Tensor(0.75f), Tensor(md.SerializeAsString())});
  ASSERT_EQ(s.value_size(), 1);
  EXPECT_EQ(s.value(0).tag(), "acc");
  EXPECT_EQ(s.value(0).metadata().plugin_data().plugin_name(), "scalars");
  EXPECT_EQ(s.value(0).tensor().dtype(), proto::DT_FLOAT);
  ASSERT_EQ(s.value(0).tensor().tensor_content().size(), 4u);
  float v;
  std::memcpy(&v, s.value(0).tensor().tensor_content().data(), 4);
  EXPECT_EQ(v, 0.75f);
  ExpectError("TensorSummaryV2", {Tensor("acc"), Tensor(0.75f), Tensor(std::string("\xff", 1))},
              "serialized_summary_metadata is not a SummaryMetadata");
}

TEST(SummaryShapeTest, StaticShapeErrorsAtBuildTime) {
  RegisterAllOps();
  auto s = testing::InferShapes("ScalarSummary", {Strings({"a", "b"}, TensorShape({2})),
                                                  MakeTensor<float>({1, 2, 3}, TensorShape({3}))});
  EXPECT_TRUE(absl::IsInvalidArgument(s.status())) << s.status();
  s = testing::InferShapes("HistogramSummary",
                           {Strings({"a", "b"}, TensorShape({2})), MakeTensor<float>({1}, TensorShape({1}))});
  EXPECT_TRUE(absl::IsInvalidArgument(s.status())) << s.status();
  s = testing::InferShapes("ScalarSummary", {Tensor("a"), Tensor(1.0f)});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)[0], PartialTensorShape({}));
}

}  // namespace
}  // namespace dflow
