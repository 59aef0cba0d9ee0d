#include "graph/gradients.h"

#include <map>
#include <mutex>
#include <unordered_map>

#include "base/logging.h"
#include "graph/gradients_internal.h"

namespace dflow {
namespace grad_internal {

NodeOut ZerosLike(GraphBuilder* b, const NodeOut& x) {
  NodeOut shape = b->Op("Shape", {x}, {{"out_type", DT_INT32}});
  return b->Op("Fill", {shape, b->Scalar(ValueType(x), 0)}, {}, "zeros");
}

NodeOut SumTerms(GraphBuilder* b, const std::vector<NodeOut>& terms) {
  if (terms.size() == 1) return terms[0];
  if (OpRegistry::Global()->LookUp("AddN") != nullptr) {
    return b->Op("AddN", terms, {}, "AddN");
  }
  NodeOut acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) acc = b->Op("AddV2", {acc, terms[i]}, {}, "add");
  return acc;
}

}  // namespace grad_internal

namespace {

using grad_internal::SumTerms;
using grad_internal::ZerosLike;

struct GradRegistry {
  std::mutex mu;
  std::unordered_map<std::string, GradFn> fns;
  std::unordered_map<std::string, bool> none;
};

GradRegistry* Registry() {
  static GradRegistry* r = new GradRegistry;
  return r;
}

NodeOut OnesLike(GraphBuilder* b, const NodeOut& x) {
  NodeOut shape = b->Op("Shape", {x}, {{"out_type", DT_INT32}});
  return b->Op("Fill", {shape, b->Scalar(ValueType(x), 1)}, {}, "ones");
}

}  // namespace

NodeOut GradContext::GradOrZeros(int i) {
  if (grad_outputs[i].node != nullptr) return grad_outputs[i];
  return ZerosLike(b, outputs[i]);
}

void RegisterGradient(const std::string& op, GradFn fn) {
  GradRegistry* r = Registry();
  std::lock_guard<std::mutex> l(r->mu);
  CHECK(r->fns.count(op) == 0 && r->none.count(op) == 0) << "gradient of " << op << " registered twice";
  r->fns[op] = std::move(fn);
}

void RegisterNoGradient(const std::string& op) {
  GradRegistry* r = Registry();
  std::lock_guard<std::mutex> l(r->mu);
  CHECK(r->fns.count(op) == 0) << "gradient of " << op << " registered twice";
  r->none[op] = true;
}

const GradFn* LookupGradient(const std::string& op, bool* no_gradient) {
  GradRegistry* r = Registry();
  std::lock_guard<std::mutex> l(r->mu);
  *no_gradient = r->none.count(op) > 0;
  auto it = r->fns.find(op);
  return it == r->fns.end() ? nullptr : &it->second;
}

