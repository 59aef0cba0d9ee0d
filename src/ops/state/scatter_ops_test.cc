// ScatterUpdate, ScatterAdd, ScatterSub and CountUpTo on reference variables: values against a
// naive loop, duplicate indices, scalar updates, bad shapes and indices (the variable stays
// unchanged), copy on write, and CountUpTo's limit.
#include <algorithm>
#include <random>
#include <thread>

#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

// A [rows, cols] float variable initialized to `init`.
struct Fixture {
  Scope root = Scope::NewRootScope();
  Variable v;
  explicit Fixture(std::vector<float> init, int64_t rows, int64_t cols) {
    v = Variable::Create(root.WithOpName("v"), {rows, cols}, DT_FLOAT,
                         init::Constant(Tensor::FromValues<float>(init, {rows, cols}).value()));
  }
};

TEST(ScatterTest, ScatterUpdateAddSubMatchANaiveLoop) {
  const int64_t rows = 5, cols = 3;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> val(-4, 4);
  std::vector<float> init(rows * cols);
  for (float& x : init) x = val(rng);
  const std::vector<int32_t> idx = {4, 1, 4, 0};  // row 4 twice
  std::vector<float> upd(idx.size() * cols);
  for (float& x : upd) x = val(rng);

  for (const char* op : {"ScatterUpdate", "ScatterAdd", "ScatterSub"}) {
    Fixture f(init, rows, cols);
    Output indices = ops::Const(f.root, Tensor::FromValues<int32_t>(idx, {4}).value());
    Output updates = ops::Const(f.root, Tensor::FromValues<float>(upd, {4, cols}).value());
    Output out = Output(ops::BuildOp(f.root, op, {f.v.ref(), indices, updates}), 0);
    Output value = ops::Identity(f.root, out);
    ASSERT_TRUE(f.root.ok()) << f.root.status();
    ClientSession session(f.root);
    ASSERT_TRUE(session.Run({GlobalVariablesInitializer(f.root)}).ok());
    auto r = session.Run({value});
    ASSERT_TRUE(r.ok()) << op << ": " << r.status();
    std::vector<float> want = init;
    for (size_t i = 0; i < idx.size(); ++i) {
      for (int64_t k = 0; k < cols; ++k) {
        float& w = want[idx[i] * cols + k];
        const float u = upd[i * cols + k];
        if (std::string(op) == "ScatterUpdate") w = u;
        else if (std::string(op) == "ScatterAdd") w += u;
        else w -= u;
      }
    }
    for (int64_t i = 0; i < rows * cols; ++i) EXPECT_FLOAT_EQ((*r)[0].flat<float>()[i], want[i]) << op << " " << i;
  }
}

