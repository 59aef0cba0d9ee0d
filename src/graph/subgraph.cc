#include "graph/subgraph.h"

#include "graph/function_library.h"
#include "graph/topo_order.h"

#include <algorithm>
#include <map>

namespace dflow {
namespace {

std::string CanonicalTensorName(const NodeOut& t) { return absl::StrCat(t.node->name(), ":", t.index); }

// "x:0" -> "x_0", for the names of _Arg/_Retval nodes.
std::string Mangle(const std::string& s) {
  std::string r = s;
  for (char& c : r)
    if (c == ':' || c == '/') c = '_';
  return r;
}

}  // namespace

StatusOr<NodeOut> ResolveTensor(const Graph& g, const std::string& name) {
  absl::string_view node_name;
  int index;
  bool control;
  if (!ParseTensorName(name, &node_name, &index, &control) || control) {
    return errors::InvalidArgument("'", name, "' is not a tensor name (expected \"node\" or \"node:index\")");
  }
  Node* n = g.FindNode(node_name);
  if (n == nullptr) return errors::NotFound("Tensor '", name, "' not found: the graph has no node '", node_name, "'");
  if (index >= n->num_outputs()) {
    return errors::NotFound("Tensor '", name, "' not found: node '", node_name, "' has ", n->num_outputs(), " output",
                            n->num_outputs() == 1 ? "" : "s");
  }
  return NodeOut{n, index};
}

namespace {

// What a step asks for, resolved in the full graph.
struct StepRequest {
  std::map<std::pair<int, int>, int> fed;  // (node id, output) -> feed index
  std::vector<NodeOut> feed_outs, fetch_outs;
  std::vector<Node*> targets;

  bool IsFed(const Node* n, int output) const { return fed.count({n->id(), output}) > 0; }
  // A fed Placeholder does not run: its control edges leave from the feed instead (TensorFlow's
  // rule), so ops that wait on it (control_dependencies([placeholder])) wait on the fed value.
  // The feed index of such a Placeholder, else -1.
  int FedPlaceholder(const Node* n) const {
    if (n->op() != "Placeholder" && n->op() != "PlaceholderV2") return -1;
    auto f = fed.find({n->id(), 0});
    return f == fed.end() ? -1 : f->second;
  }
};

StatusOr<StepRequest> ResolveStepRequest(const Graph& full, const std::vector<std::string>& feeds,
                                         const std::vector<std::string>& fetches,
                                         const std::vector<std::string>& targets) {
  StepRequest r;
  for (size_t i = 0; i < feeds.size(); ++i) {
    ASSIGN_OR_RETURN(NodeOut t, ResolveTensor(full, feeds[i]));
    if (!r.fed.emplace(std::make_pair(t.node->id(), t.index), static_cast<int>(i)).second) {
      return errors::InvalidArgument("Tensor '", CanonicalTensorName(t), "' is fed more than once");
    }
    r.feed_outs.push_back(t);
  }
  for (const std::string& f : fetches) {
    ASSIGN_OR_RETURN(NodeOut t, ResolveTensor(full, f));
    r.fetch_outs.push_back(t);
  }
  for (const std::string& t : targets) {
    absl::string_view name = t;
    if (!name.empty() && name[0] == '^') name.remove_prefix(1);
    Node* n = full.FindNode(name);
    if (n == nullptr) return errors::NotFound("Target '", t, "' not found: the graph has no node '", name, "'");
    r.targets.push_back(n);
  }
  return r;
}

// The nodes the fetches and targets need (by node id): a walk backwards that fed tensors cut.
StatusOr<std::vector<char>> NeededNodes(const Graph& full, const StepRequest& r) {
  std::vector<char> needed(full.num_node_ids(), 0);
  std::vector<Node*> stack;
  auto want = [&](Node* n) {
    if (!needed[n->id()]) {
      needed[n->id()] = 1;
      stack.push_back(n);
    }
  };
  for (const NodeOut& t : r.fetch_outs)
    if (!r.IsFed(t.node, t.index)) want(t.node);
  for (Node* n : r.targets) want(n);
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->data_inputs()) {
      if (e == nullptr) return errors::InvalidArgument("Node '", n->name(), "' has a missing input");
      if (!r.IsFed(e->src, e->src_output)) want(e->src);
    }
    for (const Edge* e : n->control_inputs())
      if (r.FedPlaceholder(e->src) < 0) want(e->src);
  }
  return needed;
}

