// Helpers of the while-loop gradient tests: central differences through a session.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "dflow/dflow.h"
#include "gtest/gtest.h"

namespace dflow {

using V = std::vector<Output>;

inline Tensor Doubles(std::vector<double> v, const TensorShape& shape) {
  return Tensor::FromValues<double>(v, shape).value();
}

// The largest |analytic - central difference| over every element of every x, for the scalar y.
inline double MaxError(const ClientSession& session, const V& xs, std::vector<Tensor> values, const Output& y,
                       const V& grads, const ClientSession::FeedDict& extra = {}) {
  auto feeds = [&](const std::vector<Tensor>& vals) {
    ClientSession::FeedDict f = extra;
    for (size_t i = 0; i < xs.size(); ++i) f.emplace(xs[i], vals[i]);
    return f;
  };
  auto analytic = session.Run(feeds(values), grads);
  EXPECT_TRUE(analytic.ok()) << analytic.status();
  if (!analytic.ok()) return 1e9;
  double worst = 0;
  const double h = 1e-6;
  for (size_t i = 0; i < xs.size(); ++i) {
    for (int64_t k = 0; k < values[i].NumElements(); ++k) {
      auto copy = [](const Tensor& t) {
        return Doubles(std::vector<double>(t.flat<double>().begin(), t.flat<double>().end()), t.shape());
      };
      std::vector<Tensor> plus = values, minus = values;
      plus[i] = copy(values[i]);
      minus[i] = copy(values[i]);
      plus[i].flat<double>()[k] += h;
      minus[i].flat<double>()[k] -= h;
      auto yp = session.Run(feeds(plus), {y});
      auto ym = session.Run(feeds(minus), {y});
      EXPECT_TRUE(yp.ok() && ym.ok());
      if (!yp.ok() || !ym.ok()) return 1e9;
      double numeric = ((*yp)[0].scalar<double>() - (*ym)[0].scalar<double>()) / (2 * h);
      worst = std::max(worst, std::abs(numeric - (*analytic)[i].flat<double>()[k]));
    }
  }
  return worst;
}

}  // namespace dflow
