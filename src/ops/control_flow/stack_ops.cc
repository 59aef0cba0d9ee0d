// Stacks: StackV2, StackPushV2, StackPopV2, StackCloseV2 with TensorFlow's names and attrs.
//
// A stack lives for one step: StackV2 creates a new one each time it runs and outputs a handle
// whose payload owns it, so the stack is freed with the last copy of the handle (no resource
// manager entry, nothing shared between steps or sessions). The gradients of while loops use
// them: the forward loop pushes the values the backward loop needs, and the backward loop pops
// them in reverse order.
#include <deque>
#include <mutex>

#include "framework/device.h"
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/register_all.h"
#include "tensor/resource_handle.h"

namespace dflow {
namespace {

struct Stack {
  std::string name;
  DType elem_type;
  int64_t max_size;  // < 0: unbounded
  std::mutex mu;
  std::deque<Tensor> elems;
  bool closed = false;
};

constexpr char kStackKind[] = "Stack";

StatusOr<std::shared_ptr<Stack>> GetStack(OpKernelContext* ctx, const std::string& op, const std::string& node) {
  const Tensor& t = ctx->input(0);
  if (t.dtype() != DT_RESOURCE || t.dims() != 0) {
    return errors::InvalidArgument(op, " ", node, ": the handle must be a resource scalar, got a ",
                                   DTypeString(t.dtype()), " tensor of shape ", t.shape().DebugString());
  }
  const ResourceHandle& h = t.scalar<ResourceHandle>();
  if (h.type_name != kStackKind || h.payload == nullptr) {
    return errors::InvalidArgument(op, " ", node, ": the handle is not a stack (", h.DebugString(), ")");
  }
  return std::static_pointer_cast<Stack>(h.payload);
}

class StackOp : public OpKernel {
 public:
  explicit StackOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("elem_type", &elem_type_));
    if (c->status().ok()) c->SetStatus(c->GetAttr("stack_name", &stack_name_));
    if (stack_name_.empty()) stack_name_ = c->node().name;
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& max_size = ctx->input(0);
    OP_REQUIRES(ctx, max_size.dtype() == DT_INT32 && max_size.dims() == 0,
                errors::InvalidArgument("StackV2 ", name(), ": max_size must be an int32 scalar, got shape ",
                                        max_size.shape().DebugString()));
    auto stack = std::make_shared<Stack>();
    stack->name = stack_name_;
    stack->elem_type = elem_type_;
    stack->max_size = max_size.scalar<int32_t>();
    ResourceHandle h;
    h.device = ctx->step().device != nullptr ? ctx->step().device->name() : "";
    h.name = stack_name_;
    h.type_name = kStackKind;
    h.payload = std::move(stack);
    ctx->set_output(0, Tensor(std::move(h)));
  }

 private:
  DType elem_type_ = DT_INVALID;
  std::string stack_name_;
};

class StackPushOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<Stack> s, GetStack(ctx, "StackPushV2", name()));
    const Tensor& elem = ctx->input(1);
    {
      std::lock_guard<std::mutex> l(s->mu);
      OP_REQUIRES(ctx, !s->closed,
                  errors::InvalidArgument("StackPushV2 ", name(), ": stack '", s->name, "' is closed"));
      OP_REQUIRES(ctx, elem.dtype() == s->elem_type,
                  errors::InvalidArgument("StackPushV2 ", name(), ": stack '", s->name, "' holds ",
                                          DTypeString(s->elem_type), " but the element is ",
                                          DTypeString(elem.dtype())));
      OP_REQUIRES(ctx, s->max_size < 0 || static_cast<int64_t>(s->elems.size()) < s->max_size,
                  errors::InvalidArgument("StackPushV2 ", name(), ": stack '", s->name, "' overflowed its max_size (",
                                          s->max_size, ")"));
      s->elems.push_back(elem);
    }
    ctx->set_output(0, elem);
  }
};

class StackPopOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<Stack> s, GetStack(ctx, "StackPopV2", name()));
    Tensor t;
    {
      std::lock_guard<std::mutex> l(s->mu);
      OP_REQUIRES(ctx, !s->closed, errors::InvalidArgument("StackPopV2 ", name(), ": stack '", s->name, "' is closed"));
      OP_REQUIRES(ctx, !s->elems.empty(),
                  errors::InvalidArgument("StackPopV2 ", name(), ": stack '", s->name, "' is empty"));
      t = std::move(s->elems.back());
      s->elems.pop_back();
    }
    OP_REQUIRES(ctx, t.dtype() == output_type(0),
                errors::InvalidArgument("StackPopV2 ", name(), ": elem_type is ", DTypeString(output_type(0)),
                                        " but stack '", s->name, "' holds ", DTypeString(t.dtype())));
    ctx->set_output(0, std::move(t));
  }
};

class StackCloseOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<Stack> s, GetStack(ctx, "StackCloseV2", name()));
    std::lock_guard<std::mutex> l(s->mu);
    s->closed = true;
    s->elems.clear();
  }
};

Status PushShape(InferenceContext* c) {
  c->set_output(0, c->input(1));
  return absl::OkStatus();
}

Status PopShape(InferenceContext* c) {
  c->set_output(0, PartialTensorShape());
  return absl::OkStatus();
}

}  // namespace

void RegisterStackOps() {
  RegisterOp(OpDefBuilder("StackV2")
                 .Input("max_size: int32")
                 .Output("handle: resource")
                 .Attr("elem_type: type")
                 .Attr("stack_name: string = ''")
                 .SetIsStateful()
                 .SetShapeFn(ScalarShape)
                 .Doc("A new stack for this step (max_size < 0: unbounded)."));
  RegisterOp(OpDefBuilder("StackPushV2")
                 .Input("handle: resource")
                 .Input("elem: T")
                 .Output("output: T")
                 .Attr("T: type")
                 .Attr("swap_memory: bool = false")
                 .SetIsStateful()
                 .SetShapeFn(PushShape)
                 .Doc("Pushes elem onto the stack and outputs it."));
  RegisterOp(OpDefBuilder("StackPopV2")
                 .Input("handle: resource")
                 .Output("elem: elem_type")
                 .Attr("elem_type: type")
                 .SetIsStateful()
                 .SetShapeFn(PopShape)
                 .Doc("Pops the element on top of the stack."));
  RegisterOp(OpDefBuilder("StackCloseV2")
                 .Input("handle: resource")
                 .SetIsStateful()
                 .SetShapeFn(NoOutputs)
                 .Doc("Closes the stack and frees its elements."));
  RegisterKernel<StackOp>(KernelBuilder("StackV2"));
  RegisterKernel<StackPushOp>(KernelBuilder("StackPushV2"));
  RegisterKernel<StackPopOp>(KernelBuilder("StackPopV2"));
  RegisterKernel<StackCloseOp>(KernelBuilder("StackCloseV2"));
  for (const char* op : {"StackV2", "StackPushV2", "StackPopV2", "StackCloseV2"}) RegisterNoGradient(op);
}

}  // namespace dflow
