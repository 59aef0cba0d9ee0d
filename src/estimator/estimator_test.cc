// Estimators on small synthetic problems with known answers: regressors find y = 2x + 1, the
// classifiers separate what is separable, evaluation reports the metrics of exactly the batches
// it ran, prediction gives one row per example; training resumes from model_dir; RunConfig reads
// the cluster from flags and TF_CONFIG; train_and_evaluate locally, as an evaluator, and on an
// in-process cluster of a ps server and a chief.
#include "dflow/estimator.h"

#include <cmath>
#include <thread>

#include "base/net.h"
#include "base/env.h"
#include "base/temp_dir.h"
#include "dflow/dflow.h"
#include "dflow/server.h"
#include "estimator/estimator_internal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

namespace est = estimator;
namespace fc = feature_column;
using ::testing::HasSubstr;

template <typename T>
Tensor Values(const std::vector<T>& v) {
  return Tensor::FromValues<T>(v, TensorShape({static_cast<int64_t>(v.size())})).value();
}

// x evenly spread over [-1, 1], y = 2x + 1, class = x > 0.
struct Line {
  std::vector<float> x, y;
  std::vector<int32_t> positive;
  explicit Line(int n) {
    for (int i = 0; i < n; ++i) {
      float v = -1.0f + 2.0f * static_cast<float>(i) / static_cast<float>(n - 1);
      x.push_back(v);
      y.push_back(2 * v + 1);
      positive.push_back(v > 0 ? 1 : 0);
    }
  }
};

// (features {"x"}, labels) rows.
data::Dataset XY(const Scope& s, const std::vector<float>& x, const Tensor& labels) {
  return data::Dataset::Zip({data::Dataset::FromTensorSlices(s, std::map<std::string, Input>{{"x", Values(x)}}),
                             data::Dataset::FromTensorSlices(s, {labels})});
}

est::OptimizerFn Sgd(float rate) {
  return [rate] { return std::make_unique<train::GradientDescentOptimizer>(rate); };
}

est::RunConfig Quiet(const std::string& model_dir = "") {
  est::RunConfig c;
  c.model_dir = model_dir;
  c.tf_random_seed = 7;
  c.log_step_count_steps = 0;
  return c;
}

TEST(EstimatorTest, LinearRegressorFindsTheLine) {
  Line line(41);
  est::LinearRegressorOptions o;
  o.feature_columns = {fc::NumericColumn("x")};
  o.optimizer = Sgd(0.2f);
  est::LinearRegressor reg(o, Quiet());
  auto input = [&](const Scope& s) -> StatusOr<est::InputFnResult> {
    return XY(s, line.x, Values(line.y)).Shuffle(64).Repeat().Batch(8);
  };
  ASSERT_TRUE(reg.Train(input, {.steps = 400}).ok());
  EXPECT_EQ(reg.global_step(), 400);
  auto eval = reg.Evaluate([&](const Scope& s) -> StatusOr<est::InputFnResult> {
    return XY(s, line.x, Values(line.y)).Batch(10);
  });
  ASSERT_TRUE(eval.ok()) << eval.status();
  EXPECT_LT((*eval)["average_loss"], 1e-4);
  EXPECT_EQ((*eval)["global_step"], 400);
  // The weights themselves, through predictions at 0 and 1.
  auto pred = reg.Predict([&](const Scope& s) -> StatusOr<est::InputFnResult> {
    return data::Dataset::FromTensorSlices(s, std::map<std::string, Input>{{"x", Values<float>({0.0f, 1.0f, 3.0f})}})
        .Batch(2);
  });
  ASSERT_TRUE(pred.ok()) << pred.status();
  ASSERT_EQ(pred->size(), 3u);
  EXPECT_NEAR((*pred)[0]["predictions"].flat<float>()[0], 1.0f, 0.01f);
  EXPECT_NEAR((*pred)[1]["predictions"].flat<float>()[0], 3.0f, 0.01f);
  EXPECT_NEAR((*pred)[2]["predictions"].flat<float>()[0], 7.0f, 0.03f);
  EXPECT_EQ((*pred)[0]["predictions"].shape(), TensorShape({1}));
}

