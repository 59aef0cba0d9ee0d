// Const, Placeholder, PlaceholderWithDefault, Identity.
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"

namespace dflow {
namespace {

class ConstOp : public OpKernel {
 public:
  explicit ConstOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("value", &value_));
    if (c->status().ok() && value_.dtype() != output_type(0)) {
      c->SetStatus(errors::InvalidArgument("Const ", name(), ": value has type ", DTypeString(value_.dtype()),
                                           " but dtype is ", DTypeString(output_type(0))));
    }
  }
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, value_); }
  const Tensor* const_value() const override { return &value_; }

 private:
  Tensor value_;
};

class PlaceholderOp : public OpKernel {
 public:
  explicit PlaceholderOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("shape", &shape_)); }
  void Compute(OpKernelContext* ctx) override {
    ctx->SetStatus(errors::InvalidArgument("You must feed a value for placeholder tensor '", name(), "' with dtype ",
                                           DTypeString(output_type(0)),
                                           shape_.unknown_rank() ? std::string()
                                                                 : " and shape " + shape_.DebugString()));
  }

 private:
  PartialTensorShape shape_;
};

class IdentityOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

Status ConstShape(InferenceContext* c) {
  Tensor v;
  RETURN_IF_ERROR(c->GetAttr("value", &v));
  DType dtype = DT_INVALID;
  RETURN_IF_ERROR(c->GetAttr("dtype", &dtype));
  if (v.dtype() != dtype) {
    return errors::InvalidArgument("value has type ", DTypeString(v.dtype()), " but dtype is ", DTypeString(dtype));
  }
  c->set_output(0, PartialTensorShape(v.shape()));
  return absl::OkStatus();
}

Status PlaceholderShape(InferenceContext* c) {
  PartialTensorShape s;
  RETURN_IF_ERROR(c->GetAttr("shape", &s));
  c->set_output(0, s);
  return absl::OkStatus();
}

Status PlaceholderWithDefaultShape(InferenceContext* c) {
  PartialTensorShape s;
  RETURN_IF_ERROR(c->GetAttr("shape", &s));
  if (!s.IsCompatibleWith(c->input(0))) {
    return errors::InvalidArgument("default value of shape ", c->input(0).DebugString(),
                                   " is incompatible with the declared shape ", s.DebugString());
  }
  c->set_output(0, s);
  return absl::OkStatus();
}

}  // namespace

void RegisterConstOps() {
  RegisterOp(OpDefBuilder("Const")
                 .Output("output: dtype")
                 .Attr("value: tensor")
                 .Attr("dtype: type")
                 .SetShapeFn(ConstShape)
                 .Doc("A constant tensor."));
  RegisterOp(OpDefBuilder("Placeholder")
                 .Output("output: dtype")
                 .Attr("dtype: type")
                 .Attr("shape: shape = unknown")
                 .SetShapeFn(PlaceholderShape)
                 .Doc("A tensor that must be fed in every run that needs it."));
  RegisterOp(OpDefBuilder("PlaceholderWithDefault")
                 .Input("input: dtype")
                 .Output("output: dtype")
                 .Attr("dtype: type")
                 .Attr("shape: shape")
                 .SetShapeFn(PlaceholderWithDefaultShape)
                 .Doc("The input unless a value is fed."));
  RegisterOp(OpDefBuilder("Identity")
                 .Input("input: T")
                 .Output("output: T")
                 .Attr("T: type")
                 .SetShapeFn(UnchangedShape)
                 .Doc("The input, unchanged (reads a variable's value)."));
  RegisterKernel<ConstOp>(KernelBuilder("Const"));
  RegisterKernel<PlaceholderOp>(KernelBuilder("Placeholder"));
  RegisterKernel<IdentityOp>(KernelBuilder("PlaceholderWithDefault"));
  RegisterKernel<IdentityOp>(KernelBuilder("Identity"));
  RegisterNoGradient("Const");
  RegisterNoGradient("Placeholder");
  RegisterGradient("Identity", [](GradContext* c) {
    c->grad_inputs[0] = c->grad_outputs[0];
    return absl::OkStatus();
  });
  RegisterGradient("PlaceholderWithDefault", [](GradContext* c) {
    c->grad_inputs[0] = c->grad_outputs[0];
    return absl::OkStatus();
  });
}

}  // namespace dflow
