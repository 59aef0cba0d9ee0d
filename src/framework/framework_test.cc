// OpDef specs and the registry, and AttrValue.

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/notification.h"
#include "framework/attr_value.h"
#include "framework/cancellation.h"
#include "framework/device_name.h"
#include "framework/op_def.h"
#include "framework/resource_mgr.h"
#include "framework/shape_inference.h"
#include "framework/variable.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

bool Contains(absl::string_view haystack, absl::string_view needle) {
  return haystack.find(needle) != absl::string_view::npos;
}

template <typename T>
Tensor Vec(std::vector<T> v) {
  return Tensor::FromValues<T>(absl::MakeConstSpan(v), TensorShape{static_cast<int64_t>(v.size())}).value();
}

// ---- OpDefBuilder: inputs and outputs ----

TEST(OpDefBuilderTest, ParsesArgumentKinds) {
  StatusOr<OpDef> def = OpDefBuilder("FwTestArgs")
                            .Input("x: T")
                            .Input("r: Ref(T)")
                            .Input("xs: N * T")
                            .Input("f: float")
                            .Input("l: L")
                            .Input("ri: Ref(int32)")
                            .Output("y: T")
                            .Output("ys: N * int64")
                            .Attr("T: {float, int32}")
                            .Attr("N: int >= 1")
                            .Attr("L: list(type)")
                            .Finalize();
  ASSERT_TRUE(def.ok()) << def.status();
  ASSERT_EQ(def->inputs.size(), 6u);
  ASSERT_EQ(def->outputs.size(), 2u);

  const ArgDef& x = def->inputs[0];
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.type, DT_INVALID);
  EXPECT_EQ(x.type_attr, "T");
  EXPECT_EQ(x.number_attr, "");
  EXPECT_FALSE(x.is_ref);

  const ArgDef& r = def->inputs[1];
  EXPECT_EQ(r.name, "r");
  EXPECT_EQ(r.type_attr, "T");
  EXPECT_TRUE(r.is_ref);

  const ArgDef& xs = def->inputs[2];
  EXPECT_EQ(xs.number_attr, "N");
  EXPECT_EQ(xs.type_attr, "T");
  EXPECT_FALSE(xs.is_ref);

  const ArgDef& f = def->inputs[3];
  EXPECT_EQ(f.type, DT_FLOAT);
  EXPECT_EQ(f.type_attr, "");

  const ArgDef& l = def->inputs[4];
  EXPECT_EQ(l.type_list_attr, "L");
  EXPECT_EQ(l.type_attr, "");
  EXPECT_EQ(l.type, DT_INVALID);

  const ArgDef& ri = def->inputs[5];
  EXPECT_EQ(ri.type, DT_INT32);
  EXPECT_TRUE(ri.is_ref);

  EXPECT_EQ(def->outputs[0].type_attr, "T");
  EXPECT_EQ(def->outputs[1].number_attr, "N");
  EXPECT_EQ(def->outputs[1].type, DT_INT64);

  EXPECT_EQ(x.DebugString(), "x: T");
  EXPECT_EQ(r.DebugString(), "r: Ref(T)");
  EXPECT_EQ(xs.DebugString(), "xs: N * T");
  EXPECT_EQ(f.DebugString(), "f: float");
  EXPECT_EQ(l.DebugString(), "l: L");
}

TEST(OpDefBuilderTest, DefaultsToUnknownShapeFunctionAndKeepsFlags) {
  StatusOr<OpDef> def = OpDefBuilder("FwTestFlags").Output("y: float").SetIsStateful().Doc("Says hi.").Finalize();
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_TRUE(def->is_stateful);
  EXPECT_EQ(def->summary, "Says hi.");
  EXPECT_TRUE(static_cast<bool>(def->shape_fn));
  EXPECT_TRUE(def->attrs.empty());
}

// ---- OpDefBuilder: attrs ----

