// TensorArrayV3 and its ops (Write, Read, Gather, Scatter, Concat, Split, Size, Close, Grad,
// GradWithShape) with TensorFlow's OpDefs. The handle is a resource whose payload owns the
// array (tensor_array.h); the float `flow` tensors carry no data, only the order of the ops, as
// in TensorFlow. Their gradients are in tensor_array_grad.cc.
#include <numeric>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/array/array_util.h"
#include "ops/tensor_array/tensor_array.h"

namespace dflow {

void RegisterTensorArrayGradients();

namespace {

using array::KernelError;

Status ReadScalarIndex(const OpKernel& k, const Tensor& t, int64_t* out) {
  if (t.dtype() != DT_INT32 || t.dims() != 0) {
    return KernelError(k, "index must be an int32 scalar, got ", DTypeString(t.dtype()), " of shape ",
                       t.shape().DebugString());
  }
  *out = t.scalar<int32_t>();
  return absl::OkStatus();
}

Status ReadIndexVector(const OpKernel& k, const Tensor& t, std::vector<int64_t>* out) {
  if (t.dtype() != DT_INT32 || t.dims() != 1) {
    return KernelError(k, "indices must be an int32 vector, got ", DTypeString(t.dtype()), " of shape ",
                       t.shape().DebugString());
  }
  auto v = t.flat<int32_t>();
  out->assign(v.begin(), v.end());
  return absl::OkStatus();
}

// [n] + rest, as a TensorShape.
StatusOr<TensorShape> Prepend(int64_t n, const TensorShape& rest) {
  std::vector<int64_t> dims{n};
  dims.insert(dims.end(), rest.dim_sizes().begin(), rest.dim_sizes().end());
  return TensorShape::FromDims(dims);
}

// The element shape for an empty result: the attr merged with what the array knows.
StatusOr<TensorShape> EmptyElementShape(TensorArray* ta, const PartialTensorShape& attr) {
  ASSIGN_OR_RETURN(PartialTensorShape known, ta->ElementShape());
  StatusOr<PartialTensorShape> merged = known.MergeWith(attr);
  PartialTensorShape s = merged.ok() ? *merged : attr;
  if (!s.IsFullyDefined()) {
    return errors::Unimplemented("TensorArray has size zero, but element shape ", s.DebugString(),
                                 " is not fully defined. Currently only static shapes are supported when packing "
                                 "zero-size TensorArrays.");
  }
  return s.ToTensorShape();
}

class TensorArrayOp : public OpKernel {
 public:
  explicit TensorArrayOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("dtype", &opts_.dtype));
    if (c->status().ok()) c->SetStatus(c->GetAttr("element_shape", &opts_.element_shape));
    if (c->status().ok()) c->SetStatus(c->GetAttr("dynamic_size", &opts_.dynamic_size));
    if (c->status().ok()) c->SetStatus(c->GetAttr("clear_after_read", &opts_.clear_after_read));
    if (c->status().ok()) c->SetStatus(c->GetAttr("identical_element_shapes", &opts_.identical_element_shapes));
    if (c->status().ok()) c->SetStatus(c->GetAttr("tensor_array_name", &name_));
    if (name_.empty()) name_ = c->node().name;
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& size = ctx->input(0);
    OP_REQUIRES(ctx, size.dtype() == DT_INT32 && size.dims() == 0,
                KernelError(*this, "size must be an int32 scalar, got shape ", size.shape().DebugString()));
    const int32_t n = size.scalar<int32_t>();
    OP_REQUIRES(ctx, n >= 0, errors::InvalidArgument("Size should be >= 0."));
    auto ta = std::make_shared<TensorArray>(name_, n, opts_);
    ctx->set_output(0, TensorArrayHandle(ctx, std::move(ta)));
    ctx->set_output(1, Tensor(0.0f));
  }

 private:
  TensorArray::Options opts_;
  std::string name_;
};

class WriteOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<TensorArray> ta, GetTensorArray(ctx, 0));
    int64_t index = 0;
    OP_REQUIRES_OK(ctx, ReadScalarIndex(*this, ctx->input(1), &index));
    OP_REQUIRES_OK(ctx, ta->Write(index, ctx->input(2)));
    ctx->set_output(0, ctx->input(3));
  }
};

Status CheckDType(const OpKernel& k, const TensorArray& ta, DType want) {
  if (ta.dtype() != want) {
    return errors::InvalidArgument("TensorArray dtype is ", DTypeString(ta.dtype()), " but Op requested dtype ",
                                   DTypeString(want), ".");
  }
  return absl::OkStatus();
}

class ReadOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<TensorArray> ta, GetTensorArray(ctx, 0));
    OP_REQUIRES_OK(ctx, CheckDType(*this, *ta, output_type(0)));
    int64_t index = 0;
    OP_REQUIRES_OK(ctx, ReadScalarIndex(*this, ctx->input(1), &index));
    Tensor value;
    OP_REQUIRES_OK(ctx, ta->Read(index, &value));
    ctx->set_output(0, std::move(value));
  }
};

class GatherOp : public OpKernel {
 public:
  explicit GatherOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("element_shape", &shape_)); }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<TensorArray> ta, GetTensorArray(ctx, 0));
    OP_REQUIRES_OK(ctx, CheckDType(*this, *ta, output_type(0)));
    std::vector<int64_t> indices;
    OP_REQUIRES_OK(ctx, ReadIndexVector(*this, ctx->input(1), &indices));
    if (indices.empty()) {
      OP_REQUIRES_ASSIGN(ctx, TensorShape elem, EmptyElementShape(ta.get(), shape_));
      OP_REQUIRES_ASSIGN(ctx, TensorShape s, Prepend(0, elem));
      OP_REQUIRES_ASSIGN(ctx, Tensor out, Tensor::Allocate(ta->dtype(), s));
      ctx->set_output(0, std::move(out));
      return;
    }
    std::vector<Tensor> values;
    OP_REQUIRES_OK(ctx, ta->ReadMany(indices, &values));
    const TensorShape& first = values[0].shape();
    OP_REQUIRES(ctx, shape_.IsCompatibleWith(first),
                errors::InvalidArgument("TensorArray was passed element_shape ", shape_.DebugString(),
                                        " which does not match the Tensor at index 0: ", first.DebugString()));
    for (size_t i = 1; i < values.size(); ++i) {
      OP_REQUIRES(ctx, values[i].shape() == first,
                  errors::InvalidArgument("TensorArray has inconsistent shapes.  Index 0 has shape: ",
                                          first.DebugString(), " but index ", i,
                                          " has shape: ", values[i].shape().DebugString()));
    }
    OP_REQUIRES_ASSIGN(ctx, TensorShape s, Prepend(static_cast<int64_t>(values.size()), first));
    OP_REQUIRES_ASSIGN(ctx, Tensor out, ConcatParts(ta->dtype(), values, s));
    ctx->set_output(0, std::move(out));
  }

 private:
  PartialTensorShape shape_;
};

class ScatterOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<TensorArray> ta, GetTensorArray(ctx, 0));
    std::vector<int64_t> indices;
    OP_REQUIRES_OK(ctx, ReadIndexVector(*this, ctx->input(1), &indices));
    const Tensor& value = ctx->input(2);
    OP_REQUIRES(ctx, value.dims() >= 1,
                errors::InvalidArgument("Expected value to be at least a vector, but received shape: ",
                                        value.shape().DebugString()));
    OP_REQUIRES(ctx, static_cast<int64_t>(indices.size()) == value.dim_size(0),
                errors::InvalidArgument("Expected len(indices) == values.shape[0], but saw: ", indices.size(), " vs. ",
                                        value.dim_size(0)));
    std::vector<int64_t> rest(value.shape().dim_sizes().begin() + 1, value.shape().dim_sizes().end());
    OP_REQUIRES_ASSIGN(ctx, TensorShape elem, TensorShape::FromDims(rest));
    std::vector<Tensor> elems;
    elems.reserve(indices.size());
    for (size_t i = 0; i < indices.size(); ++i) {
      OP_REQUIRES_ASSIGN(ctx, Tensor row, value.Slice(static_cast<int64_t>(i), static_cast<int64_t>(i) + 1));
      OP_REQUIRES_ASSIGN(ctx, Tensor e, row.Reshaped(elem));
      elems.push_back(std::move(e));
    }
    OP_REQUIRES_OK(ctx, ta->WriteMany(indices, elems));
    ctx->set_output(0, ctx->input(3));
  }
};

