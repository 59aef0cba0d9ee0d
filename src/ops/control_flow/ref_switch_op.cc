// RefSwitch: Switch for a variable reference (TensorFlow writes it where tf.compat.v1.cond takes
// a reference variable, as Variable.initialized_value() and ExponentialMovingAverage do). The
// reference goes to output_true if pred, else to output_false; the other output is dead. The
// variable need not be initialized: only the reference moves.
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"

namespace dflow {
namespace {

class RefSwitchOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& pred = ctx->input(1);
    OP_REQUIRES(ctx, pred.dtype() == DT_BOOL && pred.dims() == 0,
                errors::InvalidArgument("RefSwitch ", name(), ": pred must be a bool scalar, got shape ",
                                        pred.shape().DebugString()));
    OP_REQUIRES(ctx, ctx->input_ref(0) != nullptr,
                errors::InvalidArgument("RefSwitch ", name(), ": data is not a variable reference"));
    const int taken = pred.scalar<bool>() ? 1 : 0;
    ctx->set_output_ref(taken, ctx->input_ref_ptr(0));
    ctx->outputs()[1 - taken].is_dead = true;
  }
};

Status RefSwitchShape(InferenceContext* c) {
  PartialTensorShape pred;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &pred));
  c->set_output(0, c->input(0));
  c->set_output(1, c->input(0));
  return absl::OkStatus();
}

}  // namespace

void RegisterRefSwitchOp() {
  RegisterOp(OpDefBuilder("RefSwitch")
                 .Input("data: Ref(T)")
                 .Input("pred: bool")
                 .Output("output_false: Ref(T)")
                 .Output("output_true: Ref(T)")
                 .Attr("T: type")
                 .SetShapeFn(RefSwitchShape)
                 .Doc("Forwards the reference data to output_true if pred, else to output_false; the other "
                      "output is dead."));
  RegisterKernel<RefSwitchOp>(KernelBuilder("RefSwitch"));
}

}  // namespace dflow
