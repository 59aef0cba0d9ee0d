#include "tensor/tensor_proto.h"

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/tensor.pb.h"
#include "proto/tensor_shape.pb.h"

namespace dflow {
namespace {

proto::TensorShapeProto ShapeProto(std::initializer_list<int64_t> dims) {
  proto::TensorShapeProto p;
  for (int64_t d : dims) p.add_dim()->set_size(d);
  return p;
}

proto::TensorProto MakeProto(proto::DataType dtype, std::initializer_list<int64_t> dims) {
  proto::TensorProto p;
  p.set_dtype(dtype);
  *p.mutable_tensor_shape() = ShapeProto(dims);
  return p;
}

bool SameTensor(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == DT_STRING) {
    auto x = a.flat<std::string>(), y = b.flat<std::string>();
    return std::equal(x.begin(), x.end(), y.begin());
  }
  return a.TotalBytes() == b.TotalBytes() &&
         (a.TotalBytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0);
}

Tensor RoundTrip(const Tensor& t) {
  proto::TensorProto p;
  TensorToProto(t, &p);
  // Through the wire too, as a file would carry it.
  proto::TensorProto q;
  EXPECT_TRUE(q.ParseFromString(p.SerializeAsString()));
  auto back = TensorFromProto(q);
  EXPECT_TRUE(back.ok()) << back.status();
  return back.ok() ? *back : Tensor();
}

template <typename T>
void ExpectRoundTrip(std::vector<T> values, const TensorShape& shape) {
  // Filled element by element: std::vector<bool> has no span.
  ASSERT_EQ(static_cast<int64_t>(values.size()), shape.num_elements());
  Tensor t(DTypeOf<T>::value, shape);
  for (size_t i = 0; i < values.size(); ++i) t.flat<T>()[i] = values[i];
  Tensor back = RoundTrip(t);
  EXPECT_TRUE(SameTensor(t, back)) << t.DebugString() << " vs " << back.DebugString();
}

TEST(TensorProtoTest, RoundTripsEveryDType) {
  ExpectRoundTrip<float>({1.5f, -2.25f, 0.0f, std::numeric_limits<float>::infinity(), 3e-38f, 7.0f}, {2, 3});
  ExpectRoundTrip<double>({1.0 / 3, -1e300}, {2});
  ExpectRoundTrip<int32_t>({std::numeric_limits<int32_t>::min(), -1, 0, std::numeric_limits<int32_t>::max()}, {2, 2});
  ExpectRoundTrip<uint8_t>({0, 1, 127, 255}, {4, 1});
  ExpectRoundTrip<int64_t>({std::numeric_limits<int64_t>::min(), 42, std::numeric_limits<int64_t>::max()}, {3});
  ExpectRoundTrip<bool>({true, false, true}, {1, 3});
  ExpectRoundTrip<std::string>({"a", "", std::string("with\0nul", 8), "\xff\xfe"}, {2, 2});
}

TEST(TensorProtoTest, RoundTripsScalarsAndEmptyShapes) {
  Tensor back = RoundTrip(Tensor(7.5f));
  ASSERT_EQ(back.dtype(), DT_FLOAT);
  EXPECT_TRUE(back.shape().IsScalar());
  EXPECT_EQ(back.scalar<float>(), 7.5f);

  back = RoundTrip(Tensor(std::string("hello")));
  ASSERT_EQ(back.dtype(), DT_STRING);
  EXPECT_EQ(back.scalar<std::string>(), "hello");

  back = RoundTrip(Tensor(int64_t{-9}));
  EXPECT_EQ(back.scalar<int64_t>(), -9);

  for (DType t : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT64, DT_BOOL, DT_STRING}) {
    Tensor empty(t, TensorShape{0, 3});
    Tensor b = RoundTrip(empty);
    EXPECT_EQ(b.dtype(), t);
    EXPECT_EQ(b.shape(), (TensorShape{0, 3})) << b.shape().DebugString();
    EXPECT_EQ(b.NumElements(), 0);
  }
}

TEST(TensorProtoTest, WritesNumbersAsContentAndStringsAsValues) {
  proto::TensorProto p;
  TensorToProto(Tensor(DT_INT32, TensorShape{2, 2}), &p);
  EXPECT_EQ(p.dtype(), proto::DT_INT32);
  EXPECT_EQ(p.tensor_content().size(), 16u);
  ASSERT_EQ(p.tensor_shape().dim_size(), 2);
  EXPECT_EQ(p.tensor_shape().dim(0).size(), 2);
  EXPECT_EQ(p.int_val_size(), 0);

  TensorToProto(Tensor(std::string("x")), &p);
  EXPECT_EQ(p.dtype(), proto::DT_STRING);
  EXPECT_TRUE(p.tensor_content().empty());
  ASSERT_EQ(p.string_val_size(), 1);
  EXPECT_EQ(p.string_val(0), "x");
}

