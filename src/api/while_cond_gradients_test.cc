// Gradients through while loops nested in while loops and through Conds inside loop bodies:
// values against closed forms (naive loops) and central differences, inner loops with zero
// iterations, three levels of nesting, training through a nested loop, and pruning of the
// gradient machinery from forward-only runs.
#include <cmath>

#include "api/while_gradients_test_util.h"
#include "dflow/control_flow.h"
#include "dflow/dflow.h"
#include "graph/subgraph.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

Output ToDouble(const Scope& s, const Output& i) { return ops::Cast(s, i, DT_DOUBLE); }

// y = sum_{i<n} sum_{j<m} tanh(x (i + 1) + w j): x and w are invariants of both loops, i is an
// invariant of the inner loop, the sum runs through both loops' variables.
struct DoubleSum {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  Output w = ops::Placeholder(root, DT_DOUBLE);
  Output n = ops::Placeholder(root, DT_INT32);
  Output m = ops::Placeholder(root, DT_INT32);
  Output y;
  V g;

  DoubleSum() {
    Output x_ = x, w_ = w, m_ = m;
    V out = WhileLoop(
        root, {ops::Const(root, 0), ops::Const(root, 0.0)},
        [this](const Scope& s, const V& v) { return ops::Less(s, v[0], n); },
        [x_, w_, m_](const Scope& s, const V& v) {
          Output i = v[0];
          V inner = WhileLoop(
              s, {ops::Const(s, 0), v[1]}, [m_](const Scope& t, const V& u) { return ops::Less(t, u[0], m_); },
              [x_, w_, i](const Scope& t, const V& u) {
                Output arg = ops::Mul(t, x_, ToDouble(t, i) + 1.0) + ops::Mul(t, w_, ToDouble(t, u[0]));
                return V{u[0] + 1, u[1] + ops::Tanh(t, arg)};
              });
          return V{i + 1, inner.empty() ? v[1] : inner[1]};
        });
    y = out.empty() ? Output() : out[1];
    g = Gradients(root, {y}, {x, w});
  }
};

TEST(NestedWhileGradientTest, DoubleSumMatchesClosedFormAndCentralDifferences) {
  DoubleSum f;
  ASSERT_TRUE(f.root.ok()) << f.root.status();
  ClientSession session(f.root);
  const double xv = 0.7, wv = -0.3;
  for (auto [nv, mv] : std::vector<std::pair<int, int>>{{1, 1}, {2, 3}, {3, 2}, {3, 0}, {0, 4}}) {
    double y = 0, dx = 0, dw = 0;
    for (int i = 0; i < nv; ++i) {
      for (int j = 0; j < mv; ++j) {
        const double a = xv * (i + 1) + wv * j;
        const double t = std::tanh(a);
        y += t;
        dx += (1 - t * t) * (i + 1);
        dw += (1 - t * t) * j;
      }
    }
    auto r = session.Run({{f.x, xv}, {f.w, wv}, {f.n, nv}, {f.m, mv}}, {f.y, f.g[0], f.g[1]});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NEAR((*r)[0].scalar<double>(), y, 1e-12) << nv << "x" << mv;
    EXPECT_NEAR((*r)[1].scalar<double>(), dx, 1e-12) << nv << "x" << mv;
    EXPECT_NEAR((*r)[2].scalar<double>(), dw, 1e-12) << nv << "x" << mv;
    EXPECT_LT(MaxError(session, {f.x, f.w}, {Tensor(xv), Tensor(wv)}, f.y, f.g, {{f.n, nv}, {f.m, mv}}), 1e-7)
        << nv << "x" << mv;
  }
}

