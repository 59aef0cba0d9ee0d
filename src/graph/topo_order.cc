#include "graph/topo_order.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace dflow {

bool IsLoopBackEdge(const Edge* e) {
  return !e->IsControlEdge() && e->src->op() == "NextIteration" && e->dst->op() == "Merge";
}

namespace topo_internal {

std::string DescribeCycle(const std::vector<std::string>& cycle_names, int num_unordered) {
  if (cycle_names.empty()) return "";
  std::vector<std::string> quoted;
  quoted.reserve(cycle_names.size() + 1);
  for (const std::string& name : cycle_names) quoted.push_back(absl::StrCat("'", name, "'"));
  quoted.push_back(quoted.front());
  return absl::StrCat(absl::StrJoin(quoted, " -> "), " (", num_unordered, " nodes cannot be ordered)");
}

}  // namespace topo_internal

StatusOr<std::vector<Node*>> TopologicalOrder(const Graph& g, const TopoOrderOptions& options) {
  // Dense indices for the included nodes, in id order.
  std::vector<Node*> nodes;
  std::vector<int> index(g.num_node_ids(), -1);
  for (int id = 0; id < g.num_node_ids(); ++id) {
    Node* n = g.node(id);
    if (n == nullptr || (options.include && !options.include(n))) continue;
    index[id] = static_cast<int>(nodes.size());
    nodes.push_back(n);
  }
  auto counts = [&](const Edge* e) {
    return e != nullptr && index[e->src->id()] >= 0 && index[e->dst->id()] >= 0 && !IsLoopBackEdge(e) &&
           (!options.edge_filter || options.edge_filter(e));
  };
  std::vector<int> pending(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const Edge* e : nodes[i]->data_inputs()) pending[i] += counts(e) ? 1 : 0;
    for (const Edge* e : nodes[i]->control_inputs()) pending[i] += counts(e) ? 1 : 0;
  }
  std::vector<int> order = topo_internal::KahnOrder(
      pending,
      [&](int i, const auto& visit) {
        for (const Edge* e : nodes[i]->out_edges())
          if (counts(e)) visit(index[e->dst->id()]);
      },
      options.tie);
  if (order.size() != nodes.size()) {
    std::vector<int> cycle = topo_internal::FindCycle(pending, [&](int i, const auto& visit) {
      for (const Edge* e : nodes[i]->data_inputs())
        if (counts(e)) visit(index[e->src->id()]);
      for (const Edge* e : nodes[i]->control_inputs())
        if (counts(e)) visit(index[e->src->id()]);
    });
    std::vector<std::string> names;
    for (int i : cycle) names.push_back(nodes[i]->name());
    return errors::InvalidArgument(options.cycle_error, ": ",
                                   topo_internal::DescribeCycle(names, static_cast<int>(nodes.size() - order.size())));
  }
  std::vector<Node*> result;
  result.reserve(order.size());
  for (int i : order) result.push_back(nodes[i]);
  return result;
}

}  // namespace dflow
