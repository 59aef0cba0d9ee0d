#include "train/optimizer.h"

#include <set>

#include "absl/strings/str_join.h"
#include "graph/gradients.h"

namespace dflow::optimizers {
namespace {

bool IsVariableOp(const Node* n) { return n->op() == "VariableV2" || n->op() == "Variable"; }

std::string Describe(const NodeOut& t) {
  return t.node == nullptr ? std::string("<null>") : absl::StrCat(t.node->name(), ":", t.index);
}

}  // namespace

StatusOr<NodeOut> ResolveVariable(const NodeOut& v) {
  if (v.node == nullptr) return errors::InvalidArgument("A variable is null (building it failed?)");
  if (v.index < 0 || v.index >= v.node->num_outputs()) {
    return errors::InvalidArgument("Node '", v.node->name(), "' has no output ", v.index);
  }
  if (IsVariableOp(v.node) && IsRefType(v.node->output_type(v.index))) return v;
  if (v.node->op() == "Identity" && !v.node->data_inputs().empty() && v.node->data_inputs()[0] != nullptr) {
    const Edge* e = v.node->data_inputs()[0];
    if (IsVariableOp(e->src) && IsRefType(e->src->output_type(e->src_output))) return NodeOut{e->src, e->src_output};
  }
  return errors::InvalidArgument("'", Describe(v), "' (op ", v.node->op(),
                                 ") is not a variable: optimizers update the reference output of a VariableV2 "
                                 "or Variable node");
}

bool SparseGradientOf(const NodeOut& grad, NodeOut* values, NodeOut* indices) {
  const Node* n = grad.node;
  while (n != nullptr && n->op() == "Identity" && n->data_inputs().size() == 1 && n->data_inputs()[0] != nullptr) {
    n = n->data_inputs()[0]->src;
  }
  if (n == nullptr || n->op() != "UnsortedSegmentSum" || n->data_inputs().size() != 3) return false;
  bool sparse = false;
  if (!GetAttr(n->attrs(), kSparseGradientAttr, &sparse).ok() || !sparse) return false;
  for (const Edge* e : n->data_inputs())
    if (e == nullptr) return false;
  *values = NodeOut{n->data_inputs()[0]->src, n->data_inputs()[0]->src_output};
  *indices = NodeOut{n->data_inputs()[1]->src, n->data_inputs()[1]->src_output};
  return true;
}

StatusOr<std::vector<GradAndVar>> Optimizer::ComputeGradients(Graph* graph, NodeOut loss,
                                                              const std::vector<NodeOut>& vars,
                                                              const std::string& prefix) {
  if (loss.node == nullptr || loss.node->graph() != graph) {
    return errors::InvalidArgument(name_, ": the loss is null or belongs to another graph");
  }
  if (!IsFloating(ValueType(loss))) {
    return errors::InvalidArgument(name_, ": the loss '", Describe(loss), "' must be float or double, not ",
                                   DTypeString(ValueType(loss)));
  }
  if (vars.empty()) return errors::InvalidArgument(name_, ": no variables to optimize");
  std::vector<NodeOut> resolved;
  for (const NodeOut& v : vars) {
    ASSIGN_OR_RETURN(NodeOut r, ResolveVariable(v));
    if (r.node->graph() != graph) {
      return errors::InvalidArgument(name_, ": variable '", r.node->name(), "' belongs to another graph");
    }
    if (!IsFloating(ValueType(r))) {
      return errors::InvalidArgument(name_, ": variable '", r.node->name(), "' has type ", DTypeString(ValueType(r)),
                                     "; only float and double variables can be trained");
    }
    resolved.push_back(r);
  }
  // The loss's ancestors along data edges: only variables among them get a gradient.
  std::vector<char> ancestor(graph->num_node_ids(), 0);
  std::vector<const Node*> stack = {loss.node};
  ancestor[loss.node->id()] = 1;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const Edge* e : n->data_inputs()) {
      if (e != nullptr && !ancestor[e->src->id()]) {
        ancestor[e->src->id()] = 1;
        stack.push_back(e->src);
      }
    }
  }
  std::vector<NodeOut> connected;
  for (const NodeOut& v : resolved)
    if (ancestor[v.node->id()]) connected.push_back(v);
  std::vector<NodeOut> grads;
  if (!connected.empty()) {
    ASSIGN_OR_RETURN(grads, AddGradients(graph, {loss}, connected, {}, prefix));
  }
  std::vector<GradAndVar> out;
  size_t next = 0;
  for (const NodeOut& v : resolved) {
    GradAndVar gv;
    gv.var = v;
    if (ancestor[v.node->id()]) gv.grad = grads[next++];
    out.push_back(gv);
  }
  return out;
}

