#include "graph/op_fusion.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace dflow {
namespace {

bool IsFloat(const Node* n) {
  auto it = n->attrs().find("T");
  return it != n->attrs().end() && it->second.get_if<DType>() != nullptr && *it->second.get_if<DType>() == DT_FLOAT;
}

std::string StringAttr(const Node* n, const std::string& name, const std::string& dflt) {
  auto it = n->attrs().find(name);
  if (it == n->attrs().end()) return dflt;
  const std::string* s = it->second.get_if<std::string>();
  return s == nullptr ? dflt : *s;
}

// The only consumer of `n`, when `n` has exactly one out edge and it is a data edge from output
// 0; else nullptr.
const Edge* SoleConsumer(const Node* n) {
  if (n->out_edges().size() != 1) return nullptr;
  const Edge* e = n->out_edges()[0];
  return e->IsControlEdge() || e->src_output != 0 ? nullptr : e;
}

bool IsActivation(const std::string& op) { return op == "Relu" || op == "Relu6" || op == "Elu" || op == "LeakyRelu"; }

struct Chain {
  Node* contraction = nullptr;  // Conv2D or MatMul
  Node* bias_add = nullptr;
  Node* activation = nullptr;  // may be null
  Node* last() const { return activation != nullptr ? activation : bias_add; }
};

// The chain that starts at `n`, if it can be fused (see op_fusion.h).
bool MatchChain(Node* n, Chain* c) {
  const bool conv = n->op() == "Conv2D";
  if (!conv && n->op() != "MatMul") return false;
  if (!IsFloat(n)) return false;
  const Edge* to_bias = SoleConsumer(n);
  if (to_bias == nullptr || to_bias->dst_input != 0) return false;
  Node* bias = to_bias->dst;
  if (bias->op() != "BiasAdd" || !IsFloat(bias) || bias->assigned_device() != n->assigned_device()) return false;
  if (conv && StringAttr(bias, "data_format", "NHWC") != StringAttr(n, "data_format", "NHWC")) return false;
  c->contraction = n;
  c->bias_add = bias;
  c->activation = nullptr;
  if (const Edge* to_act = SoleConsumer(bias); to_act != nullptr) {
    Node* act = to_act->dst;
    if (IsActivation(act->op()) && IsFloat(act) && act->assigned_device() == n->assigned_device()) {
      c->activation = act;
    }
  }
  return true;
}

Status Fuse(Graph* g, const Chain& c) {
  Node* last = c.last();
  NodeSpec spec;
  spec.name = last->name();
  spec.op = c.contraction->op() == "Conv2D" ? "_FusedConv2D" : "_FusedMatMul";
  spec.device = last->requested_device();
  const std::string assigned = last->assigned_device();
  for (const char* a : {"strides", "padding", "explicit_paddings", "data_format", "dilations", "use_cudnn_on_gpu",
                        "transpose_a", "transpose_b"}) {
    auto it = c.contraction->attrs().find(a);
    if (it != c.contraction->attrs().end()) spec.attrs[a] = it->second;
  }
  std::vector<std::string> fused_ops{"BiasAdd"};
  std::vector<std::string> fused_nodes{c.contraction->name(), c.bias_add->name()};
  if (c.activation != nullptr) {
    fused_ops.push_back(c.activation->op());
    fused_nodes.push_back(c.activation->name());
    if (c.activation->op() == "LeakyRelu") {
      auto it = c.activation->attrs().find("alpha");
      if (it != c.activation->attrs().end()) spec.attrs["leakyrelu_alpha"] = it->second;
    }
  }
  spec.attrs["T"] = DT_FLOAT;
  spec.attrs["num_args"] = int64_t{1};
  spec.attrs["fused_ops"] = fused_ops;
  spec.attrs["_fused_nodes"] = fused_nodes;
  for (const Edge* e : c.contraction->data_inputs()) spec.inputs.push_back({e->src, e->src_output});
  const Edge* bias_in = c.bias_add->data_inputs()[1];
  spec.inputs.push_back({bias_in->src, bias_in->src_output});
  for (const Node* n : {c.contraction, c.bias_add, c.activation}) {
    if (n == nullptr) continue;
    for (const Edge* e : n->control_inputs()) spec.control_inputs.push_back(e->src);
  }
  struct Out {
    Node* dst;
    int src_output;
    int dst_input;
  };
  std::vector<Out> outs;
  for (const Edge* e : last->out_edges()) outs.push_back({e->dst, e->src_output, e->dst_input});

  for (Node* n : {c.activation, c.bias_add, c.contraction}) {
    if (n != nullptr) RETURN_IF_ERROR(g->RemoveNode(n));
  }
  ASSIGN_OR_RETURN(Node * fused, g->AddNode(std::move(spec)));
  fused->set_assigned_device(assigned);
  for (const Out& o : outs) {
    if (o.src_output == kControlSlot) RETURN_IF_ERROR(g->AddControlEdge(fused, o.dst));
    else RETURN_IF_ERROR(g->UpdateInput(o.dst, o.dst_input, {fused, o.src_output}));
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<int> FuseOps(Graph* g) {
  std::vector<Chain> chains;
  for (Node* n : g->nodes()) {
    Chain c;
    if (MatchChain(n, &c)) chains.push_back(c);
  }
  // Chains are disjoint: each starts at its own contraction, and a BiasAdd or activation has
  // only one data input a chain can arrive by.
  for (const Chain& c : chains) {
    const std::string name = c.last()->name();
    Status s = Fuse(g, c);
    if (!s.ok()) return errors::Annotate(s, absl::StrCat("Fusing the ops ending in '", name, "': "));
  }
  return static_cast<int>(chains.size());
}

}  // namespace dflow
