// Tensor bundles (V2 checkpoints): TensorFlow's files, round trips, slices, damage, crashes.
#include "tensor/tensor_bundle.h"

#include <cstring>
#include <fstream>
#include <random>

#include "base/fault_injection_env.h"
#include "base/temp_dir.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

std::string TestData(absl::string_view name) { return JoinPath(DFLOW_SOURCE_DIR "/testdata/tf", name); }

// Overwrites a file without the fsync of WriteFileAtomic (mutation loops write thousands).
void Overwrite(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << path;
}

float FloatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

Tensor Floats(std::vector<float> v, TensorShape shape) { return Tensor::FromValues<float>(v, shape).value(); }

// Bitwise equality of two tensors (strings by value).
void ExpectSame(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  if (a.dtype() == DT_STRING) {
    for (int64_t i = 0; i < a.NumElements(); ++i) EXPECT_EQ(a.data<std::string>()[i], b.data<std::string>()[i]);
  } else {
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()), 0);
  }
}

TEST(TensorSliceTest, ParsesAndResolves) {
  TensorShape shape;
  TensorSlice slice;
  bool has = false;
  ASSERT_TRUE(ParseShapeAndSlice("4 6 1,2:-", &shape, &slice, &has).ok());
  EXPECT_TRUE(has);
  EXPECT_EQ(shape, TensorShape({4, 6}));
  EXPECT_EQ(slice.DebugString(), "1,2:-");
  EXPECT_EQ(slice.SliceShape(shape).value(), TensorShape({2, 6}));
  ASSERT_TRUE(ParseShapeAndSlice("", &shape, &slice, &has).ok());
  EXPECT_FALSE(has);
  EXPECT_FALSE(ParseShapeAndSlice("4 6 3,2:-", &shape, &slice, &has).ok());  // past the end
  EXPECT_FALSE(ParseShapeAndSlice("4 6 1,2", &shape, &slice, &has).ok());    // rank mismatch
  EXPECT_FALSE(ParseShapeAndSlice("4 x -:-", &shape, &slice, &has).ok());
  EXPECT_FALSE(ParseShapeAndSlice("4", &shape, &slice, &has).ok());
}

// Key bytes as TensorFlow's OrderedCode writes them (hand-encoded from its rules).
TEST(TensorSliceTest, EncodesSliceKeysAsTensorFlow) {
  TensorSlice s = TensorSlice::Parse("0,2:-").value();
  // 0 -> "\x00"; "ab" -> "ab\x00\x01"; rank 2 -> "\x01\x02"; 0 -> 0x80; 2 -> 0x82; 0 -> 0x80; -1 -> 0x7f.
  EXPECT_EQ(EncodeTensorNameSlice("ab", s), std::string("\x00"
                                                        "ab\x00\x01\x01\x02\x80\x82\x80\x7f",
                                                        11));
  // 100 needs two bytes: sign 1, one size bit 1, delimiter 0, then 100 -> 0xc0 0x64.
  TensorSlice big = TensorSlice::FromBox({100}, {1});
  EXPECT_EQ(EncodeTensorNameSlice("", big), std::string("\x00\x00\x01\x01\x01\xc0\x64\x81", 8));
  EXPECT_EQ(EncodeTensorNameSlice("a\xff", TensorSlice(0)), std::string("\x00"
                                                                        "a\xff\x00\x00\x01\x00",
                                                                        7));
}