StatusOr<Node*> Optimizer::ApplyGradients(Graph* graph, const std::vector<GradAndVar>& grads_and_vars,
                                          NodeOut global_step, const std::string& name) {
  std::vector<GradAndVar> pairs;
  std::vector<std::string> names;
  std::set<const Node*> seen;
  for (const GradAndVar& gv : grads_and_vars) {
    ASSIGN_OR_RETURN(NodeOut var, ResolveVariable(gv.var));
    names.push_back(var.node->name());
    if (var.node->graph() != graph) {
      return errors::InvalidArgument(name_, ": variable '", var.node->name(), "' belongs to another graph");
    }
    if (gv.grad.node == nullptr) continue;
    if (gv.grad.node->graph() != graph) {
      return errors::InvalidArgument(name_, ": the gradient of '", var.node->name(), "' belongs to another graph");
    }
    if (ValueType(gv.grad) != ValueType(var)) {
      return errors::InvalidArgument(name_, ": the gradient '", Describe(gv.grad), "' of variable '", var.node->name(),
                                     "' has type ", DTypeString(ValueType(gv.grad)), ", the variable ",
                                     DTypeString(ValueType(var)));
    }
    if (!gv.grad.node->output_shape(gv.grad.index).IsCompatibleWith(var.node->output_shape(var.index))) {
      return errors::InvalidArgument(name_, ": the gradient '", Describe(gv.grad), "' of shape ",
                                     gv.grad.node->output_shape(gv.grad.index).DebugString(),
                                     " does not match variable '", var.node->name(), "' of shape ",
                                     var.node->output_shape(var.index).DebugString());
    }
    if (!seen.insert(var.node).second) {
      return errors::InvalidArgument(name_, ": variable '", var.node->name(), "' is given twice");
    }
    pairs.push_back({gv.grad, var});
  }
  if (pairs.empty()) {
    return errors::InvalidArgument(name_, ": no gradients provided for any variable: [", absl::StrJoin(names, ", "),
                                   "]");
  }
  if (global_step.node != nullptr) {
    if (global_step.node->graph() != graph) {
      return errors::InvalidArgument(name_, ": global_step belongs to another graph");
    }
    DType t = ValueType(global_step);
    if (!IsRefType(global_step.node->output_type(global_step.index)) || (t != DT_INT32 && t != DT_INT64)) {
      return errors::InvalidArgument(name_, ": global_step '", Describe(global_step),
                                     "' must be an int32 or int64 variable, not ",
                                     DTypeString(global_step.node->output_type(global_step.index)));
    }
  }

  if (!name.empty() && graph->IsNameUsed(name)) {
    return errors::InvalidArgument(name_, ": the name '", name, "' is already used in the graph");
  }
  std::vector<NodeOut> new_vars;
  for (const GradAndVar& gv : pairs) {
    if (!slotted_.count(gv.var.node)) new_vars.push_back(gv.var);
  }
  if (!new_vars.empty()) {
    Status s = CreateSlots(graph, new_vars);
    // After a failure, variables whose slots were made keep them (and are not given new ones).
    for (const NodeOut& v : new_vars) {
      auto it = slots_.lower_bound({v.node, std::string()});
      if (s.ok() || (it != slots_.end() && it->first.first == v.node)) slotted_.insert(v.node);
    }
    RETURN_IF_ERROR(s);
  }

  const std::string scope_name = name.empty() ? graph->UniqueName(name_) : name;
  GraphBuilder scope(graph, scope_name + "/");
  // Hyperparameter tensors are built once per call, in the call's scope.
  struct CallState {
    Optimizer* o;
    ~CallState() {
      o->call_scope_ = nullptr;
      o->hypers_.clear();
    }
  } call_state{this};
  call_scope_ = &scope;
  hypers_.clear();
  std::vector<Node*> updates;
  for (const GradAndVar& gv : pairs) {
    GraphBuilder b = scope.WithPrefix("update_" + gv.var.node->name()).WithDevice(gv.var.node->requested_device());
    // An embedding's gradient updates only the rows that were looked up, when the optimizer
    // can: not the whole table (what tf.IndexedSlices gives TensorFlow's optimizers).
    Node* update = nullptr;
    NodeOut values, indices;
    if (SparseGradientOf(gv.grad, &values, &indices)) {
      ASSIGN_OR_RETURN(update, ApplySparse(&b, values, indices, gv.var));
    }
    if (update == nullptr) {
      ASSIGN_OR_RETURN(update, ApplyDense(&b, gv.grad, gv.var));
    }
    RETURN_IF_ERROR(b.status());
    if (update == nullptr) return errors::Internal(name_, ": no update op for '", gv.var.node->name(), "'");
    updates.push_back(update);
  }

  if (global_step.node == nullptr) {
    ASSIGN_OR_RETURN(Node * finish, Finish(&scope, updates, scope_name));
    RETURN_IF_ERROR(scope.status());
    return finish;
  }
  ASSIGN_OR_RETURN(Node * finish, Finish(&scope, updates, graph->UniqueName(scope_name + "/update")));
  RETURN_IF_ERROR(scope.status());
  GraphBuilder step_b(graph, scope_name + "/", global_step.node->requested_device());
  NodeOut one = step_b.Scalar(ValueType(global_step), 1, "one");
  RETURN_IF_ERROR(step_b.status());
  NodeSpec inc;
  inc.name = scope_name;
  inc.op = "AssignAdd";
  inc.inputs = {global_step, one};
  inc.control_inputs = {finish};
  inc.device = global_step.node->requested_device();
  return AddExact(graph, std::move(inc));
}

