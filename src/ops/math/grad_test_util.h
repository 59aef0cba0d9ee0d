// Test helpers (for *_test.cc only) for the gradient checks of the math and matrix families:
// deterministic input tensors and a wrapper around MaxGradientError.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "graph/graph_builder.h"
#include "gtest/gtest.h"
#include "train/gradient_checker.h"

namespace dflow::testing {

// A tensor of `shape` with values uniform in [lo, hi), from a fixed seed.
template <typename T = double>
Tensor Uniform(const TensorShape& shape, double lo, double hi, unsigned seed = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Tensor t(DTypeOf<T>::value, shape);
  for (T& v : t.flat<T>()) v = static_cast<T>(dist(gen));
  return t;
}

// Values in [lo, hi) at least `gap` away from one another and from every value of `avoid`
// (so that max/min and ties stay put under the finite differences).
inline Tensor Spread(const TensorShape& shape, double lo, double hi, unsigned seed, const Tensor* avoid = nullptr,
                     double gap = 0.05) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> taken;
  if (avoid != nullptr)
    for (double v : avoid->flat<double>()) taken.push_back(v);
  Tensor t(DT_DOUBLE, shape);
  for (double& v : t.flat<double>()) {
    for (int tries = 0;; ++tries) {
      v = dist(gen);
      bool ok = true;
      for (double u : taken) ok &= std::abs(u - v) >= gap;
      if (ok || tries > 1000) break;
    }
    taken.push_back(v);
  }
  return t;
}

// Expects the registered gradients of `build` to match central differences within `tolerance`.
inline void ExpectGradientMatches(const std::vector<Tensor>& xs, const GradCheckGraphFn& build, double tolerance = 1e-6,
                                  double delta = 1e-5) {
  StatusOr<double> err = MaxGradientError(xs, build, delta);
  ASSERT_TRUE(err.ok()) << err.status();
  EXPECT_LT(*err, tolerance);
}

// A one-op graph for the gradient checker: op(xs...) with attrs.
inline GradCheckGraphFn OneOp(const std::string& op, AttrMap attrs = {}) {
  return [op, attrs](GraphBuilder* b, const std::vector<NodeOut>& xs) {
    return std::vector<NodeOut>{b->Op(op, xs, attrs)};
  };
}

// The same inputs with their static shapes hidden (PlaceholderWithDefault of unknown shape, or
// of unknown dims when keep_rank), so the gradients must work their shapes out while running.
inline std::vector<NodeOut> HideShapes(GraphBuilder* b, const std::vector<NodeOut>& xs, bool keep_rank = false) {
  std::vector<NodeOut> out;
  for (const NodeOut& x : xs) {
    const PartialTensorShape& s = x.node->output_shape(x.index);
    PartialTensorShape hidden = keep_rank ? PartialTensorShape::UnknownOfRank(s.dims()) : PartialTensorShape();
    out.push_back(b->Op("PlaceholderWithDefault", {x}, {{"dtype", ValueType(x)}, {"shape", hidden}}));
  }
  return out;
}

}  // namespace dflow::testing