TEST(BundleTest, ReadsTensorFlowsCheckpoint) {
  auto r = BundleReader::Open(Env::Default(), TestData("checkpoint_v2_regression/model"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->num_shards(), 1);
  EXPECT_EQ((*r)->TensorNames(), (std::vector<std::string>{"W", "b"}));
  auto w = (*r)->Lookup("W");
  auto b = (*r)->Lookup("b");
  ASSERT_TRUE(w.ok() && b.ok()) << w.status() << b.status();
  EXPECT_EQ(w->shape(), TensorShape({}));
  EXPECT_EQ(w->scalar<float>(), FloatFromBits(0x3e5b18cc));  // the bytes TensorFlow wrote
  EXPECT_EQ(b->scalar<float>(), FloatFromBits(0x3f8656d9));
  EXPECT_EQ(w->scalar<float>(), 0.21396178f);
  EXPECT_EQ(b->scalar<float>(), 1.0495254f);
  EXPECT_EQ((*r)->Lookup("nope").status().code(), absl::StatusCode::kNotFound);
}

// The same tensors written by dflow give TensorFlow's files byte for byte.
TEST(BundleTest, WritesTheBytesTensorFlowWrites) {
  TempDir dir;
  const std::string prefix = dir.File("model");
  BundleWriter w(Env::Default(), prefix);
  ASSERT_TRUE(w.Add("W", Tensor(FloatFromBits(0x3e5b18cc))).ok());
  ASSERT_TRUE(w.Add("b", Tensor(FloatFromBits(0x3f8656d9))).ok());
  ASSERT_TRUE(w.Finish().ok());
  for (const char* suffix : {".index", ".data-00000-of-00001"}) {
    auto ours = Env::Default()->ReadFile(prefix + suffix);
    auto theirs = Env::Default()->ReadFile(TestData(std::string("checkpoint_v2_regression/model") + suffix));
    ASSERT_TRUE(ours.ok() && theirs.ok());
    EXPECT_EQ(*ours, *theirs) << suffix;
  }
  auto children = Env::Default()->GetChildren(dir.path());
  EXPECT_EQ(children->size(), 2u);  // no temporary left
}

TEST(BundleTest, RoundTripsEveryDType) {
  TempDir dir;
  const std::string prefix = dir.File("sub/ckpt");
  std::vector<std::pair<std::string, Tensor>> tensors;
  tensors.emplace_back("f", Floats({1.5f, -2, 3e30f, 0}, {2, 2}));
  tensors.emplace_back("d", Tensor::FromValues<double>({1e-300, 2}, {2}).value());
  tensors.emplace_back("i32", Tensor::FromValues<int32_t>({-1, 7, 9}, {3}).value());
  tensors.emplace_back("i64", Tensor::FromValues<int64_t>({int64_t{1} << 40}, {1, 1}).value());
  tensors.emplace_back("u8", Tensor::FromValues<uint8_t>({0, 255}, {2}).value());
  tensors.emplace_back("bool", Tensor::FromValues<bool>({true, false, true}, {3}).value());
  tensors.emplace_back(
      "s", Tensor::FromValues<std::string>({"", std::string("a\0b", 3), std::string(300, 'x')}, {3}).value());
  tensors.emplace_back("empty", Tensor(DT_FLOAT, TensorShape({0, 4})));
  tensors.emplace_back("empty_s", Tensor(DT_STRING, TensorShape({0})));
  {
    BundleWriter w(Env::Default(), prefix);
    for (const auto& [k, t] : tensors) ASSERT_TRUE(w.Add(k, t).ok()) << k;
    EXPECT_EQ(w.Add("f", tensors[0].second).code(), absl::StatusCode::kInvalidArgument);  // duplicate
    EXPECT_EQ(w.Finish().code(), absl::StatusCode::kInvalidArgument);                     // the error sticks
  }
  EXPECT_FALSE(Env::Default()->FileExists(prefix + ".index"));
  BundleWriter w(Env::Default(), prefix);
  for (const auto& [k, t] : tensors) ASSERT_TRUE(w.Add(k, t).ok()) << k;
  ASSERT_TRUE(w.Finish().ok());
  auto r = BundleReader::Open(Env::Default(), prefix);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& [k, t] : tensors) {
    auto got = (*r)->Lookup(k);
    ASSERT_TRUE(got.ok()) << k << got.status();
    ExpectSame(*got, t);
  }
}

