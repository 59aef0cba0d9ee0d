// The shared part of examples/iris_dnn.cc (library dflow_examples), for tests/iris_dnn_test.cc.
#pragma once

#include <cstdint>
#include <string>

#include "dflow/status.h"

namespace dflow::examples {

struct IrisResult {
  float final_loss = 0;
  int64_t correct = 0;
  int64_t total = 0;
  float accuracy = 0;  // the streaming metric's value
};

// Trains the DNN on DATA_DIR/iris_training.csv for `steps` steps and evaluates it on
// DATA_DIR/iris_test.csv; with `verbose`, prints the loss every 200 steps and at the last.
StatusOr<IrisResult> TrainIrisDNN(const std::string& data_dir, int steps = 1000, bool verbose = false);

}  // namespace dflow::examples
