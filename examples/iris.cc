// The Iris job of TensorFlow's premade-estimator tutorial: a DNNClassifier (hidden units 10, 10;
// 3 classes; Adagrad 0.05) on the four numeric columns SepalLength, SepalWidth, PetalLength and
// PetalWidth, trained for 1000 steps of batch 100, evaluated on the test set, then asked about
// three flowers:
//
//   step 1: loss = 1.21
//   step 100: loss = 0.443 (2500.0 steps/sec)
//   ...
//   Test set accuracy: 0.967
//
//   Prediction is "Setosa" (99.6%), expected "Setosa"
//   Prediction is "Versicolor" (99.8%), expected "Versicolor"
//   Prediction is "Virginica" (97.9%), expected "Virginica"
//
// Alone it trains in this process. With the cluster flags (--ps_hosts --worker_hosts --job_name
// --task_index) or TF_CONFIG it is one task of a cluster: the variables live on the ps tasks,
// every worker trains them (asynchronously, 1000 global steps in all), and the chief (worker 0)
// then evaluates and predicts from the last checkpoint and tells the cluster the job is complete:
//
//   dflow launch --ps 1 --workers 2 -- build/bin/iris
//
// Flags: --data_dir DIR (data/iris), --model_dir DIR (a fresh temporary one), --train_steps N
// (1000), --batch_size N (100), --seed N (1; the same seed prints the same accuracy).
// The job is a function, RunIris (examples/iris.h), so that tests/iris_test.cc runs it in process:
// the library dflow_examples is this file compiled with DFLOW_EXAMPLE_NO_MAIN defined.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dflow/dflow.h"
#include "dflow/estimator.h"
#include "dflow/flags.h"
#include "examples/iris.h"

namespace dflow::examples {

const std::vector<std::string>& IrisFeatureNames() {
  static const std::vector<std::string> names = {"SepalLength", "SepalWidth", "PetalLength", "PetalWidth"};
  return names;
}
const std::vector<std::string>& IrisSpecies() {
  static const std::vector<std::string> species = {"Setosa", "Versicolor", "Virginica"};
  return species;
}

StatusOr<IrisColumns> LoadIris(const std::string& path) {
  Scope root = Scope::NewRootScope();
  data::CsvOptions csv;
  csv.header = true;
  csv.column_names = IrisFeatureNames();
  csv.column_names.push_back("");
  std::vector<Input> defaults = {0.0f, 0.0f, 0.0f, 0.0f, 0};
  data::Element all =
      data::Dataset::Csv(root, path, defaults, csv).Batch(int64_t{1} << 20).MakeOneShotIterator().GetNext();
  DFLOW_RETURN_IF_ERROR(root.status());
  ClientSession session(root);
  StatusOr<std::vector<Tensor>> got = session.Run(all.components);
  if (absl::IsOutOfRange(got.status())) return errors::InvalidArgument(path, ": no examples");
  DFLOW_RETURN_IF_ERROR(got.status());
  IrisColumns c;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all.names[i].empty()) {
      c.labels = (*got)[i];
    } else {
      c.features[all.names[i]] = (*got)[i];
    }
  }
  for (int64_t i = 0; i < c.labels.NumElements(); ++i) {
    const int32_t label = c.labels.flat<int32_t>()[i];
    if (label < 0 || label > 2) {
      return errors::InvalidArgument(path, ": example ", i, " has species ", label, ", not 0, 1 or 2");
    }
  }
  return c;
}

data::Dataset IrisDataset(const Scope& s, const IrisColumns& c) {
  std::map<std::string, Input> columns;
  for (const auto& [name, t] : c.features) columns.emplace(name, t);
  return data::Dataset::Zip({data::Dataset::FromTensorSlices(s, columns),
                             data::Dataset::FromTensorSlices(s, {c.labels})});
}

struct IrisFlags {
  std::string data_dir = "data/iris";
  std::string model_dir;
  int64_t train_steps = 1000;
  int64_t batch_size = 100;
  int64_t seed = 1;
};

inline Status ParseIrisFlags(const std::vector<std::string>& rest, IrisFlags* f) {
  FlagSpec spec;
  spec.values = {"--data_dir", "--model_dir", "--train_steps", "--batch_size", "--seed"};
  spec.unknown_hint =
      " (flags: --data_dir --model_dir --train_steps --batch_size --seed, and the cluster flags --ps_hosts "
      "--worker_hosts --job_name --task_index)";
  DFLOW_ASSIGN_OR_RETURN(ParsedFlags flags, ParsedFlags::Parse(rest, spec));
  if (!flags.positional().empty()) {
    return errors::InvalidArgument("unexpected argument '", flags.positional()[0], "'", spec.unknown_hint);
  }
  f->data_dir = flags.GetString("--data_dir", f->data_dir);
  f->model_dir = flags.GetString("--model_dir", f->model_dir);
  DFLOW_ASSIGN_OR_RETURN(f->train_steps, flags.GetInt64("--train_steps", f->train_steps, 1));
  DFLOW_ASSIGN_OR_RETURN(f->batch_size, flags.GetInt64("--batch_size", f->batch_size, 1));
  DFLOW_ASSIGN_OR_RETURN(f->seed, flags.GetInt64("--seed", f->seed, 1));
  return absl::OkStatus();
}