// A [5, 3] variable saved as row slices [0,2) and [2,5) by two writers, merged, then read whole
// and in another partitioning.
TEST(BundleTest, SlicesMergeAndRestoreIntoAnotherPartitioning) {
  TempDir dir;
  std::vector<float> all(15);
  for (int i = 0; i < 15; ++i) all[i] = static_cast<float>(i) * 1.5f;
  Tensor whole = Floats(all, {5, 3});
  const TensorShape full({5, 3});
  const std::string p0 = dir.File("tmp/part-0"), p1 = dir.File("tmp/part-1"), merged = dir.File("model");
  {
    BundleWriter w(Env::Default(), p0);
    ASSERT_TRUE(w.AddSlice("emb", full, TensorSlice::Parse("0,2:-").value(), whole.Slice(0, 2).value()).ok());
    ASSERT_TRUE(w.Add("step", Tensor(int64_t{7})).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  {
    BundleWriter w(Env::Default(), p1);
    ASSERT_TRUE(w.AddSlice("emb", full, TensorSlice::Parse("2,3:-").value(), whole.Slice(2, 5).value()).ok());
    EXPECT_FALSE(w.AddSlice("emb", full, TensorSlice::Parse("2,2:-").value(), whole.Slice(0, 3).value()).ok());
  }
  {
    BundleWriter w(Env::Default(), p1);
    ASSERT_TRUE(w.AddSlice("emb", full, TensorSlice::Parse("2,3:-").value(), whole.Slice(2, 5).value()).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  ASSERT_TRUE(MergeBundles(Env::Default(), {p0, p1}, merged).ok());
  EXPECT_FALSE(Env::Default()->IsDirectory(dir.File("tmp")));  // emptied and removed
  auto r = BundleReader::Open(Env::Default(), merged);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->num_shards(), 2);
  EXPECT_EQ((*r)->TensorNames(), (std::vector<std::string>{"emb", "step"}));
  auto got = (*r)->Lookup("emb");
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectSame(*got, whole);
  // Rows [1, 4), columns [1, 3): across both saved slices.
  auto part = (*r)->LookupSlice("emb", TensorSlice::FromBox({1, 1}, {3, 2}));
  ASSERT_TRUE(part.ok()) << part.status();
  std::vector<float> want;
  for (int i = 1; i < 4; ++i)
    for (int j = 1; j < 3; ++j) want.push_back(all[i * 3 + j]);
  ExpectSame(*part, Floats(want, {3, 2}));
  EXPECT_EQ((*r)->Lookup("step")->scalar<int64_t>(), 7);
  // A whole tensor restores into slices too.
  auto step_part = (*r)->LookupSlice("step", TensorSlice(0));
  EXPECT_TRUE(step_part.ok());
}

TEST(BundleTest, UncoveredSliceIsNotFound) {
  TempDir dir;
  const std::string p = dir.File("m");
  BundleWriter w(Env::Default(), p);
  ASSERT_TRUE(w.AddSlice("v", {4}, TensorSlice::Parse("0,2").value(), Floats({1, 2}, {2})).ok());
  ASSERT_TRUE(w.Finish().ok());
  auto r = BundleReader::Open(Env::Default(), p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->Lookup("v").status().code(), absl::StatusCode::kNotFound);
  auto first = (*r)->LookupSlice("v", TensorSlice::Parse("0,2").value());
  ASSERT_TRUE(first.ok()) << first.status();
  ExpectSame(*first, Floats({1, 2}, {2}));
}

// A full shape that the saved slices could never fill (2^40 floats) is reported as not covered
// before anything of that size is allocated.
TEST(BundleTest, HugeDeclaredShapeIsCheckedBeforeAllocating) {
  TempDir dir;
  const std::string p = dir.File("m");
  const int64_t huge = int64_t{1} << 40;
  BundleWriter w(Env::Default(), p);
  ASSERT_TRUE(w.AddSlice("v", {huge}, TensorSlice::Parse("0,2").value(), Floats({1, 2}, {2})).ok());
  ASSERT_TRUE(w.Finish().ok());
  auto r = BundleReader::Open(Env::Default(), p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->Lookup("v").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE((*r)->LookupSlice("v", TensorSlice::Parse("0,2").value()).ok());
}

TEST(BundleTest, FlippedDataByteIsDataLossNamingFileAndTensor) {
  TempDir dir;
  const std::string p = dir.File("m");
  BundleWriter w(Env::Default(), p);
  ASSERT_TRUE(w.Add("a", Floats({1, 2, 3}, {3})).ok());
  ASSERT_TRUE(w.Add("s", Tensor::FromValues<std::string>({"hello", "world"}, {2}).value()).ok());
  ASSERT_TRUE(w.Finish().ok());
  const std::string data_path = BundleDataFilename(p, 0, 1);
  const std::string good = Env::Default()->ReadFile(data_path).value();
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x20;
    Overwrite(data_path, bad);
    auto r = BundleReader::Open(Env::Default(), p);
    ASSERT_TRUE(r.ok());
    const char* name = i < 12 ? "a" : "s";
    Status s = (*r)->Lookup(name).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << i;
    EXPECT_NE(s.message().find(data_path), std::string::npos) << s;
    EXPECT_NE(s.message().find(absl::StrCat("tensor '", name, "'")), std::string::npos) << s;
  }
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(data_path, good.substr(0, good.size() - 1)).ok());
  auto r = BundleReader::Open(Env::Default(), p);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)->Lookup("a").ok());
  Status s = (*r)->Lookup("s").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s;
}

