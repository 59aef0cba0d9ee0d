// HashTableV2 / MutableHashTableV2 and their ops: lookups with defaults, one-time initialization
// (same size: a no-op; another size: FailedPrecondition), duplicate keys, uninitialized tables,
// signature mismatches, sharing by name, text-file initialization (columns, line numbers, whole
// lines, vocab_size, errors), mutable inserts and removals, and the IndexTableLookup of vocabulary
// columns with OOV buckets (StringToHashBucketFast).
#include <cstdio>
#include <fstream>

#include "base/temp_dir.h"
#include "dflow/dflow.h"
#include "dflow/lookup_ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor Strings(std::vector<std::string> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromValues<std::string>(v, TensorShape{n}).value();
}
Tensor Int64s(std::vector<int64_t> v, TensorShape shape = {}) {
  if (shape.dims() == 0) shape = TensorShape{static_cast<int64_t>(v.size())};
  return Tensor::FromValues<int64_t>(v, shape).value();
}
template <typename T>
std::vector<T> Vec(const Tensor& t) {
  auto f = t.flat<T>();
  return std::vector<T>(f.begin(), f.end());
}

TEST(LookupOpsTest, StaticTableFindSizeAndDefault) {
  Scope root = Scope::NewRootScope();
  Output t = ops::HashTableV2(root.WithOpName("t"), DT_STRING, DT_INT64);
  Operation init = ops::InitializeTableV2(root, t, ops::Const(root, Strings({"a", "b", "c"})),
                                          ops::Const(root, Int64s({7, 8, 9})));
  Output find = ops::LookupTableFindV2(root, t, ops::Const(root, Strings({"c", "x", "a", ""})),
                                       ops::Const(root, Tensor(int64_t{-1})));
  Output size = ops::LookupTableSizeV2(root, t);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession s(root);
  auto before = s.Run({size});
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ((*before)[0].scalar<int64_t>(), 0);
  auto uninit = s.Run({find});
  EXPECT_EQ(uninit.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(uninit.status().message()), HasSubstr("Table not initialized."));
  ASSERT_TRUE(s.Run({init}).ok());
  ASSERT_TRUE(s.Run({init}).ok());  // same data again: a no-op, as in TensorFlow
  auto out = s.Run({find, size});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Vec<int64_t>((*out)[0]), ElementsAre(9, -1, 7, -1));
  EXPECT_EQ((*out)[1].scalar<int64_t>(), 3);
}

TEST(LookupOpsTest, ReinitializationDuplicatesAndSignatures) {
  Scope root = Scope::NewRootScope();
  Output t = ops::HashTableV2(root.WithOpName("t"), DT_INT64, DT_FLOAT);
  Operation init = ops::InitializeTableV2(root, t, ops::Const(root, Int64s({1, 2})),
                                          ops::Const(root,
                                                     Tensor::FromValues<float>({0.5f, 1.5f}, TensorShape{2}).value()));
  Operation bigger = ops::InitializeTableV2(root, t, ops::Const(root, Int64s({1, 2, 3})),
                                            ops::Const(root,
                                                       Tensor::FromValues<float>({1, 2, 3}, TensorShape{3}).value()));
  Output t2 = ops::HashTableV2(root.WithOpName("t2"), DT_INT64, DT_FLOAT);
  Operation dup = ops::InitializeTableV2(root, t2, ops::Const(root, Int64s({4, 4})),
                                         ops::Const(root, Tensor::FromValues<float>({1, 2}, TensorShape{2}).value()));
  Output t3 = ops::HashTableV2(root.WithOpName("t3"), DT_INT64, DT_FLOAT);
  Operation empty = ops::InitializeTableV2(root, t3, ops::Const(root, Int64s({})),
                                           ops::Const(root, Tensor::FromValues<float>({}, TensorShape{0}).value()));
  Output bad_key = ops::LookupTableFindV2(root, t, ops::Const(root, Strings({"1"})), ops::Const(root, Tensor(0.0f)));
  Output bad_default = ops::LookupTableFindV2(root, t, ops::Const(root, Int64s({1})), ops::Const(root, Tensor(0.0)));
  Output find = ops::LookupTableFindV2(root, t, ops::Const(root, Int64s({2, 5, 1, 0}, TensorShape{2, 2})),
                                       ops::Const(root, Tensor(-3.0f)));
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession s(root);
  ASSERT_TRUE(s.Run({init}).ok());
  Status st = s.Run({bigger});
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(st.message()), HasSubstr("Table was already initialized with different data."));
  st = s.Run({empty});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("keys and values cannot be empty tensors."));
  st = s.Run({dup});
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(st.message()), HasSubstr("HashTable has different value for same key. Key 4 has 1"));
  st = s.Run({bad_key}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("Signature mismatch"));
  EXPECT_EQ(s.Run({bad_default}).status().code(), absl::StatusCode::kInvalidArgument);
  auto out = s.Run({find});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), TensorShape({2, 2}));
  EXPECT_THAT(Vec<float>((*out)[0]), ElementsAre(1.5f, -3.0f, 0.5f, -3.0f));
}

