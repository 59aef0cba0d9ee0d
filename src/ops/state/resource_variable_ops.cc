// Resource variables: VarHandleOp, ReadVariableOp, AssignVariableOp, AssignAddVariableOp,
// AssignSubVariableOp, VarIsInitializedOp, VariableShape and ResourceGather, with gradients.
//
// A VarHandleOp outputs a DT_RESOURCE handle naming a Var in the device's ResourceMgr under
// (container or the step's default, shared_name or the node name) — the same Var objects and
// storage conventions as VariableV2 — without creating it. AssignVariableOp creates it when
// missing (as TensorFlow does). Reads take a snapshot; updates happen under the Var's mutex, in
// place when nobody else holds the buffer and into a fresh buffer otherwise (copy on write).
#include <cstring>

#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/state/resource_util.h"
#include "ops/state/state_ops.h"
#include "ops/state/tensor_rows.h"

namespace dflow {
namespace {

constexpr const char* kVarType = "Var";

class VarHandleOp : public OpKernel {
 public:
  explicit VarHandleOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("container", &container_));
    c->SetStatus(c->GetAttr("shared_name", &shared_name_));
  }
  void Compute(OpKernelContext* ctx) override {
    SetHandleOutput(ctx, 0, MakeResourceHandle(ctx, container_, shared_name_, kVarType));
  }

 private:
  std::string container_, shared_name_;
};

// The Var that input 0's handle names. As in TensorFlow, a variable that does not exist yet is
// uninitialized (FailedPrecondition) for ReadVariableOp (`read`), and NotFound for the other ops.
StatusOr<std::shared_ptr<Var>> LookupVar(OpKernelContext* ctx, bool read = false) {
  ASSIGN_OR_RETURN(const ResourceHandle* h, HandleFromInput(ctx, 0));
  StatusOr<std::shared_ptr<Var>> v = LookupResource<Var>(ctx, *h);
  if (v.status().code() == absl::StatusCode::kNotFound && !read) {
    return errors::NotFound("Resource ", h->container, "/", h->name, " does not exist (",
                            ctx->op_kernel().type_string(), " ", ctx->node_name(),
                            ": the resource variable was never assigned)");
  }
  if (v.status().code() == absl::StatusCode::kNotFound) {
    return errors::FailedPrecondition("Attempting to use uninitialized value ", h->name, " (",
                                      ctx->op_kernel().type_string(), " ", ctx->node_name(),
                                      ": the resource variable does not exist)");
  }
  return v;
}

Status CheckDtype(OpKernelContext* ctx, const Var& var, DType want) {
  if (var.dtype() != want) {
    return errors::InvalidArgument(ctx->op_kernel().type_string(), " ", ctx->node_name(), ": variable ", var.name(),
                                   " has dtype ", DTypeString(var.dtype()), " but the op expects ", DTypeString(want));
  }
  return absl::OkStatus();
}

class ReadVariableOp : public OpKernel {
 public:
  explicit ReadVariableOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("dtype", &dtype_)); }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<Var> var, LookupVar(ctx, /*read=*/true));
    OP_REQUIRES_OK(ctx, CheckDtype(ctx, *var, dtype_));
    OP_REQUIRES_ASSIGN(ctx, Tensor value, var->Read());
    ctx->set_output(0, std::move(value));
  }

 private:
  DType dtype_ = DT_INVALID;
};

