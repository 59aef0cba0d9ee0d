// BatchMatMulV2: matrix products over batches, x[..., m, k] * y[..., k, n] (either side
// optionally adjoint, which for real numbers is the transpose), with the batch dimensions
// broadcast NumPy-style.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "ops/matrix/gemm.h"
#include "ops/matrix/matrix_ops.h"

namespace dflow {
namespace {

Status BatchMatMulShape(InferenceContext* c) {
  const PartialTensorShape& x = c->input(0);
  const PartialTensorShape& y = c->input(1);
  for (const PartialTensorShape* s : {&x, &y}) {
    if (!s->unknown_rank() && s->dims() < 2) {
      return errors::InvalidArgument("BatchMatMulV2 needs inputs of rank >= 2, got ", x.DebugString(), " and ",
                                     y.DebugString());
    }
  }
  if (x.unknown_rank() || y.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  bool adj_x = false, adj_y = false;
  RETURN_IF_ERROR(c->GetAttr("adj_x", &adj_x));
  RETURN_IF_ERROR(c->GetAttr("adj_y", &adj_y));
  const int rx = x.dims(), ry = y.dims();
  const int64_t m = x.dim_size(adj_x ? rx - 1 : rx - 2);
  const int64_t k = x.dim_size(adj_x ? rx - 2 : rx - 1);
  const int64_t kb = y.dim_size(adj_y ? ry - 1 : ry - 2);
  const int64_t n = y.dim_size(adj_y ? ry - 2 : ry - 1);
  if (k >= 0 && kb >= 0 && k != kb) {
    return errors::InvalidArgument("BatchMatMulV2: the inner dimensions must be equal, but are ", k, " and ", kb,
                                   " for input shapes ", x.DebugString(), " and ", y.DebugString(), " (adj_x=", adj_x,
                                   ", adj_y=", adj_y, ")");
  }
  ASSIGN_OR_RETURN(PartialTensorShape xb, PartialTensorShape::FromDims(x.dim_sizes().subspan(0, rx - 2)));
  ASSIGN_OR_RETURN(PartialTensorShape yb, PartialTensorShape::FromDims(y.dim_sizes().subspan(0, ry - 2)));
  StatusOr<PartialTensorShape> batch = BroadcastShapes(xb, yb);
  if (!batch.ok()) {
    return errors::InvalidArgument("BatchMatMulV2: the batch dimensions of ", x.DebugString(), " and ", y.DebugString(),
                                   " do not broadcast");
  }
  std::vector<int64_t> dims(batch->dim_sizes().begin(), batch->dim_sizes().end());
  dims.push_back(m);
  dims.push_back(n);
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

template <typename T>
class BatchMatMulOp : public OpKernel {
 public:
  explicit BatchMatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("adj_x", &adj_x_));
    c->SetStatus(c->GetAttr("adj_y", &adj_y_));
  }

  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    auto error = [&](auto... msg) {
      return errors::InvalidArgument("BatchMatMulV2 '", name(), "': ", msg..., " (x ", x.shape().DebugString(), ", y ",
                                     y.shape().DebugString(), ", adj_x=", adj_x_, ", adj_y=", adj_y_, ")");
    };
    OP_REQUIRES(ctx, x.dims() >= 2 && y.dims() >= 2, error("the inputs must have rank >= 2"));
    const int rx = x.dims(), ry = y.dims();
    const int64_t m = x.dim_size(adj_x_ ? rx - 1 : rx - 2);
    const int64_t k = x.dim_size(adj_x_ ? rx - 2 : rx - 1);
    const int64_t kb = y.dim_size(adj_y_ ? ry - 1 : ry - 2);
    const int64_t n = y.dim_size(adj_y_ ? ry - 2 : ry - 1);
    OP_REQUIRES(ctx, k == kb, error("the inner dimensions ", k, " and ", kb, " differ"));
    // The broadcast batch shape, and for each output batch dimension the stride (in matrices)
    // of x and y along it: 0 where that input is broadcast.
    const int rank = std::max(rx, ry) - 2;
    std::vector<int64_t> dims(rank), xs(rank, 0), ys(rank, 0);
    for (int i = 0; i < rank; ++i) {
      const int ix = i - (rank - (rx - 2)), iy = i - (rank - (ry - 2));
      const int64_t dx = ix >= 0 ? x.dim_size(ix) : 1;
      const int64_t dy = iy >= 0 ? y.dim_size(iy) : 1;
      OP_REQUIRES(ctx, dx == dy || dx == 1 || dy == 1, error("the batch dimensions do not broadcast"));
      dims[i] = dx == 1 ? dy : dx;
    }
    int64_t stride_x = 1, stride_y = 1;
    for (int i = rank - 1; i >= 0; --i) {
      const int ix = i - (rank - (rx - 2)), iy = i - (rank - (ry - 2));
      const int64_t dx = ix >= 0 ? x.dim_size(ix) : 1;
      const int64_t dy = iy >= 0 ? y.dim_size(iy) : 1;
      if (dx != 1) xs[i] = stride_x;
      if (dy != 1) ys[i] = stride_y;
      stride_x *= dx;
      stride_y *= dy;
    }
    std::vector<int64_t> out_dims = dims;
    out_dims.push_back(m);
    out_dims.push_back(n);
    StatusOr<TensorShape> out_shape = TensorShape::FromDims(out_dims);
    OP_REQUIRES(ctx, out_shape.ok(), error(out_shape.status().message()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *out_shape, &out));
    if (out->NumElements() == 0) return;
    T* o = out->data<T>();
    if (k == 0) {
      for (int64_t i = 0; i < out->NumElements(); ++i) o[i] = T{0};
      return;
    }
    const int64_t batches = out->NumElements() / (m * n);
    const T* xd = x.data<T>();
    const T* yd = y.data<T>();
    const int64_t x_matrix = m * k, y_matrix = k * n, o_matrix = m * n;
    std::vector<int64_t> index(rank, 0);
    int64_t xo = 0, yo = 0;
    for (int64_t bi = 0; bi < batches; ++bi) {
      const T* a = xd + xo * x_matrix;
      const T* b = yd + yo * y_matrix;
      T* c = o + bi * o_matrix;
      // Each product is sharded over the cores if it is big on its own.
      Status s = Gemm<T>(adj_x_, adj_y_, m, n, k, a, b, c);
      OP_REQUIRES(ctx, s.ok(), errors::Annotate(s, absl::StrCat("BatchMatMulV2 '", name(), "': ")));
      for (int d = rank - 1; d >= 0; --d) {
        xo += xs[d];
        yo += ys[d];
        if (++index[d] < dims[d]) break;
        xo -= xs[d] * dims[d];
        yo -= ys[d] * dims[d];
        index[d] = 0;
      }
    }
  }