TEST(LookupOpsTest, TablesAreSharedByNameAndPrivateOtherwise) {
  Scope root = Scope::NewRootScope();
  Output a = ops::HashTableV2(root.WithOpName("a"), DT_STRING, DT_INT64, {.shared_name = "shared"});
  Output b = ops::HashTableV2(root.WithOpName("b"), DT_STRING, DT_INT64, {.shared_name = "shared"});
  Output c = ops::HashTableV2(root.WithOpName("c"), DT_STRING, DT_INT64);
  Output d = ops::HashTableV2(root.WithOpName("d"), DT_STRING, DT_INT64);
  Output wrong = ops::HashTableV2(root.WithOpName("w"), DT_STRING, DT_FLOAT, {.shared_name = "shared"});
  Operation init_a = ops::InitializeTableV2(root, a, ops::Const(root, Strings({"k"})), ops::Const(root, Int64s({1})));
  Operation init_c = ops::InitializeTableV2(root, c, ops::Const(root, Strings({"k"})), ops::Const(root, Int64s({2})));
  Output key = ops::Const(root, Strings({"k"}));
  Output dflt = ops::Const(root, Tensor(int64_t{0}));
  Output fb = ops::LookupTableFindV2(root, b, key, dflt);
  Output fd = ops::LookupTableFindV2(root, d, key, dflt);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession s(root);
  ASSERT_TRUE(s.Run({init_a, init_c}).ok());
  auto out = s.Run({fb});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].flat<int64_t>()[0], 1);                                     // b names a's table
  EXPECT_EQ(s.Run({fd}).status().code(), absl::StatusCode::kFailedPrecondition);  // d's own, uninitialized
  EXPECT_EQ(s.Run({wrong}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LookupOpsTest, TextFileColumnsLineNumbersAndErrors) {
  TempDir dir;
  auto write = [&](const std::string& name, const std::string& text) {
    std::string p = dir.path() + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  };
  const std::string cols = write("cols.txt", "x 1 one\ny 2 two\r\nz 3 three\n");
  const std::string empty = write("empty.txt", "a\n\nb\n");
  Scope root = Scope::NewRootScope();
  Output kv = ops::HashTableV2(root.WithOpName("kv"), DT_STRING, DT_INT64);
  Operation init_kv = ops::InitializeTableFromTextFileV2(root, kv, ops::Const(root, Tensor(cols)), 0, 1, -1, " ");
  Output ln = ops::HashTableV2(root.WithOpName("ln"), DT_STRING, DT_INT64);
  Operation init_ln = ops::InitializeTableFromTextFileV2(root, ln, ops::Const(root, Tensor(cols)), 2, -1, 2, " ", 10);
  Output wl = ops::HashTableV2(root.WithOpName("wl"), DT_INT64, DT_STRING);
  Operation init_wl = ops::InitializeTableFromTextFileV2(root, wl, ops::Const(root, Tensor(cols)), -1, -2);
  Output e = ops::HashTableV2(root.WithOpName("e"), DT_STRING, DT_INT64);
  Operation init_empty = ops::InitializeTableFromTextFileV2(root, e, ops::Const(root, Tensor(empty)), -2, -1);
  Operation init_cols = ops::InitializeTableFromTextFileV2(root, e, ops::Const(root, Tensor(cols)), 0, 5, -1, " ");
  Operation init_big = ops::InitializeTableFromTextFileV2(root, e, ops::Const(root, Tensor(cols)), -2, -1, 9);
  Operation init_int = ops::InitializeTableFromTextFileV2(root, e, ops::Const(root, Tensor(cols)), 0, 0, -1, " ");
  Operation init_missing = ops::InitializeTableFromTextFileV2(root, e, ops::Const(root, Tensor(dir.path() + "/no")), -2,
                                                              -1);
  Output f_kv = ops::LookupTableFindV2(root, kv, ops::Const(root, Strings({"y", "q", "z"})),
                                       ops::Const(root, Tensor(int64_t{-1})));
  Output f_ln = ops::LookupTableFindV2(root, ln, ops::Const(root, Strings({"one", "two", "three"})),
                                       ops::Const(root, Tensor(int64_t{-1})));
  Output f_wl = ops::LookupTableFindV2(root, wl, ops::Const(root, Int64s({1, 2, 3})), ops::Const(root, Tensor("?")));
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession s(root);
  ASSERT_TRUE(s.Run({init_kv, init_ln, init_wl}).ok());
  auto out = s.Run({f_kv, f_ln, f_wl});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Vec<int64_t>((*out)[0]), ElementsAre(2, -1, 3));
  EXPECT_THAT(Vec<int64_t>((*out)[1]), ElementsAre(10, 11, -1));  // vocab_size 2; line number + offset
  EXPECT_THAT(Vec<std::string>((*out)[2]), ElementsAre("y 2 two", "z 3 three", "?"));  // '\r' dropped
  Status st = s.Run({init_empty});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("empty line found at position 3."));
  st = s.Run({init_cols});
  EXPECT_THAT(std::string(st.message()), HasSubstr("line 0 (x 1 one) : expected at least 6 got 3"));
  st = s.Run({init_big});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr("expected 9 but got 3"));
  st = s.Run({init_int});
  EXPECT_THAT(std::string(st.message()), HasSubstr("Field x in line 0 is not a valid int64."));
  EXPECT_EQ(s.Run({init_missing}).code(), absl::StatusCode::kNotFound);
}