namespace grad_internal {
namespace {

// Calls the gradient function of node v, adding the gradients of its inputs to `grads`.
Status NodeGradient(BackpropState* st, Node* v, const std::vector<char>& on_path, GradMap* grads) {
  bool no_gradient = false;
  const GradFn* fn = LookupGradient(v->op(), &no_gradient);
  if (fn == nullptr && !no_gradient) {
    return errors::NotFound("No gradient defined for op '", v->op(), "' (node '", v->name(),
                            "'), which is on the path from the variables to the loss");
  }
  if (fn == nullptr) return absl::OkStatus();
  GraphBuilder b = st->root.WithPrefix(v->name() + "_grad").WithDevice(st->DeviceFor(v));
  GradContext ctx;
  ctx.b = &b;
  ctx.node = v;
  for (const Edge* e : v->data_inputs()) ctx.inputs.push_back({e->src, e->src_output});
  for (int i = 0; i < v->num_outputs(); ++i) {
    ctx.outputs.push_back({v, i});
    auto it = grads->find({v->id(), i});
    ctx.grad_outputs.push_back(it == grads->end() ? NodeOut{} : SumTerms(&b, it->second));
  }
  ctx.grad_inputs.resize(v->num_inputs());
  Status s = (*fn)(&ctx);
  if (s.ok()) s = b.status();
  if (!s.ok()) return errors::Annotate(s, absl::StrCat("Gradient of node '", v->name(), "' (op ", v->op(), "): "));
  if (ctx.grad_inputs.size() != static_cast<size_t>(v->num_inputs())) {
    return errors::Internal("Gradient of ", v->op(), " returned ", ctx.grad_inputs.size(), " input gradients for ",
                            v->num_inputs(), " inputs");
  }
  for (int i = 0; i < v->num_inputs(); ++i) {
    const Edge* e = v->data_inputs()[i];
    if (ctx.grad_inputs[i].node != nullptr && on_path[e->src->id()]) {
      (*grads)[{e->src->id(), e->src_output}].push_back(ctx.grad_inputs[i]);
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// The units of one backward pass at frame `level`: nodes of this frame are their own unit; the
// nodes of a loop below it form one unit, numbered n + the loop's frame index. -1: outside
// this pass.
struct Units {
  const ControlFlowInfo& cf;
  int n;
  int level;
  const std::vector<char>& blocked;

  int size() const { return n + static_cast<int>(cf.frames.size()); }
  int operator()(const Node* v) const {
    if (v->id() >= n || (!blocked.empty() && blocked[v->id()])) return -1;
    int f = v->op() == "Enter" ? cf.out_frame[v->id()] : cf.frame_of[v->id()];
    if (f == level) return v->id();
    int child = cf.ChildOf(level, f);
    return child < 0 ? -1 : n + child;
  }
};

// The nodes (by id) that some x reaches along data edges within the pass.
std::vector<char> ReachedFrom(const std::vector<NodeOut>& xs, const Units& unit) {
  std::vector<char> from_x(unit.n, 0);
  std::vector<Node*> stack;
  for (const NodeOut& x : xs) {
    if (x.node->id() < unit.n && !from_x[x.node->id()]) {
      from_x[x.node->id()] = 1;
      stack.push_back(x.node);
    }
  }
  while (!stack.empty()) {
    Node* v = stack.back();
    stack.pop_back();
    for (const Edge* e : v->out_edges()) {
      if (!e->IsControlEdge() && unit(e->dst) >= 0 && !from_x[e->dst->id()]) {
        from_x[e->dst->id()] = 1;
        stack.push_back(e->dst);
      }
    }
  }
  return from_x;
}

// Of the nodes in from_x, those that reach some y: the nodes gradients flow through.
std::vector<char> OnPath(const std::vector<NodeOut>& ys, const std::vector<char>& from_x) {
  const int n = static_cast<int>(from_x.size());
  std::vector<char> on_path(n, 0);
  std::vector<Node*> stack;
  for (const NodeOut& y : ys) {
    if (y.node->id() < n && from_x[y.node->id()] && !on_path[y.node->id()]) {
      on_path[y.node->id()] = 1;
      stack.push_back(y.node);
    }
  }
  while (!stack.empty()) {
    Node* v = stack.back();
    stack.pop_back();
    for (const Edge* e : v->data_inputs()) {
      if (e != nullptr && from_x[e->src->id()] && !on_path[e->src->id()]) {
        on_path[e->src->id()] = 1;
        stack.push_back(e->src);
      }
    }
  }
  return on_path;
}

// Passes the gradients unit u has received back through it: a node's gradient function, or a
// loop's backward loop. Returns the nodes through which gradients leave the unit: the node
// itself, or the loop's Enter nodes.
StatusOr<std::vector<Node*>> UnitGradient(BackpropState* st, int level, int u, const Units& unit,
                                          const std::vector<char>& on_path, const std::vector<char>& from_x,
                                          GradMap* grads) {
  if (u < unit.n) {
    Node* v = st->graph->node(u);
    bool needs_inputs = false;
    for (const Edge* e : v->data_inputs()) needs_inputs |= (e != nullptr && on_path[e->src->id()]);
    // No gradient flows into it (e.g. a comparison feeding a Switch's predicate): skip it.
    bool receives = false;
    for (int i = 0; i < v->num_outputs(); ++i) receives |= grads->count({v->id(), i}) > 0;
    if (needs_inputs && receives) RETURN_IF_ERROR(NodeGradient(st, v, on_path, grads));
    return std::vector<Node*>{v};
  }
  const int frame = u - unit.n;
  const ControlFlowInfo::Frame& f = st->cf.frames[frame];
  bool receives = false;
  for (Node* exit : f.exits) receives |= grads->count({exit->id(), 0}) > 0;
  if (receives) RETURN_IF_ERROR(AddWhileLoopGradient(st, level, frame, from_x, grads));
  return f.enters;
}

}  // namespace

Status Backprop(BackpropState* st, int level, const std::vector<NodeOut>& ys, const std::vector<NodeOut>& grad_ys,
                const std::vector<NodeOut>& xs, const std::vector<char>& blocked, std::vector<NodeOut>* x_grads) {
  const Units unit{st->cf, st->limit(), level, blocked};
  const int n = unit.n;
  const std::vector<char> from_x = ReachedFrom(xs, unit);
  const std::vector<char> on_path = OnPath(ys, from_x);
  // A unit is ready once every on-path consumer outside it has passed its gradient back.
  std::vector<int> pending(unit.size(), 0);
  auto for_each_input_edge = [&](Node* v, const std::function<void(const Edge*)>& fn) {
    for (const Edge* e : v->data_inputs()) {
      if (e == nullptr || !on_path[e->src->id()] || unit(e->src) < 0 || unit(e->src) == unit(v)) continue;
      fn(e);
    }
  };
  for (int id = 0; id < n; ++id) {
    Node* v = st->graph->node(id);
    if (v == nullptr || !on_path[id] || unit(v) < 0) continue;
    for_each_input_edge(v, [&](const Edge* e) { pending[unit(e->src)]++; });
  }
  GradMap grads;
  for (size_t i = 0; i < ys.size(); ++i) grads[{ys[i].node->id(), ys[i].index}].push_back(grad_ys[i]);

  std::vector<int> ready;
  std::vector<char> queued(unit.size(), 0);
  for (const NodeOut& y : ys) {
    int u = y.node->id() < n ? unit(y.node) : -1;
    if (u >= 0 && on_path[y.node->id()] && pending[u] == 0 && !queued[u]) {
      queued[u] = 1;
      ready.push_back(u);
    }
  }
  while (!ready.empty()) {
    int u = ready.back();
    ready.pop_back();
    ASSIGN_OR_RETURN(const std::vector<Node*> members, UnitGradient(st, level, u, unit, on_path, from_x, &grads));
    for (Node* v : members) {
      if (!on_path[v->id()]) continue;
      for_each_input_edge(v, [&](const Edge* e) {
        int src = unit(e->src);
        if (--pending[src] == 0 && !queued[src]) {
          queued[src] = 1;
          ready.push_back(src);
        }
      });
    }
  }
  x_grads->clear();
  for (const NodeOut& x : xs) {
    auto it = grads.find({x.node->id(), x.index});
    if (it == grads.end()) {
      x_grads->push_back(NodeOut{});
      continue;
    }
    GraphBuilder b = st->root.WithPrefix(x.node->name() + "_total");
    x_grads->push_back(SumTerms(&b, it->second));
    RETURN_IF_ERROR(b.status());
  }
  return absl::OkStatus();
}

}  // namespace grad_internal

StatusOr<std::vector<NodeOut>> AddGradients(Graph* graph, const std::vector<NodeOut>& ys,
                                            const std::vector<NodeOut>& xs, const std::vector<NodeOut>& grad_ys,
                                            const std::string& prefix, const std::string& device) {
  if (!grad_ys.empty() && grad_ys.size() != ys.size()) {
    return errors::InvalidArgument("AddGradients: ", ys.size(), " ys but ", grad_ys.size(), " grad_ys");
  }
  for (const auto* list : {&ys, &xs, &grad_ys}) {
    for (const NodeOut& t : *list) {
      if (t.node == nullptr || t.node->graph() != graph) {
        return errors::InvalidArgument("AddGradients: a tensor is null or belongs to another graph");
      }
    }
  }
  ASSIGN_OR_RETURN(ControlFlowInfo cf, BuildControlFlowInfo(*graph));
  grad_internal::BackpropState st{graph, std::move(cf), GraphBuilder(graph, graph->UniqueName(prefix) + "/", device),
                                  device};
  std::vector<NodeOut> seeds;
  for (size_t i = 0; i < ys.size(); ++i) seeds.push_back(grad_ys.empty() ? OnesLike(&st.root, ys[i]) : grad_ys[i]);
  RETURN_IF_ERROR(st.root.status());
  for (const NodeOut& x : xs) {
    int f = x.node->op() == "Enter" ? st.cf.out_frame[x.node->id()] : st.cf.frame_of[x.node->id()];
    if (f != 0) {
      return errors::InvalidArgument("AddGradients: x '", x.node->name(),
                                     "' is inside a while loop; differentiate with respect to a tensor outside it");
    }
  }
  std::vector<NodeOut> out;
  RETURN_IF_ERROR(grad_internal::Backprop(&st, /*level=*/0, ys, seeds, xs, {}, &out));
  for (size_t i = 0; i < xs.size(); ++i) {
    if (out[i].node != nullptr) continue;
    if (ValueType(xs[i]) == DT_RESOURCE) continue;  // no zeros of a handle: absent, as in TensorFlow
    GraphBuilder b = st.root.WithPrefix(xs[i].node->name() + "_total");
    out[i] = ZerosLike(&b, xs[i]);
    RETURN_IF_ERROR(b.status());
  }
  return out;
}

}  // namespace dflow
