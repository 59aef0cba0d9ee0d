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
// counter's increment waits for every push (through a Merge, which a push that did not run
// because its value was dead does not make dead), so iteration k+1 cannot push before
// iteration k has pushed everything, and the counter's Exit — which starts B — comes after the
// last push. B's pops are chained the same way through its decrement.
//
// Nested loops: the gradient of a loop nested in F is built while F's backward body is, so its
// backward loop runs inside B, once per iteration of B. Its stacks are made outside every loop
// and their handles enter through every frame; its number of iterations is a value of F's
// body that F pushes and B pops. The nested counter starts from F's counter pivot and F's
// increment waits for the nested count's push, so the instances of the nested loop push one
// after the other; B's decrement waits for the nested backward loop's Exit, so they pop in
// reverse.
//
// Conds in the body: a value computed inside a branch is pushed only in the iterations that
// take the branch (the push is dead otherwise), and its pop in B goes through a Switch on the
// branch's predicate, popped in turn, so it pops only in those iterations. The gradient of a
// Cond needs nothing else: Merge sends the gradient to the branch that was taken (its
// value_index is popped like any value), Switch gathers the branch gradients in a Merge.
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

std::string BaseName(const std::string& frame_name) {
  std::string s = frame_name;
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s.empty() ? "while" : s;
}

}  // namespace

// The gradient of one forward loop F while it is built: F's counter, the backward loop B, and
// the stacks that carry F's values to B. `parent` is the gradient of the loop F is nested in:
// F runs once per iteration of the parent's forward loop and B once per iteration of the
// parent's backward loop, so whatever B reads from the parent's frame (the number of
// iterations of this instance of F included) is pushed and popped through the parent.
class WhileGradient {
 public:
  WhileGradient(BackpropState* st, WhileGradient* parent, int frame, const Loop& loop, GraphBuilder b)
      : st_(st), parent_(parent), frame_(frame), loop_(loop), b_(std::move(b)), bframe_(b_.prefix() + "while") {}

  Status Build(const std::vector<char>& from_x, GradMap* grads);

  // A tensor from outside the outermost loop, as a loop invariant of F (entered through every
  // enclosing forward frame) or of B (through every enclosing backward frame).
  StatusOr<NodeOut> ForwardConstant(NodeOut x);
  StatusOr<NodeOut> BackwardConstant(NodeOut x);
  // `v`, computed in F's frame, as B reads it: every iteration of F pushes it onto a stack and
  // the matching iteration of B pops it. `branch` is the Cond branch of F's body v is computed
  // in (0: none): then only the iterations that take the branch push, and B pops only in the
  // iterations whose popped predicate says the branch was taken.
  StatusOr<NodeOut> Pop(NodeOut v, int branch);
  // The stand-in in B for the forward value `v` that a backward node reads.
  StatusOr<NodeOut> BackwardValue(NodeOut v);

 private:
  Node* Enter(NodeOut x, const std::string& frame_name, bool constant, const std::string& name) {
    return b_.AddNode("Enter", {x}, {{"frame_name", frame_name}, {"is_constant", constant}}, name);
  }
  void Forward(Node* v) {
    if (v != nullptr) st_->forward_added.insert(v->id());
  }
  // The Cond branch F runs in, within its parent's frame (0 at level 0 or outside any Cond).
  int LoopBranch() {
    int best = 0;
    const CondInfo& ci = st_->conds();
    for (const LoopVar& v : loop_.vars) {
      const Edge* in = v.enter->data_inputs()[0];
      int b = ci.BranchOf({in->src, in->src_output});
      if (ci.branches[b].depth > ci.branches[best].depth) best = b;
    }
    return best;
  }
  Status BuildCounters();
  Status RewriteBody(int mark);

