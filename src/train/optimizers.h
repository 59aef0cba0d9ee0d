// The optimizers of TensorFlow 1.x's tf.train, built on Optimizer (see optimizer.h), with
// TensorFlow's defaults, slot names and update ops.
#pragma once

#include "train/optimizer.h"

namespace dflow::optimizers {

// var -= learning_rate * grad (ApplyGradientDescent); the gradient of a gather (an embedding
// lookup) updates only the rows looked up (ScatterSub). No slots.
class GradientDescentOptimizer : public Optimizer {
 public:
  explicit GradientDescentOptimizer(HyperParam learning_rate, bool use_locking = false,
                                    std::string name = "GradientDescent");

 protected:
  StatusOr<Node*> ApplyDense(GraphBuilder* b, NodeOut grad, NodeOut var) override;
  // var[indices] -= learning_rate * values (ScatterSub), as TensorFlow's sparse update.
  StatusOr<Node*> ApplySparse(GraphBuilder* b, NodeOut values, NodeOut indices, NodeOut var) override;

 private:
  HyperParam lr_;
};

// ApplyMomentum; slot "momentum" ("<var>/Momentum"), zeros.
class MomentumOptimizer : public Optimizer {
 public:
  MomentumOptimizer(HyperParam learning_rate, HyperParam momentum, bool use_nesterov = false, bool use_locking = false,
                    std::string name = "Momentum");

 protected:
  Status CreateSlots(Graph* graph, const std::vector<NodeOut>& vars) override;
  StatusOr<Node*> ApplyDense(GraphBuilder* b, NodeOut grad, NodeOut var) override;
  // The rows of repeated indices summed first, then the SparseApply* op (TensorFlow's sparse path).
  StatusOr<Node*> ApplySparse(GraphBuilder* b, NodeOut values, NodeOut indices, NodeOut var) override;

 private:
  // The dense update (indices null) or the sparse one.
  StatusOr<Node*> Update(GraphBuilder* b, NodeOut grad, NodeOut indices, NodeOut var);
  HyperParam lr_, momentum_;
  bool use_nesterov_;
};

// ApplyAdagrad; slot "accumulator" ("<var>/Adagrad") starting at initial_accumulator_value (> 0).
class AdagradOptimizer : public Optimizer {
 public:
  explicit AdagradOptimizer(HyperParam learning_rate, double initial_accumulator_value = 0.1, bool use_locking = false,
                            std::string name = "Adagrad");

 protected:
  Status CreateSlots(Graph* graph, const std::vector<NodeOut>& vars) override;
  StatusOr<Node*> ApplyDense(GraphBuilder* b, NodeOut grad, NodeOut var) override;
  // The rows of repeated indices summed first, then the SparseApply* op (TensorFlow's sparse path).
  StatusOr<Node*> ApplySparse(GraphBuilder* b, NodeOut values, NodeOut indices, NodeOut var) override;

 private:
  // The dense update (indices null) or the sparse one.
  StatusOr<Node*> Update(GraphBuilder* b, NodeOut grad, NodeOut indices, NodeOut var);
  HyperParam lr_;
  double initial_accumulator_value_;
};

// ApplyAdam, also for a gather's gradient (TensorFlow's sparse Adam decays m and v and moves every
// row too, so the dense update is the same); slots "m" ("<var>/Adam") and "v" ("<var>/Adam_1"),
// zeros; non-slot scalar variables
// "beta1_power" and "beta2_power" (starting at beta1 and beta2, on the first variable's device,
// of its dtype), multiplied by beta1 and beta2 after every step.
class AdamOptimizer : public Optimizer {
 public:
  explicit AdamOptimizer(HyperParam learning_rate = 0.001, double beta1 = 0.9, double beta2 = 0.999,
                         HyperParam epsilon = 1e-8, bool use_locking = false, std::string name = "Adam");

  // The beta power variables (null before the first ApplyGradients).
  NodeOut beta1_power() const { return beta1_power_; }
  NodeOut beta2_power() const { return beta2_power_; }

 protected:
  Status CreateSlots(Graph* graph, const std::vector<NodeOut>& vars) override;
  StatusOr<Node*> ApplyDense(GraphBuilder* b, NodeOut grad, NodeOut var) override;
  StatusOr<Node*> Finish(GraphBuilder* scope, const std::vector<Node*>& updates, const std::string& name) override;

 private:
  HyperParam lr_;
  double beta1_, beta2_;
  HyperParam epsilon_;
  NodeOut beta1_power_, beta2_power_;
};

// ApplyRMSProp; slots "rms" ("<var>/RMSProp", ones) and "momentum" ("<var>/RMSProp_1", zeros).
// Centered: ApplyCenteredRMSProp, with the slot "mg" (the mean gradient, zeros) made between
// them as TensorFlow does ("<var>/RMSProp_1"; momentum is then "<var>/RMSProp_2").
class RMSPropOptimizer : public Optimizer {
 public:
  explicit RMSPropOptimizer(HyperParam learning_rate, HyperParam decay = 0.9, HyperParam momentum = 0.0,
                            HyperParam epsilon = 1e-10, bool use_locking = false, bool centered = false,
                            std::string name = "RMSProp");

 protected:
  Status CreateSlots(Graph* graph, const std::vector<NodeOut>& vars) override;
  StatusOr<Node*> ApplyDense(GraphBuilder* b, NodeOut grad, NodeOut var) override;
  // The rows of repeated indices summed first, then the SparseApply* op (TensorFlow's sparse path).
  StatusOr<Node*> ApplySparse(GraphBuilder* b, NodeOut values, NodeOut indices, NodeOut var) override;

 private:
  // The dense update (indices null) or the sparse one.
  StatusOr<Node*> Update(GraphBuilder* b, NodeOut grad, NodeOut indices, NodeOut var);
  HyperParam lr_, decay_, momentum_, epsilon_;
  bool centered_;
};

// ApplyFtrl; slots "accum" ("<var>/Ftrl", initial_accumulator_value) and "linear"
// ("<var>/Ftrl_1", zeros).
class FtrlOptimizer : public Optimizer {
 public:
  explicit FtrlOptimizer(HyperParam learning_rate, HyperParam learning_rate_power = -0.5,
                         double initial_accumulator_value = 0.1, HyperParam l1_regularization_strength = 0.0,
                         HyperParam l2_regularization_strength = 0.0, bool use_locking = false,
                         std::string name = "Ftrl");

 protected:
  Status CreateSlots(Graph* graph, const std::vector<NodeOut>& vars) override;
  StatusOr<Node*> ApplyDense(GraphBuilder* b, NodeOut grad, NodeOut var) override;
  // The rows of repeated indices summed first, then the SparseApply* op (TensorFlow's sparse path).
  StatusOr<Node*> ApplySparse(GraphBuilder* b, NodeOut values, NodeOut indices, NodeOut var) override;

 private:
  // The dense update (indices null) or the sparse one.
  StatusOr<Node*> Update(GraphBuilder* b, NodeOut grad, NodeOut indices, NodeOut var);
  HyperParam lr_, lr_power_;
  double initial_accumulator_value_;
  HyperParam l1_, l2_;
};

}  // namespace dflow::optimizers
