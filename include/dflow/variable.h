// Variables: named state with an initializer, shared by every session of the graph (and, on a
// server, by every client that names it).
//
//   Variable w = Variable::Create(root.WithOpName("w"), {2, 3}, DT_FLOAT, init::GlorotUniform());
//   Operation init = GlobalVariablesInitializer(root);
//   session.Run({init});
//   session.Run({w.read()});
#pragma once

#include <string>
#include <vector>

#include "dflow/ops.h"

namespace dflow {

namespace init {
// How a variable gets its first value. `seed` 0 follows the graph seed rule.
struct Initializer {
  enum class Kind { kZeros, kOnes, kConstant, kRandomUniform, kRandomNormal, kTruncatedNormal, kGlorotUniform };
  Kind kind = Kind::kZeros;
  Tensor value;         // kConstant
  double a = 0, b = 1;  // uniform: [a, b); normal: mean a, stddev b
  int64_t seed = 0;
};
Initializer Zeros();
Initializer Ones();
Initializer Constant(const Input::Initializer& value);  // a scalar fills the shape
Initializer RandomUniform(double minval = 0.0, double maxval = 1.0, int64_t seed = 0);
Initializer RandomNormal(double mean = 0.0, double stddev = 1.0, int64_t seed = 0);
Initializer TruncatedNormal(double mean = 0.0, double stddev = 1.0, int64_t seed = 0);
// Uniform in [-limit, limit), limit = sqrt(6 / (fan_in + fan_out)).
Initializer GlorotUniform(int64_t seed = 0);
}  // namespace init

class Variable {
 public:
  Variable() = default;
  // Adds VariableV2 "<name>", its initial value under "<name>/Initializer/", the Assign
  // "<name>/Assign" and the snapshot "<name>/read". The default name is "Variable". The shape
  // must be fully defined. Errors are recorded in the scope. The VariableV2 requests the scope's
  // device (after its device functions); the other ops are colocated with it.
  static Variable Create(const Scope& scope, const TensorShape& shape, DType dtype,
                         const init::Initializer& initializer = init::Zeros());

  // A local variable (TensorFlow's LOCAL_VARIABLES collection), built as Create builds one but
  // neither trainable nor among the global variables, so optimizers, GlobalVariablesInitializer
  // and checkpoints leave it alone: per-session state such as a metric's running total.
  // LocalVariablesInitializer (re)sets it.
  static Variable CreateLocal(const Scope& scope, const TensorShape& shape, DType dtype,
                              const init::Initializer& initializer = init::Zeros());

  // The reference output (for Assign*, and as an op input, where it is read).
  Output ref() const { return ref_; }
  // The value, as an Identity that reads it.
  Output read() const { return read_; }
  Operation initializer() const { return initializer_; }
  std::string name() const;
  operator Input() const { return Input(read_); }  // NOLINT: a Variable reads as its value

 private:
  friend struct VariableAccess;
  Output ref_, read_;
  Operation initializer_;
};

// A NoOp "init" that runs every initializer of the variables created in this graph so far.
Operation GlobalVariablesInitializer(const Scope& scope);
// A NoOp "init" (uniquified: "init_1" after a global one) that runs the initializers of the local
// variables created in this graph so far; running it again resets them (metrics start over).
Operation LocalVariablesInitializer(const Scope& scope);
// The reference outputs of the graph's local variables, in creation order.
std::vector<Output> LocalVariables(const Scope& scope);

// A 1-D string tensor with the names of the variables in `var_list` that have no value yet,
// in list order (TensorFlow's tf.report_uninitialized_variables). `var_list` holds reference
// variables (Variable::ref(), VariableV2) and resource handles (VarHandleOp); empty means every
// variable of the scope's graph built so far. Each check runs on its variable's device, so the
// op is what a worker runs to learn whether the chief has initialized the model. Built under
// "report_uninitialized_variables/". An entry of another dtype is an error recorded in the scope.
Output ReportUninitializedVariables(const Scope& scope, std::vector<Output> var_list = {});

}  // namespace dflow
