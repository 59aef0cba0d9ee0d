// Test helpers (for *_test.cc only): a naive 7-loop 2-D convolution and its two adjoints, written
// from the definition independently of the kernels' geometry code, with TensorFlow's output-size
// and padding rules computed here.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/attr_value.h"
#include "tensor/tensor.h"

namespace dflow::nn_testing {

struct ConvCase {
  std::string format = "NHWC";
  std::string padding = "SAME";
  int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t n = 2, h = 7, w = 6, c = 3, kh = 3, kw = 2, oc = 4;
  std::vector<int64_t> pads;  // EXPLICIT: top, bottom, left, right

  std::string Name() const;
  AttrMap Attrs() const;
  TensorShape InputShape() const;
  TensorShape FilterShape() const { return TensorShape{kh, kw, c, oc}; }
  TensorShape OutputShape() const;
  // Output rows/cols and the top/left paddings by TensorFlow's rules.
  void Geometry(int64_t* oh, int64_t* ow, int64_t* pad_top, int64_t* pad_left) const;
};

// A 4-D tensor in `format` of logical dims (n, h, w, c), read and written by logical index.
struct Nhwc {
  std::string format;
  int64_t n, h, w, c;
  int64_t Index(int64_t in, int64_t ih, int64_t iw, int64_t ic) const {
    return format == "NHWC" ? ((in * h + ih) * w + iw) * c + ic : ((in * c + ic) * h + ih) * w + iw;
  }
};

namespace conv_test_internal {

inline void Dim(const std::string& padding, int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pa,
                int64_t* out, int64_t* before) {
  const int64_t eff = (k - 1) * d + 1;
  if (padding == "VALID") {
    *out = (in - eff + s) / s;
    *before = 0;
  } else if (padding == "SAME") {
    *out = (in + s - 1) / s;
    *before = std::max<int64_t>((*out - 1) * s + eff - in, 0) / 2;
  } else {
    *out = (in + pb + pa - eff + s) / s;
    *before = pb;
  }
}

// Calls f(n, oh, ow, oc, ih, iw, ic, kh, kw) for every term of the convolution sum: 7 loops
// (batch, output row, output col, output channel, filter row, filter col, input channel).
template <typename F>
void ForEachTerm(const ConvCase& k, F f) {
  int64_t oh_n, ow_n, pt, pl;
  k.Geometry(&oh_n, &ow_n, &pt, &pl);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t oh = 0; oh < oh_n; ++oh)
      for (int64_t ow = 0; ow < ow_n; ++ow)
        for (int64_t oc = 0; oc < k.oc; ++oc)
          for (int64_t kh = 0; kh < k.kh; ++kh)
            for (int64_t kw = 0; kw < k.kw; ++kw)
              for (int64_t ic = 0; ic < k.c; ++ic) {
                const int64_t ih = oh * k.stride_h - pt + kh * k.dil_h;
                const int64_t iw = ow * k.stride_w - pl + kw * k.dil_w;
                if (ih >= 0 && ih < k.h && iw >= 0 && iw < k.w) f(n, oh, ow, oc, ih, iw, ic, kh, kw);
              }
}

inline int64_t FilterIndex(const ConvCase& k, int64_t kh, int64_t kw, int64_t ic, int64_t oc) {
  return ((kh * k.kw + kw) * k.c + ic) * k.oc + oc;
}

}  // namespace conv_test_internal

using conv_test_internal::Dim;
using conv_test_internal::FilterIndex;
using conv_test_internal::ForEachTerm;

inline std::string ConvCase::Name() const {
  return absl::StrCat(format, " ", padding, " stride ", stride_h, "x", stride_w, " dilation ", dil_h, "x", dil_w,
                      " input ", InputShape().DebugString(), " filter ", FilterShape().DebugString());
}