  BackpropState* st_;
  WhileGradient* parent_;
  const int frame_;
  const Loop& loop_;
  GraphBuilder b_;
  const std::string bframe_;
  // F's counter: its pivot (live in iterations that run the body), the Merge its increment
  // waits on (every push of the iteration reports there, dead or not), its final value.
  Node* c_pivot_ = nullptr;
  Node* c_join_ = nullptr;
  Node* c_exit_ = nullptr;
  // B's counter, the same way round; `more_` is B's LoopCond.
  Node* n_pivot_ = nullptr;
  Node* n_join_ = nullptr;
  Node* n_exit_ = nullptr;
  NodeOut more_;
  std::map<int, NodeOut> fwd_constants_, bwd_constants_;  // by the id of the tensor's node
  std::map<std::pair<int, int>, NodeOut> pops_, invariants_;
};

StatusOr<NodeOut> WhileGradient::ForwardConstant(NodeOut x) {
  auto it = fwd_constants_.find(x.node->id());
  if (it != fwd_constants_.end()) return it->second;
  NodeOut base = x;
  if (parent_ != nullptr) {
    ASSIGN_OR_RETURN(base, parent_->ForwardConstant(x));
  }
  Node* e = Enter(base, loop_.frame_name, true, "stack_enter");
  RETURN_IF_ERROR(b_.status());
  Forward(e);
  return fwd_constants_[x.node->id()] = NodeOut{e, 0};
}

StatusOr<NodeOut> WhileGradient::BackwardConstant(NodeOut x) {
  auto it = bwd_constants_.find(x.node->id());
  if (it != bwd_constants_.end()) return it->second;
  NodeOut base = x;
  if (parent_ != nullptr) {
    ASSIGN_OR_RETURN(base, parent_->BackwardConstant(x));
  }
  Node* e = Enter(base, bframe_, true, "stack_enter");
  RETURN_IF_ERROR(b_.status());
  return bwd_constants_[x.node->id()] = NodeOut{e, 0};
}

StatusOr<NodeOut> WhileGradient::Pop(NodeOut v, int branch) {
  auto it = pops_.find({v.node->id(), v.index});
  if (it != pops_.end()) return it->second;
  Graph* g = st_->graph;
  const DType t = BaseType(v.node->output_type(v.index));
  // One stack per value for the whole step, made outside every loop: the instances of a
  // nested F push one after the other and B's instances pop in exactly the reverse order.
  Node* stack = b_.AddNode("StackV2", {b_.Scalar(DT_INT32, -1, "stack_size")},
                           {{"elem_type", t}, {"stack_name", v.node->name()}}, "stack");
  RETURN_IF_ERROR(b_.status());
  Forward(stack);
  Forward(stack->data_inputs()[0]->src);
  ASSIGN_OR_RETURN(NodeOut fwd_handle, ForwardConstant({stack, 0}));
  Node* push = b_.WithControlInputs({c_pivot_}).AddNode("StackPushV2", {fwd_handle, v}, {}, "push");
  RETURN_IF_ERROR(b_.status());
  Forward(push);
  RETURN_IF_ERROR(g->AddControlEdge(push, c_join_));
  ASSIGN_OR_RETURN(NodeOut handle, BackwardConstant({stack, 0}));
  if (branch != 0) {
    // Only the iterations that took the branch pushed: pop where the predicate, popped in
    // turn (guarded the same way when that Cond is itself in a branch), says so.
    const CondInfo::Branch& br = st_->conds().branches[branch];
    ASSIGN_OR_RETURN(NodeOut pred, BackwardValue(br.pred));
    Node* sw = b_.AddNode("Switch", {handle, pred}, {}, "stack_switch");
    RETURN_IF_ERROR(b_.status());
    handle = NodeOut{sw, br.branch};
  }
  Node* popped = b_.WithControlInputs({n_pivot_}).AddNode("StackPopV2", {handle}, {{"elem_type", t}}, "pop");
  RETURN_IF_ERROR(b_.status());
  RETURN_IF_ERROR(g->AddControlEdge(popped, n_join_));
  return pops_[{v.node->id(), v.index}] = NodeOut{popped, 0};
}

