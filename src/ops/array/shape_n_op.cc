// ShapeN: the shapes of N tensors at once (TensorFlow's gradient of ConcatV2 and Conv2D use it).
#include <limits>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"

namespace dflow {
namespace {

template <typename OutT>
class ShapeNOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < num_inputs(); ++i) {
      const TensorShape& s = ctx->input(i).shape();
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape{s.dims()}, &out));
      OutT* o = out->data<OutT>();
      for (int d = 0; d < s.dims(); ++d) {
        const int64_t v = s.dim_size(d);
        if constexpr (std::is_same_v<OutT, int32_t>) {
          OP_REQUIRES(ctx, v <= std::numeric_limits<int32_t>::max(),
                      errors::InvalidArgument("ShapeN '", name(), "' output type is int32 but the value ", v,
                                              " does not fit; use out_type=int64"));
        }
        o[d] = static_cast<OutT>(v);
      }
    }
  }
};

Status ShapeNShape(InferenceContext* c) {
  for (int i = 0; i < c->num_outputs() && i < c->num_inputs(); ++i) {
    const PartialTensorShape& in = c->input(i);
    c->set_output(i, in.unknown_rank() ? PartialTensorShape{-1} : PartialTensorShape{in.dims()});
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterShapeNOp() {
  RegisterOp(OpDefBuilder("ShapeN")
                 .Input("input: N * T")
                 .Output("output: N * out_type")
                 .Attr("N: int >= 1")
                 .Attr("T: type")
                 .Attr("out_type: {int32, int64} = int32")
                 .SetShapeFn(ShapeNShape)
                 .Doc("The shapes of N tensors, each as a 1-D vector."));
  RegisterKernel<ShapeNOp<int32_t>>(KernelBuilder("ShapeN").TypeConstraint<int32_t>("out_type"));
  RegisterKernel<ShapeNOp<int64_t>>(KernelBuilder("ShapeN").TypeConstraint<int64_t>("out_type"));
  RegisterNoGradient("ShapeN");
}

}  // namespace dflow