TEST(OpDefBuilderTest, ParsesAttrKindsAndDefaults) {
  StatusOr<OpDef> def = OpDefBuilder("FwTestAttrs")
                            .Attr("T: {float, int32}")
                            .Attr("N: int >= 1")
                            .Attr("b: bool = true")
                            .Attr("nb: bool = false")
                            .Attr("s: string = 'abc'")
                            .Attr("s2: string = \"x y\"")
                            .Attr("f: float = 0.5")
                            .Attr("shape: shape = unknown")
                            .Attr("sh2: shape = [2, ?]")
                            .Attr("l: list(int) = [1, 2]")
                            .Attr("le: list(int) = []")
                            .Attr("t: type = DT_FLOAT")
                            .Attr("t2: type = int64")
                            .Attr("lt: list(type) = [DT_INT32, float]")
                            .Attr("ls: list(string) >= 2")
                            .Attr("i: int = -3")
                            .Attr("tl: list({float, double})")
                            .Attr("tn: tensor")
                            .Finalize();
  ASSERT_TRUE(def.ok()) << def.status();
  ASSERT_EQ(def->attrs.size(), 18u);

  const AttrDef* T = def->FindAttr("T");
  ASSERT_NE(T, nullptr);
  EXPECT_EQ(T->type, "type");
  EXPECT_EQ(T->allowed_types, (std::vector<DType>{DT_FLOAT, DT_INT32}));
  EXPECT_FALSE(T->default_value.has_value());
  EXPECT_FALSE(T->minimum.has_value());

  const AttrDef* N = def->FindAttr("N");
  ASSERT_NE(N, nullptr);
  EXPECT_EQ(N->type, "int");
  ASSERT_TRUE(N->minimum.has_value());
  EXPECT_EQ(*N->minimum, 1);
  EXPECT_FALSE(N->default_value.has_value());

  auto default_of = [&](const char* name) -> AttrValue {
    const AttrDef* a = def->FindAttr(name);
    EXPECT_NE(a, nullptr) << name;
    if (a == nullptr || !a->default_value) {
      ADD_FAILURE() << "no default for " << name;
      return AttrValue();
    }
    return *a->default_value;
  };
  EXPECT_EQ(def->FindAttr("b")->type, "bool");
  EXPECT_EQ(default_of("b"), AttrValue(true));
  EXPECT_EQ(default_of("nb"), AttrValue(false));
  EXPECT_EQ(def->FindAttr("s")->type, "string");
  EXPECT_EQ(default_of("s"), AttrValue("abc"));
  EXPECT_EQ(default_of("s2"), AttrValue("x y"));
  EXPECT_EQ(def->FindAttr("f")->type, "float");
  EXPECT_EQ(default_of("f"), AttrValue(0.5f));
  EXPECT_EQ(def->FindAttr("shape")->type, "shape");
  EXPECT_EQ(default_of("shape"), AttrValue(PartialTensorShape()));
  EXPECT_EQ(default_of("sh2"), AttrValue(PartialTensorShape{2, -1}));
  EXPECT_EQ(def->FindAttr("l")->type, "list(int)");
  EXPECT_EQ(default_of("l"), AttrValue(std::vector<int64_t>{1, 2}));
  EXPECT_EQ(default_of("le"), AttrValue(std::vector<int64_t>{}));
  EXPECT_EQ(def->FindAttr("t")->type, "type");
  EXPECT_TRUE(def->FindAttr("t")->allowed_types.empty());
  EXPECT_EQ(default_of("t"), AttrValue(DT_FLOAT));
  EXPECT_EQ(default_of("t2"), AttrValue(DT_INT64));
  EXPECT_EQ(default_of("lt"), AttrValue(std::vector<DType>{DT_INT32, DT_FLOAT}));
  EXPECT_EQ(def->FindAttr("ls")->type, "list(string)");
  EXPECT_EQ(*def->FindAttr("ls")->minimum, 2);
  EXPECT_EQ(default_of("i"), AttrValue(-3));
  EXPECT_EQ(def->FindAttr("tl")->type, "list(type)");
  EXPECT_EQ(def->FindAttr("tl")->allowed_types, (std::vector<DType>{DT_FLOAT, DT_DOUBLE}));
  EXPECT_EQ(def->FindAttr("tn")->type, "tensor");
  EXPECT_EQ(def->FindAttr("missing"), nullptr);
}