class AssignVariableOp : public OpKernel {
 public:
  explicit AssignVariableOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("dtype", &dtype_));
    c->SetStatus(c->GetAttr("validate_shape", &validate_shape_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, const ResourceHandle* h, HandleFromInput(ctx, 0));
    const Tensor& value = ctx->input(1);
    ResourceMgr* rm = ctx->step().device->resource_manager();
    const std::string var_name = h->name;
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<Var> var,
                       rm->LookupOrCreate<Var>(h->container, var_name, [&]() -> StatusOr<std::shared_ptr<Var>> {
                         return std::make_shared<Var>(var_name, dtype_, PartialTensorShape());
                       }));
    OP_REQUIRES_OK(ctx, CheckDtype(ctx, *var, dtype_));
    std::lock_guard<std::mutex> l(*var->mu());
    Tensor* cur = var->tensor();
    // A variable made by VariableV2 keeps its declared shape.
    OP_REQUIRES(ctx, var->declared_shape().IsCompatibleWith(value.shape()),
                errors::InvalidArgument("AssignVariableOp ", name(), ": cannot assign a value of shape ",
                                        value.shape().DebugString(), " to variable ", var->name(), " of shape ",
                                        var->declared_shape().DebugString()));
    OP_REQUIRES(ctx, !validate_shape_ || !cur->IsInitialized() || cur->shape() == value.shape(),
                errors::InvalidArgument("AssignVariableOp ", name(), ": cannot assign a value of shape ",
                                        value.shape().DebugString(), " to variable ", var->name(), " holding shape ",
                                        cur->shape().DebugString()));
    if (cur->IsInitialized() && cur->RefCountIsOne() && cur->shape() == value.shape() && cur->dtype() != DT_STRING &&
        cur->dtype() != DT_RESOURCE && cur->TotalBytes() > 0) {
      std::memcpy(cur->raw_data(), value.raw_data(), value.TotalBytes());
    } else {
      *cur = value;  // shares the value's buffer; later in-place updates copy first
    }
  }

 private:
  DType dtype_ = DT_INVALID;
  bool validate_shape_ = false;
};

template <typename T, bool kAdd>
class AssignUpdateVariableOp : public OpKernel {
 public:
  explicit AssignUpdateVariableOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("dtype", &dtype_)); }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<Var> var, LookupVar(ctx));
    OP_REQUIRES_OK(ctx, CheckDtype(ctx, *var, dtype_));
    const Tensor& value = ctx->input(1);
    std::lock_guard<std::mutex> l(*var->mu());
    Tensor* cur = var->tensor();
    OP_REQUIRES(ctx, cur->IsInitialized(), var->UninitializedError());
    OP_REQUIRES(ctx, cur->shape() == value.shape(),
                errors::InvalidArgument(type_string(), " ", name(), ": variable ", var->name(), " has shape ",
                                        cur->shape().DebugString(), " but the update has shape ",
                                        value.shape().DebugString()));
    if (!cur->RefCountIsOne()) *cur = cur->DeepCopy();  // readers keep their snapshot
    T* dst = cur->data<T>();
    const T* src = value.data<T>();
    const int64_t n = cur->NumElements();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (kAdd) dst[i] += src[i];
      else dst[i] -= src[i];
    }
  }

 private:
  DType dtype_ = DT_INVALID;
};

class VarIsInitializedOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, const ResourceHandle* h, HandleFromInput(ctx, 0));
    StatusOr<std::shared_ptr<Var>> v = LookupResource<Var>(ctx, *h);
    bool initialized = false;
    if (v.ok()) {
      std::lock_guard<std::mutex> l(*(*v)->mu());
      initialized = (*v)->is_initialized_locked();
    } else {
      OP_REQUIRES(ctx, v.status().code() == absl::StatusCode::kNotFound, v.status());
    }
    ctx->set_output(0, Tensor(initialized));
  }
};

class VariableShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<Var> var, LookupVar(ctx));
    OP_REQUIRES_ASSIGN(ctx, Tensor value, var->Read());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape{value.dims()}, &out));
    for (int i = 0; i < value.dims(); ++i) {
      if (out->dtype() == DT_INT32) {
        OP_REQUIRES(ctx, value.dim_size(i) <= INT32_MAX,
                    errors::InvalidArgument("VariableShape ", name(), ": dimension ", i, " of ", var->name(), " (",
                                            value.dim_size(i), ") does not fit in int32"));
        out->data<int32_t>()[i] = static_cast<int32_t>(value.dim_size(i));
      } else {
        out->data<int64_t>()[i] = value.dim_size(i);
      }
    }
  }
};

