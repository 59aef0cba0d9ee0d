// ParseExample / ParseExampleV2 / ParseSingleExample: values of dense (with defaults, fixed and
// variable length), sparse and ragged features, the empty batch, static shapes, and TensorFlow's
// errors (a missing required feature, a wrong type, a wrong count, bytes that are not an Example).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/testing/kernel_test_util.h"
#include "proto/example.pb.h"

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
  return MakeTensor<std::string>(v, TensorShape({static_cast<int64_t>(v.size())}));
}

// An Example with float, int64 and bytes features.
struct Ex {
  proto::Example e;
  Ex& F(const std::string& k, std::vector<float> v) {
    auto* l = (*e.mutable_features()->mutable_feature())[k].mutable_float_list();
    for (float x : v) l->add_value(x);
    return *this;
  }
  Ex& I(const std::string& k, std::vector<int64_t> v) {
    auto* l = (*e.mutable_features()->mutable_feature())[k].mutable_int64_list();
    for (int64_t x : v) l->add_value(x);
    return *this;
  }
  Ex& B(const std::string& k, std::vector<std::string> v) {
    auto* l = (*e.mutable_features()->mutable_feature())[k].mutable_bytes_list();
    for (auto& x : v) l->add_value(x);
    return *this;
  }
  std::string Bytes() const { return e.SerializeAsString(); }
};

Tensor Empty(DType t) { return Tensor(t, TensorShape({0})); }

// ParseExampleV2 with dense "a" (float [2], required), "b" (int64 [], default 7), "d" (int64
// variable length, padding 0), sparse "c" (string) and ragged "r" (int64, int32 splits).
StatusOr<std::vector<Tensor>> ParseV2(const Tensor& serialized, Tensor names = Strings({})) {
  return RunOpKernel("ParseExampleV2",
                     {serialized, names, Strings({"c"}), Strings({"a", "b", "d"}), Strings({"r"}), Empty(DT_FLOAT),
                      MakeTensor<int64_t>({7}, TensorShape({})), MakeTensor<int64_t>({0}, TensorShape({}))},
                     {{"num_sparse", int64_t{1}},
                      {"sparse_types", std::vector<DType>{DT_STRING}},
                      {"Tdense", std::vector<DType>{DT_FLOAT, DT_INT64, DT_INT64}},
                      {"dense_shapes", std::vector<PartialTensorShape>{PartialTensorShape({2}), PartialTensorShape({}),
                                                                       PartialTensorShape({-1})}},
                      {"ragged_value_types", std::vector<DType>{DT_INT64}},
                      {"ragged_split_types", std::vector<DType>{DT_INT32}}});
}

