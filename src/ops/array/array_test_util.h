// Test helpers (for *_test.cc only) shared by the array op tests: tensor constructors, running
// one kernel (with constant inputs, so shape functions see the values, or through a
// KernelRunner with placeholders, so only the kernel checks), error expectations, and the
// numerical gradient check of one op.
#pragma once

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/math/cwise_test_util.h"
#include "ops/math/kernel_runner_test_util.h"
#include "ops/testing/kernel_test_util.h"
#include "train/gradient_checker.h"

namespace dflow::testing {

inline TensorShape S(std::initializer_list<int64_t> d) { return TensorShape(d); }
inline Tensor I32(std::vector<int32_t> v) {
  return MakeTensor<int32_t>(v, TensorShape{static_cast<int64_t>(v.size())});
}
inline Tensor I64(std::vector<int64_t> v) {
  return MakeTensor<int64_t>(v, TensorShape{static_cast<int64_t>(v.size())});
}

// 0, 1, 2, ... (as T) in `shape`.
template <typename T>
Tensor Iota(const TensorShape& shape, T start = T(0)) {
  std::vector<T> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(start + static_cast<T>(i));
  return MakeTensor<T>(v, shape);
}

// Smooth, distinct, non-integer doubles for gradient checks.
inline Tensor Doubles(const TensorShape& shape, double scale = 0.37) {
  std::vector<double> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * (static_cast<double>(i) + 1.0) - 0.11 * (i % 3);
  return MakeTensor<double>(v, shape);
}
inline Tensor Floats(const TensorShape& shape) {
  std::vector<float> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.25f * static_cast<float>(i) - 0.5f;
  return MakeTensor<float>(v, shape);
}

// All outputs of `op` on constant inputs; fails the test on error.
inline std::vector<Tensor> EvalAll(const std::string& op, const std::vector<Tensor>& inputs, AttrMap attrs = {}) {
  auto out = RunOpKernel(op, inputs, std::move(attrs));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? *out : std::vector<Tensor>{};
}
inline Tensor Eval(const std::string& op, const std::vector<Tensor>& inputs, AttrMap attrs = {}) {
  std::vector<Tensor> out = EvalAll(op, inputs, std::move(attrs));
  return out.empty() ? Tensor() : out[0];
}

// Runs the kernel alone (placeholder inputs of the given values' dtypes, so no shape function
// sees the values).
inline StatusOr<std::vector<Tensor>> RunKernelOnly(const std::string& op, const std::vector<Tensor>& inputs,
                                                   AttrMap attrs = {}) {
  std::vector<DType> types;
  for (const Tensor& t : inputs) types.push_back(t.dtype());
  ASSIGN_OR_RETURN(auto runner, KernelRunner::Create(op, types, std::move(attrs)));
  return runner->Run(inputs);
}

template <typename T>
void ExpectInvalid(const StatusOr<T>& s, absl::string_view text) {
  ASSERT_FALSE(s.ok()) << "expected an error containing: " << text;
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  EXPECT_NE(s.status().message().find(text), absl::string_view::npos) << s.status();
}

// The kernel rejects the inputs with `text` (and names the op and node), and so does building
// the node with the values known.
inline void ExpectKernelError(const std::string& op, const std::vector<Tensor>& inputs, AttrMap attrs,
                              absl::string_view text) {
  auto k = RunKernelOnly(op, inputs, attrs);
  ExpectInvalid(k, text);
  if (!k.ok()) {
    EXPECT_NE(k.status().message().find(absl::StrCat(op, " 'node'")), absl::string_view::npos) << k.status();
  }
}

// The largest gradient error of `op` (output `output`) with respect to the inputs listed in
// `wrt`; the other inputs are constants.
inline StatusOr<double> OpGradientError(const std::string& op, const std::vector<Tensor>& inputs,
                                        const std::vector<int>& wrt, AttrMap attrs = {}, int output = -1) {
  std::vector<Tensor> xs;
  for (int i : wrt) xs.push_back(inputs[i]);
  return MaxGradientError(xs, [&](GraphBuilder* b, const std::vector<NodeOut>& x) {
    std::vector<NodeOut> in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto it = std::find(wrt.begin(), wrt.end(), static_cast<int>(i));
      in.push_back(it != wrt.end() ? x[it - wrt.begin()] : b->Const(inputs[i], absl::StrCat("in", i)));
    }
    Node* n = b->AddNode(op, in, attrs);
    std::vector<NodeOut> ys;
    if (n == nullptr) return ys;
    for (int i = 0; i < n->num_outputs(); ++i) {
      if (output < 0 || i == output) ys.push_back({n, i});
    }
    return ys;
  });
}

#define EXPECT_GRAD_OK(expr, tol)            \
  do {                                       \
    auto _err = (expr);                      \
    ASSERT_TRUE(_err.ok()) << _err.status(); \
    EXPECT_LT(*_err, (tol));                 \
  } while (0)

}  // namespace dflow::testing