TEST(ScatterTest, IntegerTypesAndInt64Indices) {
  Scope root = Scope::NewRootScope();
  Variable v = Variable::Create(root.WithOpName("v"), {4}, DT_INT64,
                                init::Constant(Tensor::FromValues<int64_t>({1, 2, 3, 4}, {4}).value()));
  Output idx = ops::Const(root, Tensor::FromValues<int64_t>({3, 3, 0}, {3}).value());
  Output upd = ops::Const(root, Tensor::FromValues<int64_t>({10, 20, 100}, {3}).value());
  Output add = ops::ScatterAdd(root, v.ref(), idx, upd);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  auto r = session.Run({ops::Identity(root, add)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[101 2 3 34]");
}

TEST(ScatterTest, ScalarUpdateFillsTheRows) {
  Fixture f({1, 2, 3, 4, 5, 6}, 3, 2);
  Output s = ops::ScatterUpdate(f.root, f.v.ref(), {2, 0}, 9.0f);
  ClientSession session(f.root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(f.root)}).ok());
  auto r = session.Run({ops::Identity(f.root, s)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[[9 9] [3 4] [9 9]]");
}

TEST(ScatterTest, ScatterUpdateOfStrings) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VariableV2(root.WithOpName("names"), PartialTensorShape({3}), DT_STRING);
  Output init = ops::Assign(root, v, ops::Const(root, {"a", "b", "c"}));
  Output s = ops::ScatterUpdate(root, v, {1}, ops::Const(root, {"zz"}));
  ClientSession session(root);
  ASSERT_TRUE(session.Run({}, {}, {init.op()}).ok());
  auto r = session.Run({ops::Identity(root, s)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].flat<std::string>()[1], "zz");
  EXPECT_EQ((*r)[0].flat<std::string>()[2], "c");
}

TEST(ScatterTest, OutOfRangeIndexIsInvalidArgumentAndChangesNothing) {
  Fixture f({1, 2, 3, 4}, 2, 2);
  Output idx = ops::Placeholder(f.root, DT_INT32);
  Output upd = ops::Placeholder(f.root, DT_FLOAT);
  Output s = ops::ScatterAdd(f.root, f.v.ref(), idx, upd);
  ClientSession session(f.root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(f.root)}).ok());
  // Index 0 is valid and comes first: nothing may be written before the bad one is found.
  auto r = session.Run({{idx, {0, 2}}, {upd, {{1.0f, 1.0f}, {1.0f, 1.0f}}}}, {}, {s.op()});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("indices[1] = 2 is not in [0, 2)"));
  r = session.Run({{idx, {-1}}, {upd, {{1.0f, 1.0f}}}}, {}, {s.op()});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("indices[0] = -1"));
  auto v = session.Run({f.v.read()});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ((*v)[0].ToString(), "[[1 2] [3 4]]");
}

TEST(ScatterTest, BadUpdateShapesAreInvalidArgument) {
  Fixture f({1, 2, 3, 4}, 2, 2);
  Output idx = ops::Placeholder(f.root, DT_INT32);
  Output upd = ops::Placeholder(f.root, DT_FLOAT);
  Output s = ops::ScatterUpdate(f.root, f.v.ref(), idx, upd);
  ClientSession session(f.root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(f.root)}).ok());
  // Two indices but one row of updates; a row of the wrong width; an extra dimension.
  for (const Tensor& u : {Tensor::FromValues<float>({1, 2}, {1, 2}).value(),
                          Tensor::FromValues<float>({1, 2, 3, 4, 5, 6}, {2, 3}).value(),
                          Tensor::FromValues<float>({1, 2, 3, 4}, {2, 2, 1}).value()}) {
    auto r = session.Run({{idx, {0, 1}}, {upd, u}}, {}, {s.op()});
    ASSERT_FALSE(r.ok()) << u.shape().DebugString();
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr(u.shape().DebugString()));
  }
  // Static shapes are checked while building.
  Scope root = Scope::NewRootScope();
  Output v = ops::VariableV2(root, PartialTensorShape({3, 2}), DT_FLOAT);
  ops::ScatterUpdate(root, v, {0, 1}, ops::Const(root, {{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}}));
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ScatterTest, ScalarVariableAndUninitializedVariableAreRejected) {
  Scope root = Scope::NewRootScope();
  Output v = ops::VariableV2(root.WithOpName("u"), PartialTensorShape({2}), DT_FLOAT);
  Output s = ops::ScatterUpdate(root, v, {0}, {1.0f});
  ClientSession session(root);
  auto r = session.Run({}, {}, {s.op()});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("uninitialized value u"));

  Scope root2 = Scope::NewRootScope();
  Output sv = ops::VariableV2(root2, PartialTensorShape({}), DT_FLOAT);
  ops::ScatterUpdate(root2, sv, {0}, 1.0f);
  EXPECT_EQ(root2.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ScatterTest, EmptyIndicesChangeNothing) {
  Fixture f({1, 2, 3, 4}, 2, 2);
  Output idx = ops::Placeholder(f.root, DT_INT32);
  Output upd = ops::Placeholder(f.root, DT_FLOAT);
  Output s = ops::ScatterAdd(f.root, f.v.ref(), idx, upd);
  ClientSession session(f.root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(f.root)}).ok());
  auto r = session.Run({{idx, Tensor(DT_INT32, {0})}, {upd, Tensor(DT_FLOAT, {0, 2})}}, {ops::Identity(f.root, s)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[[1 2] [3 4]]");
}

TEST(ScatterTest, ReadersKeepTheirSnapshot) {
  Fixture f({1, 2, 3, 4}, 2, 2);
  Output s = ops::ScatterAdd(f.root, f.v.ref(), {1}, {{10.0f, 10.0f}});
  ClientSession session(f.root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(f.root)}).ok());
  auto before = session.Run({f.v.read()});
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(session.Run({}, {}, {s.op()}).ok());
  auto after = session.Run({f.v.read()});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*before)[0].ToString(), "[[1 2] [3 4]]");
  EXPECT_EQ((*after)[0].ToString(), "[[1 2] [13 14]]");
}