 private:
  bool adj_x_ = false;
  bool adj_y_ = false;
};

}  // namespace

void RegisterBatchMatMulOp() {
  RegisterOp(OpDefBuilder("BatchMatMulV2")
                 .Input("x: T")
                 .Input("y: T")
                 .Output("output: T")
                 .Attr("T: {float, double, int32, int64}")
                 .Attr("adj_x: bool = false")
                 .Attr("adj_y: bool = false")
                 .Attr("grad_x: bool = false")  // TensorFlow's hints for its gradient graphs; no effect
                 .Attr("grad_y: bool = false")
                 .SetShapeFn(BatchMatMulShape)
                 .Doc("Batched matrix products x[..., :, :] * y[..., :, :] with broadcast batch dimensions."));
  RegisterKernel<BatchMatMulOp<float>>(KernelBuilder("BatchMatMulV2").TypeConstraint<float>("T"));
  RegisterKernel<BatchMatMulOp<double>>(KernelBuilder("BatchMatMulV2").TypeConstraint<double>("T"));
  RegisterKernel<BatchMatMulOp<int32_t>>(KernelBuilder("BatchMatMulV2").TypeConstraint<int32_t>("T"));
  RegisterKernel<BatchMatMulOp<int64_t>>(KernelBuilder("BatchMatMulV2").TypeConstraint<int64_t>("T"));
}

}  // namespace dflow