TEST(EstimatorTest, DNNRegressorLearnsTheLine) {
  Line line(41);
  est::DNNRegressorOptions o;
  o.feature_columns = {fc::NumericColumn("x")};
  o.hidden_units = {8};
  o.optimizer = [] { return std::make_unique<train::AdamOptimizer>(0.05); };
  est::DNNRegressor reg(o, Quiet());
  auto input = [&](const Scope& s) -> StatusOr<est::InputFnResult> {
    return XY(s, line.x, Values(line.y)).Shuffle(64).Repeat().Batch(16);
  };
  ASSERT_TRUE(reg.Train(input, {.max_steps = 600}).ok());
  auto eval = reg.Evaluate([&](const Scope& s) -> StatusOr<est::InputFnResult> {
    return XY(s, line.x, Values(line.y)).Batch(41);
  });
  ASSERT_TRUE(eval.ok()) << eval.status();
  // From the variance of y (4/3 over [-1, 1]) to nearly nothing.
  EXPECT_LT((*eval)["average_loss"], 0.01);
}

TEST(EstimatorTest, LinearClassifierSeparatesBySign) {
  Line line(40);
  est::LinearClassifierOptions o;
  o.feature_columns = {fc::NumericColumn("x")};
  est::LinearClassifier clf(o, Quiet());  // FTRL, TensorFlow's default
  ASSERT_TRUE(clf.Train(
                     [&](const Scope& s) -> StatusOr<est::InputFnResult> {
                       return XY(s, line.x, Values(line.positive)).Shuffle(64).Repeat().Batch(10);
                     },
                     {.steps = 300})
                  .ok());
  auto eval = clf.Evaluate([&](const Scope& s) -> StatusOr<est::InputFnResult> {
    return XY(s, line.x, Values(line.positive)).Batch(40);
  });
  ASSERT_TRUE(eval.ok()) << eval.status();
  EXPECT_EQ((*eval)["accuracy"], 1.0);
  EXPECT_EQ((*eval)["label/mean"], 0.5);
  auto pred = clf.Predict(
      [&](const Scope& s) -> StatusOr<est::InputFnResult> {
        return data::Dataset::FromTensorSlices(s, std::map<std::string, Input>{{"x", Values<float>({-0.9f, 0.9f})}})
            .Batch(2);
      },
      {.predict_keys = {"class_ids", "probabilities"}});
  ASSERT_TRUE(pred.ok()) << pred.status();
  ASSERT_EQ(pred->size(), 2u);
  EXPECT_EQ((*pred)[0].size(), 2u);  // only the keys asked for
  EXPECT_EQ((*pred)[0]["class_ids"].flat<int64_t>()[0], 0);
  EXPECT_EQ((*pred)[1]["class_ids"].flat<int64_t>()[0], 1);
  EXPECT_GT((*pred)[1]["probabilities"].flat<float>()[1], 0.8f);
}

TEST(EstimatorTest, DNNClassifierPredictionsAgreeWithTheirLogits) {
  // Three classes by the value of x: below -1/3, between, above 1/3.
  std::vector<float> x;
  std::vector<int64_t> label;
  for (int i = 0; i < 60; ++i) {
    x.push_back(-1.0f + 2.0f * static_cast<float>(i) / 59.0f);
    label.push_back(x.back() < -0.34f ? 0 : x.back() > 0.34f ? 2 : 1);
  }
  est::DNNClassifierOptions o;
  o.feature_columns = {fc::NumericColumn("x")};
  o.hidden_units = {16, 16};
  o.n_classes = 3;
  o.optimizer = [] { return std::make_unique<train::AdamOptimizer>(0.05); };
  est::DNNClassifier clf(o, Quiet());
  ASSERT_TRUE(clf.Train(
                     [&](const Scope& s) -> StatusOr<est::InputFnResult> {
                       return XY(s, x, Values(label)).Shuffle(60).Repeat().Batch(20);
                     },
                     {.steps = 500})
                  .ok());
  auto eval = clf.Evaluate([&](const Scope& s) -> StatusOr<est::InputFnResult> {
    return XY(s, x, Values(label)).Batch(60);
  });
  ASSERT_TRUE(eval.ok()) << eval.status();
  EXPECT_GE((*eval)["accuracy"], 0.95);
  for (const char* key : {"accuracy", "average_loss", "loss", "global_step"}) EXPECT_EQ(eval->count(key), 1u) << key;
  auto pred = clf.Predict([&](const Scope& s) -> StatusOr<est::InputFnResult> {
    return data::Dataset::FromTensorSlices(s, std::map<std::string, Input>{{"x", Values<float>({-0.9f, 0.0f, 0.9f})}})
        .Batch(3);
  });
  ASSERT_TRUE(pred.ok()) << pred.status();
  ASSERT_EQ(pred->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    est::Prediction& p = (*pred)[i];
    ASSERT_EQ(p["logits"].shape(), TensorShape({3}));
    auto logits = p["logits"].flat<float>();
    auto probs = p["probabilities"].flat<float>();
    // Softmax by hand, and the class is the largest logit.
    double m = std::max({logits[0], logits[1], logits[2]}), z = 0;
    for (int k = 0; k < 3; ++k) z += std::exp(logits[k] - m);
    int64_t best = 0;
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(probs[k], std::exp(logits[k] - m) / z, 1e-5);
      if (logits[k] > logits[best]) best = k;
    }
    EXPECT_EQ(p["class_ids"].flat<int64_t>()[0], best);
    EXPECT_EQ(best, i);
  }
}

