// Cond and WhileLoop end to end: values, deadness of untaken branches, loop frames, nesting,
// invariants, gradients through a conditional, and loops that travel as GraphDefs.
#include "dflow/control_flow.h"

#include "dflow/dflow.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "graph/graph_def.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "proto/graph.pb.h"

namespace dflow {
namespace {

using V = std::vector<Output>;

int32_t RunInt(const Scope& root, const Output& out, const ClientSession::FeedDict& feeds = {}) {
  EXPECT_TRUE(root.ok()) << root.status();
  auto r = ClientSession(root).Run(feeds, {out});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? (*r)[0].scalar<int32_t>() : -999999;
}

TEST(CondTest, RunsTheTakenBranchOnly) {
  Scope root = Scope::NewRootScope();
  Output p = ops::Placeholder(root, DT_BOOL);
  Output x = ops::Const(root, 7);
  V r = Cond(
      root, p, {x}, [](const Scope& s, const V& in) { return V{ops::Mul(s, in[0], 2)}; },
      // Dividing by zero would fail the step if this branch ran when p is true.
      [](const Scope& s, const V& in) { return V{ops::Div(s, in[0], 0)}; });
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(RunInt(root, r[0], {{p, true}}), 14);
  auto bad = ClientSession(root).Run({{p, false}}, {r[0]});
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("division by zero"));
}

TEST(CondTest, BranchesMayUseOuterTensorsAndConstants) {
  Scope root = Scope::NewRootScope();
  Output p = ops::Placeholder(root, DT_BOOL);
  Output y = ops::Const(root, 100);
  V r = Cond(
      root, p, {}, [&](const Scope& s, const V&) { return V{ops::Add(s, y, 1)}; },
      [&](const Scope& s, const V&) { return V{ops::Const(s, 5)}; });
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(RunInt(root, r[0], {{p, true}}), 101);
  EXPECT_EQ(RunInt(root, r[0], {{p, false}}), 5);
}

// Constants a step binds into their consumers' slots up front are only those without control
// inputs: a branch's constants depend on its pivot, so a branch made of constants alone is dead
// when not taken, and the Merge sees one live value.
TEST(CondTest, BranchesOfConstantsOnlyRunWhenTaken) {
  Scope root = Scope::NewRootScope();
  Output p = ops::Placeholder(root, DT_BOOL);
  V r = Cond(
      root, p, {}, [](const Scope& s, const V&) { return V{ops::Add(s, ops::Const(s, 10), ops::Const(s, 1))}; },
      [](const Scope& s, const V&) { return V{ops::Mul(s, ops::Const(s, 3), ops::Const(s, 4))}; });
  ASSERT_EQ(r.size(), 1u);
  ClientSession session(root);
  for (int step = 0; step < 10; ++step) {
    const bool taken = step % 2 == 0;
    auto out = session.Run({{p, taken}}, {r[0]});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].scalar<int32_t>(), taken ? 11 : 12) << "step " << step;
  }
}

TEST(CondTest, MismatchedBranchesAreABuildError) {
  Scope root = Scope::NewRootScope();
  Output p = ops::Const(root, true);
  V r = Cond(
      root, p, {},
      [](const Scope& s, const V&) {
        return V{ops::Const(s, 1), ops::Const(s, 2)};
      },
      [](const Scope& s, const V&) { return V{ops::Const(s, 3)}; });
  EXPECT_TRUE(r.empty());
  EXPECT_FALSE(root.ok());
}

TEST(WhileLoopTest, SumsOneToTen) {
  Scope root = Scope::NewRootScope();
  V out = WhileLoop(
      root, {ops::Const(root, 1), ops::Const(root, 0)},
      [](const Scope& s, const V& v) { return ops::Less(s, v[0], 11); },
      [](const Scope& s, const V& v) {
        return V{ops::Add(s, v[0], 1), ops::Add(s, v[1], v[0])};
      });
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(RunInt(root, out[1]), 55);
  EXPECT_EQ(RunInt(root, out[0]), 11);
}