// Adds copies of `order` (the needed nodes, in topological order) to the step graph `g`, with
// fed tensors read from the _Arg nodes `args`; copy[id] is the copy of the node with that id.
Status CopyNeededNodes(const std::vector<Node*>& order, const StepRequest& r, const std::vector<Node*>& args, Graph* g,
                       std::vector<Node*>* copy, std::vector<std::string>* kept_nodes) {
  struct BackEdge {
    Node* merge;
    int index;
    const Edge* edge;
  };
  std::vector<BackEdge> back_edges;
  for (Node* n : order) {
    NodeSpec spec;
    spec.name = n->name();
    spec.op = n->op();
    spec.attrs = n->attrs();
    spec.device = n->requested_device();
    for (const Edge* e : n->data_inputs()) {
      auto f = r.fed.find({e->src->id(), e->src_output});
      if (f != r.fed.end()) {
        spec.inputs.push_back({args[f->second], 0});
      } else if (IsLoopBackEdge(e)) {
        // Not built yet: stand in with the Merge's first input, then close the loop below.
        back_edges.push_back({n, static_cast<int>(spec.inputs.size()), e});
        spec.inputs.push_back(NodeOut{});
      } else {
        spec.inputs.push_back({(*copy)[e->src->id()], e->src_output});
      }
    }
    for (NodeOut& in : spec.inputs) {
      if (in.node == nullptr) {
        for (const NodeOut& other : spec.inputs)
          if (other.node != nullptr) in = other;
        if (in.node == nullptr) return errors::InvalidArgument("Merge '", n->name(), "' has only back edges");
      }
    }
    for (const Edge* e : n->control_inputs()) {
      const int f = r.FedPlaceholder(e->src);
      spec.control_inputs.push_back(f >= 0 ? args[f] : (*copy)[e->src->id()]);
    }
    ASSIGN_OR_RETURN((*copy)[n->id()], g->AddNode(std::move(spec)));
    kept_nodes->push_back(n->name());
  }
  for (const BackEdge& b : back_edges) {
    RETURN_IF_ERROR(g->UpdateInput((*copy)[b.merge->id()], b.index, {(*copy)[b.edge->src->id()], b.edge->src_output}));
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<StepGraph> BuildStepGraph(const Graph& full, const std::vector<std::string>& feeds,
                                   const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
  ASSIGN_OR_RETURN(const StepRequest r, ResolveStepRequest(full, feeds, fetches, targets));
  ASSIGN_OR_RETURN(const std::vector<char> needed, NeededNodes(full, r));

  // Lowest id first, so that the order is stable and follows construction.
  TopoOrderOptions topo;
  topo.include = [&](const Node* n) { return needed[n->id()] != 0; };
  topo.edge_filter = [&](const Edge* e) {
    return e->IsControlEdge() ? r.FedPlaceholder(e->src) < 0 : !r.IsFed(e->src, e->src_output);
  };
  topo.tie = TopoTieBreak::kLowestId;
  topo.cycle_error = "Graph contains a cycle among the nodes this run needs";
  ASSIGN_OR_RETURN(const std::vector<Node*> order, TopologicalOrder(full, topo));

  StepGraph result;
  result.graph = std::make_unique<Graph>();
  Graph* g = result.graph.get();
  g->library() = full.library();
  std::vector<Node*> args(feeds.size(), nullptr);
  for (size_t i = 0; i < r.feed_outs.size(); ++i) {
    const NodeOut& t = r.feed_outs[i];
    NodeSpec spec;
    spec.name = g->UniqueName(absl::StrCat("_arg_", Mangle(CanonicalTensorName(t))));
    spec.op = "_Arg";
    spec.attrs["T"] = BaseType(t.node->output_type(t.index));
    spec.attrs["index"] = static_cast<int64_t>(i);
    ASSIGN_OR_RETURN(args[i], g->AddNode(std::move(spec)));
  }
  std::vector<Node*> copy(full.num_node_ids(), nullptr);
  RETURN_IF_ERROR(CopyNeededNodes(order, r, args, g, &copy, &result.kept_nodes));
  for (size_t i = 0; i < r.fetch_outs.size(); ++i) {
    const NodeOut& t = r.fetch_outs[i];
    NodeSpec spec;
    spec.name = g->UniqueName(absl::StrCat("_retval_", Mangle(CanonicalTensorName(t)), "_", i));
    spec.op = "_Retval";
    auto f = r.fed.find({t.node->id(), t.index});
    if (f != r.fed.end()) spec.inputs.push_back({args[f->second], 0});
    else spec.inputs.push_back({copy[t.node->id()], t.index});
    spec.attrs["index"] = static_cast<int64_t>(i);
    ASSIGN_OR_RETURN(Node * unused, g->AddNode(std::move(spec)));
    (void)unused;
  }
  std::sort(result.kept_nodes.begin(), result.kept_nodes.end());
  return result;
}

}  // namespace dflow