// A model function with one variable and an eval metric of the labels alone, so that what
// evaluation reads is known exactly.
est::ModelFn MeanOfLabelsModel() {
  return [](const Scope& s, const fc::Features& f, const Output& labels, est::ModeKeys mode,
            const est::Params&) -> StatusOr<est::EstimatorSpec> {
    Variable w = Variable::Create(s.WithOpName("w"), TensorShape({}), DT_FLOAT, init::Zeros());
    est::EstimatorSpec spec;
    spec.mode = mode;
    Output x = f.at("x");
    spec.predictions["y"] = ops::Mul(s, x, w.read());
    if (mode != est::ModeKeys::kPredict) {
      spec.loss = ops::Mean(s, ops::Square(s, ops::Sub(s, spec.predictions["y"], labels)), {0});
    }
    if (mode == est::ModeKeys::kTrain) {
      spec.train_op = train::GradientDescentOptimizer(0.1f).Minimize(s, spec.loss, {}, est::GetOrCreateGlobalStep(s));
    }
    if (mode == est::ModeKeys::kEval) spec.eval_metric_ops["label_mean"] = metrics::Mean(s, labels);
    RETURN_IF_ERROR(s.status());
    return spec;
  };
}

TEST(EstimatorTest, EvaluateRunsTheBatchesItIsAskedFor) {
  est::Estimator e(MeanOfLabelsModel(), Quiet());
  auto input = [](const Scope& s) -> StatusOr<est::InputFnResult> {
    return XY(s, {1, 1, 1, 1, 1, 1}, Values<float>({1, 2, 3, 4, 5, 6})).Batch(2);
  };
  // Before any training: a warning, and the initialized model (global step 0).
  auto all = e.Evaluate(input);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_DOUBLE_EQ((*all)["label_mean"], 3.5);
  EXPECT_DOUBLE_EQ((*all)["global_step"], 0);
  // loss: the mean of the batch losses of w = 0: ((1+4)/2 + (9+16)/2 + (25+36)/2) / 3.
  EXPECT_NEAR((*all)["loss"], (2.5 + 12.5 + 30.5) / 3, 1e-5);
  auto two = e.Evaluate(input, {.steps = 2, .name = "two"});
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_DOUBLE_EQ((*two)["label_mean"], 2.5);
  // Both evaluations are in event files, as TensorBoard reads them.
  for (const auto& [dir, mean] : std::vector<std::pair<std::string, double>>{{"eval", 3.5}, {"eval_two", 2.5}}) {
    auto files = Env::Default()->GetChildren(e.model_dir() + "/" + dir);
    ASSERT_TRUE(files.ok() && files->size() == 1u) << dir;
    auto scalars = summary::ReadScalars(e.model_dir() + "/" + dir + "/" + (*files)[0]);
    ASSERT_TRUE(scalars.ok()) << scalars.status();
    std::map<std::string, double> by_tag;
    for (const auto& sc : *scalars) {
      by_tag[sc.tag] = sc.value;
      EXPECT_EQ(sc.step, 0);
    }
    EXPECT_DOUBLE_EQ(by_tag["label_mean"], mean) << dir;
    EXPECT_EQ(by_tag.count("loss"), 1u);
  }
}