// A session's steps reuse the step state of the steps before (the root frame's pending counts
// and input slots): taken and untaken branches, loops of different lengths and failed steps in
// any order leave nothing behind that changes the next step's values.
TEST(WhileLoopTest, StepsAfterOtherStepsAndFailuresGiveTheSameValues) {
  Scope root = Scope::NewRootScope();
  Output p = ops::Placeholder(root, DT_BOOL);
  Output n = ops::Placeholder(root, DT_INT32);
  Output d = ops::Placeholder(root, DT_INT32);
  Output x = ops::Const(root, 6);
  V r = Cond(
      root, p, {x}, [](const Scope& s, const V& in) { return V{ops::Mul(s, in[0], 2)}; },
      [&](const Scope& s, const V& in) { return V{ops::Div(s, in[0], d)}; });
  V loop = WhileLoop(
      root, {ops::Const(root, 0), ops::Const(root, 0)},
      [&](const Scope& s, const V& v) { return ops::Less(s, v[0], n); },
      [](const Scope& s, const V& v) {
        return V{ops::Add(s, v[0], 1), ops::Add(s, v[1], v[0])};
      });
  Output total = ops::Add(root, r[0], loop[1]);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  for (int step = 0; step < 40; ++step) {
    const bool taken = step % 3 != 0;
    const int32_t iterations = step % 7;
    // Every fifth step divides by zero in the untaken-when-true branch: the step fails midway.
    const int32_t divisor = step % 5 == 0 ? 0 : 2;
    auto out = session.Run({{p, taken}, {n, iterations}, {d, divisor}}, {total});
    const int32_t loop_sum = iterations * (iterations - 1) / 2;
    if (!taken && divisor == 0) {
      EXPECT_FALSE(out.ok()) << "step " << step;
      continue;
    }
    ASSERT_TRUE(out.ok()) << "step " << step << ": " << out.status();
    EXPECT_EQ((*out)[0].scalar<int32_t>(), (taken ? 12 : 3) + loop_sum) << "step " << step;
  }
}

TEST(WhileLoopTest, ZeroIterationsReturnTheInitialValues) {
  Scope root = Scope::NewRootScope();
  V out = WhileLoop(
      root, {ops::Const(root, 42)}, [](const Scope& s, const V& v) { return ops::Less(s, v[0], 0); },
      [](const Scope& s, const V& v) { return V{ops::Add(s, v[0], 1)}; });
  EXPECT_EQ(RunInt(root, out[0]), 42);
}

TEST(WhileLoopTest, OuterTensorsEnterAsInvariants) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_INT32);
  V out = WhileLoop(
      root, {ops::Const(root, 0), ops::Const(root, 0)},
      [](const Scope& s, const V& v) { return ops::Less(s, v[0], 5); },
      [&](const Scope& s, const V& v) {
        return V{ops::Add(s, v[0], 1), ops::Add(s, v[1], x)};
      });
  EXPECT_EQ(RunInt(root, out[1], {{x, 7}}), 35);
  EXPECT_EQ(RunInt(root, out[1], {{x, -2}}), -10);
}

TEST(WhileLoopTest, NestedLoops) {
  // sum over i in 1..4 of (sum over j in 1..i of j) = 1 + 3 + 6 + 10 = 20
  Scope root = Scope::NewRootScope();
  V out = WhileLoop(
      root, {ops::Const(root, 1), ops::Const(root, 0)},
      [](const Scope& s, const V& v) { return ops::Less(s, v[0], 5); },
      [](const Scope& s, const V& v) {
        V inner = WhileLoop(
            s, {ops::Const(s, 1), ops::Const(s, 0)},
            [&](const Scope& t, const V& w) { return ops::Less(t, w[0], ops::Add(t, v[0], 1)); },
            [](const Scope& t, const V& w) {
              return V{ops::Add(t, w[0], 1), ops::Add(t, w[1], w[0])};
            },
            "inner");
        return V{ops::Add(s, v[0], 1), ops::Add(s, v[1], inner[1])};
      });
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(RunInt(root, out[1]), 20);
}

