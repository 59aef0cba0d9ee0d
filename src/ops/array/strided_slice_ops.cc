// StridedSlice (NumPy-style x[b:e:s, ..., tf.newaxis, i]) and StridedSliceGrad (its adjoint:
// scatters the output gradient into zeros of the input's shape), with their gradients.
//
// Both read their spec through PlanStridedSlice, so the kernel, the shape function and the
// gradient agree on every mask. A slice that takes everything in order (only new axes, or
// nothing at all) returns the input's buffer under the new shape.
#include <string>
#include <vector>

#include "framework/op_kernel.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"
#include "ops/array/array_util.h"
#include "ops/array/grad_util.h"
#include "ops/array/strided_slice.h"

namespace dflow {
namespace {

using namespace ::dflow::array;  // NOLINT: the family's own helpers

Status ReadMasks(const AttrMap& attrs, StridedSliceMasks* m) {
  RETURN_IF_ERROR(GetAttr(attrs, "begin_mask", &m->begin));
  RETURN_IF_ERROR(GetAttr(attrs, "end_mask", &m->end));
  RETURN_IF_ERROR(GetAttr(attrs, "ellipsis_mask", &m->ellipsis));
  RETURN_IF_ERROR(GetAttr(attrs, "new_axis_mask", &m->new_axis));
  return GetAttr(attrs, "shrink_axis_mask", &m->shrink_axis);
}

// The output shape of a slice of `input` by inputs [first, first + 3) of `c` (begin, end,
// strides), as far as the static information tells.
Status InferSliceShape(InferenceContext* c, const PartialTensorShape& input, int first, PartialTensorShape* out) {
  int64_t sparse_dims = -1;
  for (int i = first; i < first + 3; ++i) {
    PartialTensorShape s;
    RETURN_IF_ERROR(c->WithRank(c->input(i), 1, &s));
    if (s.dim_size(0) >= 0) {
      if (sparse_dims >= 0 && sparse_dims != s.dim_size(0)) {
        return errors::InvalidArgument("Expected begin, end, and strides to be 1D equal size tensors, but got "
                                       "shapes ",
                                       c->input(first).DebugString(), ", ", c->input(first + 1).DebugString(), ", and ",
                                       c->input(first + 2).DebugString());
      }
      sparse_dims = s.dim_size(0);
    }
  }
  DimVector begin, end, strides;
  ASSIGN_OR_RETURN(bool known_begin, ConstIndexVector(c, first, "begin", &begin));
  ASSIGN_OR_RETURN(bool known_end, ConstIndexVector(c, first + 1, "end", &end));
  ASSIGN_OR_RETURN(bool known_strides, ConstIndexVector(c, first + 2, "strides", &strides));
  if (input.unknown_rank() || !known_strides) {
    *out = PartialTensorShape();
    return absl::OkStatus();
  }
  StridedSliceMasks masks;
  RETURN_IF_ERROR(ReadMasks(c->node().attrs, &masks));
  StridedSlicePlan plan;
  RETURN_IF_ERROR(PlanStridedSlice(input, static_cast<int64_t>(strides.size()), known_begin ? &begin : nullptr,
                                   known_end ? &end : nullptr, strides, masks, &plan));
  ASSIGN_OR_RETURN(*out, PartialTensorShape::FromDims(plan.final_shape));
  return absl::OkStatus();
}

Status StridedSliceShape(InferenceContext* c) {
  PartialTensorShape out;
  RETURN_IF_ERROR(InferSliceShape(c, c->input(0), 1, &out));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

Status StridedSliceGradShape(InferenceContext* c) {
  PartialTensorShape shape;
  RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &shape));
  RETURN_IF_ERROR(c->ShapeFromShapeTensor(0, &shape));
  // As TensorFlow's: the output is `shape`; dy and the slice arguments are the kernel's to check.
  c->set_output(0, std::move(shape));
  return absl::OkStatus();
}

// Plans the slice of a tensor of `shape` by kernel inputs [first, first + 3).
Status PlanFromInputs(OpKernelContext* ctx, const StridedSliceMasks& masks, const TensorShape& shape, int first,
                      StridedSlicePlan* plan, TensorShape* final_shape) {
  DimVector begin, end, strides;
  RETURN_IF_ERROR(ReadIndexVector(ctx->input(first), "begin", &begin));
  RETURN_IF_ERROR(ReadIndexVector(ctx->input(first + 1), "end", &end));
  RETURN_IF_ERROR(ReadIndexVector(ctx->input(first + 2), "strides", &strides));
  if (begin.size() != strides.size() || end.size() != strides.size()) {
    return errors::InvalidArgument("Expected begin, end, and strides to be 1D equal size tensors, but got shapes ",
                                   ShapeStr(ctx->input(first)), ", ", ShapeStr(ctx->input(first + 1)), ", and ",
                                   ShapeStr(ctx->input(first + 2)));
  }
  RETURN_IF_ERROR(PlanStridedSlice(shape, static_cast<int64_t>(strides.size()), &begin, &end, strides, masks, plan));
  ASSIGN_OR_RETURN(*final_shape, TensorShape::FromDims(plan->final_shape));
  return absl::OkStatus();
}

// Where the slice starts in a tensor of `shape`, and the step of each processing dimension.
int64_t SliceSteps(const StridedSlicePlan& plan, const TensorShape& shape, DimVector* steps) {
  const DimVector strides = Strides(shape);
  int64_t start = 0;
  steps->resize(shape.dims());
  for (int d = 0; d < shape.dims(); ++d) {
    start += plan.begin[d] * strides[d];
    (*steps)[d] = plan.strides[d] * strides[d];
  }
  return start;
}

class StridedSliceOp : public OpKernel {
 public:
  explicit StridedSliceOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(ReadMasks(c->node().attrs, &masks_)); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    StridedSlicePlan plan;
    TensorShape final_shape;
    Status s = PlanFromInputs(ctx, masks_, input.shape(), 1, &plan, &final_shape);
    OP_REQUIRES(ctx, s.ok(),
                KernelAnnotate(*this, errors::Annotate(s, absl::StrCat("input of shape ", ShapeStr(input), ": "))));
    if (plan.is_identity) {
      OP_REQUIRES_ASSIGN(ctx, Tensor out, input.Reshaped(final_shape));
      ctx->set_output(0, std::move(out));
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, final_shape, &out));
    DimVector steps;
    const int64_t start = SliceSteps(plan, input.shape(), &steps);
    const bool ok = VisitStorage(input.dtype(), [&]<typename E>() {
      GatherBox(StorageData<E>(input), start, plan.processing_shape, steps, StorageData<E>(out));
    });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(input.dtype())));
  }

 private:
  StridedSliceMasks masks_;
};

