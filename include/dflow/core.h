// Basic types of the public API: Status (dflow/status.h), Tensor (dflow/tensor.h), DType
// (dflow/dtype.h), shapes (dflow/tensor_shape.h).
#pragma once

#include <string>

#include "dflow/dtype.h"
#include "dflow/status.h"
#include "dflow/tensor.h"
#include "dflow/tensor_shape.h"

namespace dflow {

// Registers every op, kernel and session target of this build. Called by Scope::NewRootScope and
// Session; call it yourself before using lower layers directly. Idempotent, thread-safe.
void InitDflow();

// The name TensorFlow's Python API prints for a dtype: "float32", "int32", "float32_ref", ...
std::string PythonDTypeName(DType t);

}  // namespace dflow
