#include "graph/cond_context.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace dflow {
namespace {

bool IsLoopSwitch(const Node* v) {
  const Edge* pred = v->num_inputs() > 1 ? v->data_inputs()[1] : nullptr;
  return pred != nullptr && pred->src->op() == "LoopCond";
}

bool HasBackEdge(const Node* v) {
  for (const Edge* e : v->data_inputs())
    if (e != nullptr && IsLoopBackEdge(e)) return true;
  return false;
}

}  // namespace

CondInfo BuildCondInfo(const Graph& g, const ControlFlowInfo& cf) {
  CondInfo info;
  // Nodes added after `cf` was built (gradient nodes) are not part of the analysis.
  const int n = std::min(g.num_node_ids(), static_cast<int>(cf.frame_of.size()));
  info.branches.push_back({});
  info.out_of.assign(n, {0, 0});
  std::map<std::tuple<int, int, int, int>, int> ids;  // (pred node, pred output, branch, parent)
  auto child = [&](const NodeOut& pred, int branch, int parent) {
    auto key = std::make_tuple(pred.node->id(), pred.index, branch, parent);
    auto it = ids.find(key);
    if (it != ids.end()) return it->second;
    const int id = static_cast<int>(info.branches.size());
    info.branches.push_back({pred, branch, parent, info.branches[parent].depth + 1});
    ids.emplace(key, id);
    return id;
  };
  auto deeper = [&](int a, int b) { return info.branches[b].depth > info.branches[a].depth ? b : a; };
  // The branch an Exit leaves into: the deepest one the loop's Enters were in.
  std::vector<int> frame_branch(cf.frames.size(), 0);

  // cf.order holds the nodes as they were when cf was built, in a topological order.
  for (Node* v : cf.order) {
    const int id = v->id();
    int in = 0;
    for (const Edge* e : v->data_inputs())
      if (e != nullptr && !IsLoopBackEdge(e)) in = deeper(in, info.BranchOf({e->src, e->src_output}));
    for (const Edge* e : v->control_inputs()) {
      if (e->src->id() >= n) continue;
      // A Switch itself runs whichever way it sends its value: its own branch is the parent
      // of the branches it opens.
      const Node* src = e->src;
      int b = info.out_of[src->id()][0];
      if (src->op() == "Switch" && !IsLoopSwitch(src) && b != 0) b = info.branches[b].parent;
      in = deeper(in, b);
    }
    const int frame = cf.frame_of[id];
    if (v->op() == "Enter") {
      if (frame >= 0 && cf.out_frame[id] >= 0) {
        int& fb = frame_branch[cf.out_frame[id]];
        fb = deeper(fb, in);
      }
      info.out_of[id] = {0, 0};
    } else if (v->op() == "Exit") {
      const int b = frame > 0 ? frame_branch[frame] : in;
      info.out_of[id] = {b, b};
    } else if (v->op() == "Switch" && !IsLoopSwitch(v) && v->num_inputs() == 2) {
      const Edge* pred = v->data_inputs()[1];
      NodeOut p{pred->src, pred->src_output};
      info.out_of[id] = {child(p, 0, in), child(p, 1, in)};
    } else if (v->op() == "Merge" && !HasBackEdge(v)) {
      const int b = in == 0 ? 0 : info.branches[in].parent;
      info.out_of[id] = {b, b};
    } else {
      info.out_of[id] = {in, in};
    }
  }
  return info;
}

}  // namespace dflow
