// DType, TensorShape, PartialTensorShape and Tensor: names, overflow checks, buffer sharing and
// the text form of values.
#include "tensor/tensor.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/dtype.h"
#include "tensor/tensor_shape.h"

namespace dflow {
namespace {

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kTensorAlignment == 0; }

template <typename T>
Tensor Make(std::vector<T> values, TensorShape shape) {
  // Through a plain array: std::vector<bool> has no data().
  std::unique_ptr<T[]> buf(new T[values.size()]);
  for (size_t i = 0; i < values.size(); ++i) buf[i] = values[i];
  StatusOr<Tensor> t = Tensor::FromValues<T>(absl::Span<const T>(buf.get(), values.size()), shape);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : Tensor();
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  auto f = t.flat<T>();
  return std::vector<T>(f.begin(), f.end());
}

// ---- DType ----

TEST(DTypeTest, Names) {
  EXPECT_EQ(DTypeString(DT_FLOAT), "float");
  EXPECT_EQ(DTypeString(DT_DOUBLE), "double");
  EXPECT_EQ(DTypeString(DT_INT32), "int32");
  EXPECT_EQ(DTypeString(DT_UINT8), "uint8");
  EXPECT_EQ(DTypeString(DT_STRING), "string");
  EXPECT_EQ(DTypeString(DT_INT64), "int64");
  EXPECT_EQ(DTypeString(DT_BOOL), "bool");
  EXPECT_EQ(DTypeString(DT_RESOURCE), "resource");
  EXPECT_EQ(DTypeString(DT_FLOAT_REF), "float_ref");
  EXPECT_EQ(DTypeString(DT_INT64_REF), "int64_ref");
}

TEST(DTypeTest, ParseEveryNameBack) {
  for (DType t : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_STRING, DT_INT64, DT_BOOL, DT_RESOURCE}) {
    for (DType u : {t, MakeRefType(t)}) {
      DType parsed = DT_INVALID;
      ASSERT_TRUE(DTypeFromString(DTypeString(u), &parsed)) << DTypeString(u);
      EXPECT_EQ(parsed, u) << DTypeString(u);
    }
  }
}

TEST(DTypeTest, ParseAliasesAndRefs) {
  DType t = DT_INVALID;
  ASSERT_TRUE(DTypeFromString("float32", &t));
  EXPECT_EQ(t, DT_FLOAT);
  ASSERT_TRUE(DTypeFromString("float64", &t));
  EXPECT_EQ(t, DT_DOUBLE);
  ASSERT_TRUE(DTypeFromString("int32_ref", &t));
  EXPECT_EQ(t, DT_INT32_REF);
  ASSERT_TRUE(DTypeFromString("float32_ref", &t));
  EXPECT_EQ(t, DT_FLOAT_REF);
}

TEST(DTypeTest, ParseRejectsUnknownNames) {
  DType t = DT_INT32;
  for (const char* bad : {"", "bogus", "Float", "FLOAT", "_ref", "float_ref_ref", "int16", "float ", "ref"}) {
    EXPECT_FALSE(DTypeFromString(bad, &t)) << "'" << bad << "'";
  }
  EXPECT_EQ(t, DT_INT32);  // untouched on failure
}

TEST(DTypeTest, RefTypes) {
  EXPECT_TRUE(IsRefType(DT_FLOAT_REF));
  EXPECT_TRUE(IsRefType(DT_RESOURCE_REF));
  EXPECT_FALSE(IsRefType(DT_FLOAT));
  EXPECT_FALSE(IsRefType(DT_RESOURCE));
  EXPECT_FALSE(IsRefType(DT_INVALID));
  EXPECT_EQ(BaseType(DT_FLOAT_REF), DT_FLOAT);
  EXPECT_EQ(BaseType(DT_STRING_REF), DT_STRING);
  EXPECT_EQ(BaseType(DT_INT32), DT_INT32);
  EXPECT_EQ(MakeRefType(DT_INT32), DT_INT32_REF);
  EXPECT_EQ(MakeRefType(DT_INT32_REF), DT_INT32_REF);
  EXPECT_EQ(static_cast<int>(DT_BOOL_REF), static_cast<int>(DT_BOOL) + kDTypeRefOffset);
}

