#include "train/optimizers.h"

namespace dflow::optimizers {
namespace {

// Adds an Apply op; its failure is in b's status.
StatusOr<Node*> AddApply(GraphBuilder* b, const std::string& op, const std::vector<NodeOut>& inputs, AttrMap attrs) {
  Node* n = b->AddNode(op, inputs, std::move(attrs), op);
  if (n == nullptr) return b->status();
  return n;
}

// TensorFlow's _deduplicate_indexed_slices: the rows of repeated indices summed, one per distinct
// index (in order of first appearance), for the sparse updates whose slots are not additive.
struct Deduplicated {
  NodeOut values, indices;
};
Deduplicated Deduplicate(GraphBuilder* b, NodeOut values, NodeOut indices) {
  NodeOut unique = b->Op("Unique", {indices}, {{"out_idx", DT_INT32}});
  NodeOut positions{unique.node, 1};
  NodeOut count = b->Op("Size", {unique}, {{"out_type", DT_INT32}});
  return {b->Op("UnsortedSegmentSum", {values, positions, count}), unique};
}

}  // namespace

// ---- GradientDescent ----

GradientDescentOptimizer::GradientDescentOptimizer(HyperParam learning_rate, bool use_locking, std::string name)
    : Optimizer(std::move(name), use_locking), lr_(learning_rate) {}

StatusOr<Node*> GradientDescentOptimizer::ApplyDense(GraphBuilder* b, NodeOut grad, NodeOut var) {
  NodeOut lr = Hyper(b, "learning_rate", lr_, ValueType(var));
  return AddApply(b, "ApplyGradientDescent", {var, lr, grad}, ApplyAttrs());
}

StatusOr<Node*> GradientDescentOptimizer::ApplySparse(GraphBuilder* b, NodeOut values, NodeOut indices, NodeOut var) {
  NodeOut lr = Hyper(b, "learning_rate", lr_, ValueType(var));
  NodeOut scaled = b->Op("Mul", {values, lr});
  return AddApply(b, "ScatterSub", {var, indices, scaled}, ApplyAttrs());
}

// ---- Momentum ----

MomentumOptimizer::MomentumOptimizer(HyperParam learning_rate, HyperParam momentum, bool use_nesterov, bool use_locking,
                                     std::string name)
    : Optimizer(std::move(name), use_locking), lr_(learning_rate), momentum_(momentum), use_nesterov_(use_nesterov) {}

Status MomentumOptimizer::CreateSlots(Graph* graph, const std::vector<NodeOut>& vars) {
  for (const NodeOut& v : vars) RETURN_IF_ERROR(CreateSlot(graph, v, 0.0, "momentum"));
  return absl::OkStatus();
}

StatusOr<Node*> MomentumOptimizer::ApplyDense(GraphBuilder* b, NodeOut grad, NodeOut var) {
  return Update(b, grad, {}, var);
}

StatusOr<Node*> MomentumOptimizer::ApplySparse(GraphBuilder* b, NodeOut values, NodeOut indices, NodeOut var) {
  return Update(b, values, indices, var);
}

StatusOr<Node*> MomentumOptimizer::Update(GraphBuilder* b, NodeOut grad, NodeOut indices, NodeOut var) {
  ASSIGN_OR_RETURN(NodeOut accum, Slot(var, "momentum"));
  const DType t = ValueType(var);
  NodeOut lr = Hyper(b, "learning_rate", lr_, t);
  NodeOut momentum = Hyper(b, "momentum", momentum_, t);
  AttrMap attrs = ApplyAttrs();
  attrs["use_nesterov"] = use_nesterov_;
  if (indices.node == nullptr) return AddApply(b, "ApplyMomentum", {var, accum, lr, grad, momentum}, attrs);
  Deduplicated g = Deduplicate(b, grad, indices);
  return AddApply(b, "SparseApplyMomentum", {var, accum, lr, g.values, g.indices, momentum}, attrs);
}

// ---- Adagrad ----

AdagradOptimizer::AdagradOptimizer(HyperParam learning_rate, double initial_accumulator_value, bool use_locking,
                                   std::string name)
    : Optimizer(std::move(name), use_locking),
      lr_(learning_rate),
      initial_accumulator_value_(initial_accumulator_value) {}

Status AdagradOptimizer::CreateSlots(Graph* graph, const std::vector<NodeOut>& vars) {
  if (!(initial_accumulator_value_ > 0)) {
    return errors::InvalidArgument(name(), ": initial_accumulator_value must be positive, got ",
                                   initial_accumulator_value_);
  }
  for (const NodeOut& v : vars) RETURN_IF_ERROR(CreateSlot(graph, v, initial_accumulator_value_, "accumulator"));
  return absl::OkStatus();
}

StatusOr<Node*> AdagradOptimizer::ApplyDense(GraphBuilder* b, NodeOut grad, NodeOut var) {
  return Update(b, grad, {}, var);
}

StatusOr<Node*> AdagradOptimizer::ApplySparse(GraphBuilder* b, NodeOut values, NodeOut indices, NodeOut var) {
  return Update(b, values, indices, var);
}

StatusOr<Node*> AdagradOptimizer::Update(GraphBuilder* b, NodeOut grad, NodeOut indices, NodeOut var) {
  ASSIGN_OR_RETURN(NodeOut accum, Slot(var, "accumulator"));
  NodeOut lr = Hyper(b, "learning_rate", lr_, ValueType(var));
  if (indices.node == nullptr) return AddApply(b, "ApplyAdagrad", {var, accum, lr, grad}, ApplyAttrs());
  Deduplicated g = Deduplicate(b, grad, indices);
  return AddApply(b, "SparseApplyAdagrad", {var, accum, lr, g.values, g.indices}, ApplyAttrs());
}

// ---- Adam ----

AdamOptimizer::AdamOptimizer(HyperParam learning_rate, double beta1, double beta2, HyperParam epsilon, bool use_locking,
                             std::string name)
    : Optimizer(std::move(name), use_locking), lr_(learning_rate), beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {}

Status AdamOptimizer::CreateSlots(Graph* graph, const std::vector<NodeOut>& vars) {
  if (beta1_power_.node == nullptr) {
    // As TensorFlow: with the first variable (by name), of its dtype.
    const NodeOut* first = &vars[0];
    for (const NodeOut& v : vars)
      if (v.node->name() < first->node->name()) first = &v;
    const std::string& device = first->node->requested_device();
    ASSIGN_OR_RETURN(beta1_power_, CreateNonSlot(graph, "beta1_power", ValueType(*first), beta1_, device));
    ASSIGN_OR_RETURN(beta2_power_, CreateNonSlot(graph, "beta2_power", ValueType(*first), beta2_, device));
  }
  for (const NodeOut& v : vars) {
    RETURN_IF_ERROR(CreateSlot(graph, v, 0.0, "m"));
    RETURN_IF_ERROR(CreateSlot(graph, v, 0.0, "v"));
  }
  return absl::OkStatus();
}

StatusOr<Node*> AdamOptimizer::ApplyDense(GraphBuilder* b, NodeOut grad, NodeOut var) {
  ASSIGN_OR_RETURN(NodeOut m, Slot(var, "m"));
  ASSIGN_OR_RETURN(NodeOut v, Slot(var, "v"));
  const DType t = ValueType(var);
  NodeOut b1p = Hyper(b, "beta1_power", HyperParam(beta1_power_), t);
  NodeOut b2p = Hyper(b, "beta2_power", HyperParam(beta2_power_), t);
  NodeOut lr = Hyper(b, "learning_rate", lr_, t);
  NodeOut beta1 = Hyper(b, "beta1", beta1_, t);
  NodeOut beta2 = Hyper(b, "beta2", beta2_, t);
  NodeOut epsilon = Hyper(b, "epsilon", epsilon_, t);
  return AddApply(b, "ApplyAdam", {var, m, v, b1p, b2p, lr, beta1, beta2, epsilon, grad}, ApplyAttrs());
}

StatusOr<Node*> AdamOptimizer::Finish(GraphBuilder* scope, const std::vector<Node*>& updates, const std::string& name) {
  // After every update: beta1_power *= beta1, beta2_power *= beta2, beside the variables.
  const DType t = ValueType(beta1_power_);
  GraphBuilder b = scope->WithControlInputs(updates).WithDevice(beta1_power_.node->requested_device());
  NodeOut beta1 = Hyper(scope, "beta1", beta1_, t);
  NodeOut beta2 = Hyper(scope, "beta2", beta2_, t);
  Node* update1 = b.AddNode("Assign", {beta1_power_, b.Op("Mul", {beta1_power_, beta1}, {}, "mul")},
                            {{"use_locking", use_locking()}}, "Assign");
  Node* update2 = b.AddNode("Assign", {beta2_power_, b.Op("Mul", {beta2_power_, beta2}, {}, "mul_1")},
                            {{"use_locking", use_locking()}}, "Assign_1");
  RETURN_IF_ERROR(b.status());
  std::vector<Node*> all = updates;
  all.push_back(update1);
  all.push_back(update2);
  return Optimizer::Finish(scope, all, name);
}

// ---- RMSProp ----

RMSPropOptimizer::RMSPropOptimizer(HyperParam learning_rate, HyperParam decay, HyperParam momentum, HyperParam epsilon,
                                   bool use_locking, bool centered, std::string name)
    : Optimizer(std::move(name), use_locking),
      lr_(learning_rate),
      decay_(decay),
      momentum_(momentum),
      epsilon_(epsilon),
      centered_(centered) {}

Status RMSPropOptimizer::CreateSlots(Graph* graph, const std::vector<NodeOut>& vars) {
  for (const NodeOut& v : vars) {
    RETURN_IF_ERROR(CreateSlot(graph, v, 1.0, "rms"));
    if (centered_) RETURN_IF_ERROR(CreateSlot(graph, v, 0.0, "mg"));
    RETURN_IF_ERROR(CreateSlot(graph, v, 0.0, "momentum"));
  }
  return absl::OkStatus();
}

StatusOr<Node*> RMSPropOptimizer::ApplyDense(GraphBuilder* b, NodeOut grad, NodeOut var) {
  return Update(b, grad, {}, var);
}

StatusOr<Node*> RMSPropOptimizer::ApplySparse(GraphBuilder* b, NodeOut values, NodeOut indices, NodeOut var) {
  return Update(b, values, indices, var);
}

StatusOr<Node*> RMSPropOptimizer::Update(GraphBuilder* b, NodeOut grad, NodeOut indices, NodeOut var) {
  ASSIGN_OR_RETURN(NodeOut rms, Slot(var, "rms"));
  ASSIGN_OR_RETURN(NodeOut mom, Slot(var, "momentum"));
  const DType t = ValueType(var);
  std::vector<NodeOut> in = {var};
  if (centered_) {
    ASSIGN_OR_RETURN(NodeOut mg, Slot(var, "mg"));
    in.push_back(mg);
  }
  for (NodeOut x : {rms, mom, Hyper(b, "learning_rate", lr_, t), Hyper(b, "decay", decay_, t),
                    Hyper(b, "momentum", momentum_, t), Hyper(b, "epsilon", epsilon_, t)}) {
    in.push_back(x);
  }
  const std::string op = centered_ ? "ApplyCenteredRMSProp" : "ApplyRMSProp";
  if (indices.node == nullptr) {
    in.push_back(grad);
    return AddApply(b, op, in, ApplyAttrs());
  }
  Deduplicated g = Deduplicate(b, grad, indices);
  in.push_back(g.values);
  in.push_back(g.indices);
  return AddApply(b, "Sparse" + op, in, ApplyAttrs());
}

// ---- Ftrl ----

FtrlOptimizer::FtrlOptimizer(HyperParam learning_rate, HyperParam learning_rate_power, double initial_accumulator_value,
                             HyperParam l1_regularization_strength, HyperParam l2_regularization_strength,
                             bool use_locking, std::string name)
    : Optimizer(std::move(name), use_locking),
      lr_(learning_rate),
      lr_power_(learning_rate_power),
      initial_accumulator_value_(initial_accumulator_value),
      l1_(l1_regularization_strength),
      l2_(l2_regularization_strength) {}

Status FtrlOptimizer::CreateSlots(Graph* graph, const std::vector<NodeOut>& vars) {
  if (initial_accumulator_value_ < 0) {
    return errors::InvalidArgument(name(), ": initial_accumulator_value must be non-negative, got ",
                                   initial_accumulator_value_);
  }
  for (const NodeOut& v : vars) {
    RETURN_IF_ERROR(CreateSlot(graph, v, initial_accumulator_value_, "accum"));
    RETURN_IF_ERROR(CreateSlot(graph, v, 0.0, "linear"));
  }
  return absl::OkStatus();
}

StatusOr<Node*> FtrlOptimizer::ApplyDense(GraphBuilder* b, NodeOut grad, NodeOut var) {
  return Update(b, grad, {}, var);
}

StatusOr<Node*> FtrlOptimizer::ApplySparse(GraphBuilder* b, NodeOut values, NodeOut indices, NodeOut var) {
  return Update(b, values, indices, var);
}

StatusOr<Node*> FtrlOptimizer::Update(GraphBuilder* b, NodeOut grad, NodeOut indices, NodeOut var) {
  ASSIGN_OR_RETURN(NodeOut accum, Slot(var, "accum"));
  ASSIGN_OR_RETURN(NodeOut linear, Slot(var, "linear"));
  const DType t = ValueType(var);
  NodeOut lr = Hyper(b, "learning_rate", lr_, t);
  NodeOut l1 = Hyper(b, "l1_regularization_strength", l1_, t);
  NodeOut l2 = Hyper(b, "l2_regularization_strength", l2_, t);
  NodeOut lr_power = Hyper(b, "learning_rate_power", lr_power_, t);
  if (indices.node == nullptr) {
    return AddApply(b, "ApplyFtrl", {var, accum, linear, grad, lr, l1, l2, lr_power}, ApplyAttrs());
  }
  Deduplicated g = Deduplicate(b, grad, indices);
  return AddApply(b, "SparseApplyFtrl", {var, accum, linear, g.values, g.indices, lr, l1, l2, lr_power}, ApplyAttrs());
}

}  // namespace dflow::optimizers