StatusOr<Node*> Optimizer::Minimize(Graph* graph, NodeOut loss, const std::vector<NodeOut>& vars, NodeOut global_step,
                                    const std::string& name, const std::string& gradients_prefix) {
  ASSIGN_OR_RETURN(std::vector<GradAndVar> gvs, ComputeGradients(graph, loss, vars, gradients_prefix));
  return ApplyGradients(graph, gvs, global_step, name);
}

std::vector<CreatedVariable> Optimizer::TakeCreatedVariables() {
  std::vector<CreatedVariable> out;
  out.swap(created_);
  return out;
}

NodeOut Optimizer::GetSlot(const NodeOut& var, const std::string& slot) const {
  auto r = ResolveVariable(var);
  if (!r.ok()) return NodeOut{};
  auto it = slots_.find({r->node, slot});
  return it == slots_.end() ? NodeOut{} : it->second;
}

StatusOr<Node*> Optimizer::Finish(GraphBuilder* scope, const std::vector<Node*>& updates, const std::string& name) {
  NodeSpec spec;
  spec.name = name;
  spec.op = "NoOp";
  spec.control_inputs = updates;
  return AddExact(scope->graph(), std::move(spec));
}

StatusOr<Node*> Optimizer::AddExact(Graph* graph, NodeSpec spec) {
  if (graph->IsNameUsed(spec.name)) {
    return errors::InvalidArgument(name_, ": the name '", spec.name, "' is already used in the graph");
  }
  return graph->AddNode(std::move(spec));
}

