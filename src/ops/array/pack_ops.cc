// Pack (tf.stack) and Unpack (tf.unstack) and their gradients, each the other's.
//
// Both view the stacked tensor as [outer, N, inner] where outer is the product of the
// dimensions before `axis`: Pack interleaves rows of `inner` elements; Unpack along the first
// dimension returns slices that share the input's buffer.
#include <string>
#include <vector>

#include "framework/op_kernel.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"
#include "ops/array/array_util.h"

namespace dflow {
namespace {

using namespace ::dflow::array;  // NOLINT: the family's own helpers

Status PackShape(InferenceContext* c) {
  PartialTensorShape merged;
  for (int i = 0; i < c->num_inputs(); ++i) {
    auto m = merged.MergeWith(c->input(i));
    if (!m.ok()) {
      return errors::InvalidArgument("Shapes of all inputs must match: values[", i,
                                     "].shape = ", c->input(i).DebugString(), " is incompatible with ",
                                     merged.DebugString());
    }
    merged = *m;
  }
  int64_t axis = 0;
  RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  if (merged.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  int a = 0;
  RETURN_IF_ERROR(CanonicalAxis(axis, merged.dims() + 1, "Pack: axis", &a));
  std::vector<int64_t> dims(merged.dim_sizes().begin(), merged.dim_sizes().end());
  dims.insert(dims.begin() + a, c->num_inputs());
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

Status UnpackShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  int64_t axis = 0, num = 0;
  RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  RETURN_IF_ERROR(c->GetAttr("num", &num));
  if (in.unknown_rank()) {
    for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, PartialTensorShape());
    return absl::OkStatus();
  }
  if (in.dims() == 0) return errors::InvalidArgument("Can't unpack a scalar");
  int a = 0;
  RETURN_IF_ERROR(CanonicalAxis(axis, in.dims(), "Unpack: axis", &a));
  if (in.dim_size(a) >= 0 && in.dim_size(a) != num) {
    return errors::InvalidArgument("Dimension ", a, " of the value (shape ", in.DebugString(), ") must be num = ", num);
  }
  std::vector<int64_t> dims(in.dim_sizes().begin(), in.dim_sizes().end());
  dims.erase(dims.begin() + a);
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, out);
  return absl::OkStatus();
}

class PackOp : public OpKernel {
 public:
  explicit PackOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("axis", &axis_)); }

  void Compute(OpKernelContext* ctx) override {
    const int n = num_inputs();
    const Tensor& first = ctx->input(0);
    for (int i = 1; i < n; ++i) {
      OP_REQUIRES(ctx, ctx->input(i).shape() == first.shape(),
                  KernelError(*this, "Shapes of all inputs must match: values[0].shape = ", ShapeStr(first),
                              " != values[", i, "].shape = ", ShapeStr(ctx->input(i))));
    }
    int a = 0;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, CanonicalAxis(axis_, first.dims() + 1, "axis", &a)));
    DimVector dims(first.shape().dim_sizes().begin(), first.shape().dim_sizes().end());
    dims.insert(dims.begin() + a, n);
    OP_REQUIRES_ASSIGN(ctx, TensorShape out_shape, MakeShape(*this, dims));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    const int64_t outer = DimProduct(first.shape(), 0, a);
    const int64_t inner = DimProduct(first.shape(), a, first.dims());
    const bool ok = VisitStorage(first.dtype(), [&]<typename E>() {
      E* dst = StorageData<E>(out);
      for (int64_t o = 0; o < outer; ++o) {
        for (int i = 0; i < n; ++i) {
          CopyN(StorageData<E>(ctx->input(i)) + o * inner, inner, dst);
          dst += inner;
        }
      }
    });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(first.dtype())));
  }

 private:
  int64_t axis_ = 0;
};