TEST(TensorProtoTest, ReadsLittleEndianContent) {
  proto::TensorProto p = MakeProto(proto::DT_INT32, {2});
  const unsigned char bytes[] = {1, 0, 0, 0, 0x00, 0x01, 0x00, 0x80};
  p.set_tensor_content(reinterpret_cast<const char*>(bytes), sizeof(bytes));
  auto t = TensorFromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->flat<int32_t>()[0], 1);
  EXPECT_EQ(t->flat<int32_t>()[1], static_cast<int32_t>(0x80000100u));
}

TEST(TensorProtoTest, NormalizesBoolContent) {
  proto::TensorProto p = MakeProto(proto::DT_BOOL, {3});
  p.set_tensor_content(std::string("\x00\x02\xff", 3));
  auto t = TensorFromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->flat<bool>()[0]);
  EXPECT_TRUE(t->flat<bool>()[1]);
  EXPECT_TRUE(t->flat<bool>()[2]);
}

TEST(TensorProtoTest, TypedFieldsRepeatTheLastValue) {
  proto::TensorProto p = MakeProto(proto::DT_FLOAT, {2, 3});
  p.add_float_val(1.0f);
  p.add_float_val(2.0f);
  auto t = TensorFromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(std::vector<float>(t->flat<float>().begin(), t->flat<float>().end()),
            (std::vector<float>{1, 2, 2, 2, 2, 2}));

  p = MakeProto(proto::DT_INT64, {4});
  p.add_int64_val(-3);
  t = TensorFromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  for (int64_t v : t->flat<int64_t>()) EXPECT_EQ(v, -3);

  p = MakeProto(proto::DT_UINT8, {3});
  p.add_int_val(200);
  t = TensorFromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  for (uint8_t v : t->flat<uint8_t>()) EXPECT_EQ(v, 200);

  p = MakeProto(proto::DT_STRING, {3});
  p.add_string_val("a");
  p.add_string_val("b");
  t = TensorFromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->flat<std::string>()[0], "a");
  EXPECT_EQ(t->flat<std::string>()[2], "b");

  p = MakeProto(proto::DT_BOOL, {2});
  p.add_bool_val(true);
  t = TensorFromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->flat<bool>()[0] && t->flat<bool>()[1]);

  // A scalar given as a one-element list, as TensorFlow writes small constants.
  p = MakeProto(proto::DT_DOUBLE, {});
  p.add_double_val(2.5);
  t = TensorFromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->scalar<double>(), 2.5);
}