inline AttrMap ConvCase::Attrs() const {
  AttrMap a;
  a["padding"] = padding;
  a["data_format"] = format;
  a["strides"] = format == "NHWC" ? std::vector<int64_t>{1, stride_h, stride_w, 1}
                                  : std::vector<int64_t>{1, 1, stride_h, stride_w};
  a["dilations"] = format == "NHWC" ? std::vector<int64_t>{1, dil_h, dil_w, 1}
                                    : std::vector<int64_t>{1, 1, dil_h, dil_w};
  if (padding == "EXPLICIT") {
    a["explicit_paddings"] = format == "NHWC" ? std::vector<int64_t>{0, 0, pads[0], pads[1], pads[2], pads[3], 0, 0}
                                              : std::vector<int64_t>{0, 0, 0, 0, pads[0], pads[1], pads[2], pads[3]};
  }
  return a;
}

inline TensorShape ConvCase::InputShape() const {
  return format == "NHWC" ? TensorShape{n, h, w, c} : TensorShape{n, c, h, w};
}

inline TensorShape ConvCase::OutputShape() const {
  int64_t oh, ow, pt, pl;
  Geometry(&oh, &ow, &pt, &pl);
  return format == "NHWC" ? TensorShape{n, oh, ow, oc} : TensorShape{n, oc, oh, ow};
}

inline void ConvCase::Geometry(int64_t* oh, int64_t* ow, int64_t* pad_top, int64_t* pad_left) const {
  const bool ex = padding == "EXPLICIT";
  Dim(padding, h, kh, stride_h, dil_h, ex ? pads[0] : 0, ex ? pads[1] : 0, oh, pad_top);
  Dim(padding, w, kw, stride_w, dil_w, ex ? pads[2] : 0, ex ? pads[3] : 0, ow, pad_left);
}

inline std::vector<double> NaiveConv(const ConvCase& k, const std::vector<double>& x, const std::vector<double>& f) {
  int64_t oh, ow, pt, pl;
  k.Geometry(&oh, &ow, &pt, &pl);
  const Nhwc in{k.format, k.n, k.h, k.w, k.c}, out{k.format, k.n, oh, ow, k.oc};
  std::vector<double> y(static_cast<size_t>(k.n * oh * ow * k.oc), 0.0);
  ForEachTerm(k, [&](int64_t n, int64_t oh, int64_t ow, int64_t oc, int64_t ih, int64_t iw, int64_t ic, int64_t kh,
                     int64_t kw) {
    y[out.Index(n, oh, ow, oc)] += x[in.Index(n, ih, iw, ic)] * f[FilterIndex(k, kh, kw, ic, oc)];
  });
  return y;
}

inline std::vector<double> NaiveConvBackpropInput(const ConvCase& k, const std::vector<double>& f,
                                                  const std::vector<double>& g) {
  int64_t oh, ow, pt, pl;
  k.Geometry(&oh, &ow, &pt, &pl);
  const Nhwc in{k.format, k.n, k.h, k.w, k.c}, out{k.format, k.n, oh, ow, k.oc};
  std::vector<double> dx(static_cast<size_t>(k.n * k.h * k.w * k.c), 0.0);
  ForEachTerm(k, [&](int64_t n, int64_t oh, int64_t ow, int64_t oc, int64_t ih, int64_t iw, int64_t ic, int64_t kh,
                     int64_t kw) {
    dx[in.Index(n, ih, iw, ic)] += f[FilterIndex(k, kh, kw, ic, oc)] * g[out.Index(n, oh, ow, oc)];
  });
  return dx;
}

inline std::vector<double> NaiveConvBackpropFilter(const ConvCase& k, const std::vector<double>& x,
                                                   const std::vector<double>& g) {
  int64_t oh, ow, pt, pl;
  k.Geometry(&oh, &ow, &pt, &pl);
  const Nhwc in{k.format, k.n, k.h, k.w, k.c}, out{k.format, k.n, oh, ow, k.oc};
  std::vector<double> df(static_cast<size_t>(k.kh * k.kw * k.c * k.oc), 0.0);
  ForEachTerm(k, [&](int64_t n, int64_t oh, int64_t ow, int64_t oc, int64_t ih, int64_t iw, int64_t ic, int64_t kh,
                     int64_t kw) {
    df[FilterIndex(k, kh, kw, ic, oc)] += x[in.Index(n, ih, iw, ic)] * g[out.Index(n, oh, ow, oc)];
  });
  return df;
}

}  // namespace dflow::nn_testing