TEST(NestedWhileGradientTest, InnerLoopsWithZeroIterationsOnSomeOuterIterations) {
  // Outer iteration i runs the inner loop i times, v <- v * c: y = x c^K, K = n (n - 1) / 2.
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  Output c = ops::Placeholder(root, DT_DOUBLE);
  Output n = ops::Placeholder(root, DT_INT32);
  V out = WhileLoop(
      root, {ops::Const(root, 0), x}, [n](const Scope& s, const V& v) { return ops::Less(s, v[0], n); },
      [c](const Scope& s, const V& v) {
        Output i = v[0];
        V inner = WhileLoop(
            s, {ops::Const(s, 0), v[1]}, [i](const Scope& t, const V& u) { return ops::Less(t, u[0], i); },
            [c](const Scope& t, const V& u) {
              return V{u[0] + 1, ops::Mul(t, u[1], c)};
            });
        return V{i + 1, inner.empty() ? v[1] : inner[1]};
      });
  V g = Gradients(root, {out[1]}, {x, c});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  const double xv = 1.3, cv = 0.9;
  for (int nv : {0, 1, 2, 4}) {
    const int k = nv * (nv - 1) / 2;
    auto r = session.Run({{x, xv}, {c, cv}, {n, nv}}, {out[1], g[0], g[1]});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NEAR((*r)[0].scalar<double>(), xv * std::pow(cv, k), 1e-12) << nv;
    EXPECT_NEAR((*r)[1].scalar<double>(), std::pow(cv, k), 1e-12) << nv;
    EXPECT_NEAR((*r)[2].scalar<double>(), k == 0 ? 0.0 : xv * k * std::pow(cv, k - 1), 1e-12) << nv;
    EXPECT_LT(MaxError(session, {x, c}, {Tensor(xv), Tensor(cv)}, out[1], g, {{n, nv}}), 1e-7) << nv;
  }
}

TEST(NestedWhileGradientTest, ThreeLevels) {
  // v <- v * c + x in the innermost of three loops of 2, 3 and 2 iterations (12 steps).
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  Output c = ops::Placeholder(root, DT_DOUBLE);
  auto counted = [](const Scope& s, const Output& init, int times,
                    const std::function<Output(const Scope&, Output)>& f) {
    V out = WhileLoop(
        s, {ops::Const(s, 0), init}, [times](const Scope& t, const V& v) { return ops::Less(t, v[0], times); },
        [f](const Scope& t, const V& v) {
          return V{v[0] + 1, f(t, v[1])};
        });
    return out.empty() ? init : out[1];
  };
  Output y = counted(root, x, 2, [&](const Scope& s1, Output v1) {
    return counted(s1, v1, 3, [&](const Scope& s2, Output v2) {
      return counted(s2, v2, 2, [&](const Scope& s3, Output v3) { return ops::Mul(s3, v3, c) + x; });
    });
  });
  V g = Gradients(root, {y}, {x, c});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  const double xv = 0.4, cv = 0.8;
  // v_12 = x c^12 + x sum_{k<12} c^k.
  double y_ref = xv * std::pow(cv, 12), dx = std::pow(cv, 12), dc = 12 * xv * std::pow(cv, 11);
  for (int k = 0; k < 12; ++k) {
    y_ref += xv * std::pow(cv, k);
    dx += std::pow(cv, k);
    if (k > 0) dc += xv * k * std::pow(cv, k - 1);
  }
  auto r = session.Run({{x, xv}, {c, cv}}, {y, g[0], g[1]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR((*r)[0].scalar<double>(), y_ref, 1e-12);
  EXPECT_NEAR((*r)[1].scalar<double>(), dx, 1e-12);
  EXPECT_NEAR((*r)[2].scalar<double>(), dc, 1e-12);
  EXPECT_LT(MaxError(session, {x, c}, {Tensor(xv), Tensor(cv)}, y, g), 1e-7);
}

TEST(NestedWhileGradientTest, ManyNestedIterationsKeepTheirOrder) {
  // 60 outer iterations; iteration i runs i % 5 inner steps v <- v * c + x (i + 1). Every
  // popped value must come back to the matching inner iteration of the matching outer one.
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  Output c = ops::Placeholder(root, DT_DOUBLE);
  V out = WhileLoop(
      root, {ops::Const(root, 0), ops::Const(root, 0.5)},
      [](const Scope& s, const V& v) { return ops::Less(s, v[0], 60); },
      [x, c](const Scope& s, const V& v) {
        Output i = v[0];
        Output steps = ops::FloorMod(s, i, 5);
        V inner = WhileLoop(
            s, {ops::Const(s, 0), v[1]}, [steps](const Scope& t, const V& u) { return ops::Less(t, u[0], steps); },
            [x, c, i](const Scope& t, const V& u) {
              return V{u[0] + 1, ops::Mul(t, u[1], c) + ops::Mul(t, x, ToDouble(t, i) + 1.0)};
            });
        return V{i + 1, inner.empty() ? v[1] : inner[1]};
      });
  V g = Gradients(root, {out[1]}, {x, c});
  ASSERT_TRUE(root.ok()) << root.status();
  const double xv = 0.01, cv = 0.97;
  double v = 0.5, dx = 0, dc = 0;  // forward-mode reference
  for (int i = 0; i < 60; ++i) {
    for (int j = 0; j < i % 5; ++j) {
      dc = dc * cv + v;
      dx = dx * cv + (i + 1);
      v = v * cv + xv * (i + 1);
    }
  }
  ClientSession session(root);
  for (int run = 0; run < 5; ++run) {
    auto r = session.Run({{x, xv}, {c, cv}}, {out[1], g[0], g[1]});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NEAR((*r)[0].scalar<double>(), v, 1e-12 * std::abs(v));
    EXPECT_NEAR((*r)[1].scalar<double>(), dx, 1e-12 * std::abs(dx));
    EXPECT_NEAR((*r)[2].scalar<double>(), dc, 1e-12 * std::abs(dc));
  }
}

TEST(NestedWhileGradientTest, TrainsAVariableUsedInsideANestedLoop) {
  // v = x w^4 from two loops of two multiplications; three SGD steps on (v - 1)^2.
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), TensorShape({}), DT_FLOAT, init::Constant(1.1));
  Output x = ops::Const(root, 0.5f);
  auto twice = [](const Scope& s, Output init, const std::function<Output(const Scope&, Output)>& f) {
    V out = WhileLoop(
        s, {ops::Const(s, 0), init}, [](const Scope& t, const V& v) { return ops::Less(t, v[0], 2); },
        [f](const Scope& t, const V& v) {
          return V{v[0] + 1, f(t, v[1])};
        });
    return out.empty() ? init : out[1];
  };
  Output v = twice(root, x, [&](const Scope& s, Output a) {
    return twice(s, a, [&](const Scope& t, Output b) { return ops::Mul(t, b, w); });
  });
  Output loss = ops::Square(root, v - 1.0f);
  Operation step = train::GradientDescentOptimizer(0.05).Minimize(root, loss);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  double wv = 1.1;
  for (int k = 0; k < 3; ++k) {
    ASSERT_TRUE(session.Run({step}).ok());
    wv -= 0.05 * 2 * (0.5 * std::pow(wv, 4) - 1) * 4 * 0.5 * std::pow(wv, 3);
    auto r = session.Run({w.read()});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NEAR((*r)[0].scalar<float>(), wv, 1e-5) << "step " << k;
  }
}

