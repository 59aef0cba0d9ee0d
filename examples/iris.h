// The shared part of examples/iris.cc (library dflow_examples), for tests/iris_test.cc and
// bench/iris_bench.cc: loading TensorFlow's Iris CSV files and the whole estimator job.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "dflow/dataset.h"
#include "dflow/scope.h"
#include "dflow/status.h"
#include "dflow/tensor.h"

namespace dflow::examples {

// "SepalLength", "SepalWidth", "PetalLength", "PetalWidth": the feature columns' names.
const std::vector<std::string>& IrisFeatureNames();
// "Setosa", "Versicolor", "Virginica": the species of labels 0, 1, 2.
const std::vector<std::string>& IrisSpecies();

// A data set in memory: one [n] float tensor per feature, and the int32 labels.
struct IrisColumns {
  std::map<std::string, Tensor> features;
  Tensor labels;
};

// Reads TensorFlow's Iris CSV (a header line, then SepalLength,SepalWidth,PetalLength,
// PetalWidth,Species rows) with a CSV dataset, all rows in one batch. Errors name the file and
// line.
StatusOr<IrisColumns> LoadIris(const std::string& path);

// The dataset of (features by name, label) rows.
data::Dataset IrisDataset(const Scope& s, const IrisColumns& c);

// The whole job of the iris program (arguments as its command line, `tf_config` as TF_CONFIG);
// `out` gets what the program prints. Returns the error that ended it.
Status RunIris(const std::vector<std::string>& args, const std::string& tf_config, std::FILE* out);

}  // namespace dflow::examples