TEST(OpDefBuilderTest, AttrDebugStrings) {
  StatusOr<OpDef> def = OpDefBuilder("FwTestAttrText")
                            .Attr("T: {float, int32}")
                            .Attr("N: int >= 1")
                            .Attr("b: bool = true")
                            .Attr("s: string = 'abc'")
                            .Attr("l: list(int) = [1, 2]")
                            .Attr("tl: list({float, double})")
                            .Finalize();
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ(def->attrs[0].DebugString(), "T: {float, int32}");
  EXPECT_EQ(def->attrs[1].DebugString(), "N: int >= 1");
  EXPECT_EQ(def->attrs[2].DebugString(), "b: bool = true");
  EXPECT_EQ(def->attrs[3].DebugString(), "s: string = \"abc\"");
  EXPECT_EQ(def->attrs[4].DebugString(), "l: list(int) = [1, 2]");
  EXPECT_EQ(def->attrs[5].DebugString(), "tl: list({float, double})");
}

void ExpectBadSpec(const OpDefBuilder& b, absl::string_view op, absl::string_view mentions) {
  StatusOr<OpDef> def = b.Finalize();
  ASSERT_FALSE(def.ok()) << "expected an error mentioning " << mentions;
  EXPECT_EQ(def.status().code(), absl::StatusCode::kInvalidArgument) << def.status();
  EXPECT_TRUE(Contains(def.status().message(), op)) << def.status();
  EXPECT_TRUE(Contains(def.status().message(), mentions)) << def.status();
}

TEST(OpDefBuilderTest, BadSpecsAreInvalidArgument) {
  ExpectBadSpec(OpDefBuilder("FwBad1").Attr("T: {float, bogus}"), "FwBad1", "bogus");
  ExpectBadSpec(OpDefBuilder("FwBad2").Input("x: U"), "FwBad2", "x: U");
  ExpectBadSpec(OpDefBuilder("FwBad3").Output("y: U").Attr("T: type"), "FwBad3", "y: U");
  ExpectBadSpec(OpDefBuilder("FwBad4").Input("xs: M * T").Attr("T: type"), "FwBad4", "M");
  ExpectBadSpec(OpDefBuilder("FwBad5").Input("x: T").Attr("T: int"), "FwBad5", "x: T");  // T is not a type
  ExpectBadSpec(OpDefBuilder("FwBad6").Input("xs: N * T").Attr("N: type").Attr("T: type"), "FwBad6", "N");
  ExpectBadSpec(OpDefBuilder("FwBad7").Attr("a: foo"), "FwBad7", "foo");
  ExpectBadSpec(OpDefBuilder("FwBad8").Attr("b: bool = maybe"), "FwBad8", "maybe");
  ExpectBadSpec(OpDefBuilder("FwBad9").Attr("i: int = abc"), "FwBad9", "abc");
  ExpectBadSpec(OpDefBuilder("FwBad10").Attr("1x: int"), "FwBad10", "1x");
  ExpectBadSpec(OpDefBuilder("FwBad11").Input("x: Ref(T").Attr("T: type"), "FwBad11", "Ref(T");
  ExpectBadSpec(OpDefBuilder("FwBad12").Input("x: int16"), "FwBad12", "int16");
  ExpectBadSpec(OpDefBuilder("FwBad13").Attr("N: int >= many"), "FwBad13", "many");
  ExpectBadSpec(OpDefBuilder("FwBad14").Attr("s: string = abc"), "FwBad14", "abc");
  ExpectBadSpec(OpDefBuilder("FwBad15").Attr("t: type = DT_BOGUS"), "FwBad15", "BOGUS");
  ExpectBadSpec(OpDefBuilder("FwBad16").Attr("sh: shape = [2, x]"), "FwBad16", "x");
  ExpectBadSpec(OpDefBuilder("FwBad17").Attr("l: list(int) = [1, b]"), "FwBad17", "b");
  ExpectBadSpec(OpDefBuilder("FwBad18").Input("bad name: float"), "FwBad18", "bad name");
  ExpectBadSpec(OpDefBuilder("FwBad19").Attr("T: float, int32"), "FwBad19", "float, int32");
}