class ResourceGatherOp : public OpKernel {
 public:
  explicit ResourceGatherOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("dtype", &dtype_));
    c->SetStatus(c->GetAttr("batch_dims", &batch_dims_));
  }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<Var> var, LookupVar(ctx));
    OP_REQUIRES_OK(ctx, CheckDtype(ctx, *var, dtype_));
    OP_REQUIRES_ASSIGN(ctx, Tensor params, var->Read());  // a snapshot: no lock while copying
    const Tensor& indices = ctx->input(1);
    // batch_dims leading dimensions shared by the variable and the indices: each batch gathers
    // from its own slice (TensorFlow's rule; a negative batch_dims is rejected, as there).
    const int64_t bd = batch_dims_;
    OP_REQUIRES(ctx, bd >= 0 && bd <= indices.dims() && bd < params.dims(),
                errors::InvalidArgument("ResourceGather ", name(), ": batch_dims = ", batch_dims_,
                                        " must be in [0, rank(indices) = ", indices.dims(),
                                        "] and below rank(params) = ", params.dims(), " (variable ", var->name(), ")"));
    int64_t batches = 1;
    for (int64_t i = 0; i < bd; ++i) {
      OP_REQUIRES(ctx, params.dim_size(i) == indices.dim_size(i),
                  errors::InvalidArgument("ResourceGather ", name(), ": params.shape[", i, "] = ", params.dim_size(i),
                                          " should equal indices.shape[", i, "] = ", indices.dim_size(i)));
      batches *= params.dim_size(i);
    }
    const int64_t rows = params.dim_size(bd);
    int64_t row_elems = 1;
    for (int i = bd + 1; i < params.dims(); ++i) row_elems *= params.dim_size(i);
    TensorShape out_shape = indices.shape();
    for (int i = bd + 1; i < params.dims(); ++i) OP_REQUIRES_OK(ctx, out_shape.AddDim(params.dim_size(i)));
    const int64_t n = indices.NumElements();
    const int64_t per_batch = batches == 0 ? 0 : n / batches;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t idx = IndexAt(indices, i);
      OP_REQUIRES(ctx, idx >= 0 && idx < rows,
                  errors::InvalidArgument("ResourceGather ", name(), ": indices[", i, "] = ", idx, " is not in [0, ",
                                          rows, ") (variable ", var->name(), " of shape ", params.shape().DebugString(),
                                          ")"));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t batch = per_batch == 0 ? 0 : i / per_batch;
      CopyRow(params, batch * rows + IndexAt(indices, i), out, i, row_elems);
    }
  }

 private:
  DType dtype_ = DT_INVALID;
  int64_t batch_dims_ = 0;
};

Status VariableShapeShape(InferenceContext* c) {
  c->set_output(0, PartialTensorShape({-1}));
  return absl::OkStatus();
}

Status ResourceGatherShape(InferenceContext* c) {
  int64_t batch_dims = 0;
  RETURN_IF_ERROR(c->GetAttr("batch_dims", &batch_dims));
  if (batch_dims < 0) return errors::InvalidArgument("ResourceGather: batch_dims is negative (", batch_dims, ")");
  c->set_output(0, PartialTensorShape());
  return absl::OkStatus();
}

Status ReadVariableGrad(GradContext* c) {
  c->grad_inputs[0] = c->grad_outputs[0];
  return absl::OkStatus();
}

// The gradient of a gather, as a dense tensor shaped like the variable: the gradient rows
// summed into the rows their indices name.
Status ResourceGatherGrad(GradContext* c) {
  GraphBuilder* b = c->b;
  NodeOut shape = b->Op("VariableShape", {c->inputs[0]}, {{"out_type", DT_INT32}});
  auto vec = [&](std::vector<int32_t> v, const char* name) {
    return b->Const(Tensor::FromValues<int32_t>(v, TensorShape{static_cast<int64_t>(v.size())}).value(), name);
  };
  NodeOut rows = b->Op("GatherV2", {shape, b->Scalar(DT_INT32, 0), b->Scalar(DT_INT32, 0)}, {}, "rows");
  NodeOut inner = b->Op("Slice", {shape, vec({1}, "begin"), vec({-1}, "size")}, {}, "inner");
  NodeOut flat_shape = b->Op("ConcatV2", {vec({-1}, "minus_one"), inner, b->Scalar(DT_INT32, 0)}, {}, "flat_shape");
  NodeOut grad = b->Op("Reshape", {c->grad_outputs[0], flat_shape});
  NodeOut idx = b->Op("Reshape", {c->inputs[1], vec({-1}, "flat")});
  c->grad_inputs[0] = b->Op("UnsortedSegmentSum", {grad, idx, rows});
  return b->status();
}

