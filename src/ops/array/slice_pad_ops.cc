// Slice, Pad, PadV2 and their gradients (each is the other's adjoint: the gradient of a slice
// pads it back to the input's shape with zeros, the gradient of a pad slices the padding off).
#include <string>
#include <vector>

#include "framework/op_kernel.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"
#include "ops/array/array_util.h"
#include "ops/array/grad_util.h"

namespace dflow {
namespace {

using namespace ::dflow::array;  // NOLINT: the family's own helpers

// ---- Slice ----

Status SliceShape(InferenceContext* c) {
  PartialTensorShape bs, ss;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &bs));
  RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &ss));
  const PartialTensorShape& in = c->input(0);
  DimVector begin, size;
  ASSIGN_OR_RETURN(bool known_begin, ConstIndexVector(c, 1, "begin", &begin));
  ASSIGN_OR_RETURN(bool known_size, ConstIndexVector(c, 2, "size", &size));
  int rank = in.dims();
  if (rank < 0 && bs.dim_size(0) >= 0) rank = static_cast<int>(bs.dim_size(0));
  if (rank < 0 && ss.dim_size(0) >= 0) rank = static_cast<int>(ss.dim_size(0));
  if (rank < 0) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  for (const PartialTensorShape* s : {&bs, &ss}) {
    if (s->dim_size(0) >= 0 && s->dim_size(0) != rank) {
      return errors::InvalidArgument("Expected begin and size arguments to be 1-D tensors of size ", rank,
                                     ", but got shapes ", bs.DebugString(), " and ", ss.DebugString());
    }
  }
  // As TensorFlow's shape function: only a size below -1, and a size of -1 from a begin beyond
  // the dimension, fail here; other out-of-range begins and sizes are the kernel's to reject.
  std::vector<int64_t> out(rank, -1);
  for (int d = 0; d < rank; ++d) {
    const int64_t dim = in.unknown_rank() ? -1 : in.dim_size(d);
    const bool b_known = known_begin;
    if (!known_size) continue;
    if (size[d] < -1) return errors::InvalidArgument("Expected size[", d, "] >= -1, but got ", size[d]);
    if (size[d] == -1) {
      if (b_known && dim >= 0 && begin[d] > dim) {
        return errors::InvalidArgument("Expected begin[", d, "] in [0, ", dim, "], but got ", begin[d]);
      }
      if (b_known && dim >= 0 && begin[d] >= 0) out[d] = dim - begin[d];
      continue;
    }
    out[d] = size[d];
  }
  ASSIGN_OR_RETURN(PartialTensorShape s, PartialTensorShape::FromDims(out));
  c->set_output(0, std::move(s));
  return absl::OkStatus();
}

class SliceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    DimVector begin, size;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexVector(ctx->input(1), "begin", &begin)));
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexVector(ctx->input(2), "size", &size)));
    const int rank = input.dims();
    OP_REQUIRES(ctx, static_cast<int>(begin.size()) == rank && static_cast<int>(size.size()) == rank,
                KernelError(*this, "Expected begin and size arguments to be 1-D tensors of size ", rank,
                            ", but got shapes ", ShapeStr(ctx->input(1)), " and ", ShapeStr(ctx->input(2)),
                            " instead (input shape ", ShapeStr(input), ")"));
    TensorShape out_shape;
    bool identity = true;
    int first_partial = -1;  // the first dimension not taken whole
    for (int d = 0; d < rank; ++d) {
      const int64_t dim = input.dim_size(d), b = begin[d];
      OP_REQUIRES(ctx, b >= 0 && b <= dim,
                  KernelError(*this, "Expected begin[", d, "] in [0, ", dim, "], but got ", b, " (input shape ",
                              ShapeStr(input), ")"));
      const int64_t s = size[d] == -1 ? dim - b : size[d];
      OP_REQUIRES(ctx, s >= 0 && s <= dim - b,
                  KernelError(*this, "Expected size[", d, "] in [0, ", dim - b, "], but got ", size[d],
                              " (input shape ", ShapeStr(input), ")"));
      out_shape.AddDimUnchecked(s);
      if (b != 0 || s != dim) {
        identity = false;
        if (first_partial == -1) first_partial = d;
      }
    }
    if (identity) {
      ctx->set_output(0, input);
      return;
    }
    if (first_partial == 0) {
      // Only the first dimension is cut, and the rest are whole: a contiguous range of rows.
      bool rest_whole = true;
      for (int d = 1; d < rank; ++d) rest_whole &= out_shape.dim_size(d) == input.dim_size(d);
      if (rest_whole) {
        OP_REQUIRES_ASSIGN(ctx, Tensor rows, input.Slice(begin[0], begin[0] + out_shape.dim_size(0)));
        ctx->set_output(0, std::move(rows));
        return;
      }
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const DimVector strides = Strides(input.shape());
    int64_t start = 0;
    for (int d = 0; d < rank; ++d) start += begin[d] * strides[d];
    const bool ok = VisitStorage(input.dtype(), [&]<typename E>() {
      GatherBox(StorageData<E>(input), start, out_shape.dim_sizes(), strides, StorageData<E>(out));
    });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(input.dtype())));
  }
};