TEST(OpDefBuilderTest, ArgCanOnlyReferToAttrsDeclaredOnTheOp) {
  // The attr named by an input must exist: a list(type) cannot be used with a count.
  ExpectBadSpec(OpDefBuilder("FwBadList").Input("xs: N * L").Attr("N: int").Attr("L: list(type)"), "FwBadList", "L");
}

TEST(OpDefBuilderTest, InconsistentSpecsAreInvalidArgument) {
  // Each of these would register an op that no node could use as declared.
  ExpectBadSpec(OpDefBuilder("FwBadDupAttr").Attr("T: type").Attr("T: int"), "FwBadDupAttr", "T");
  ExpectBadSpec(OpDefBuilder("FwBadDupArg").Input("x: float").Input("x: int32"), "FwBadDupArg", "x");
  ExpectBadSpec(OpDefBuilder("FwBadDefaultType").Attr("T: {float, int32} = DT_INT64"), "FwBadDefaultType", "T");
  ExpectBadSpec(OpDefBuilder("FwBadDefaultMin").Attr("N: int >= 2 = 1"), "FwBadDefaultMin", "N");
}

// ---- OpDef::Signature ----

TEST(OpDefTest, Signature) {
  StatusOr<OpDef> add =
      OpDefBuilder("FwSigAdd").Input("x: T").Input("y: T").Output("z: T").Attr("T: {float, double, int32}").Finalize();
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_EQ(add->Signature(), "FwSigAdd(x: T, y: T) -> (z: T); T: {float, double, int32}");

  StatusOr<OpDef> noop = OpDefBuilder("FwSigNoOp").Finalize();
  ASSERT_TRUE(noop.ok());
  EXPECT_EQ(noop->Signature(), "FwSigNoOp() -> ()");

  StatusOr<OpDef> var = OpDefBuilder("FwSigVar")
                            .Input("r: Ref(T)")
                            .Input("xs: N * T")
                            .Output("out: float")
                            .Attr("T: type")
                            .Attr("N: int >= 1")
                            .Attr("b: bool = true")
                            .SetIsStateful()
                            .Finalize();
  ASSERT_TRUE(var.ok()) << var.status();
  EXPECT_EQ(var->Signature(),
            "FwSigVar(r: Ref(T), xs: N * T) -> (out: float); T: type; N: int >= 1; b: bool = true; stateful");
}

// ---- OpRegistry ----

TEST(OpRegistryTest, RegisterLookUpAndDuplicates) {
  OpDefBuilder b = OpDefBuilder("FwTestRegistered").Input("x: T").Output("y: T").Attr("T: type");
  Status first = OpRegistry::Global()->Register(b);
  // OK the first time; AlreadyExists if this test is repeated in the same process.
  EXPECT_TRUE(first.ok() || first.code() == absl::StatusCode::kAlreadyExists) << first;
  Status dup = OpRegistry::Global()->Register(b);
  EXPECT_EQ(dup.code(), absl::StatusCode::kAlreadyExists) << dup;
  EXPECT_TRUE(Contains(dup.message(), "FwTestRegistered")) << dup;

  const OpDef* def = OpRegistry::Global()->LookUp("FwTestRegistered");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->name, "FwTestRegistered");
  EXPECT_EQ(def->inputs.size(), 1u);
  StatusOr<const OpDef*> again = OpRegistry::Global()->LookUpOrError("FwTestRegistered");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, def);  // pointers are stable

  bool listed = false;
  std::vector<const OpDef*> all = OpRegistry::Global()->ListOps();
  for (size_t i = 0; i < all.size(); ++i) {
    listed |= all[i] == def;
    if (i > 0) EXPECT_LT(all[i - 1]->name, all[i]->name);
  }
  EXPECT_TRUE(listed);
}

