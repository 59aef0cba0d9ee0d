// _Arg and _Retval: how a step's feeds enter and its fetches leave the graph (see CallFrame).
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

class ArgOp : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("index", &index_)); }
  void Compute(OpKernelContext* ctx) override {
    CallFrame* frame = ctx->step().call_frame;
    OP_REQUIRES(ctx, frame != nullptr, errors::Internal("_Arg ", name(), " run without a call frame"));
    Tensor t;
    OP_REQUIRES_OK(ctx, frame->GetArg(index_, &t));
    OP_REQUIRES(ctx, t.dtype() == output_type(0),
                errors::InvalidArgument("Feed ", index_, " has type ", DTypeString(t.dtype()), " but ",
                                        DTypeString(output_type(0)), " is expected"));
    ctx->set_output(0, std::move(t));
  }

 private:
  int index_ = 0;
};

class RetvalOp : public OpKernel {
 public:
  explicit RetvalOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("index", &index_)); }
  void Compute(OpKernelContext* ctx) override {
    CallFrame* frame = ctx->step().call_frame;
    OP_REQUIRES(ctx, frame != nullptr, errors::Internal("_Retval ", name(), " run without a call frame"));
    OP_REQUIRES_OK(ctx, frame->SetRetval(index_, ctx->input(0)));
  }

 private:
  int index_ = 0;
};

}  // namespace

void RegisterCallOps();  // call_ops.cc: PartitionedCall, StatefulPartitionedCall

void RegisterFunctionOps() {
  RegisterOp(OpDefBuilder("_Arg")
                 .Output("output: T")
                 .Attr("T: type")
                 .Attr("index: int >= 0")
                 .SetIsStateful()
                 .Doc("A value fed into the step."));
  RegisterOp(OpDefBuilder("_Retval")
                 .Input("input: T")
                 .Attr("T: type")
                 .Attr("index: int >= 0")
                 .SetIsStateful()
                 .SetShapeFn(NoOutputs)
                 .Doc("A value fetched from the step."));
  RegisterKernel<ArgOp>(KernelBuilder("_Arg"));
  RegisterKernel<RetvalOp>(KernelBuilder("_Retval"));
  RegisterCallOps();
}

}  // namespace dflow