// Every truncation and single-byte change of the index file: Open and reads only ever return
// errors (or values that still pass every check), never crash.
TEST(BundleTest, SurvivesEveryMutationOfTheIndexFile) {
  TempDir dir;
  const std::string p = dir.File("m");
  {
    BundleWriter w(Env::Default(), p);
    ASSERT_TRUE(w.Add("a", Floats({1, 2, 3}, {3})).ok());
    ASSERT_TRUE(w.AddSlice("p", {4, 2}, TensorSlice::Parse("0,1:-").value(), Floats({5, 6}, {1, 2})).ok());
    ASSERT_TRUE(
        w.AddSlice("p", {4, 2}, TensorSlice::Parse("1,3:-").value(), Floats({7, 8, 9, 10, 11, 12}, {3, 2})).ok());
    ASSERT_TRUE(w.Add("s", Tensor::FromValues<std::string>({"x", "yz"}, {2}).value()).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  const std::string index = BundleIndexFilename(p);
  const std::string good = Env::Default()->ReadFile(index).value();
  auto read_all = [&] {
    auto r = BundleReader::Open(Env::Default(), p);
    if (!r.ok()) return;
    for (const std::string& name : (*r)->TensorNames()) (void)(*r)->Lookup(name);
  };
  for (size_t n = 0; n < good.size(); ++n) {
    Overwrite(index, good.substr(0, n));
    EXPECT_FALSE(BundleReader::Open(Env::Default(), p).ok()) << n;
  }
  for (size_t i = 0; i < good.size(); ++i) {
    for (int x : {0x01, 0x40, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ x);
      Overwrite(index, bad);
      read_all();
    }
  }
}

// Fails the k-th file operation of a save, for every k: the earlier bundle always reads back
// bit-exactly, and the new one is either absent or complete and correct.
TEST(BundleTest, InjectedFailureAtEveryStepLeavesThePreviousBundleIntact) {
  TempDir dir;
  const std::string old_prefix = dir.File("model-1"), new_prefix = dir.File("model-2");
  Tensor v1 = Floats({1, 2, 3, 4}, {2, 2}), v2 = Floats({5, 6, 7, 8}, {2, 2});
  {
    BundleWriter w(Env::Default(), old_prefix);
    ASSERT_TRUE(w.Add("v", v1).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  int64_t ops = 0;
  {
    FaultInjectionEnv counting;
    BundleWriter w(&counting, dir.File("count"));
    ASSERT_TRUE(w.Add("v", v2).ok());
    ASSERT_TRUE(w.Finish().ok());
    ops = counting.operations();
    ASSERT_TRUE(DeleteBundle(Env::Default(), dir.File("count")).ok());
  }
  ASSERT_GE(ops, 7);  // create, append, sync, close, rename, index create/append/sync/close/rename, syncdir
  for (int64_t k = 1; k <= ops; ++k) {
    FaultInjectionEnv env(k);
    Status s = [&] {
      BundleWriter w(&env, new_prefix);
      RETURN_IF_ERROR(w.Add("v", v2));
      return w.Finish();
    }();
    EXPECT_FALSE(s.ok()) << k;
    auto old = BundleReader::Open(Env::Default(), old_prefix);
    ASSERT_TRUE(old.ok()) << k << old.status();
    ExpectSame((*old)->Lookup("v").value(), v1);
    auto fresh = BundleReader::Open(Env::Default(), new_prefix);
    if (fresh.ok()) {
      auto v = (*fresh)->Lookup("v");
      ASSERT_TRUE(v.ok()) << k << v.status();
      ExpectSame(*v, v2);
    } else {
      EXPECT_EQ(fresh.status().code(), absl::StatusCode::kNotFound) << k << fresh.status();
    }
    ASSERT_TRUE(DeleteBundle(Env::Default(), new_prefix).ok());
  }
}

}  // namespace
}  // namespace dflow