template <typename T>
void RegisterUpdateKernels() {
  RegisterKernel<AssignUpdateVariableOp<T, true>>(KernelBuilder("AssignAddVariableOp").TypeConstraint<T>("dtype"));
  RegisterKernel<AssignUpdateVariableOp<T, false>>(KernelBuilder("AssignSubVariableOp").TypeConstraint<T>("dtype"));
}

}  // namespace

void RegisterResourceVariableOps() {
  RegisterOp(OpDefBuilder("VarHandleOp")
                 .Output("resource: resource")
                 .Attr("container: string = ''")
                 .Attr("shared_name: string = ''")
                 .Attr("dtype: type")
                 .Attr("shape: shape")
                 .Attr("allowed_devices: list(string) = []")
                 .Attr("debug_name: string = ''")  // TensorFlow's (2.13 on): a name for messages only
                 .SetIsStateful()
                 .SetShapeFn(ScalarShape)
                 .Doc("A handle to the resource variable (container, shared_name or the node name)."));
  RegisterOp(OpDefBuilder("ReadVariableOp")
                 .Input("resource: resource")
                 .Output("value: dtype")
                 .Attr("dtype: type")
                 .SetShapeFn(UnknownShape)
                 .Doc("A snapshot of the variable's value."));
  RegisterOp(OpDefBuilder("AssignVariableOp")
                 .Input("resource: resource")
                 .Input("value: dtype")
                 .Attr("dtype: type")
                 .Attr("validate_shape: bool = false")
                 .SetShapeFn(NoOutputs)
                 .Doc("Stores value in the variable, creating it if needed."));
  RegisterOp(OpDefBuilder("AssignAddVariableOp")
                 .Input("resource: resource")
                 .Input("value: dtype")
                 .Attr("dtype: type")
                 .SetShapeFn(NoOutputs)
                 .Doc("Adds value to the variable."));
  RegisterOp(OpDefBuilder("AssignSubVariableOp")
                 .Input("resource: resource")
                 .Input("value: dtype")
                 .Attr("dtype: type")
                 .SetShapeFn(NoOutputs)
                 .Doc("Subtracts value from the variable."));
  RegisterOp(OpDefBuilder("VarIsInitializedOp")
                 .Input("resource: resource")
                 .Output("is_initialized: bool")
                 .SetShapeFn(ScalarShape)
                 .Doc("Whether the variable exists and has a value."));
  RegisterOp(OpDefBuilder("VariableShape")
                 .Input("input: resource")
                 .Output("output: out_type")
                 .Attr("out_type: {int32, int64} = int32")
                 .SetShapeFn(VariableShapeShape)
                 .Doc("The shape of the variable's value."));
  RegisterOp(OpDefBuilder("ResourceGather")
                 .Input("resource: resource")
                 .Input("indices: Tindices")
                 .Attr("batch_dims: int = 0")
                 .Attr("validate_indices: bool = true")
                 .Output("output: dtype")
                 .Attr("dtype: type")
                 .Attr("Tindices: {int32, int64}")
                 .SetShapeFn(ResourceGatherShape)
                 .Doc("Rows of the variable at the given indices."));

  RegisterKernel<VarHandleOp>(KernelBuilder("VarHandleOp"));
  RegisterKernel<ReadVariableOp>(KernelBuilder("ReadVariableOp"));
  RegisterKernel<AssignVariableOp>(KernelBuilder("AssignVariableOp"));
  RegisterUpdateKernels<float>();
  RegisterUpdateKernels<double>();
  RegisterUpdateKernels<int32_t>();
  RegisterUpdateKernels<int64_t>();
  RegisterUpdateKernels<uint8_t>();
  RegisterKernel<VarIsInitializedOp>(KernelBuilder("VarIsInitializedOp"));
  RegisterKernel<VariableShapeOp>(KernelBuilder("VariableShape"));
  RegisterKernel<ResourceGatherOp>(KernelBuilder("ResourceGather"));

  RegisterGradient("ReadVariableOp", ReadVariableGrad);
  RegisterGradient("ResourceGather", ResourceGatherGrad);
  RegisterNoGradient("VarHandleOp");
  RegisterNoGradient("VarIsInitializedOp");
  RegisterNoGradient("VariableShape");
}

}  // namespace dflow
