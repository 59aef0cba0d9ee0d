// Internals of variables shared by the client API's .cc files (Variable, PartitionedVariable).
#pragma once

#include <functional>
#include <string>

#include "dflow/variable.h"

namespace dflow {

struct VariableAccess {
  // The initial value `init` gives a variable of `shape`, built in `s` (the variable's
  // "<name>/Initializer/" scope). Errors are recorded in `s`.
  static Output InitialValue(const Scope& s, const TensorShape& shape, DType dtype, const init::Initializer& init);

  // Builds the variable named exactly `name`: VariableV2 (where the scope's devices and device
  // functions put it), its initial value by `value` (called with the scope "<name>/Initializer/",
  // colocated with the variable), "<name>/Assign" and "<name>/read", also colocated, and adds it
  // to the scope's initializers and trainable variables — or, when `local`, to the local
  // variables and their initializers only. Invalid on error (recorded in scope).
  static Variable Make(const Scope& scope, const std::string& name, const TensorShape& shape, DType dtype,
                       const std::function<Output(const Scope&)>& value, bool local = false);
};

}  // namespace dflow