// v <- v * v when i is even, tanh(v) when odd.
V SquareOrTanh(const Scope& root, Output x, Output n) {
  return WhileLoop(
      root, {ops::Const(root, 0), x}, [n](const Scope& s, const V& v) { return ops::Less(s, v[0], n); },
      [](const Scope& s, const V& v) {
        Output even = ops::Equal(s, ops::FloorMod(s, v[0], 2), 0);
        V r = Cond(
            s, even, {v[1]}, [](const Scope& t, const V& in) { return V{ops::Mul(t, in[0], in[0])}; },
            [](const Scope& t, const V& in) { return V{ops::Tanh(t, in[0])}; });
        return V{v[0] + 1, r.empty() ? v[1] : r[0]};
      });
}

TEST(CondInLoopGradientTest, SquareOrTanhMatchesChainRuleAndCentralDifferences) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  Output n = ops::Placeholder(root, DT_INT32);
  V out = SquareOrTanh(root, x, n);
  V g = Gradients(root, {out[1]}, {x});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  const double xv = 0.9;
  for (int nv : {0, 1, 2, 3, 4, 7}) {
    double v = xv, d = 1;
    for (int i = 0; i < nv; ++i) {
      d *= i % 2 == 0 ? 2 * v : 1 - std::tanh(v) * std::tanh(v);
      v = i % 2 == 0 ? v * v : std::tanh(v);
    }
    auto r = session.Run({{x, xv}, {n, nv}}, {out[1], g[0]});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NEAR((*r)[0].scalar<double>(), v, 1e-12) << nv;
    EXPECT_NEAR((*r)[1].scalar<double>(), d, 1e-12) << nv;
    EXPECT_LT(MaxError(session, {x}, {Tensor(xv)}, out[1], g, {{n, nv}}), 1e-7) << nv;
  }
}