TEST(DTypeTest, SizesAndKinds) {
  EXPECT_EQ(DTypeSize(DT_FLOAT), 4u);
  EXPECT_EQ(DTypeSize(DT_DOUBLE), 8u);
  EXPECT_EQ(DTypeSize(DT_INT32), 4u);
  EXPECT_EQ(DTypeSize(DT_INT64), 8u);
  EXPECT_EQ(DTypeSize(DT_UINT8), 1u);
  EXPECT_EQ(DTypeSize(DT_BOOL), 1u);
  EXPECT_EQ(DTypeSize(DT_STRING), 0u);
  EXPECT_EQ(DTypeSize(DT_INVALID), 0u);
  EXPECT_EQ(DTypeSize(DT_FLOAT_REF), 4u);

  EXPECT_TRUE(IsValidDType(DT_FLOAT));
  EXPECT_TRUE(IsValidDType(DT_RESOURCE));
  EXPECT_FALSE(IsValidDType(DT_INVALID));
  EXPECT_FALSE(IsValidDType(DT_FLOAT_REF));
  EXPECT_FALSE(IsValidDType(5));
  EXPECT_FALSE(IsValidDType(-1));

  EXPECT_TRUE(IsFloating(DT_FLOAT));
  EXPECT_TRUE(IsFloating(DT_DOUBLE));
  EXPECT_FALSE(IsFloating(DT_INT32));
  EXPECT_TRUE(IsInteger(DT_UINT8));
  EXPECT_TRUE(IsInteger(DT_INT64));
  EXPECT_FALSE(IsInteger(DT_BOOL));
  EXPECT_TRUE(IsNumeric(DT_INT32));
  EXPECT_FALSE(IsNumeric(DT_STRING));
  EXPECT_FALSE(IsNumeric(DT_BOOL));

  EXPECT_EQ(DTypeOf<float>::value, DT_FLOAT);
  EXPECT_EQ(DTypeOf<int64_t>::value, DT_INT64);
  EXPECT_EQ(DTypeOf<std::string>::value, DT_STRING);
}

TEST(DTypeTest, VisitDispatchesOnType) {
  size_t size = 0;
  EXPECT_TRUE(VisitNumeric(DT_DOUBLE, [&]<typename T>() { size = sizeof(T); }));
  EXPECT_EQ(size, sizeof(double));
  EXPECT_FALSE(VisitNumeric(DT_BOOL, [&]<typename T>() {}));
  EXPECT_TRUE(VisitPOD(DT_BOOL, [&]<typename T>() { size = sizeof(T); }));
  EXPECT_EQ(size, sizeof(bool));
  bool is_string = false;
  EXPECT_TRUE(VisitAll(DT_STRING, [&]<typename T>() { is_string = std::is_same_v<T, std::string>; }));
  EXPECT_TRUE(is_string);
  EXPECT_FALSE(VisitAll(DT_RESOURCE, [&]<typename T>() {}));
}

// ---- TensorShape ----

TEST(TensorShapeTest, ScalarAndDims) {
  TensorShape scalar;
  EXPECT_TRUE(scalar.IsScalar());
  EXPECT_EQ(scalar.dims(), 0);
  EXPECT_EQ(scalar.num_elements(), 1);
  EXPECT_EQ(scalar.DebugString(), "[]");

  TensorShape s{2, 3, 4};
  EXPECT_FALSE(s.IsScalar());
  EXPECT_EQ(s.dims(), 3);
  EXPECT_EQ(s.dim_size(1), 3);
  EXPECT_EQ(s.num_elements(), 24);
  EXPECT_EQ(s.DebugString(), "[2,3,4]");
  EXPECT_EQ(s, (TensorShape{2, 3, 4}));
  EXPECT_NE(s, (TensorShape{2, 4, 3}));
  EXPECT_NE(s, (TensorShape{2, 3}));

  EXPECT_EQ((TensorShape{0, 5}).num_elements(), 0);
  EXPECT_EQ((TensorShape{7}).num_elements(), 7);
}

TEST(TensorShapeTest, FromDimsValid) {
  std::vector<int64_t> dims = {4, 1, 5};
  StatusOr<TensorShape> s = TensorShape::FromDims(dims);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, (TensorShape{4, 1, 5}));
  EXPECT_EQ(s->num_elements(), 20);
}

TEST(TensorShapeTest, OverflowingElementCountIsRejected) {
  std::vector<int64_t> dims = {int64_t{1} << 40, int64_t{1} << 40};
  StatusOr<TensorShape> s = TensorShape::FromDims(dims);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);

  // Overflow of int64 itself.
  std::vector<int64_t> huge = {int64_t{1} << 62, 4};
  EXPECT_EQ(TensorShape::FromDims(huge).status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<int64_t> max = {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max()};
  EXPECT_EQ(TensorShape::FromDims(max).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorShapeTest, ElementLimitIsInclusive) {
  std::vector<int64_t> at = {int64_t{1} << 28, int64_t{1} << 28};  // exactly kMaxElements
  StatusOr<TensorShape> s = TensorShape::FromDims(at);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->num_elements(), kMaxElements);
  std::vector<int64_t> past = {int64_t{1} << 28, int64_t{1} << 28, 2};
  EXPECT_EQ(TensorShape::FromDims(past).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorShapeTest, ZeroDimensionNeverOverflows) {
  std::vector<int64_t> dims = {0, int64_t{1} << 40, int64_t{1} << 40};
  StatusOr<TensorShape> s = TensorShape::FromDims(dims);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->num_elements(), 0);
}