class UnpackOp : public OpKernel {
 public:
  explicit UnpackOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("axis", &axis_)); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    OP_REQUIRES(ctx, value.dims() > 0, KernelError(*this, "can't unpack a scalar"));
    int a = 0;
    OP_REQUIRES_OK(ctx, KernelAnnotate(*this, CanonicalAxis(axis_, value.dims(), "axis", &a)));
    const int num = num_outputs();
    OP_REQUIRES(ctx, value.dim_size(a) == num,
                KernelError(*this, "Input shape axis ", a, " must equal ", num, ", got shape ", ShapeStr(value)));
    TensorShape piece;
    for (int d = 0; d < value.dims(); ++d)
      if (d != a) piece.AddDimUnchecked(value.dim_size(d));
    const int64_t outer = DimProduct(value.shape(), 0, a);
    const int64_t inner = DimProduct(value.shape(), a + 1, value.dims());
    if (outer == 1 && value.NumElements() > 0) {
      for (int i = 0; i < num; ++i) {
        OP_REQUIRES_ASSIGN(ctx, Tensor rows, value.Reshaped(TensorShape{num, inner}));
        OP_REQUIRES_ASSIGN(ctx, Tensor row, rows.Slice(i, i + 1));
        OP_REQUIRES_ASSIGN(ctx, Tensor shaped, row.Reshaped(piece));
        ctx->set_output(i, std::move(shaped));
      }
      return;
    }
    std::vector<Tensor*> outs(num);
    for (int i = 0; i < num; ++i) OP_REQUIRES_OK(ctx, ctx->allocate_output(i, piece, &outs[i]));
    if (piece.num_elements() == 0) return;
    const bool ok = VisitStorage(value.dtype(), [&]<typename E>() {
      const E* src = StorageData<E>(value);
      for (int64_t o = 0; o < outer; ++o) {
        for (int i = 0; i < num; ++i) {
          CopyN(src, inner, StorageData<E>(outs[i]) + o * inner);
          src += inner;
        }
      }
    });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(value.dtype())));
  }

 private:
  int64_t axis_ = 0;
};

Status PackGrad(GradContext* c) {
  const int n = static_cast<int>(c->inputs.size());
  Node* u = c->b->AddNode("Unpack", {c->grad_outputs[0]}, {{"num", int64_t{n}}, {"axis", c->node->attrs().at("axis")}});
  if (u == nullptr) return c->b->status();
  for (int i = 0; i < n; ++i) c->grad_inputs[i] = {u, i};
  return absl::OkStatus();
}

Status UnpackGrad(GradContext* c) {
  if (c->outputs.empty()) {
    c->grad_inputs[0] = c->b->Op("ZerosLike", {c->inputs[0]});
    return c->b->status();
  }
  std::vector<NodeOut> parts;
  for (size_t i = 0; i < c->outputs.size(); ++i) parts.push_back(c->GradOrZeros(static_cast<int>(i)));
  c->grad_inputs[0] = c->b->Op("Pack", parts, {{"axis", c->node->attrs().at("axis")}});
  return c->b->status();
}

}  // namespace

void RegisterPackOps() {
  RegisterOp(OpDefBuilder("Pack")
                 .Input("values: N * T")
                 .Output("output: T")
                 .Attr("N: int >= 1")
                 .Attr("T: type")
                 .Attr("axis: int = 0")
                 .SetShapeFn(PackShape)
                 .Doc("Stacks N tensors of one shape into one of rank + 1, along a new dimension `axis`."));
  RegisterOp(OpDefBuilder("Unpack")
                 .Input("value: T")
                 .Output("output: num * T")
                 .Attr("num: int >= 0")
                 .Attr("T: type")
                 .Attr("axis: int = 0")
                 .SetShapeFn(UnpackShape)
                 .Doc("Unstacks a tensor into `num` tensors along dimension `axis`, which it removes."));
  RegisterKernel<PackOp>(KernelBuilder("Pack"));
  RegisterKernel<UnpackOp>(KernelBuilder("Unpack"));
  RegisterGradient("Pack", PackGrad);
  RegisterGradient("Unpack", UnpackGrad);
}

}  // namespace dflow
