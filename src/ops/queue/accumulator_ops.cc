// Gradient accumulators with TensorFlow's resource-handle ops: ResourceConditionalAccumulator
// (outputs a handle, creating the accumulator in the device's ResourceMgr under (container,
// shared_name) on first use; without a shared_name it belongs to the session, see
// MakeSessionResourceHandle), ResourceAccumulatorApplyGradient,
// ResourceAccumulatorTakeGradient (asynchronous: waits inside the accumulator without holding a
// thread, cancelled with its step), ResourceAccumulatorNumAccumulated and
// ResourceAccumulatorSetGlobalStep; and dflow's ResourceAccumulatorNumDropped, the count of stale
// (and surplus, with the max_gradients_per_step attr dflow adds) gradients dropped.
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/queue/conditional_accumulator.h"
#include "ops/register_all.h"
#include "ops/state/resource_util.h"

namespace dflow {
namespace {

StatusOr<ConditionalAccumulator::Reduction> ParseReduction(const std::string& node, const std::string& s) {
  if (s == "MEAN") return ConditionalAccumulator::Reduction::kMean;
  if (s == "SUM") return ConditionalAccumulator::Reduction::kSum;
  return errors::InvalidArgument("ResourceConditionalAccumulator ", node, ": reduction_type '", s,
                                 "' is not one of MEAN, SUM");
}

class ConditionalAccumulatorOp : public OpKernel {
 public:
  explicit ConditionalAccumulatorOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string reduction;
    c->SetStatus(c->GetAttr("dtype", &dtype_));
    c->SetStatus(c->GetAttr("shape", &shape_));
    c->SetStatus(c->GetAttr("container", &container_));
    c->SetStatus(c->GetAttr("shared_name", &shared_name_));
    c->SetStatus(c->GetAttr("reduction_type", &reduction));
    c->SetStatus(c->GetAttr("max_gradients_per_step", &max_per_step_));
    StatusOr<ConditionalAccumulator::Reduction> r = ParseReduction(c->node().name, reduction);
    if (r.ok()) reduction_ = *r;
    else c->SetStatus(r.status());
  }

  void Compute(OpKernelContext* ctx) override {
    ResourceHandle h = MakeSessionResourceHandle(ctx, container_, shared_name_, ConditionalAccumulator::kKind);
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<ConditionalAccumulator> a,
                       ctx->step().device->resource_manager()->LookupOrCreate<ConditionalAccumulator>(
                           h.container, h.name, [&]() -> StatusOr<std::shared_ptr<ConditionalAccumulator>> {
                             return std::make_shared<ConditionalAccumulator>(h.name, dtype_, shape_, reduction_,
                                                                             max_per_step_);
                           }));
    OP_REQUIRES_OK(ctx, a->MatchesAttrs(dtype_, shape_, reduction_, max_per_step_));
    SetHandleOutput(ctx, 0, std::move(h));
  }

 private:
  DType dtype_ = DT_FLOAT;
  PartialTensorShape shape_;
  std::string container_, shared_name_;
  ConditionalAccumulator::Reduction reduction_ = ConditionalAccumulator::Reduction::kMean;
  int64_t max_per_step_ = -1;
};

// The accumulator named by input 0.
StatusOr<std::shared_ptr<ConditionalAccumulator>> GetAccumulator(OpKernelContext* ctx) {
  ASSIGN_OR_RETURN(const ResourceHandle* h, HandleFromInput(ctx, 0));
  StatusOr<std::shared_ptr<ConditionalAccumulator>> a = LookupResource<ConditionalAccumulator>(ctx, *h);
  if (a.status().code() == absl::StatusCode::kNotFound) {
    return errors::NotFound(ctx->op_kernel().type_string(), " ", ctx->node_name(), ": accumulator ", h->DebugString(),
                            " does not exist");
  }
  return a;
}

// Input `i` as a scalar of T; InvalidArgument naming the op and the input otherwise.
template <typename T>
StatusOr<T> ScalarInput(OpKernelContext* ctx, int i, const char* what) {
  const Tensor& t = ctx->input(i);
  if (t.dtype() != DTypeOf<T>::value || t.dims() != 0) {
    return errors::InvalidArgument(ctx->op_kernel().type_string(), " ", ctx->node_name(), ": ", what, " must be a ",
                                   DTypeString(DTypeOf<T>::value), " scalar, got a ", DTypeString(t.dtype()),
                                   " tensor of shape ", t.shape().DebugString());
  }
  return t.scalar<T>();
}

// The node's dtype attr must be the accumulator's.
Status CheckDType(OpKernelContext* ctx, const ConditionalAccumulator& a, DType dtype) {
  if (dtype != a.dtype()) {
    return errors::InvalidArgument(ctx->op_kernel().type_string(), " ", ctx->node_name(), ": ", a.DebugString(),
                                   " has dtype ", DTypeString(a.dtype()), " but the op's dtype is ",
                                   DTypeString(dtype));
  }
  return absl::OkStatus();
}

class AccumulatorApplyGradientOp : public OpKernel {
 public:
  explicit AccumulatorApplyGradientOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("dtype", &dtype_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<ConditionalAccumulator> a, GetAccumulator(ctx));
    OP_REQUIRES_OK(ctx, CheckDType(ctx, *a, dtype_));
    OP_REQUIRES_ASSIGN(ctx, int64_t local_step, ScalarInput<int64_t>(ctx, 1, "local_step"));
    StatusOr<bool> applied = a->ApplyGrad(local_step, ctx->input(2));
    OP_REQUIRES_OK(ctx, applied.status());
  }

 private:
  DType dtype_ = DT_FLOAT;
};

