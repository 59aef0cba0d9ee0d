// The array op functions of the client API: building (names, literals, static shapes,
// multi-output ops), running through a ClientSession, gradients through Gradients(), and
// build-time errors.
#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

// Runs `fetches` and returns their printed values.
std::vector<std::string> RunToStrings(const Scope& root, const std::vector<Output>& fetches,
                                      const ClientSession::FeedDict& feeds = {}) {
  EXPECT_TRUE(root.ok()) << root.status();
  auto r = ClientSession(root).Run(feeds, fetches);
  EXPECT_TRUE(r.ok()) << r.status();
  std::vector<std::string> out;
  if (r.ok())
    for (const Tensor& t : *r) out.push_back(t.ToString());
  return out;
}

TEST(ArrayOpsApiTest, JoinAndSplit) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Const(root, {{1, 2, 3}, {4, 5, 6}});
  Output c = ops::Concat(root, {x, x}, 0);
  EXPECT_EQ(c.shape(), PartialTensorShape({4, 3}));
  EXPECT_EQ(c.op().type(), "ConcatV2");
  std::vector<Output> parts = ops::Split(root, 1, x, 3);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].name(), "split:2");
  EXPECT_EQ(parts[2].shape(), PartialTensorShape({2, 1}));
  std::vector<Output> v = ops::SplitV(root, x, {2, -1}, 1, 2);
  ASSERT_EQ(v.size(), 2u);
  Output s = ops::Stack(root, {x, x}, 1);
  std::vector<Output> rows = ops::Unstack(root, x, 2);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_THAT(RunToStrings(root, {c, parts[2], v[0], v[1], s, rows[1], ops::Concat(root, {x}, 1)}),
              ::testing::ElementsAre("[[1 2 3] [4 5 6] [1 2 3] [4 5 6]]", "[[3] [6]]", "[[1 2] [4 5]]", "[[3] [6]]",
                                     "[[[1 2 3] [1 2 3]] [[4 5 6] [4 5 6]]]", "[4 5 6]", "[[1 2 3] [4 5 6]]"));
}

TEST(ArrayOpsApiTest, SlicingAndReordering) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Const(root, {{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}});
  Output last_col = ops::StridedSlice(root, x, {0, -1}, {0, 0}, {1, 1},
                                      {.begin_mask = 1, .end_mask = 1, .shrink_axis_mask = 2});
  EXPECT_EQ(last_col.shape(), PartialTensorShape({2}));
  Output reversed = ops::StridedSlice(root, x, {0}, {0}, {-1}, {.begin_mask = 1, .end_mask = 1});
  EXPECT_THAT(RunToStrings(root, {last_col, reversed, ops::Slice(root, x, {0, 1}, {-1, 2}),
                                  ops::Pad(root, x, {{0, 1}, {1, 0}}), ops::PadV2(root, x, {{0, 0}, {0, 1}}, 9.0f),
                                  ops::Transpose(root, x, {1, 0}), ops::ExpandDims(root, x, -1),
                                  ops::Squeeze(root, ops::ExpandDims(root, x, 0)), ops::Tile(root, x, {1, 2}),
                                  ops::BroadcastTo(root, ops::Const(root, {1, 2}), {2, 2}),
                                  ops::InvertPermutation(root, {2, 0, 1})}),
              ::testing::ElementsAre("[3 6]", "[[4 5 6] [1 2 3]]", "[[2 3] [5 6]]", "[[0 1 2 3] [0 4 5 6] [0 0 0 0]]",
                                     "[[1 2 3 9] [4 5 6 9]]", "[[1 4] [2 5] [3 6]]", "[[[1] [2] [3]] [[4] [5] [6]]]",
                                     "[[1 2 3] [4 5 6]]", "[[1 2 3 1 2 3] [4 5 6 4 5 6]]", "[[1 2] [1 2]]", "[1 2 0]"));
}

