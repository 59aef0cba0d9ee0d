// The gradient of a while loop: a backward loop that runs the forward loop's body gradients once
// per forward iteration, in reverse order.
//
// Forward loop F (built by WhileLoop or imported): per loop variable Enter -> Merge -> Switch
// (-> Exit | body ... -> NextIteration -> Merge), loop invariants through constant Enters. To it
// the gradient adds, inside F:
//   - an iteration counter (its own Enter/Merge/Switch/Exit driven by F's LoopCond), and
//   - for every forward value that the body's gradient needs, a per-step stack (StackV2 made
//     outside the loop) onto which each iteration pushes the value.
// The backward loop B counts the iterations down from the counter's final value; its loop
// variables are the gradients of F's loop variables (starting from the gradients that reached
// F's Exit nodes) and one accumulator per loop invariant. Its body is the ordinary reverse pass
// over F's body (Backprop at F's level) whose references to forward values are then rewritten:
// a value computed in F becomes a StackPopV2 of its stack, a value from outside F becomes a
// constant Enter of B, and nodes without inputs hang off B's pivot by a control edge.
//
// Ordering: each push of iteration k depends (control) on the counter of iteration k, and the
// counter's increment depends on every push, so iteration k+1 cannot push before iteration k has
// pushed everything, and the counter's Exit — which starts B — comes after the last push. B's
// pops are chained the same way through its decrement.
//
// Not yet supported (reported as Unimplemented, naming the loop): a loop nested in a loop on the
// gradient's path, and a body whose gradient needs a value computed inside a Cond branch (the
// branch's push would be dead in the iterations that skip it).
#include <map>

#include "graph/gradients_internal.h"