class ConcatOp : public OpKernel {
 public:
  explicit ConcatOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("element_shape_except0", &except0_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<TensorArray> ta, GetTensorArray(ctx, 0));
    OP_REQUIRES_OK(ctx, CheckDType(*this, *ta, output_type(0)));
    std::vector<Tensor> values;
    OP_REQUIRES_OK(ctx, ta->ReadAll(&values));
    if (values.empty()) {
      OP_REQUIRES(ctx, except0_.IsFullyDefined(),
                  errors::Unimplemented("TensorArray has size zero, but element_shape_except0 ", except0_.DebugString(),
                                        " is not fully defined. Currently only static shapes are supported when "
                                        "concatenating zero-size TensorArrays."));
      OP_REQUIRES_ASSIGN(ctx, TensorShape rest, except0_.ToTensorShape());
      OP_REQUIRES_ASSIGN(ctx, TensorShape s, Prepend(0, rest));
      OP_REQUIRES_ASSIGN(ctx, Tensor out, Tensor::Allocate(ta->dtype(), s));
      ctx->set_output(0, std::move(out));
      ctx->set_output(1, Tensor(DT_INT64, TensorShape({0})));
      return;
    }
    Tensor lengths(DT_INT64, TensorShape({static_cast<int64_t>(values.size())}));
    int64_t total = 0;
    std::vector<int64_t> rest0;
    for (size_t i = 0; i < values.size(); ++i) {
      const TensorShape& s = values[i].shape();
      OP_REQUIRES(ctx, s.dims() >= 1,
                  errors::InvalidArgument("Concat saw a scalar shape at index ", i,
                                          " but requires at least vectors.  Did you mean to call pack?"));
      std::vector<int64_t> rest(s.dim_sizes().begin() + 1, s.dim_sizes().end());
      if (i == 0) {
        rest0 = rest;
      } else {
        OP_REQUIRES(ctx, rest == rest0,
                    errors::InvalidArgument("TensorArray has inconsistent shapes.  Index 0 has (excepting dimension "
                                            "0) shape: ",
                                            values[0].shape().DebugString(), " but index ", i,
                                            " has (excepting dimension 0) shape: ", s.DebugString()));
      }
      lengths.flat<int64_t>()[i] = s.dim_size(0);
      total += s.dim_size(0);
    }
    OP_REQUIRES_ASSIGN(ctx, TensorShape rest, TensorShape::FromDims(rest0));
    OP_REQUIRES(ctx, except0_.IsCompatibleWith(rest),
                errors::InvalidArgument("TensorArray was passed element_shape_except0 ", except0_.DebugString(),
                                        " but index 0 has (excepting dimension 0) shape: ", rest.DebugString(),
                                        " which does not match."));
    OP_REQUIRES_ASSIGN(ctx, TensorShape s, Prepend(total, rest));
    OP_REQUIRES_ASSIGN(ctx, Tensor out, ConcatParts(ta->dtype(), values, s));
    ctx->set_output(0, std::move(out));
    ctx->set_output(1, std::move(lengths));
  }

 private:
  PartialTensorShape except0_;
};

class SplitOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<TensorArray> ta, GetTensorArray(ctx, 0));
    const Tensor& value = ctx->input(1);
    const Tensor& lengths = ctx->input(2);
    OP_REQUIRES(ctx, value.dims() >= 1,
                errors::InvalidArgument("Expected value to be at least a vector, but received shape: ",
                                        value.shape().DebugString()));
    OP_REQUIRES(ctx, lengths.dtype() == DT_INT64 && lengths.dims() == 1,
                errors::InvalidArgument("Expected lengths to be a vector, received shape: ",
                                        lengths.shape().DebugString()));
    auto lens = lengths.flat<int64_t>();
    int64_t sum = 0;
    for (int64_t l : lens) {
      OP_REQUIRES(ctx, l >= 0, errors::InvalidArgument("Expected lengths to be non-negative, but saw: ", l));
      sum += l;
    }
    OP_REQUIRES(ctx, sum == value.dim_size(0),
                errors::InvalidArgument("Expected sum of lengths to be equal to values.shape[0], but sum of "
                                        "lengths is: ",
                                        sum, " and value's shape is: ", value.shape().DebugString()));
    OP_REQUIRES_OK(ctx, ta->CheckOrResizeForSplit(static_cast<int64_t>(lens.size())));
    std::vector<int64_t> indices;
    std::vector<Tensor> elems;
    int64_t offset = 0;
    for (size_t i = 0; i < lens.size(); ++i) {
      OP_REQUIRES_ASSIGN(ctx, Tensor part, value.Slice(offset, offset + lens[i]));
      offset += lens[i];
      indices.push_back(static_cast<int64_t>(i));
      elems.push_back(std::move(part));
    }
    OP_REQUIRES_OK(ctx, ta->WriteMany(indices, elems));
    ctx->set_output(0, ctx->input(3));
  }
};

class SizeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<TensorArray> ta, GetTensorArray(ctx, 0));
    OP_REQUIRES_ASSIGN(ctx, int32_t n, ta->Size());
    ctx->set_output(0, Tensor(n));
  }
};

class CloseOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<TensorArray> ta, GetTensorArray(ctx, 0));
    ta->Close();
  }
};

class GradOp : public OpKernel {
 public:
  explicit GradOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("source", &source_)); }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<TensorArray> ta, GetTensorArray(ctx, 0));
    std::vector<int64_t> prepend;
    if (num_inputs() == 3) {
      const Tensor& p = ctx->input(2);
      OP_REQUIRES(ctx, p.dtype() == DT_INT32 && p.dims() == 1,
                  KernelError(*this, "shape_to_prepend must be an int32 vector, got shape ", p.shape().DebugString()));
      for (int32_t d : p.flat<int32_t>()) prepend.push_back(d);
    }
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<TensorArray> g, ta->Grad(source_, prepend));
    ctx->set_output(0, TensorArrayHandle(ctx, std::move(g)));
    ctx->set_output(1, ctx->input(1));
  }

 private:
  std::string source_;
};

// Shape functions, as TensorFlow's except that handles are scalars (the runtime shape of a resource
// handle; TensorFlow's shape functions say [2], the shape of the old string handles), flows scalars.
Status CheckScalar(InferenceContext* c, int i, const char* what) {
  PartialTensorShape unused;
  Status s = c->WithRank(c->input(i), 0, &unused);
  if (!s.ok()) return errors::InvalidArgument(what, " must be a scalar, got shape ", c->input(i).DebugString());
  return absl::OkStatus();
}

