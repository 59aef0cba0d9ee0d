// Numerical gradient checks of every differentiable element-wise op, Cast, Select, SelectV2 and
// AddN — through broadcasting, with static shapes and with shapes known only while running —
// and the ops whose gradient is declared absent.
#include <string>

#include "dflow/dflow.h"
#include "graph/gradients.h"
#include "gtest/gtest.h"
#include "ops/math/grad_test_util.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

using testing::ExpectGradientMatches;
using testing::HideShapes;
using testing::OneOp;
using testing::Spread;
using testing::Uniform;

TensorShape S(std::initializer_list<int64_t> d) { return TensorShape(d); }

const std::vector<std::pair<TensorShape, TensorShape>>& ShapePairs() {
  static const auto* pairs = new std::vector<std::pair<TensorShape, TensorShape>>{
      {S({2, 3}), S({2, 3})}, {S({2, 3}), S({3})}, {S({2, 1}), S({1, 3})}, {S({}), S({2, 2})},
      {S({3, 1, 2}), S({2})}, {S({1}), S({2, 3})}, {S({2, 2}), S({})}};
  return *pairs;
}

// Inputs on which `op` is smooth: positive bases for Pow, divisors away from 0, operands of
// Maximum/Minimum apart, FloorMod quotients away from integers.
std::pair<Tensor, Tensor> InputsFor(const std::string& op, const TensorShape& xs, const TensorShape& ys) {
  if (op == "Pow") return {Uniform(xs, 0.5, 2.0, 1), Uniform(ys, -1.5, 2.0, 2)};
  if (op == "Div" || op == "RealDiv") return {Uniform(xs, -2, 2, 3), Uniform(ys, 0.5, 2.0, 4)};
  if (op == "Maximum" || op == "Minimum") {
    Tensor x = Spread(xs, -2, 2, 5);
    return {x, Spread(ys, -2, 2, 6, &x)};
  }
  if (op == "FloorMod") {
    // x / y in (2.09, 2.8): away from the integers where FloorMod jumps, and floor(x / y) = 2.
    return {Uniform(xs, 2.2, 2.8, 8), Uniform(ys, 1.0, 1.05, 7)};
  }
  return {Uniform(xs, -2, 2, 9), Uniform(ys, -2, 2, 10)};
}

