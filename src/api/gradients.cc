#include "dflow/gradients.h"

#include "graph/gradients.h"

namespace dflow {

Status AddSymbolicGradients(const Scope& scope, const std::vector<Output>& ys, const std::vector<Output>& xs,
                            const std::vector<Output>& grad_ys, std::vector<Output>* grad_xs) {
  RETURN_IF_ERROR(scope.status());
  auto convert = [](const std::vector<Output>& v, std::vector<NodeOut>* out) -> Status {
    for (const Output& o : v) {
      if (!o.valid()) return errors::InvalidArgument("Gradients of or for an invalid Output");
      out->push_back({o.node(), o.index()});
    }
    return absl::OkStatus();
  };
  std::vector<NodeOut> y, x, gy;
  RETURN_IF_ERROR(convert(ys, &y));
  RETURN_IF_ERROR(convert(xs, &x));
  RETURN_IF_ERROR(convert(grad_ys, &gy));
  std::string prefix = scope.name_prefix() + "gradients";
  auto r = AddGradients(scope.graph(), y, x, gy, prefix, scope.device());
  if (!r.ok()) {
    scope.UpdateStatus(r.status());
    return r.status();
  }
  grad_xs->clear();
  for (const NodeOut& g : *r) grad_xs->push_back(Output(g.node, g.index));
  return absl::OkStatus();
}

std::vector<Output> Gradients(const Scope& scope, const std::vector<Output>& ys, const std::vector<Output>& xs,
                              const std::vector<Output>& grad_ys) {
  std::vector<Output> out;
  if (!AddSymbolicGradients(scope, ys, xs, grad_ys, &out).ok()) return std::vector<Output>(xs.size());
  return out;
}

}  // namespace dflow