Status TensorArrayShape(InferenceContext* c) {
  RETURN_IF_ERROR(CheckScalar(c, 0, "size"));
  c->set_output(0, PartialTensorShape::Scalar());
  c->set_output(1, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

Status FlowOutShape(InferenceContext* c) {
  RETURN_IF_ERROR(CheckScalar(c, c->num_inputs() - 1, "flow_in"));
  c->set_output(0, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

Status WriteShape(InferenceContext* c) {
  RETURN_IF_ERROR(CheckScalar(c, 1, "index"));
  return FlowOutShape(c);
}

Status ReadShape(InferenceContext* c) {
  RETURN_IF_ERROR(CheckScalar(c, 1, "index"));
  RETURN_IF_ERROR(CheckScalar(c, 2, "flow_in"));
  c->set_output(0, PartialTensorShape());
  return absl::OkStatus();
}

Status GatherShape(InferenceContext* c) {
  PartialTensorShape indices;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &indices));
  RETURN_IF_ERROR(CheckScalar(c, 2, "flow_in"));
  PartialTensorShape elem;
  RETURN_IF_ERROR(c->GetAttr("element_shape", &elem));
  if (elem.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  // The first dimension stays unknown, as in TensorFlow (indices may repeat or be dropped later).
  std::vector<int64_t> dims{-1};
  dims.insert(dims.end(), elem.dim_sizes().begin(), elem.dim_sizes().end());
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

Status ScatterShape(InferenceContext* c) {
  PartialTensorShape indices;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 1, &indices));
  const PartialTensorShape& value = c->input(2);
  if (!value.unknown_rank()) {
    if (value.dims() < 1) {
      return errors::InvalidArgument("Shape must be at least rank 1 but is rank 0 for value");
    }
    if (indices.dim_size(0) >= 0 && value.dim_size(0) >= 0 && indices.dim_size(0) != value.dim_size(0)) {
      return errors::InvalidArgument("Dimensions must be equal, but are ", indices.dim_size(0), " and ",
                                     value.dim_size(0), " for indices and value");
    }
  }
  return FlowOutShape(c);
}

Status ConcatShape(InferenceContext* c) {
  RETURN_IF_ERROR(CheckScalar(c, 1, "flow_in"));
  PartialTensorShape except0;
  RETURN_IF_ERROR(c->GetAttr("element_shape_except0", &except0));
  if (except0.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
  } else {
    std::vector<int64_t> dims{-1};
    dims.insert(dims.end(), except0.dim_sizes().begin(), except0.dim_sizes().end());
    ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
    c->set_output(0, std::move(out));
  }
  c->set_output(1, PartialTensorShape({-1}));
  return absl::OkStatus();
}

Status SplitShape(InferenceContext* c) {
  PartialTensorShape unused;
  if (!c->input(1).unknown_rank() && c->input(1).dims() < 1) {
    return errors::InvalidArgument("Shape must be at least rank 1 but is rank 0 for value");
  }
  RETURN_IF_ERROR(c->WithRank(c->input(2), 1, &unused));
  return FlowOutShape(c);
}

Status SizeShape(InferenceContext* c) {
  RETURN_IF_ERROR(CheckScalar(c, 1, "flow_in"));
  c->set_output(0, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

Status GradShape(InferenceContext* c) {
  RETURN_IF_ERROR(CheckScalar(c, 1, "flow_in"));
  c->set_output(0, PartialTensorShape::Scalar());
  c->set_output(1, PartialTensorShape::Scalar());
  return absl::OkStatus();
}

}  // namespace

void RegisterTensorArrayOps() {
  RegisterOp(OpDefBuilder("TensorArrayV3")
                 .Input("size: int32")
                 .Output("handle: resource")
                 .Output("flow: float")
                 .Attr("dtype: type")
                 .Attr("element_shape: shape = unknown")
                 .Attr("dynamic_size: bool = false")
                 .Attr("clear_after_read: bool = true")
                 .Attr("identical_element_shapes: bool = false")
                 .Attr("tensor_array_name: string = ''")
                 .SetIsStateful()
                 .SetShapeFn(TensorArrayShape)
                 .Doc("An array of tensors for this step (tf.TensorArray)."));
  RegisterOp(OpDefBuilder("TensorArrayGradV3")
                 .Input("handle: resource")
                 .Input("flow_in: float")
                 .Output("grad_handle: resource")
                 .Output("flow_out: float")
                 .Attr("source: string")
                 .SetIsStateful()
                 .SetShapeFn(GradShape)
                 .Doc("The gradient array of a TensorArray for `source` (made on first use)."));
  RegisterOp(OpDefBuilder("TensorArrayGradWithShape")
                 .Input("handle: resource")
                 .Input("flow_in: float")
                 .Input("shape_to_prepend: int32")
                 .Output("grad_handle: resource")
                 .Output("flow_out: float")
                 .Attr("source: string")
                 .SetIsStateful()
                 .SetShapeFn(GradShape)
                 .Doc("TensorArrayGradV3 whose elements have shape_to_prepend in front of the forward ones."));
  RegisterOp(OpDefBuilder("TensorArrayWriteV3")
                 .Input("handle: resource")
                 .Input("index: int32")
                 .Input("value: T")
                 .Input("flow_in: float")
                 .Output("flow_out: float")
                 .Attr("T: type")
                 .SetIsStateful()
                 .SetShapeFn(WriteShape)
                 .Doc("Writes value at index."));
  RegisterOp(OpDefBuilder("TensorArrayReadV3")
                 .Input("handle: resource")
                 .Input("index: int32")
                 .Input("flow_in: float")
                 .Output("value: dtype")
                 .Attr("dtype: type")
                 .SetIsStateful()
                 .SetShapeFn(ReadShape)
                 .Doc("The element at index."));
  RegisterOp(OpDefBuilder("TensorArrayGatherV3")
                 .Input("handle: resource")
                 .Input("indices: int32")
                 .Input("flow_in: float")
                 .Output("value: dtype")
                 .Attr("dtype: type")
                 .Attr("element_shape: shape = unknown")
                 .SetIsStateful()
                 .SetShapeFn(GatherShape)
                 .Doc("The elements at indices, stacked."));
  RegisterOp(OpDefBuilder("TensorArrayScatterV3")
                 .Input("handle: resource")
                 .Input("indices: int32")
                 .Input("value: T")
                 .Input("flow_in: float")
                 .Output("flow_out: float")
                 .Attr("T: type")
                 .SetIsStateful()
                 .SetShapeFn(ScatterShape)
                 .Doc("Writes value[i] at indices[i]."));
  RegisterOp(OpDefBuilder("TensorArrayConcatV3")
                 .Input("handle: resource")
                 .Input("flow_in: float")
                 .Output("value: dtype")
                 .Output("lengths: int64")
                 .Attr("dtype: type")
                 .Attr("element_shape_except0: shape = unknown")
                 .SetIsStateful()
                 .SetShapeFn(ConcatShape)
                 .Doc("Every element concatenated along dimension 0, and their lengths."));
  RegisterOp(OpDefBuilder("TensorArraySplitV3")
                 .Input("handle: resource")
                 .Input("value: T")
                 .Input("lengths: int64")
                 .Input("flow_in: float")
                 .Output("flow_out: float")
                 .Attr("T: type")
                 .SetIsStateful()
                 .SetShapeFn(SplitShape)
                 .Doc("Splits value along dimension 0 into the elements."));
  RegisterOp(OpDefBuilder("TensorArraySizeV3")
                 .Input("handle: resource")
                 .Input("flow_in: float")
                 .Output("size: int32")
                 .SetIsStateful()
                 .SetShapeFn(SizeShape)
                 .Doc("The number of elements."));
  RegisterOp(OpDefBuilder("TensorArrayCloseV3")
                 .Input("handle: resource")
                 .SetIsStateful()
                 .SetShapeFn(NoOutputs)
                 .Doc("Closes the array and frees its elements."));
  RegisterKernel<TensorArrayOp>(KernelBuilder("TensorArrayV3"));
  RegisterKernel<GradOp>(KernelBuilder("TensorArrayGradV3"));
  RegisterKernel<GradOp>(KernelBuilder("TensorArrayGradWithShape"));
  RegisterKernel<WriteOp>(KernelBuilder("TensorArrayWriteV3"));
  RegisterKernel<ReadOp>(KernelBuilder("TensorArrayReadV3"));
  RegisterKernel<GatherOp>(KernelBuilder("TensorArrayGatherV3"));
  RegisterKernel<ScatterOp>(KernelBuilder("TensorArrayScatterV3"));
  RegisterKernel<ConcatOp>(KernelBuilder("TensorArrayConcatV3"));
  RegisterKernel<SplitOp>(KernelBuilder("TensorArraySplitV3"));
  RegisterKernel<SizeOp>(KernelBuilder("TensorArraySizeV3"));
  RegisterKernel<CloseOp>(KernelBuilder("TensorArrayCloseV3"));
  RegisterTensorArrayGradients();
}

}  // namespace dflow
