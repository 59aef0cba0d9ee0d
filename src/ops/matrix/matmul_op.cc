// MatMul: the product of two matrices, either of them optionally transposed (see gemm.h for how
// the product is computed and how it shares the cores).
#include <type_traits>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "ops/matrix/gemm.h"
#include "ops/matrix/matrix_ops.h"

namespace dflow {
namespace {

template <typename T>
class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("transpose_a", &transpose_a_));
    c->SetStatus(c->GetAttr("transpose_b", &transpose_b_));
  }

  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    OP_REQUIRES(ctx, a.dims() == 2 && b.dims() == 2,
                errors::InvalidArgument("MatMul '", name(), "': In[0] and In[1] must be matrices (rank 2), got ",
                                        a.shape().DebugString(), " and ", b.shape().DebugString()));
    const int64_t m = a.dim_size(transpose_a_ ? 1 : 0);
    const int64_t k = a.dim_size(transpose_a_ ? 0 : 1);
    const int64_t kb = b.dim_size(transpose_b_ ? 1 : 0);
    const int64_t n = b.dim_size(transpose_b_ ? 0 : 1);
    OP_REQUIRES(ctx, k == kb,
                errors::InvalidArgument("MatMul '", name(), "': Matrix size-incompatible: In[0]: ",
                                        a.shape().DebugString(), ", In[1]: ", b.shape().DebugString(),
                                        transpose_a_ ? " (transpose_a)" : "", transpose_b_ ? " (transpose_b)" : ""));
    // [m,0] x [0,n] can name more elements than any tensor may hold.
    StatusOr<TensorShape> out_shape = TensorShape::FromDims({m, n});
    OP_REQUIRES(ctx, out_shape.ok(), errors::Annotate(out_shape.status(), absl::StrCat("MatMul '", name(), "': ")));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *out_shape, &out));
    if (m == 0 || n == 0) return;
    T* c = out->data<T>();
    if (k == 0) {
      for (int64_t i = 0; i < m * n; ++i) c[i] = T{0};
      return;
    }
    Status s = Gemm<T>(transpose_a_, transpose_b_, m, n, k, a.data<T>(), b.data<T>(), c);
    OP_REQUIRES(ctx, s.ok(), errors::Annotate(s, absl::StrCat("MatMul '", name(), "': ")));
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

Status MatMulShape(InferenceContext* c) {
  PartialTensorShape a, b;
  Status s = c->WithRank(c->input(0), 2, &a);
  if (s.ok()) s = c->WithRank(c->input(1), 2, &b);
  if (!s.ok()) {
    return errors::InvalidArgument("MatMul needs two matrices (rank 2), got ", c->input(0).DebugString(), " and ",
                                   c->input(1).DebugString());
  }
  bool ta = false, tb = false;
  RETURN_IF_ERROR(c->GetAttr("transpose_a", &ta));
  RETURN_IF_ERROR(c->GetAttr("transpose_b", &tb));
  const int64_t k = a.dim_size(ta ? 0 : 1);
  const int64_t kb = b.dim_size(tb ? 1 : 0);
  if (k >= 0 && kb >= 0 && k != kb) {
    return errors::InvalidArgument("Dimensions must be equal, but are ", k, " and ", kb,
                                   " for MatMul with input shapes: ", a.DebugString(), ", ", b.DebugString(),
                                   " (transpose_a=", ta, ", transpose_b=", tb, ")");
  }
  c->set_output(0, PartialTensorShape{a.dim_size(ta ? 1 : 0), b.dim_size(tb ? 0 : 1)});
  return absl::OkStatus();
}

}  // namespace

void RegisterMatMulOp() {
  RegisterOp(OpDefBuilder("MatMul")
                 .Input("a: T")
                 .Input("b: T")
                 .Output("product: T")
                 .Attr("transpose_a: bool = false")
                 .Attr("transpose_b: bool = false")
                 .Attr("T: {float, double, int32, int64}")
                 .Attr("grad_a: bool = false")  // TensorFlow's hints for its gradient graphs; no effect
                 .Attr("grad_b: bool = false")
                 .SetShapeFn(MatMulShape)
                 .Doc("The matrix product a * b, with a and/or b optionally transposed first."));
  RegisterKernel<MatMulOp<float>>(KernelBuilder("MatMul").TypeConstraint<float>("T"));
  RegisterKernel<MatMulOp<double>>(KernelBuilder("MatMul").TypeConstraint<double>("T"));
  RegisterKernel<MatMulOp<int32_t>>(KernelBuilder("MatMul").TypeConstraint<int32_t>("T"));
  RegisterKernel<MatMulOp<int64_t>>(KernelBuilder("MatMul").TypeConstraint<int64_t>("T"));
}

}  // namespace dflow