namespace dflow {
namespace grad_internal {
namespace {

struct LoopVar {
  Node* enter;
  Node* merge;
  Node* sw;
  Node* exit;  // may be null
  Node* next;
  NodeOut body_out;  // the NextIteration's input
};

struct Loop {
  std::string frame_name;
  std::vector<LoopVar> vars;
  std::vector<Node*> invariants;
  NodeOut loop_cond;
};

Node* OnlyConsumer(const Node* v, int output, const std::string& op, int dst_input) {
  for (const Edge* e : v->out_edges()) {
    if (!e->IsControlEdge() && e->src_output == output && e->dst->op() == op &&
        (dst_input < 0 || e->dst_input == dst_input)) {
      return e->dst;
    }
  }
  return nullptr;
}

StatusOr<Loop> AnalyzeLoop(const ControlFlowInfo& cf, int frame) {
  Loop loop;
  loop.frame_name = cf.frames[frame].name;
  for (Node* enter : cf.frames[frame].enters) {
    bool is_constant = false;
    RETURN_IF_ERROR(GetAttr(enter->attrs(), "is_constant", &is_constant));
    if (is_constant) {
      loop.invariants.push_back(enter);
      continue;
    }
    LoopVar v{enter, nullptr, nullptr, nullptr, nullptr, {}};
    v.merge = OnlyConsumer(enter, 0, "Merge", -1);
    if (v.merge != nullptr) v.sw = OnlyConsumer(v.merge, 0, "Switch", 0);
    if (v.merge != nullptr) {
      for (const Edge* e : v.merge->data_inputs())
        if (e != nullptr && IsLoopBackEdge(e)) v.next = e->src;
    }
    if (v.sw == nullptr || v.next == nullptr || v.next->data_inputs()[0] == nullptr) {
      return errors::Unimplemented("Gradient of while loop '", loop.frame_name, "': the loop variable entering at '",
                                   enter->name(), "' lacks the Enter -> Merge -> Switch structure of a while loop");
    }
    v.exit = OnlyConsumer(v.sw, 0, "Exit", 0);
    const Edge* body = v.next->data_inputs()[0];
    v.body_out = {body->src, body->src_output};
    const Edge* pred = v.sw->data_inputs()[1];
    if (loop.loop_cond.node == nullptr) loop.loop_cond = {pred->src, pred->src_output};
    loop.vars.push_back(v);
  }
  if (loop.vars.empty()) {
    return errors::Unimplemented("Gradient of while loop '", loop.frame_name, "': it has no loop variables");
  }
  return loop;
}

// Nodes of frame `frame` whose values may be dead in an iteration that runs the body: those
// below a Switch of a Cond in the body (and not past its Merge).
std::vector<char> ConditionalNodes(const BackpropState& st, int frame, const Loop& loop) {
  const int n = st.limit();
  std::vector<char> own_switch(n, 0), cond(n, 0);
  for (const LoopVar& v : loop.vars) own_switch[v.sw->id()] = 1;
  auto in_frame = [&](const Node* v) {
    return v->id() < n && (v->op() == "Enter" ? st.cf.out_frame[v->id()] : st.cf.frame_of[v->id()]) == frame;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (int id = 0; id < n; ++id) {
      Node* v = st.graph->node(id);
      if (v == nullptr || cond[id] || !in_frame(v) || v->op() == "Merge") continue;
      bool c = v->op() == "Switch" && !own_switch[id];
      auto check = [&](const Edge* e) {
        if (e != nullptr && !IsLoopBackEdge(e) && e->src->id() < n && cond[e->src->id()]) c = true;
      };
      for (const Edge* e : v->data_inputs()) check(e);
      for (const Edge* e : v->control_inputs()) check(e);
      if (c) {
        cond[id] = 1;
        changed = true;
      }
    }
  }
  return cond;
}

std::string BaseName(const std::string& frame_name) {
  std::string s = frame_name;
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s.empty() ? "while" : s;
}

}  // namespace

Status AddWhileLoopGradient(BackpropState* st, int level, int frame, const std::vector<char>& from_x, GradMap* grads) {
  Graph* g = st->graph;
  const ControlFlowInfo& cf = st->cf;
  ASSIGN_OR_RETURN(Loop loop, AnalyzeLoop(cf, frame));
  if (level != 0) {
    return errors::Unimplemented("Gradient of while loop '", loop.frame_name,
                                 "': gradients through a while loop nested in another while loop are not supported");
  }
  std::vector<int> vars, invs;  // the loop variables and invariants that gradients flow through
  for (size_t i = 0; i < loop.vars.size(); ++i) {
    // The xs reach a loop variable through its initial value or through the body.
    if (from_x[loop.vars[i].merge->id()] && IsFloating(BaseType(loop.vars[i].enter->output_type(0)))) vars.push_back(i);
  }
  for (size_t j = 0; j < loop.invariants.size(); ++j) {
    Node* inv = loop.invariants[j];
    if (!from_x[inv->id()]) continue;
    DType t = BaseType(inv->output_type(0));
    if (t == DT_RESOURCE) {
      return errors::Unimplemented("Gradient of while loop '", loop.frame_name, "': the resource '",
                                   inv->data_inputs()[0]->src->name(),
                                   "' enters the loop; read resource variables outside the loop to differentiate");
    }
    if (IsFloating(t)) invs.push_back(j);
  }
  if (vars.empty()) return absl::OkStatus();

  GraphBuilder b = st->root.WithPrefix(BaseName(loop.frame_name) + "_grad").WithDevice(st->DeviceFor(loop.vars[0].enter));
  const std::string bframe = b.prefix() + "while";
  auto enter = [&](NodeOut x, const std::string& frame_name, bool constant, const std::string& name) {
    return b.AddNode("Enter", {x}, {{"frame_name", frame_name}, {"is_constant", constant}}, name);
  };
  Status s;
  auto update = [&](Node* merge, Node* next) {
    if (s.ok() && b.ok()) s = g->UpdateInput(merge, 1, {next, 0});
  };

  // The forward iteration counter, driven by the loop's predicate.
  Node* c_enter = enter(b.Scalar(DT_INT32, 0, "count_init"), loop.frame_name, false, "count_enter");
  Node* c_merge = b.AddNode("Merge", {{c_enter, 0}, {c_enter, 0}}, {}, "count_merge");
  Node* c_sw = b.AddNode("Switch", {{c_merge, 0}, loop.loop_cond}, {}, "count_switch");
  Node* c_exit = b.AddNode("Exit", {{c_sw, 0}}, {}, "count");
  Node* c_pivot = b.AddNode("Identity", {{c_sw, 1}}, {}, "count_pivot");
  if (!b.ok()) return b.status();
  Node* c_inc = b.AddNode("AddV2", {{c_pivot, 0}, b.WithControlInputs({c_pivot}).Scalar(DT_INT32, 1)}, {}, "count_inc");
  update(c_merge, b.AddNode("NextIteration", {{c_inc, 0}}, {}, "count_next"));

  // The backward loop: counts down from the number of forward iterations.
  Node* n_enter = enter({c_exit, 0}, bframe, false, "n_enter");
  Node* n_merge = b.AddNode("Merge", {{n_enter, 0}, {n_enter, 0}}, {}, "n_merge");
  if (!b.ok()) return b.status();
  NodeOut more = b.Op("Greater", {{n_merge, 0}, b.WithControlInputs({n_merge}).Scalar(DT_INT32, 0)}, {}, "more");
  NodeOut lc = b.Op("LoopCond", {more});
  Node* n_sw = b.AddNode("Switch", {{n_merge, 0}, lc}, {}, "n_switch");
  b.AddNode("Exit", {{n_sw, 0}}, {}, "n_exit");
  Node* n_pivot = b.AddNode("Identity", {{n_sw, 1}}, {}, "n_pivot");
  if (!b.ok()) return b.status();
  Node* n_dec = b.AddNode("Sub", {{n_pivot, 0}, b.WithControlInputs({n_pivot}).Scalar(DT_INT32, 1)}, {}, "n_dec");
  update(n_merge, b.AddNode("NextIteration", {{n_dec, 0}}, {}, "n_next"));

  // A backward loop variable: its Merge, its value in an iteration, and its final value.
  struct BwdVar {
    Node* merge;
    NodeOut body;
    NodeOut exit;
  };
  auto bwd_var = [&](NodeOut init, const std::string& name) {
    Node* e = enter(init, bframe, false, name + "_enter");
    Node* m = b.AddNode("Merge", {{e, 0}, {e, 0}}, {}, name + "_merge");
    Node* sw = b.AddNode("Switch", {{m, 0}, lc}, {}, name + "_switch");
    Node* x = b.AddNode("Exit", {{sw, 0}}, {}, name);
    Node* body = b.AddNode("Identity", {{sw, 1}}, {}, name + "_body");
    return BwdVar{m, {body, 0}, {x, 0}};
  };
  std::vector<BwdVar> dvars, accs;
  std::vector<NodeOut> ys, grad_ys, xs;
  for (int i : vars) {
    const LoopVar& v = loop.vars[i];
    NodeOut gi;
    auto it = v.exit != nullptr ? grads->find({v.exit->id(), 0}) : grads->end();
    if (it != grads->end()) gi = SumTerms(&b, it->second);
    else gi = ZerosLike(&b, v.exit != nullptr ? NodeOut{v.exit, 0} : NodeOut{v.enter->data_inputs()[0]->src, v.enter->data_inputs()[0]->src_output});
    dvars.push_back(bwd_var(gi, "grad"));
    ys.push_back(v.body_out);
    grad_ys.push_back(dvars.back().body);
    xs.push_back({v.sw, 1});
  }
  for (int j : invs) {
    const Edge* in = loop.invariants[j]->data_inputs()[0];
    accs.push_back(bwd_var(ZerosLike(&b, {in->src, in->src_output}), "acc"));
    xs.push_back({loop.invariants[j], 0});
  }
  RETURN_IF_ERROR(b.status());
  RETURN_IF_ERROR(s);

  // The body's gradient, at the loop's level; the loop's own plumbing is off limits.
  const int mark = g->num_node_ids();
  std::vector<char> blocked(st->limit(), 0);
  for (const LoopVar& v : loop.vars) {
    for (Node* x : {v.enter, v.merge, v.sw, v.exit, v.next})
      if (x != nullptr) blocked[x->id()] = 1;
  }
  if (loop.loop_cond.node->id() < st->limit()) blocked[loop.loop_cond.node->id()] = 1;
  std::vector<NodeOut> body_grads;
  RETURN_IF_ERROR(Backprop(st, frame, ys, grad_ys, xs, blocked, &body_grads));
  for (size_t k = 0; k < vars.size(); ++k) {
    NodeOut gx = body_grads[k].node != nullptr ? body_grads[k] : ZerosLike(&b, dvars[k].body);
    update(dvars[k].merge, b.AddNode("NextIteration", {gx}, {}, "grad_next"));
  }
  for (size_t k = 0; k < invs.size(); ++k) {
    NodeOut gk = body_grads[vars.size() + k];
    NodeOut acc = gk.node != nullptr ? b.Op("AddV2", {accs[k].body, gk}, {}, "acc_add") : accs[k].body;
    update(accs[k].merge, b.AddNode("NextIteration", {acc}, {}, "acc_next"));
  }
  RETURN_IF_ERROR(b.status());
  RETURN_IF_ERROR(s);

  // Rewrite the body gradient's references to forward values.
  const std::vector<char> conditional = ConditionalNodes(*st, frame, loop);
  std::map<std::pair<int, int>, NodeOut> pops, outer;
  auto pop = [&](NodeOut v) -> StatusOr<NodeOut> {
    auto it = pops.find({v.node->id(), v.index});
    if (it != pops.end()) return it->second;
    if (conditional[v.node->id()]) {
      return errors::Unimplemented("Gradient of while loop '", loop.frame_name, "': it needs the value of '",
                                   v.node->name(),
                                   "', which is computed inside a Cond in the loop body; gradients through a Cond "
                                   "inside a while loop are not supported");
    }
    const DType t = BaseType(v.node->output_type(v.index));
    NodeOut stack = b.Op("StackV2", {b.Scalar(DT_INT32, -1)}, {{"elem_type", t}, {"stack_name", v.node->name()}}, "stack");
    Node* push = b.WithControlInputs({c_pivot}).AddNode(
        "StackPushV2", {NodeOut{enter(stack, loop.frame_name, true, "stack_enter"), 0}, v}, {}, "push");
    Node* popped = b.WithControlInputs({n_pivot}).AddNode(
        "StackPopV2", {NodeOut{enter(stack, bframe, true, "stack_enter"), 0}}, {{"elem_type", t}}, "pop");
    RETURN_IF_ERROR(b.status());
    RETURN_IF_ERROR(g->AddControlEdge(push, c_inc));
    RETURN_IF_ERROR(g->AddControlEdge(popped, n_dec));
    return pops[{v.node->id(), v.index}] = NodeOut{popped, 0};
  };
  auto invariant = [&](NodeOut v) -> StatusOr<NodeOut> {
    auto it = outer.find({v.node->id(), v.index});
    if (it != outer.end()) return it->second;
    Node* e = enter(v, bframe, true, "Enter_invariant");
    RETURN_IF_ERROR(b.status());
    return outer[{v.node->id(), v.index}] = NodeOut{e, 0};
  };
  const int end = g->num_node_ids();
  for (int id = mark; id < end; ++id) {
    Node* v = g->node(id);
    if (v == nullptr) continue;
    for (int i = 0; i < v->num_inputs(); ++i) {
      const Edge* e = v->data_inputs()[i];
      if (e == nullptr || e->src->id() >= st->limit()) continue;
      NodeOut src{e->src, e->src_output};
      const int f = cf.out_frame[src.node->id()];
      NodeOut replacement;
      if (f == frame) {
        bool is_constant = false;
        if (src.node->op() == "Enter") RETURN_IF_ERROR(GetAttr(src.node->attrs(), "is_constant", &is_constant));
        if (is_constant) {
          const Edge* in = src.node->data_inputs()[0];
          ASSIGN_OR_RETURN(replacement, invariant({in->src, in->src_output}));
        } else {
          ASSIGN_OR_RETURN(replacement, pop(src));
        }
      } else if (cf.Within(frame, f)) {
        return errors::Unimplemented("Gradient of while loop '", loop.frame_name,
                                     "': it needs a value of a nested loop ('", src.node->name(), "')");
      } else {
        ASSIGN_OR_RETURN(replacement, invariant(src));
      }
      RETURN_IF_ERROR(g->UpdateInput(v, i, replacement));
    }
    for (const Edge* e : v->control_inputs()) {
      if (e->src->id() < st->limit()) {
        return errors::Internal("Gradient of while loop '", loop.frame_name, "': node '", v->name(),
                                "' has a control input from the forward node '", e->src->name(), "'");
      }
    }
    if (v->data_inputs().empty() && v->control_inputs().empty()) RETURN_IF_ERROR(g->AddControlEdge(n_pivot, v));
  }

  // The gradients of the tensors that enter the loop.
  for (size_t k = 0; k < vars.size(); ++k) {
    const Edge* in = loop.vars[vars[k]].enter->data_inputs()[0];
    (*grads)[{in->src->id(), in->src_output}].push_back(dvars[k].exit);
  }
  for (size_t k = 0; k < invs.size(); ++k) {
    const Edge* in = loop.invariants[invs[k]]->data_inputs()[0];
    (*grads)[{in->src->id(), in->src_output}].push_back(accs[k].exit);
  }
  return absl::OkStatus();
}

}  // namespace grad_internal
}  // namespace dflow