TEST(CondInLoopGradientTest, BranchesReadingInvariantsAndNestedConds) {
  // i % 3 == 0: (v > 0 ? v * w : -v); otherwise tanh(v + w). The inner Cond's predicate is
  // itself computed in a branch, and both branches read the invariant w directly.
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  Output w = ops::Placeholder(root, DT_DOUBLE);
  Output n = ops::Placeholder(root, DT_INT32);
  V out = WhileLoop(
      root, {ops::Const(root, 0), x}, [n](const Scope& s, const V& v) { return ops::Less(s, v[0], n); },
      [w](const Scope& s, const V& v) {
        Output third = ops::Equal(s, ops::FloorMod(s, v[0], 3), 0);
        V r = Cond(
            s, third, {v[1]},
            [w](const Scope& t, const V& in) {
              return Cond(
                  t, ops::Greater(t, in[0], 0.0), {in[0]},
                  [w](const Scope& u, const V& a) { return V{ops::Mul(u, a[0], w)}; },
                  [](const Scope& u, const V& a) { return V{ops::Neg(u, a[0])}; });
            },
            [w](const Scope& t, const V& in) { return V{ops::Tanh(t, in[0] + w)}; });
        return V{v[0] + 1, r.empty() ? v[1] : r[0]};
      });
  V g = Gradients(root, {out[1]}, {x, w});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  for (double xv : {0.8, -0.6}) {
    for (int nv : {1, 3, 4, 6}) {
      EXPECT_LT(MaxError(session, {x, w}, {Tensor(xv), Tensor(1.2)}, out[1], g, {{n, nv}}), 1e-7) << xv << ", " << nv;
    }
  }
}

TEST(CondInLoopGradientTest, CondInsideANestedLoop) {
  // The inner loop alternates v * c and v + c; the outer runs it i + 1 times on iteration i.
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  Output c = ops::Placeholder(root, DT_DOUBLE);
  V out = WhileLoop(
      root, {ops::Const(root, 0), x}, [](const Scope& s, const V& v) { return ops::Less(s, v[0], 3); },
      [c](const Scope& s, const V& v) {
        Output i = v[0];
        V inner = WhileLoop(
            s, {ops::Const(s, 0), v[1]}, [i](const Scope& t, const V& u) { return ops::LessEqual(t, u[0], i); },
            [c](const Scope& t, const V& u) {
              V r = Cond(
                  t, ops::Equal(t, ops::FloorMod(t, u[0], 2), 0), {u[1]},
                  [c](const Scope& b, const V& in) { return V{ops::Mul(b, in[0], c)}; },
                  [c](const Scope& b, const V& in) { return V{in[0] + c}; });
              return V{u[0] + 1, r.empty() ? u[1] : r[0]};
            });
        return V{i + 1, inner.empty() ? v[1] : inner[1]};
      });
  V g = Gradients(root, {out[1]}, {x, c});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  const double xv = 0.7, cv = 1.3;
  double v = xv, dx = 1, dc = 0;  // forward-mode reference
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j <= i; ++j) {
      if (j % 2 == 0) {
        dc = dc * cv + v;
        dx *= cv;
        v *= cv;
      } else {
        dc += 1;
        v += cv;
      }
    }
  }
  auto r = session.Run({{x, xv}, {c, cv}}, {out[1], g[0], g[1]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR((*r)[0].scalar<double>(), v, 1e-12);
  EXPECT_NEAR((*r)[1].scalar<double>(), dx, 1e-12);
  EXPECT_NEAR((*r)[2].scalar<double>(), dc, 1e-12);
  EXPECT_LT(MaxError(session, {x, c}, {Tensor(xv), Tensor(cv)}, out[1], g), 1e-7);
}

TEST(CondInLoopGradientTest, LoopsInsideBranches) {
  // Iteration i of the outer loop runs, when i is even, an inner loop of two steps v <- v * c,
  // and otherwise v <- v + c. At the top level the same Cond picks the loop or not.
  auto body = [](const Scope& s, Output i, Output v, Output c) {
    V r = Cond(
        s, ops::Equal(s, ops::FloorMod(s, i, 2), 0), {v},
        [c](const Scope& t, const V& in) {
          V l = WhileLoop(
              t, {ops::Const(t, 0), in[0]}, [](const Scope& u, const V& a) { return ops::Less(u, a[0], 2); },
              [c](const Scope& u, const V& a) {
                return V{a[0] + 1, ops::Mul(u, a[1], c)};
              });
          return V{l.empty() ? in[0] : l[1]};
        },
        [c](const Scope& t, const V& in) { return V{in[0] + c}; });
    return r.empty() ? v : r[0];
  };
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE);
  Output c = ops::Placeholder(root, DT_DOUBLE);
  Output n = ops::Placeholder(root, DT_INT32);
  V out = WhileLoop(
      root, {ops::Const(root, 0), x}, [n](const Scope& s, const V& v) { return ops::Less(s, v[0], n); },
      [c, body](const Scope& s, const V& v) {
        return V{v[0] + 1, body(s, v[0], v[1], c)};
      });
  Output top = body(root, n, x, c);
  V g = Gradients(root, {out[1]}, {x, c});
  V g_top = Gradients(root, {top}, {x, c});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  const double xv = 0.8, cv = 1.1;
  for (int nv : {0, 1, 2, 5}) {
    double v = xv, dx = 1, dc = 0;
    for (int i = 0; i < nv; ++i) {
      if (i % 2 == 0) {
        dc = dc * cv * cv + 2 * v * cv;
        dx *= cv * cv;
        v *= cv * cv;
      } else {
        dc += 1;
        v += cv;
      }
    }
    auto r = session.Run({{x, xv}, {c, cv}, {n, nv}}, {out[1], g[0], g[1]});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NEAR((*r)[0].scalar<double>(), v, 1e-12) << nv;
    EXPECT_NEAR((*r)[1].scalar<double>(), dx, 1e-12) << nv;
    EXPECT_NEAR((*r)[2].scalar<double>(), dc, 1e-12) << nv;
    EXPECT_LT(MaxError(session, {x, c}, {Tensor(xv), Tensor(cv)}, out[1], g, {{n, nv}}), 1e-7) << nv;
    EXPECT_LT(MaxError(session, {x, c}, {Tensor(xv), Tensor(cv)}, top, g_top, {{n, nv}}), 1e-7) << nv;
  }
}

