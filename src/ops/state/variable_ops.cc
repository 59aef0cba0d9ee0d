// VariableV2, the reference-edge updates Assign, AssignAdd, AssignSub, and IsVariableInitialized.
//
// A VariableV2 node outputs a reference to a Var held by the device's ResourceMgr under
// (container, shared_name or node name); every session that names it shares it. Consumers
// that take a plain value read a snapshot; Assign* update it under the Var's mutex, in place
// when nobody else holds the buffer and into a fresh buffer otherwise.
#include "framework/device.h"
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "ops/register_all.h"
#include "ops/state/state_ops.h"

namespace dflow {
namespace {

class VariableOp : public OpKernel {
 public:
  explicit VariableOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("shape", &shape_));
    c->SetStatus(c->GetAttr("dtype", &dtype_));
    c->SetStatus(c->GetAttr("container", &container_));
    c->SetStatus(c->GetAttr("shared_name", &shared_name_));
    if (shared_name_.empty()) shared_name_ = name();
  }

  void Compute(OpKernelContext* ctx) override {
    const std::string& container = container_.empty() ? ctx->step().default_container : container_;
    ResourceMgr* rm = ctx->step().device->resource_manager();
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<Var> var,
                       rm->LookupOrCreate<Var>(container, shared_name_, [&]() -> StatusOr<std::shared_ptr<Var>> {
                         return std::make_shared<Var>(shared_name_, dtype_, shape_);
                       }));
    OP_REQUIRES(ctx, var->dtype() == dtype_ && var->declared_shape() == shape_,
                errors::InvalidArgument("Variable '", shared_name_, "' already exists as ", var->DebugString(),
                                        "; node '", name(), "' declares ", DTypeString(dtype_), shape_.DebugString()));
    ctx->set_output_ref(0, std::move(var));
  }

 private:
  PartialTensorShape shape_;
  DType dtype_ = DT_INVALID;
  std::string container_, shared_name_;
};

class AssignOp : public OpKernel {
 public:
  explicit AssignOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("validate_shape", &validate_shape_));
  }

  void Compute(OpKernelContext* ctx) override {
    const std::shared_ptr<Var>& var = ctx->input_ref_ptr(0);
    OP_REQUIRES(ctx, var != nullptr, errors::Internal("Assign without a variable input"));
    const Tensor& value = ctx->input(1);
    {
      std::lock_guard<std::mutex> l(*var->mu());
      Tensor* cur = var->tensor();
      if (validate_shape_) {
        OP_REQUIRES(ctx, var->declared_shape().IsCompatibleWith(value.shape()),
                    errors::InvalidArgument("Assign ", name(), ": cannot assign a value of shape ",
                                            value.shape().DebugString(), " to variable ", var->name(), " of shape ",
                                            var->declared_shape().DebugString()));
        OP_REQUIRES(ctx, !cur->IsInitialized() || cur->shape() == value.shape(),
                    errors::InvalidArgument("Assign ", name(), ": cannot assign a value of shape ",
                                            value.shape().DebugString(), " to variable ", var->name(),
                                            " holding shape ", cur->shape().DebugString()));
      }
      // A value nobody else holds (a received or freshly computed tensor) is adopted as it is;
      // otherwise a buffer the variable holds alone is overwritten in place.
      if (!value.RefCountIsOne() && cur->IsInitialized() && cur->RefCountIsOne() && cur->shape() == value.shape() &&
          cur->dtype() != DT_STRING && cur->TotalBytes() > 0) {
        std::memcpy(cur->raw_data(), value.raw_data(), value.TotalBytes());
      } else {
        *cur = value;  // shares the value's buffer; later in-place updates copy first
      }
    }
    ctx->set_output_ref(0, var);
  }

 private:
  bool validate_shape_ = true;
};

// Whether the variable has a value; a training loop asks it of every variable to tell whether
// the model is ready (ReportUninitializedVariables).
class IsVariableInitializedOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const std::shared_ptr<Var>& var = ctx->input_ref_ptr(0);
    OP_REQUIRES(ctx, var != nullptr, errors::Internal("IsVariableInitialized without a variable input"));
    bool initialized = false;
    {
      std::lock_guard<std::mutex> l(*var->mu());
      initialized = var->is_initialized_locked();
    }
    ctx->set_output(0, Tensor(initialized));
  }
};

