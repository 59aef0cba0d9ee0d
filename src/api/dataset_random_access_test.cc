// In-memory pipelines take the random-access path (Shuffle moves indices, Batch gathers rows,
// Repeat joins batches across epochs, Zip cuts to the shortest): every element must come out as
// the element-by-element path gives it. The reference is the same pipeline behind an identity
// Map, which has no random access.
#include <numeric>

#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow::data {
namespace {

// "[shape] v0 v1 ..." with every value.
std::string Flat(const Tensor& t) {
  std::string s = t.shape().DebugString();
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    s += " ";
    switch (t.dtype()) {
      case DT_INT64: s += std::to_string(t.flat<int64_t>()[i]); break;
      case DT_FLOAT: s += std::to_string(t.flat<float>()[i]); break;
      case DT_STRING: s += t.flat<std::string>()[i]; break;
      default: s += "?";
    }
  }
  return s;
}

// All batches of a pipeline until the end of input (or `limit` batches), each component flattened
// to strings so that every dtype compares.
std::vector<std::vector<std::string>> Drain(const Dataset& ds, const Scope& root, int limit = 1000) {
  Element next = ds.MakeOneShotIterator().GetNext();
  EXPECT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  std::vector<std::vector<std::string>> out;
  for (int i = 0; i < limit; ++i) {
    auto r = session.Run(next.components);
    if (!r.ok()) {
      EXPECT_TRUE(absl::IsOutOfRange(r.status())) << r.status();
      break;
    }
    std::vector<std::string> batch;
    for (const Tensor& t : *r) batch.push_back(Flat(t));
    out.push_back(batch);
  }
  return out;
}

Dataset Identity(const Dataset& ds) {
  return ds.Map([](const Scope& s, const std::vector<Output>& x) {
    std::vector<Output> y;
    for (const Output& o : x) y.push_back(ops::Identity(s, o));
    return y;
  });
}

struct Columns {
  Tensor ints, floats, strings, singles;  // rows of 8, 8, a string, 4 bytes
  explicit Columns(int n) {
    std::vector<int64_t> i(n);
    std::iota(i.begin(), i.end(), 0);
    std::vector<float> f(2 * n);
    for (int k = 0; k < 2 * n; ++k) f[k] = 0.5f * static_cast<float>(k);
    std::vector<std::string> s;
    for (int k = 0; k < n; ++k) s.push_back("s" + std::to_string(k));
    ints = Tensor::FromValues<int64_t>(i, TensorShape({n})).value();
    floats = Tensor::FromValues<float>(f, TensorShape({n, 2})).value();
    strings = Tensor::FromValues<std::string>(s, TensorShape({n})).value();
    std::vector<float> one(n);
    for (int k = 0; k < n; ++k) one[k] = 100.0f + static_cast<float>(k);
    singles = Tensor::FromValues<float>(one, TensorShape({n})).value();
  }
};

// The pipeline `make` builds over an in-memory source, against the same over the identity Map.
void ExpectSameAsElementPath(const std::function<Dataset(const Dataset&)>& make, int n = 10) {
  Columns c(n);
  Scope fast_root = Scope::NewRootScope();
  Dataset fast_src = Dataset::Zip({Dataset::FromTensorSlices(fast_root, {c.ints, c.floats, c.singles}),
                                   Dataset::FromTensorSlices(fast_root, {c.strings})});
  auto fast = Drain(make(fast_src), fast_root);
  Scope slow_root = Scope::NewRootScope();
  Dataset slow_src = Identity(Dataset::Zip({Dataset::FromTensorSlices(slow_root, {c.ints, c.floats, c.singles}),
                                            Dataset::FromTensorSlices(slow_root, {c.strings})}));
  auto slow = Drain(make(slow_src), slow_root);
  ASSERT_FALSE(slow.empty());
  EXPECT_EQ(fast, slow);
}

TEST(DatasetRandomAccessTest, BatchOfSlices) {
  ExpectSameAsElementPath([](const Dataset& d) { return d.Batch(4); });
  ExpectSameAsElementPath([](const Dataset& d) { return d.Batch(4, /*drop_remainder=*/true); });
  ExpectSameAsElementPath([](const Dataset& d) { return d.Batch(100); });
}

TEST(DatasetRandomAccessTest, ShuffleGivesTheElementPathsOrder) {
  ExpectSameAsElementPath([](const Dataset& d) { return d.Shuffle(100, /*seed=*/5); });
  ExpectSameAsElementPath([](const Dataset& d) { return d.Shuffle(3, /*seed=*/5); });  // a small window
  ExpectSameAsElementPath([](const Dataset& d) { return d.Shuffle(100, 9).Batch(3); });
  ExpectSameAsElementPath([](const Dataset& d) { return d.Shuffle(4, 9).Batch(3); });
}

TEST(DatasetRandomAccessTest, RepeatJoinsBatchesAcrossEpochs) {
  // 10 elements, batches of 4: batches 3, 6, ... cross the end of an epoch.
  ExpectSameAsElementPath([](const Dataset& d) { return d.Repeat(3).Batch(4); });
  ExpectSameAsElementPath([](const Dataset& d) { return d.Shuffle(10, 3).Repeat(3).Batch(4); });
  ExpectSameAsElementPath([](const Dataset& d) { return d.Shuffle(10, 3, false).Repeat(2).Batch(7, true); });
  ExpectSameAsElementPath([](const Dataset& d) { return d.Shuffle(1000, 1).Repeat().Batch(7).Take(9); });
  // A batch bigger than an epoch spans several.
  ExpectSameAsElementPath([](const Dataset& d) { return d.Repeat(5).Batch(23); });
}

TEST(DatasetRandomAccessTest, ZipEndsWithTheShortest) {
  Columns ten(10), seven(7);
  for (bool fast : {true, false}) {
    Scope root = Scope::NewRootScope();
    Dataset strings = Dataset::FromTensorSlices(root, {seven.strings});
    Dataset zip = Dataset::Zip({Dataset::FromTensorSlices(root, {ten.ints}), fast ? strings : Identity(strings)});
    auto batches = Drain(zip.Batch(4), root);
    ASSERT_EQ(batches.size(), 2u) << fast;
    EXPECT_EQ(batches[0][0], "[4] 0 1 2 3");
    EXPECT_EQ(batches[1][0], "[3] 4 5 6");
    EXPECT_EQ(batches[1][1], "[3] s4 s5 s6");
  }
}

}  // namespace
}  // namespace dflow::data
