#include "ops/state/resource_util.h"

namespace dflow {

ResourceHandle MakeResourceHandle(OpKernelContext* ctx, const std::string& container, const std::string& shared_name,
                                  std::string type_name) {
  ResourceHandle h;
  h.device = ctx->step().device != nullptr ? ctx->step().device->name() : std::string();
  h.container = container.empty() ? ctx->step().default_container : container;
  h.name = shared_name.empty() ? ctx->node_name() : shared_name;
  h.type_name = std::move(type_name);
  return h;
}

ResourceHandle MakeSessionResourceHandle(OpKernelContext* ctx, const std::string& container,
                                         const std::string& shared_name, std::string type_name) {
  ResourceHandle h = MakeResourceHandle(ctx, container, shared_name, std::move(type_name));
  if (shared_name.empty() && !ctx->step().session_container.empty()) h.container = ctx->step().session_container;
  return h;
}

void SetHandleOutput(OpKernelContext* ctx, int index, ResourceHandle handle) {
  ctx->set_output(index, Tensor(std::move(handle)));
}

StatusOr<const ResourceHandle*> HandleFromInput(OpKernelContext* ctx, int index) {
  const OpKernel& k = ctx->op_kernel();
  if (index < 0 || index >= ctx->num_inputs()) {
    return errors::Internal(k.type_string(), " ", k.name(), ": no input ", index);
  }
  const Tensor& t = ctx->input(index);
  if (t.dtype() != DT_RESOURCE || t.dims() != 0) {
    return errors::InvalidArgument(k.type_string(), " ", k.name(), ": input ", index,
                                   " must be a scalar resource handle, got a ", DTypeString(t.dtype()),
                                   " tensor of shape ", t.shape().DebugString());
  }
  const ResourceHandle* h = &t.scalar<ResourceHandle>();
  const Device* d = ctx->step().device;
  if (d != nullptr && !h->device.empty() && h->device != d->name()) {
    return errors::InvalidArgument(k.type_string(), " ", k.name(), ": the handle ", h->DebugString(),
                                   " names a resource on ", h->device, ", but the op runs on ", d->name());
  }
  return h;
}

}  // namespace dflow
