// Row kernels shared by Softmax, LogSoftmax and the cross-entropy losses: numerically stable
// (the row maximum is subtracted before exponentiating), accumulating in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace dflow {

// log(sum(exp(x[0..n)))); -inf for an empty row. A row whose maximum is infinite (a +inf, or
// all -inf) gives NaN, as TensorFlow's kernels do: they subtract the maximum (inf - inf).
template <typename T>
double LogSumExp(const T* x, int64_t n) {
  if (n == 0) return -INFINITY;
  double m = x[0];
  for (int64_t j = 1; j < n; ++j) m = std::max<double>(m, x[j]);
  if (std::isinf(m)) return NAN;
  double s = 0;
  for (int64_t j = 0; j < n; ++j) s += std::exp(double(x[j]) - m);
  return m + std::log(s);
}

// y = softmax(x) for one row of n; returns log(sum(exp(x))) (-inf for an empty row). One
// exponential per element: softmax = exp(x - m) / s and log-sum-exp = m + log(s). A row whose
// maximum is infinite (all -inf, or a +inf) is NaN throughout, as in TensorFlow (x - max is NaN
// at the maximum, and the NaN reaches every element through the sum).
template <typename T>
double SoftmaxRowAndLogSumExp(const T* x, int64_t n, T* y) {
  if (n == 0) return -INFINITY;
  double m = x[0];
  for (int64_t j = 1; j < n; ++j) m = std::max<double>(m, x[j]);
  if (std::isinf(m)) {
    for (int64_t j = 0; j < n; ++j) y[j] = static_cast<T>(NAN);
    return NAN;
  }
  double s = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double e = std::exp(double(x[j]) - m);
    y[j] = static_cast<T>(e);
    s += e;
  }
  const double inv = 1.0 / s;
  for (int64_t j = 0; j < n; ++j) y[j] = static_cast<T>(double(y[j]) * inv);
  return m + std::log(s);
}

// y = softmax(x) for one row of n.
template <typename T>
void SoftmaxRow(const T* x, int64_t n, T* y) {
  SoftmaxRowAndLogSumExp(x, n, y);
}

}  // namespace dflow