TEST(LookupOpsTest, MutableTableInsertRemoveImport) {
  Scope root = Scope::NewRootScope();
  Output t = ops::MutableHashTableV2(root.WithOpName("m"), DT_INT64, DT_FLOAT);
  auto floats = [&](std::vector<float> v) {
    return ops::Const(root, Tensor::FromValues<float>(v, TensorShape{static_cast<int64_t>(v.size())}).value());
  };
  Operation ins = ops::LookupTableInsertV2(root, t, ops::Const(root, Int64s({1, 2, 3})), floats({1, 2, 3}));
  Operation upd = ops::LookupTableInsertV2(root, t, ops::Const(root, Int64s({2})), floats({20}));
  Operation rem = ops::BuildOp(root, "LookupTableRemoveV2", {t, ops::Const(root, Int64s({3}))});
  Output keys = ops::Const(root, Int64s({1, 2, 3, 4}));
  Output find = ops::LookupTableFindV2(root, t, keys, ops::Const(root, Tensor(-1.0f)));
  Output per_key = ops::LookupTableFindV2(root, t, keys, floats({-1, -2, -3, -4}));
  Output size = ops::LookupTableSizeV2(root, t);
  Operation init = ops::InitializeTableV2(root, t, ops::Const(root, Int64s({9})), floats({9}));
  Operation imp = ops::BuildOp(root, "LookupTableImportV2", {t, ops::Const(root, Int64s({7})), floats({7})});
  Output st = ops::HashTableV2(root.WithOpName("st"), DT_INT64, DT_FLOAT);
  Operation ins_static = ops::LookupTableInsertV2(root, st, ops::Const(root, Int64s({1})), floats({1}));
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession s(root);
  auto empty = s.Run({find});
  ASSERT_TRUE(empty.ok()) << empty.status();  // a mutable table needs no initialization
  ASSERT_TRUE(s.Run({ins}).ok());
  ASSERT_TRUE(s.Run({upd}).ok());
  ASSERT_TRUE(s.Run({rem}).ok());
  auto out = s.Run({find, per_key, size});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Vec<float>((*out)[0]), ElementsAre(1, 20, -1, -1));
  EXPECT_THAT(Vec<float>((*out)[1]), ElementsAre(1, 20, -3, -4));
  EXPECT_EQ((*out)[2].scalar<int64_t>(), 2);
  EXPECT_EQ(s.Run({init}).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(s.Run({imp}).ok());  // replaces the contents
  auto after = s.Run({find, size});
  ASSERT_TRUE(after.ok());
  EXPECT_THAT(Vec<float>((*after)[0]), ElementsAre(-1, -1, -1, -1));
  EXPECT_EQ((*after)[1].scalar<int64_t>(), 1);
  EXPECT_EQ(s.Run({ins_static}).code(), absl::StatusCode::kUnimplemented);
}

