// Estimator::ExportSavedModel: a trained canned classifier exported with a raw receiver loads
// with LoadSavedModel, and its "predict" signature gives Predict's probabilities; the errors.
// (The parsing receiver and TensorFlow loading the export: conformance/test_saved_model.py.)
#include "base/env.h"
#include "base/temp_dir.h"
#include "dflow/dflow.h"
#include "dflow/estimator.h"
#include "dflow/saved_model.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

namespace est = estimator;
namespace fc = feature_column;

Tensor Floats(const std::vector<float>& v) {
  return Tensor::FromValues<float>(v, TensorShape({static_cast<int64_t>(v.size())})).value();
}

TEST(ExportSavedModelTest, ClassifierExportRunsThroughItsPredictSignature) {
  TempDir dir;
  std::vector<float> x;
  std::vector<int32_t> label;
  for (int i = 0; i < 40; ++i) {
    x.push_back(-1.0f + 2.0f * static_cast<float>(i) / 39.0f);
    label.push_back(x.back() > 0 ? 1 : 0);
  }
  est::DNNClassifierOptions o;
  o.feature_columns = {fc::NumericColumn("x")};
  o.hidden_units = {4};
  est::RunConfig config;
  config.model_dir = dir.File("model");
  config.tf_random_seed = 7;
  config.log_step_count_steps = 0;
  est::DNNClassifier clf(o, config);
  est::ServingInputReceiverFn raw = [](const Scope& s) -> StatusOr<est::ServingInputReceiver> {
    Output x = ops::Placeholder(s.WithOpName("x"), DT_FLOAT, PartialTensorShape({-1}));
    return est::ServingInputReceiver{{{"x", x}}, {{"x", x}}};
  };
  // Nothing trained yet: nothing to export.
  EXPECT_TRUE(absl::IsFailedPrecondition(clf.ExportSavedModel(dir.File("export"), raw).status()));
  ASSERT_TRUE(clf.Train(
                     [&](const Scope& s) -> StatusOr<est::InputFnResult> {
                       return data::Dataset::Zip(
                                  {data::Dataset::FromTensorSlices(s, std::map<std::string, Input>{{"x", Floats(x)}}),
                                   data::Dataset::FromTensorSlices(s,
                                                                   {Tensor::FromValues<int32_t>(label, {40}).value()})})
                           .Repeat()
                           .Batch(10);
                     },
                     {.steps = 20})
                  .ok());
  auto path = clf.ExportSavedModel(dir.File("export"), raw);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(DirName(*path), dir.File("export"));
  auto pred = clf.Predict([&](const Scope& s) -> StatusOr<est::InputFnResult> {
    return data::Dataset::FromTensorSlices(s, std::map<std::string, Input>{{"x", Floats({-0.5f, 0.25f})}}).Batch(2);
  });
  ASSERT_TRUE(pred.ok()) << pred.status();
  auto bundle = LoadSavedModel(SessionOptions(), RunOptions(), *path, {kSavedModelTagServe});
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  // A raw receiver: no classify signature (it takes serialized examples), only "predict".
  EXPECT_EQ(bundle->signatures.size(), 1u);
  EXPECT_EQ(bundle->signatures.at("predict").method_name(), kPredictMethodName);
  auto out = RunSignature(*bundle, "predict", {{"x", Floats({-0.5f, 0.25f})}}, {"probabilities"});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int i = 0; i < 2; ++i) {
    for (int c = 0; c < 2; ++c) {
      EXPECT_FLOAT_EQ((*out)[0].flat<float>()[2 * i + c], (*pred)[i]["probabilities"].flat<float>()[c]);
    }
  }
  // A second export goes to a directory of its own.
  auto second = clf.ExportSavedModel(dir.File("export"), raw);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(*second, *path);
}

}  // namespace
}  // namespace dflow