TEST(OpRegistryTest, NotRegistered) {
  EXPECT_EQ(OpRegistry::Global()->LookUp("Nope"), nullptr);
  StatusOr<const OpDef*> r = OpRegistry::Global()->LookUpOrError("Nope");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "Op type not registered 'Nope'");
}

TEST(OpRegistryTest, BadSpecIsNotRegistered) {
  Status s = OpRegistry::Global()->Register(OpDefBuilder("FwTestBadRegistration").Input("x: Missing"));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(OpRegistry::Global()->LookUp("FwTestBadRegistration"), nullptr);
}

TEST(OpRegistryTest, ConcurrentRegistrationAndLookUp) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &ok] {
      for (int i = 0; i < 50; ++i) {
        std::string name = absl::StrCat("FwTestConcurrent_", t, "_", i);
        Status s = OpRegistry::Global()->Register(OpDefBuilder(name).Output("y: float"));
        if (s.ok() || s.code() == absl::StatusCode::kAlreadyExists) ok.fetch_add(1);
        if (OpRegistry::Global()->LookUp(name) == nullptr) ok.fetch_sub(1000);
        OpRegistry::Global()->LookUp("Nope");
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 200);
}

// ---- AttrValue ----

TEST(AttrValueTest, TypeNames) {
  EXPECT_EQ(AttrValue().TypeName(), "");
  EXPECT_TRUE(AttrValue().empty());
  EXPECT_EQ(AttrValue("s").TypeName(), "string");
  EXPECT_EQ(AttrValue(std::string("s")).TypeName(), "string");
  EXPECT_EQ(AttrValue(3).TypeName(), "int");
  EXPECT_EQ(AttrValue(int64_t{3}).TypeName(), "int");
  EXPECT_EQ(AttrValue(1.5f).TypeName(), "float");
  EXPECT_EQ(AttrValue(true).TypeName(), "bool");
  EXPECT_EQ(AttrValue(DT_FLOAT).TypeName(), "type");
  EXPECT_EQ(AttrValue(PartialTensorShape{2}).TypeName(), "shape");
  EXPECT_EQ(AttrValue(TensorShape{2}).TypeName(), "shape");
  EXPECT_EQ(AttrValue(Tensor(1.0f)).TypeName(), "tensor");
  EXPECT_EQ(AttrValue(std::vector<std::string>{"a"}).TypeName(), "list(string)");
  EXPECT_EQ(AttrValue(std::vector<int64_t>{1}).TypeName(), "list(int)");
  EXPECT_EQ(AttrValue(std::vector<float>{1}).TypeName(), "list(float)");
  EXPECT_EQ(AttrValue(std::vector<bool>{true}).TypeName(), "list(bool)");
  EXPECT_EQ(AttrValue(std::vector<DType>{DT_INT32}).TypeName(), "list(type)");
  EXPECT_EQ(AttrValue(std::vector<PartialTensorShape>{}).TypeName(), "list(shape)");
  EXPECT_EQ(AttrValue(std::vector<Tensor>{}).TypeName(), "list(tensor)");
  EXPECT_FALSE(AttrValue(0).empty());
}

