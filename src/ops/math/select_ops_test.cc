// Select (TensorFlow 1: element-wise, scalar or row-vector condition) and SelectV2
// (broadcasting): values against naive loops, every dtype family, static shapes, bad inputs.
#include <string>

#include "gtest/gtest.h"
#include "ops/math/cwise_test_util.h"
#include "ops/math/kernel_runner_test_util.h"
#include "ops/testing/kernel_test_util.h"

namespace dflow {
namespace {

using testing::ExpectValues;
using testing::InferShapes;
using testing::KernelRunner;
using testing::MakeTensor;
using testing::RunOpKernel;

TensorShape S(std::initializer_list<int64_t> d) { return TensorShape(d); }

Tensor Eval(const std::string& op, const std::vector<Tensor>& in) {
  auto out = RunOpKernel(op, in);
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

Tensor B(std::vector<bool> v, TensorShape s) { return MakeTensor<bool>(v, s); }

TEST(SelectTest, ElementWiseScalarAndRows) {
  Tensor t = MakeTensor<float>({1, 2, 3, 4, 5, 6}, S({2, 3}));
  Tensor e = MakeTensor<float>({-1, -2, -3, -4, -5, -6}, S({2, 3}));
  ExpectValues<float>(Eval("Select", {B({true, false, true, false, false, true}, S({2, 3})), t, e}),
                      {1, -2, 3, -4, -5, 6}, S({2, 3}));
  ExpectValues<float>(Eval("Select", {B({false, true}, S({2})), t, e}), {-1, -2, -3, 4, 5, 6}, S({2, 3}));
  ExpectValues<float>(Eval("Select", {Tensor(true), t, e}), {1, 2, 3, 4, 5, 6}, S({2, 3}));
  ExpectValues<float>(Eval("Select", {Tensor(false), t, e}), {-1, -2, -3, -4, -5, -6}, S({2, 3}));
  // A rank-1 t with a rank-1 condition is element-wise.
  ExpectValues<int32_t>(Eval("Select", {B({true, false}, S({2})), MakeTensor<int32_t>({1, 2}, S({2})),
                                        MakeTensor<int32_t>({3, 4}, S({2}))}),
                        {1, 4}, S({2}));
  // Rows of a rank-3 tensor.
  std::vector<int64_t> tv(12), ev(12), want(12);
  for (int i = 0; i < 12; ++i) {
    tv[i] = i;
    ev[i] = 100 + i;
    want[i] = (i / 4 == 1) ? tv[i] : ev[i];
  }
  ExpectValues<int64_t>(Eval("Select", {B({false, true, false}, S({3})), MakeTensor<int64_t>(tv, S({3, 2, 2})),
                                        MakeTensor<int64_t>(ev, S({3, 2, 2}))}),
                        want, S({3, 2, 2}));
  ExpectValues<std::string>(Eval("Select", {B({true, false}, S({2})), MakeTensor<std::string>({"a", "b"}, S({2})),
                                            MakeTensor<std::string>({"x", "y"}, S({2}))}),
                            {"a", "y"}, S({2}));
  ExpectValues<double>(Eval("Select", {B({}, S({0})), Tensor(DT_DOUBLE, S({0, 2})), Tensor(DT_DOUBLE, S({0, 2}))}), {},
                       S({0, 2}));
}

TEST(SelectTest, BadInputs) {
  auto r = KernelRunner::Create("Select", {DT_BOOL, DT_FLOAT, DT_FLOAT});
  ASSERT_TRUE(r.ok()) << r.status();
  Tensor t(DT_FLOAT, S({2, 3}));
  // then/else of different shapes
  auto out = (*r)->Run({B({true, true}, S({2})), t, Tensor(DT_FLOAT, S({3, 2}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("[2,3] vs. [3,2]"), absl::string_view::npos) << out.status();
  // a row vector of the wrong length, a condition of another shape
  out = (*r)->Run({B({true, true, false}, S({3})), t, t});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("node"), absl::string_view::npos) << out.status();
  out = (*r)->Run({B({true, true, false, true, true, false}, S({3, 2})), t, t});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  out = (*r)->Run({B({true, true, false, true, true, false}, S({6})), Tensor(DT_FLOAT, S({3})),
                   Tensor(DT_FLOAT, S({3}))});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  // Caught while building when the shapes are known.
  EXPECT_FALSE(InferShapes("Select", {B({true, true, false}, S({3})), t, t}).ok());
  EXPECT_FALSE(InferShapes("Select", {B({true}, S({1})), t, Tensor(DT_FLOAT, S({2, 2}))}).ok());
  EXPECT_FALSE(
      InferShapes("Select", {Tensor(DT_FLOAT, S({2})), Tensor(DT_FLOAT, S({2})), Tensor(DT_FLOAT, S({2}))}).ok());
  auto shapes = InferShapes("Select", {B({true, false}, S({2})), t, t});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialTensorShape({2, 3}));
}

// Naive SelectV2: unravels each output index into the three inputs.
template <typename T>
std::vector<T> NaiveSelectV2(const std::vector<bool>& c, const TensorShape& cs, const std::vector<T>& t,
                             const TensorShape& ts, const std::vector<T>& e, const TensorShape& es,
                             const TensorShape& out) {
  auto source = [&out](const TensorShape& in, int64_t flat) {
    std::vector<int64_t> coord(out.dims());
    for (int i = out.dims() - 1; i >= 0; --i) {
      coord[i] = flat % out.dim_size(i);
      flat /= out.dim_size(i);
    }
    int64_t idx = 0;
    for (int i = 0; i < in.dims(); ++i) {
      const int64_t cc = coord[out.dims() - in.dims() + i];
      idx = idx * in.dim_size(i) + (in.dim_size(i) == 1 ? 0 : cc);
    }
    return idx;
  };
  std::vector<T> r(out.num_elements());
  for (int64_t i = 0; i < out.num_elements(); ++i) r[i] = c[source(cs, i)] ? t[source(ts, i)] : e[source(es, i)];
  return r;
}

TEST(SelectV2Test, MatchesNaiveBroadcast) {
  struct Case {
    TensorShape c, t, e, out;
  };
  const std::vector<Case> cases = {{S({2, 3}), S({2, 3}), S({2, 3}), S({2, 3})},
                                   {S({}), S({2, 3}), S({3}), S({2, 3})},
                                   {S({2, 1}), S({1, 3}), S({}), S({2, 3})},
                                   {S({3}), S({2, 1}), S({2, 3}), S({2, 3})},
                                   {S({4, 1, 1}), S({1, 2, 1}), S({1, 1, 3}), S({4, 2, 3})},
                                   {S({0, 1}), S({1, 3}), S({3}), S({0, 3})},
                                   {S({}), S({}), S({}), S({})},
                                   {S({2, 1, 3}), S({5, 1}), S({1}), S({2, 5, 3})}};
  for (const Case& k : cases) {
    SCOPED_TRACE(k.c.DebugString() + k.t.DebugString() + k.e.DebugString());
    std::vector<bool> c(k.c.num_elements());
    std::vector<double> t(k.t.num_elements()), e(k.e.num_elements());
    for (size_t i = 0; i < c.size(); ++i) c[i] = (i * 7 + 3) % 5 < 2;
    for (size_t i = 0; i < t.size(); ++i) t[i] = 1 + i;
    for (size_t i = 0; i < e.size(); ++i) e[i] = -1.0 - i;
    ExpectValues<double>(Eval("SelectV2", {B(c, k.c), MakeTensor<double>(t, k.t), MakeTensor<double>(e, k.e)}),
                         NaiveSelectV2<double>(c, k.c, t, k.t, e, k.e, k.out), k.out);
    auto shapes = InferShapes("SelectV2", {B(c, k.c), MakeTensor<double>(t, k.t), MakeTensor<double>(e, k.e)});
    ASSERT_TRUE(shapes.ok()) << shapes.status();
    EXPECT_EQ((*shapes)[0], PartialTensorShape(k.out));
  }
}

TEST(SelectV2Test, TypesAndBadInputs) {
  ExpectValues<bool>(Eval("SelectV2", {B({true, false}, S({2})), Tensor(true), Tensor(false)}), {true, false}, S({2}));
  ExpectValues<uint8_t>(Eval("SelectV2",
                             {B({false}, S({1})), MakeTensor<uint8_t>({1, 2}, S({2})), Tensor(DT_UINT8, S({}))}),
                        {0, 0}, S({2}));
  auto r = KernelRunner::Create("SelectV2", {DT_BOOL, DT_INT32, DT_INT32});
  ASSERT_TRUE(r.ok());
  auto out = (*r)->Run({B({true, false, true}, S({3})), Tensor(DT_INT32, S({2})), Tensor(DT_INT32, S({}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("do not broadcast"), absl::string_view::npos) << out.status();
  out = (*r)->Run({B({true}, S({})), Tensor(DT_INT32, S({2})), Tensor(DT_INT32, S({3}))});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(
      InferShapes("SelectV2", {B({true, false}, S({2})), Tensor(DT_INT32, S({3})), Tensor(DT_INT32, S({}))}).ok());
  EXPECT_FALSE(InferShapes("SelectV2", {Tensor(1), Tensor(DT_INT32, S({3})), Tensor(DT_INT32, S({}))}).ok());
}

TEST(AddNTest, SumsAndChecksShapes) {
  Tensor a = MakeTensor<float>({1, 2, 3, 4}, S({2, 2}));
  Tensor b = MakeTensor<float>({10, 20, 30, 40}, S({2, 2}));
  Tensor c = MakeTensor<float>({100, 200, 300, 400}, S({2, 2}));
  ExpectValues<float>(Eval("AddN", {a}), {1, 2, 3, 4}, S({2, 2}));
  ExpectValues<float>(Eval("AddN", {a, b}), {11, 22, 33, 44}, S({2, 2}));
  ExpectValues<float>(Eval("AddN", {a, b, c, a}), {112, 224, 336, 448}, S({2, 2}));
  ExpectValues<int32_t>(Eval("AddN", {MakeTensor<int32_t>({2147483647}, S({})), Tensor(1), Tensor(1)}), {-2147483647},
                        S({}));
  ExpectValues<int64_t>(Eval("AddN", {Tensor(DT_INT64, S({0, 3})), Tensor(DT_INT64, S({0, 3}))}), {}, S({0, 3}));
  auto shapes = InferShapes("AddN", {a, b, c});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ((*shapes)[0], PartialTensorShape({2, 2}));
  EXPECT_FALSE(InferShapes("AddN", {a, MakeTensor<float>({1, 2}, S({2}))}).ok());  // no broadcasting
  EXPECT_FALSE(InferShapes("AddN", {a, Tensor(DT_DOUBLE, S({2, 2}))}).ok());
  EXPECT_FALSE(InferShapes("AddN", {}).ok());  // N >= 1
  auto r = KernelRunner::Create("AddN", {DT_DOUBLE, DT_DOUBLE, DT_DOUBLE});
  ASSERT_TRUE(r.ok()) << r.status();
  auto out = (*r)->Run({Tensor(DT_DOUBLE, S({2})), Tensor(DT_DOUBLE, S({2})), Tensor(DT_DOUBLE, S({1}))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("input 2 is [1]"), absl::string_view::npos) << out.status();
}

}  // namespace
}  // namespace dflow