TEST(LookupOpsTest, IndexTableLookupWithOovBucketsAsTensorFlow) {
  Scope root = Scope::NewRootScope();
  Output words = ops::Const(root, Strings({"b", "zz", "a", "qq"}));
  Output ids = IndexTableLookup(root, Strings({"a", "b", "c"}), words, 3, -1);
  Output plain = IndexTableLookup(root, Strings({"a", "b", "c"}), words, 0, -7);
  Output ints = IndexTableLookup(root, Int64s({10, 20}), ops::Const(root, Int64s({20, 5})), 2, -1);
  Output buckets = ops::StringToHashBucketFast(root, words, 3);
  Output int_buckets = ops::StringToHashBucketFast(root, ops::Const(root, Strings({"5"})), 2);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(TableInitializers(root).size(), 3u);
  ClientSession s(root);
  EXPECT_EQ(s.Run({ids}).status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(s.Run({TablesInitializer(root)}).ok());
  auto out = s.Run({ids, plain, ints, buckets, int_buckets});
  ASSERT_TRUE(out.ok()) << out.status();
  auto b = Vec<int64_t>((*out)[3]);
  EXPECT_THAT(Vec<int64_t>((*out)[0]), ElementsAre(1, 3 + b[1], 0, 3 + b[3]));
  EXPECT_THAT(Vec<int64_t>((*out)[1]), ElementsAre(1, -7, 0, -7));
  EXPECT_THAT(Vec<int64_t>((*out)[2]), ElementsAre(1, 2 + (*out)[4].flat<int64_t>()[0]));
}

// TensorFlow's Scaffold: the default local_init_op runs the tables' initializers, so a session
// from a ChiefSessionCreator looks vocabularies up without an explicit TablesInitializer.
TEST(LookupOpsTest, ScaffoldDefaultLocalInitOpInitializesTables) {
  Scope root = Scope::NewRootScope();
  Output ids = IndexTableLookup(root, Strings({"a", "b"}), ops::Const(root, Strings({"b", "x"})), 0, -1);
  Variable v = Variable::Create(root.WithOpName("v"), TensorShape{}, DT_FLOAT);
  auto scaffold = std::make_shared<train::Scaffold>();
  ASSERT_TRUE(scaffold->Finalize(root).ok());
  ASSERT_TRUE(scaffold->local_init_op.valid());
  train::ChiefSessionCreator chief(root, scaffold, SessionOptions(), "");
  auto session = chief.CreateSession();
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run({ids});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Vec<int64_t>((*out)[0]), ElementsAre(1, -1));
}

}  // namespace
}  // namespace dflow