TEST(AttrValueTest, DebugStrings) {
  EXPECT_EQ(AttrValue().DebugString(), "<empty>");
  EXPECT_EQ(AttrValue("abc").DebugString(), "\"abc\"");
  EXPECT_EQ(AttrValue(-5).DebugString(), "-5");
  EXPECT_EQ(AttrValue(0.5f).DebugString(), "0.5");
  EXPECT_EQ(AttrValue(0.1f).DebugString(), "0.1");
  EXPECT_EQ(AttrValue(true).DebugString(), "true");
  EXPECT_EQ(AttrValue(false).DebugString(), "false");
  EXPECT_EQ(AttrValue(DT_INT32).DebugString(), "int32");
  EXPECT_EQ(AttrValue(PartialTensorShape{2, -1}).DebugString(), "[2,?]");
  EXPECT_EQ(AttrValue(PartialTensorShape()).DebugString(), "<unknown>");
  EXPECT_EQ(AttrValue(Tensor(int32_t{3})).DebugString(), "Tensor<type: int32 shape: [] values: 3>");
  EXPECT_EQ(AttrValue(std::vector<int64_t>{1, 2}).DebugString(), "[1, 2]");
  EXPECT_EQ(AttrValue(std::vector<int64_t>{}).DebugString(), "[]");
  EXPECT_EQ(AttrValue(std::vector<std::string>{"a", "b"}).DebugString(), "[\"a\", \"b\"]");
  EXPECT_EQ(AttrValue(std::vector<float>{0.5f, 2}).DebugString(), "[0.5, 2]");
  EXPECT_EQ(AttrValue(std::vector<bool>{true, false}).DebugString(), "[true, false]");
  EXPECT_EQ(AttrValue(std::vector<DType>{DT_FLOAT, DT_INT64}).DebugString(), "[float, int64]");
  EXPECT_EQ(AttrValue(std::vector<PartialTensorShape>{PartialTensorShape{1}, PartialTensorShape()}).DebugString(),
            "[[1], <unknown>]");
}

TEST(AttrValueTest, Equality) {
  EXPECT_EQ(AttrValue(), AttrValue());
  EXPECT_EQ(AttrValue(3), AttrValue(int64_t{3}));
  EXPECT_FALSE(AttrValue(3) == AttrValue(4));
  EXPECT_FALSE(AttrValue(3) == AttrValue(3.0f));  // different kinds never compare equal
  EXPECT_FALSE(AttrValue(1) == AttrValue(true));
  EXPECT_FALSE(AttrValue("3") == AttrValue(3));
  EXPECT_FALSE(AttrValue() == AttrValue(0));
  EXPECT_EQ(AttrValue("a"), AttrValue(std::string("a")));
  EXPECT_EQ(AttrValue(DT_FLOAT), AttrValue(DT_FLOAT));
  EXPECT_FALSE(AttrValue(DT_FLOAT) == AttrValue(DT_DOUBLE));
  EXPECT_EQ(AttrValue(PartialTensorShape{2, -1}), AttrValue(PartialTensorShape{2, -1}));
  EXPECT_FALSE(AttrValue(PartialTensorShape{2, -1}) == AttrValue(PartialTensorShape{2, 3}));
  EXPECT_FALSE(AttrValue(PartialTensorShape()) == AttrValue(PartialTensorShape::Scalar()));
  EXPECT_EQ(AttrValue(std::vector<int64_t>{1, 2}), AttrValue(std::vector<int64_t>{1, 2}));
  EXPECT_FALSE(AttrValue(std::vector<int64_t>{1, 2}) == AttrValue(std::vector<int64_t>{1}));
  EXPECT_FALSE(AttrValue(std::vector<int64_t>{}) == AttrValue(std::vector<float>{}));
}

TEST(AttrValueTest, TensorsCompareByValue) {
  Tensor a = Vec<int32_t>({1, 2, 3});
  Tensor b = Vec<int32_t>({1, 2, 3});
  ASSERT_FALSE(a.SharesBufferWith(b));
  EXPECT_EQ(AttrValue(a), AttrValue(b));
  EXPECT_FALSE(AttrValue(a) == AttrValue(Vec<int32_t>({1, 2, 4})));
  EXPECT_FALSE(AttrValue(a) == AttrValue(Vec<int64_t>({1, 2, 3})));
  EXPECT_FALSE(AttrValue(a) == AttrValue(a.Reshaped(TensorShape{3, 1}).value()));
  EXPECT_EQ(AttrValue(Vec<std::string>({"x", "y"})), AttrValue(Vec<std::string>({"x", "y"})));
  EXPECT_FALSE(AttrValue(Vec<std::string>({"x", "y"})) == AttrValue(Vec<std::string>({"x", "z"})));
  EXPECT_EQ(AttrValue(std::vector<Tensor>{a}), AttrValue(std::vector<Tensor>{b}));
  EXPECT_FALSE(AttrValue(std::vector<Tensor>{a}) == AttrValue(std::vector<Tensor>{a, b}));
  EXPECT_EQ(AttrValue(Tensor(DT_FLOAT, TensorShape{0})), AttrValue(Tensor(DT_FLOAT, TensorShape{0})));
}