TEST(ParseExampleV2Test, DenseSparseRaggedAndDefaults) {
  const std::string e0 = Ex().F("a", {1, 2}).B("c", {"x", "y"}).I("d", {1, 2, 3}).I("r", {4}).I("zz", {9}).Bytes();
  const std::string e1 = Ex().F("a", {3, 4}).I("b", {5}).I("d", {9}).I("r", {1, 2}).Bytes();
  auto out = ParseV2(Strings({e0, e1}));
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& o = *out;
  ASSERT_EQ(o.size(), 8u);
  EXPECT_EQ(o[0].shape(), TensorShape({2, 2}));
  EXPECT_EQ(Values<int64_t>(o[0]), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(Values<std::string>(o[1]), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(Values<int64_t>(o[2]), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(o[3].shape(), TensorShape({2, 2}));
  EXPECT_EQ(Values<float>(o[3]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(Values<int64_t>(o[4]), (std::vector<int64_t>{7, 5}));  // the default where "b" is missing
  EXPECT_EQ(o[5].shape(), TensorShape({2, 3}));
  EXPECT_EQ(Values<int64_t>(o[5]), (std::vector<int64_t>{1, 2, 3, 9, 0, 0}));  // padded
  EXPECT_EQ(Values<int64_t>(o[6]), (std::vector<int64_t>{4, 1, 2}));
  EXPECT_EQ(o[7].dtype(), DT_INT32);
  EXPECT_EQ(Values<int32_t>(o[7]), (std::vector<int32_t>{0, 1, 3}));
}

TEST(ParseExampleV2Test, EmptyBatch) {
  auto out = ParseV2(Strings({}));
  ASSERT_TRUE(out.ok()) << out.status();
  const auto& o = *out;
  EXPECT_EQ(o[0].shape(), TensorShape({0, 2}));
  EXPECT_EQ(o[1].shape(), TensorShape({0}));
  EXPECT_EQ(Values<int64_t>(o[2]), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(o[3].shape(), TensorShape({0, 2}));
  EXPECT_EQ(o[4].shape(), TensorShape({0}));
  EXPECT_EQ(o[5].shape(), TensorShape({0, 0}));
  EXPECT_EQ(Values<int32_t>(o[7]), (std::vector<int32_t>{0}));
}

TEST(ParseExampleV2Test, ScalarBatchAndNoMatrix) {
  const std::string e0 = Ex().F("a", {1, 2}).B("c", {"x"}).Bytes();
  const std::string e1 = Ex().F("a", {3, 4}).B("c", {"p", "q"}).Bytes();
  auto one = ParseV2(MakeTensor<std::string>({e1}, TensorShape({})));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ((*one)[0].shape(), TensorShape({2, 1}));
  EXPECT_EQ(Values<int64_t>((*one)[0]), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(Values<int64_t>((*one)[2]), (std::vector<int64_t>{2}));
  EXPECT_EQ((*one)[3].shape(), TensorShape({2}));
  EXPECT_EQ((*one)[4].shape(), TensorShape({}));
  EXPECT_EQ((*one)[7].shape(), TensorShape({0}));  // no rows to split in a scalar batch
  // TensorFlow's ParseExampleV2 takes a scalar or a vector only.
  auto grid = ParseV2(MakeTensor<std::string>({e0, e1, e1, e0}, TensorShape({2, 2})));
  EXPECT_FALSE(grid.ok());
}

void ExpectInvalid(const StatusOr<std::vector<Tensor>>& out, const std::string& text) {
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
  EXPECT_NE(out.status().message().find(text), std::string::npos) << out.status();
}

TEST(ParseExampleV2Test, ErrorsAreTensorFlows) {
  const std::string good = Ex().F("a", {1, 2}).Bytes();
  ExpectInvalid(ParseV2(Strings({good, Ex().I("b", {1}).Bytes()})),
                "Name: <unknown>, Feature: a (data type: float) is required but could not be found.");
  ExpectInvalid(ParseV2(Strings({good, Ex().F("a", {1, 2, 3}).Bytes()}), Strings({"first", "second"})),
                "Name: second, Key: a, Index: 1.  Number of float values != expected.  Values size: 3 but output "
                "shape: [2]");
  ExpectInvalid(
      ParseV2(Strings({Ex().I("a", {1, 2}).Bytes()})),
      "Name: <unknown>, Key: a, Index: 0.  Data types don't match. Data type: int64 but expected type: float");
  ExpectInvalid(ParseV2(Strings({Ex().F("a", {1, 2}).I("c", {1}).Bytes()})),
                "Key: c, Index: 0.  Data types don't match. Expected type: string, Actual type: int64");
  ExpectInvalid(ParseV2(Strings({good, std::string("\x0a\x05\x0a\x03", 4)})), "Could not parse example input");
  ExpectInvalid(ParseV2(Strings({good}), Strings({"a", "b"})), "Expected names have same shape as serialized");
}

TEST(ParseExampleV2Test, SingleExampleErrorsAreTensorFlows) {
  auto one = [](const std::string& e) { return MakeTensor<std::string>({e}, TensorShape({})); };
  auto missing = ParseV2(one(Ex().I("b", {1}).Bytes()));
  ExpectInvalid(missing, "Feature: a (data type: float) is required but could not be found.");
  EXPECT_EQ(missing.status().message().find("Name:"), std::string::npos) << missing.status();
  ExpectInvalid(ParseV2(one(Ex().F("a", {1, 2, 3}).Bytes())),
                "Key: a.  Can't parse serialized Example: Some float_list slice was not parsed.");
  ExpectInvalid(ParseV2(one(Ex().F("a", {1, 2}).I("c", {1}).Bytes())),
                "Key: c.  Data types don't match. Expected type: string, Actual type: int64");
}

TEST(ParseExampleV2Test, LastOccurrenceWinsAndUnknownExampleFieldsAreSkipped) {
  // Two Features messages in one Example (protobuf merges them): "a" comes twice, the last wins.
  const std::string first = Ex().F("a", {1, 2}).Bytes();
  const std::string second = Ex().F("a", {5, 6}).I("b", {3}).Bytes();
  const std::string unknown = std::string("\x18\x07", 2);  // field 3, varint 7
  auto out = ParseV2(Strings({first + unknown + second}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[3]), (std::vector<float>{5, 6}));
  EXPECT_EQ(Values<int64_t>((*out)[4]), (std::vector<int64_t>{3}));
  // A Features cut short between entries still parses (TensorFlow's parser accepts it).
  std::string longer = first;
  longer[1] = static_cast<char>(longer[1] + 5);  // the Features length now runs past the end
  auto lenient = ParseV2(Strings({longer}));
  ASSERT_TRUE(lenient.ok()) << lenient.status();
  EXPECT_EQ(Values<float>((*lenient)[3]), (std::vector<float>{1, 2}));
}

TEST(ParseExampleV2Test, UnpackedListsParse) {
  // FloatList and Int64List written without packing (as older writers may).
  std::string floats = std::string("\x0d", 1) + std::string("\x00\x00\x80\x3f", 4) + std::string("\x0d", 1) +
                       std::string("\x00\x00\x00\x40", 4);                                     // 1.0f, 2.0f
  std::string feature_a = std::string("\x12", 1) + static_cast<char>(floats.size()) + floats;  // float_list
  std::string ints = std::string("\x08\x05\x08\x7f", 4);                                       // 5, 127
  std::string feature_d = std::string("\x1a", 1) + static_cast<char>(ints.size()) + ints;      // int64_list
  auto entry = [](const std::string& k, const std::string& v) {
    std::string e = std::string("\x0a", 1) + static_cast<char>(k.size()) + k + "\x12" + static_cast<char>(v.size()) + v;
    return std::string("\x0a", 1) + static_cast<char>(e.size()) + e;
  };
  std::string features = entry("a", feature_a) + entry("d", feature_d);
  std::string example = std::string("\x0a", 1) + static_cast<char>(features.size()) + features;
  proto::Example check;
  ASSERT_TRUE(check.ParseFromString(example));
  auto out = ParseV2(Strings({example}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[3]), (std::vector<float>{1, 2}));
  EXPECT_EQ(Values<int64_t>((*out)[5]), (std::vector<int64_t>{5, 127}));
}

TEST(ParseExampleV2Test, BadDefaultsAndShapes) {
  // A default whose shape does not fit the dense shape.
  auto bad_default = RunOpKernel("ParseExampleV2",
                                 {Strings({}), Strings({}), Strings({}), Strings({"a"}), Strings({}),
                                  MakeTensor<float>({1, 2, 3}, TensorShape({3}))},
                                 {{"num_sparse", int64_t{0}},
                                  {"sparse_types", std::vector<DType>{}},
                                  {"Tdense", std::vector<DType>{DT_FLOAT}},
                                  {"dense_shapes", std::vector<PartialTensorShape>{PartialTensorShape({2})}},
                                  {"ragged_value_types", std::vector<DType>{}},
                                  {"ragged_split_types", std::vector<DType>{}}});
  ExpectInvalid(bad_default, "is not compatible with dense_shapes_[0]");
  auto bad_keys = RunOpKernel("ParseExampleV2",
                              {Strings({}), Strings({}), Strings({}), Strings({"a", "b"}), Strings({}),
                               Empty(DT_FLOAT)},
                              {{"num_sparse", int64_t{0}},
                               {"sparse_types", std::vector<DType>{}},
                               {"Tdense", std::vector<DType>{DT_FLOAT}},
                               {"dense_shapes", std::vector<PartialTensorShape>{PartialTensorShape({2})}},
                               {"ragged_value_types", std::vector<DType>{}},
                               {"ragged_split_types", std::vector<DType>{}}});
  ExpectInvalid(bad_keys, "dense_keys");
}

TEST(ParseExampleTest, V1KeysAsScalarInputs) {
  const std::string e0 = Ex().I("s", {3, 4, 5}).F("f", {0.5}).Bytes();
  const std::string e1 = Ex().I("s", {6}).Bytes();
  auto out = RunOpKernel("ParseExample",
                         {Strings({e0, e1}), Strings({}), MakeTensor<std::string>({"s"}, TensorShape({})),
                          MakeTensor<std::string>({"f"}, TensorShape({})), MakeTensor<float>({-1}, TensorShape({1}))},
                         {{"Nsparse", int64_t{1}},
                          {"Ndense", int64_t{1}},
                          {"sparse_types", std::vector<DType>{DT_INT64}},
                          {"Tdense", std::vector<DType>{DT_FLOAT}},
                          {"dense_shapes", std::vector<PartialTensorShape>{PartialTensorShape({1})}}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{0, 0, 0, 1, 0, 2, 1, 0}));
  EXPECT_EQ(Values<int64_t>((*out)[1]), (std::vector<int64_t>{3, 4, 5, 6}));
  EXPECT_EQ(Values<int64_t>((*out)[2]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Values<float>((*out)[3]), (std::vector<float>{0.5, -1}));
}

TEST(ParseSingleExampleTest, KeysAsAttrs) {
  const std::string e = Ex().B("s", {"u", "v"}).F("f", {1.5, 2.5}).Bytes();
  auto out = RunOpKernel("ParseSingleExample", {MakeTensor<std::string>({e}, TensorShape({})), Empty(DT_FLOAT)},
                         {{"num_sparse", int64_t{1}},
                          {"sparse_keys", std::vector<std::string>{"s"}},
                          {"dense_keys", std::vector<std::string>{"f"}},
                          {"sparse_types", std::vector<DType>{DT_STRING}},
                          {"Tdense", std::vector<DType>{DT_FLOAT}},
                          {"dense_shapes", std::vector<PartialTensorShape>{PartialTensorShape({2})}}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(Values<std::string>((*out)[1]), (std::vector<std::string>{"u", "v"}));
  EXPECT_EQ(Values<int64_t>((*out)[2]), (std::vector<int64_t>{2}));
  EXPECT_EQ(Values<float>((*out)[3]), (std::vector<float>{1.5, 2.5}));
}

TEST(ParseExampleV2Test, StaticShapes) {
  auto shapes = InferShapes(
      "ParseExampleV2",
      {Strings({"", ""}), Strings({}), Strings({"c"}), Strings({"a", "b", "d"}), Strings({"r"}), Empty(DT_FLOAT),
       MakeTensor<int64_t>({7}, TensorShape({})), MakeTensor<int64_t>({0}, TensorShape({}))},
      {{"num_sparse", int64_t{1}},
       {"sparse_types", std::vector<DType>{DT_STRING}},
       {"Tdense", std::vector<DType>{DT_FLOAT, DT_INT64, DT_INT64}},
       {"dense_shapes",
        std::vector<PartialTensorShape>{PartialTensorShape({2}), PartialTensorShape({}), PartialTensorShape({-1})}},
       {"ragged_value_types", std::vector<DType>{DT_INT64}},
       {"ragged_split_types", std::vector<DType>{DT_INT32}}});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  const auto& s = *shapes;
  EXPECT_EQ(s[0], PartialTensorShape({-1, 2}));
  EXPECT_EQ(s[1], PartialTensorShape({-1}));
  EXPECT_EQ(s[2], PartialTensorShape({2}));
  EXPECT_EQ(s[3], PartialTensorShape({2, 2}));
  EXPECT_EQ(s[4], PartialTensorShape({2}));
  EXPECT_EQ(s[5], PartialTensorShape({2, -1}));
  EXPECT_EQ(s[6], PartialTensorShape({-1}));
}

}  // namespace
}  // namespace dflow
