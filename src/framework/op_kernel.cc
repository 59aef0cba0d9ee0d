#include "framework/op_kernel.h"

#include "absl/strings/str_join.h"
#include "base/logging.h"

namespace dflow {

void AsyncOpKernel::Compute(OpKernelContext* ctx) {
  ctx->SetStatus(errors::Internal("Async kernel ", name(), " called synchronously"));
}

Status OpKernelContext::allocate_output(int i, const TensorShape& shape, Tensor** out) {
  if (i < 0 || i >= num_outputs()) {
    return errors::Internal("Kernel ", kernel_->name(), " allocates output ", i, " of ", num_outputs());
  }
  // A null budget (in-process sessions) is the plain allocation.
  ASSIGN_OR_RETURN(outputs_[i].tensor,
                   Tensor::Allocate(kernel_->output_type(i), shape, step_ == nullptr ? nullptr : step_->memory_budget));
  *out = &outputs_[i].tensor;
  return absl::OkStatus();
}

Status OpKernelContext::allocate_temp(DType type, const TensorShape& shape, Tensor* out) {
  ASSIGN_OR_RETURN(*out, Tensor::Allocate(type, shape, step_ == nullptr ? nullptr : step_->memory_budget));
  return absl::OkStatus();
}

Status OpKernelContext::forward_input_or_allocate_output(std::initializer_list<int> candidates, int output,
                                                         const TensorShape& shape, Tensor** out, int* forwarded_from) {
  if (forwarded_from != nullptr) *forwarded_from = -1;
  if (output < 0 || output >= num_outputs()) {
    return errors::Internal("Kernel ", kernel_->name(), " allocates output ", output, " of ", num_outputs());
  }
  const DType type = kernel_->output_type(output);
  if (IsNumeric(type) || type == DT_BOOL) {
    for (int input : candidates) {
      if (input < 0 || input >= num_inputs_) continue;
      const TensorValue& in = inputs_[input];
      // A count of 1 means this slot is the sole holder, and nothing can take a new reference
      // meanwhile, since nobody else can reach the buffer.
      if (in.ref != nullptr || in.borrowed != nullptr || in.is_dead || in.tensor.dtype() != type ||
          in.tensor.NumElements() != shape.num_elements() || !in.tensor.RefCountIsOne()) {
        continue;
      }
      if (in.tensor.shape() == shape) {
        outputs_[output].tensor = in.tensor;
      } else {
        ASSIGN_OR_RETURN(outputs_[output].tensor, in.tensor.Reshaped(shape));
      }
      *out = &outputs_[output].tensor;
      if (forwarded_from != nullptr) *forwarded_from = input;
      return absl::OkStatus();
    }
  }
  return allocate_output(output, shape, out);
}

KernelRegistry* KernelRegistry::Global() {
  static KernelRegistry* r = new KernelRegistry;
  return r;
}

void KernelRegistry::Register(const KernelBuilder& b, KernelFactory factory) {
  std::lock_guard<std::mutex> l(mu_);
  kernels_[b.op_].push_back(Entry{b.device_type_, b.constraints_, std::move(factory)});
}

const KernelRegistry::Entry* KernelRegistry::Find(const std::string& device_type, const NodeProperties& props) const {
  auto it = kernels_.find(props.op);
  if (it == kernels_.end()) return nullptr;
  for (const Entry& e : it->second) {
    if (e.device_type != device_type) continue;
    bool ok = true;
    for (const auto& [attr, t] : e.constraints) {
      auto a = props.attrs.find(attr);
      const DType* v = a == props.attrs.end() ? nullptr : a->second.get_if<DType>();
      if (v == nullptr || *v != t) {
        ok = false;
        break;
      }
    }
    if (ok) return &e;
  }
  return nullptr;
}

bool KernelRegistry::HasKernel(const std::string& device_type, const NodeProperties& props) const {
  std::lock_guard<std::mutex> l(mu_);
  return Find(device_type, props) != nullptr;
}

std::vector<std::string> KernelRegistry::DescribeKernels(const std::string& op) const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::string> out;
  auto it = kernels_.find(op);
  if (it == kernels_.end()) return out;
  for (const Entry& e : it->second) {
    std::string s = e.device_type;
    if (!e.constraints.empty()) {
      absl::StrAppend(&s, ": ", absl::StrJoin(e.constraints, ", ", [](std::string* o, const auto& c) {
        absl::StrAppend(o, c.first, "=", DTypeString(c.second));
      }));
    }
    out.push_back(std::move(s));
  }
  return out;
}

StatusOr<std::unique_ptr<OpKernel>> KernelRegistry::CreateKernel(Device* device, const std::string& device_type,
                                                                 std::shared_ptr<const NodeProperties> props,
                                                                 FunctionLibraryRuntime* function_library) const {
  KernelFactory factory;
  {
    std::lock_guard<std::mutex> l(mu_);
    const Entry* e = Find(device_type, *props);
    if (e != nullptr) factory = e->factory;
  }
  if (!factory) {
    std::string attrs;
    for (const auto& [k, v] : props->attrs) {
      if (v.get_if<DType>() != nullptr) absl::StrAppend(&attrs, attrs.empty() ? "" : ", ", k, "=", v.DebugString());
    }
    std::vector<std::string> have = DescribeKernels(props->op);
    return errors::NotFound("No kernel registered for op '", props->op, "' used by node '", props->name, "' on ",
                            device_type, " with attrs [", attrs,
                            "]; registered kernels: ", have.empty() ? "<none>" : absl::StrJoin(have, "; "));
  }
  OpKernelConstruction ctx(device, props, function_library);
  std::unique_ptr<OpKernel> k = factory(&ctx);
  if (!ctx.status().ok()) {
    return errors::Annotate(ctx.status(), absl::StrCat("Node '", props->name, "' (", props->op, "): "));
  }
  return k;
}

}  // namespace dflow
