// Sparse updates of reference variables — ScatterUpdate, ScatterAdd, ScatterSub — and
// CountUpTo.
//
// Each takes the Var's mutex, validates every index before it writes anything (a bad index
// leaves the variable unchanged), and writes in place only when nobody else holds the buffer
// (copy on write, as Assign does), so snapshots that readers took never change.
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/state/scatter_rows.h"
#include "ops/state/state_ops.h"

namespace dflow {
namespace {

template <typename T, ScatterMode kMode>
class ScatterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const std::shared_ptr<Var>& var = ctx->input_ref_ptr(0);
    OP_REQUIRES(ctx, var != nullptr, errors::Internal(type_string(), " ", name(), " without a variable input"));
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    {
      std::lock_guard<std::mutex> l(*var->mu());
      OP_REQUIRES(ctx, var->tensor()->IsInitialized(), var->UninitializedError());
      OP_REQUIRES_OK(ctx,
                     (ScatterRows<T, kMode>(absl::StrCat(type_string(), " ", name()), var.get(), indices, updates)));
    }
    ctx->set_output_ref(0, var);
  }
};

template <typename T>
class CountUpToOp : public OpKernel {
 public:
  explicit CountUpToOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("limit", &limit_)); }

  void Compute(OpKernelContext* ctx) override {
    const std::shared_ptr<Var>& var = ctx->input_ref_ptr(0);
    OP_REQUIRES(ctx, var != nullptr, errors::Internal("CountUpTo ", name(), " without a variable input"));
    T before;
    {
      std::lock_guard<std::mutex> l(*var->mu());
      Tensor* cur = var->tensor();
      OP_REQUIRES(ctx, cur->IsInitialized(), var->UninitializedError());
      OP_REQUIRES(ctx, cur->dims() == 0,
                  errors::InvalidArgument("CountUpTo ", name(), ": variable ", var->name(),
                                          " must be a scalar, but has shape ", cur->shape().DebugString()));
      before = cur->scalar<T>();
      OP_REQUIRES(ctx, static_cast<int64_t>(before) < limit_, errors::OutOfRange("Reached limit of ", limit_));
      if (!cur->RefCountIsOne()) *cur = Tensor(before);  // readers keep their snapshot
      cur->scalar<T>() = before + 1;
    }
    ctx->set_output(0, Tensor(before));
  }

 private:
  int64_t limit_ = 0;
};

Status ScatterShape(InferenceContext* c) {
  const PartialTensorShape& ref = c->input(0);
  const PartialTensorShape& indices = c->input(1);
  const PartialTensorShape& updates = c->input(2);
  if (!ref.unknown_rank() && ref.dims() == 0) {
    return errors::InvalidArgument("The variable must be at least a vector, but has shape ", ref.DebugString());
  }
  if (!ref.unknown_rank() && !indices.unknown_rank() && !updates.unknown_rank() && updates.dims() != 0) {
    std::vector<int64_t> want(indices.dim_sizes().begin(), indices.dim_sizes().end());
    for (int i = 1; i < ref.dims(); ++i) want.push_back(ref.dim_size(i));
    ASSIGN_OR_RETURN(PartialTensorShape w, PartialTensorShape::FromDims(want));
    if (!w.IsCompatibleWith(updates)) {
      return errors::InvalidArgument("updates must have shape indices.shape + variable.shape[1:] = ", w.DebugString(),
                                     " or be a scalar, but have shape ", updates.DebugString());
    }
  }
  c->set_output(0, ref);
  return absl::OkStatus();
}

Status CountUpToShape(InferenceContext* c) {
  PartialTensorShape s;
  RETURN_IF_ERROR(c->WithRank(c->input(0), 0, &s));
  c->set_output(0, s);
  return absl::OkStatus();
}

template <typename T>
void RegisterScatterUpdateKernel() {
  RegisterKernel<ScatterOp<T, ScatterMode::kUpdate>>(KernelBuilder("ScatterUpdate").TypeConstraint<T>("T"));
}

template <typename T>
void RegisterScatterArithmeticKernels() {
  RegisterKernel<ScatterOp<T, ScatterMode::kAdd>>(KernelBuilder("ScatterAdd").TypeConstraint<T>("T"));
  RegisterKernel<ScatterOp<T, ScatterMode::kSub>>(KernelBuilder("ScatterSub").TypeConstraint<T>("T"));
}

}  // namespace

void RegisterScatterOps() {
  RegisterOp(OpDefBuilder("ScatterUpdate")
                 .Input("ref: Ref(T)")
                 .Input("indices: Tindices")
                 .Input("updates: T")
                 .Output("output_ref: Ref(T)")
                 .Attr("T: type")
                 .Attr("Tindices: {int32, int64}")
                 .Attr("use_locking: bool = true")
                 .SetShapeFn(ScatterShape)
                 .Doc("ref[indices[i], ...] = updates[i, ...]."));
  for (const char* op : {"ScatterAdd", "ScatterSub"}) {
    RegisterOp(OpDefBuilder(op)
                   .Input("ref: Ref(T)")
                   .Input("indices: Tindices")
                   .Input("updates: T")
                   .Output("output_ref: Ref(T)")
                   .Attr("T: {float, double, int32, int64, uint8}")
                   .Attr("Tindices: {int32, int64}")
                   .Attr("use_locking: bool = false")
                   .SetShapeFn(ScatterShape)
                   .Doc("ref[indices[i], ...] += (or -=) updates[i, ...]; duplicate indices accumulate."));
  }
  RegisterOp(OpDefBuilder("CountUpTo")
                 .Input("ref: Ref(T)")
                 .Output("output: T")
                 .Attr("limit: int")
                 .Attr("T: {int32, int64}")
                 .SetShapeFn(CountUpToShape)
                 .Doc("Increments the variable until it reaches `limit`; outputs the value before the increment."));
  RegisterScatterUpdateKernel<float>();
  RegisterScatterUpdateKernel<double>();
  RegisterScatterUpdateKernel<int32_t>();
  RegisterScatterUpdateKernel<int64_t>();
  RegisterScatterUpdateKernel<uint8_t>();
  RegisterScatterUpdateKernel<bool>();
  RegisterScatterUpdateKernel<std::string>();
  RegisterScatterArithmeticKernels<float>();
  RegisterScatterArithmeticKernels<double>();
  RegisterScatterArithmeticKernels<int32_t>();
  RegisterScatterArithmeticKernels<int64_t>();
  RegisterScatterArithmeticKernels<uint8_t>();
  RegisterKernel<CountUpToOp<int32_t>>(KernelBuilder("CountUpTo").TypeConstraint<int32_t>("T"));
  RegisterKernel<CountUpToOp<int64_t>>(KernelBuilder("CountUpTo").TypeConstraint<int64_t>("T"));
  for (const char* op : {"ScatterUpdate", "ScatterAdd", "ScatterSub", "CountUpTo"}) RegisterNoGradient(op);
}

}  // namespace dflow
