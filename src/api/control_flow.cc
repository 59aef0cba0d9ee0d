#include "dflow/control_flow.h"

#include <algorithm>
#include <map>

#include "api/scope_internal.h"
#include "dflow/ops.h"

namespace dflow {
namespace {

std::vector<Output> Outputs(const Operation& op) {
  std::vector<Output> out;
  if (!op.valid()) return out;
  for (int i = 0; i < op.num_outputs(); ++i) out.emplace_back(op, i);
  return out;
}

bool AllValid(const std::vector<Output>& v) {
  for (const Output& o : v)
    if (!o.valid()) return false;
  return true;
}

}  // namespace

std::vector<Output> Cond(const Scope& scope, Output pred, const std::vector<Output>& inputs, const BranchFn& then_fn,
                         const BranchFn& else_fn) {
  if (!scope.ok()) return {};
  Scope s = scope.NewSubScope("cond");
  const int cond_start = scope.graph()->num_node_ids();
  // The pivots: live only on their branch. Every op of a branch depends on its pivot, so the
  // untaken branch is dead as a whole.
  std::vector<Output> sw = Outputs(ops::BuildOp(s, "Switch", {pred, pred}));
  if (sw.size() != 2) return {};
  Output pivot_f = ops::Identity(s.WithOpName("switch_f"), sw[0]);
  Output pivot_t = ops::Identity(s.WithOpName("switch_t"), sw[1]);
  std::vector<Output> in_t, in_f;
  for (const Output& x : inputs) {
    std::vector<Output> sx = Outputs(ops::BuildOp(s, "Switch", {x, pred}));
    if (sx.size() != 2) return {};
    in_f.push_back(sx[0]);
    in_t.push_back(sx[1]);
  }
  Graph* g = scope.graph();
  const int first_id = g->num_node_ids();
  std::vector<Output> out_t = then_fn(s.NewSubScope("then").WithControlDependencies({pivot_t.op()}), in_t);
  const int else_id = g->num_node_ids();
  std::vector<Output> out_f = else_fn(s.NewSubScope("else").WithControlDependencies({pivot_f.op()}), in_f);
  if (!scope.ok() || !AllValid(out_t) || !AllValid(out_f)) {
    scope.UpdateStatus(errors::InvalidArgument("Cond: a branch failed to build"));
    return {};
  }
  if (out_t.size() != out_f.size()) {
    scope.UpdateStatus(errors::InvalidArgument("Cond: the then branch returns ", out_t.size(),
                                               " outputs but the else branch ", out_f.size()));
    return {};
  }
  // Tensors from outside that a branch reads (or returns) enter it through a Switch on the
  // predicate, as TensorFlow's cond does: their value exists only in the branch that runs, so
  // a gradient that flows back through the untaken branch is dead, and the Switch's gradient
  // (a Merge with zeros for the other side) makes it whole again. Reference inputs (Assign's
  // variable), variables' references and resource handles are left as they are.
  std::map<std::pair<Node*, int>, Operation> captured;
  auto switched = [&](const Output& x, int branch) -> Output {
    auto key = std::make_pair(x.node(), x.index());
    auto it = captured.find(key);
    if (it == captured.end()) {
      it = captured.emplace(key, ops::BuildOp(s, "Switch", {x, pred}, {}, "Switch_captured")).first;
    }
    return it->second.valid() ? Output(it->second, branch) : Output();
  };
  auto outside = [&](const Node* n) { return n->id() < cond_start; };
  const int last_id = g->num_node_ids();
  for (int id = first_id; id < last_id; ++id) {
    Node* n = g->node(id);
    if (n == nullptr) continue;
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Edge* e = n->data_inputs()[i];
      // A variable's reference is read where the branch reads it (a Switch would read it in
      // either branch, an uninitialized one included): TensorFlow forwards it with RefSwitch.
      if (e == nullptr || !outside(e->src) || IsRefType(n->input_type(i)) ||
          IsRefType(e->src->output_type(e->src_output)) ||
          BaseType(e->src->output_type(e->src_output)) == DT_RESOURCE) {
        continue;
      }
      Output sw = switched(Output(e->src, e->src_output), id < else_id ? 1 : 0);
      if (!sw.valid()) return {};
      Status st = g->UpdateInput(n, i, {sw.node(), sw.index()});
      if (!st.ok()) {
        scope.UpdateStatus(errors::Annotate(st, "Cond: "));
        return {};
      }
    }
  }
  for (auto* outs : {&out_t, &out_f}) {
    for (Output& o : *outs) {
      if (outside(o.node()) && BaseType(o.dtype()) != DT_RESOURCE && !IsRefType(o.dtype())) {
        o = switched(o, outs == &out_t ? 1 : 0);
        if (!o.valid()) return {};
      }
    }
  }
  std::vector<Output> result;
  for (size_t i = 0; i < out_t.size(); ++i) {
    Operation m = ops::BuildOp(s, "Merge", {out_f[i], out_t[i]});
    if (!m.valid()) return {};
    result.emplace_back(m, 0);
  }
  return result;
}

