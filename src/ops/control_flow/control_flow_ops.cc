// Control flow: NoOp, ControlTrigger, Switch, Merge, Enter, Exit, NextIteration, LoopCond.
//
// The executor gives these their meaning (see src/runtime/executor_internal.h): Switch makes
// the untaken output dead, Merge forwards the first live input (the executor runs it itself),
// Enter/Exit/NextIteration move values between loop frames and iterations. The kernels here
// only forward values.
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/register_all.h"

namespace dflow {

void RegisterTensorArrayOps();  // ops/tensor_array/tensor_array_ops.cc
void RegisterRefSwitchOp();     // ref_switch_op.cc

namespace {

class NoOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext*) override {}
};

class ForwardOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

class SwitchOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& pred = ctx->input(1);
    OP_REQUIRES(ctx, pred.dtype() == DT_BOOL && pred.NumElements() == 1 && pred.dims() == 0,
                errors::InvalidArgument("Switch ", name(), ": pred must be a bool scalar, got shape ",
                                        pred.shape().DebugString()));
    int taken = pred.scalar<bool>() ? 1 : 0;
    ctx->set_output(taken, ctx->input(0));
    ctx->outputs()[1 - taken].is_dead = true;
  }
};

class MergeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    ctx->SetStatus(errors::Internal("Merge ", name(), " must be run by the executor"));
  }
};

Status SwitchShape(InferenceContext* c) {
  PartialTensorShape pred;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &pred));
  c->set_output(0, c->input(0));
  c->set_output(1, c->input(0));
  return absl::OkStatus();
}

Status MergeShape(InferenceContext* c) {
  PartialTensorShape out = c->input(0);
  for (int i = 1; i < c->num_inputs(); ++i) {
    const PartialTensorShape& s = c->input(i);
    if (out.unknown_rank() || s.unknown_rank() || out.dims() != s.dims()) {
      out = PartialTensorShape();
      break;
    }
    std::vector<int64_t> dims;
    for (int d = 0; d < s.dims(); ++d) dims.push_back(out.dim_size(d) == s.dim_size(d) ? s.dim_size(d) : -1);
    out = PartialTensorShape::FromDims(dims).value();
  }
  c->set_output(0, out);
  c->set_output(1, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

// d Switch: the gradients of both outputs meet in a Merge (only the taken branch's is live;
// a missing one is zeros computed from that branch's own output, so it is dead when untaken).
Status SwitchGrad(GradContext* c) {
  NodeOut f = c->GradOrZeros(0), t = c->GradOrZeros(1);
  c->grad_inputs[0] = c->b->Op("Merge", {f, t});
  return absl::OkStatus();
}

// d Merge: the gradient goes back to the input that was taken, chosen by value_index.
Status MergeGrad(GradContext* c) {
  NodeOut g = c->grad_outputs[0];
  if (g.node == nullptr) return absl::OkStatus();
  NodeOut index{const_cast<Node*>(c->node), 1};
  for (size_t i = 0; i < c->inputs.size(); ++i) {
    NodeOut taken = c->b->Op("Equal", {index, c->b->Scalar(DT_INT32, static_cast<double>(i))});
    Node* sw = c->b->AddNode("Switch", {g, taken});
    c->grad_inputs[i] = NodeOut{sw, 1};
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterControlFlowOps() {
  RegisterOp(OpDefBuilder("NoOp").SetShapeFn(NoOutputs).Doc("Does nothing; groups control dependencies."));
  RegisterOp(OpDefBuilder("ControlTrigger").SetShapeFn(NoOutputs).Doc("Does nothing; a control-flow join point."));
  RegisterOp(OpDefBuilder("Switch")
                 .Input("data: T")
                 .Input("pred: bool")
                 .Output("output_false: T")
                 .Output("output_true: T")
                 .Attr("T: type")
                 .SetShapeFn(SwitchShape)
                 .Doc("Forwards data to output_true if pred, else to output_false; the other output is dead."));
  RegisterOp(OpDefBuilder("Merge")
                 .Input("inputs: N * T")
                 .Output("output: T")
                 .Output("value_index: int32")
                 .Attr("T: type")
                 .Attr("N: int >= 1")
                 .SetShapeFn(MergeShape)
                 .Doc("Forwards the first input that is not dead, and its index."));
  RegisterOp(OpDefBuilder("Enter")
                 .Input("data: T")
                 .Output("output: T")
                 .Attr("T: type")
                 .Attr("frame_name: string")
                 .Attr("is_constant: bool = false")
                 .Attr("parallel_iterations: int = 10")
                 .SetShapeFn(UnchangedShape)
                 .Doc("Makes data available in the loop frame frame_name (every iteration if is_constant)."));
  RegisterOp(OpDefBuilder("Exit")
                 .Input("data: T")
                 .Output("output: T")
                 .Attr("T: type")
                 .SetShapeFn(UnchangedShape)
                 .Doc("Leaves the current loop frame."));
  RegisterOp(OpDefBuilder("NextIteration")
                 .Input("data: T")
                 .Output("output: T")
                 .Attr("T: type")
                 .SetShapeFn(UnchangedShape)
                 .Doc("Makes data available in the next iteration."));
  RegisterOp(OpDefBuilder("LoopCond")
                 .Input("input: bool")
                 .Output("output: bool")
                 .SetShapeFn(UnchangedShape)
                 .Doc("The loop predicate."));
  RegisterKernel<NoOp>(KernelBuilder("NoOp"));
  RegisterKernel<NoOp>(KernelBuilder("ControlTrigger"));
  RegisterKernel<SwitchOp>(KernelBuilder("Switch"));
  RegisterKernel<MergeOp>(KernelBuilder("Merge"));
  RegisterKernel<ForwardOp>(KernelBuilder("Enter"));
  RegisterKernel<ForwardOp>(KernelBuilder("Exit"));
  RegisterKernel<ForwardOp>(KernelBuilder("NextIteration"));
  RegisterKernel<ForwardOp>(KernelBuilder("LoopCond"));
  RegisterGradient("Switch", SwitchGrad);
  RegisterGradient("Merge", MergeGrad);
  RegisterNoGradient("LoopCond");
  RegisterNoGradient("ControlTrigger");
  RegisterStackOps();
  RegisterTensorArrayOps();
  RegisterRefSwitchOp();
}

}  // namespace dflow
