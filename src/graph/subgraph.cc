#include "graph/subgraph.h"

#include "graph/function_library.h"

#include "graph/control_flow_info.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>

#include "absl/strings/str_join.h"

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
    return errors::NotFound("Tensor '", name, "' not found: node '", node_name, "' has ", n->num_outputs(),
                            " output", n->num_outputs() == 1 ? "" : "s");
  }
  return NodeOut{n, index};
}

StatusOr<StepGraph> BuildStepGraph(const Graph& full, const std::vector<std::string>& feeds,
                                   const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
  // Resolve names.
  std::map<std::pair<int, int>, int> fed;  // (node id, output) -> feed index
  std::vector<NodeOut> feed_outs, fetch_outs;
  for (size_t i = 0; i < feeds.size(); ++i) {
    ASSIGN_OR_RETURN(NodeOut t, ResolveTensor(full, feeds[i]));
    if (!fed.emplace(std::make_pair(t.node->id(), t.index), static_cast<int>(i)).second) {
      return errors::InvalidArgument("Tensor '", CanonicalTensorName(t), "' is fed more than once");
    }
    feed_outs.push_back(t);
  }
  for (const std::string& f : fetches) {
    ASSIGN_OR_RETURN(NodeOut t, ResolveTensor(full, f));
    fetch_outs.push_back(t);
  }
  std::vector<Node*> target_nodes;
  for (const std::string& t : targets) {
    absl::string_view name = t;
    if (!name.empty() && name[0] == '^') name.remove_prefix(1);
    Node* n = full.FindNode(name);
    if (n == nullptr) return errors::NotFound("Target '", t, "' not found: the graph has no node '", name, "'");
    target_nodes.push_back(n);
  }

  // A fed Placeholder does not run: its control edges leave from the feed instead (TensorFlow's
  // rule), so ops that wait on it (control_dependencies([placeholder])) wait on the fed value.
  auto fed_placeholder = [&](const Node* n) -> int {
    if (n->op() != "Placeholder" && n->op() != "PlaceholderV2") return -1;
    auto f = fed.find({n->id(), 0});
    return f == fed.end() ? -1 : f->second;
  };

  // Walk backwards from what is asked for; fed tensors cut the walk.
  std::vector<char> needed(full.num_node_ids(), 0);
  std::vector<Node*> stack;
  auto want = [&](Node* n) {
    if (!needed[n->id()]) {
      needed[n->id()] = 1;
      stack.push_back(n);
    }
  };
  for (const NodeOut& t : fetch_outs)
    if (!fed.count({t.node->id(), t.index})) want(t.node);
  for (Node* n : target_nodes) want(n);
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->data_inputs()) {
      if (e == nullptr) return errors::InvalidArgument("Node '", n->name(), "' has a missing input");
      if (!fed.count({e->src->id(), e->src_output})) want(e->src);
    }
    for (const Edge* e : n->control_inputs())
      if (fed_placeholder(e->src) < 0) want(e->src);
  }

  // Topological order of the needed nodes (Kahn's algorithm, lowest id first so the order is
  // stable and follows construction); nodes left over are on a cycle.
  std::vector<int> pending(full.num_node_ids(), 0);
  std::vector<Node*> order;
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (Node* n : full.nodes()) {
    if (!needed[n->id()]) continue;
    int p = 0;
    for (const Edge* e : n->control_inputs())
      if (fed_placeholder(e->src) < 0) ++p;
    for (const Edge* e : n->data_inputs())
      if (!fed.count({e->src->id(), e->src_output}) && !IsLoopBackEdge(e)) ++p;
    pending[n->id()] = p;
    if (p == 0) ready.push(n->id());
  }
  while (!ready.empty()) {
    Node* n = full.node(ready.top());
    ready.pop();
    order.push_back(n);
    for (const Edge* e : n->out_edges()) {
      Node* d = e->dst;
      if (!needed[d->id()] || IsLoopBackEdge(e)) continue;
      if (!e->IsControlEdge() && fed.count({n->id(), e->src_output})) continue;
      if (e->IsControlEdge() && fed_placeholder(n) >= 0) continue;
      if (--pending[d->id()] == 0) ready.push(d->id());
    }
  }
  size_t num_needed = std::count(needed.begin(), needed.end(), 1);
  if (order.size() != num_needed) {
    std::vector<std::string> stuck;
    for (Node* n : full.nodes())
      if (needed[n->id()] && pending[n->id()] > 0) stuck.push_back(n->name());
    std::sort(stuck.begin(), stuck.end());
    if (stuck.size() > 5) stuck.resize(5);
    return errors::InvalidArgument("Graph contains a cycle among the nodes this run needs (involving ",
                                   absl::StrJoin(stuck, ", "), ")");
  }

  StepGraph result;
  result.graph = std::make_unique<Graph>();
  Graph* g = result.graph.get();
  g->library() = full.library();
  std::vector<Node*> copy(full.num_node_ids(), nullptr);
  std::vector<Node*> args(feeds.size(), nullptr);
  struct BackEdge {
    Node* merge;
    int index;
    const Edge* edge;
  };
  std::vector<BackEdge> back_edges;
  for (size_t i = 0; i < feed_outs.size(); ++i) {
    NodeSpec spec;
    spec.name = g->UniqueName(absl::StrCat("_arg_", Mangle(CanonicalTensorName(feed_outs[i]))));
    spec.op = "_Arg";
    spec.attrs["T"] = BaseType(feed_outs[i].node->output_type(feed_outs[i].index));
    spec.attrs["index"] = static_cast<int64_t>(i);
    ASSIGN_OR_RETURN(args[i], g->AddNode(std::move(spec)));
  }
  for (Node* n : order) {
    NodeSpec spec;
    spec.name = n->name();
    spec.op = n->op();
    spec.attrs = n->attrs();
    spec.device = n->requested_device();
    for (const Edge* e : n->data_inputs()) {
      auto f = fed.find({e->src->id(), e->src_output});
      if (f != fed.end()) {
        spec.inputs.push_back({args[f->second], 0});
      } else if (IsLoopBackEdge(e)) {
        // Not built yet: stand in with the Merge's first input, then close the loop below.
        back_edges.push_back({n, static_cast<int>(spec.inputs.size()), e});
        spec.inputs.push_back(NodeOut{});
      } else {
        spec.inputs.push_back({copy[e->src->id()], e->src_output});
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
      const int f = fed_placeholder(e->src);
      spec.control_inputs.push_back(f >= 0 ? args[f] : copy[e->src->id()]);
    }
    ASSIGN_OR_RETURN(copy[n->id()], g->AddNode(std::move(spec)));
    result.kept_nodes.push_back(n->name());
  }
  for (const BackEdge& b : back_edges) {
    RETURN_IF_ERROR(g->UpdateInput(copy[b.merge->id()], b.index, {copy[b.edge->src->id()], b.edge->src_output}));
  }
  for (size_t i = 0; i < fetch_outs.size(); ++i) {
    const NodeOut& t = fetch_outs[i];
    NodeSpec spec;
    spec.name = g->UniqueName(absl::StrCat("_retval_", Mangle(CanonicalTensorName(t)), "_", i));
    spec.op = "_Retval";
    auto f = fed.find({t.node->id(), t.index});
    if (f != fed.end()) spec.inputs.push_back({args[f->second], 0});
    else spec.inputs.push_back({copy[t.node->id()], t.index});
    spec.attrs["index"] = static_cast<int64_t>(i);
    ASSIGN_OR_RETURN(Node * unused, g->AddNode(std::move(spec)));
    (void)unused;
  }
  std::sort(result.kept_nodes.begin(), result.kept_nodes.end());
  return result;
}

}  // namespace dflow