TEST(TensorShapeTest, NegativeDimensionIsRejected) {
  std::vector<int64_t> dims = {2, -3};
  StatusOr<TensorShape> s = TensorShape::FromDims(dims);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("-3"), absl::string_view::npos) << s.status();
}

TEST(TensorShapeTest, RankLimit) {
  std::vector<int64_t> ok_dims(kMaxRank, 1);
  StatusOr<TensorShape> ok = TensorShape::FromDims(ok_dims);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->dims(), kMaxRank);

  std::vector<int64_t> too_many(kMaxRank + 1, 1);
  StatusOr<TensorShape> bad = TensorShape::FromDims(too_many);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);

  TensorShape s = *ok;
  Status add = s.AddDim(1);
  EXPECT_EQ(add.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.dims(), kMaxRank);
}

TEST(TensorShapeTest, AddDimChecksAndLeavesShapeOnError) {
  TensorShape s;
  ASSERT_TRUE(s.AddDim(3).ok());
  ASSERT_TRUE(s.AddDim(4).ok());
  EXPECT_EQ(s.num_elements(), 12);
  EXPECT_EQ(s.AddDim(-1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.AddDim(int64_t{1} << 60).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s, (TensorShape{3, 4}));
  EXPECT_EQ(s.num_elements(), 12);
}

TEST(TensorShapeTest, MultiplyWithoutOverflow) {
  EXPECT_EQ(MultiplyWithoutOverflow(6, 7), 42);
  EXPECT_EQ(MultiplyWithoutOverflow(0, std::numeric_limits<int64_t>::max()), 0);
  EXPECT_EQ(MultiplyWithoutOverflow(int64_t{1} << 32, int64_t{1} << 32), -1);
  EXPECT_EQ(MultiplyWithoutOverflow(-1, 5), -1);
  EXPECT_EQ(MultiplyWithoutOverflow(5, -1), -1);
}

// ---- PartialTensorShape ----

TEST(PartialTensorShapeTest, DebugString) {
  EXPECT_EQ((PartialTensorShape{2, -1}).DebugString(), "[2,?]");
  EXPECT_EQ(PartialTensorShape().DebugString(), "<unknown>");
  EXPECT_EQ(PartialTensorShape::UnknownRank().DebugString(), "<unknown>");
  EXPECT_EQ(PartialTensorShape::Scalar().DebugString(), "[]");
  EXPECT_EQ(PartialTensorShape::UnknownOfRank(3).DebugString(), "[?,?,?]");
  EXPECT_EQ(PartialTensorShape(TensorShape{4, 5}).DebugString(), "[4,5]");
}

TEST(PartialTensorShapeTest, RankAndDefinedness) {
  PartialTensorShape unknown;
  EXPECT_TRUE(unknown.unknown_rank());
  EXPECT_EQ(unknown.dims(), -1);
  EXPECT_FALSE(unknown.IsFullyDefined());
  EXPECT_EQ(unknown.num_elements(), -1);

  PartialTensorShape partial{2, -1};
  EXPECT_FALSE(partial.unknown_rank());
  EXPECT_EQ(partial.dims(), 2);
  EXPECT_EQ(partial.dim_size(1), -1);
  EXPECT_FALSE(partial.IsFullyDefined());
  EXPECT_EQ(partial.num_elements(), -1);
  EXPECT_FALSE(partial.ToTensorShape().ok());

  PartialTensorShape full{2, 3};
  EXPECT_TRUE(full.IsFullyDefined());
  EXPECT_EQ(full.num_elements(), 6);
  StatusOr<TensorShape> ts = full.ToTensorShape();
  ASSERT_TRUE(ts.ok()) << ts.status();
  EXPECT_EQ(*ts, (TensorShape{2, 3}));

  EXPECT_TRUE(PartialTensorShape::Scalar().IsFullyDefined());
  EXPECT_EQ(PartialTensorShape::Scalar().num_elements(), 1);
  EXPECT_EQ(PartialTensorShape::Scalar().dims(), 0);
}

TEST(PartialTensorShapeTest, HugeFullyDefinedShapeDoesNotConvert) {
  std::vector<int64_t> dims = {int64_t{1} << 40, int64_t{1} << 40};
  StatusOr<PartialTensorShape> p = PartialTensorShape::FromDims(dims);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->IsFullyDefined());
  EXPECT_EQ(p->num_elements(), -1);  // overflow
  EXPECT_EQ(p->ToTensorShape().status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PartialTensorShapeTest, FromDimsValidates) {
  std::vector<int64_t> good = {3, -1};
  StatusOr<PartialTensorShape> p = PartialTensorShape::FromDims(good);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->DebugString(), "[3,?]");
  std::vector<int64_t> bad = {3, -2};
  EXPECT_EQ(PartialTensorShape::FromDims(bad).status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<int64_t> deep(kMaxRank + 1, -1);
  EXPECT_EQ(PartialTensorShape::FromDims(deep).status().code(), absl::StatusCode::kInvalidArgument);
  std::vector<int64_t> none;
  StatusOr<PartialTensorShape> scalar = PartialTensorShape::FromDims(none);
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(*scalar, PartialTensorShape::Scalar());
}

TEST(PartialTensorShapeTest, Compatibility) {
  PartialTensorShape a{2, -1};
  EXPECT_TRUE(a.IsCompatibleWith(PartialTensorShape{2, 3}));
  EXPECT_TRUE(a.IsCompatibleWith(PartialTensorShape{-1, 7}));
  EXPECT_TRUE(a.IsCompatibleWith(TensorShape{2, 9}));
  EXPECT_FALSE(a.IsCompatibleWith(PartialTensorShape{3, -1}));
  EXPECT_FALSE(a.IsCompatibleWith(PartialTensorShape{2}));
  EXPECT_FALSE(a.IsCompatibleWith(PartialTensorShape{2, -1, 1}));
  EXPECT_TRUE(a.IsCompatibleWith(PartialTensorShape()));
  EXPECT_TRUE(PartialTensorShape().IsCompatibleWith(a));
  EXPECT_TRUE(PartialTensorShape().IsCompatibleWith(PartialTensorShape::Scalar()));
  EXPECT_FALSE(PartialTensorShape::Scalar().IsCompatibleWith(PartialTensorShape{1}));
}

TEST(PartialTensorShapeTest, Merge) {
  StatusOr<PartialTensorShape> m = PartialTensorShape{2, -1}.MergeWith(PartialTensorShape{-1, 3});
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, (PartialTensorShape{2, 3}));

  m = PartialTensorShape().MergeWith(PartialTensorShape{-1, 4});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->DebugString(), "[?,4]");

  m = PartialTensorShape{5}.MergeWith(PartialTensorShape());
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->DebugString(), "[5]");

  m = PartialTensorShape().MergeWith(PartialTensorShape());
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->unknown_rank());

  m = PartialTensorShape{2, -1}.MergeWith(PartialTensorShape{3, -1});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("[2,?]"), absl::string_view::npos) << m.status();
  EXPECT_NE(m.status().message().find("[3,?]"), absl::string_view::npos) << m.status();

  EXPECT_FALSE(PartialTensorShape{2}.MergeWith(PartialTensorShape{2, 1}).ok());
}