Status RunIris(const std::vector<std::string>& args, const std::string& tf_config, std::FILE* out) {
  namespace est = estimator;
  std::vector<std::string> rest;
  DFLOW_ASSIGN_OR_RETURN(est::RunConfig config, est::RunConfig::FromArgs(args, tf_config, &rest));
  IrisFlags flags;
  DFLOW_RETURN_IF_ERROR(ParseIrisFlags(rest, &flags));
  // A parameter server only serves, until the job is complete.
  if (config.task_type() == "ps") return est::RunParameterServer(config);
  DFLOW_ASSIGN_OR_RETURN(IrisColumns train, LoadIris(flags.data_dir + "/iris_training.csv"));
  DFLOW_ASSIGN_OR_RETURN(IrisColumns test, LoadIris(flags.data_dir + "/iris_test.csv"));

  config.model_dir = flags.model_dir;
  config.tf_random_seed = flags.seed;
  config.log = [out](const std::string& line) {
    std::fprintf(out, "%s\n", line.c_str());
    std::fflush(out);
  };
  est::DNNClassifierOptions o;
  for (const std::string& name : IrisFeatureNames()) o.feature_columns.push_back(feature_column::NumericColumn(name));
  o.hidden_units = {10, 10};
  o.n_classes = 3;
  est::DNNClassifier classifier(o, config);

  const int64_t batch = flags.batch_size;
  DFLOW_RETURN_IF_ERROR(classifier.Train(
      [&](const Scope& s) -> StatusOr<est::InputFnResult> {
        return IrisDataset(s, train).Shuffle(1000).Repeat().Batch(batch);
      },
      {.max_steps = flags.train_steps}));
  if (!config.is_chief()) {
    std::fprintf(out, "Training done at global step %lld\n", static_cast<long long>(classifier.global_step()));
    return absl::OkStatus();
  }

  DFLOW_ASSIGN_OR_RETURN(est::EvalResult eval, classifier.Evaluate([&](const Scope& s) -> StatusOr<est::InputFnResult> {
    return IrisDataset(s, test).Batch(batch);
  }));
  std::fprintf(out, "\nTest set accuracy: %.3f\n\n", eval["accuracy"]);

  const std::vector<std::string> expected = {"Setosa", "Versicolor", "Virginica"};
  const std::vector<std::vector<float>> predict_x = {{5.1f, 5.9f, 6.9f},
                                                     {3.3f, 3.0f, 3.1f},
                                                     {1.7f, 4.2f, 5.4f},
                                                     {0.5f, 1.5f, 2.1f}};
  DFLOW_ASSIGN_OR_RETURN(std::vector<est::Prediction> predictions,
                         classifier.Predict([&](const Scope& s) -> StatusOr<est::InputFnResult> {
                           std::map<std::string, Input> columns;
                           for (size_t i = 0; i < IrisFeatureNames().size(); ++i) {
                             columns.emplace(IrisFeatureNames()[i],
                                             Tensor::FromValues<float>(predict_x[i], TensorShape({3})).value());
                           }
                           return data::Dataset::FromTensorSlices(s, columns).Batch(batch);
                         }));
  for (size_t i = 0; i < predictions.size() && i < expected.size(); ++i) {
    const int64_t class_id = predictions[i]["class_ids"].flat<int64_t>()[0];
    const float probability = predictions[i]["probabilities"].flat<float>()[class_id];
    std::fprintf(out, "Prediction is \"%s\" (%.1f%%), expected \"%s\"\n", IrisSpecies()[class_id].c_str(),
                 100 * probability, expected[i].c_str());
  }
  std::fflush(out);
  // The ps tasks (and the other workers, if still training) stop now.
  return classifier.NotifyJobComplete();
}

}  // namespace dflow::examples

#ifndef DFLOW_EXAMPLE_NO_MAIN
int main(int argc, char** argv) {
  const char* tf_config = std::getenv("TF_CONFIG");
  dflow::Status s = dflow::examples::RunIris(std::vector<std::string>(argv + 1, argv + argc),
                                             tf_config == nullptr ? "" : tf_config, stdout);
  if (!s.ok()) {
    std::fprintf(stderr, "iris: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
#endif