TEST(EstimatorTest, TrainingResumesFromModelDir) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  auto input = [](const Scope& s) -> StatusOr<est::InputFnResult> {
    return XY(s, {1, 1}, Values<float>({3, 3})).Repeat().Batch(2);
  };
  std::string first_checkpoint;
  {
    est::Estimator e(MeanOfLabelsModel(), Quiet(dir.path()));
    ASSERT_TRUE(e.Train(input, {.steps = 5}).ok());
    EXPECT_EQ(e.global_step(), 5);
    first_checkpoint = e.LatestCheckpoint().value();
    EXPECT_THAT(first_checkpoint, HasSubstr("model.ckpt-5"));
  }
  // A new estimator (a new process, as far as it knows) continues at step 5.
  est::Estimator e(MeanOfLabelsModel(), Quiet(dir.path()));
  ASSERT_TRUE(e.Train(input, {.steps = 3}).ok());
  EXPECT_EQ(e.global_step(), 8);
  // max_steps already reached: nothing runs.
  ASSERT_TRUE(e.Train(input, {.max_steps = 6}).ok());
  EXPECT_EQ(e.global_step(), 8);
  EXPECT_THAT(e.LatestCheckpoint().value(), HasSubstr("model.ckpt-8"));
  ASSERT_TRUE(e.Train(input, {.max_steps = 10}).ok());
  EXPECT_EQ(e.global_step(), 10);
  // w moves toward 3 by w += 0.1 * 2 * (3 - w) per step: after 10 steps 3 * (1 - 0.8^10).
  auto pred = e.Predict([](const Scope& s) -> StatusOr<est::InputFnResult> {
    return fc::Features{{"x", ops::Const(s, Values<float>({1.0f}))}};
  });
  ASSERT_TRUE(pred.ok()) << pred.status();
  ASSERT_EQ(pred->size(), 1u);
  EXPECT_NEAR((*pred)[0]["y"].scalar<float>(), 3 * (1 - std::pow(0.8, 10)), 1e-5);
  // The older checkpoint, asked for by path, still has step 5.
  auto old = e.Evaluate(input, {.steps = 1, .checkpoint_path = first_checkpoint});
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ((*old)["global_step"], 5);
  auto missing = e.Evaluate(input, {.steps = 1, .checkpoint_path = dir.File("model.ckpt-999")});
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
}

TEST(EstimatorTest, BadCallsAreErrors) {
  est::Estimator e(MeanOfLabelsModel(), Quiet());
  auto input = [](const Scope& s) -> StatusOr<est::InputFnResult> {
    return XY(s, {1, 1}, Values<float>({3, 3})).Repeat().Batch(2);
  };
  Status both = e.Train(input, {.steps = 1, .max_steps = 2});
  EXPECT_THAT(both.message(), HasSubstr("Can not provide both steps and max_steps."));
  EXPECT_FALSE(e.Train(input, {.steps = -1}).ok());
  Status tensors = e.Train([](const Scope& s) -> StatusOr<est::InputFnResult> {
    return est::InputFnResult(fc::Features{{"x", ops::Const(s, Values<float>({1.0f}))}},
                              ops::Const(s, Values<float>({1.0f})));
  });
  EXPECT_THAT(tensors.message(), HasSubstr("give steps or max_steps"));
  Status two_labels = e.Train(
      [](const Scope& s) -> StatusOr<est::InputFnResult> {
        return data::Dataset::Zip({XY(s, {1}, Values<float>({1})),
                                   data::Dataset::FromTensorSlices(s, {Values<float>({2})})});
      },
      {.steps = 1});
  EXPECT_THAT(two_labels.message(), HasSubstr("2 unnamed components"));
  Status no_features = e.Train(
      [](const Scope& s) -> StatusOr<est::InputFnResult> {
        return data::Dataset::FromTensorSlices(s, {Values<float>({1})});
      },
      {.steps = 1});
  EXPECT_THAT(no_features.message(), HasSubstr("no named components"));
  Status failing_input =
      e.Train([](const Scope&) -> StatusOr<est::InputFnResult> { return errors::NotFound("no data"); }, {.steps = 1});
  EXPECT_TRUE(absl::IsNotFound(failing_input));
  EXPECT_FALSE(e.Train(nullptr, {.steps = 1}).ok());
  auto forever = e.Predict(input, {.max_examples = 7});
  EXPECT_THAT(forever.status().message(), HasSubstr("more than 7 examples"));
  auto bad_key = e.Predict(input, {.predict_keys = {"nope"}});
  EXPECT_THAT(bad_key.status().message(), HasSubstr("Expected to run at least one output from [y], provided nope"));
  // A model function that fails to build: its error comes back.
  est::Estimator broken([](const Scope&, const fc::Features&, const Output&, est::ModeKeys,
                           const est::Params&) -> StatusOr<est::EstimatorSpec> {
    return errors::InvalidArgument("broken model");
  });
  EXPECT_THAT(broken.Train(input, {.steps = 1}).message(), HasSubstr("broken model"));
  est::Estimator empty(nullptr);
  EXPECT_THAT(empty.Train(input, {.steps = 1}).message(), HasSubstr("model_fn is empty"));
  // A canned estimator with bad options.
  est::DNNClassifierOptions o;
  o.feature_columns = {fc::NumericColumn("x")};
  o.hidden_units = {0};
  o.n_classes = 3;
  est::DNNClassifier bad(o, Quiet());
  EXPECT_THAT(bad.Train(input, {.steps = 1}).message(), HasSubstr("hidden_units[0] must be positive"));
  // A NaN loss ends training.
  Status nan = e.Train(
      [](const Scope& s) -> StatusOr<est::InputFnResult> {
        return XY(s, {1}, Values<float>({std::nanf("")})).Repeat().Batch(1);
      },
      {.steps = 3});
  EXPECT_THAT(nan.message(), HasSubstr("NaN loss during training."));
}