// ---- Pad, PadV2 ----

Status ReadPaddings(const Tensor& p, int rank, DimVector* out) {
  if (p.dims() != 2 || p.dim_size(1) != 2) {
    return errors::InvalidArgument("paddings must be a matrix with 2 columns, got shape ", ShapeStr(p));
  }
  if (p.dim_size(0) != rank) {
    return errors::InvalidArgument("The first dimension of paddings must be the rank of inputs (", rank,
                                   "), got paddings of shape ", ShapeStr(p));
  }
  ASSIGN_OR_RETURN(Tensor flat, p.Reshaped(TensorShape{p.NumElements()}));
  RETURN_IF_ERROR(ReadIndexVector(flat, "paddings", out));
  for (size_t i = 0; i < out->size(); ++i) {
    if ((*out)[i] < 0) {
      return errors::InvalidArgument("Paddings must be non-negative: paddings[", i / 2, "] = [", (*out)[i & ~size_t{1}],
                                     ", ", (*out)[i | 1], "]");
    }
  }
  return absl::OkStatus();
}

Status PadShape(InferenceContext* c) {
  PartialTensorShape p;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 2, &p));
  if (p.dim_size(1) >= 0 && p.dim_size(1) != 2) {
    return errors::InvalidArgument("paddings must be a matrix with 2 columns, got shape ", p.DebugString());
  }
  if (c->num_inputs() > 2) {
    PartialTensorShape scalar;
    RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &scalar));
  }
  const PartialTensorShape& in = c->input(0);
  int rank = in.dims();
  if (rank >= 0 && p.dim_size(0) >= 0 && p.dim_size(0) != rank) {
    return errors::InvalidArgument("The first dimension of paddings must be the rank of inputs (", rank,
                                   "), got paddings of shape ", p.DebugString());
  }
  if (rank < 0 && p.dim_size(0) >= 0) rank = static_cast<int>(p.dim_size(0));
  if (rank < 0) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  const Tensor* pt = c->input_tensor(1);
  if (pt == nullptr) {
    c->set_output(0, PartialTensorShape::UnknownOfRank(rank));
    return absl::OkStatus();
  }
  DimVector pads;
  RETURN_IF_ERROR(ReadPaddings(*pt, rank, &pads));
  std::vector<int64_t> out(rank, -1);
  for (int d = 0; d < rank; ++d) {
    const int64_t dim = in.unknown_rank() ? -1 : in.dim_size(d);
    if (dim >= 0) {
      if (pads[2 * d] > kMaxElements || pads[2 * d + 1] > kMaxElements - pads[2 * d] - dim) {
        return errors::InvalidArgument("Padding dimension ", d, " makes it too large");
      }
      out[d] = pads[2 * d] + dim + pads[2 * d + 1];
    }
  }
  ASSIGN_OR_RETURN(PartialTensorShape s, PartialTensorShape::FromDims(out));
  c->set_output(0, std::move(s));
  return absl::OkStatus();
}

class PadOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const int rank = input.dims();
    DimVector pads;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadPaddings(ctx->input(1), rank, &pads)));
    if (num_inputs() > 2) {
      OP_REQUIRES(ctx, ctx->input(2).dims() == 0,
                  KernelError(*this, "constant_values must be a scalar, got shape ", ShapeStr(ctx->input(2))));
    }
    DimVector out_dims(rank);
    for (int d = 0; d < rank; ++d) {
      OP_REQUIRES(ctx, pads[2 * d] <= kMaxElements && pads[2 * d + 1] <= kMaxElements - pads[2 * d] - input.dim_size(d),
                  KernelError(*this, "padding dimension ", d, " of input shape ", ShapeStr(input),
                              " makes it too large"));
      out_dims[d] = pads[2 * d] + input.dim_size(d) + pads[2 * d + 1];
    }
    OP_REQUIRES_ASSIGN(ctx, TensorShape out_shape, MakeShape(*this, out_dims));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const DimVector out_strides = Strides(out_shape);
    int64_t start = 0;
    for (int d = 0; d < rank; ++d) start += pads[2 * d] * out_strides[d];
    const bool ok = VisitStorage(input.dtype(), [&]<typename E>() {
      const E value = num_inputs() > 2 ? StorageData<E>(ctx->input(2))[0] : E{};
      FillN(StorageData<E>(out), out->NumElements(), value);
      ScatterBox(StorageData<E>(input), input.shape().dim_sizes(), out_strides, start, StorageData<E>(out));
    });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(input.dtype())));
  }
};

// ---- gradients ----

// Slice: pad the gradient back with zeros: before = begin, after = shape(x) - begin - shape(y).
Status SliceGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const NodeOut begin = c->inputs[1];
  const DType idx = ValueType(begin);
  NodeOut after = b->Op("Sub", {b->Op("Sub", {ShapeOf(b, c->inputs[0], idx), begin}), ShapeOf(b, c->outputs[0], idx)});
  NodeOut paddings = b->Op("Pack", {begin, after}, {{"axis", int64_t{1}}});
  c->grad_inputs[0] = b->Op("Pad", {c->grad_outputs[0], paddings});
  return b->status();
}

// Pad: slice the padding off: begin = paddings[:, 0], size = shape(x).
Status PadGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const NodeOut x = c->inputs[0], paddings = c->inputs[1];
  const DType idx = ValueType(paddings);
  NodeOut before = b->Op("Slice", {paddings, IndexConst(b, idx, {0, 0}), IndexConst(b, idx, {-1, 1})});
  NodeOut begin = b->Op("Reshape", {before, IndexConst(b, DT_INT32, {-1})});
  const NodeOut grad = c->grad_outputs[0];
  c->grad_inputs[0] = b->Op("Slice", {grad, begin, ShapeOf(b, x, idx)});
  RETURN_IF_ERROR(b->status());
  if (c->inputs.size() > 2 && OpRegistered("Sum")) {
    // PadV2: every padded element is constant_values, so it collects the rest of the gradient.
    ASSIGN_OR_RETURN(NodeOut total, SumAll(b, grad));
    ASSIGN_OR_RETURN(NodeOut inner, SumAll(b, c->grad_inputs[0]));
    c->grad_inputs[2] = b->Op("Sub", {total, inner});
  }
  return b->status();
}

}  // namespace

void RegisterSlicePadOps() {
  RegisterOp(OpDefBuilder("Slice")
                 .Input("input: T")
                 .Input("begin: Index")
                 .Input("size: Index")
                 .Output("output: T")
                 .Attr("T: type")
                 .Attr("Index: {int32, int64}")
                 .SetShapeFn(SliceShape)
                 .Doc("The box of `size` starting at `begin` (size -1: to the end of that dimension)."));
  RegisterOp(OpDefBuilder("Pad")
                 .Input("input: T")
                 .Input("paddings: Tpaddings")
                 .Output("output: T")
                 .Attr("T: type")
                 .Attr("Tpaddings: {int32, int64} = int32")
                 .SetShapeFn(PadShape)
                 .Doc("Pads with zeros: paddings[d] = [before, after] elements for dimension d."));
  RegisterOp(OpDefBuilder("PadV2")
                 .Input("input: T")
                 .Input("paddings: Tpaddings")
                 .Input("constant_values: T")
                 .Output("output: T")
                 .Attr("T: type")
                 .Attr("Tpaddings: {int32, int64} = int32")
                 .SetShapeFn(PadShape)
                 .Doc("Pads with constant_values: paddings[d] = [before, after] elements for dimension d."));
  RegisterKernel<SliceOp>(KernelBuilder("Slice"));
  RegisterKernel<PadOp>(KernelBuilder("Pad"));
  RegisterKernel<PadOp>(KernelBuilder("PadV2"));
  RegisterGradient("Slice", SliceGrad);
  RegisterGradient("Pad", PadGrad);
  RegisterGradient("PadV2", PadGrad);
}

}  // namespace dflow