TEST(ScatterTest, ConcurrentScatterAddsAccumulate) {
  Scope root = Scope::NewRootScope();
  Variable v = Variable::Create(root.WithOpName("v"), {3}, DT_INT32, init::Zeros());
  Output s = ops::ScatterAdd(root, v.ref(), {0, 2, 2}, {1, 1, 1}, /*use_locking=*/true);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) ASSERT_TRUE(session.Run({}, {}, {s.op()}).ok());
    });
  }
  for (auto& t : threads) t.join();
  auto r = session.Run({v.read()});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].ToString(), "[400 0 800]");
}

// ---- CountUpTo ----

TEST(CountUpToTest, CountsThenStopsAtTheLimit) {
  for (DType t : {DT_INT32, DT_INT64}) {
    Scope root = Scope::NewRootScope();
    Variable v = Variable::Create(root.WithOpName("counter"), {}, t, init::Zeros());
    Output c = ops::CountUpTo(root, v.ref(), 3);
    ClientSession session(root);
    ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
    for (int i = 0; i < 3; ++i) {
      auto r = session.Run({c});
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ((*r)[0].dtype(), t);
      EXPECT_EQ((*r)[0].ToString(), std::to_string(i));
    }
    auto r = session.Run({c});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
    EXPECT_THAT(r.status().message(), HasSubstr("Reached limit of 3"));
    auto value = session.Run({v.read()});
    ASSERT_TRUE(value.ok());
    EXPECT_EQ((*value)[0].ToString(), "3");
  }
}

TEST(CountUpToTest, ConcurrentCallsHandOutEachValueOnce) {
  Scope root = Scope::NewRootScope();
  Variable v = Variable::Create(root.WithOpName("counter"), {}, DT_INT64, init::Zeros());
  Output c = ops::CountUpTo(root, v.ref(), 200);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  std::vector<std::vector<int64_t>> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (;;) {
        auto r = session.Run({c});
        if (!r.ok()) {
          EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange);
          return;
        }
        got[t].push_back((*r)[0].scalar<int64_t>());
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<int64_t> all;
  for (auto& g : got) all.insert(all.end(), g.begin(), g.end());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), 200u);
  for (int64_t i = 0; i < 200; ++i) EXPECT_EQ(all[i], i);
}

TEST(CountUpToTest, BadInputs) {
  // Not a scalar (caught while building), float type (no such kernel or attr), uninitialized.
  Scope root = Scope::NewRootScope();
  Output vec = ops::VariableV2(root, PartialTensorShape({2}), DT_INT32);
  ops::CountUpTo(root, vec, 5);
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);

  Scope root2 = Scope::NewRootScope();
  Output f = ops::VariableV2(root2, PartialTensorShape({}), DT_FLOAT);
  ops::CountUpTo(root2, f, 5);
  EXPECT_EQ(root2.status().code(), absl::StatusCode::kInvalidArgument);

  Scope root3 = Scope::NewRootScope();
  Output u = ops::VariableV2(root3.WithOpName("never_set"), PartialTensorShape({}), DT_INT32);
  Output c = ops::CountUpTo(root3, u, 5);
  auto r = ClientSession(root3).Run({c});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace dflow