TEST(EstimatorTest, ProgressLines) {
  est::RunConfig c = Quiet();
  c.log_step_count_steps = 4;
  std::vector<std::string> lines;
  c.log = [&](const std::string& l) { lines.push_back(l); };
  est::Estimator e(MeanOfLabelsModel(), c);
  ASSERT_TRUE(e.Train([](const Scope& s)
                          -> StatusOr<est::InputFnResult> { return XY(s, {1}, Values<float>({3})).Repeat().Batch(1); },
                      {.steps = 10})
                  .ok());
  ASSERT_EQ(lines.size(), 4u) << ::testing::PrintToString(lines);
  EXPECT_EQ(lines[0], "step 1: loss = 9");  // (3 - 0)^2 before the first update
  EXPECT_THAT(lines[1], ::testing::MatchesRegex(R"(step 5: loss = [0-9.e-]+ \([0-9.]+ steps/sec\))"));
  EXPECT_THAT(lines[2], ::testing::StartsWith("step 9: loss = "));
  EXPECT_THAT(lines[3], ::testing::StartsWith("Loss for final step: "));
}

TEST(RunConfigTest, FromFlagsTfConfigOrNothing) {
  std::vector<std::string> rest;
  auto flags = est::RunConfig::FromArgs({"--ps_hosts=127.0.0.1:1", "--worker_hosts=127.0.0.1:2,127.0.0.1:3",
                                         "--job_name=worker", "--task_index=1", "--steps=3"},
                                        "", &rest);
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_TRUE(flags->distributed());
  EXPECT_FALSE(flags->is_chief());
  EXPECT_EQ(flags->task_type(), "worker");
  EXPECT_EQ(flags->task_id(), 1);
  EXPECT_EQ(flags->num_ps_replicas(), 1);
  EXPECT_EQ(flags->num_worker_replicas(), 2);
  EXPECT_EQ(rest, std::vector<std::string>{"--steps=3"});
  auto tf = est::RunConfig::FromArgs(
      {}, R"({"cluster": {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"], "ps": ["127.0.0.1:3"]},
              "task": {"type": "chief", "index": 0}})",
      nullptr);
  ASSERT_TRUE(tf.ok()) << tf.status();
  EXPECT_TRUE(tf->is_chief());
  EXPECT_EQ(tf->task_type(), "chief");
  EXPECT_EQ(tf->num_worker_replicas(), 2);
  auto local = est::RunConfig::FromArgs({"--other"}, "", &rest);
  ASSERT_TRUE(local.ok());
  EXPECT_FALSE(local->distributed());
  EXPECT_TRUE(local->is_chief());
  EXPECT_EQ(local->num_worker_replicas(), 1);
  auto bad = est::RunConfig::FromArgs({}, R"({"cluster": {"worker": ["x"]}, "task": {"type": "worker", "index": 0}})",
                                      nullptr);
  EXPECT_FALSE(bad.ok());
  auto bad_flag = est::RunConfig::FromArgs({"--job_name=boss", "--worker_hosts=127.0.0.1:2"}, "", nullptr);
  EXPECT_FALSE(bad_flag.ok());
  // Only a ps task serves: a worker's config is refused before any server is made.
  Status not_ps = est::RunParameterServer(*flags);
  EXPECT_EQ(not_ps.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(not_ps.message(), ::testing::HasSubstr("'worker' task"));
}

