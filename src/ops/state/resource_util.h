// Helpers for kernels that make or use DT_RESOURCE handles (resource variables, queues,
// mutexes): the handle a *HandleOp outputs, reading a handle from an input, and finding the
// resource it names in the device's ResourceMgr.
#pragma once

#include <memory>
#include <string>

#include "framework/device.h"
#include "framework/op_kernel.h"
#include "framework/resource_mgr.h"
#include "tensor/resource_handle.h"

namespace dflow {

// The handle of resource (container, name) on the kernel's device. An empty `container` means
// the step's default container; an empty `shared_name` means the node's name.
ResourceHandle MakeResourceHandle(OpKernelContext* ctx, const std::string& container, const std::string& shared_name,
                                  std::string type_name);

// The handle of a resource that belongs to the session that runs the step unless it has a
// `shared_name` (TensorFlow's rule for queues, iterators and accumulators): without one it is
// (step's session_container, node name) when the step has a session container; otherwise, and
// with a shared_name, what MakeResourceHandle gives, shared by every session that names it.
ResourceHandle MakeSessionResourceHandle(OpKernelContext* ctx, const std::string& container,
                                         const std::string& shared_name, std::string type_name);

// Outputs a scalar DT_RESOURCE tensor holding `handle` as output `index`.
void SetHandleOutput(OpKernelContext* ctx, int index, ResourceHandle handle);

// The handle held by input `index`: InvalidArgument naming the op unless it is a scalar
// DT_RESOURCE tensor, or when it names a resource of another device.
StatusOr<const ResourceHandle*> HandleFromInput(OpKernelContext* ctx, int index);

// The resource that `handle` names, stored in the ResourceMgr as type T. NotFound when it does
// not exist; InvalidArgument when it is of another kind.
template <typename T>
StatusOr<std::shared_ptr<T>> LookupResource(OpKernelContext* ctx, const ResourceHandle& handle) {
  return ctx->step().device->resource_manager()->Lookup<T>(handle.container, handle.name);
}

}  // namespace dflow
