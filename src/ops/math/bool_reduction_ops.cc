// All and Any (tf.reduce_all, tf.reduce_any): logical and/or of bools along the given axes, with
// TensorFlow's OpDefs. TensorFlow's dynamic_rnn graphs use All in their sequence_length checks.
// Neither has a gradient (bools).
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/math/reduction.h"

namespace dflow {
namespace {

Status BoolReductionShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  const PartialTensorShape& axes_shape = c->input(1);
  if (axes_shape.dims() > 1) {
    return errors::InvalidArgument("reduction_indices must be a scalar or a vector, got ", axes_shape.DebugString());
  }
  bool keep_dims = false;
  RETURN_IF_ERROR(c->GetAttr("keep_dims", &keep_dims));
  const Tensor* axes = c->input_tensor(1);
  if (axes != nullptr && !in.unknown_rank()) {
    absl::InlinedVector<bool, 8> reduced;
    RETURN_IF_ERROR(ReducedAxes(in.dims(), *axes, &reduced));
    std::vector<int64_t> dims;
    for (int i = 0; i < in.dims(); ++i) {
      if (!reduced[i]) dims.push_back(in.dim_size(i));
      else if (keep_dims) dims.push_back(1);
    }
    ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
    c->set_output(0, std::move(out));
  } else if (!in.unknown_rank() && keep_dims) {
    c->set_output(0, PartialTensorShape::UnknownOfRank(in.dims()));
  } else {
    c->set_output(0, PartialTensorShape());
  }
  return absl::OkStatus();
}

template <bool kAll>
class BoolReductionOp : public OpKernel {
 public:
  explicit BoolReductionOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("keep_dims", &keep_dims_)); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    StatusOr<ReductionPlan> plan = MakeReductionPlan(in.shape(), ctx->input(1), keep_dims_);
    OP_REQUIRES(ctx, plan.ok(), errors::Annotate(plan.status(), absl::StrCat(type_string(), " '", name(), "': ")));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, plan->output_shape, &out));
    bool* acc = out->data<bool>();
    for (int64_t i = 0, n = out->NumElements(); i < n; ++i) acc[i] = kAll;
    ReduceLoop(*plan, in.data<bool>(), acc, [](bool a, bool x) { return kAll ? (a && x) : (a || x); });
  }

 private:
  bool keep_dims_ = false;
};

}  // namespace

void RegisterBoolReductionOps() {
  for (const char* op : {"All", "Any"}) {
    RegisterOp(OpDefBuilder(op)
                   .Input("input: bool")
                   .Input("reduction_indices: Tidx")
                   .Output("output: bool")
                   .Attr("keep_dims: bool = false")
                   .Attr("Tidx: {int32, int64} = DT_INT32")
                   .SetShapeFn(BoolReductionShape)
                   .Doc(op[1] == 'l' ? "Logical and of the elements along the given axes."
                                     : "Logical or of the elements along the given axes."));
    RegisterNoGradient(op);
  }
  RegisterKernel<BoolReductionOp<true>>(KernelBuilder("All"));
  RegisterKernel<BoolReductionOp<false>>(KernelBuilder("Any"));
}

}  // namespace dflow