TEST(TrainAndEvaluateTest, LocallyTrainsThenEvaluates) {
  est::Estimator e(MeanOfLabelsModel(), Quiet());
  est::TrainSpec ts{.input_fn = [](const Scope& s) -> StatusOr<est::InputFnResult> {
                      return XY(s, {1}, Values<float>({3})).Repeat().Batch(1);
                    },
                    .max_steps = 7};
  est::EvalSpec es{.input_fn = [](const Scope& s) -> StatusOr<est::InputFnResult> {
    return XY(s, {1, 1}, Values<float>({3, 5})).Batch(2);
  }};
  auto r = est::TrainAndEvaluate(e, ts, es);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)["global_step"], 7);
  EXPECT_EQ((*r)["label_mean"], 4);
}

TEST(TrainAndEvaluateTest, TheEvaluatorReadsTheChiefsCheckpoints) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  auto train_input = [](const Scope& s) -> StatusOr<est::InputFnResult> {
    return XY(s, {1}, Values<float>({3})).Repeat().Batch(1);
  };
  est::TrainSpec ts{.input_fn = train_input, .max_steps = 12};
  est::EvalSpec es{.input_fn = [](const Scope& s) -> StatusOr<est::InputFnResult> {
                     return XY(s, {1}, Values<float>({3})).Batch(1);
                   },
                   .throttle_secs = 0,
                   .checkpoint_timeout_secs = 30};
  est::RunConfig ec = Quiet(dir.path());
  ec.task =
      ParseTfConfig(R"({"cluster": {"chief": ["127.0.0.1:1"]}, "task": {"type": "evaluator", "index": 0}})").value();
  est::Estimator evaluator(MeanOfLabelsModel(), ec);
  StatusOr<est::EvalResult> result;
  std::thread eval_thread([&] { result = est::TrainAndEvaluate(evaluator, ts, es); });
  // The "chief" writes checkpoints at steps 4, 8 and 12 (the last at the end).
  est::RunConfig cc = Quiet(dir.path());
  cc.save_checkpoints_steps = 4;
  est::Estimator chief(MeanOfLabelsModel(), cc);
  ASSERT_TRUE(chief.Train(train_input, {.max_steps = 12}).ok());
  eval_thread.join();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ((*result)["global_step"], 12);
  // Without a model_dir the evaluator cannot find the chief.
  est::RunConfig no_dir = ec;
  no_dir.model_dir.clear();
  est::Estimator lost(MeanOfLabelsModel(), no_dir);
  EXPECT_THAT(est::TrainAndEvaluate(lost, ts, es).status().message(), HasSubstr("needs RunConfig::model_dir"));
}

TEST(TrainAndEvaluateTest, InProcessClusterOfAPsAndAChief) {
  std::vector<int> ports = PickFreePorts(2).value();
  const std::string ps = "127.0.0.1:" + std::to_string(ports[0]);
  const std::string worker = "127.0.0.1:" + std::to_string(ports[1]);
  auto task = [&](const std::string& job) { return TaskConfigFromFlags(ps, worker, job, 0).value(); };
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  est::RunConfig pc = Quiet(dir.path());
  pc.task = task("ps");
  est::Estimator ps_task(MeanOfLabelsModel(), pc);
  est::RunConfig cc = Quiet(dir.path());
  cc.task = task("worker");
  est::Estimator chief(MeanOfLabelsModel(), cc);
  auto train_input = [](const Scope& s) -> StatusOr<est::InputFnResult> {
    return XY(s, {1}, Values<float>({3})).Repeat().Batch(1);
  };
  est::TrainSpec ts{.input_fn = train_input, .max_steps = 10};
  est::EvalSpec es{.input_fn = train_input};
  StatusOr<est::EvalResult> ps_result;
  std::thread ps_thread([&] { ps_result = est::TrainAndEvaluate(ps_task, ts, es); });
  // The chief trains on the cluster, then tells it the job is complete: the ps task returns.
  auto r = est::TrainAndEvaluate(chief, ts, es);
  ps_thread.join();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(ps_result.ok()) << ps_result.status();
  EXPECT_EQ(chief.global_step(), 10);
  // The checkpoint the chief wrote through the ps task evaluates here.
  auto eval = chief.Evaluate([](const Scope& s) -> StatusOr<est::InputFnResult> {
    return XY(s, {1}, Values<float>({3})).Batch(1);
  });
  ASSERT_TRUE(eval.ok()) << eval.status();
  EXPECT_EQ((*eval)["global_step"], 10);
  // w after 10 steps toward 3 (w += 0.1 * 2 * (3 - w)): loss (3 - w)^2 = (3 * 0.8^10)^2.
  EXPECT_NEAR((*eval)["loss"], std::pow(3 * std::pow(0.8, 10), 2), 1e-4);
}

}  // namespace
}  // namespace dflow