StatusOr<NodeOut> WhileGradient::BackwardValue(NodeOut v) {
  const ControlFlowInfo& cf = st_->cf;
  const int f = cf.out_frame[v.node->id()];
  if (f == frame_) {
    bool is_constant = false;
    if (v.node->op() == "Enter") RETURN_IF_ERROR(GetAttr(v.node->attrs(), "is_constant", &is_constant));
    if (!is_constant) return Pop(v, st_->conds().BranchOf(v));
    const Edge* in = v.node->data_inputs()[0];
    v = NodeOut{in->src, in->src_output};
  } else if (cf.Within(frame_, f)) {
    return errors::Unimplemented("Gradient of while loop '", loop_.frame_name, "': it needs the value of '",
                                 v.node->name(), "' from inside a loop nested in it");
  }
  // A value from outside F: a loop invariant of B. When F is nested, the rewrite of the
  // parent's backward body turns what it reads into the parent's own stand-in.
  auto it = invariants_.find({v.node->id(), v.index});
  if (it != invariants_.end()) return it->second;
  Node* e = Enter(v, bframe_, true, "Enter_invariant");
  RETURN_IF_ERROR(b_.status());
  return invariants_[{v.node->id(), v.index}] = NodeOut{e, 0};
}

Status WhileGradient::BuildCounters() {
  Graph* g = st_->graph;
  GraphBuilder& b = b_;
  Status s;
  auto update = [&](Node* merge, Node* next) {
    if (s.ok() && b.ok()) s = g->UpdateInput(merge, 1, {next, 0});
  };
  // F's counter, driven by F's predicate. Nested, it starts from the parent's counter pivot:
  // this instance of F cannot push before the parent's previous iteration has finished
  // pushing (the parent's increment waits for this instance's count, pushed below).
  GraphBuilder init_b = parent_ != nullptr ? b.WithControlInputs({parent_->c_pivot_}) : b;
  NodeOut init = init_b.Scalar(DT_INT32, 0, "count_init");
  Node* c_enter = Enter(init, loop_.frame_name, false, "count_enter");
  Node* c_merge = b.AddNode("Merge", {{c_enter, 0}, {c_enter, 0}}, {}, "count_merge");
  Node* c_sw = b.AddNode("Switch", {{c_merge, 0}, loop_.loop_cond}, {}, "count_switch");
  c_exit_ = b.AddNode("Exit", {{c_sw, 0}}, {}, "count");
  c_pivot_ = b.AddNode("Identity", {{c_sw, 1}}, {}, "count_pivot");
  RETURN_IF_ERROR(b.status());
  c_join_ = b.AddNode("Merge", {{c_pivot_, 0}}, {}, "count_join");
  Node* one = b.WithControlInputs({c_pivot_}).Scalar(DT_INT32, 1, "one").node;
  Node* c_inc = b.WithControlInputs({c_join_}).AddNode("AddV2", {{c_pivot_, 0}, {one, 0}}, {}, "count_inc");
  Node* c_next = b.AddNode("NextIteration", {{c_inc, 0}}, {}, "count_next");
  update(c_merge, c_next);
  RETURN_IF_ERROR(b.status());
  RETURN_IF_ERROR(s);
  for (Node* v : {init.node, c_enter, c_merge, c_sw, c_exit_, c_pivot_, c_join_, one, c_inc, c_next}) Forward(v);

  // B counts down from this instance's number of iterations.
  NodeOut count{c_exit_, 0};
  if (parent_ != nullptr) {
    ASSIGN_OR_RETURN(count, parent_->Pop(count, LoopBranch()));
  }
  Node* n_enter = Enter(count, bframe_, false, "n_enter");
  Node* n_merge = b.AddNode("Merge", {{n_enter, 0}, {n_enter, 0}}, {}, "n_merge");
  RETURN_IF_ERROR(b.status());
  NodeOut more = b.Op("Greater", {{n_merge, 0}, b.WithControlInputs({n_merge}).Scalar(DT_INT32, 0)}, {}, "more");
  more_ = b.Op("LoopCond", {more});
  Node* n_sw = b.AddNode("Switch", {{n_merge, 0}, more_}, {}, "n_switch");
  n_exit_ = b.AddNode("Exit", {{n_sw, 0}}, {}, "n_exit");
  n_pivot_ = b.AddNode("Identity", {{n_sw, 1}}, {}, "n_pivot");
  RETURN_IF_ERROR(b.status());
  n_join_ = b.AddNode("Merge", {{n_pivot_, 0}}, {}, "n_join");
  Node* n_dec = b.WithControlInputs({n_join_}).AddNode(
      "Sub", {{n_pivot_, 0}, b.WithControlInputs({n_pivot_}).Scalar(DT_INT32, 1)}, {}, "n_dec");
  update(n_merge, b.AddNode("NextIteration", {{n_dec, 0}}, {}, "n_next"));
  RETURN_IF_ERROR(b.status());
  RETURN_IF_ERROR(s);
  // The parent's next backward iteration pops this loop's stacks again only after this
  // instance of B has popped everything.
  if (parent_ != nullptr) RETURN_IF_ERROR(g->AddControlEdge(n_exit_, parent_->n_join_));
  return absl::OkStatus();
}