TEST(AttrValueTest, GetAttr) {
  AttrMap attrs;
  attrs["i"] = 7;
  attrs["big"] = int64_t{1} << 40;
  attrs["min"] = int64_t{INT32_MIN};
  attrs["neg"] = int64_t{INT32_MIN} - 1;
  attrs["f"] = 2.5f;
  attrs["s"] = "str";
  attrs["t"] = DT_DOUBLE;
  attrs["sh"] = PartialTensorShape{3, -1};
  attrs["li"] = std::vector<int64_t>{4, 5};

  int64_t i64 = 0;
  ASSERT_TRUE(GetAttr(attrs, "i", &i64).ok());
  EXPECT_EQ(i64, 7);
  int32_t i32 = 0;
  ASSERT_TRUE(GetAttr(attrs, "i", &i32).ok());
  EXPECT_EQ(i32, 7);
  int plain = 0;
  ASSERT_TRUE(GetAttr(attrs, "i", &plain).ok());
  EXPECT_EQ(plain, 7);
  ASSERT_TRUE(GetAttr(attrs, "min", &i32).ok());
  EXPECT_EQ(i32, INT32_MIN);
  ASSERT_TRUE(GetAttr(attrs, "big", &i64).ok());
  EXPECT_EQ(i64, int64_t{1} << 40);

  // Out of int32 range.
  i32 = 11;
  Status big = GetAttr(attrs, "big", &i32);
  EXPECT_EQ(big.code(), absl::StatusCode::kInvalidArgument) << big;
  EXPECT_TRUE(Contains(big.message(), "big")) << big;
  EXPECT_EQ(i32, 11);  // untouched
  EXPECT_EQ(GetAttr(attrs, "neg", &i32).code(), absl::StatusCode::kInvalidArgument);

  // Wrong kinds.
  Status wrong = GetAttr(attrs, "f", &i32);
  EXPECT_EQ(wrong.code(), absl::StatusCode::kInvalidArgument) << wrong;
  EXPECT_TRUE(Contains(wrong.message(), "'f'")) << wrong;
  EXPECT_TRUE(Contains(wrong.message(), "float")) << wrong;
  float f = 0;
  Status wrong_f = GetAttr(attrs, "i", &f);
  EXPECT_EQ(wrong_f.code(), absl::StatusCode::kInvalidArgument) << wrong_f;
  EXPECT_TRUE(Contains(wrong_f.message(), "int")) << wrong_f;
  std::string s;
  EXPECT_EQ(GetAttr(attrs, "t", &s).code(), absl::StatusCode::kInvalidArgument);
  DType t = DT_INVALID;
  EXPECT_EQ(GetAttr(attrs, "s", &t).code(), absl::StatusCode::kInvalidArgument);

  // Right kinds.
  ASSERT_TRUE(GetAttr(attrs, "f", &f).ok());
  EXPECT_EQ(f, 2.5f);
  ASSERT_TRUE(GetAttr(attrs, "s", &s).ok());
  EXPECT_EQ(s, "str");
  ASSERT_TRUE(GetAttr(attrs, "t", &t).ok());
  EXPECT_EQ(t, DT_DOUBLE);
  PartialTensorShape sh;
  ASSERT_TRUE(GetAttr(attrs, "sh", &sh).ok());
  EXPECT_EQ(sh, (PartialTensorShape{3, -1}));
  std::vector<int64_t> li;
  ASSERT_TRUE(GetAttr(attrs, "li", &li).ok());
  EXPECT_EQ(li, (std::vector<int64_t>{4, 5}));

  // Missing.
  Status missing = GetAttr(attrs, "nope", &i64);
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(missing.message(), "nope")) << missing;
}

}  // namespace
}  // namespace dflow