Status Optimizer::CreateSlot(Graph* graph, const NodeOut& var, double init, const std::string& slot) {
  const PartialTensorShape& shape = var.node->output_shape(var.index);
  if (!shape.IsFullyDefined()) {
    return errors::InvalidArgument(name_, ": variable '", var.node->name(), "' has shape ", shape.DebugString(),
                                   "; slot variables need a fully defined shape");
  }
  const std::string& device = var.node->requested_device();
  const DType dtype = ValueType(var);
  const std::string name = graph->UniqueName(var.node->name() + "/" + name_);
  NodeSpec spec;
  spec.name = name;
  spec.op = "VariableV2";
  spec.attrs = {{"shape", shape}, {"dtype", dtype}};
  spec.device = device;
  ASSIGN_OR_RETURN(Node * slot_var, AddExact(graph, std::move(spec)));

  GraphBuilder init_b(graph, name + "/Initializer/", device);
  std::vector<int64_t> dims(shape.dim_sizes().begin(), shape.dim_sizes().end());
  TensorShape dims_shape;
  dims_shape.AddDimUnchecked(static_cast<int64_t>(dims.size()));
  ASSIGN_OR_RETURN(Tensor dims_t, Tensor::FromValues<int64_t>(dims, dims_shape));
  NodeOut value = init_b.Op("Fill", {init_b.Const(dims_t, "shape"), init_b.Scalar(dtype, init, "value")}, {},
                            init == 0 ? "zeros" : "Fill");
  GraphBuilder own(graph, name + "/", device);
  Node* assign = own.AddNode("Assign", {{slot_var, 0}, value}, {}, "Assign");
  RETURN_IF_ERROR(init_b.status());
  RETURN_IF_ERROR(own.status());
  slots_[{var.node, slot}] = NodeOut{slot_var, 0};
  created_.push_back({slot_var, assign});
  return absl::OkStatus();
}

StatusOr<NodeOut> Optimizer::Slot(const NodeOut& var, const std::string& slot) const {
  auto it = slots_.find({var.node, slot});
  if (it == slots_.end()) {
    return errors::Internal(name_, ": variable '", var.node->name(), "' has no slot '", slot, "'");
  }
  return it->second;
}

StatusOr<NodeOut> Optimizer::CreateNonSlot(Graph* graph, const std::string& name, DType dtype, double init,
                                           const std::string& device) {
  NodeSpec spec;
  spec.name = graph->UniqueName(name);
  spec.op = "VariableV2";
  spec.attrs = {{"shape", PartialTensorShape::Scalar()}, {"dtype", dtype}};
  spec.device = device;
  const std::string full = spec.name;
  ASSIGN_OR_RETURN(Node * v, AddExact(graph, std::move(spec)));
  GraphBuilder init_b(graph, full + "/Initializer/", device);
  NodeOut value = init_b.Scalar(dtype, init, "initial_value");
  GraphBuilder own(graph, full + "/", device);
  Node* assign = own.AddNode("Assign", {{v, 0}, value}, {}, "Assign");
  RETURN_IF_ERROR(init_b.status());
  RETURN_IF_ERROR(own.status());
  created_.push_back({v, assign});
  return NodeOut{v, 0};
}

NodeOut Optimizer::Hyper(GraphBuilder* b, const std::string& key, const HyperParam& h, DType dtype) {
  GraphBuilder* scope = call_scope_ != nullptr ? call_scope_ : b;
  auto it = hypers_.find({key, dtype});
  if (it != hypers_.end()) return it->second;
  NodeOut out;
  if (!h.is_tensor()) {
    out = scope->Scalar(dtype, h.value(), key);
  } else if (h.tensor().node == nullptr || h.tensor().node->graph() != scope->graph()) {
    scope->SetError(errors::InvalidArgument(name_, ": hyperparameter '", key,
                                            "' is a null tensor or belongs to another graph"));
  } else if (ValueType(h.tensor()) == dtype) {
    out = h.tensor();
  } else {
    out = scope->Op("Cast", {h.tensor()}, {{"DstT", dtype}}, key + "_cast");
  }
  if (!scope->ok()) {
    b->SetError(scope->status());
    return NodeOut{};
  }
  hypers_[{key, dtype}] = out;
  return out;
}

}  // namespace dflow::optimizers
