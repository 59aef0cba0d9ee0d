// The body of ScatterUpdate/Add/Sub (scatter_ops.cc) and ResourceScatterUpdate/Add/Sub
// (resource_scatter_ops.cc), called with the variable's mutex held: checks that the variable is at
// least a vector, that updates is a scalar or indices.shape + variable.shape[1:], and that every
// index is in range before it writes anything; copies the buffer first when a reader holds it
// (readers keep their snapshot).
#pragma once

#include <string>

#include "framework/variable.h"
#include "ops/state/tensor_rows.h"

namespace dflow {

enum class ScatterMode { kUpdate, kAdd, kSub };

// `where` names the op in errors ("<type> <name>").
template <typename T, ScatterMode kMode>
Status ScatterRows(const std::string& where, Var* var, const Tensor& indices, const Tensor& updates) {
  Tensor* cur = var->tensor();
  if (cur->dims() < 1) {
    return errors::InvalidArgument(where, ": variable ", var->name(), " must be at least a vector, but has shape ",
                                   cur->shape().DebugString());
  }
  const int64_t rows = cur->dim_size(0);
  const int64_t row_elems = rows == 0 ? 0 : cur->NumElements() / rows;
  const bool scalar_update = updates.dims() == 0;
  if (!scalar_update) {
    bool match = updates.dims() == indices.dims() + cur->dims() - 1;
    for (int i = 0; match && i < indices.dims(); ++i) match = updates.dim_size(i) == indices.dim_size(i);
    for (int i = 1; match && i < cur->dims(); ++i) match = updates.dim_size(indices.dims() + i - 1) == cur->dim_size(i);
    if (!match) {
      return errors::InvalidArgument(where, ": updates must have shape indices.shape + ",
                                     "variable.shape[1:] or be a scalar; got updates ", updates.shape().DebugString(),
                                     ", indices ", indices.shape().DebugString(), ", variable ", var->name(), " ",
                                     cur->shape().DebugString());
    }
  }
  const int64_t n = indices.NumElements();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t idx = IndexAt(indices, i);
    if (!(idx >= 0 && idx < rows)) {
      return errors::InvalidArgument(where, ": indices[", i, "] = ", idx, " is not in [0, ", rows, ") (variable ",
                                     var->name(), " of shape ", cur->shape().DebugString(), ")");
    }
  }
  if (!cur->RefCountIsOne()) *cur = cur->DeepCopy();  // readers keep their snapshot
  T* dst = cur->data<T>();
  const T* src = updates.data<T>();
  for (int64_t i = 0; i < n; ++i) {
    T* row = dst + IndexAt(indices, i) * row_elems;
    for (int64_t k = 0; k < row_elems; ++k) {
      const T& u = scalar_update ? src[0] : src[i * row_elems + k];
      if constexpr (kMode == ScatterMode::kUpdate) row[k] = u;
      else if constexpr (kMode == ScatterMode::kAdd) row[k] += u;
      else row[k] -= u;
    }
  }
  return absl::OkStatus();
}

}  // namespace dflow