TEST(TensorProtoTest, NoValuesMeansZeros) {
  for (proto::DataType dt :
       {proto::DT_FLOAT, proto::DT_DOUBLE, proto::DT_INT32, proto::DT_UINT8, proto::DT_INT64, proto::DT_BOOL}) {
    auto t = TensorFromProto(MakeProto(dt, {5}));
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_EQ(t->NumElements(), 5);
    std::vector<char> zeros(t->TotalBytes(), 0);
    EXPECT_EQ(std::memcmp(t->raw_data(), zeros.data(), zeros.size()), 0) << t->DebugString();
  }
  auto s = TensorFromProto(MakeProto(proto::DT_STRING, {2}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->flat<std::string>()[1], "");
}

void ExpectInvalid(const proto::TensorProto& p, const std::string& mentions) {
  auto t = TensorFromProto(p);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << t.status();
  EXPECT_NE(std::string(t.status().message()).find(mentions), std::string::npos) << t.status();
}

TEST(TensorProtoTest, RejectsContentOfTheWrongSize) {
  proto::TensorProto p = MakeProto(proto::DT_FLOAT, {2, 2});
  p.set_tensor_content(std::string(15, '\0'));
  ExpectInvalid(p, "16 bytes");
  p.set_tensor_content(std::string(17, '\0'));
  ExpectInvalid(p, "16 bytes");
  // Content for an empty tensor.
  p = MakeProto(proto::DT_INT32, {0});
  p.set_tensor_content("abcd");
  ExpectInvalid(p, "tensor_content");
  // Strings never come as content.
  p = MakeProto(proto::DT_STRING, {1});
  p.set_tensor_content("abcd");
  ExpectInvalid(p, "string_val");
}

TEST(TensorProtoTest, RejectsTooManyValues) {
  proto::TensorProto p = MakeProto(proto::DT_INT32, {2});
  for (int i = 0; i < 3; ++i) p.add_int_val(i);
  ExpectInvalid(p, "3 values");
}

TEST(TensorProtoTest, RejectsBadShapes) {
  proto::TensorProto p = MakeProto(proto::DT_FLOAT, {2, -3});
  ExpectInvalid(p, "-3");
  p = MakeProto(proto::DT_FLOAT, {-1});
  ExpectInvalid(p, "-1");
  p = MakeProto(proto::DT_FLOAT, {});
  p.mutable_tensor_shape()->set_unknown_rank(true);
  ExpectInvalid(p, "unknown rank");
  p = MakeProto(proto::DT_FLOAT, {});
  for (int i = 0; i < kMaxRank + 1; ++i) p.mutable_tensor_shape()->add_dim()->set_size(1);
  ExpectInvalid(p, "rank");
  // The element count overflows int64.
  p = MakeProto(proto::DT_FLOAT, {int64_t{1} << 40, int64_t{1} << 40});
  p.add_float_val(1.0f);
  ExpectInvalid(p, "too many elements");
}

TEST(TensorProtoTest, RejectsAbsurdFillsWithoutAllocating) {
  // 128 GiB claimed by one value: refused before any allocation (an attempt would fail or hang).
  proto::TensorProto p = MakeProto(proto::DT_FLOAT, {int64_t{1} << 35});
  p.add_float_val(1.0f);
  ExpectInvalid(p, "more than");
  // With no values at all (zeros).
  p = MakeProto(proto::DT_DOUBLE, {int64_t{1} << 20, int64_t{1} << 20});
  ExpectInvalid(p, "more than");
  // Strings count their in-memory size.
  p = MakeProto(proto::DT_STRING, {int64_t{1} << 30});
  p.add_string_val("x");
  ExpectInvalid(p, "more than");
  // Just at the limit is fine in principle; just above is refused.
  p = MakeProto(proto::DT_UINT8, {kMaxProtoTensorBytes + 1});
  ExpectInvalid(p, "more than");
}

TEST(TensorProtoTest, RejectsUnsupportedDTypes) {
  proto::TensorProto p = MakeProto(proto::DT_INVALID, {1});
  ExpectInvalid(p, "dtype");
  for (proto::DataType dt :
       {proto::DT_HALF, proto::DT_COMPLEX64, proto::DT_INT16, proto::DT_RESOURCE, proto::DT_FLOAT_REF}) {
    p = MakeProto(dt, {1});
    ExpectInvalid(p, "dtype");
  }
  p = MakeProto(static_cast<proto::DataType>(12345), {1});
  ExpectInvalid(p, "12345");
}

TEST(TensorProtoTest, ShapeProtos) {
  proto::TensorShapeProto sp;
  ShapeToProto(PartialTensorShape({2, -1, 3}), &sp);
  ASSERT_EQ(sp.dim_size(), 3);
  EXPECT_EQ(sp.dim(1).size(), -1);
  auto partial = PartialShapeFromProto(sp);
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_EQ(*partial, PartialTensorShape({2, -1, 3}));
  EXPECT_FALSE(ShapeFromProto(sp).ok());

  ShapeToProto(PartialTensorShape::UnknownRank(), &sp);
  EXPECT_TRUE(sp.unknown_rank());
  EXPECT_EQ(sp.dim_size(), 0);
  partial = PartialShapeFromProto(sp);
  ASSERT_TRUE(partial.ok());
  EXPECT_TRUE(partial->unknown_rank());

  ShapeToProto(PartialTensorShape::Scalar(), &sp);
  partial = PartialShapeFromProto(sp);
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->dims(), 0);
  auto full = ShapeFromProto(sp);
  ASSERT_TRUE(full.ok());
  EXPECT_TRUE(full->IsScalar());

  sp = ShapeProto({4, 5});
  full = ShapeFromProto(sp);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(*full, (TensorShape{4, 5}));

  // unknown_rank together with dims is contradictory.
  sp = ShapeProto({1});
  sp.set_unknown_rank(true);
  EXPECT_EQ(PartialShapeFromProto(sp).status().code(), absl::StatusCode::kInvalidArgument);
  sp = ShapeProto({-2});
  EXPECT_EQ(PartialShapeFromProto(sp).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow
