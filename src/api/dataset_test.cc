// Datasets through the client API: values and order of every source and transformation, the
// end of input, errors, iterators, and cancellation of a GetNext that waits on a prefetch.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <numeric>
#include <set>
#include <thread>

#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "graph/function_library.h"
#include "graph/graph.h"
#include "graph/graph_def.h"
#include "gtest/gtest.h"
#include "proto/graph.pb.h"
#include "runtime/executor_test_util.h"

namespace dflow::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Msg(const Status& s) { return std::string(s.message()); }

// Runs `next` until the end of input and returns every element (each a list of tensors).
std::vector<std::vector<Tensor>> Drain(const ClientSession& session, const Element& next, size_t limit = 10000) {
  std::vector<std::vector<Tensor>> out;
  while (out.size() < limit) {
    auto r = session.Run(next.components);
    if (!r.ok()) {
      EXPECT_TRUE(absl::IsOutOfRange(r.status())) << r.status();
      EXPECT_THAT(Msg(r.status()), HasSubstr("End of sequence"));
      break;
    }
    out.push_back(*r);
  }
  return out;
}

// The scalar int64 (or int32) values of the first component.
std::vector<int64_t> Ints(const std::vector<std::vector<Tensor>>& elems) {
  std::vector<int64_t> v;
  for (const auto& e : elems) {
    if (e[0].dtype() == DT_INT64) v.push_back(e[0].scalar<int64_t>());
    else v.push_back(e[0].scalar<int32_t>());
  }
  return v;
}

std::vector<int64_t> RangeValues(const Dataset& ds, const Scope& root) {
  Element next = ds.MakeOneShotIterator().GetNext();
  EXPECT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  return Ints(Drain(session, next));
}

TEST(DatasetTest, TheSlidesExample) {
  // dataset = tf.data.Dataset.from_tensor_slices([[0, 1], [2, 3], [4, 5], [6, 7]])
  // next = dataset.make_one_shot_iterator().get_next()
  Scope root = Scope::NewRootScope();
  Dataset ds = Dataset::FromTensorSlices(root, {Input({{0, 1}, {2, 3}, {4, 5}, {6, 7}})});
  Element next = ds.MakeOneShotIterator().GetNext();
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(next[0].shape(), PartialTensorShape({2}));
  ClientSession session(root);
  for (int i = 0; i < 4; ++i) {
    auto r = session.Run({next[0]});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)[0].shape(), TensorShape({2}));
    EXPECT_THAT((*r)[0].flat<int32_t>(), ElementsAre(2 * i, 2 * i + 1));
  }
  for (int i = 0; i < 2; ++i) {  // the end stays the end
    auto r = session.Run({next[0]});
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(absl::IsOutOfRange(r.status())) << r.status();
    EXPECT_THAT(Msg(r.status()), HasSubstr("End of sequence"));
  }
}

TEST(DatasetTest, NamedColumnsComeOutByName) {
  Scope root = Scope::NewRootScope();
  Dataset ds = Dataset::FromTensorSlices(root, {{"b", Input({10.0f, 20.0f})}, {"a", Input({1, 2})}});
  EXPECT_THAT(ds.names(), ElementsAre("a", "b"));  // key order, as tf.nest sorts dicts
  Element next = ds.Batch(2).MakeOneShotIterator().GetNext();
  ASSERT_TRUE(root.ok()) << root.status();
  ASSERT_TRUE(next.Get("a").valid());
  EXPECT_FALSE(next.Get("c").valid());
  EXPECT_EQ(next.Named().size(), 2u);
  EXPECT_TRUE(next.Unnamed().empty());
  ClientSession session(root);
  auto r = session.Run({next.Get("a"), next.Get("b")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)[0].flat<int32_t>(), ElementsAre(1, 2));
  EXPECT_THAT((*r)[1].flat<float>(), ElementsAre(10.0f, 20.0f));
}

TEST(DatasetTest, FeaturesZippedWithLabelsAsAnInputFnReturnsThem) {
  Scope root = Scope::NewRootScope();
  Dataset features = Dataset::FromTensorSlices(root, std::map<std::string, Input>{{"x", Input({1.0f, 2.0f, 3.0f})}});
  Dataset labels = Dataset::FromTensorSlices(root, {Input({0, 1, 0})});
  Element next = Dataset::Zip({features, labels}).MakeOneShotIterator().GetNext();
  ASSERT_TRUE(root.ok()) << root.status();
  std::map<std::string, Output> f = next.Named();
  std::vector<Output> l = next.Unnamed();
  ASSERT_EQ(f.size(), 1u);
  ASSERT_EQ(l.size(), 1u);
  ClientSession session(root);
  auto r = session.Run({f["x"], l[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 1.0f);
  EXPECT_EQ((*r)[1].scalar<int32_t>(), 0);
}

TEST(DatasetTest, SlicesMustAgreeInTheirFirstDimension) {
  Scope root = Scope::NewRootScope();
  Dataset::FromTensorSlices(root, {Input({1, 2, 3}), Input({1, 2})});
  EXPECT_THAT(Msg(root.status()), HasSubstr("same size in dimension 0"));
  Scope root2 = Scope::NewRootScope();
  Dataset::FromTensorSlices(root2, {Input(3)});
  EXPECT_THAT(Msg(root2.status()), HasSubstr("scalar"));
  // Unknown at build time: the kernel checks.
  Scope root3 = Scope::NewRootScope();
  Output a = ops::Placeholder(root3, DT_INT32);
  Output b = ops::Placeholder(root3, DT_INT32);
  Iterator it = Dataset::FromTensorSlices(root3, {a, b}).MakeInitializableIterator();
  ASSERT_TRUE(root3.ok()) << root3.status();
  ClientSession session(root3);
  Status s = session.Run({{a, {1, 2}}, {b, {1, 2, 3}}}, {}, {it.initializer()}).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(Msg(s), HasSubstr("component 0 has 2 rows but component 1 has 3"));
}

TEST(DatasetTest, FromTensorsIsOneElement) {
  Scope root = Scope::NewRootScope();
  Element next = Dataset::FromTensors(root, {Input({1, 2, 3}), Input("x")}).MakeOneShotIterator().GetNext();
  ClientSession session(root);
  auto elems = Drain(session, next);
  ASSERT_EQ(elems.size(), 1u);
  EXPECT_THAT(elems[0][0].flat<int32_t>(), ElementsAre(1, 2, 3));
  EXPECT_EQ(elems[0][1].scalar<std::string>(), "x");
}

TEST(DatasetTest, Range) {
  {
    Scope root = Scope::NewRootScope();
    EXPECT_THAT(RangeValues(Dataset::Range(root, 5), root), ElementsAre(0, 1, 2, 3, 4));
  }
  {
    Scope root = Scope::NewRootScope();
    EXPECT_THAT(RangeValues(Dataset::Range(root, int64_t{2}, int64_t{11}, int64_t{4}), root), ElementsAre(2, 6, 10));
  }
  {
    Scope root = Scope::NewRootScope();
    EXPECT_THAT(RangeValues(Dataset::Range(root, int64_t{3}, int64_t{-3}, int64_t{-2}), root), ElementsAre(3, 1, -1));
  }
  {
    Scope root = Scope::NewRootScope();
    EXPECT_TRUE(RangeValues(Dataset::Range(root, int64_t{3}, int64_t{3}), root).empty());
  }
  {
    Scope root = Scope::NewRootScope();
    Element next = Dataset::Range(root, int64_t{0}, int64_t{3}, int64_t{0}).MakeOneShotIterator().GetNext();
    ClientSession session(root);
    Status s = session.Run(next.components).status();
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_THAT(Msg(s), HasSubstr("step must be a non-zero integer"));
  }
}

TEST(DatasetTest, MapAppliesTheFunctionInOrder) {
  for (int parallel : {0, 3}) {
    Scope root = Scope::NewRootScope();
    Dataset ds = Dataset::Range(root, 20).Map(
        [](const Scope& s, const std::vector<Output>& x) {
          Output sq = ops::Mul(s, x[0], x[0]);
          return std::vector<Output>{ops::Cast(s, sq, DT_FLOAT), ops::Add(s, x[0], int64_t{1})};
        },
        parallel);
    ASSERT_TRUE(root.ok()) << root.status();
    EXPECT_THAT(ds.output_types(), ElementsAre(DT_FLOAT, DT_INT64));
    Element next = ds.MakeOneShotIterator().GetNext();
    ClientSession session(root);
    auto elems = Drain(session, next);
    ASSERT_EQ(elems.size(), 20u) << "parallel " << parallel;
    for (int i = 0; i < 20; ++i) {
      EXPECT_EQ(elems[i][0].scalar<float>(), static_cast<float>(i * i));
      EXPECT_EQ(elems[i][1].scalar<int64_t>(), i + 1);
    }
  }
}

TEST(DatasetTest, MapErrorsNameTheFunctionAndForeignTensors) {
  Scope root = Scope::NewRootScope();
  Output outside = ops::Const(root, int64_t{3});
  Dataset::Range(root, 5).Map([&](const Scope& s, const std::vector<Output>& x) {
    return std::vector<Output>{ops::Add(s, x[0], outside)};
  });
  EXPECT_THAT(Msg(root.status()), HasSubstr("In the function of MapDataset"));
  EXPECT_THAT(Msg(root.status()), HasSubstr("another graph"));
  // A failing function at run time: the error names the function.
  Scope root2 = Scope::NewRootScope();
  Element next = Dataset::Range(root2, int64_t{1}, int64_t{2})
                     .Map([](const Scope& s, const std::vector<Output>& x) {
                       Output n = ops::Reshape(s, ops::Cast(s, x[0], DT_INT32), {1});
                       return std::vector<Output>{ops::Reshape(s, ops::Fill(s, n, 1.0f), {3})};
                     })
                     .MakeOneShotIterator()
                     .GetNext();
  ASSERT_TRUE(root2.ok()) << root2.status();
  ClientSession session(root2);
  Status s = session.Run(next.components).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(Msg(s), HasSubstr("In function 'MapDataset_fn'"));
}

TEST(DatasetTest, FilterKeepsWhatThePredicateAccepts) {
  Scope root = Scope::NewRootScope();
  Dataset ds = Dataset::Range(root, 10).Filter([](const Scope& s, const std::vector<Output>& x) {
    return ops::Equal(s, ops::FloorMod(s, x[0], int64_t{3}), int64_t{0});
  });
  EXPECT_THAT(RangeValues(ds, root), ElementsAre(0, 3, 6, 9));
  Scope bad = Scope::NewRootScope();
  Dataset::Range(bad, 10).Filter([](const Scope& s, const std::vector<Output>& x) { return x[0]; });
  EXPECT_THAT(Msg(bad.status()), HasSubstr("must return a scalar bool"));
}

std::vector<int64_t> ShuffledRange(int64_t n, int64_t buffer, int64_t seed, int64_t epochs, bool reshuffle,
                                   std::optional<int64_t> graph_seed = std::nullopt) {
  Scope root = Scope::NewRootScope();
  if (graph_seed) root.SetRandomSeed(*graph_seed);
  return RangeValues(Dataset::Range(root, n).Shuffle(buffer, seed, reshuffle).Repeat(epochs), root);
}

TEST(DatasetTest, ShuffleWithASeedIsAStablePermutation) {
  std::vector<int64_t> a = ShuffledRange(50, 50, 7, 1, true);
  std::vector<int64_t> b = ShuffledRange(50, 50, 7, 1, true);
  EXPECT_EQ(a, b);  // the same seeds give the same order in a new graph and session
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> want(50);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(sorted, want);
  EXPECT_NE(a, want);  // 1 in 50! that a shuffle is the identity
  EXPECT_NE(a, ShuffledRange(50, 50, 8, 1, true));
  // A graph seed alone makes it deterministic too.
  EXPECT_EQ(ShuffledRange(50, 50, 0, 1, true, 3), ShuffledRange(50, 50, 0, 1, true, 3));
  // A buffer of one shuffles nothing.
  EXPECT_EQ(ShuffledRange(10, 1, 7, 1, true), std::vector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(DatasetTest, ShuffleWindowBoundsHowFarAnElementMoves) {
  // With a window of 3, element i can come out no earlier than position i - 2.
  std::vector<int64_t> v = ShuffledRange(100, 3, 11, 1, true);
  ASSERT_EQ(v.size(), 100u);
  for (size_t pos = 0; pos < v.size(); ++pos) EXPECT_LE(v[pos], static_cast<int64_t>(pos) + 2);
}

TEST(DatasetTest, BadBufferSizesAreErrors) {
  Scope root = Scope::NewRootScope();
  Element a = Dataset::Range(root, 3).Shuffle(int64_t{0}, 1).MakeOneShotIterator().GetNext();
  Element b = Dataset::Range(root, 3).Prefetch(int64_t{-2}).MakeOneShotIterator().GetNext();
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  EXPECT_THAT(Msg(session.Run(a.components).status()), HasSubstr("buffer_size must be greater than zero"));
  EXPECT_THAT(Msg(session.Run(b.components).status()), HasSubstr("buffer_size must be >= 0 or -1"));
}

TEST(DatasetTest, ReshuffleEachIterationGivesEachEpochItsOwnOrder) {
  std::vector<int64_t> r = ShuffledRange(20, 20, 5, 3, true);
  ASSERT_EQ(r.size(), 60u);
  std::vector<int64_t> e0(r.begin(), r.begin() + 20), e1(r.begin() + 20, r.begin() + 40), e2(r.begin() + 40, r.end());
  EXPECT_NE(e0, e1);
  EXPECT_NE(e1, e2);
  for (auto* e : {&e0, &e1, &e2}) {
    std::set<int64_t> s(e->begin(), e->end());
    EXPECT_EQ(s.size(), 20u);  // each epoch is a permutation
  }
  EXPECT_EQ(r, ShuffledRange(20, 20, 5, 3, true));  // and the sequence of epochs repeats
  std::vector<int64_t> same = ShuffledRange(20, 20, 5, 3, false);
  EXPECT_TRUE(std::equal(same.begin(), same.begin() + 20, same.begin() + 20));
  EXPECT_TRUE(std::equal(same.begin(), same.begin() + 20, same.begin() + 40));
}

TEST(DatasetTest, BatchStacksAndKeepsOrDropsTheRemainder) {
  for (bool drop : {false, true}) {
    Scope root = Scope::NewRootScope();
    Dataset ds = Dataset::Range(root, 10)
                     .Map([](const Scope& s, const std::vector<Output>& x) {
                       return std::vector<Output>{x[0], ops::Fill(s, {2}, ops::Cast(s, x[0], DT_FLOAT))};
                     })
                     .Batch(4, drop);
    ASSERT_TRUE(root.ok()) << root.status();
    EXPECT_EQ(ds.output_shapes()[0], drop ? PartialTensorShape({4}) : PartialTensorShape({-1}));
    EXPECT_EQ(ds.output_shapes()[1], drop ? PartialTensorShape({4, 2}) : PartialTensorShape({-1, 2}));
    Element next = ds.MakeOneShotIterator().GetNext();
    ClientSession session(root);
    auto elems = Drain(session, next);
    ASSERT_EQ(elems.size(), drop ? 2u : 3u);
    EXPECT_THAT(elems[1][0].flat<int64_t>(), ElementsAre(4, 5, 6, 7));
    EXPECT_EQ(elems[1][1].shape(), TensorShape({4, 2}));
    EXPECT_THAT(elems[1][1].flat<float>(), ElementsAre(4, 4, 5, 5, 6, 6, 7, 7));
    if (!drop) EXPECT_THAT(elems[2][0].flat<int64_t>(), ElementsAre(8, 9));
  }
}

TEST(DatasetTest, BatchRejectsDifferentShapesAndBadSizes) {
  Scope root = Scope::NewRootScope();
  Element next = Dataset::Range(root, int64_t{1}, int64_t{4})
                     .Map([](const Scope& s, const std::vector<Output>& x) {
                       return std::vector<Output>{
                           ops::Fill(s, ops::Reshape(s, ops::Cast(s, x[0], DT_INT32), {1}), 1.0f)};
                     })
                     .Batch(2)
                     .MakeOneShotIterator()
                     .GetNext();
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  Status s = session.Run(next.components).status();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(Msg(s), HasSubstr("Cannot batch tensors with different shapes in component 0. First element had "
                                "shape [1] and element 1 had shape [2]."));
  Scope root2 = Scope::NewRootScope();
  Element n2 = Dataset::Range(root2, 3).Batch(int64_t{0}).MakeOneShotIterator().GetNext();
  ClientSession s2(root2);
  EXPECT_THAT(Msg(s2.Run(n2.components).status()), HasSubstr("Batch size must be greater than zero"));
}

TEST(DatasetTest, RepeatTakeSkipShard) {
  {
    Scope root = Scope::NewRootScope();
    EXPECT_THAT(RangeValues(Dataset::Range(root, 3).Repeat(2), root), ElementsAre(0, 1, 2, 0, 1, 2));
  }
  {
    Scope root = Scope::NewRootScope();
    EXPECT_THAT(RangeValues(Dataset::Range(root, 3).Repeat().Take(7), root), ElementsAre(0, 1, 2, 0, 1, 2, 0));
  }
  {
    Scope root = Scope::NewRootScope();  // an empty input repeated forever ends
    EXPECT_TRUE(RangeValues(Dataset::Range(root, 0).Repeat(), root).empty());
  }
  {
    Scope root = Scope::NewRootScope();
    EXPECT_THAT(RangeValues(Dataset::Range(root, 6).Skip(4), root), ElementsAre(4, 5));
  }
  {
    Scope root = Scope::NewRootScope();
    EXPECT_TRUE(RangeValues(Dataset::Range(root, 6).Skip(-1), root).empty());
  }
  {
    Scope root = Scope::NewRootScope();
    EXPECT_THAT(RangeValues(Dataset::Range(root, 6).Take(-1), root), ElementsAre(0, 1, 2, 3, 4, 5));
  }
  {
    Scope root = Scope::NewRootScope();
    EXPECT_THAT(RangeValues(Dataset::Range(root, 10).Shard(3, 1), root), ElementsAre(1, 4, 7));
  }
  {
    Scope root = Scope::NewRootScope();
    Element next = Dataset::Range(root, 10).Shard(3, 3).MakeOneShotIterator().GetNext();
    ClientSession session(root);
    EXPECT_THAT(Msg(session.Run(next.components).status()), HasSubstr("Index must be between 0 and 2"));
  }
}

TEST(DatasetTest, ZipEndsWithTheShortest) {
  Scope root = Scope::NewRootScope();
  Dataset a = Dataset::Range(root, 5);
  Dataset b = Dataset::Range(root, int64_t{10}, int64_t{13});
  Element next = Dataset::Zip({a, b}).MakeOneShotIterator().GetNext();
  ClientSession session(root);
  auto elems = Drain(session, next);
  ASSERT_EQ(elems.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(elems[i][0].scalar<int64_t>(), i);
    EXPECT_EQ(elems[i][1].scalar<int64_t>(), 10 + i);
  }
}

TEST(DatasetTest, PrefetchKeepsValuesAndOrder) {
  Scope root = Scope::NewRootScope();
  Dataset ds =
      Dataset::Range(root, 50)
          .Map([](const Scope& s, const std::vector<Output>& x) { return std::vector<Output>{ops::Neg(s, x[0])}; }, 2)
          .Prefetch(3);
  std::vector<int64_t> v = RangeValues(ds, root);
  ASSERT_EQ(v.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(v[i], -i);
}

TEST(DatasetTest, InitializableIteratorTakesParametersFromPlaceholders) {
  Scope root = Scope::NewRootScope();
  Output values = ops::Placeholder(root, DT_INT32, PartialTensorShape({-1}));
  Output count = ops::Placeholder(root, DT_INT64, PartialTensorShape::Scalar());
  Iterator it = Dataset::FromTensorSlices(root, {values}).Take(count).MakeInitializableIterator();
  Element next = it.GetNext();
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  Status s = session.Run(next.components).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(Msg(s), HasSubstr("not been initialized"));
  ASSERT_TRUE(session.Run({{values, {5, 6, 7, 8}}, {count, int64_t{3}}}, {}, {it.initializer()}).ok());
  EXPECT_THAT(Ints(Drain(session, next)), ElementsAre(5, 6, 7));
  // Initializing again starts over with the new parameters.
  ASSERT_TRUE(session.Run({{values, {1, 2}}, {count, int64_t{-1}}}, {}, {it.initializer()}).ok());
  EXPECT_THAT(Ints(Drain(session, next)), ElementsAre(1, 2));
}

TEST(DatasetTest, OneShotIteratorsCannotCapturePlaceholders) {
  Scope root = Scope::NewRootScope();
  Output values = ops::Placeholder(root, DT_INT32);
  Dataset::FromTensorSlices(root, {values}).MakeOneShotIterator();
  EXPECT_THAT(Msg(root.status()), HasSubstr("placeholder"));
}

TEST(DatasetTest, FunctionsTravelInTheGraphDef) {
  Scope root = Scope::NewRootScope();
  Dataset::Range(root, 4)
      .Map([](const Scope& s, const std::vector<Output>& x) {
        return std::vector<Output>{ops::Mul(s, x[0], int64_t{10})};
      })
      .MakeOneShotIterator()
      .GetNext();
  ASSERT_TRUE(root.ok()) << root.status();
  proto::GraphDef def;
  ExportGraphDef(*root.graph(), &def);
  ASSERT_EQ(def.library().function_size(), 2);  // the map function and the one-shot factory
  // A session that gets only the GraphDef runs it.
  std::string bytes = def.SerializeAsString();
  proto::GraphDef parsed;
  ASSERT_TRUE(ParseGraphDef(bytes, &parsed).ok());
  SessionOptions o;
  auto session = NewSession(o);
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(parsed).ok());
  std::vector<int64_t> got;
  while (true) {
    std::vector<Tensor> out;
    Status s = (*session)->Run({}, {"IteratorGetNext:0"}, {}, &out);
    if (!s.ok()) {
      EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
      break;
    }
    got.push_back(out[0].scalar<int64_t>());
  }
  EXPECT_THAT(got, ElementsAre(0, 10, 20, 30));
  // A library function that names an unknown op is an error at import or instantiation.
  proto::GraphDef broken = parsed;
  for (auto& f : *broken.mutable_library()->mutable_function())
    for (auto& n : *f.mutable_node_def())
      if (n.op() == "Mul") n.set_op("NoSuchOp");
  auto s2 = NewSession(o);
  Status created = (*s2)->Create(broken);
  if (created.ok()) {
    std::vector<Tensor> out;
    created = (*s2)->Run({}, {"IteratorGetNext:0"}, {}, &out);
  }
  EXPECT_FALSE(created.ok());
  EXPECT_THAT(Msg(created), HasSubstr("NoSuchOp"));
}

// A map function that waits on an empty queue: the pipeline below it never produces.
Dataset BlockedPipeline(const Scope& root, const std::string& queue, int parallel_calls = 0) {
  return Dataset::Range(root, 5)
      .Map(
          [queue](const Scope& s, const std::vector<Output>& x) {
            ops::QueueAttrs qa;
            qa.shared_name = queue;
            Output q = ops::FIFOQueue(s, {DT_INT64}, qa);
            return std::vector<Output>{ops::Add(s, x[0], ops::QueueDequeue(s, q, {DT_INT64})[0])};
          },
          parallel_calls)
      .Prefetch(2);
}

TEST(DatasetTest, AGetNextWaitingOnAPrefetchEndsAtTheDeadline) {
  Scope root = Scope::NewRootScope();
  Element next = BlockedPipeline(root, "dataset_test_blocked_1").MakeOneShotIterator().GetNext();
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  RunOptions ro;
  ro.timeout_in_ms = 200;
  auto r = session.Run({}, next.components, {}, nullptr, ro);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(r.status()) || absl::IsCancelled(r.status())) << r.status();
  // The session and then the graph go away with the producer thread still waiting inside the
  // queue: closing stops it (the test would hang otherwise).
}

TEST(DatasetTest, ParallelCallsWaitingInsideTheirFunctionsEndWithTheIterator) {
  Scope root = Scope::NewRootScope();
  Element next = BlockedPipeline(root, "dataset_test_blocked_3", 3).MakeOneShotIterator().GetNext();
  ASSERT_TRUE(root.ok()) << root.status();
  {
    ClientSession session(root);
    RunOptions ro;
    ro.timeout_in_ms = 200;
    Status s = session.Run({}, next.components, {}, nullptr, ro).status();
    EXPECT_TRUE(absl::IsDeadlineExceeded(s) || absl::IsCancelled(s)) << s;
  }
  // The calls waited without holding pool threads: the executor still runs other work.
  Scope other = Scope::NewRootScope();
  std::vector<int64_t> v = RangeValues(
      Dataset::Range(other, 4).Map([](const Scope& s,
                                      const std::vector<Output>& x) { return std::vector<Output>{ops::Neg(s, x[0])}; },
                                   2),
      other);
  EXPECT_THAT(v, ElementsAre(0, -1, -2, -3));
}

TEST(DatasetTest, ClosingTheSessionEndsAWaitingGetNextAndStopsTheIterator) {
  // The map function blocks in TestBlock, which tells the probe. The prefetch thread calls it only
  // once GetNext has started it and waits for its buffer (holding the iterator's lock until then),
  // so a blocked TestBlock means that GetNext waits.
  executor_test::RegisterStepProbeOps();
  executor_test::StepProbe& probe = executor_test::StepProbe::Get();
  probe.Reset();
  Scope root = Scope::NewRootScope();
  Element next = Dataset::Range(root, 5)
                     .Map([](const Scope& s, const std::vector<Output>& x) {
                       Output blocked(ops::BuildOp(s, "TestBlock", {}, {{"dtype", DT_INT64}}), 0);
                       return std::vector<Output>{ops::Add(s, x[0], blocked)};
                     })
                     .Prefetch(2)
                     .MakeOneShotIterator()
                     .GetNext();
  ASSERT_TRUE(root.ok()) << root.status();
  auto session = std::make_unique<ClientSession>(root);
  Status waited;
  std::thread t([&] { waited = session->Run(next.components).status(); });
  EXPECT_TRUE(probe.WaitBlocked(1)) << "the pipeline never blocked";
  EXPECT_TRUE(session->session()->Close().ok());
  t.join();
  EXPECT_TRUE(absl::IsCancelled(waited)) << waited;
  // Closing stopped the iterator: its prefetch thread's call was cancelled too.
  EXPECT_TRUE(probe.WaitCancelled(1)) << "the blocked map function was not cancelled";
  // Another session of the graph finds the iterator closed with its session.
  ClientSession other(root);
  Status s = other.Run(next.components).status();
  EXPECT_TRUE(absl::IsCancelled(s)) << s;
  EXPECT_THAT(Msg(s), HasSubstr("session that initialized this iterator was closed"));
}

int CountThreads() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)e;
    ++n;
  }
  return n;
}

TEST(DatasetTest, PrefetchThreadsEndWithTheirIterator) {
  {  // warm up the pools that live for the whole process
    Scope root = Scope::NewRootScope();
    RangeValues(Dataset::Range(root, 3).Prefetch(1), root);
  }
  const int baseline = CountThreads();
  {
    Scope root = Scope::NewRootScope();
    Output n = ops::Placeholder(root, DT_INT64, PartialTensorShape::Scalar());
    Iterator it = Dataset::Range(root, n)
                      .Prefetch(2)
                      .Map([](const Scope& s, const std::vector<Output>& x) {
                        return std::vector<Output>{ops::Neg(s, x[0])};
                      })
                      .Prefetch(2)
                      .Prefetch(1)
                      .MakeInitializableIterator();
    Element next = it.GetNext();
    ASSERT_TRUE(root.ok()) << root.status();
    ClientSession session(root);
    for (int round = 0; round < 5; ++round) {  // re-initializing replaces the threads
      ASSERT_TRUE(session.Run({{n, int64_t{1000}}}, {}, {it.initializer()}).ok());
      auto r = session.Run({next[0]});
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ((*r)[0].scalar<int64_t>(), 0);
      EXPECT_EQ(CountThreads(), baseline + 3);
    }
  }
  EXPECT_EQ(CountThreads(), baseline);
}

TEST(DatasetTest, BuildErrorsAreRecordedInTheScope) {
  Scope root = Scope::NewRootScope();
  Dataset bad = Dataset::FromTensorSlices(root, std::vector<Input>{});
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(root.ok());
  // Everything built from an invalid dataset is invalid too, without crashing.
  Iterator it = bad.Map([](const Scope& s, const std::vector<Output>& x) { return x; }).Batch(2).MakeOneShotIterator();
  EXPECT_FALSE(it.ok());
  EXPECT_EQ(it.GetNext().size(), 0u);
}

}  // namespace
}  // namespace dflow::data
