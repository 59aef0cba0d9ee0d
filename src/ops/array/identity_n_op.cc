// IdentityN: its inputs (a list of any types, T: list(type) >= 1) unchanged, and its gradient
// (each output's incoming gradient to the input of the same position; none where none flows).
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"

namespace dflow {
namespace {

class IdentityNOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES(ctx, ctx->num_inputs() == ctx->num_outputs(),
                errors::InvalidArgument(type_string(), " '", name(), "': ", ctx->num_inputs(), " inputs but ",
                                        ctx->num_outputs(), " outputs"));
    for (int i = 0; i < ctx->num_inputs(); ++i) ctx->set_output(i, ctx->input(i));
  }
};

Status IdentityNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_inputs() && i < c->num_outputs(); ++i) c->set_output(i, c->input(i));
  return absl::OkStatus();
}

}  // namespace

void RegisterIdentityNOp() {
  RegisterOp(OpDefBuilder("IdentityN")
                 .Input("input: T")
                 .Output("output: T")
                 .Attr("T: list(type) >= 1")
                 .SetShapeFn(IdentityNShape)
                 .Doc("Its inputs, unchanged."));
  RegisterKernel<IdentityNOp>(KernelBuilder("IdentityN"));
  RegisterGradient("IdentityN", [](GradContext* c) {
    for (size_t i = 0; i < c->grad_inputs.size() && i < c->grad_outputs.size(); ++i) {
      c->grad_inputs[i] = c->grad_outputs[i];
    }
    return absl::OkStatus();
  });
}

}  // namespace dflow