TEST(ArrayOpsApiTest, IndexingAndValues) {
  Scope root = Scope::NewRootScope();
  Output p = ops::Const(root, {{1, 2}, {3, 4}, {5, 6}});
  Output ids = ops::Placeholder(root, DT_INT32);
  Output g = ops::Gather(root, p, ids);
  Output g1 = ops::Gather(root, p, {1, 1, 0}, 1);
  Output oh = ops::OneHot(root, {0, 2}, 3, 1.0f, 0.0f);
  Output ds = ops::DynamicStitch(root, {{0, 2}, {1}}, {ops::Const(root, {10.0f, 30.0f}), {20.0f}});
  Output seg = ops::UnsortedSegmentSum(root, p, {1, 0, 1}, 2);
  EXPECT_EQ(ds.shape(), PartialTensorShape({3}));
  EXPECT_THAT(RunToStrings(root,
                           {g, g1, oh, ds, seg, ops::ZerosLike(root, p), ops::OnesLike(root, oh),
                            ops::Range(root, 0, 10, 3), ops::Range(root, 1.0f, 0.0f, -0.5f),
                            ops::StopGradient(root, p)},
                           {{ids, {2, 0}}}),
              ::testing::ElementsAre("[[5 6] [1 2]]", "[[2 2 1] [4 4 3] [6 6 5]]", "[[1 0 0] [0 0 1]]", "[10 20 30]",
                                     "[[3 4] [6 8]]", "[[0 0] [0 0] [0 0]]", "[[1 1 1] [1 1 1]]", "[0 3 6 9]",
                                     "[1 0.5]", "[[1 2] [3 4] [5 6]]"));
  // An index out of range fails the run with an error that names the op and the index.
  auto r = ClientSession(root).Run({{ids, {0, 3}}}, {g});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("indices[1] = 3 is not in [0, 3)"));
}

TEST(ArrayOpsApiTest, RandomOpsFollowTheSeedRules) {
  Scope root = Scope::NewRootScope();
  root.SetRandomSeed(3);
  Output x = ops::Range(root, 0, 10, 1);
  Output shuffled = ops::RandomShuffle(root, x);
  Output samples = ops::Multinomial(root, ops::Const(root, {{0.0f, 0.0f, 50.0f}}), 4);
  EXPECT_EQ(samples.dtype(), DT_INT64);
  EXPECT_EQ(samples.shape(), PartialTensorShape({1, 4}));
  std::vector<std::string> a = RunToStrings(root, {shuffled, samples});
  std::vector<std::string> b = RunToStrings(root, {shuffled, samples});  // a new session repeats them
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_NE(a[0], "[0 1 2 3 4 5 6 7 8 9]");
  EXPECT_EQ(a[1], "[[2 2 2 2]]");
  ClientSession session(root);
  auto first = session.Run({shuffled});
  auto second = session.Run({shuffled});
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE((*first)[0].ToString(), (*second)[0].ToString());  // one session advances
}

TEST(ArrayOpsApiTest, GradientsThroughArrayOps) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT, PartialTensorShape({2, 3}));
  // y = first column of x^T sliced, stacked with a gathered row: d y / d x counts the uses.
  Output t = ops::Transpose(root, x, {1, 0});                                                         // [3,2]
  Output col = ops::StridedSlice(root, t, {0, 0}, {0, 1}, {1, 1}, {.begin_mask = 1, .end_mask = 1});  // [3,1]
  Output row = ops::Gather(root, x, {1, 1});                                                          // [2,3]
  Output y = ops::Concat(root, {ops::Reshape(root, col, {-1}), ops::Reshape(root, row, {-1})}, 0);
  std::vector<Output> g = Gradients(root, {y}, {x});
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_THAT(RunToStrings(root, {g[0]}, {{x, {{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}}}}),
              ::testing::ElementsAre("[[1 1 1] [2 2 2]]"));
}

TEST(ArrayOpsApiTest, BuildErrorsGoToTheScope) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Const(root, {{1, 2}, {3, 4}});
  std::vector<Output> parts = ops::Split(root, 0, x, 3);
  EXPECT_TRUE(parts.empty());
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("evenly divide"));

  Scope other = Scope::NewRootScope();
  EXPECT_FALSE(ops::DynamicStitch(other, {{0}}, {}).valid());
  EXPECT_THAT(std::string(other.status().message()), HasSubstr("1 index tensors but 0 data tensors"));

  // A permutation naming a dimension twice builds (TensorFlow's shape function checks only the
  // range) and fails the run, as in TensorFlow.
  Scope third = Scope::NewRootScope();
  Output t = ops::Transpose(third, ops::Const(third, {{1, 2}}), {0, 0});
  ASSERT_TRUE(third.ok()) << third.status();
  auto r = ClientSession(third).Run({t});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("1 is missing from {0,0}"));
}

}  // namespace
}  // namespace dflow