class StridedSliceGradOp : public OpKernel {
 public:
  explicit StridedSliceGradOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ReadMasks(c->node().attrs, &masks_));
  }

  void Compute(OpKernelContext* ctx) override {
    DimVector dims;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, ReadIndexVector(ctx->input(0), "shape", &dims)));
    StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
    OP_REQUIRES(ctx, shape.ok(), KernelAnnotate(*this, shape.status()));
    const Tensor& dy = ctx->input(4);
    StridedSlicePlan plan;
    TensorShape final_shape;
    Status s = PlanFromInputs(ctx, masks_, *shape, 1, &plan, &final_shape);
    OP_REQUIRES(ctx, s.ok(),
                KernelAnnotate(*this, errors::Annotate(s, absl::StrCat("shape ", shape->DebugString(), ": "))));
    OP_REQUIRES(ctx, dy.shape() == final_shape,
                KernelError(*this, "shape of dy was ", ShapeStr(dy), " instead of ", final_shape.DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    DimVector steps;
    const int64_t start = SliceSteps(plan, *shape, &steps);
    const bool ok = VisitStorage(dy.dtype(), [&]<typename E>() {
      FillN(StorageData<E>(out), out->NumElements(), E{});
      ScatterBox(StorageData<E>(dy), plan.processing_shape, steps, start, StorageData<E>(out));
    });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(dy.dtype())));
  }

 private:
  StridedSliceMasks masks_;
};

AttrMap MaskAttrs(const Node* n) {
  AttrMap a;
  for (const char* k : {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"}) {
    auto it = n->attrs().find(k);
    if (it != n->attrs().end()) a[k] = it->second;
  }
  return a;
}

Status StridedSliceGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const DType idx = ValueType(c->inputs[1]);
  c->grad_inputs[0] = b->Op("StridedSliceGrad",
                            {ShapeOf(b, c->inputs[0], idx), c->inputs[1], c->inputs[2], c->inputs[3],
                             c->grad_outputs[0]},
                            MaskAttrs(c->node));
  return b->status();
}

Status StridedSliceGradGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  c->grad_inputs[4] = b->Op("StridedSlice", {c->grad_outputs[0], c->inputs[1], c->inputs[2], c->inputs[3]},
                            MaskAttrs(c->node));
  return b->status();
}

}  // namespace

void RegisterStridedSliceOps() {
  const char* masks[] = {"begin_mask: int = 0", "end_mask: int = 0", "ellipsis_mask: int = 0", "new_axis_mask: int = 0",
                         "shrink_axis_mask: int = 0"};
  OpDefBuilder slice("StridedSlice");
  slice.Input("input: T")
      .Input("begin: Index")
      .Input("end: Index")
      .Input("strides: Index")
      .Output("output: T")
      .Attr("T: type")
      .Attr("Index: {int32, int64}");
  OpDefBuilder grad("StridedSliceGrad");
  grad.Input("shape: Index")
      .Input("begin: Index")
      .Input("end: Index")
      .Input("strides: Index")
      .Input("dy: T")
      .Output("output: T")
      .Attr("T: type")
      .Attr("Index: {int32, int64}");
  for (const char* m : masks) {
    slice.Attr(m);
    grad.Attr(m);
  }
  RegisterOp(slice.SetShapeFn(StridedSliceShape)
                 .Doc("NumPy-style slicing: strides (negative ones walk backwards), open ends, an ellipsis, new "
                      "axes and single indices that remove their dimension."));
  RegisterOp(
      grad.SetShapeFn(StridedSliceGradShape).Doc("The gradient of StridedSlice: dy scattered into zeros of `shape`."));
  RegisterKernel<StridedSliceOp>(KernelBuilder("StridedSlice"));
  RegisterKernel<StridedSliceGradOp>(KernelBuilder("StridedSliceGrad"));
  RegisterGradient("StridedSlice", StridedSliceGrad);
  RegisterGradient("StridedSliceGrad", StridedSliceGradGrad);
}

}  // namespace dflow
