// The geometry of TensorFlow's sliding-window ops (Conv2D, MaxPool, AvgPool and their
// gradients): attr parsing and validation, SAME/VALID/EXPLICIT output sizes and paddings, and the
// element strides of NHWC/NCHW tensors.
//
// TensorFlow's rules (GetWindowedOutputSizeVerbose): with effective window
// k_eff = (k - 1) * dilation + 1,
//   VALID:    out = (in - k_eff + stride) / stride, no padding;
//   SAME:     out = ceil(in / stride), pad_total = max((out - 1) * stride + k_eff - in, 0),
//             pad_before = pad_total / 2, pad_after = pad_total - pad_before;
//   EXPLICIT: out = (in + before + after - k_eff + stride) / stride.
// A negative out is InvalidArgument. All arithmetic is overflow-checked: attrs and static shapes
// come from outside.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "framework/attr_value.h"
#include "framework/shape_inference.h"
#include "tensor/tensor_shape.h"

namespace dflow {

enum class Padding { kSame, kValid, kExplicit };
enum class DataFormat { kNHWC, kNCHW };

// "SAME", "VALID" and, where `allow_explicit`, "EXPLICIT".
Status ParsePadding(absl::string_view s, bool allow_explicit, Padding* out);
// "NHWC" or "NCHW".
Status ParseDataFormat(absl::string_view s, DataFormat* out);

// Positions of the dims of a 4-D tensor (and of 4-element attr lists) in a data format.
struct DimIndex {
  int n, h, w, c;
};
inline DimIndex Dims4(DataFormat f) { return f == DataFormat::kNHWC ? DimIndex{0, 1, 2, 3} : DimIndex{0, 2, 3, 1}; }

// Element strides of a dense 4-D tensor of logical dims (n, h, w, c) stored in format `f`.
struct Strides4 {
  int64_t n, h, w, c;
};
inline Strides4 StridesOf(DataFormat f, int64_t h, int64_t w, int64_t c) {
  if (f == DataFormat::kNHWC) return {h * w * c, w * c, c, 1};
  return {c * h * w, w, 1, h * w};
}

// The shape of a 4-D tensor with logical dims (n, h, w, c) in format `f`.
StatusOr<TensorShape> Shape4(DataFormat f, int64_t n, int64_t h, int64_t w, int64_t c);

// One spatial dimension of a window op. -1 for `in` (unknown while building) gives out = -1.
struct WindowDim {
  int64_t in = 0, out = 0, window = 1, stride = 1, dilation = 1, pad_before = 0, pad_after = 0;
};
Status ComputeWindowDim(Padding padding, WindowDim* d);
// Shape functions: a VALID window larger than its (known) input is rejected when the graph is
// built, as TensorFlow's shape functions do ("Negative dimension size caused by subtracting").
Status CheckValidWindowFits(Padding padding, const WindowDim& d);

// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter attrs, validated as TensorFlow does:
// strides and dilations have 4 entries, 1 in the batch and depth positions and >= 1 elsewhere;
// explicit_paddings has 8 non-negative entries (zero for batch and depth) exactly when padding
// is EXPLICIT.
struct ConvAttrs {
  DataFormat format = DataFormat::kNHWC;
  Padding padding = Padding::kValid;
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t dilation_rows = 1, dilation_cols = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;  // EXPLICIT only
};
Status ParseConvAttrs(const AttrMap& attrs, ConvAttrs* out);

// The full geometry of one 2-D convolution. Filters are HWIO:
// [filter_rows, filter_cols, in_depth, out_depth].
struct Conv2DDims {
  DataFormat format = DataFormat::kNHWC;
  int64_t batch = 0, in_depth = 0, out_depth = 0;
  WindowDim rows, cols;

  TensorShape InputShape() const;
  TensorShape FilterShape() const;
  TensorShape OutputShape() const;
  // Multiply-adds of the forward convolution, saturated at INT64_MAX.
  int64_t Work() const;
};
// InvalidArgument when the ranks are not 4, the depths disagree, the filter has an empty window
// or the output size would be negative; the message names `op`, the node and the shapes.
StatusOr<Conv2DDims> MakeConv2DDims(const ConvAttrs& attrs, const TensorShape& input, const TensorShape& filter,
                                    absl::string_view op, absl::string_view node);

// MaxPool, AvgPool and their gradients: ksize and strides have 4 entries, 1 in the batch and
// depth positions and >= 1 elsewhere.
struct PoolAttrs {
  DataFormat format = DataFormat::kNHWC;
  Padding padding = Padding::kValid;
  int64_t window_rows = 1, window_cols = 1, stride_rows = 1, stride_cols = 1;
};
Status ParsePoolAttrs(const AttrMap& attrs, PoolAttrs* out);

struct PoolDims {
  DataFormat format = DataFormat::kNHWC;
  int64_t batch = 0, depth = 0;
  WindowDim rows, cols;

  TensorShape InputShape() const;
  TensorShape OutputShape() const;
  int64_t Work() const;  // input-window reads, saturated
};
StatusOr<PoolDims> MakePoolDims(const PoolAttrs& attrs, const TensorShape& input, absl::string_view op,
                                absl::string_view node);

// Reads a 1-D int32/int64 tensor of 4 non-negative sizes (Conv2DBackpropInput's input_sizes,
// AvgPoolGrad's orig_input_shape).
StatusOr<TensorShape> ShapeFromSizesTensor(const Tensor& t, absl::string_view what);

// Shape function of an op whose output 0 has the 4-D shape given by input `input` (named
// `what`): exact when the sizes are a constant, else 4 unknown dims.
Status ShapeFromSizesInput(InferenceContext* c, int input, absl::string_view what);

}  // namespace dflow
