// Shape, Rank, Size, Reshape, Fill, and the gradients of Reshape and Fill.
//
// Shape functions use constant inputs where they are known, so Reshape(x, Const) and
// Fill(Const, v) get exact static shapes. Kernels validate every size that comes from a tensor
// (sign, a single -1, overflow of the element count) before allocating.
#include <algorithm>
#include <limits>
#include <string>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"
#include "ops/array/grad_util.h"

namespace dflow {
namespace {

// Reads a 1-D int32/int64 tensor into `out`.
Status ReadIndexVector(const Tensor& t, absl::string_view what, DimVector* out) {
  if (t.dims() != 1) {
    return errors::InvalidArgument(what, " must be a 1-D vector, got shape ", t.shape().DebugString());
  }
  out->clear();
  if (t.dtype() == DT_INT32) {
    for (int32_t d : t.flat<int32_t>()) out->push_back(d);
  } else if (t.dtype() == DT_INT64) {
    for (int64_t d : t.flat<int64_t>()) out->push_back(d);
  } else {
    return errors::InvalidArgument(what, " must be int32 or int64, not ", DTypeString(t.dtype()));
  }
  return absl::OkStatus();
}

// ---- Shape, Rank, Size ----

// Writes `v` into element i of an int32 or int64 tensor; InvalidArgument if int32 cannot hold it.
template <typename T>
Status StoreIndex(T* out, int64_t i, int64_t v, absl::string_view op) {
  if constexpr (std::is_same_v<T, int32_t>) {
    if (v > std::numeric_limits<int32_t>::max()) {
      return errors::InvalidArgument(op, " output type is int32 but the value ", v,
                                     " does not fit; use out_type=int64");
    }
  }
  out[i] = static_cast<T>(v);
  return absl::OkStatus();
}

template <typename OutT>
class ShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const TensorShape& s = ctx->input(0).shape();
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape{s.dims()}, &out));
    OutT* o = out->data<OutT>();
    for (int i = 0; i < s.dims(); ++i) {
      OP_REQUIRES_OK(ctx, StoreIndex(o, i, s.dim_size(i), absl::StrCat("Shape '", name(), "'")));
    }
  }
};

class RankOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    out->scalar<int32_t>() = ctx->input(0).dims();
  }
};

template <typename OutT>
class SizeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    OP_REQUIRES_OK(ctx,
                   StoreIndex(out->data<OutT>(), 0, ctx->input(0).NumElements(), absl::StrCat("Size '", name(), "'")));
  }
};

Status ShapeShape(InferenceContext* c) {
  const PartialTensorShape& in = c->input(0);
  c->set_output(0, in.unknown_rank() ? PartialTensorShape{-1} : PartialTensorShape{in.dims()});
  return absl::OkStatus();
}

// ---- Reshape ----

// Resolves `requested` (at most one -1) against `input`. Errors name the shapes as TensorFlow's
// do. TensorFlow's rule for -1: the product of the input's dims over that of the requested sizes,
// where, when a requested size is 0, zero dims are left out of both products (so an empty
// [0, 4] reshaped to [0, -1] is [0, 4], and [0, 2] to [-1, 0] is [2, 0]).
StatusOr<TensorShape> ResolveReshape(const DimVector& requested, const TensorShape& input) {
  const int64_t num_elements = input.num_elements();
  int unknown = -1;
  int64_t product = 1;  // of the nonzero sizes
  bool sizes_have_zero = false;
  for (size_t i = 0; i < requested.size(); ++i) {
    const int64_t d = requested[i];
    if (d == -1) {
      if (unknown != -1) {
        return errors::InvalidArgument("Only one input size may be -1, not both ", unknown, " and ", i);
      }
      unknown = static_cast<int>(i);
    } else if (d < 0) {
      return errors::InvalidArgument("Size ", i, " must be non-negative, not ", d);
    } else if (d == 0) {
      sizes_have_zero = true;
    } else {
      product = MultiplyWithoutOverflow(product, d);
      if (product < 0 || product > kMaxElements) {
        return errors::InvalidArgument("Requested shape has too many elements (dimension ", i, " is ", d, ")");
      }
    }
  }
  DimVector dims = requested;
  if (unknown != -1) {
    int64_t input_elements = 1;
    bool input_has_zero = false;
    for (int i = 0; i < input.dims(); ++i) {
      if (input.dim_size(i) > 0 || !sizes_have_zero) {
        input_elements = MultiplyWithoutOverflow(input_elements, input.dim_size(i));
        if (input_elements < 0) return errors::InvalidArgument("Reshape: input ", input.DebugString(), " too large");
      } else {
        input_has_zero = true;
      }
    }
    if (!input_has_zero && input_elements % product != 0) {
      return errors::InvalidArgument("Input to reshape is a tensor with ", num_elements,
                                     " values, but the requested shape requires a multiple of ", product);
    }
    dims[unknown] = input_elements / product;
  }
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total != num_elements) {
    return errors::InvalidArgument("Input to reshape is a tensor with ", num_elements,
                                   " values, but the requested shape has ", total);
  }
  return TensorShape::FromDims(dims);
}

class ReshapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    DimVector requested;
    Status s = ReadIndexVector(ctx->input(1), "shape", &requested);
    if (s.ok()) {
      StatusOr<TensorShape> shape = ResolveReshape(requested, input.shape());
      if (shape.ok()) {
        OP_REQUIRES_ASSIGN(ctx, Tensor out, input.Reshaped(*shape));
        ctx->set_output(0, std::move(out));
        return;
      }
      s = shape.status();
    }
    ctx->SetStatus(errors::Annotate(s, absl::StrCat("Reshape '", name(), "' of a tensor of shape ",
                                                    input.shape().DebugString(), ": ")));
  }
};

Status ReshapeShape(InferenceContext* c) {
  const Tensor* shape_t = c->input_tensor(1);
  if (shape_t == nullptr) {
    PartialTensorShape out;
    RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &out));  // the shape input must be a vector
    RETURN_IF_ERROR(c->ShapeFromShapeTensor(1, &out));
    c->set_output(0, std::move(out));
    return absl::OkStatus();
  }
  DimVector requested;
  RETURN_IF_ERROR(ReadIndexVector(*shape_t, "shape", &requested));
  const PartialTensorShape& in = c->input(0);
  if (std::count(requested.begin(), requested.end(), int64_t{-1}) > 1) {
    // As TensorFlow's shape function: the kernel rejects a second -1; the dims stay unknown here.
    ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(requested));
    c->set_output(0, std::move(out));
    return absl::OkStatus();
  }
  if (in.IsFullyDefined()) {
    ASSIGN_OR_RETURN(TensorShape full, in.ToTensorShape());
    ASSIGN_OR_RETURN(TensorShape out, ResolveReshape(requested, full));
    c->set_output(0, PartialTensorShape(out));
    return absl::OkStatus();
  }
  // The input's size is not known: -1 stays unknown, but the other sizes must be valid.
  int unknowns = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (requested[i] == -1 && ++unknowns > 1) {
      return errors::InvalidArgument("Only one input size may be -1, not more, in shape ", shape_t->DebugString());
    }
    if (requested[i] < -1) return errors::InvalidArgument("Size ", i, " must be non-negative, not ", requested[i]);
  }
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(requested));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

// ---- Fill ----

StatusOr<TensorShape> FillShapeFromDims(const Tensor& dims_t) {
  DimVector dims;
  RETURN_IF_ERROR(ReadIndexVector(dims_t, "dims", &dims));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) return errors::InvalidArgument("Dimension ", dims[i], " must be >= 0 (dims[", i, "])");
  }
  return TensorShape::FromDims(dims);
}

class FillOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(1);
    OP_REQUIRES(ctx, value.dims() == 0,
                errors::InvalidArgument("Fill '", name(), "': value must be a scalar, got shape ",
                                        value.shape().DebugString()));
    StatusOr<TensorShape> shape = FillShapeFromDims(ctx->input(0));
    OP_REQUIRES(ctx, shape.ok(), errors::Annotate(shape.status(), absl::StrCat("Fill '", name(), "': ")));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, *shape, &out));
    const int64_t n = out->NumElements();
    const bool known = VisitAll(value.dtype(), [&]<typename T>() {
      const T v = value.scalar<T>();
      T* o = out->data<T>();
      for (int64_t i = 0; i < n; ++i) o[i] = v;
    });
    OP_REQUIRES(ctx, known,
                errors::InvalidArgument("Fill '", name(), "': cannot fill a tensor of type ",
                                        DTypeString(value.dtype())));
  }
};

