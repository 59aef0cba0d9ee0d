#include "ops/nn/sliding_window.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_join.h"

namespace dflow {
namespace {

bool CheckedMul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
bool CheckedAdd(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }

int64_t SaturatedProduct(std::initializer_list<int64_t> v) {
  int64_t p = 1;
  for (int64_t x : v) {
    if (x <= 0) return 0;
    if (!CheckedMul(p, x, &p)) return std::numeric_limits<int64_t>::max();
  }
  return p;
}

Status GetInts(const AttrMap& attrs, absl::string_view name, std::vector<int64_t>* out) {
  return GetAttr(attrs, name, out);
}

// A 4-entry window attr (strides, dilations, ksize): 1 in batch and depth, >= 1 spatially.
Status CheckWindowList(const std::vector<int64_t>& v, absl::string_view name, DataFormat f, int64_t* rows,
                       int64_t* cols) {
  if (v.size() != 4) {
    return errors::InvalidArgument("Sliding window ", name, " field must specify 4 dimensions, got ", v.size());
  }
  const DimIndex d = Dims4(f);
  if (v[d.n] != 1 || v[d.c] != 1) {
    return errors::InvalidArgument("Current implementation does not yet support ", name,
                                   " in the batch and depth dimensions (", name, " = [", absl::StrJoin(v, ", "), "])");
  }
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (v[d.h] < 1 || v[d.w] < 1 || v[d.h] > kMax || v[d.w] > kMax) {
    return errors::InvalidArgument("Sliding window ", name, " must be in [1, 2^31) for the spatial dimensions, got [",
                                   absl::StrJoin(v, ", "), "]");
  }
  *rows = v[d.h];
  *cols = v[d.w];
  return absl::OkStatus();
}

std::string ShapeString(const TensorShape& s) { return s.DebugString(); }

}  // namespace

Status ParsePadding(absl::string_view s, bool allow_explicit, Padding* out) {
  if (s == "SAME") *out = Padding::kSame;
  else if (s == "VALID") *out = Padding::kValid;
  else if (s == "EXPLICIT" && allow_explicit) *out = Padding::kExplicit;
  else {
    return errors::InvalidArgument("padding must be one of \"SAME\", \"VALID\"", allow_explicit ? ", \"EXPLICIT\"" : "",
                                   ", got \"", s, "\"");
  }
  return absl::OkStatus();
}

Status ParseDataFormat(absl::string_view s, DataFormat* out) {
  if (s == "NHWC") *out = DataFormat::kNHWC;
  else if (s == "NCHW") *out = DataFormat::kNCHW;
  else return errors::InvalidArgument("data_format must be \"NHWC\" or \"NCHW\", got \"", s, "\"");
  return absl::OkStatus();
}

StatusOr<TensorShape> Shape4(DataFormat f, int64_t n, int64_t h, int64_t w, int64_t c) {
  if (f == DataFormat::kNHWC) return TensorShape::FromDims({n, h, w, c});
  return TensorShape::FromDims({n, c, h, w});
}

Status ComputeWindowDim(Padding padding, WindowDim* d) {
  if (d->stride < 1 || d->dilation < 1 || d->window < 1) {
    return errors::InvalidArgument("window ", d->window, ", stride ", d->stride, " and dilation ", d->dilation,
                                   " must be positive");
  }
  int64_t eff;  // (window - 1) * dilation + 1
  if (!CheckedMul(d->window - 1, d->dilation, &eff) || !CheckedAdd(eff, 1, &eff)) {
    return errors::InvalidArgument("window ", d->window, " with dilation ", d->dilation, " is too large");
  }
  if (d->in < 0) {  // unknown while building
    d->out = -1;
    if (padding != Padding::kExplicit) d->pad_before = d->pad_after = -1;
    return absl::OkStatus();
  }
  int64_t out = 0;
  switch (padding) {
    case Padding::kValid:
      d->pad_before = d->pad_after = 0;
      // in - eff cannot overflow (both non-negative); adding the stride can.
      if (!CheckedAdd(d->in - eff, d->stride, &out))
        return errors::InvalidArgument("input size ", d->in, " is too large");
      out /= d->stride;  // truncates toward zero, as TensorFlow's does
      break;
    case Padding::kExplicit: {
      int64_t padded;
      if (d->pad_before < 0 || d->pad_after < 0 || !CheckedAdd(d->in, d->pad_before, &padded) ||
          !CheckedAdd(padded, d->pad_after, &padded)) {
        return errors::InvalidArgument("explicit paddings ", d->pad_before, ", ", d->pad_after, " are invalid");
      }
      if (!CheckedAdd(padded - eff, d->stride, &out))
        return errors::InvalidArgument("input size ", d->in, " is too large");
      out /= d->stride;  // truncates toward zero, as TensorFlow's does
      break;
    }
    case Padding::kSame: {
      out = d->in / d->stride + (d->in % d->stride != 0 ? 1 : 0);
      int64_t need = 0;
      if (out > 0) {
        if (!CheckedMul(out - 1, d->stride, &need) || !CheckedAdd(need, eff, &need)) {
          return errors::InvalidArgument("window ", eff, " with stride ", d->stride, " is too large");
        }
        need -= d->in;
      }
      need = std::max<int64_t>(need, 0);
      d->pad_before = need / 2;
      d->pad_after = need - d->pad_before;
      break;
    }
  }
  if (out < 0) {
    return errors::InvalidArgument("Computed output size would be negative [input_size: ", d->in,
                                   ", effective_filter_size: ", eff, ", stride: ", d->stride, "]");
  }
  d->out = out;
  return absl::OkStatus();
}

Status CheckValidWindowFits(Padding padding, const WindowDim& d) {
  if (padding != Padding::kValid || d.in < 0 || d.window < 1) return absl::OkStatus();
  const int64_t eff = (d.window - 1) * d.dilation + 1;  // ComputeWindowDim checked it
  if (d.in < eff) {
    return errors::InvalidArgument("Negative dimension size caused by subtracting ", eff, " from ", d.in);
  }
  return absl::OkStatus();
}

Status ParseConvAttrs(const AttrMap& attrs, ConvAttrs* out) {
  std::string format, padding;
  RETURN_IF_ERROR(GetAttr(attrs, "data_format", &format));
  RETURN_IF_ERROR(ParseDataFormat(format, &out->format));
  RETURN_IF_ERROR(GetAttr(attrs, "padding", &padding));
  RETURN_IF_ERROR(ParsePadding(padding, /*allow_explicit=*/true, &out->padding));
  std::vector<int64_t> strides, dilations, explicit_paddings;
  RETURN_IF_ERROR(GetInts(attrs, "strides", &strides));
  RETURN_IF_ERROR(CheckWindowList(strides, "strides", out->format, &out->stride_rows, &out->stride_cols));
  if (attrs.count("dilations") != 0) {
    RETURN_IF_ERROR(GetInts(attrs, "dilations", &dilations));
    RETURN_IF_ERROR(CheckWindowList(dilations, "dilations", out->format, &out->dilation_rows, &out->dilation_cols));
  }
  if (attrs.count("explicit_paddings") != 0) RETURN_IF_ERROR(GetInts(attrs, "explicit_paddings", &explicit_paddings));
  if (out->padding != Padding::kExplicit) {
    if (!explicit_paddings.empty()) {
      return errors::InvalidArgument("explicit_paddings must be empty when padding is not EXPLICIT, got [",
                                     absl::StrJoin(explicit_paddings, ", "), "]");
    }
    return absl::OkStatus();
  }
  if (explicit_paddings.size() != 8) {
    return errors::InvalidArgument("explicit_paddings must have 8 entries for EXPLICIT padding, got ",
                                   explicit_paddings.size());
  }
  const DimIndex d = Dims4(out->format);
  for (int64_t p : explicit_paddings) {
    if (p < 0) {
      return errors::InvalidArgument("explicit_paddings must be non-negative, got [",
                                     absl::StrJoin(explicit_paddings, ", "), "]");
    }
  }
  if (explicit_paddings[2 * d.n] != 0 || explicit_paddings[2 * d.n + 1] != 0 || explicit_paddings[2 * d.c] != 0 ||
      explicit_paddings[2 * d.c + 1] != 0) {
    return errors::InvalidArgument("Nonzero explicit padding in the batch or depth dimensions is not supported: [",
                                   absl::StrJoin(explicit_paddings, ", "), "]");
  }
  out->pad_top = explicit_paddings[2 * d.h];
  out->pad_bottom = explicit_paddings[2 * d.h + 1];
  out->pad_left = explicit_paddings[2 * d.w];
  out->pad_right = explicit_paddings[2 * d.w + 1];
  return absl::OkStatus();
}

TensorShape Conv2DDims::InputShape() const { return Shape4(format, batch, rows.in, cols.in, in_depth).value(); }
TensorShape Conv2DDims::FilterShape() const { return TensorShape{rows.window, cols.window, in_depth, out_depth}; }
TensorShape Conv2DDims::OutputShape() const { return Shape4(format, batch, rows.out, cols.out, out_depth).value(); }
int64_t Conv2DDims::Work() const {
  return SaturatedProduct({batch, rows.out, cols.out, out_depth, rows.window, cols.window, in_depth});
}

StatusOr<Conv2DDims> MakeConv2DDims(const ConvAttrs& attrs, const TensorShape& input, const TensorShape& filter,
                                    absl::string_view op, absl::string_view node) {
  auto fail = [&](absl::string_view why) {
    return errors::InvalidArgument(op, " '", node, "': ", why, " (input ", ShapeString(input), ", filter ",
                                   ShapeString(filter), ")");
  };
  if (input.dims() != 4) return fail("input must be 4-dimensional");
  if (filter.dims() != 4) return fail("filter must be 4-dimensional [rows, cols, in_depth, out_depth]");
  const DimIndex d = Dims4(attrs.format);
  Conv2DDims r;
  r.format = attrs.format;
  r.batch = input.dim_size(d.n);
  r.in_depth = input.dim_size(d.c);
  r.out_depth = filter.dim_size(3);
  if (filter.dim_size(2) != r.in_depth) return fail("input depth must equal the filter's in_depth (dimension 2)");
  if (filter.dim_size(0) < 1 || filter.dim_size(1) < 1) return fail("the filter window must not be empty");
  r.rows = WindowDim{input.dim_size(d.h), 0, filter.dim_size(0), attrs.stride_rows, attrs.dilation_rows, attrs.pad_top,
                     attrs.pad_bottom};
  r.cols = WindowDim{input.dim_size(d.w), 0, filter.dim_size(1), attrs.stride_cols, attrs.dilation_cols, attrs.pad_left,
                     attrs.pad_right};
  Status s = ComputeWindowDim(attrs.padding, &r.rows);
  if (s.ok()) s = ComputeWindowDim(attrs.padding, &r.cols);
  if (!s.ok()) return fail(s.message());
  if (!Shape4(r.format, r.batch, r.rows.out, r.cols.out, r.out_depth).ok()) return fail("the output is too large");
  return r;
}

Status ParsePoolAttrs(const AttrMap& attrs, PoolAttrs* out) {
  std::string format, padding;
  RETURN_IF_ERROR(GetAttr(attrs, "data_format", &format));
  RETURN_IF_ERROR(ParseDataFormat(format, &out->format));
  RETURN_IF_ERROR(GetAttr(attrs, "padding", &padding));
  RETURN_IF_ERROR(ParsePadding(padding, /*allow_explicit=*/false, &out->padding));
  std::vector<int64_t> ksize, strides;
  RETURN_IF_ERROR(GetInts(attrs, "ksize", &ksize));
  RETURN_IF_ERROR(CheckWindowList(ksize, "ksize", out->format, &out->window_rows, &out->window_cols));
  RETURN_IF_ERROR(GetInts(attrs, "strides", &strides));
  return CheckWindowList(strides, "strides", out->format, &out->stride_rows, &out->stride_cols);
}

TensorShape PoolDims::InputShape() const { return Shape4(format, batch, rows.in, cols.in, depth).value(); }
TensorShape PoolDims::OutputShape() const { return Shape4(format, batch, rows.out, cols.out, depth).value(); }
int64_t PoolDims::Work() const {
  return SaturatedProduct({batch, rows.out, cols.out, depth, rows.window, cols.window});
}

StatusOr<PoolDims> MakePoolDims(const PoolAttrs& attrs, const TensorShape& input, absl::string_view op,
                                absl::string_view node) {
  auto fail = [&](absl::string_view why) {
    return errors::InvalidArgument(op, " '", node, "': ", why, " (input ", ShapeString(input), ")");
  };
  if (input.dims() != 4) return fail("input must be 4-dimensional");
  const DimIndex d = Dims4(attrs.format);
  PoolDims r;
  r.format = attrs.format;
  r.batch = input.dim_size(d.n);
  r.depth = input.dim_size(d.c);
  r.rows = WindowDim{input.dim_size(d.h), 0, attrs.window_rows, attrs.stride_rows, 1, 0, 0};
  r.cols = WindowDim{input.dim_size(d.w), 0, attrs.window_cols, attrs.stride_cols, 1, 0, 0};
  Status s = ComputeWindowDim(attrs.padding, &r.rows);
  if (s.ok()) s = ComputeWindowDim(attrs.padding, &r.cols);
  if (!s.ok()) return fail(s.message());
  return r;
}

StatusOr<TensorShape> ShapeFromSizesTensor(const Tensor& t, absl::string_view what) {
  if (t.dims() != 1 || t.NumElements() != 4) {
    return errors::InvalidArgument(what, " must be a vector of 4 sizes, got shape ", t.shape().DebugString());
  }
  std::vector<int64_t> dims(4);
  for (int i = 0; i < 4; ++i) {
    if (t.dtype() == DT_INT32) dims[i] = t.data<int32_t>()[i];
    else if (t.dtype() == DT_INT64) dims[i] = t.data<int64_t>()[i];
    else return errors::InvalidArgument(what, " must be int32 or int64, not ", DTypeString(t.dtype()));
    if (dims[i] < 0) return errors::InvalidArgument(what, " has a negative size: [", absl::StrJoin(dims, ", "), "]");
  }
  auto s = TensorShape::FromDims(dims);
  if (!s.ok()) return errors::Annotate(s.status(), absl::StrCat(what, ": "));
  return s;
}

Status ShapeFromSizesInput(InferenceContext* c, int input, absl::string_view what) {
  if (const Tensor* t = c->input_tensor(input)) {
    ASSIGN_OR_RETURN(TensorShape s, ShapeFromSizesTensor(*t, what));
    c->set_output(0, s);
    return absl::OkStatus();
  }
  const PartialTensorShape& s = c->input(input);
  if (!s.unknown_rank() && (s.dims() != 1 || (s.dim_size(0) >= 0 && s.dim_size(0) != 4))) {
    return errors::InvalidArgument(what, " must be a vector of 4 sizes, got shape ", s.DebugString());
  }
  c->set_output(0, PartialTensorShape::UnknownOfRank(4));
  return absl::OkStatus();
}

}  // namespace dflow
