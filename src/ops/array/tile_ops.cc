// Tile and BroadcastTo, and their gradients (sums over the copies).
//
// Both are one strided gather: Tile views its output of rank r as rank 2r, [m0, d0, m1, d1, ...],
// reading the input with step 0 along each multiple; BroadcastTo reads with step 0 along each
// broadcast dimension.
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "framework/op_kernel.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"
#include "ops/array/array_util.h"
#include "ops/array/grad_util.h"

namespace dflow {
namespace {

using namespace ::dflow::array;  // NOLINT: the family's own helpers

// ---- Tile ----

StatusOr<std::vector<int64_t>> TiledDims(absl::Span<const int64_t> in, const DimVector& multiples) {
  if (multiples.size() != in.size()) {
    return errors::InvalidArgument("Expected multiples argument to be a vector of length ", in.size(),
                                   " but got length ", multiples.size());
  }
  std::vector<int64_t> out(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    if (multiples[d] < 0) return errors::InvalidArgument("Expected multiples[", d, "] >= 0, but got ", multiples[d]);
    if (in[d] < 0) {
      out[d] = multiples[d] == 0 ? 0 : -1;
      continue;
    }
    out[d] = MultiplyWithoutOverflow(in[d], multiples[d]);
    if (out[d] < 0 || out[d] > kMaxElements) {
      return errors::InvalidArgument("Tiling dimension ", d, " of size ", in[d], " by ", multiples[d],
                                     " makes it too large");
    }
  }
  return out;
}

Status TileShape(InferenceContext* c) {
  PartialTensorShape ms;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &ms));
  const PartialTensorShape& in = c->input(0);
  int rank = in.dims();
  if (rank >= 0 && ms.dim_size(0) >= 0 && ms.dim_size(0) != rank) {
    return errors::InvalidArgument("Expected multiples argument to be a vector of length ", rank, " but got length ",
                                   ms.dim_size(0));
  }
  if (rank < 0 && ms.dim_size(0) >= 0) rank = static_cast<int>(ms.dim_size(0));
  DimVector multiples;
  ASSIGN_OR_RETURN(bool known, ConstIndexVector(c, 1, "multiples", &multiples));
  if (rank < 0) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  if (!known) {
    c->set_output(0, PartialTensorShape::UnknownOfRank(rank));
    return absl::OkStatus();
  }
  const PartialTensorShape shape = in.unknown_rank() ? PartialTensorShape::UnknownOfRank(rank) : in;
  // A negative multiple is the kernel's to reject (as in TensorFlow); its dimension stays unknown.
  std::vector<bool> negative(multiples.size());
  for (size_t d = 0; d < multiples.size(); ++d) {
    negative[d] = multiples[d] < 0;
    if (negative[d]) multiples[d] = 1;
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> out, TiledDims(shape.dim_sizes(), multiples));
  for (size_t d = 0; d < out.size(); ++d) {
    if (negative[d]) out[d] = -1;
  }
  ASSIGN_OR_RETURN(PartialTensorShape s, PartialTensorShape::FromDims(out));
  c->set_output(0, std::move(s));
  return absl::OkStatus();
}

class TileOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    DimVector multiples;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexVector(ctx->input(1), "multiples", &multiples)));
    auto dims = TiledDims(input.shape().dim_sizes(), multiples);
    OP_REQUIRES(ctx, dims.ok(),
                KernelAnnotate(*this,
                               errors::Annotate(dims.status(), absl::StrCat("input shape ", ShapeStr(input), ": "))));
    OP_REQUIRES_ASSIGN(ctx, TensorShape out_shape, MakeShape(*this, *dims));
    if (out_shape == input.shape()) {
      ctx->set_output(0, input);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const DimVector in_strides = Strides(input.shape());
    DimVector view, steps;
    for (int d = 0; d < input.dims(); ++d) {
      view.push_back(multiples[d]);
      steps.push_back(0);
      view.push_back(input.dim_size(d));
      steps.push_back(in_strides[d]);
    }
    const bool ok = VisitStorage(input.dtype(), [&]<typename E>() {
      GatherBox(StorageData<E>(input), 0, view, steps, StorageData<E>(out));
    });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(input.dtype())));
  }
};

// ---- BroadcastTo ----

// Checks that `in` broadcasts to `out` (NumPy rules, in one direction).
Status CheckBroadcastTo(absl::Span<const int64_t> in, absl::Span<const int64_t> out) {
  auto str = [](absl::Span<const int64_t> s) { return absl::StrCat("[", absl::StrJoin(s, ","), "]"); };
  if (in.size() > out.size()) {
    return errors::InvalidArgument("Rank of input (", in.size(), ") must be no greater than rank of output shape (",
                                   out.size(), ")");
  }
  const size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t a = in[i], b = out[lead + i];
    if (a != 1 && a >= 0 && b >= 0 && a != b) {
      return errors::InvalidArgument("Incompatible shapes: ", str(in), " vs. ", str(out));
    }
  }
  return absl::OkStatus();
}

Status BroadcastToShape(InferenceContext* c) {
  PartialTensorShape target;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &target));
  RETURN_IF_ERROR(c->ShapeFromShapeTensor(1, &target));
  const PartialTensorShape& in = c->input(0);
  if (!target.unknown_rank() && !in.unknown_rank()) {
    RETURN_IF_ERROR(CheckBroadcastTo(in.dim_sizes(), target.dim_sizes()));
    // Where the target is unknown but the input is not 1, the input's size is the answer.
    std::vector<int64_t> dims(target.dim_sizes().begin(), target.dim_sizes().end());
    const size_t lead = dims.size() - in.dims();
    for (int i = 0; i < in.dims(); ++i) {
      if (dims[lead + i] < 0 && in.dim_size(i) > 1) dims[lead + i] = in.dim_size(i);
    }
    ASSIGN_OR_RETURN(target, PartialTensorShape::FromDims(dims));
  }
  c->set_output(0, std::move(target));
  return absl::OkStatus();
}

class BroadcastToOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    DimVector dims;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexVector(ctx->input(1), "shape", &dims)));
    for (size_t i = 0; i < dims.size(); ++i) {
      OP_REQUIRES(ctx, dims[i] >= 0, KernelError(*this, "shape[", i, "] = ", dims[i], " must be non-negative"));
    }
    OP_REQUIRES_ASSIGN(ctx, TensorShape out_shape, MakeShape(*this, dims));
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, CheckBroadcastTo(input.shape().dim_sizes(), out_shape.dim_sizes())));
    if (out_shape == input.shape()) {
      ctx->set_output(0, input);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    const DimVector in_strides = Strides(input.shape());
    const int lead = out_shape.dims() - input.dims();
    DimVector steps(out_shape.dims(), 0);
    for (int i = 0; i < input.dims(); ++i) {
      if (input.dim_size(i) != 1) steps[lead + i] = in_strides[i];
    }
    const bool ok = VisitStorage(input.dtype(), [&]<typename E>() {
      GatherBox(StorageData<E>(input), 0, out_shape.dim_sizes(), steps, StorageData<E>(out));
    });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(input.dtype())));
  }
};

// ---- gradients ----

// Tile: reshape the gradient to [m0, d0, m1, d1, ...] and sum over the multiples.
Status TileGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const NodeOut x = c->inputs[0], multiples = c->inputs[1];
  const DType mt = ValueType(multiples);
  NodeOut split_shape = b->Op("Reshape", {b->Op("Pack", {multiples, ShapeOf(b, x, mt)}, {{"axis", int64_t{1}}}),
                                          IndexConst(b, DT_INT32, {-1})});
  NodeOut axes;
  const PartialTensorShape& xs = StaticShape(x);
  if (!xs.unknown_rank()) {
    std::vector<int64_t> even;
    for (int i = 0; i < xs.dims(); ++i) even.push_back(2 * i);
    axes = IndexConst(b, DT_INT32, even, "axes");
  } else {
    axes = b->Op("Range", {b->Scalar(DT_INT32, 0), b->Op("Size", {split_shape}), b->Scalar(DT_INT32, 2)});
  }
  RETURN_IF_ERROR(b->status());
  ASSIGN_OR_RETURN(NodeOut sum, ReduceSum(b, b->Op("Reshape", {c->grad_outputs[0], split_shape}), axes));
  c->grad_inputs[0] = sum;
  return b->status();
}

// BroadcastTo: sum over the broadcast dimensions, then reshape to the input's shape. The
// dimensions are found statically when both shapes are known, else by BroadcastGradientArgs.
Status BroadcastToGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const NodeOut x = c->inputs[0], shape = c->inputs[1];
  const DType it = ValueType(shape);
  const PartialTensorShape& xs = StaticShape(x);
  const PartialTensorShape& ys = StaticShape(c->outputs[0]);
  const NodeOut grad = c->grad_outputs[0];
  NodeOut axes;
  if (xs.IsFullyDefined() && ys.IsFullyDefined()) {
    std::vector<int64_t> reduce;
    const int lead = ys.dims() - xs.dims();
    for (int i = 0; i < ys.dims(); ++i) {
      if (i < lead || (xs.dim_size(i - lead) == 1 && ys.dim_size(i) != 1)) reduce.push_back(i);
    }
    if (reduce.empty()) {
      c->grad_inputs[0] = b->Op("Reshape", {grad, ShapeOf(b, x, it)});
      return b->status();
    }
    axes = IndexConst(b, it, reduce, "axes");
  } else {
    if (!OpRegistered("BroadcastGradientArgs")) {
      return errors::FailedPrecondition("the gradient of BroadcastTo with shapes not known statically needs the "
                                        "BroadcastGradientArgs op, which is not registered");
    }
    Node* args = b->AddNode("BroadcastGradientArgs", {shape, ShapeOf(b, x, it)});
    if (args == nullptr) return b->status();
    axes = {args, 1};
  }
  ASSIGN_OR_RETURN(NodeOut sum, ReduceSum(b, grad, axes, /*keep_dims=*/true));
  c->grad_inputs[0] = b->Op("Reshape", {sum, ShapeOf(b, x, it)});
  return b->status();
}

}  // namespace

void RegisterTileOps() {
  RegisterOp(OpDefBuilder("Tile")
                 .Input("input: T")
                 .Input("multiples: Tmultiples")
                 .Output("output: T")
                 .Attr("T: type")
                 .Attr("Tmultiples: {int32, int64} = int32")
                 .SetShapeFn(TileShape)
                 .Doc("Repeats the input multiples[d] times along each dimension d."));
  RegisterOp(OpDefBuilder("BroadcastTo")
                 .Input("input: T")
                 .Input("shape: Tidx")
                 .Output("output: T")
                 .Attr("T: type")
                 .Attr("Tidx: {int32, int64} = int32")
                 .SetShapeFn(BroadcastToShape)
                 .Doc("Broadcasts the input to `shape` by NumPy's rules."));
  RegisterKernel<TileOp>(KernelBuilder("Tile"));
  RegisterKernel<BroadcastToOp>(KernelBuilder("BroadcastTo"));
  RegisterGradient("Tile", TileGrad);
  RegisterGradient("BroadcastTo", BroadcastToGrad);
}

}  // namespace dflow
