// Executor construction: node items, frames and validation. The step itself is in
// executor_state.cc.
#include "runtime/executor.h"

#include <map>

#include "graph/topo_order.h"
#include "runtime/executor_internal.h"

namespace dflow {
namespace executor_internal {

namespace {

NodeKind KindOf(const Node* n) {
  const std::string& op = n->op();
  if (op == "Merge") return NodeKind::kMerge;
  if (op == "Switch") return NodeKind::kSwitch;
  if (op == "Enter") return NodeKind::kEnter;
  if (op == "Exit") return NodeKind::kExit;
  if (op == "NextIteration") return NodeKind::kNextIteration;
  if (op == "_Send") return NodeKind::kSend;
  return NodeKind::kOrdinary;
}

}  // namespace

Status ExecutorImpl::Init() {
  std::vector<Node*> nodes = graph_->nodes();
  std::vector<int> index(graph_->num_node_ids(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i]->id()] = static_cast<int>(i);
  items_.resize(nodes.size());
  cost_ns_ = std::make_unique<std::atomic<int64_t>[]>(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) cost_ns_[i].store(kUnmeasured, std::memory_order_relaxed);
  for (const Node* n : nodes) {
    for (const Edge* e : n->data_inputs())
      if (e == nullptr) return errors::InvalidArgument("Node '", n->name(), "' has a missing input");
  }
  // Dependency order without back edges; fails on a real cycle.
  ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph_));
  RETURN_IF_ERROR(AssignFrames(order, index));
  for (size_t i = 0; i < nodes.size(); ++i) RETURN_IF_ERROR(InitItem(static_cast<int>(i), index));
  BindConstants();
  for (size_t i = 0; i < items_.size(); ++i)
    if (items_[i].frame == 0 && !Waits(items_[i])) roots_.push_back(static_cast<int>(i));
  for (NodeItem& item : items_) {
    for (OutEdge& e : item.out) {
      const NodeItem& dst = items_[e.dst];
      e.dst_merge = dst.kind == NodeKind::kMerge;
      e.dst_local = dst.local;
      e.entry = e.dst_slot == kControlSlot ? -1 : dst.input_start + e.dst_slot;
    }
  }
  return absl::OkStatus();
}

// Frames: a node runs in the frame its inputs come from; Enter outputs into a child frame,
// Exit into the parent.
Status ExecutorImpl::AssignFrames(const std::vector<Node*>& order, const std::vector<int>& index) {
  frames_.push_back(FrameInfo{"", -1});
  std::map<std::pair<int, std::string>, int> frame_ids;
  std::vector<int> out_frame(items_.size(), 0);
  for (const Node* n : order) {
    const int i = index[n->id()];
    NodeItem& item = items_[i];
    item.node = n;
    item.kind = KindOf(n);
    int frame = -1;
    auto take = [&](const Edge* e) -> Status {
      if (IsLoopBackEdge(e)) return absl::OkStatus();
      int f = out_frame[index[e->src->id()]];
      if (frame < 0) frame = f;
      else if (frame != f) {
        return errors::InvalidArgument("Node '", n->name(), "' has inputs from different control-flow frames ('",
                                       frames_[frame].name, "' and '", frames_[f].name, "')");
      }
      return absl::OkStatus();
    };
    for (const Edge* e : n->data_inputs()) RETURN_IF_ERROR(take(e));
    for (const Edge* e : n->control_inputs()) RETURN_IF_ERROR(take(e));
    item.frame = frame < 0 ? 0 : frame;
    out_frame[i] = item.frame;
    if (item.kind == NodeKind::kEnter) {
      std::string name;
      RETURN_IF_ERROR(GetAttr(n->attrs(), "frame_name", &name));
      RETURN_IF_ERROR(GetAttr(n->attrs(), "is_constant", &item.constant_enter));
      auto key = std::make_pair(item.frame, name);
      auto it = frame_ids.find(key);
      if (it == frame_ids.end()) {
        it = frame_ids.emplace(key, static_cast<int>(frames_.size())).first;
        frames_.push_back(FrameInfo{name, item.frame});
      }
      item.child_frame = it->second;
      frames_[item.child_frame].num_enters++;
      out_frame[i] = item.child_frame;
      has_loops_ = true;
    } else if (item.kind == NodeKind::kExit) {
      if (item.frame == 0) return errors::InvalidArgument("Exit node '", n->name(), "' is not inside a loop");
      out_frame[i] = frames_[item.frame].parent;
    } else if (item.kind == NodeKind::kNextIteration && item.frame == 0) {
      return errors::InvalidArgument("NextIteration node '", n->name(), "' is not inside a loop");
    }
  }
  return absl::OkStatus();
}