Status FillShape(InferenceContext* c) {
  PartialTensorShape value;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &value));
  const Tensor* dims_t = c->input_tensor(0);
  if (dims_t == nullptr) {
    PartialTensorShape out;
    RETURN_IF_ERROR(c->WithRank(c->input(0), 1, &out));
    RETURN_IF_ERROR(c->ShapeFromShapeTensor(0, &out));
    c->set_output(0, std::move(out));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(TensorShape out, FillShapeFromDims(*dims_t));
  c->set_output(0, PartialTensorShape(out));
  return absl::OkStatus();
}

// ---- gradients ----

// Reshape: the gradient under the input's shape.
Status ReshapeGrad(GradContext* c) {
  c->grad_inputs[0] = c->b->Op("Reshape", {c->grad_outputs[0], array::ShapeOf(c->b, c->inputs[0], DT_INT32)});
  return c->b->status();
}

// Fill: every output element is `value`, so it collects the sum of the gradient.
Status FillGrad(GradContext* c) {
  ASSIGN_OR_RETURN(c->grad_inputs[1], array::SumAll(c->b, c->grad_outputs[0]));
  return c->b->status();
}

}  // namespace

void RegisterShapeOps() {
  RegisterOp(OpDefBuilder("Shape")
                 .Input("input: T")
                 .Output("output: out_type")
                 .Attr("T: type")
                 .Attr("out_type: {int32, int64} = int32")
                 .SetShapeFn(ShapeShape)
                 .Doc("The shape of a tensor, as a 1-D vector."));
  RegisterOp(OpDefBuilder("Rank")
                 .Input("input: T")
                 .Output("output: int32")
                 .Attr("T: type")
                 .SetShapeFn(ScalarShape)
                 .Doc("The number of dimensions of a tensor."));
  RegisterOp(OpDefBuilder("Size")
                 .Input("input: T")
                 .Output("output: out_type")
                 .Attr("T: type")
                 .Attr("out_type: {int32, int64} = int32")
                 .SetShapeFn(ScalarShape)
                 .Doc("The number of elements of a tensor."));
  RegisterOp(OpDefBuilder("Reshape")
                 .Input("tensor: T")
                 .Input("shape: Tshape")
                 .Output("output: T")
                 .Attr("T: type")
                 .Attr("Tshape: {int32, int64} = int32")
                 .SetShapeFn(ReshapeShape)
                 .Doc("The tensor's values under a new shape; one size may be -1 (inferred)."));
  RegisterOp(OpDefBuilder("Fill")
                 .Input("dims: index_type")
                 .Input("value: T")
                 .Output("output: T")
                 .Attr("T: type")
                 .Attr("index_type: {int32, int64} = int32")
                 .SetShapeFn(FillShape)
                 .Doc("A tensor of shape dims with every element equal to value."));

  RegisterKernel<ShapeOp<int32_t>>(KernelBuilder("Shape").TypeConstraint<int32_t>("out_type"));
  RegisterKernel<ShapeOp<int64_t>>(KernelBuilder("Shape").TypeConstraint<int64_t>("out_type"));
  RegisterKernel<RankOp>(KernelBuilder("Rank"));
  RegisterKernel<SizeOp<int32_t>>(KernelBuilder("Size").TypeConstraint<int32_t>("out_type"));
  RegisterKernel<SizeOp<int64_t>>(KernelBuilder("Size").TypeConstraint<int64_t>("out_type"));
  RegisterKernel<ReshapeOp>(KernelBuilder("Reshape"));
  RegisterKernel<FillOp>(KernelBuilder("Fill"));
  for (const char* op : {"Shape", "Rank", "Size"}) RegisterNoGradient(op);
  RegisterGradient("Reshape", ReshapeGrad);
  RegisterGradient("Fill", FillGrad);
}

}  // namespace dflow