TEST(PartialTensorShapeTest, Equality) {
  EXPECT_EQ(PartialTensorShape(), PartialTensorShape::UnknownRank());
  EXPECT_FALSE(PartialTensorShape() == PartialTensorShape::Scalar());
  EXPECT_EQ((PartialTensorShape{2, -1}), (PartialTensorShape{2, -5}));  // any negative is unknown
  EXPECT_FALSE((PartialTensorShape{2, -1}) == (PartialTensorShape{2, 3}));
}

// ---- Tensor: storage ----

TEST(TensorTest, Uninitialized) {
  Tensor t;
  EXPECT_FALSE(t.IsInitialized());
  EXPECT_EQ(t.dtype(), DT_INVALID);
  EXPECT_FALSE(t.RefCountIsOne());
  Tensor u;
  EXPECT_FALSE(t.SharesBufferWith(u));
  EXPECT_FALSE(t.DeepCopy().IsInitialized());
}

TEST(TensorTest, ZeroFilledConstruction) {
  Tensor f(DT_FLOAT, TensorShape{2, 3});
  EXPECT_TRUE(f.IsInitialized());
  EXPECT_EQ(f.dtype(), DT_FLOAT);
  EXPECT_EQ(f.dims(), 2);
  EXPECT_EQ(f.dim_size(0), 2);
  EXPECT_EQ(f.NumElements(), 6);
  EXPECT_EQ(f.TotalBytes(), 24u);
  for (float v : f.flat<float>()) EXPECT_EQ(v, 0.0f);
  EXPECT_TRUE(f.RefCountIsOne());

  Tensor s(DT_STRING, TensorShape{3});
  for (const std::string& v : s.flat<std::string>()) EXPECT_EQ(v, "");

  Tensor b(DT_BOOL, TensorShape{4});
  for (bool v : b.flat<bool>()) EXPECT_FALSE(v);
}