std::vector<Output> WhileLoop(const Scope& scope, const std::vector<Output>& loop_vars, const LoopCondFn& cond_fn,
                              const LoopBodyFn& body_fn, const std::string& name) {
  if (!scope.ok()) return {};
  if (loop_vars.empty()) {
    scope.UpdateStatus(errors::InvalidArgument("WhileLoop needs at least one loop variable"));
    return {};
  }
  Graph* g = scope.graph();
  Scope s = scope.NewSubScope(name);
  const std::string frame = s.name_prefix();  // unique per loop
  const int first_id = g->num_node_ids();
  std::vector<Output> merges;
  std::vector<Node*> own_enters;  // these read their values from outside, as they should
  for (const Output& v : loop_vars) {
    Output enter = Output(ops::BuildOp(s, "Enter", {v}, {{"frame_name", frame}}), 0);
    if (enter.valid()) own_enters.push_back(enter.node());
    // The second input stands in for the NextIteration edge added below.
    Operation m = ops::BuildOp(ScopeAccess::WithoutControlDependencies(s), "Merge", {enter, enter});
    if (!m.valid()) return {};
    merges.emplace_back(m, 0);
  }
  // Past the Enter nodes everything is inside the loop: the outer scope's control
  // dependencies (outside it) stay on the Enter nodes only.
  s = ScopeAccess::WithoutControlDependencies(s);
  Scope in_cond = s.NewSubScope("cond").WithControlDependencies({merges[0].op()});
  Output pred = cond_fn(in_cond, merges);
  if (!scope.ok() || !pred.valid()) {
    scope.UpdateStatus(errors::InvalidArgument("WhileLoop: the condition failed to build"));
    return {};
  }
  Output loop_cond = Output(ops::BuildOp(s, "LoopCond", {pred}), 0);
  std::vector<Output> exits, body_in;
  for (const Output& m : merges) {
    std::vector<Output> sw = Outputs(ops::BuildOp(s, "Switch", {m, loop_cond}));
    if (sw.size() != 2) return {};
    exits.push_back(Output(ops::BuildOp(s, "Exit", {sw[0]}), 0));
    body_in.push_back(ops::Identity(s, sw[1]));
  }
  std::vector<Output> body_out = body_fn(s.NewSubScope("body").WithControlDependencies({body_in[0].op()}), body_in);
  if (!scope.ok() || !AllValid(body_out)) {
    scope.UpdateStatus(errors::InvalidArgument("WhileLoop: the body failed to build"));
    return {};
  }
  if (body_out.size() != loop_vars.size()) {
    scope.UpdateStatus(errors::InvalidArgument("WhileLoop: the body returns ", body_out.size(), " values for ",
                                               loop_vars.size(), " loop variables"));
    return {};
  }
  for (size_t i = 0; i < body_out.size(); ++i) {
    Output next = Output(ops::BuildOp(s, "NextIteration", {body_out[i]}), 0);
    if (!next.valid()) return {};
    Status st = g->UpdateInput(merges[i].node(), 1, {next.node(), 0});
    if (!st.ok()) {
      scope.UpdateStatus(errors::Annotate(st, "WhileLoop: "));
      return {};
    }
  }
  // The nodes of the loop: those built with it that depend, through data or control inputs, on
  // its Enter nodes (every node built in the condition's or the body's scope does). A node built
  // meanwhile that depends on none of them runs outside the loop: a literal such as the 1 of
  // `v + 1`, or a variable and its initializer built without the body's control dependencies
  // (TensorFlow's init_scope, which the Python front end uses).
  const int last_id = g->num_node_ids();
  std::vector<char> in_loop(last_id - first_id, 0);
  auto is_in_loop = [&](const Node* n) {
    return n->id() >= first_id && n->id() < last_id && in_loop[n->id() - first_id];
  };
  for (int id = first_id; id < last_id; ++id) {
    Node* n = g->node(id);
    if (n == nullptr) continue;
    // Enter nodes built meanwhile belong to nested loops (their invariants read from outside
    // and must be rewritten to read from this loop's frame).
    bool inside = n->op() == "Enter" || std::find(own_enters.begin(), own_enters.end(), n) != own_enters.end();
    for (const Edge* e : n->data_inputs()) inside = inside || (e != nullptr && is_in_loop(e->src));
    for (const Edge* e : n->control_inputs()) inside = inside || is_in_loop(e->src);
    in_loop[id - first_id] = inside;
  }
  // Tensors from outside the loop that its nodes read enter it as loop invariants.
  std::map<std::pair<Node*, int>, Output> invariants;
  for (int id = first_id; id < last_id; ++id) {
    Node* n = g->node(id);
    // Nested loops' Enter nodes are rewritten too: they must read from this loop's frame.
    if (n == nullptr || !in_loop[id - first_id] ||
        std::find(own_enters.begin(), own_enters.end(), n) != own_enters.end()) {
      continue;
    }
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Edge* e = n->data_inputs()[i];
      if (e == nullptr || is_in_loop(e->src)) continue;
      auto key = std::make_pair(e->src, e->src_output);
      auto it = invariants.find(key);
      if (it == invariants.end()) {
        Output enter = Output(ops::BuildOp(s, "Enter", {Output(e->src, e->src_output)},
                                           {{"frame_name", frame}, {"is_constant", true}}, "Enter_invariant"),
                              0);
        if (!enter.valid()) return {};
        it = invariants.emplace(key, enter).first;
      }
      Status st = g->UpdateInput(n, i, {it->second.node(), 0});
      if (!st.ok()) {
        scope.UpdateStatus(errors::Annotate(st, "WhileLoop: "));
        return {};
      }
    }
  }
  return exits;
}

}  // namespace dflow
