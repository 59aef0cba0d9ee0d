// Linear regression from scratch: fits y = w * x + b to 100 points of y = 0.1 x + 0.3 by gradient
// descent on the mean squared error, with the client API (Variable, losses, train), and prints
//   w=0.1000 b=0.3000
//
// The training is a function, TrainLinearRegression (examples/linear_regression.h), so that
// tests/train_examples_test.cc can run it in process: the library dflow_examples is this file
// compiled with DFLOW_EXAMPLE_NO_MAIN defined.
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "dflow/dflow.h"
#include "examples/linear_regression.h"

namespace dflow::examples {

StatusOr<std::pair<float, float>> TrainLinearRegression(int steps) {
  constexpr int kPoints = 100;
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> xs(kPoints), ys(kPoints);
  for (int i = 0; i < kPoints; ++i) {
    xs[i] = uniform(gen);
    ys[i] = 0.1f * xs[i] + 0.3f;
  }

  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, PartialTensorShape({kPoints}));
  Output y = ops::Placeholder(root.WithOpName("y"), DT_FLOAT, PartialTensorShape({kPoints}));
  Variable w = Variable::Create(root.WithOpName("w"), {1}, DT_FLOAT, init::RandomUniform(-1.0, 1.0, /*seed=*/7));
  Variable b = Variable::Create(root.WithOpName("b"), {1}, DT_FLOAT, init::Zeros());
  Output y_hat = ops::Add(root.WithOpName("y_hat"), ops::Mul(root, w, x), b);
  Output loss = losses::MeanSquaredError(root, y, y_hat);
  Operation train_op = train::GradientDescentOptimizer(0.5f).Minimize(root.WithOpName("train"), loss);
  Operation init = GlobalVariablesInitializer(root);
  DFLOW_RETURN_IF_ERROR(root.status());

  ClientSession session(root);
  DFLOW_RETURN_IF_ERROR(session.Run({init}));
  DFLOW_ASSIGN_OR_RETURN(Tensor x_value, Tensor::FromValues<float>(xs, TensorShape{kPoints}));
  DFLOW_ASSIGN_OR_RETURN(Tensor y_value, Tensor::FromValues<float>(ys, TensorShape{kPoints}));
  for (int i = 0; i < steps; ++i) {
    auto step = session.Run({{x, x_value}, {y, y_value}}, {}, {train_op});
    if (!step.ok()) return step.status();
  }
  DFLOW_ASSIGN_OR_RETURN(std::vector<Tensor> wb, session.Run({w.read(), b.read()}));
  return std::make_pair(wb[0].flat<float>()[0], wb[1].flat<float>()[0]);
}

}  // namespace dflow::examples

#ifndef DFLOW_EXAMPLE_NO_MAIN
int main() {
  auto r = dflow::examples::TrainLinearRegression();
  if (!r.ok()) {
    std::fprintf(stderr, "error: %s\n", r.status().ToString().c_str());
    return 1;
  }
  std::printf("w=%.4f b=%.4f\n", r->first, r->second);
  return 0;
}
#endif
