#include "ops/training/apply_util.h"

#include "framework/shape_inference.h"
#include "ops/state/resource_util.h"

namespace dflow {

Status LockApplyVars(OpKernelContext* ctx, int refs, bool resource, DType dtype, const std::string& where,
                     LockedVars* out) {
  out->vars.assign(refs, nullptr);
  out->held.assign(refs, nullptr);
  for (int i = 0; i < refs; ++i) {
    if (resource) {
      StatusOr<const ResourceHandle*> h = HandleFromInput(ctx, i);
      if (!h.ok()) return h.status();
      StatusOr<std::shared_ptr<Var>> v = LookupResource<Var>(ctx, **h);
      if (!v.ok()) {
        return errors::FailedPrecondition(where, ": attempting to use uninitialized value ", (*h)->name, " (",
                                          v.status().message(), ")");
      }
      out->held[i] = *v;
      out->vars[i] = out->held[i].get();
      continue;
    }
    out->vars[i] = ctx->input_ref(i);
    if (out->vars[i] == nullptr) return errors::InvalidArgument(where, ": input ", i, " is not a variable reference");
  }
  out->distinct = out->vars;
  std::sort(out->distinct.begin(), out->distinct.end());
  out->distinct.erase(std::unique(out->distinct.begin(), out->distinct.end()), out->distinct.end());
  for (Var* v : out->distinct) out->locks.emplace_back(*v->mu());
  for (Var* v : out->vars) {
    const Tensor& t = *v->tensor();
    if (!t.IsInitialized()) {
      return errors::FailedPrecondition(where, ": attempting to use uninitialized value ", v->name());
    }
    if (t.dtype() != dtype) {
      return errors::InvalidArgument(where, ": variable ", v->name(), " holds ", DTypeString(t.dtype()),
                                     ", the op expects ", DTypeString(dtype));
    }
  }
  const TensorShape& shape = out->vars[0]->tensor()->shape();
  for (int i = 1; i < refs; ++i) {
    if (out->vars[i]->tensor()->shape() != shape) {
      return errors::InvalidArgument(where, ": var and input ", i, " do not have the same shape: ", shape.DebugString(),
                                     " vs ", out->vars[i]->tensor()->shape().DebugString());
    }
  }
  return absl::OkStatus();
}

Status CheckScalarRanks(InferenceContext* c, const std::vector<int>& scalars) {
  PartialTensorShape unused;
  for (int i : scalars) {
    if (!c->WithRank(c->input(i), 0, &unused).ok()) {
      return errors::InvalidArgument(c->node().op_def->name, ": ", c->node().op_def->inputs[i].name,
                                     " must be a scalar, got shape ", c->input(i).DebugString());
    }
  }
  return absl::OkStatus();
}

ShapeFn ApplyShape(std::vector<int> same, std::vector<int> scalars) {
  return [same = std::move(same), scalars = std::move(scalars)](InferenceContext* c) -> Status {
    const OpDef& def = *c->node().op_def;
    PartialTensorShape s = c->input(0);
    for (int i : same) {
      auto merged = s.MergeWith(c->input(i));
      if (!merged.ok()) {
        return errors::InvalidArgument(def.name, ": var and ", def.inputs[i].name,
                                       " do not have compatible shapes: ", s.DebugString(), " vs ",
                                       c->input(i).DebugString());
      }
      s = *merged;
    }
    Status st = CheckScalarRanks(c, scalars);
    if (!st.ok()) return st;
    c->set_output(0, s);
    return absl::OkStatus();
  };
}

}  // namespace dflow