TEST(WhileLoopTest, CondInsideALoop) {
  // Count the even numbers in 0..9 with a Cond per iteration.
  Scope root = Scope::NewRootScope();
  V out = WhileLoop(
      root, {ops::Const(root, 0), ops::Const(root, 0)},
      [](const Scope& s, const V& v) { return ops::Less(s, v[0], 10); },
      [](const Scope& s, const V& v) {
        Output half = ops::Div(s, v[0], 2);
        Output even = ops::Equal(s, ops::Mul(s, half, 2), v[0]);
        V c = Cond(
            s, even, {v[1]}, [](const Scope& t, const V& in) { return V{ops::Add(t, in[0], 1)}; },
            [](const Scope& t, const V& in) { return V{ops::Identity(t, in[0])}; });
        return V{ops::Add(s, v[0], 1), c[0]};
      });
  EXPECT_EQ(RunInt(root, out[1]), 5);
}

TEST(WhileLoopTest, ALoopInAnUntakenBranchIsDeadAsAWhole) {
  Scope root = Scope::NewRootScope();
  Output p = ops::Placeholder(root, DT_BOOL);
  V r = Cond(
      root, p, {},
      [](const Scope& s, const V&) {
        return V{WhileLoop(
            s, {ops::Const(s, 0)}, [](const Scope& t, const V& v) { return ops::Less(t, v[0], 3); },
            [](const Scope& t, const V& v) { return V{ops::Add(t, v[0], 1)}; })[0]};
      },
      [](const Scope& s, const V&) { return V{ops::Const(s, -1)}; });
  EXPECT_EQ(RunInt(root, r[0], {{p, true}}), 3);
  EXPECT_EQ(RunInt(root, r[0], {{p, false}}), -1);
}

TEST(WhileLoopTest, ManyIterations) {
  Scope root = Scope::NewRootScope();
  V out = WhileLoop(
      root, {ops::Const(root, 0)}, [](const Scope& s, const V& v) { return ops::Less(s, v[0], 5000); },
      [](const Scope& s, const V& v) { return V{ops::Add(s, v[0], 1)}; });
  EXPECT_EQ(RunInt(root, out[0]), 5000);
}

TEST(WhileLoopTest, LoopsTravelAsGraphDefs) {
  Scope root = Scope::NewRootScope();
  V out = WhileLoop(
      root, {ops::Const(root, 1), ops::Const(root, 0)},
      [](const Scope& s, const V& v) { return ops::Less(s, v[0], 11); },
      [](const Scope& s, const V& v) {
        return V{ops::Add(s, v[0], 1), ops::Add(s, v[1], v[0])};
      });
  ASSERT_TRUE(root.ok()) << root.status();
  proto::GraphDef def;
  ExportGraphDef(*root.graph(), &def);
  std::string bytes;
  ASSERT_TRUE(def.SerializeToString(&bytes));
  proto::GraphDef parsed;
  ASSERT_TRUE(ParseGraphDef(bytes, &parsed).ok());
  auto session = NewSession(SessionOptions());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Create(parsed).ok());
  std::vector<Tensor> result;
  Status s = (*session)->Run({}, {out[1].name()}, {}, &result);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(result[0].scalar<int32_t>(), 55);
}

TEST(CondTest, GradientFlowsThroughTheTakenBranch) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_FLOAT);
  Output p = ops::Greater(root, x, 0.0f);
  V r = Cond(
      root, p, {x}, [](const Scope& s, const V& in) { return V{ops::Mul(s, in[0], in[0])}; },
      [](const Scope& s, const V& in) { return V{ops::Neg(s, in[0])}; });
  ASSERT_EQ(r.size(), 1u);
  V g = Gradients(root, {r[0]}, {x});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  auto a = session.Run({{x, 3.0f}}, {r[0], g[0]});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)[0].scalar<float>(), 9.0f);
  EXPECT_EQ((*a)[1].scalar<float>(), 6.0f);
  auto b = session.Run({{x, -2.0f}}, {r[0], g[0]});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)[0].scalar<float>(), 2.0f);
  EXPECT_EQ((*b)[1].scalar<float>(), -1.0f);
}

}  // namespace
}  // namespace dflow
