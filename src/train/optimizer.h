// Optimizers below the client API: they add to a Graph, through GraphBuilder, the nodes that
// compute the gradients of a loss (AddGradients) and apply them to reference variables with
// the Apply* ops (src/ops/training/), as TensorFlow 1.x's tf.train optimizers do.
//
//   optimizers::AdamOptimizer adam(0.001);
//   Node* train = adam.Minimize(graph, loss, {w, b}).value();
//   for (auto& v : adam.TakeCreatedVariables()) initializers.push_back(v.initializer);
//
// Names follow TensorFlow: one call's nodes live under "<Name>/" ("Adam/update_w/ApplyAdam"),
// the op it returns is "<Name>" itself, and slot variables are "<var>/<Name>", "<var>/<Name>_1"
// (Adam's m and v), on the variable's device. An optimizer creates the slots of a variable once
// and reuses them in later ApplyGradients calls. Slot and non-slot variables (Adam's
// beta1_power) come with an initializer Assign, which the caller must run before training:
// TakeCreatedVariables hands them over.
//
// Not thread-safe: one thread builds with an optimizer at a time (graphs are built that way).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/graph_builder.h"

namespace dflow::optimizers {

// A hyperparameter: a number, or a scalar tensor computed in the graph (a learning-rate schedule).
class HyperParam {
 public:
  HyperParam(double v) : value_(v) {}                      // NOLINT
  HyperParam(NodeOut t) : tensor_(t), is_tensor_(true) {}  // NOLINT
  bool is_tensor() const { return is_tensor_; }
  double value() const { return value_; }
  NodeOut tensor() const { return tensor_; }

 private:
  double value_ = 0;
  NodeOut tensor_;
  bool is_tensor_ = false;
};

struct GradAndVar {
  NodeOut grad;  // null when no gradient flows from the loss to var
  NodeOut var;   // the variable: a reference output of VariableV2 / Variable
};

// A variable an optimizer added (a slot, or a non-slot such as beta1_power) and the Assign that
// gives it its initial value.
struct CreatedVariable {
  Node* variable = nullptr;
  Node* initializer = nullptr;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // "GradientDescent", "Adam", ...: the default name scope of its nodes and of its slots.
  const std::string& name() const { return name_; }

  // The gradient of `loss` (a float or double tensor) with respect to each variable, built under
  // the name scope `prefix` made unique. A variable is a reference output of VariableV2 or
  // Variable, or the Identity that reads one (it is replaced by the reference). A variable the
  // loss does not depend on gets a null grad. InvalidArgument for something that is not a
  // float/double variable; errors of AddGradients (an op without gradient) as they are.
  StatusOr<std::vector<GradAndVar>> ComputeGradients(Graph* graph, NodeOut loss, const std::vector<NodeOut>& vars,
                                                     const std::string& prefix = "gradients");

  // Adds the update of every pair that has a grad and returns the op that runs them all; when
  // `global_step` (an integer variable) is given, that op is an AssignAdd of 1 to it, run after
  // the updates. `name` is the exact name of that op and its name scope; empty: a unique name
  // made from name(). InvalidArgument when no pair has a gradient, or a grad does not match its
  // variable.
  StatusOr<Node*> ApplyGradients(Graph* graph, const std::vector<GradAndVar>& grads_and_vars, NodeOut global_step = {},
                                 const std::string& name = "");

  // ComputeGradients, then ApplyGradients.
  StatusOr<Node*> Minimize(Graph* graph, NodeOut loss, const std::vector<NodeOut>& vars, NodeOut global_step = {},
                           const std::string& name = "", const std::string& gradients_prefix = "gradients");

  // The variables added since the last call (slots and non-slots), in creation order.
  std::vector<CreatedVariable> TakeCreatedVariables();

  // Slot `slot` ("momentum", "accumulator", "m", "v", "rms", "accum", "linear") of `var`'s
  // variable node; null when there is none.
  NodeOut GetSlot(const NodeOut& var, const std::string& slot) const;

 protected:
  Optimizer(std::string name, bool use_locking) : name_(std::move(name)), use_locking_(use_locking) {}

  // Adds the slots of these variables (called with only variables that have none yet).
  virtual Status CreateSlots(Graph* graph, const std::vector<NodeOut>& vars) { return absl::OkStatus(); }
  // The update of one variable, built with `b` (scope "<name>/update_<var>/", var's device).
  virtual StatusOr<Node*> ApplyDense(GraphBuilder* b, NodeOut grad, NodeOut var) = 0;
  // The update of the rows `indices` (int32/int64 [N]) of var by the gradient rows `values`
  // ([N, var's other dims]; an index may repeat: its rows add up), for a gradient that is
  // SparseGradientOf one. Null (the default): the optimizer has no sparse update, and the
  // dense gradient is applied instead.
  virtual StatusOr<Node*> ApplySparse(GraphBuilder* b, NodeOut values, NodeOut indices, NodeOut var) { return nullptr; }
  // The op that completes the updates, named exactly `name` (in `scope`'s graph, with `scope`'s
  // prefix for helper nodes). The default groups them in a NoOp.
  virtual StatusOr<Node*> Finish(GraphBuilder* scope, const std::vector<Node*>& updates, const std::string& name);

  // Adds slot `slot` of var, "<var>/<name()>" made unique, filled with `init`.
  Status CreateSlot(Graph* graph, const NodeOut& var, double init, const std::string& slot);
  // Slot `slot` of var; an Internal error when it was not created.
  StatusOr<NodeOut> Slot(const NodeOut& var, const std::string& slot) const;
  // Adds a scalar variable `name` (made unique) of `dtype` holding `init`, on `device`.
  StatusOr<NodeOut> CreateNonSlot(Graph* graph, const std::string& name, DType dtype, double init,
                                  const std::string& device);

  // Hyperparameter `key` as a scalar of `dtype`, for the ApplyGradients call being built: a
  // Const "<name>/<key>" for a number, the tensor (cast when its dtype differs) otherwise.
  // Built once per call and dtype.
  NodeOut Hyper(GraphBuilder* b, const std::string& key, const HyperParam& h, DType dtype);

  bool use_locking() const { return use_locking_; }
  // The attrs every Apply op takes.
  AttrMap ApplyAttrs() const { return {{"use_locking", use_locking_}}; }

 private:
  // A node at the top of the call's scope with an exact name.
  StatusOr<Node*> AddExact(Graph* graph, NodeSpec spec);

  const std::string name_;
  const bool use_locking_;
  std::map<std::pair<const Node*, std::string>, NodeOut> slots_;
  std::set<const Node*> slotted_;  // variables whose slots exist
  std::vector<CreatedVariable> created_;
  // Per ApplyGradients call: the scope that hyperparameters are built in, and what was built.
  GraphBuilder* call_scope_ = nullptr;
  std::map<std::pair<std::string, DType>, NodeOut> hypers_;
};

// The variable a NodeOut names: itself when it is a reference output of VariableV2/Variable,
// its input when it is an Identity reading one; InvalidArgument otherwise.
StatusOr<NodeOut> ResolveVariable(const NodeOut& v);

// A gradient that is a table-sized sum of gathered rows (the gradient of a GatherV2 along axis 0,
// through Identities): its rows `values` and their row `indices`. False for any other gradient.
bool SparseGradientOf(const NodeOut& grad, NodeOut* values, NodeOut* indices);

}  // namespace dflow::optimizers
