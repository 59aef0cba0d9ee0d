// BroadcastGradientArgs(s0, s1) -> (r0, r1): for a binary op that broadcast operands of shapes
// s0 and s1, the axes of its output that each operand's gradient must be summed over.
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "ops/math/broadcast.h"
#include "ops/math/math_ops.h"

namespace dflow {
namespace {

Status BroadcastGradientArgsShape(InferenceContext* c) {
  for (int i = 0; i < 2; ++i) {
    PartialTensorShape s;
    Status st = c->WithRank(c->input(i), 1, &s);
    if (!st.ok()) {
      return errors::InvalidArgument("BroadcastGradientArgs: s", i, " must be a vector, got ",
                                     c->input(i).DebugString());
    }
    c->set_output(i, PartialTensorShape{-1});
  }
  return absl::OkStatus();
}

template <typename T>
class BroadcastGradientArgsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    DimVector shapes[2];
    for (int i = 0; i < 2; ++i) {
      const Tensor& s = ctx->input(i);
      OP_REQUIRES(ctx, s.dims() == 1,
                  errors::InvalidArgument("BroadcastGradientArgs '", name(), "': s", i, " must be a vector, got shape ",
                                          s.shape().DebugString()));
      for (T d : s.flat<T>()) {
        OP_REQUIRES(ctx, d >= 0,
                    errors::InvalidArgument("BroadcastGradientArgs '", name(), "': s", i, " = ", s.ToString(),
                                            " has a negative dimension"));
        shapes[i].push_back(d);
      }
    }
    DimVector r[2];
    Status st = BroadcastGradientAxes(shapes[0], shapes[1], &r[0], &r[1]);
    OP_REQUIRES(ctx, st.ok(), errors::Annotate(st, absl::StrCat("BroadcastGradientArgs '", name(), "': ")));
    for (int i = 0; i < 2; ++i) {
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, TensorShape{static_cast<int64_t>(r[i].size())}, &out));
      T* o = out->data<T>();
      for (size_t j = 0; j < r[i].size(); ++j) o[j] = static_cast<T>(r[i][j]);
    }
  }
};

}  // namespace

void RegisterBroadcastGradientArgsOp() {
  RegisterOp(OpDefBuilder("BroadcastGradientArgs")
                 .Input("s0: T")
                 .Input("s1: T")
                 .Output("r0: T")
                 .Output("r1: T")
                 .Attr("T: {int32, int64} = DT_INT32")
                 .SetShapeFn(BroadcastGradientArgsShape)
                 .Doc("The axes that the gradients of two broadcast operands of shapes s0 and s1 are summed over."));
  RegisterKernel<BroadcastGradientArgsOp<int32_t>>(KernelBuilder("BroadcastGradientArgs").TypeConstraint<int32_t>("T"));
  RegisterKernel<BroadcastGradientArgsOp<int64_t>>(KernelBuilder("BroadcastGradientArgs").TypeConstraint<int64_t>("T"));
}

}  // namespace dflow
