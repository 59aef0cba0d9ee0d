// Trains a graph that TensorFlow wrote: testdata/tf/rust_regression_train.pb (tensorflow/rust's
// regression example: y_hat = w * x + b, mean squared error, plain gradient descent with
// learning rate 0.5, as ops Variable, Assign, ApplyGradientDescent and TensorFlow's own gradient
// subgraph). It loads the GraphDef into a framework Session, runs `init`, then 201 steps of
// `train` feeding `x` (100 floats in [0, 1)) and `y` = 0.1 x + 0.3, and prints w and b:
//   w=0.1000 b=0.3000
//
//   tf_regression [GRAPH.pb]     (default: testdata/tf/rust_regression_train.pb)
//
// The training is a function, TrainTfRegression (examples/tf_regression.h), so that
// tests/train_examples_test.cc can run it in process: the library dflow_examples is this file
// compiled with DFLOW_EXAMPLE_NO_MAIN defined. It uses the public API only (dflow/graph_def.h).
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "dflow/dflow.h"
#include "dflow/flags.h"
#include "dflow/graph_def.h"
#include "examples/tf_regression.h"

namespace dflow::examples {

StatusOr<std::pair<float, float>> TrainTfRegression(const std::string& path, int steps) {
  DFLOW_ASSIGN_OR_RETURN(proto::GraphDef def, ReadGraphDef(path));
  DFLOW_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSessionFromGraphDef(def));
  std::vector<Tensor> out;
  DFLOW_RETURN_IF_ERROR(session->Run({}, {}, {"init"}, &out));

  constexpr int kPoints = 100;
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> xs(kPoints), ys(kPoints);
  for (int i = 0; i < kPoints; ++i) {
    xs[i] = uniform(gen);
    ys[i] = 0.1f * xs[i] + 0.3f;
  }
  DFLOW_ASSIGN_OR_RETURN(Tensor x, Tensor::FromValues<float>(xs, TensorShape{kPoints}));
  DFLOW_ASSIGN_OR_RETURN(Tensor y, Tensor::FromValues<float>(ys, TensorShape{kPoints}));
  for (int i = 0; i < steps; ++i) {
    DFLOW_RETURN_IF_ERROR(session->Run({{"x", x}, {"y", y}}, {}, {"train"}, &out));
  }
  DFLOW_RETURN_IF_ERROR(session->Run({}, {"w", "b"}, {}, &out));
  DFLOW_RETURN_IF_ERROR(session->Close());
  if (out.size() != 2 || out[0].dtype() != DT_FLOAT || out[1].dtype() != DT_FLOAT || out[0].NumElements() < 1 ||
      out[1].NumElements() < 1) {
    return errors::InvalidArgument(path, ": w and b are not float tensors");
  }
  return std::make_pair(out[0].flat<float>()[0], out[1].flat<float>()[0]);
}

}  // namespace dflow::examples

#ifndef DFLOW_EXAMPLE_NO_MAIN
int main(int argc, char** argv) {
  auto flags = dflow::ParsedFlags::Parse(std::vector<std::string>(argv + 1, argv + argc), {});
  if (!flags.ok() || flags->positional().size() > 1) {
    if (!flags.ok()) std::fprintf(stderr, "%s\n", flags.status().ToString().c_str());
    std::fprintf(stderr, "usage: tf_regression [GRAPH.pb]\n");
    return 2;
  }
  const std::string path = flags->positional().empty() ? "testdata/tf/rust_regression_train.pb"
                                                       : flags->positional()[0];
  auto r = dflow::examples::TrainTfRegression(path);
  if (!r.ok()) {
    std::fprintf(stderr, "error: %s\n", r.status().ToString().c_str());
    return 1;
  }
  std::printf("w=%.4f b=%.4f\n", r->first, r->second);
  return 0;
}
#endif
