// Test helpers (for *_test.cc only) shared by the NN op tests: random tensors, comparison with
// a reference computed in the test, and running a small graph's gradients.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "dflow/dflow.h"
#include "gtest/gtest.h"
#include "graph/gradients.h"
#include "graph/graph_builder.h"
#include "ops/register_all.h"
#include "ops/math/kernel_runner_test_util.h"
#include "ops/testing/kernel_test_util.h"
#include "train/gradient_checker.h"

namespace dflow::nn_testing {

template <typename T>
Tensor Random(const TensorShape& shape, std::mt19937* rng, double lo = -1, double hi = 1) {
  Tensor t(DTypeOf<T>::value, shape);
  std::uniform_real_distribution<double> d(lo, hi);
  for (T& v : t.flat<T>()) v = static_cast<T>(d(*rng));
  return t;
}

// Distinct values spaced at least `gap` apart, shuffled (max pooling needs unique maxima for
// finite differences to be meaningful).
template <typename T>
Tensor Distinct(const TensorShape& shape, std::mt19937* rng, double gap = 0.05) {
  Tensor t(DTypeOf<T>::value, shape);
  std::vector<int64_t> idx(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i);
  std::shuffle(idx.begin(), idx.end(), *rng);
  const double mid = double(idx.size()) / 2;
  for (size_t i = 0; i < idx.size(); ++i) t.flat<T>()[i] = static_cast<T>((double(idx[i]) - mid) * gap);
  return t;
}

template <typename T>
Tensor Cast(const Tensor& t) {
  Tensor out(DTypeOf<T>::value, t.shape());
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    out.flat<T>()[i] = static_cast<T>(t.dtype() == DT_FLOAT ? double(t.flat<float>()[i]) : t.flat<double>()[i]);
  }
  return out;
}

inline std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> v;
  if (t.dtype() == DT_FLOAT)
    for (float x : t.flat<float>()) v.push_back(x);
  else if (t.dtype() == DT_DOUBLE)
    for (double x : t.flat<double>()) v.push_back(x);
  else ADD_FAILURE() << "not a float tensor: " << DTypeString(t.dtype());
  return v;
}

// Every element within `tol` (absolute, scaled by max(1, |want|)).
inline void ExpectClose(const Tensor& got, const std::vector<double>& want, const TensorShape& shape, double tol) {
  ASSERT_EQ(got.shape(), shape);
  std::vector<double> g = ToDoubles(got);
  ASSERT_EQ(g.size(), want.size());
  int failures = 0;
  for (size_t i = 0; i < g.size() && failures < 10; ++i) {
    if (!(std::abs(g[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])))) {
      ADD_FAILURE() << "element " << i << ": got " << g[i] << ", want " << want[i];
      ++failures;
    }
  }
}

inline void ExpectClose(const Tensor& got, const Tensor& want, double tol) {
  ExpectClose(got, ToDoubles(want), want.shape(), tol);
}

// Runs one op through testing::RunOpKernel and returns its outputs (failing the test on error).
inline std::vector<Tensor> RunOp(const std::string& op, const std::vector<Tensor>& inputs, AttrMap attrs = {}) {
  auto out = testing::RunOpKernel(op, inputs, std::move(attrs));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? *out : std::vector<Tensor>();
}

// The error of running `op` on these inputs (OK if it ran).
inline Status RunError(const std::string& op, const std::vector<Tensor>& inputs, AttrMap attrs = {}) {
  return testing::RunOpKernel(op, inputs, std::move(attrs)).status();
}

// The max gradient error of ys = op(xs..., extra constant inputs appended), output `outputs`.
// `fixed` are non-differentiated inputs placed after the xs.
inline double OpGradientError(const std::string& op, const std::vector<Tensor>& xs, AttrMap attrs = {},
                              const std::vector<Tensor>& fixed = {}, std::vector<int> outputs = {0},
                              double delta = 1e-3) {
  auto err = MaxGradientError(
      xs,
      [&](GraphBuilder* b, const std::vector<NodeOut>& in) {
        std::vector<NodeOut> args = in;
        for (const Tensor& t : fixed) args.push_back(b->Const(t));
        Node* n = b->AddNode(op, args, attrs);
        std::vector<NodeOut> ys;
        for (int i : outputs) ys.push_back(NodeOut{n, i});
        return ys;
      },
      delta);
  EXPECT_TRUE(err.ok()) << op << ": " << err.status();
  return err.ok() ? *err : 1e9;
}

// The gradients d(sum(op(inputs)[0] * grad_y)) / d inputs[i] for each i in `wrt`, built by
// AddGradients and run in a session; every input is fed as a placeholder of its dtype. Used to
// compare the float (oneDNN) path with the double (reference) path on the same values.
inline std::vector<Tensor> SymbolicGradients(const std::string& op, const std::vector<Tensor>& inputs,
                                             const std::vector<int>& wrt, const Tensor& grad_y, AttrMap attrs) {
  RegisterAllOps();
  Scope root = Scope::NewRootScope();
  std::vector<Input> args;
  std::vector<Output> phs;
  ClientSession::FeedDict feeds;
  for (const Tensor& t : inputs) {
    phs.push_back(ops::Placeholder(root, t.dtype(), PartialTensorShape(t.shape())));
    args.push_back(phs.back());
    feeds.emplace(phs.back(), t);
  }
  Operation node = ops::BuildOp(root, op, args, attrs);
  std::vector<Output> xs;
  for (int i : wrt) xs.push_back(phs[i]);
  std::vector<Output> grads = Gradients(root, {Output(node, 0)}, xs, {ops::Const(root, grad_y)});
  EXPECT_TRUE(root.ok()) << root.status();
  if (!root.ok()) return {};
  auto r = ClientSession(root).Run(feeds, grads);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::vector<Tensor>();
}

// SymbolicGradients on float inputs (oneDNN for the sliding-window ops) and on the same values
// as double (reference loops) agree within `tol`. Non-float inputs (sizes) are passed as they are.
inline void ExpectFloatGradientsMatchDouble(const std::string& op, const std::vector<Tensor>& float_inputs,
                                            const std::vector<int>& wrt, const Tensor& float_grad_y, AttrMap attrs,
                                            double tol = 1e-4) {
  std::vector<Tensor> double_inputs;
  for (const Tensor& t : float_inputs) double_inputs.push_back(t.dtype() == DT_FLOAT ? Cast<double>(t) : t);
  std::vector<Tensor> f = SymbolicGradients(op, float_inputs, wrt, float_grad_y, attrs);
  std::vector<Tensor> d = SymbolicGradients(op, double_inputs, wrt, Cast<double>(float_grad_y), attrs);
  ASSERT_EQ(f.size(), wrt.size());
  ASSERT_EQ(d.size(), wrt.size());
  for (size_t i = 0; i < wrt.size(); ++i) {
    SCOPED_TRACE(absl::StrCat(op, " gradient of input ", wrt[i]));
    EXPECT_EQ(f[i].dtype(), DT_FLOAT);
    ExpectClose(f[i], d[i], tol);
  }
}

}  // namespace dflow::nn_testing