template <typename T, bool kAdd>
class AssignUpdateOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const std::shared_ptr<Var>& var = ctx->input_ref_ptr(0);
    OP_REQUIRES(ctx, var != nullptr, errors::Internal("Assign update without a variable input"));
    const Tensor& value = ctx->input(1);
    {
      std::lock_guard<std::mutex> l(*var->mu());
      Tensor* cur = var->tensor();
      OP_REQUIRES(ctx, cur->IsInitialized(), var->UninitializedError());
      OP_REQUIRES(ctx, cur->shape() == value.shape(),
                  errors::InvalidArgument(type_string(), " ", name(), ": variable ", var->name(), " has shape ",
                                          cur->shape().DebugString(), " but the update has shape ",
                                          value.shape().DebugString()));
      if (!cur->RefCountIsOne()) {
        *cur = cur->DeepCopy();  // readers keep their snapshot
      }
      T* dst = cur->data<T>();
      const T* src = value.data<T>();
      const int64_t n = cur->NumElements();
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (kAdd) dst[i] += src[i];
        else dst[i] -= src[i];
      }
    }
    ctx->set_output_ref(0, var);
  }
};

Status VariableShape(InferenceContext* c) {
  PartialTensorShape s;
  RETURN_IF_ERROR(c->GetAttr("shape", &s));
  c->set_output(0, s);
  return absl::OkStatus();
}

Status AssignShape(InferenceContext* c) {
  bool validate = true;
  RETURN_IF_ERROR(c->GetAttr("validate_shape", &validate));
  if (!validate) {
    c->set_output(0, c->input(1));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(PartialTensorShape merged, c->input(0).MergeWith(c->input(1)));
  c->set_output(0, merged);
  return absl::OkStatus();
}

Status AssignUpdateShape(InferenceContext* c) {
  ASSIGN_OR_RETURN(PartialTensorShape merged, c->input(0).MergeWith(c->input(1)));
  c->set_output(0, merged);
  return absl::OkStatus();
}

template <typename T>
void RegisterUpdateKernels() {
  RegisterKernel<AssignUpdateOp<T, true>>(KernelBuilder("AssignAdd").TypeConstraint<T>("T"));
  RegisterKernel<AssignUpdateOp<T, false>>(KernelBuilder("AssignSub").TypeConstraint<T>("T"));
}

}  // namespace

void RegisterStateOps() {
  // "Variable" is TensorFlow's older name of VariableV2, with the same signature; graphs written
  // by TensorFlow 0.x and early 1.x use it.
  for (const char* op : {"VariableV2", "Variable"}) {
    RegisterOp(OpDefBuilder(op)
                   .Output("ref: Ref(dtype)")
                   .Attr("shape: shape")
                   .Attr("dtype: type")
                   .Attr("container: string = ''")
                   .Attr("shared_name: string = ''")
                   .SetIsStateful()
                   .SetShapeFn(VariableShape)
                   .Doc("A variable: state that persists across steps and sessions."));
    RegisterKernel<VariableOp>(KernelBuilder(op));
  }
  RegisterOp(OpDefBuilder("Assign")
                 .Input("ref: Ref(T)")
                 .Input("value: T")
                 .Output("output_ref: Ref(T)")
                 .Attr("T: type")
                 .Attr("validate_shape: bool = true")
                 .Attr("use_locking: bool = true")
                 .SetShapeFn(AssignShape)
                 .Doc("Stores value in the variable."));
  RegisterOp(OpDefBuilder("AssignAdd")
                 .Input("ref: Ref(T)")
                 .Input("value: T")
                 .Output("output_ref: Ref(T)")
                 .Attr("T: {float, double, int32, int64, uint8}")
                 .Attr("use_locking: bool = false")
                 .SetShapeFn(AssignUpdateShape)
                 .Doc("Adds value to the variable."));
  RegisterOp(OpDefBuilder("AssignSub")
                 .Input("ref: Ref(T)")
                 .Input("value: T")
                 .Output("output_ref: Ref(T)")
                 .Attr("T: {float, double, int32, int64, uint8}")
                 .Attr("use_locking: bool = false")
                 .SetShapeFn(AssignUpdateShape)
                 .Doc("Subtracts value from the variable."));
  RegisterKernel<AssignOp>(KernelBuilder("Assign"));
  RegisterOp(OpDefBuilder("IsVariableInitialized")
                 .Input("ref: Ref(dtype)")
                 .Output("is_initialized: bool")
                 .Attr("dtype: type")
                 .SetShapeFn(ScalarShape)
                 .Doc("Whether the variable has been given a value."));
  RegisterKernel<IsVariableInitializedOp>(KernelBuilder("IsVariableInitialized"));
  RegisterUpdateKernels<float>();
  RegisterUpdateKernels<double>();
  RegisterUpdateKernels<int32_t>();
  RegisterUpdateKernels<int64_t>();
  RegisterUpdateKernels<uint8_t>();
  RegisterResourceVariableOps();
  RegisterScatterOps();
  RegisterResourceScatterOps();
  RegisterMutexOps();
}

}  // namespace dflow
