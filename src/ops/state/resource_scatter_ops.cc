// ResourceScatterUpdate, ResourceScatterAdd, ResourceScatterSub: sparse updates of resource
// variables (tf.compat.v1.train's Adam and GradientDescent write them for IndexedSlices gradients
// of resource variables). As ScatterUpdate/Add/Sub on reference variables: the variable's mutex,
// every index validated before anything is written, copy on write when a reader holds the buffer.
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/state/resource_util.h"
#include "ops/state/state_ops.h"
#include "ops/state/tensor_rows.h"

namespace dflow {
namespace {

enum class Mode { kUpdate, kAdd, kSub };

template <typename T, Mode kMode>
class ResourceScatterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    StatusOr<const ResourceHandle*> h = HandleFromInput(ctx, 0);
    OP_REQUIRES_OK(ctx, h.status());
    StatusOr<std::shared_ptr<Var>> found = LookupResource<Var>(ctx, **h);
    OP_REQUIRES(ctx, found.ok(),
                errors::NotFound("Resource ", (*h)->container, "/", (*h)->name, " does not exist (", type_string(),
                                 " ", name(), ": the resource variable was never assigned)"));
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
    OP_REQUIRES(ctx, cur->dims() >= 1,
                errors::InvalidArgument(type_string(), " ", name(), ": variable ", var->name(),
                                        " must be at least a vector, but has shape ", cur->shape().DebugString()));
    const int64_t rows = cur->dim_size(0);
    const int64_t row_elems = rows == 0 ? 0 : cur->NumElements() / rows;
    const bool scalar_update = updates.dims() == 0;
    if (!scalar_update) {
      bool match = updates.dims() == indices.dims() + cur->dims() - 1;
      for (int i = 0; match && i < indices.dims(); ++i) match = updates.dim_size(i) == indices.dim_size(i);
      for (int i = 1; match && i < cur->dims(); ++i) {
        match = updates.dim_size(indices.dims() + i - 1) == cur->dim_size(i);
      }
      OP_REQUIRES(ctx, match,
                  errors::InvalidArgument(type_string(), " ", name(), ": updates must have shape indices.shape + ",
                                          "variable.shape[1:] or be a scalar; got updates ",
                                          updates.shape().DebugString(), ", indices ", indices.shape().DebugString(),
                                          ", variable ", var->name(), " ", cur->shape().DebugString()));
    }
    const int64_t n = indices.NumElements();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t idx = IndexAt(indices, i);
      OP_REQUIRES(ctx, idx >= 0 && idx < rows,
                  errors::InvalidArgument(type_string(), " ", name(), ": indices[", i, "] = ", idx, " is not in [0, ",
                                          rows, ") (variable ", var->name(), " of shape ", cur->shape().DebugString(),
                                          ")"));
    }
    if (!cur->RefCountIsOne()) *cur = cur->DeepCopy();  // readers keep their snapshot
    T* dst = cur->data<T>();
    const T* src = updates.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      T* row = dst + IndexAt(indices, i) * row_elems;
      for (int64_t k = 0; k < row_elems; ++k) {
        const T& u = scalar_update ? src[0] : src[i * row_elems + k];
        if constexpr (kMode == Mode::kUpdate) row[k] = u;
        else if constexpr (kMode == Mode::kAdd) row[k] += u;
        else row[k] -= u;
      }
    }
  }
};

template <Mode kMode>
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
  RegisterKernels<Mode::kUpdate>("ResourceScatterUpdate");
  RegisterKernels<Mode::kAdd>("ResourceScatterAdd");
  RegisterKernels<Mode::kSub>("ResourceScatterSub");
}

}  // namespace dflow
