// AddN: the element-wise sum of N tensors of one shape (no broadcasting). The gradient
// machinery uses it to add the gradients that reach one tensor along several paths.
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "ops/math/cwise_functors.h"
#include "ops/math/math_ops.h"

namespace dflow {
namespace {

Status AddNShape(InferenceContext* c) {
  PartialTensorShape out = c->input(0);
  for (int i = 1; i < c->num_inputs(); ++i) {
    StatusOr<PartialTensorShape> merged = out.MergeWith(c->input(i));
    if (!merged.ok()) {
      return errors::InvalidArgument("AddN: input ", i, " has shape ", c->input(i).DebugString(), " but input 0 has ",
                                     c->input(0).DebugString());
    }
    out = *std::move(merged);
  }
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

template <typename T>
class AddNOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    const Tensor& first = ctx->input(0);
    for (int i = 1; i < n; ++i) {
      OP_REQUIRES(ctx, ctx->input(i).shape() == first.shape(),
                  errors::InvalidArgument("AddN '", name(), "': all inputs must have the same shape, but input 0 is ",
                                          first.shape().DebugString(), " and input ", i, " is ",
                                          ctx->input(i).shape().DebugString()));
    }
    if (n == 1) {
      ctx->set_output(0, first);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, first.shape(), &out));
    const int64_t size = first.NumElements();
    T* o = out->data<T>();
    const T* a = first.data<T>();
    const T* b = ctx->input(1).data<T>();
    for (int64_t j = 0; j < size; ++j) o[j] = functor::WrapAdd(a[j], b[j]);
    for (int i = 2; i < n; ++i) {
      const T* x = ctx->input(i).data<T>();
      for (int64_t j = 0; j < size; ++j) o[j] = functor::WrapAdd(o[j], x[j]);
    }
  }
};

template <typename... Ts>
void RegisterAddNKernels() {
  (RegisterKernel<AddNOp<Ts>>(KernelBuilder("AddN").TypeConstraint<Ts>("T")), ...);
}

}  // namespace

void RegisterAddNOp() {
  RegisterOp(OpDefBuilder("AddN")
                 .Input("inputs: N * T")
                 .Output("sum: T")
                 .Attr("N: int >= 1")
                 .Attr("T: {float, double, int32, int64, uint8}")
                 .SetShapeFn(AddNShape)
                 .Doc("The element-wise sum of N tensors of the same shape."));
  RegisterAddNKernels<float, double, int32_t, int64_t, uint8_t>();
}

}  // namespace dflow
