// Numerical gradient checks of Sum, Mean, Max, Min and Prod over many axis sets, with constant
// axes, axes computed while running and inputs of unknown shape; Max/Min ties and Prod zeros
// checked against hand-computed gradients.
#include <string>

#include "dflow/dflow.h"
#include "gtest/gtest.h"
#include "ops/math/grad_test_util.h"

namespace dflow {
namespace {

using testing::ExpectGradientMatches;
using testing::HideShapes;
using testing::Spread;
using testing::Uniform;

TensorShape S(std::initializer_list<int64_t> d) { return TensorShape(d); }

Tensor Axes(std::vector<int32_t> a) { return Tensor::FromValues<int32_t>(a, TensorShape{int64_t(a.size())}).value(); }

enum class AxesKind { kConst, kComputed };

// op(x, axes) where the axes are a Const, or come out of an Identity so that nothing about
// their value is known while building.
GradCheckGraphFn Reduce(const std::string& op, const Tensor& axes, bool keep_dims, AxesKind kind, int hide = 0) {
  return [=](GraphBuilder* b, const std::vector<NodeOut>& xs) {
    NodeOut a = b->Const(axes);
    if (kind == AxesKind::kComputed) a = b->Op("Identity", {a});
    std::vector<NodeOut> in = hide == 0 ? xs : HideShapes(b, xs, /*keep_rank=*/hide == 1);
    return std::vector<NodeOut>{b->Op(op, {in[0], a}, {{"keep_dims", keep_dims}})};
  };
}

const std::vector<Tensor>& AxisSets() {
  static const auto* sets = new std::vector<Tensor>{Axes({0}),       Axes({1}),     Axes({-1}),
                                                    Axes({0, 2}),    Axes({2, -3}), Axes({}),
                                                    Axes({0, 1, 2}), Axes({1, -3}), Tensor(int32_t{-2})};
  return *sets;
}

TEST(ReductionGradTest, SumMeanProdOverAxisSets) {
  for (const char* op : {"Sum", "Mean", "Prod"}) {
    for (const Tensor& axes : AxisSets()) {
      for (bool keep : {false, true}) {
        for (AxesKind kind : {AxesKind::kConst, AxesKind::kComputed}) {
          SCOPED_TRACE(std::string(op) + " axes " + axes.ToString() + (keep ? " keep" : "") +
                       (kind == AxesKind::kComputed ? " computed" : ""));
          ExpectGradientMatches({Uniform(S({2, 3, 2}), 0.5, 1.5, 3)}, Reduce(op, axes, keep, kind), 1e-6);
        }
      }
    }
  }
}

TEST(ReductionGradTest, MaxMinOverAxisSets) {
  for (const char* op : {"Max", "Min"}) {
    for (const Tensor& axes : AxisSets()) {
      for (bool keep : {false, true}) {
        for (AxesKind kind : {AxesKind::kConst, AxesKind::kComputed}) {
          SCOPED_TRACE(std::string(op) + " axes " + axes.ToString() + (keep ? " keep" : ""));
          ExpectGradientMatches({Spread(S({2, 3, 2}), -2, 2, 4)}, Reduce(op, axes, keep, kind), 1e-6);
        }
      }
    }
  }
}

TEST(ReductionGradTest, InputsOfUnknownShape) {
  for (const char* op : {"Sum", "Mean", "Max", "Prod"}) {
    for (int hide : {1, 2}) {  // unknown dims, unknown rank
      for (AxesKind kind : {AxesKind::kConst, AxesKind::kComputed}) {
        for (const Tensor& axes : {Axes({1}), Axes({0, -1}), Axes({})}) {
          for (bool keep : {false, true}) {
            SCOPED_TRACE(std::string(op) + " hide " + std::to_string(hide) + " axes " + axes.ToString());
            ExpectGradientMatches({Spread(S({2, 3, 2}), 0.5, 2, 5, nullptr, 0.02)}, Reduce(op, axes, keep, kind, hide),
                                  1e-6);
          }
        }
      }
    }
  }
}

TEST(ReductionGradTest, ScalarAndVectorInputs) {
  ExpectGradientMatches({Uniform(S({}), 0.5, 1, 1)}, Reduce("Sum", Axes({}), false, AxesKind::kConst));
  ExpectGradientMatches({Uniform(S({5}), 0.5, 1, 2)}, Reduce("Mean", Axes({0}), false, AxesKind::kComputed));
  ExpectGradientMatches({Uniform(S({5}), 0.5, 1, 3)}, Reduce("Prod", Tensor(int32_t{0}), true, AxesKind::kConst));
  ExpectGradientMatches({Uniform<float>(S({3, 4}), 0.5, 1, 4)}, Reduce("Mean", Axes({1}), false, AxesKind::kConst),
                        5e-3, 1e-2);
}

TEST(ReductionGradTest, ProdWithZeros) {
  // Row 0 has one zero, row 1 two zeros, row 2 none: d prod / dx_i is the product of the others.
  Tensor x = Tensor::FromValues<double>({2, 0, 3, 0, 5, 0, 1.5, 2, 4}, S({3, 3})).value();
  ExpectGradientMatches({x}, Reduce("Prod", Axes({1}), false, AxesKind::kConst), 1e-6);
  ExpectGradientMatches({x}, Reduce("Prod", Axes({0}), false, AxesKind::kComputed), 1e-6);
  ExpectGradientMatches({x}, Reduce("Prod", Axes({0, 1}), false, AxesKind::kConst), 1e-6);

  Scope root = Scope::NewRootScope();
  Output px = ops::Placeholder(root, DT_DOUBLE, PartialTensorShape({3, 3}));
  std::vector<Output> g = Gradients(root, {ops::Prod(root, px, 1)}, {px});
  ASSERT_TRUE(root.ok()) << root.status();
  auto r = ClientSession(root).Run({{px, x}}, {g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[[0 6 0] [0 0 0] [8 6 3]]");
}

TEST(ReductionGradTest, TiesShareTheGradient) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE, PartialTensorShape({2, 3}));
  Output mx = ops::Max(root, x, 1);
  Output mn = ops::Min(root, x, {0, 1});
  std::vector<Output> g = Gradients(root, {mx, mn}, {x});
  ASSERT_TRUE(root.ok()) << root.status();
  Tensor v = Tensor::FromValues<double>({1, 4, 4, 1, 1, 1}, S({2, 3})).value();
  auto r = ClientSession(root).Run({{x, v}}, {g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  // Max: [0 .5 .5] and [1/3 1/3 1/3]; Min over all: 1/4 to each of the four ones.
  auto got = (*r)[0].flat<double>();
  const double want[] = {0.25, 0.5, 0.5, 1 / 3.0 + 0.25, 1 / 3.0 + 0.25, 1 / 3.0 + 0.25};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
}

TEST(ReductionGradTest, ArgMaxPassesNoGradient) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root, DT_DOUBLE, PartialTensorShape({2, 3}));
  Output idx = ops::Cast(root, ops::ArgMax(root, x, 1), DT_DOUBLE);
  Output y = ops::Add(root, ops::Sum(root, x, {0, 1}), ops::Sum(root, idx, 0));
  std::vector<Output> g = Gradients(root, {y}, {x});
  ASSERT_TRUE(root.ok()) << root.status();
  auto r = ClientSession(root).Run({{x, Tensor::FromValues<double>({1, 2, 3, 6, 5, 4}, S({2, 3})).value()}}, {g[0]});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].ToString(), "[[1 1 1] [1 1 1]]");
}

}  // namespace
}  // namespace dflow