TEST(TensorTest, DataIs64ByteAligned) {
  for (DType dt : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64, DT_UINT8, DT_BOOL, DT_STRING}) {
    for (int64_t n : {1, 3, 17, 1000}) {
      Tensor t(dt, TensorShape{n});
      EXPECT_TRUE(Aligned(t.raw_data())) << DTypeString(dt) << " x" << n;
      StatusOr<Tensor> a = Tensor::Allocate(dt, TensorShape{n});
      ASSERT_TRUE(a.ok()) << a.status();
      EXPECT_TRUE(Aligned(a->raw_data())) << DTypeString(dt) << " x" << n;
    }
  }
  EXPECT_TRUE(Aligned(Tensor(1.0f).raw_data()));
}

TEST(TensorTest, ResourceTensorsHoldHandles) {
  ResourceHandle h;
  h.container = "c";
  h.name = "v";
  h.type_name = "Var";
  auto payload = std::make_shared<int>(7);
  h.payload = payload;
  Tensor t(h);
  EXPECT_EQ(t.dtype(), DT_RESOURCE);
  EXPECT_EQ(t.ToString(), "<Var c/v>");
  Tensor copy = t.DeepCopy();
  EXPECT_EQ(copy.scalar<ResourceHandle>().name, "v");
  EXPECT_EQ(payload.use_count(), 4);  // ours, h's, t's and the copy's
  t = Tensor();
  copy = Tensor();
  EXPECT_EQ(payload.use_count(), 2);  // handles are destroyed with their buffers
  auto many = Tensor::Allocate(DT_RESOURCE, TensorShape{3});
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(many->flat<ResourceHandle>()[2].name, "");
}

TEST(TensorTest, AllocateRejectsNonDataTypes) {
  EXPECT_EQ(Tensor::Allocate(DT_INVALID, TensorShape{1}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Tensor::Allocate(DT_FLOAT_REF, TensorShape{1}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorTest, ScalarConstructors) {
  EXPECT_EQ(Tensor(1.5f).dtype(), DT_FLOAT);
  EXPECT_EQ(Tensor(1.5f).scalar<float>(), 1.5f);
  EXPECT_EQ(Tensor(2.5).dtype(), DT_DOUBLE);
  EXPECT_EQ(Tensor(int32_t{3}).dtype(), DT_INT32);
  EXPECT_EQ(Tensor(int64_t{4}).dtype(), DT_INT64);
  EXPECT_EQ(Tensor(int64_t{4}).scalar<int64_t>(), 4);
  EXPECT_EQ(Tensor(true).dtype(), DT_BOOL);
  EXPECT_EQ(Tensor("abc").dtype(), DT_STRING);
  EXPECT_EQ(Tensor("abc").scalar<std::string>(), "abc");
  EXPECT_EQ(Tensor(std::string("xyz")).scalar<std::string>(), "xyz");
  EXPECT_EQ(Tensor(1.5f).dims(), 0);
  EXPECT_EQ(Tensor(1.5f).NumElements(), 1);
}

TEST(TensorTest, CopiesShareTheBuffer) {
  Tensor a = Make<float>({1, 2, 3}, TensorShape{3});
  EXPECT_TRUE(a.RefCountIsOne());
  {
    Tensor b = a;
    EXPECT_TRUE(a.SharesBufferWith(b));
    EXPECT_TRUE(b.SharesBufferWith(a));
    EXPECT_EQ(a.raw_data(), b.raw_data());
    EXPECT_FALSE(a.RefCountIsOne());
    EXPECT_FALSE(b.RefCountIsOne());
    b.flat<float>()[0] = 10;  // a write through one is seen through the other
    EXPECT_EQ(a.flat<float>()[0], 10);

    Tensor c;
    c = b;  // copy assignment shares too
    EXPECT_TRUE(c.SharesBufferWith(a));
  }
  EXPECT_TRUE(a.RefCountIsOne());
}

TEST(TensorTest, MoveTransfersOwnership) {
  Tensor a = Make<int32_t>({1, 2}, TensorShape{2});
  const void* data = a.raw_data();
  Tensor b = std::move(a);
  EXPECT_EQ(b.raw_data(), data);
  EXPECT_TRUE(b.RefCountIsOne());
  EXPECT_FALSE(a.IsInitialized());  // NOLINT(bugprone-use-after-move): moved-from state is specified

  Tensor c = Make<int32_t>({5}, TensorShape{1});
  c = std::move(b);
  EXPECT_EQ(c.raw_data(), data);
  EXPECT_TRUE(c.RefCountIsOne());
  EXPECT_EQ(Values<int32_t>(c), (std::vector<int32_t>{1, 2}));
}

TEST(TensorTest, SelfAssignmentKeepsValue) {
  Tensor a = Make<int32_t>({7, 8}, TensorShape{2});
  Tensor& ref = a;
  a = ref;
  EXPECT_TRUE(a.RefCountIsOne());
  EXPECT_EQ(Values<int32_t>(a), (std::vector<int32_t>{7, 8}));
}

TEST(TensorTest, SliceSharesAndHasTheRightValues) {
  Tensor a = Make<int32_t>({0, 1, 2, 3, 4, 5}, TensorShape{3, 2});
  StatusOr<Tensor> s = a.Slice(1, 3);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->shape(), (TensorShape{2, 2}));
  EXPECT_EQ(Values<int32_t>(*s), (std::vector<int32_t>{2, 3, 4, 5}));
  EXPECT_TRUE(s->SharesBufferWith(a));
  EXPECT_FALSE(a.RefCountIsOne());
  s->flat<int32_t>()[0] = 42;
  EXPECT_EQ(a.flat<int32_t>()[2], 42);

  StatusOr<Tensor> empty = a.Slice(2, 2);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape(), (TensorShape{0, 2}));
  EXPECT_EQ(empty->NumElements(), 0);

  StatusOr<Tensor> all = a.Slice(0, 3);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->shape(), a.shape());
}

