#include "graph/control_flow_info.h"

#include <map>

namespace dflow {

bool IsLoopBackEdge(const Edge* e) {
  return !e->IsControlEdge() && e->src->op() == "NextIteration" && e->dst->op() == "Merge";
}

int ControlFlowInfo::ChildOf(int level, int f) const {
  while (f >= 0 && frames[f].parent != level) f = frames[f].parent;
  return f;
}

StatusOr<ControlFlowInfo> BuildControlFlowInfo(const Graph& g) {
  ControlFlowInfo info;
  const int n = g.num_node_ids();
  info.frames.push_back({"", -1, {}, {}});
  info.frame_of.assign(n, -1);
  info.out_frame.assign(n, -1);
  // Topological order, back edges left out.
  std::vector<int> pending(n, 0);
  std::vector<Node*> ready;
  int live = 0;
  for (int id = 0; id < n; ++id) {
    Node* v = g.node(id);
    if (v == nullptr) continue;
    ++live;
    for (const Edge* e : v->data_inputs())
      if (e != nullptr && !IsLoopBackEdge(e)) ++pending[id];
    pending[id] += static_cast<int>(v->control_inputs().size());
    if (pending[id] == 0) ready.push_back(v);
  }
  std::map<std::pair<int, std::string>, int> frame_ids;
  int done = 0;
  while (!ready.empty()) {
    Node* v = ready.back();
    ready.pop_back();
    ++done;
    int frame = 0;
    bool seen = false;
    auto take = [&](const Edge* e) {
      if (e == nullptr || IsLoopBackEdge(e) || seen) return;
      frame = info.out_frame[e->src->id()];
      seen = true;
    };
    for (const Edge* e : v->data_inputs()) take(e);
    for (const Edge* e : v->control_inputs()) take(e);
    info.frame_of[v->id()] = frame;
    int out = frame;
    if (v->op() == "Enter") {
      std::string name;
      RETURN_IF_ERROR(GetAttr(v->attrs(), "frame_name", &name));
      auto key = std::make_pair(frame, name);
      auto it = frame_ids.find(key);
      if (it == frame_ids.end()) {
        it = frame_ids.emplace(key, static_cast<int>(info.frames.size())).first;
        info.frames.push_back({name, frame, {}, {}});
      }
      out = it->second;
      info.frames[out].enters.push_back(v);
    } else if (v->op() == "Exit" && frame > 0) {
      info.frames[frame].exits.push_back(v);
      out = info.frames[frame].parent;
    }
    info.out_frame[v->id()] = out;
    for (const Edge* e : v->out_edges()) {
      if (IsLoopBackEdge(e)) continue;
      if (--pending[e->dst->id()] == 0) ready.push_back(e->dst);
    }
  }
  if (done != live) return errors::InvalidArgument("The graph has a cycle that is not a while loop");
  return info;
}

}  // namespace dflow
