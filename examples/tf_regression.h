// The shared part of examples/tf_regression.cc (library dflow_examples), for
// tests/train_examples_test.cc.
#pragma once

#include <string>
#include <utility>

#include "dflow/status.h"

namespace dflow::examples {

// Runs the training of the graph at `path` for `steps` steps and returns (w, b).
StatusOr<std::pair<float, float>> TrainTfRegression(const std::string& path, int steps = 201);

}  // namespace dflow::examples
