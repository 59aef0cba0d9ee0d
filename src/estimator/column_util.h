// Helpers shared by the feature column files: building in a scope with errors returned, and the
// shape checks every column makes on its input.
#pragma once

#include <string>

#include "dflow/feature_column.h"

namespace dflow::feature_column::internal {

// The scope's error, or `out` when building it succeeded.
inline StatusOr<Output> Built(const Scope& s, const Output& out) {
  if (!s.ok()) return s.status();
  if (!out.valid()) return errors::Internal("building produced an invalid Output without an error");
  return out;
}

// The first dimension of x as a 1-element int32 vector.
Output BatchSize(const Scope& s, const Output& x);
// x reshaped to [batch, -1] (int ids) or [batch, width] (width > 0): the batch stays the first
// dimension, so a feature of the wrong width fails the step instead of being silently regrouped.
Output ToBatchMatrix(const Scope& s, const Output& x, int64_t width = -1);

// Checks that a categorical feature is [batch] or [batch, k]; the error names the column.
Status CheckCategoricalRank(const Output& x, const std::string& column);
bool IsIntegerType(DType t);

}  // namespace dflow::feature_column::internal
