// The DNN classifier of TensorFlow's premade-estimator tutorial, on the Iris data
// (data/iris/), built from dflow's estimator building blocks: feature columns, the canned DNN
// model function (hidden units 10, 10; Adagrad 0.05) and a streaming accuracy metric, trained by
// a plain session loop. Prints the test accuracy, e.g.
//   step 1000: loss 0.0506
//   test accuracy 0.9667 (29 of 30)
//
// Usage: iris_dnn [DATA_DIR (default data/iris)] [STEPS (default 1000)]
// The work is a function, TrainIrisDNN (examples/iris_dnn.h), so that tests/iris_dnn_test.cc runs
// it in process: the library dflow_examples is this file compiled with DFLOW_EXAMPLE_NO_MAIN.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "dflow/dflow.h"
#include "dflow/flags.h"
#include "examples/iris_dnn.h"

namespace dflow::examples {
namespace {

// The file's bytes; NotFound naming it when it cannot be opened.
StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errors::NotFound(path, ": ", std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return errors::DataLoss(path, ": read error");
  return bytes.str();
}

struct IrisData {
  std::vector<float> features;  // [n, 4]
  std::vector<int64_t> labels;  // [n]
  int64_t n = 0;
};

// Reads TensorFlow's Iris CSV: a header "count,4,names...", then "f0,f1,f2,f3,label" rows.
StatusOr<IrisData> ReadIrisCsv(const std::string& path) {
  DFLOW_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  IrisData d;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    ++line_no;
    if (line_no == 1) continue;  // the header
    std::vector<absl::string_view> cells = absl::StrSplit(line, ',');
    if (cells.size() != 5) {
      return errors::InvalidArgument(path, ":", line_no, ": expected 5 comma-separated values, got ", cells.size());
    }
    for (int i = 0; i < 4; ++i) {
      float v;
      if (!absl::SimpleAtof(cells[i], &v))
        return errors::InvalidArgument(path, ":", line_no, ": bad number '", cells[i], "'");
      d.features.push_back(v);
    }
    int64_t label;
    if (!absl::SimpleAtoi(cells[4], &label) || label < 0 || label > 2) {
      return errors::InvalidArgument(path, ":", line_no, ": bad label '", cells[4], "'");
    }
    d.labels.push_back(label);
    ++d.n;
  }
  if (d.n == 0) return errors::InvalidArgument(path, ": no examples");
  return d;
}

}  // namespace

StatusOr<IrisResult> TrainIrisDNN(const std::string& data_dir, int steps, bool verbose) {
  DFLOW_ASSIGN_OR_RETURN(IrisData train, ReadIrisCsv(data_dir + "/iris_training.csv"));
  DFLOW_ASSIGN_OR_RETURN(IrisData test, ReadIrisCsv(data_dir + "/iris_test.csv"));

  namespace fc = feature_column;
  Scope root = Scope::NewRootScope();
  root.SetRandomSeed(1);
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, PartialTensorShape({-1, 4}));
  Output y = ops::Placeholder(root.WithOpName("y"), DT_INT64, PartialTensorShape({-1}));
  estimator::DNNOptions opts;
  opts.hidden_units = {10, 10};
  opts.feature_columns = {fc::NumericColumn("measurements", {4})};
  estimator::ModelFn model_fn = estimator::DNNClassifierModelFn(opts, 3);
  DFLOW_ASSIGN_OR_RETURN(estimator::EstimatorSpec spec,
                         model_fn(root, {{"measurements", x}}, y, estimator::ModeKeys::kTrain, {}));
  // Dropout is off, so the training graph's predictions are the evaluation's.
  metrics::Metric accuracy = metrics::Accuracy(root, y, spec.predictions["class_ids"]);
  Operation init = GlobalVariablesInitializer(root);
  Operation local_init = LocalVariablesInitializer(root);
  DFLOW_RETURN_IF_ERROR(root.status());

  auto tensor = [](const auto& v, TensorShape shape) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    return Tensor::FromValues<T>(v, shape).value();
  };
  const Tensor train_x = tensor(train.features, TensorShape({train.n, 4}));
  const Tensor train_y = tensor(train.labels, TensorShape({train.n}));
  ClientSession session(root);
  DFLOW_RETURN_IF_ERROR(session.Run({init, local_init}));
  IrisResult r;
  for (int step = 1; step <= steps; ++step) {
    DFLOW_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                           session.Run({{x, train_x}, {y, train_y}}, {spec.loss}, {spec.train_op}));
    r.final_loss = out[0].scalar<float>();
    if (verbose && (step % 200 == 0 || step == steps)) std::printf("step %d: loss %.4f\n", step, r.final_loss);
  }
  DFLOW_ASSIGN_OR_RETURN(std::vector<Tensor> out, session.Run({{x, tensor(test.features, TensorShape({test.n, 4}))},
                                                               {y, tensor(test.labels, TensorShape({test.n}))}},
                                                              {accuracy.update_op, spec.predictions["class_ids"]}));
  r.accuracy = out[0].scalar<float>();
  r.total = test.n;
  for (int64_t i = 0; i < test.n; ++i) r.correct += out[1].flat<int64_t>()[i] == test.labels[i];
  return r;
}

}  // namespace dflow::examples

#ifndef DFLOW_EXAMPLE_NO_MAIN
int main(int argc, char** argv) {
  // iris_dnn [DATA_DIR] [STEPS]
  auto flags = dflow::ParsedFlags::Parse(std::vector<std::string>(argv + 1, argv + argc), {});
  if (flags.ok() && flags->positional().size() > 2) {
    flags = absl::InvalidArgumentError("usage: iris_dnn [DATA_DIR] [STEPS]");
  }
  const std::vector<std::string> args = flags.ok() ? flags->positional() : std::vector<std::string>();
  absl::StatusOr<int64_t> steps = args.size() > 1 ? dflow::ParseFlagInt64("STEPS", args[1], 1, 1 << 30) : 1000;
  if (!flags.ok() || !steps.ok()) {
    std::fprintf(stderr, "%s\n", (flags.ok() ? steps.status() : flags.status()).ToString().c_str());
    return 2;
  }
  const std::string dir = args.empty() ? "data/iris" : args[0];
  auto r = dflow::examples::TrainIrisDNN(dir, static_cast<int>(*steps), /*verbose=*/true);
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
    return 1;
  }
  std::printf("test accuracy %.4f (%lld of %lld)\n", r->accuracy, static_cast<long long>(r->correct),
              static_cast<long long>(r->total));
  return 0;
}
#endif
