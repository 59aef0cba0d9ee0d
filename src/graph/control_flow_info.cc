#include "graph/control_flow_info.h"

#include <map>

namespace dflow {

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
  TopoOrderOptions topo;
  topo.cycle_error = "The graph has a cycle that is not a while loop";
  ASSIGN_OR_RETURN(info.order, TopologicalOrder(g, topo));
  std::map<std::pair<int, std::string>, int> frame_ids;
  for (Node* v : info.order) {
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
  }
  return info;
}

}  // namespace dflow