TEST(ElementwiseGradTest, BinaryOpsThroughBroadcasting) {
  for (const char* op :
       {"Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "Pow", "Maximum", "Minimum", "SquaredDifference", "FloorMod"}) {
    for (const auto& [xs, ys] : ShapePairs()) {
      SCOPED_TRACE(std::string(op) + " " + xs.DebugString() + " " + ys.DebugString());
      auto [x, y] = InputsFor(op, xs, ys);
      ExpectGradientMatches({x, y}, OneOp(op), 1e-6);
    }
  }
}

TEST(ElementwiseGradTest, BinaryOpsWithShapesKnownOnlyWhileRunning) {
  for (const char* op : {"Add", "Sub", "Mul", "RealDiv", "Maximum", "SquaredDifference", "Pow"}) {
    for (bool keep_rank : {false, true}) {
      for (const auto& [xs, ys] : ShapePairs()) {
        SCOPED_TRACE(std::string(op) + " " + xs.DebugString() + " " + ys.DebugString() + (keep_rank ? " rank" : ""));
        auto [x, y] = InputsFor(op, xs, ys);
        ExpectGradientMatches({x, y}, [op, keep_rank](GraphBuilder* b, const std::vector<NodeOut>& in) {
          return std::vector<NodeOut>{b->Op(op, HideShapes(b, in, keep_rank))};
        });
      }
    }
  }
}

TEST(ElementwiseGradTest, FloatInputsWithLooserTolerance) {
  for (const char* op : {"Mul", "RealDiv", "SquaredDifference"}) {
    SCOPED_TRACE(op);
    ExpectGradientMatches({Uniform<float>(S({2, 3}), 0.5, 2, 1), Uniform<float>(S({3}), 0.5, 2, 2)}, OneOp(op), 5e-3,
                          1e-2);
  }
  ExpectGradientMatches({Uniform<float>(S({2, 2}), -1, 1, 3)}, OneOp("Tanh"), 5e-3, 1e-2);
}

TEST(ElementwiseGradTest, UnaryOps) {
  struct Case {
    const char* op;
    double lo, hi;
  };
  for (const Case& c : std::vector<Case>{{"Neg", -2, 2},
                                         {"Exp", -2, 2},
                                         {"Log", 0.5, 3},
                                         {"Abs", 0.2, 2},
                                         {"Abs", -2, -0.2},
                                         {"Square", -2, 2},
                                         {"Sqrt", 0.5, 3},
                                         {"Rsqrt", 0.5, 3},
                                         {"Reciprocal", 0.5, 3},
                                         {"Reciprocal", -3, -0.5},
                                         {"Log1p", -0.5, 3},
                                         {"Tanh", -2, 2},
                                         {"Sigmoid", -3, 3}}) {
    SCOPED_TRACE(c.op);
    ExpectGradientMatches({Uniform(S({2, 3}), c.lo, c.hi, 11)}, OneOp(c.op), 1e-6);
    ExpectGradientMatches({Uniform(S({}), c.lo, c.hi, 12)}, OneOp(c.op), 1e-6);
  }
}

TEST(ElementwiseGradTest, CastBetweenFloatingTypes) {
  ExpectGradientMatches({Uniform(S({2, 3}), -2, 2)}, OneOp("Cast", {{"DstT", DT_FLOAT}}), 1e-4, 1e-3);
  ExpectGradientMatches(
      {Uniform<float>(S({4}), -2, 2)},
      [](GraphBuilder* b, const std::vector<NodeOut>& x) {
        NodeOut d = b->Op("Cast", x, {{"DstT", DT_DOUBLE}});
        return std::vector<NodeOut>{b->Op("Mul", {d, d})};
      },
      5e-3, 1e-2);
  // Through an integer cast the gradient stops (it is zero, not an error).
  ExpectGradientMatches({Uniform(S({3}), 0.2, 0.8)}, [](GraphBuilder* b, const std::vector<NodeOut>& x) {
    NodeOut i = b->Op("Cast", x, {{"DstT", DT_INT32}});
    return std::vector<NodeOut>{b->Op("Add", {b->Op("Cast", {i}, {{"DstT", DT_DOUBLE}}), x[0]})};
  });
}

TEST(ElementwiseGradTest, SelectRoutesByCondition) {
  auto cond = [](GraphBuilder* b, std::vector<bool> v, TensorShape s) {
    Tensor t(DT_BOOL, s);
    for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i];
    return b->Const(t);
  };
  // Element-wise and row-vector conditions.
  ExpectGradientMatches({Uniform(S({2, 3}), -1, 1, 1), Uniform(S({2, 3}), -1, 1, 2)},
                        [&](GraphBuilder* b, const std::vector<NodeOut>& x) {
                          NodeOut c = cond(b, {true, false, false, true, true, false}, S({2, 3}));
                          return std::vector<NodeOut>{b->Op("Select", {c, x[0], b->Op("Square", {x[1]})})};
                        });
  ExpectGradientMatches({Uniform(S({2, 3}), -1, 1, 3), Uniform(S({2, 3}), -1, 1, 4)},
                        [&](GraphBuilder* b, const std::vector<NodeOut>& x) {
                          return std::vector<NodeOut>{b->Op("Select", {cond(b, {false, true}, S({2})), x[0], x[1]})};
                        });
  // SelectV2 broadcasts all three, so t and e gradients are summed back.
  ExpectGradientMatches({Uniform(S({1, 3}), -1, 1, 5), Uniform(S({}), -1, 1, 6)},
                        [&](GraphBuilder* b, const std::vector<NodeOut>& x) {
                          NodeOut c = cond(b, {true, false}, S({2, 1}));
                          return std::vector<NodeOut>{b->Op("SelectV2", {c, x[0], x[1]})};
                        });
  ExpectGradientMatches({Uniform(S({2, 3}), -1, 1, 7), Uniform(S({3}), -1, 1, 8)},
                        [&](GraphBuilder* b, const std::vector<NodeOut>& x) {
                          NodeOut c = cond(b, {true, false, true}, S({3}));
                          return std::vector<NodeOut>{b->Op("SelectV2", {c, x[0], b->Op("Exp", {x[1]})})};
                        });
  // With the condition computed from x: the comparison passes no gradient.
  ExpectGradientMatches({Spread(S({2, 3}), -2, 2, 9)}, [](GraphBuilder* b, const std::vector<NodeOut>& x) {
    NodeOut positive = b->Op("Greater", {x[0], b->Scalar(DT_DOUBLE, 0)});
    return std::vector<NodeOut>{b->Op("SelectV2", {positive, x[0], b->Op("Mul", {x[0], b->Scalar(DT_DOUBLE, 0.1)})})};
  });
}

