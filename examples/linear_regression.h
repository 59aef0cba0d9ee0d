// The shared part of examples/linear_regression.cc (library dflow_examples), for
// tests/train_examples_test.cc.
#pragma once

#include <utility>

#include "dflow/status.h"

namespace dflow::examples {

// Trains for `steps` steps and returns (w, b). Deterministic: the data and the initial w come
// from fixed seeds.
StatusOr<std::pair<float, float>> TrainLinearRegression(int steps = 201);

}  // namespace dflow::examples
