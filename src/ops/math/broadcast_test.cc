#include "ops/math/broadcast.h"

#include <vector>

#include "gtest/gtest.h"

namespace dflow {
namespace {

TensorShape S(std::initializer_list<int64_t> d) { return TensorShape(d); }

// The x (or y) element that NumPy broadcasting pairs with output element `flat`.
int64_t SourceIndex(const TensorShape& in, const TensorShape& out, int64_t flat) {
  std::vector<int64_t> coord(out.dims());
  for (int i = out.dims() - 1; i >= 0; --i) {
    coord[i] = flat % out.dim_size(i);
    flat /= out.dim_size(i);
  }
  int64_t idx = 0;
  for (int i = 0; i < in.dims(); ++i) {
    const int64_t c = coord[out.dims() - in.dims() + i];
    idx = idx * in.dim_size(i) + (in.dim_size(i) == 1 ? 0 : c);
  }
  return idx;
}

TEST(BroadcastPlanTest, OutputShapes) {
  struct Case {
    TensorShape x, y, out;
  } cases[] = {
      {S({2, 3}), S({3}), S({2, 3})}, {S({2, 1}), S({1, 3}), S({2, 3})},          {S({}), S({2, 2}), S({2, 2})},
      {S({2, 2}), S({}), S({2, 2})},  {S({4, 1, 5}), S({1, 6, 1}), S({4, 6, 5})}, {S({0, 3}), S({3}), S({0, 3})},
      {S({1}), S({}), S({1})},        {S({5, 1, 1}), S({1, 1}), S({5, 1, 1})},    {S({1, 0}), S({7, 1}), S({7, 0})},
  };
  for (const Case& c : cases) {
    auto p = MakeBroadcastPlan(c.x, c.y);
    ASSERT_TRUE(p.ok()) << c.x.DebugString() << " " << c.y.DebugString() << ": " << p.status();
    EXPECT_EQ(p->output_shape, c.out) << c.x.DebugString() << " vs " << c.y.DebugString();
  }
}

TEST(BroadcastPlanTest, MergesDimensions) {
  auto p = MakeBroadcastPlan(S({2, 3, 4}), S({4}));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(std::vector<int64_t>(p->dims.begin(), p->dims.end()), (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(std::vector<int64_t>(p->x_strides.begin(), p->x_strides.end()), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(std::vector<int64_t>(p->y_strides.begin(), p->y_strides.end()), (std::vector<int64_t>{0, 1}));
  auto same = MakeBroadcastPlan(S({2, 3, 4}), S({2, 3, 4}));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->dims.size(), 1u);
  EXPECT_EQ(same->dims[0], 24);
}

TEST(BroadcastPlanTest, IncompatibleShapes) {
  auto p = MakeBroadcastPlan(S({2, 3}), S({2}));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("Incompatible shapes: [2,3] vs. [2]"), absl::string_view::npos) << p.status();
  EXPECT_FALSE(MakeBroadcastPlan(S({0}), S({3})).ok());
  EXPECT_FALSE(MakeBroadcastPlan(S({4, 3}), S({2, 3, 1})).ok());
}

TEST(BroadcastPlanTest, TooManyElements) {
  const int64_t big = int64_t{1} << 30;
  auto p = MakeBroadcastPlan(S({big, 1}), S({1, big}));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BroadcastLoopTest, MatchesNaiveIndexing) {
  const std::vector<std::pair<TensorShape, TensorShape>> cases = {
      {S({2, 3}), S({3})},
      {S({2, 1}), S({1, 3})},
      {S({}), S({2, 2})},
      {S({3, 1, 4}), S({2, 1})},
      {S({4, 1, 5}), S({1, 6, 1})},
      {S({2, 3, 4, 5}), S({3, 1, 5})},
      {S({1, 1, 3}), S({2, 1, 1})},
      {S({5}), S({5})},
      {S({2, 1, 2, 1, 2}), S({1, 2, 1, 2, 1})},
  };
  for (const auto& [xs, ys] : cases) {
    auto p = MakeBroadcastPlan(xs, ys);
    ASSERT_TRUE(p.ok());
    std::vector<int64_t> x(xs.num_elements()), y(ys.num_elements());
    for (size_t i = 0; i < x.size(); ++i) x[i] = 1000 * static_cast<int64_t>(i);
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int64_t>(i);
    std::vector<int64_t> out(p->output_shape.num_elements());
    BroadcastLoop(*p, x.data(), y.data(), out.data(), [](int64_t a, int64_t b) { return a + b; });
    for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
      const int64_t want = x[SourceIndex(xs, p->output_shape, i)] + y[SourceIndex(ys, p->output_shape, i)];
      ASSERT_EQ(out[i], want) << xs.DebugString() << " + " << ys.DebugString() << " at " << i;
    }
  }
}

}  // namespace
}  // namespace dflow
