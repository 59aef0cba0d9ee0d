// SparseToDense (TensorFlow's op): the dense tensor of a sparse one's (indices, shape, values),
// default_value elsewhere. The way a parsed VarLenFeature becomes a dense feature column input.
// Gradient (TensorFlow's): the values get the output gradient at their indices, the default value
// the sum of the rest.
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/array/grad_util.h"

namespace dflow {
namespace {

template <typename I>
int64_t At(const Tensor& t, int64_t i) {
  return static_cast<int64_t>(t.data<I>()[i]);
}

std::string Index(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ","), "]"); }

template <typename T, typename I>
class SparseToDenseOp : public OpKernel {
 public:
  explicit SparseToDenseOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    ctx->SetStatus(ctx->GetAttr("validate_indices", &validate_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& shape = ctx->input(1);
    const Tensor& values = ctx->input(2);
    const Tensor& def = ctx->input(3);
    OP_REQUIRES(ctx, indices.dims() <= 2,
                errors::InvalidArgument("sparse_indices should be a scalar, vector, or matrix, got shape ",
                                        indices.shape().DebugString()));
    OP_REQUIRES(ctx, shape.dims() <= 1,
                errors::InvalidArgument("output_shape must be rank 0 or 1, got shape ", shape.shape().DebugString()));
    const int64_t n = indices.dims() > 0 ? indices.shape().dim_size(0) : 1;
    const int64_t rank = indices.dims() > 1 ? indices.shape().dim_size(1) : 1;
    OP_REQUIRES(ctx, shape.NumElements() == rank,
                errors::InvalidArgument("output_shape has incorrect number of elements: ", shape.NumElements(),
                                        " should be: ", rank));
    OP_REQUIRES(ctx, values.dims() == 0 || values.NumElements() == n,
                errors::InvalidArgument("sparse_values has incorrect shape ", values.shape().DebugString(),
                                        ", should be [] or [", n, "]"));
    OP_REQUIRES(ctx, def.dims() == 0,
                errors::InvalidArgument("default_value should be a scalar, got shape ", def.shape().DebugString()));
    std::vector<int64_t> dims(rank);
    TensorShape out_shape;
    for (int64_t r = 0; r < rank; ++r) {
      dims[r] = At<I>(shape, r);
      OP_REQUIRES_OK(ctx, out_shape.AddDim(dims[r]));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    T* o = out->data<T>();
    const T d = def.data<T>()[0];
    for (int64_t i = 0; i < out->NumElements(); ++i) o[i] = d;
    std::vector<int64_t> prev, cur(rank);
    for (int64_t i = 0; i < n; ++i) {
      int64_t flat = 0;
      bool in_bounds = true;
      for (int64_t r = 0; r < rank; ++r) {
        cur[r] = At<I>(indices, i * rank + r);
        if (cur[r] < 0 || cur[r] >= dims[r]) in_bounds = false;
        flat = flat * dims[r] + cur[r];
      }
      OP_REQUIRES(ctx, in_bounds,
                  errors::InvalidArgument("indices[", i, "] = ", Index(cur), " is out of bounds: need 0 <= index < ",
                                          Index(dims)));
      if (validate_ && i > 0) {
        OP_REQUIRES(ctx, prev < cur,
                    errors::InvalidArgument(
                        "indices[", i, "] = ", Index(cur),
                        prev == cur ? " is repeated"
                                    : " is out of order. Many sparse ops require sorted indices.\n"
                                      "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n"));
      }
      prev = cur;
      o[flat] = values.dims() == 0 ? values.data<T>()[0] : values.data<T>()[i];
    }
  }

 private:
  bool validate_ = true;
};

Status SparseToDenseShape(InferenceContext* c) {
  PartialTensorShape out;
  RETURN_IF_ERROR(c->ShapeFromShapeTensor(1, &out));
  c->set_output(0, out);
  return absl::OkStatus();
}

// d values = grad at the indices (gathered from the flattened gradient at each index's row-major
// offset); d default = sum(grad) - sum(d values). No gradient for the indices or the shape.
Status SparseToDenseGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  const NodeOut indices = c->inputs[0], shape = c->inputs[1], values = c->inputs[2];
  const NodeOut grad = c->GradOrZeros(0);
  const DType it = ValueType(indices);
  const PartialTensorShape& is = array::StaticShape(indices);
  if (is.unknown_rank() || (is.dims() == 2 && is.dim_size(1) < 0)) {
    return errors::Unimplemented("SparseToDense gradient: sparse_indices of unknown rank or width ", is.DebugString());
  }
  NodeOut flat = indices;  // a scalar or a vector: offsets in a 1-D output
  if (is.dims() == 2) {
    // offset = sum_k indices[:, k] * prod(shape[k+1:])
    const int64_t rank = is.dim_size(1);
    std::vector<NodeOut> strides;
    for (int64_t k = 0; k < rank; ++k) {
      NodeOut rest = b->Op("Slice", {shape, array::IndexConst(b, it, {k + 1}), array::IndexConst(b, it, {-1})});
      strides.push_back(b->Op("Prod", {rest, b->Scalar(DT_INT32, 0)}));
    }
    NodeOut stride = strides.empty() ? array::IndexConst(b, it, {}) : b->Op("Pack", strides);
    flat = b->Op("Sum", {b->Op("Mul", {indices, stride}), b->Scalar(DT_INT32, 1)});
  }
  NodeOut gathered = b->Op("GatherV2", {b->Op("Reshape", {grad, array::IndexConst(b, DT_INT32, {-1})}), flat,
                                        b->Scalar(DT_INT32, 0)});
  ASSIGN_OR_RETURN(NodeOut sum_all, array::SumAll(b, grad));
  ASSIGN_OR_RETURN(NodeOut sum_values, array::SumAll(b, gathered));
  const PartialTensorShape& vs = array::StaticShape(values);
  if (vs.dims() == 0) {
    c->grad_inputs[2] = sum_values;  // one value broadcast to every index
  } else if (is.dims() == 0) {
    c->grad_inputs[2] = b->Op("Reshape", {gathered, array::IndexConst(b, DT_INT32, {-1})});  // [1]
  } else {
    c->grad_inputs[2] = gathered;
  }
  c->grad_inputs[3] = b->Op("Sub", {sum_all, sum_values});
  return b->status();
}

template <typename T>
void RegisterFor() {
  RegisterKernel<SparseToDenseOp<T, int32_t>>(
      KernelBuilder("SparseToDense").template TypeConstraint<T>("T").template TypeConstraint<int32_t>("Tindices"));
  RegisterKernel<SparseToDenseOp<T, int64_t>>(
      KernelBuilder("SparseToDense").template TypeConstraint<T>("T").template TypeConstraint<int64_t>("Tindices"));
}

}  // namespace

void RegisterSparseToDenseOp() {
  RegisterOp(OpDefBuilder("SparseToDense")
                 .Input("sparse_indices: Tindices")
                 .Input("output_shape: Tindices")
                 .Input("sparse_values: T")
                 .Input("default_value: T")
                 .Output("dense: T")
                 .Attr("validate_indices: bool = true")
                 .Attr("T: type")
                 .Attr("Tindices: {int32, int64}")
                 .SetShapeFn(SparseToDenseShape)
                 .Doc("The dense tensor of output_shape with sparse_values at sparse_indices, default_value "
                      "elsewhere."));
  RegisterFor<float>();
  RegisterFor<double>();
  RegisterFor<int32_t>();
  RegisterFor<int64_t>();
  RegisterFor<uint8_t>();
  RegisterFor<bool>();
  RegisterFor<std::string>();
  RegisterGradient("SparseToDense", SparseToDenseGrad);
}

}  // namespace dflow