Status WhileGradient::Build(const std::vector<char>& from_x, GradMap* grads) {
  Graph* g = st_->graph;
  GraphBuilder& b = b_;
  std::vector<int> vars, invs;  // the loop variables and invariants that gradients flow through
  for (size_t i = 0; i < loop_.vars.size(); ++i) {
    // The xs reach a loop variable through its initial value or through the body.
    if (from_x[loop_.vars[i].merge->id()] && IsFloating(BaseType(loop_.vars[i].enter->output_type(0)))) {
      vars.push_back(i);
    }
  }
  for (size_t j = 0; j < loop_.invariants.size(); ++j) {
    Node* inv = loop_.invariants[j];
    if (!from_x[inv->id()]) continue;
    DType t = BaseType(inv->output_type(0));
    if (t == DT_RESOURCE) {
      // A TensorArray's handle: its gradients go through the flow, never through the handle.
      const Node* src = inv;
      while ((src->op() == "Enter" || src->op() == "Identity") && !src->data_inputs().empty()) {
        src = src->data_inputs()[0]->src;
      }
      if (src->op().rfind("TensorArray", 0) == 0) continue;
      return errors::Unimplemented("Gradient of while loop '", loop_.frame_name, "': the resource '",
                                   inv->data_inputs()[0]->src->name(),
                                   "' enters the loop; read resource variables outside the loop to differentiate");
    }
    if (IsFloating(t)) invs.push_back(j);
  }
  if (vars.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(BuildCounters());

  Status s;
  auto update = [&](Node* merge, Node* next) {
    if (s.ok() && b.ok()) s = g->UpdateInput(merge, 1, {next, 0});
  };
  // A backward loop variable: its Merge, its value in an iteration, and its final value.
  struct BwdVar {
    Node* merge;
    NodeOut body;
    NodeOut exit;
  };
  auto bwd_var = [&](NodeOut init, const std::string& name) {
    Node* e = Enter(init, bframe_, false, name + "_enter");
    Node* m = b.AddNode("Merge", {{e, 0}, {e, 0}}, {}, name + "_merge");
    Node* sw = b.AddNode("Switch", {{m, 0}, more_}, {}, name + "_switch");
    Node* x = b.AddNode("Exit", {{sw, 0}}, {}, name);
    Node* body = b.AddNode("Identity", {{sw, 1}}, {}, name + "_body");
    return BwdVar{m, {body, 0}, {x, 0}};
  };
  std::vector<BwdVar> dvars, accs;
  std::vector<NodeOut> ys, grad_ys, xs;
  for (int i : vars) {
    const LoopVar& v = loop_.vars[i];
    NodeOut gi;
    auto it = v.exit != nullptr ? grads->find({v.exit->id(), 0}) : grads->end();
    if (it != grads->end()) {
      gi = SumTerms(&b, it->second);
    } else {
      const Edge* in = v.enter->data_inputs()[0];
      gi = ZerosLike(&b, v.exit != nullptr ? NodeOut{v.exit, 0} : NodeOut{in->src, in->src_output});
    }
    dvars.push_back(bwd_var(gi, "grad"));
    ys.push_back(v.body_out);
    grad_ys.push_back(dvars.back().body);
    xs.push_back({v.sw, 1});
  }
  for (int j : invs) {
    const Edge* in = loop_.invariants[j]->data_inputs()[0];
    accs.push_back(bwd_var(ZerosLike(&b, {in->src, in->src_output}), "acc"));
    xs.push_back({loop_.invariants[j], 0});
  }
  RETURN_IF_ERROR(b.status());

  // The body's gradient, at the loop's level; the loop's own plumbing is off limits.
  const int mark = g->num_node_ids();
  std::vector<char> blocked(st_->limit(), 0);
  for (const LoopVar& v : loop_.vars) {
    for (Node* x : {v.enter, v.merge, v.sw, v.exit, v.next})
      if (x != nullptr) blocked[x->id()] = 1;
  }
  if (loop_.loop_cond.node->id() < st_->limit()) blocked[loop_.loop_cond.node->id()] = 1;
  std::vector<NodeOut> body_grads;
  RETURN_IF_ERROR(Backprop(st_, frame_, ys, grad_ys, xs, blocked, &body_grads));
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
  RETURN_IF_ERROR(RewriteBody(mark));

  // The gradients of the tensors that enter the loop.
  for (size_t k = 0; k < vars.size(); ++k) {
    const Edge* in = loop_.vars[vars[k]].enter->data_inputs()[0];
    (*grads)[{in->src->id(), in->src_output}].push_back(dvars[k].exit);
  }
  for (size_t k = 0; k < invs.size(); ++k) {
    const Edge* in = loop_.invariants[invs[k]]->data_inputs()[0];
    (*grads)[{in->src->id(), in->src_output}].push_back(accs[k].exit);
  }
  return absl::OkStatus();
}

// Points the backward body's references to forward values at their stand-ins in B. The nodes
// from `mark` on include those of the gradients of loops nested in F, already rewritten into
// their own backward loops: what they still read from F's frame (or from outside) is what
// they need from this B.
Status WhileGradient::RewriteBody(int mark) {
  Graph* g = st_->graph;
  const int end = g->num_node_ids();
  for (int id = mark; id < end; ++id) {
    Node* v = g->node(id);
    if (v == nullptr || st_->forward_added.count(id) > 0) continue;
    for (int i = 0; i < v->num_inputs(); ++i) {
      const Edge* e = v->data_inputs()[i];
      if (e == nullptr || e->src->id() >= st_->limit()) continue;
      ASSIGN_OR_RETURN(NodeOut replacement, BackwardValue({e->src, e->src_output}));
      RETURN_IF_ERROR(g->UpdateInput(v, i, replacement));
    }
    for (const Edge* e : v->control_inputs()) {
      if (e->src->id() < st_->limit()) {
        return errors::Internal("Gradient of while loop '", loop_.frame_name, "': node '", v->name(),
                                "' has a control input from the forward node '", e->src->name(), "'");
      }
    }
    if (v->data_inputs().empty() && v->control_inputs().empty()) RETURN_IF_ERROR(g->AddControlEdge(n_pivot_, v));
  }
  return absl::OkStatus();
}

Status AddWhileLoopGradient(BackpropState* st, int level, int frame, const std::vector<char>& from_x, GradMap* grads) {
  ASSIGN_OR_RETURN(Loop loop, AnalyzeLoop(st->cf, frame));
  WhileGradient* parent = nullptr;
  if (level != 0) {
    auto it = st->loops.find(level);
    if (it == st->loops.end()) {
      return errors::Internal("Gradient of while loop '", loop.frame_name,
                              "': the loop around it is not being differentiated");
    }
    parent = it->second;
  }
  GraphBuilder b =
      st->root.WithPrefix(BaseName(loop.frame_name) + "_grad").WithDevice(st->DeviceFor(loop.vars[0].enter));
  WhileGradient wg(st, parent, frame, loop, std::move(b));
  st->loops[frame] = &wg;
  Status s = wg.Build(from_x, grads);
  st->loops.erase(frame);
  return s;
}

}  // namespace grad_internal
}  // namespace dflow
