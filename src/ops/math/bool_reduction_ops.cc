// All and Any (tf.reduce_all, tf.reduce_any): logical and/or of bools along the given axes, with
// TensorFlow's OpDefs. TensorFlow's dynamic_rnn graphs use All in their sequence_length checks.
// Neither has a gradient (bools).
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/math/reduction.h"

namespace dflow {
namespace {

template <bool kAll>
class BoolReductionOp : public OpKernel {
 public:
  explicit BoolReductionOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("keep_dims", &keep_dims_));
  }

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
                   .SetShapeFn(ReductionShape)
                   .Doc(op[1] == 'l' ? "Logical and of the elements along the given axes."
                                     : "Logical or of the elements along the given axes."));
    RegisterNoGradient(op);
  }
  RegisterKernel<BoolReductionOp<true>>(KernelBuilder("All"));
  RegisterKernel<BoolReductionOp<false>>(KernelBuilder("Any"));
}

}  // namespace dflow
