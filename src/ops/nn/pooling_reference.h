// Reference loops of max and average pooling and their gradients (and MaxPoolGrad's), for NHWC
// and NCHW. Padded
// positions never take part: a max is over the real elements of a window, an average divides by
// their count (TensorFlow's SAME semantics). Max-pool gradients go to the first maximum of each
// window in row-major window order.
#pragma once

#include <algorithm>
#include <limits>
#include <vector>

#include "ops/nn/sliding_window.h"

namespace dflow {
namespace pool_internal {

// The real rows [begin, end) of output row `o` of a window dim.
inline void WindowRange(const WindowDim& w, int64_t o, int64_t* begin, int64_t* end) {
  const int64_t start = o * w.stride - w.pad_before;
  *begin = std::max<int64_t>(start, 0);
  *end = std::min<int64_t>(start + w.window, w.in);
}

// Calls f(n, input strides, output strides, output offset of channel 0, h0, h1, w0, w1) per
// output position, [h0, h1) x [w0, w1) being the real input rows and columns of its window.
template <typename F>
void ForEachWindow(const PoolDims& d, F f) {
  const Strides4 is = StridesOf(d.format, d.rows.in, d.cols.in, d.depth);
  const Strides4 os = StridesOf(d.format, d.rows.out, d.cols.out, d.depth);
  for (int64_t n = 0; n < d.batch; ++n) {
    for (int64_t oh = 0; oh < d.rows.out; ++oh) {
      int64_t h0, h1;
      WindowRange(d.rows, oh, &h0, &h1);
      for (int64_t ow = 0; ow < d.cols.out; ++ow) {
        int64_t w0, w1;
        WindowRange(d.cols, ow, &w0, &w1);
        f(n, is, os, n * os.n + oh * os.h + ow * os.w, h0, h1, w0, w1);
      }
    }
  }
}

}  // namespace pool_internal

template <typename T>
void ReferenceMaxPool(const PoolDims& d, const T* in, T* out) {
  pool_internal::ForEachWindow(d, [&](int64_t n, const Strides4& is, const Strides4& os, int64_t o, int64_t h0,
                                      int64_t h1, int64_t w0, int64_t w1) {
    for (int64_t c = 0; c < d.depth; ++c) {
      T m = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                 : std::numeric_limits<T>::lowest();
      for (int64_t h = h0; h < h1; ++h)
        for (int64_t w = w0; w < w1; ++w) m = std::max(m, in[n * is.n + h * is.h + w * is.w + c * is.c]);
      out[o + c * os.c] = m;
    }
  });
}

template <typename T>
void ReferenceAvgPool(const PoolDims& d, const T* in, T* out) {
  pool_internal::ForEachWindow(d, [&](int64_t n, const Strides4& is, const Strides4& os, int64_t o, int64_t h0,
                                      int64_t h1, int64_t w0, int64_t w1) {
    const double count = double(std::max<int64_t>((h1 - h0) * (w1 - w0), 1));
    for (int64_t c = 0; c < d.depth; ++c) {
      double s = 0;
      for (int64_t h = h0; h < h1; ++h)
        for (int64_t w = w0; w < w1; ++w) s += in[n * is.n + h * is.h + w * is.w + c * is.c];
      out[o + c * os.c] = static_cast<T>(s / count);
    }
  });
}

// in_backprop (shaped like the input) = the gradient `grad` (shaped like the output) routed to
// each window's maximum of `in`.
template <typename T>
void ReferenceMaxPoolGrad(const PoolDims& d, const T* in, const T* grad, T* in_backprop) {
  std::vector<double> acc(static_cast<size_t>(d.InputShape().num_elements()), 0.0);
  pool_internal::ForEachWindow(d, [&](int64_t n, const Strides4& is, const Strides4& os, int64_t o, int64_t h0,
                                      int64_t h1, int64_t w0, int64_t w1) {
    for (int64_t c = 0; c < d.depth; ++c) {
      int64_t best = -1;
      for (int64_t h = h0; h < h1; ++h) {
        for (int64_t w = w0; w < w1; ++w) {
          const int64_t i = n * is.n + h * is.h + w * is.w + c * is.c;
          if (best < 0 || in[i] > in[best]) best = i;
        }
      }
      if (best >= 0) acc[best] += grad[o + c * os.c];
    }
  });
  for (size_t i = 0; i < acc.size(); ++i) in_backprop[i] = static_cast<T>(acc[i]);
}

// out (shaped like the output) = for each window, `grad` (shaped like the input) at the
// window's first maximum of `in`: MaxPoolGrad's adjoint, so the gradient of MaxPoolGrad.
template <typename T>
void ReferenceMaxPoolGradGrad(const PoolDims& d, const T* in, const T* grad, T* out) {
  pool_internal::ForEachWindow(d, [&](int64_t n, const Strides4& is, const Strides4& os, int64_t o, int64_t h0,
                                      int64_t h1, int64_t w0, int64_t w1) {
    for (int64_t c = 0; c < d.depth; ++c) {
      int64_t best = -1;
      for (int64_t h = h0; h < h1; ++h) {
        for (int64_t w = w0; w < w1; ++w) {
          const int64_t i = n * is.n + h * is.h + w * is.w + c * is.c;
          if (best < 0 || in[i] > in[best]) best = i;
        }
      }
      out[o + c * os.c] = best >= 0 ? grad[best] : T(0);
    }
  });
}

// in_backprop = `grad` spread evenly over the real elements of each window.
template <typename T>
void ReferenceAvgPoolGrad(const PoolDims& d, const T* grad, T* in_backprop) {
  std::vector<double> acc(static_cast<size_t>(d.InputShape().num_elements()), 0.0);
  pool_internal::ForEachWindow(d, [&](int64_t n, const Strides4& is, const Strides4& os, int64_t o, int64_t h0,
                                      int64_t h1, int64_t w0, int64_t w1) {
    const double count = double(std::max<int64_t>((h1 - h0) * (w1 - w0), 1));
    for (int64_t c = 0; c < d.depth; ++c) {
      const double g = grad[o + c * os.c] / count;
      for (int64_t h = h0; h < h1; ++h)
        for (int64_t w = w0; w < w1; ++w) acc[n * is.n + h * is.h + w * is.w + c * is.c] += g;
    }
  });
  for (size_t i = 0; i < acc.size(); ++i) in_backprop[i] = static_cast<T>(acc[i]);
}

}  // namespace dflow
