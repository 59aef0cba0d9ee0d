// Gradients through WhileLoop: values against closed forms and central differences, loop
// invariants, zero iterations, iteration counts fed per run, many iterations, variables.
// Nested loops and Conds in loop bodies: while_cond_gradients_test.cc.
#include <cmath>

#include "api/while_gradients_test_util.h"
#include "dflow/control_flow.h"
#include "dflow/dflow.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

TEST(WhileGradientTest, RepeatedSquaring) {
  // v <- v * v three times: y = x^8, dy/dx = 8 x^7.
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  V out = WhileLoop(
      root, {ops::Const(root, 0), x}, [](const Scope& s, const V& v) { return ops::Less(s, v[0], 3); },
      [](const Scope& s, const V& v) {
        return V{v[0] + 1, ops::Mul(s, v[1], v[1])};
      });
  ASSERT_EQ(out.size(), 2u);
  V g = Gradients(root, {out[1]}, {x});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  auto r = session.Run({{x, 1.1}}, {out[1], g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR((*r)[0].scalar<double>(), std::pow(1.1, 8), 1e-12);
  EXPECT_NEAR((*r)[1].scalar<double>(), 8 * std::pow(1.1, 7), 1e-12);
}

TEST(WhileGradientTest, RecurrentLayerMatchesCentralDifferences) {
  // h <- tanh(h W + b) for n steps, y = sum(h): gradients for h0, the invariants W and b.
  Scope root = Scope::NewRootScope();
  Output h0 = ops::Placeholder(root, DT_DOUBLE);
  Output w = ops::Placeholder(root, DT_DOUBLE);
  Output b = ops::Placeholder(root, DT_DOUBLE);
  Output n = ops::Placeholder(root, DT_INT32);
  V out = WhileLoop(
      root, {ops::Const(root, 0), h0}, [n](const Scope& s, const V& v) { return ops::Less(s, v[0], n); },
      [w, b](const Scope& s, const V& v) {
        return V{v[0] + 1, ops::Tanh(s, ops::MatMul(s, v[1], w) + b)};
      });
  Output y = ops::Sum(root, out[1], {0, 1});
  V g = Gradients(root, {y}, {h0, w, b});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  std::vector<Tensor> values = {Doubles({0.3, -0.2, 0.5}, TensorShape({1, 3})),
                                Doubles({0.4, -0.6, 0.2, 0.1, 0.3, -0.5, 0.7, 0.2, -0.1}, TensorShape({3, 3})),
                                Doubles({0.05, -0.1, 0.2}, TensorShape({3}))};
  for (int steps : {1, 2, 5}) {
    EXPECT_LT(MaxError(session, {h0, w, b}, values, y, g, {{n, steps}}), 1e-7) << steps << " steps";
  }
}

TEST(WhileGradientTest, CoupledLoopVariables) {
  // (a, b) <- (a * b, a + b) twice.
  Scope root = Scope::NewRootScope();
  Output a = ops::Placeholder(root, DT_DOUBLE);
  Output b = ops::Placeholder(root, DT_DOUBLE);
  V out = WhileLoop(
      root, {ops::Const(root, 0), a, b}, [](const Scope& s, const V& v) { return ops::Less(s, v[0], 2); },
      [](const Scope& s, const V& v) {
        return V{v[0] + 1, ops::Mul(s, v[1], v[2]), v[1] + v[2]};
      });
  Output y = out[1] + ops::Mul(root, out[2], 3.0);
  V g = Gradients(root, {y}, {a, b});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  // Closed form: a1 = ab, b1 = a + b; a2 = ab(a + b), b2 = ab + a + b; y = a2 + 3 b2.
  const double av = 1.5, bv = -0.7;
  auto r = session.Run({{a, av}, {b, bv}}, {y, g[0], g[1]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR((*r)[0].scalar<double>(), av * bv * (av + bv) + 3 * (av * bv + av + bv), 1e-12);
  EXPECT_NEAR((*r)[1].scalar<double>(), 2 * av * bv + bv * bv + 3 * (bv + 1), 1e-12);
  EXPECT_NEAR((*r)[2].scalar<double>(), av * av + 2 * av * bv + 3 * (av + 1), 1e-12);
  EXPECT_LT(MaxError(session, {a, b}, {Tensor(av), Tensor(bv)}, y, g), 1e-7);
}

TEST(WhileGradientTest, ZeroIterations) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  Output w = ops::Placeholder(root, DT_DOUBLE);
  V out = WhileLoop(
      root, {ops::Const(root, 0), x}, [](const Scope& s, const V& v) { return ops::Less(s, v[0], 0); },
      [w](const Scope& s, const V& v) {
        return V{v[0] + 1, ops::Mul(s, v[1], w)};
      });
  V g = Gradients(root, {out[1]}, {x, w});
  ASSERT_TRUE(root.ok()) << root.status();
  auto r = ClientSession(root).Run({{x, 2.0}, {w, 5.0}}, {out[1], g[0], g[1]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<double>(), 2.0);
  EXPECT_EQ((*r)[1].scalar<double>(), 1.0);
  EXPECT_EQ((*r)[2].scalar<double>(), 0.0);
}

TEST(WhileGradientTest, ManyIterationsKeepTheirOrder) {
  // v <- v * c + x for 2000 iterations with c = 1 - 1e-3: dv/dx = sum c^k, dv/dc exact too.
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  Output c = ops::Placeholder(root, DT_DOUBLE);
  const int n = 2000;
  V out = WhileLoop(
      root, {ops::Const(root, 0), ops::Const(root, 0.0)},
      [n](const Scope& s, const V& v) { return ops::Less(s, v[0], n); },
      [x, c](const Scope& s, const V& v) {
        return V{v[0] + 1, ops::Mul(s, v[1], c) + x};
      });
  V g = Gradients(root, {out[1]}, {x, c});
  ASSERT_TRUE(root.ok()) << root.status();
  const double cv = 1 - 1e-3, xv = 0.5;
  auto r = ClientSession(root).Run({{x, xv}, {c, cv}}, {g[0], g[1]});
  ASSERT_TRUE(r.ok()) << r.status();
  double dx = 0, dc = 0;  // v_n = x sum_{k<n} c^k; dv/dc = x sum_{k<n} k c^(k-1)
  for (int k = 0; k < n; ++k) {
    dx += std::pow(cv, k);
    if (k > 0) dc += xv * k * std::pow(cv, k - 1);
  }
  EXPECT_NEAR((*r)[0].scalar<double>(), dx, 1e-9 * dx);
  EXPECT_NEAR((*r)[1].scalar<double>(), dc, 1e-9 * dc);
}

TEST(WhileGradientTest, TrainsAVariableUsedInsideTheLoop) {
  // y = w^3 x built as three multiplications in a loop; one SGD step on (y - 1)^2.
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), TensorShape({}), DT_FLOAT, init::Constant(1.1));
  Output x = ops::Const(root, 0.5f);
  V out = WhileLoop(
      root, {ops::Const(root, 0), x}, [](const Scope& s, const V& v) { return ops::Less(s, v[0], 3); },
      [w](const Scope& s, const V& v) {
        return V{v[0] + 1, ops::Mul(s, v[1], w)};
      });
  Output loss = ops::Square(root, out[1] - 1.0f);
  Operation step = train::GradientDescentOptimizer(0.1).Minimize(root, loss);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  ASSERT_TRUE(session.Run({step}).ok());
  auto r = session.Run({w.read()});
  ASSERT_TRUE(r.ok()) << r.status();
  // d loss / dw = 2 (w^3 x - 1) * 3 w^2 x
  const double wv = 1.1, grad = 2 * (wv * wv * wv * 0.5 - 1) * 3 * wv * wv * 0.5;
  EXPECT_NEAR((*r)[0].scalar<float>(), wv - 0.1 * grad, 1e-6);
}

TEST(WhileGradientTest, ForwardRunsAloneAfterGradientsAreAdded) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  V out = WhileLoop(
      root, {ops::Const(root, 0), x}, [](const Scope& s, const V& v) { return ops::Less(s, v[0], 4); },
      [](const Scope& s, const V& v) {
        return V{v[0] + 1, v[1] * 2.0};
      });
  V g = Gradients(root, {out[1]}, {x});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  auto f = session.Run({{x, 3.0}}, {out[1]});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)[0].scalar<double>(), 48.0);
  auto both = session.Run({{x, 3.0}}, {g[0], out[0]});
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ((*both)[0].scalar<double>(), 16.0);
  EXPECT_EQ((*both)[1].scalar<int32_t>(), 4);
}

}  // namespace
}  // namespace dflow