// Item i's place in its frame, kernel, input slots, pending count and out edges.
Status ExecutorImpl::InitItem(int i, const std::vector<int>& index) {
  NodeItem& item = items_[i];
  const Node* n = item.node;
  FrameInfo& frame = frames_[item.frame];
  item.local = static_cast<int>(frame.items.size());
  frame.items.push_back(i);
  auto k = params_.create_kernel(*n);
  if (!k.ok()) return k.status();
  item.kernel = std::move(k).value();
  item.is_async = item.kernel->AsAsync() != nullptr;
  item.expensive = item.kernel->IsExpensive();
  item.const_value = item.kernel->const_value();
  item.num_inputs = n->num_inputs();
  item.input_start = frame.total_inputs;
  frame.total_inputs += item.num_inputs;
  item.input_is_ref.resize(item.num_inputs);
  for (int j = 0; j < item.num_inputs; ++j) item.input_is_ref[j] = IsRefType(n->input_type(j)) ? 1 : 0;
  if (item.kind == NodeKind::kMerge) {
    item.pending_init = static_cast<int>(n->control_inputs().size());
    for (const Edge* e : n->data_inputs()) item.merge_forward_inputs += IsLoopBackEdge(e) ? 0 : 1;
  } else {
    item.pending_init = static_cast<int>(n->data_inputs().size() + n->control_inputs().size());
  }
  frame.pending_init.push_back(item.pending_init);  // by local index, as frame.items
  if (item.kind == NodeKind::kExit) {
    item.exit_index = static_cast<int>(frame.exits.size());
    frame.exits.push_back(i);
  }
  // Out edges, with the last reader of each output marked so its value can be moved.
  std::vector<int> last(n->num_outputs(), -1);
  for (const Edge* e : n->out_edges()) {
    item.out.push_back({index[e->dst->id()], e->dst_input, e->src_output, false});
    if (!e->IsControlEdge()) last[e->src_output] = static_cast<int>(item.out.size()) - 1;
  }
  for (int slot = 0; slot < n->num_outputs(); ++slot)
    if (last[slot] >= 0) item.out[last[slot]].last_use = true;
  if (!Waits(item) && item.frame != 0) {
    return errors::InvalidArgument("Node '", n->name(), "' is inside loop '", frames_[item.frame].name,
                                   "' but depends on nothing that enters it");
  }
  return absl::OkStatus();
}

// A Const without control inputs always runs and is never dead, and its value never changes: its
// consumers in the root frame (but Merges, whose inputs are counted their own way) get the
// value in their slot when a step starts, so that a constant read by thousands of nodes costs no
// delivery and no counting per node.
void ExecutorImpl::BindConstants() {
  for (NodeItem& c : items_) {
    if (c.const_value == nullptr || c.frame != 0 || !c.node->control_inputs().empty()) continue;
    for (OutEdge& e : c.out) {
      if (e.dst_slot == kControlSlot) continue;
      NodeItem& dst = items_[e.dst];
      if (dst.frame != 0 || dst.kind == NodeKind::kMerge) continue;
      e.bound = true;
      --dst.pending_init;
      --frames_[0].pending_init[dst.local];
      bound_constants_.push_back({dst.input_start + e.dst_slot, c.const_value});
    }
  }
}

}  // namespace executor_internal

StatusOr<std::unique_ptr<Executor>> Executor::Create(ExecutorParams params, std::unique_ptr<Graph> graph) {
  auto impl = std::make_unique<executor_internal::ExecutorImpl>(std::move(graph), std::move(params));
  RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<Executor>(std::move(impl));
}

}  // namespace dflow