TEST(CondGradientTest, ATensorReadInsideABranchGetsZerosWhenTheBranchIsNotTaken) {
  Scope root = Scope::NewRootScope();
  Output p = ops::Placeholder(root, DT_BOOL);
  Output w = ops::Placeholder(root, DT_DOUBLE);
  V r = Cond(
      root, p, {}, [w](const Scope& s, const V&) { return V{ops::Mul(s, w, w)}; },
      [](const Scope& s, const V&) { return V{ops::Const(s, 2.0)}; });
  ASSERT_EQ(r.size(), 1u);
  Output y = r[0] + ops::Mul(root, w, 3.0);
  V g = Gradients(root, {y}, {w});
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  auto taken = session.Run({{p, true}, {w, 1.5}}, {g[0]});
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ((*taken)[0].scalar<double>(), 2 * 1.5 + 3);
  auto untaken = session.Run({{p, false}, {w, 1.5}}, {g[0]});
  ASSERT_TRUE(untaken.ok()) << untaken.status();
  EXPECT_EQ((*untaken)[0].scalar<double>(), 3.0);
}

TEST(NestedWhileGradientTest, ForwardOnlyRunsPruneTheGradientMachinery) {
  DoubleSum f;
  Output x = f.x;
  Output n = f.n;
  V cond_out = SquareOrTanh(f.root, x, n);
  V g2 = Gradients(f.root, {cond_out[1]}, {x});
  ASSERT_TRUE(f.root.ok()) << f.root.status();
  auto step = BuildStepGraph(*f.root.graph(), {x.name(), f.w.name(), n.name(), f.m.name()},
                             {f.y.name(), cond_out[1].name()}, {});
  ASSERT_TRUE(step.ok()) << step.status();
  for (const std::string& name : step->kept_nodes) {
    EXPECT_EQ(name.find("gradients"), std::string::npos) << name;
  }
  for (const Node* v : step->graph->nodes()) EXPECT_NE(v->op(), "StackPushV2") << v->name();
  ClientSession session(f.root);
  auto r = session.Run({{x, 0.5}, {f.w, 0.25}, {n, 2}, {f.m, 2}}, {f.y, cond_out[1]});
  ASSERT_TRUE(r.ok()) << r.status();
  double y = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) y += std::tanh(0.5 * (i + 1) + 0.25 * j);
  EXPECT_NEAR((*r)[0].scalar<double>(), y, 1e-12);
  EXPECT_NEAR((*r)[1].scalar<double>(), std::tanh(0.25), 1e-12);
  // And the gradients still run, in the same session.
  auto grads = session.Run({{x, 0.5}, {f.w, 0.25}, {n, 2}, {f.m, 2}}, {f.g[0], g2[0]});
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_NEAR((*grads)[1].scalar<double>(), (1 - std::tanh(0.25) * std::tanh(0.25)) * 2 * 0.5, 1e-12);
}

}  // namespace
}  // namespace dflow
