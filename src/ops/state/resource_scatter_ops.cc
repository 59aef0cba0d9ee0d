// ResourceScatterUpdate, ResourceScatterAdd, ResourceScatterSub: sparse updates of resource
// variables (tf.compat.v1.train's Adam and GradientDescent write them for IndexedSlices gradients
// of resource variables). As ScatterUpdate/Add/Sub on reference variables: the variable's mutex,
// every index validated before anything is written, copy on write when a reader holds the buffer.
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/state/resource_util.h"
#include "ops/state/scatter_rows.h"
#include "ops/state/state_ops.h"

namespace dflow {
namespace {

template <typename T, ScatterMode kMode>
class ResourceScatterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    StatusOr<const ResourceHandle*> h = HandleFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, h.status());
    StatusOr<std::shared_ptr<Var>> found = LookupResource<Var>(ctx, **h);
    OP_REQUIRES(ctx, found.ok(),
                errors::NotFound("Resource ", (*h)->container, "/", (*h)->name, " does not exist (", type_string(), " ",
                                 name(), ": the resource variable was never assigned)"));
    const std::shared_ptr<Var>& var = *found;
    const Tensor& indices = ctx->input(1);
    const Tensor& updates = ctx->input(2);
    std::lock_guard<std::mutex> l(*var->mu());
    Tensor* cur = var->tensor();
    OP_REQUIRES(ctx, cur->IsInitialized(), var->UninitializedError());
    OP_REQUIRES(ctx, cur->dtype() == DTypeOf<T>::value,
                errors::InvalidArgument(type_string(), " ", name(), ": variable ", var->name(), " has dtype ",
                                        DTypeString(cur->dtype()), " but the op expects ",
                                        DTypeString(DTypeOf<T>::value)));
    OP_REQUIRES_OK(ctx, (ScatterRows<T, kMode>(absl::StrCat(type_string(), " ", name()), var.get(), indices, updates)));
  }
};

template <ScatterMode kMode>
void RegisterKernels(const char* op) {
  RegisterKernel<ResourceScatterOp<float, kMode>>(KernelBuilder(op).TypeConstraint<float>("dtype"));
  RegisterKernel<ResourceScatterOp<double, kMode>>(KernelBuilder(op).TypeConstraint<double>("dtype"));
  RegisterKernel<ResourceScatterOp<int32_t, kMode>>(KernelBuilder(op).TypeConstraint<int32_t>("dtype"));
  RegisterKernel<ResourceScatterOp<int64_t, kMode>>(KernelBuilder(op).TypeConstraint<int64_t>("dtype"));
}

}  // namespace

void RegisterResourceScatterOps() {
  for (const char* op : {"ResourceScatterUpdate", "ResourceScatterAdd", "ResourceScatterSub"}) {
    RegisterOp(OpDefBuilder(op)
                   .Input("resource: resource")
                   .Input("indices: Tindices")
                   .Input("updates: dtype")
                   .Attr("dtype: type")
                   .Attr("Tindices: {int32, int64}")
                   .SetIsStateful()
                   .SetShapeFn(NoOutputs)
                   .Doc("Writes (Update), adds (Add) or subtracts (Sub) updates into the rows `indices` of the "
                        "resource variable."));
    RegisterNoGradient(op);
  }
  RegisterKernels<ScatterMode::kUpdate>("ResourceScatterUpdate");
  RegisterKernels<ScatterMode::kAdd>("ResourceScatterAdd");
  RegisterKernels<ScatterMode::kSub>("ResourceScatterSub");
}

}  // namespace dflow