class AccumulatorTakeGradientOp : public AsyncOpKernel {
 public:
  explicit AccumulatorTakeGradientOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    c->SetStatus(c->GetAttr("dtype", &dtype_));
  }
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    StatusOr<std::shared_ptr<ConditionalAccumulator>> a = GetAccumulator(ctx);
    Status s = a.status();
    if (s.ok()) s = CheckDType(ctx, **a, dtype_);
    StatusOr<int32_t> n = s.ok() ? ScalarInput<int32_t>(ctx, 1, "num_required") : StatusOr<int32_t>(s);
    if (s.ok()) s = n.status();
    if (s.ok() && *n < 1) s = errors::InvalidArgument("Argument num_required must be positive, but was ", *n);
    if (!s.ok()) {
      ctx->SetStatus(s);
      done();
      return;
    }
    // The waiting take keeps its accumulator alive, so that it still ends if the ResourceMgr drops it.
    std::shared_ptr<ConditionalAccumulator> acc = std::move(a).value();
    ConditionalAccumulator* raw = acc.get();
    raw->TakeGrad(*n, ctx->step().cancellation,
                  [ctx, done = std::move(done), acc = std::move(acc)](const Status& st, Tensor result) {
                    if (st.ok()) ctx->set_output(0, std::move(result));
                    else ctx->SetStatus(st);
                    done();
                  });
  }

 private:
  DType dtype_ = DT_FLOAT;
};

class AccumulatorNumAccumulatedOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<ConditionalAccumulator> a, GetAccumulator(ctx));
    ctx->set_output(0, Tensor(a->num_accumulated()));
  }
};

class AccumulatorNumDroppedOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<ConditionalAccumulator> a, GetAccumulator(ctx));
    ctx->set_output(0, Tensor(a->num_dropped()));
  }
};

class AccumulatorSetGlobalStepOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<ConditionalAccumulator> a, GetAccumulator(ctx));
    OP_REQUIRES_ASSIGN(ctx, int64_t step, ScalarInput<int64_t>(ctx, 1, "new_global_step"));
    a->SetGlobalStep(step);
  }
};

Status TakeGradientShape(InferenceContext* c) {
  PartialTensorShape n;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &n));
  return UnknownShape(c);
}

}  // namespace

void RegisterAccumulatorOps() {
  RegisterOp(OpDefBuilder("ResourceConditionalAccumulator")
                 .Output("handle: resource")
                 .Attr("dtype: {float, double}")
                 .Attr("shape: shape")
                 .Attr("container: string = ''")
                 .Attr("shared_name: string = ''")
                 .Attr("reduction_type: string = 'MEAN'")
                 // dflow's addition (TensorFlow graphs leave it at -1, no limit): gradients beyond this many
                 // per step are dropped and counted, so that a step aggregates exactly that many.
                 .Attr("max_gradients_per_step: int = -1")
                 .SetIsStateful()
                 .SetShapeFn(ScalarShape)
                 .Doc("An accumulator of gradients for one global step, averaged (MEAN) or summed (SUM)."));
  RegisterOp(OpDefBuilder("ResourceAccumulatorApplyGradient")
                 .Input("handle: resource")
                 .Input("local_step: int64")
                 .Input("gradient: dtype")
                 .Attr("dtype: {float, double}")
                 .SetShapeFn(NoOutputs)
                 .Doc("Adds a gradient computed at local_step; a gradient older than the accumulator's global "
                      "step is dropped (and counted)."));
  RegisterOp(OpDefBuilder("ResourceAccumulatorTakeGradient")
                 .Input("handle: resource")
                 .Input("num_required: int32")
                 .Output("average: dtype")
                 .Attr("dtype: {float, double}")
                 .SetShapeFn(TakeGradientShape)
                 .Doc("Waits for num_required gradients, returns their aggregate, resets the accumulator and "
                      "increments its global step."));
  RegisterOp(OpDefBuilder("ResourceAccumulatorNumAccumulated")
                 .Input("handle: resource")
                 .Output("num_accumulated: int32")
                 .SetShapeFn(ScalarShape)
                 .Doc("The number of gradients accumulated for the current step."));
  RegisterOp(OpDefBuilder("ResourceAccumulatorSetGlobalStep")
                 .Input("handle: resource")
                 .Input("new_global_step: int64")
                 .SetShapeFn(NoOutputs)
                 .Doc("Sets the accumulator's global step: gradients of older steps are dropped."));
  RegisterOp(OpDefBuilder("ResourceAccumulatorNumDropped")
                 .Input("handle: resource")
                 .Output("num_dropped: int64")
                 .SetShapeFn(ScalarShape)
                 .Doc("dflow: the number of stale gradients the accumulator dropped since it was made."));

  RegisterKernel<ConditionalAccumulatorOp>(KernelBuilder("ResourceConditionalAccumulator"));
  RegisterKernel<AccumulatorApplyGradientOp>(KernelBuilder("ResourceAccumulatorApplyGradient"));
  RegisterKernel<AccumulatorTakeGradientOp>(KernelBuilder("ResourceAccumulatorTakeGradient"));
  RegisterKernel<AccumulatorNumAccumulatedOp>(KernelBuilder("ResourceAccumulatorNumAccumulated"));
  RegisterKernel<AccumulatorSetGlobalStepOp>(KernelBuilder("ResourceAccumulatorSetGlobalStep"));
  RegisterKernel<AccumulatorNumDroppedOp>(KernelBuilder("ResourceAccumulatorNumDropped"));
  for (const char* op :
       {"ResourceConditionalAccumulator", "ResourceAccumulatorApplyGradient", "ResourceAccumulatorTakeGradient",
        "ResourceAccumulatorNumAccumulated", "ResourceAccumulatorSetGlobalStep", "ResourceAccumulatorNumDropped"}) {
    RegisterNoGradient(op);
  }
}

}  // namespace dflow
