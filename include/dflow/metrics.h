// Streaming metrics: TensorFlow 1.x's tf.metrics. Each metric keeps running totals in local
// variables (Variable::CreateLocal: not trainable, not global, never checkpointed) and returns
// two tensors:
//   value      the metric over everything added so far (reads the totals);
//   update_op  adds one batch to the totals and gives the metric including it.
//
//   metrics::Metric acc = metrics::Accuracy(root, labels, class_ids);
//   session.Run({LocalVariablesInitializer(root)});          // (re)starts every metric at zero
//   for (batch...) session.Run(feeds, {acc.update_op});
//   auto result = session.Run({acc.value});
//
// Variables and ops are named as TensorFlow names them, under the metric's name scope:
// "accuracy/total", "accuracy/count", "accuracy/value", "accuracy/update_op" (a second metric of
// the same name in a graph gets "accuracy_1/..."). A metric over no examples is 0. Errors
// (shapes that do not match, strings) are recorded in the scope; the Outputs are then invalid.
// update_op runs of different steps may interleave; each adds its whole batch atomically per
// variable.
#pragma once

#include <string>

#include "dflow/variable.h"

namespace dflow::metrics {

struct Metric {
  Output value;
  Output update_op;
};

// The (weighted) mean of `values`: total += sum(values * weights), count += sum(weights) (or the
// number of values without weights); value = total / count. `weights` (optional: an invalid
// Output means none) must broadcast to values' shape. values and weights are cast to float.
Metric Mean(const Scope& scope, Input values, Output weights = Output(), const std::string& name = "mean");

// How often predictions equal labels: the mean of cast(predictions == labels). A trailing
// dimension of size 1 on either side is squeezed ([batch, 1] class ids against [batch] labels);
// when a rank is unknown while building, predictions are reshaped to labels' shape instead (a
// step where their sizes differ fails). Predictions are cast to labels' dtype when they differ.
// The same shape rules hold for the (labels, predictions) metrics below.
Metric Accuracy(const Scope& scope, Input labels, Input predictions, Output weights = Output(),
                const std::string& name = "accuracy");

// The mean of (labels - predictions)^2, element-wise over every element.
Metric MeanSquaredError(const Scope& scope, Input labels, Input predictions, Output weights = Output(),
                        const std::string& name = "mean_squared_error");

// sqrt(MeanSquaredError).
Metric RootMeanSquaredError(const Scope& scope, Input labels, Input predictions, Output weights = Output(),
                            const std::string& name = "root_mean_squared_error");

// The mean of |labels - predictions|.
Metric MeanAbsoluteError(const Scope& scope, Input labels, Input predictions, Output weights = Output(),
                         const std::string& name = "mean_absolute_error");

}  // namespace dflow::metrics