TEST(ElementwiseGradTest, AddNAndFanOut) {
  ExpectGradientMatches({Uniform(S({2, 2}), -1, 1, 1), Uniform(S({2, 2}), -1, 1, 2), Uniform(S({2, 2}), -1, 1, 3)},
                        [](GraphBuilder* b, const std::vector<NodeOut>& x) {
                          return std::vector<NodeOut>{b->Op("AddN", {x[0], b->Op("Mul", {x[1], x[2]}), x[0]})};
                        });
}

TEST(ElementwiseGradTest, PiecewiseConstantOpsPassNoGradient) {
  // x * f(x) for a piecewise-constant f: the derivative is f(x) (away from its jumps).
  for (const char* op : {"Floor", "Ceil", "Round", "Sign"}) {
    SCOPED_TRACE(op);
    ExpectGradientMatches({Uniform(S({2, 3}), -3, 3, 4)}, [op](GraphBuilder* b, const std::vector<NodeOut>& x) {
      return std::vector<NodeOut>{b->Op("Mul", {x[0], b->Op(op, x)})};
    });
  }
  ExpectGradientMatches({Uniform(S({2, 3}), 0.2, 0.8, 5), Uniform(S({2, 3}), 1.1, 1.9, 6)},
                        [](GraphBuilder* b, const std::vector<NodeOut>& x) {
                          return std::vector<NodeOut>{b->Op("Mul", {x[0], b->Op("FloorDiv", {x[1], x[0]})})};
                        });
  for (const char* op : {"Greater", "Less", "GreaterEqual", "LessEqual", "Equal", "NotEqual"}) {
    bool none = false;
    EXPECT_EQ(LookupGradient(op, &none), nullptr) << op;
    EXPECT_TRUE(none) << op;
  }
  for (const char* op : {"LogicalAnd", "LogicalOr", "LogicalNot", "BroadcastGradientArgs", "FloorDiv"}) {
    bool none = false;
    LookupGradient(op, &none);
    EXPECT_TRUE(none) << op;
  }
}

TEST(ElementwiseGradTest, SignGradientIsZerosAsInTensorFlow) {
  // The gradient check registers the ops first, so the lookup follows it (gtest may run this
  // test alone).
  ExpectGradientMatches({Uniform(S({2, 3}), -3, 3, 4)}, OneOp("Sign"));
  bool none = true;
  EXPECT_NE(LookupGradient("Sign", &none), nullptr);
  EXPECT_FALSE(none);
}

TEST(ElementwiseGradTest, SecondOrderThroughTheGradientGraph) {
  // d/dx of d(tanh(x) * y)/dx: the gradient graph is itself differentiable.
  ExpectGradientMatches({Uniform(S({3}), -1, 1, 1), Uniform(S({3}), -1, 1, 2)},
                        [](GraphBuilder* b, const std::vector<NodeOut>& x) {
                          NodeOut y = b->Op("Mul", {b->Op("Tanh", {x[0]}), x[1]});
                          Tensor ones(DT_DOUBLE, TensorShape{3});
                          for (double& v : ones.flat<double>()) v = 1;
                          auto g = AddGradients(b->graph(), {y}, {x[0]}, {b->Const(ones)});
                          if (!g.ok()) {
                            b->SetError(g.status());
                            return std::vector<NodeOut>{};
                          }
                          return std::vector<NodeOut>{(*g)[0]};
                        });
}

}  // namespace
}  // namespace dflow