TEST(TensorTest, SliceOfStringsSharesValues) {
  Tensor a = Make<std::string>({"a", "b", "c"}, TensorShape{3});
  StatusOr<Tensor> s = a.Slice(1, 2);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(Values<std::string>(*s), (std::vector<std::string>{"b"}));
}

TEST(TensorTest, SliceOutOfRangeIsAnError) {
  Tensor a = Make<float>({1, 2, 3}, TensorShape{3});
  EXPECT_EQ(a.Slice(-1, 2).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(a.Slice(2, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(a.Slice(0, 4).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Tensor(1.0f).Slice(0, 1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(a.RefCountIsOne());  // failed slices hold nothing
}

TEST(TensorTest, DeepCopyDoesNotShare) {
  Tensor a = Make<double>({1.5, 2.5}, TensorShape{2});
  Tensor b = a.DeepCopy();
  EXPECT_FALSE(b.SharesBufferWith(a));
  EXPECT_TRUE(a.RefCountIsOne());
  EXPECT_TRUE(b.RefCountIsOne());
  EXPECT_EQ(b.shape(), a.shape());
  EXPECT_EQ(Values<double>(b), (std::vector<double>{1.5, 2.5}));
  b.flat<double>()[0] = 9;
  EXPECT_EQ(a.flat<double>()[0], 1.5);

  Tensor s = Make<std::string>({"x", "yy"}, TensorShape{2});
  Tensor t = s.DeepCopy();
  EXPECT_FALSE(t.SharesBufferWith(s));
  t.flat<std::string>()[0] = "changed";
  EXPECT_EQ(Values<std::string>(s), (std::vector<std::string>{"x", "yy"}));

  // A deep copy of a slice holds just the slice.
  StatusOr<Tensor> slice = Make<int32_t>({1, 2, 3, 4}, TensorShape{4}).Slice(2, 4);
  ASSERT_TRUE(slice.ok());
  Tensor sc = slice->DeepCopy();
  EXPECT_EQ(Values<int32_t>(sc), (std::vector<int32_t>{3, 4}));
  EXPECT_TRUE(Aligned(sc.raw_data()));
}

TEST(TensorTest, Reshaped) {
  Tensor a = Make<int32_t>({1, 2, 3, 4, 5, 6}, TensorShape{2, 3});
  StatusOr<Tensor> r = a.Reshaped(TensorShape{3, 2});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape(), (TensorShape{3, 2}));
  EXPECT_TRUE(r->SharesBufferWith(a));
  EXPECT_EQ(Values<int32_t>(*r), Values<int32_t>(a));
  EXPECT_EQ(a.shape(), (TensorShape{2, 3}));  // the original is unchanged

  StatusOr<Tensor> bad = a.Reshaped(TensorShape{4});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("[4]"), absl::string_view::npos) << bad.status();
}

TEST(TensorTest, FromValues) {
  Tensor t = Make<int64_t>({1, 2, 3, 4}, TensorShape{2, 2});
  EXPECT_EQ(t.dtype(), DT_INT64);
  EXPECT_EQ(t.shape(), (TensorShape{2, 2}));
  EXPECT_EQ(Values<int64_t>(t), (std::vector<int64_t>{1, 2, 3, 4}));

  std::vector<float> three = {1, 2, 3};
  StatusOr<Tensor> bad = Tensor::FromValues<float>(absl::MakeConstSpan(three), TensorShape{2, 2});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("[2,2]"), absl::string_view::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("3"), absl::string_view::npos) << bad.status();

  StatusOr<Tensor> empty = Tensor::FromValues<float>({}, TensorShape{0});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->NumElements(), 0);
}

TEST(TensorTest, TotalBytes) {
  EXPECT_EQ(Tensor(DT_DOUBLE, TensorShape{3}).TotalBytes(), 24u);
  EXPECT_EQ(Tensor(DT_UINT8, TensorShape{5}).TotalBytes(), 5u);
  EXPECT_EQ(Tensor(DT_INT32, TensorShape{0}).TotalBytes(), 0u);
}

// ---- Tensor: text ----

TEST(TensorPrintTest, Scalars) {
  EXPECT_EQ(Tensor(int32_t{8}).ToString(), "8");
  EXPECT_EQ(Tensor(int32_t{-5}).ToString(), "-5");
  EXPECT_EQ(Tensor(int64_t{1} << 40).ToString(), "1099511627776");
  EXPECT_EQ(Tensor(7.5f).ToString(), "7.5");
  EXPECT_EQ(Tensor(0.1f).ToString(), "0.1");
  EXPECT_EQ(Tensor(0.1).ToString(), "0.1");
  EXPECT_EQ(Tensor(-0.5f).ToString(), "-0.5");
  EXPECT_EQ(Tensor(3.0f).ToString(), "3");
  EXPECT_EQ(Tensor(true).ToString(), "True");
  EXPECT_EQ(Tensor(false).ToString(), "False");
  EXPECT_EQ(Tensor("hello world").ToString(), "hello world");
  EXPECT_EQ(Tensor("").ToString(), "");
}

TEST(TensorPrintTest, Uint8PrintsAsNumber) {
  Tensor t = Make<uint8_t>({200, 0, 65}, TensorShape{3});
  EXPECT_EQ(t.ToString(), "[200 0 65]");
}

TEST(TensorPrintTest, Arrays) {
  EXPECT_EQ(Make<int32_t>({3, 7}, TensorShape{2}).ToString(), "[3 7]");
  EXPECT_EQ(Make<int32_t>({1, 2, 3, 4}, TensorShape{2, 2}).ToString(), "[[1 2] [3 4]]");
  EXPECT_EQ(Make<float>({1.5f, -2, 0.25f}, TensorShape{3}).ToString(), "[1.5 -2 0.25]");
  EXPECT_EQ(Make<int32_t>({1, 2, 3, 4, 5, 6, 7, 8}, TensorShape{2, 2, 2}).ToString(), "[[[1 2] [3 4]] [[5 6] [7 8]]]");
  EXPECT_EQ(Make<bool>({true, false}, TensorShape{2}).ToString(), "[True False]");
  EXPECT_EQ(Make<std::string>({"a", "bc"}, TensorShape{2}).ToString(), "[a bc]");
  EXPECT_EQ(Make<int32_t>({9}, TensorShape{1, 1}).ToString(), "[[9]]");
}

TEST(TensorPrintTest, Empty) {
  EXPECT_EQ(Tensor(DT_FLOAT, TensorShape{0}).ToString(), "[]");
  EXPECT_EQ(Tensor(DT_INT32, TensorShape{2, 0}).ToString(), "[[] []]");
}

TEST(TensorPrintTest, DebugStringAndStream) {
  Tensor t = Make<float>({3, 7}, TensorShape{2});
  EXPECT_EQ(t.DebugString(), "Tensor<type: float shape: [2] values: [3 7]>");
  std::ostringstream os;
  os << t;
  EXPECT_EQ(os.str(), "[3 7]");
}

TEST(TensorPrintTest, LargeVectorIsSummarized) {
  std::vector<int32_t> v(2000);
  for (int i = 0; i < 2000; ++i) v[i] = i;
  std::string s = Make<int32_t>(v, TensorShape{2000}).ToString();
  EXPECT_NE(s.find("..."), std::string::npos) << s;
  EXPECT_LT(s.size(), 100u) << s;
  EXPECT_EQ(s.rfind("[0 1 2 ", 0), 0u) << s;
  EXPECT_EQ(s.substr(s.size() - 16), " 1997 1998 1999]") << s;
  EXPECT_EQ(s.find('3'), std::string::npos) << s;  // nothing between the edges
  // Every value separated by exactly one space, as in NumPy.
  EXPECT_EQ(s, "[0 1 2 ... 1997 1998 1999]");
}

TEST(TensorPrintTest, LargeMatrixIsSummarizedAlongLongDimensions) {
  std::vector<int32_t> v(2000);
  for (int i = 0; i < 2000; ++i) v[i] = i;
  std::string s = Make<int32_t>(v, TensorShape{1000, 2}).ToString();
  EXPECT_EQ(s, "[[0 1] [2 3] [4 5] ... [1994 1995] [1996 1997] [1998 1999]]");
}

TEST(TensorPrintTest, ThousandElementsAreNotSummarized) {
  std::vector<int32_t> v(1000, 1);
  std::string s = Make<int32_t>(v, TensorShape{1000}).ToString();
  EXPECT_EQ(s.find("..."), std::string::npos);
  EXPECT_EQ(s.size(), 2u + 1000u + 999u);
}

TEST(FormatNumberTest, ShortestForms) {
  EXPECT_EQ(FormatNumber(0.1f), "0.1");
  EXPECT_EQ(FormatNumber(0.1), "0.1");
  EXPECT_EQ(FormatNumber(1.0f), "1");
  EXPECT_EQ(FormatNumber(100.0), "100");
  EXPECT_EQ(FormatNumber(-2.25f), "-2.25");
  EXPECT_EQ(FormatNumber(0.3), "0.3");
  EXPECT_EQ(FormatNumber(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(FormatNumber(1.0f / 3.0f), "0.33333334");
  EXPECT_EQ(FormatNumber(0.0f), "0");
}

TEST(FormatNumberTest, SpecialValues) {
  EXPECT_EQ(FormatNumber(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(FormatNumber(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_TRUE(std::isnan(std::strtof(FormatNumber(std::numeric_limits<float>::quiet_NaN()).c_str(), nullptr)));
  float neg_zero = std::strtof(FormatNumber(-0.0f).c_str(), nullptr);
  EXPECT_EQ(neg_zero, 0.0f);
  EXPECT_TRUE(std::signbit(neg_zero));
}

TEST(FormatNumberTest, FloatsRoundTripExactly) {
  std::vector<float> cases = {0.1f,
                              0.2f,
                              1.0f / 3.0f,
                              123456789.0f,
                              1e-45f,
                              1.17549435e-38f,
                              std::numeric_limits<float>::max(),
                              std::numeric_limits<float>::lowest(),
                              std::numeric_limits<float>::denorm_min(),
                              16777217.0f,
                              3.14159265f};
  std::mt19937 rng(1234);
  for (int i = 0; i < 20000; ++i) {
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    if (std::isfinite(f)) cases.push_back(f);
  }
  for (float f : cases) {
    std::string s = FormatNumber(f);
    float back = std::strtof(s.c_str(), nullptr);
    ASSERT_EQ(std::memcmp(&back, &f, sizeof(f)), 0) << s;
    // Shortest: never longer than the 9 significant digits that any float round trip needs.
    char g9[64];
    std::snprintf(g9, sizeof(g9), "%.9g", static_cast<double>(f));
    EXPECT_LE(s.size(), std::strlen(g9)) << s << " vs " << g9;
  }
}

TEST(FormatNumberTest, DoublesRoundTripExactly) {
  std::vector<double> cases = {0.1,      0.2, 0.1 + 0.2, 1.0 / 3.0, 1e300, 5e-324, std::numeric_limits<double>::max(),
                               2.0 / 7.0};
  std::mt19937_64 rng(99);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof(d));
    if (std::isfinite(d)) cases.push_back(d);
  }
  for (double d : cases) {
    std::string s = FormatNumber(d);
    double back = std::strtod(s.c_str(), nullptr);
    ASSERT_EQ(std::memcmp(&back, &d, sizeof(d)), 0) << s;
  }
}

TEST(TensorPrintTest, PrintedFloatsReadBack) {
  Tensor t = Make<float>({0.1f, 1.0f / 3.0f, 2.5e-7f}, TensorShape{3});
  std::string s = t.ToString();
  ASSERT_GE(s.size(), 2u);
  std::istringstream in(s.substr(1, s.size() - 2));
  std::string word;
  std::vector<float> back;
  while (in >> word) back.push_back(std::strtof(word.c_str(), nullptr));
  EXPECT_EQ(back, Values<float>(t));
}

}  // namespace
}  // namespace dflow

namespace dflow {
namespace {

// An empty tensor with huge dimensions prints in bounded time and space (it used to print "[]"
// once per index prefix: 1e9 times for [1000000000, 0]).
TEST(TensorPrintTest, EmptyTensorsWithHugeDimensionsPrintBounded) {
  Tensor t(DT_INT64, TensorShape({1000000000, 0}));
  std::string s = t.ToString();
  EXPECT_LE(s.size(), 70000u);
  EXPECT_EQ(s.substr(0, 5), "[[] [");
  EXPECT_EQ(s.substr(s.size() - 5), " ...]");
  EXPECT_EQ(Tensor(DT_FLOAT, TensorShape({2, 0})).ToString(), "[[] []]");
}

}  // namespace
}  // namespace dflow
