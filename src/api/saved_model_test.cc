// MetaGraphDefs (ExportMetaGraph / ImportMetaGraph: a run resumed from the .meta alone) and
// SavedModels (SavedModelWriter, LoadSavedModel, RunSignature) on a local session; the
// differential checks against TensorFlow are python/tests/conformance/test_saved_model.py.
#include "dflow/saved_model.h"

#include "absl/strings/match.h"
#include "base/env.h"
#include "base/temp_dir.h"
#include "dflow/dflow.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

struct Model {
  Variable w, b;
  Output step, x, y, loss;
  Operation train_op, init;
};

Model BuildModel(const Scope& root) {
  Model m;
  m.w = Variable::Create(root.WithOpName("w"), {2, 1}, DT_FLOAT,
                         init::Constant(Tensor::FromValues<float>({1, 2}, TensorShape{2, 1}).value()));
  m.b = Variable::Create(root.WithOpName("b"), {1}, DT_FLOAT, init::Constant(0.5f));
  m.step = train::CreateGlobalStep(root);
  m.x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, PartialTensorShape({-1, 2}));
  m.y = ops::Identity(root.WithOpName("y"), ops::Add(root, ops::MatMul(root, m.x, m.w), m.b));
  m.loss = ops::ReduceSum(root, ops::Square(root, m.y), {0, 1});
  m.train_op = train::GradientDescentOptimizer(0.1).Minimize(root, m.loss, {}, m.step);
  m.init = GlobalVariablesInitializer(root);
  return m;
}

Tensor Input2() { return Tensor::FromValues<float>({1, 1, 2, -1}, TensorShape{2, 2}).value(); }

std::vector<float> Values(const Tensor& t) {
  std::vector<float> v(t.data<float>(), t.data<float>() + t.NumElements());
  return v;
}

TEST(MetaGraphTest, ResumesFromTheMetaFileAlone) {
  TempDir dir;
  const std::string prefix = JoinPath(dir.path(), "model.ckpt-1");
  std::vector<float> expected_y;
  {
    Scope root = Scope::NewRootScope();
    Model m = BuildModel(root);
    train::Saver saver(root);
    ASSERT_TRUE(root.ok()) << root.status();
    ClientSession session(root);
    ASSERT_TRUE(session.Run({m.init}).ok());
    ASSERT_TRUE(session.Run({{m.x, Input2()}}, {}, {m.train_op}).ok());
    ASSERT_TRUE(saver.Save(session, prefix).ok());
    train::ExportMetaGraphOptions opts;
    opts.collections["train_op"] = {m.train_op.name()};
    auto meta = train::ExportMetaGraph(root, &saver, opts);
    ASSERT_TRUE(meta.ok()) << meta.status();
    EXPECT_EQ(meta->saver_def().restore_op_name(), saver.restore_op().name());
    EXPECT_EQ(meta->collection_def().at("trainable_variables").bytes_list().value_size(), 2);
    EXPECT_EQ(meta->collection_def().at("variables").bytes_list().value_size(), 3);
    std::vector<std::string> op_names;
    for (const auto& op : meta->meta_info_def().stripped_op_list().op()) op_names.push_back(op.name());
    EXPECT_TRUE(std::is_sorted(op_names.begin(), op_names.end()));
    EXPECT_NE(std::find(op_names.begin(), op_names.end(), "VariableV2"), op_names.end());
    EXPECT_NE(std::find(op_names.begin(), op_names.end(), "RestoreV2"), op_names.end());
    ASSERT_TRUE(train::WriteMetaGraph(*meta, prefix + ".meta").ok());
    // One more step here: the resumed run must take the same one.
    ASSERT_TRUE(session.Run({{m.x, Input2()}}, {}, {m.train_op}).ok());
    auto y = session.Run({{m.x, Input2()}}, {m.y});
    ASSERT_TRUE(y.ok());
    expected_y = Values((*y)[0]);
  }
  auto meta = train::ReadMetaGraph(prefix + ".meta");
  ASSERT_TRUE(meta.ok()) << meta.status();
  auto imported = train::ImportMetaGraph(*meta);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->collections.at("trainable_variables"), (std::vector<std::string>{"w:0", "b:0"}));
  SessionOptions options;
  options.default_container = "meta_graph_test";  // not the variables of other tests' graphs
  auto session = NewSession(options);
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE(imported->RestoreFrom(session->get(), prefix).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE((*session)->Run({{"x", Input2()}}, {}, {imported->collections.at("train_op")[0]}, &out).ok());
  ASSERT_TRUE((*session)->Run({{"x", Input2()}}, {"y:0", "global_step:0"}, {}, &out).ok());
  EXPECT_EQ(Values(out[0]), expected_y);
  EXPECT_EQ(out[1].data<int64_t>()[0], 2);
  ASSERT_TRUE(imported->SaveTo(session->get(), JoinPath(dir.path(), "model.ckpt-2")).ok());
  EXPECT_TRUE(train::CheckpointExists(JoinPath(dir.path(), "model.ckpt-2")));
  // Text format reads back too; garbage is InvalidArgument.
  ASSERT_TRUE(train::WriteMetaGraph(*meta, JoinPath(dir.path(), "m.pbtxt"), /*as_text=*/true).ok());
  EXPECT_TRUE(train::ReadMetaGraph(JoinPath(dir.path(), "m.pbtxt")).ok());
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(JoinPath(dir.path(), "junk"), "\x93 not a proto {").ok());
  EXPECT_TRUE(absl::IsInvalidArgument(train::ReadMetaGraph(JoinPath(dir.path(), "junk")).status()));
}

TEST(SavedModelTest, WritesLoadsAndRunsASignature) {
  TempDir dir;
  const std::string export_dir = JoinPath(dir.path(), "export");
  const std::string asset_src = JoinPath(dir.path(), "vocab.txt");
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(asset_src, "a\nb\n").ok());
  std::vector<float> expected_y;
  {
    Scope root = Scope::NewRootScope();
    Model m = BuildModel(root);
    Output asset = ops::Const(root.WithOpName("asset_path"), std::string(asset_src));
    Output asset_out = ops::Identity(root.WithOpName("asset_out"), asset);
    train::Saver saver(root, {.sharded = true});
    ASSERT_TRUE(root.ok()) << root.status();
    ClientSession session(root);
    ASSERT_TRUE(session.Run({m.init}).ok());
    ASSERT_TRUE(session.Run({{m.x, Input2()}}, {}, {m.train_op}).ok());
    auto y = session.Run({{m.x, Input2()}}, {m.y});
    ASSERT_TRUE(y.ok());
    expected_y = Values((*y)[0]);
    SavedModelWriter writer;
    SavedModelWriter::Options opts;
    opts.asset_files = {asset_src};
    opts.asset_tensors = {asset.name()};
    auto sig = BuildSignatureDef({{"x", m.x}}, {{"y", m.y}, {"asset", asset_out}});
    EXPECT_EQ(sig.inputs().at("x").tensor_shape().dim(0).size(), -1);
    ASSERT_TRUE(writer
                    .AddMetaGraphAndVariables(root, session, saver, {kSavedModelTagServe},
                                              {{kDefaultServingSignatureDefKey, sig}}, opts)
                    .ok());
    ASSERT_TRUE(writer.Save(export_dir).ok());
    EXPECT_TRUE(absl::IsFailedPrecondition(writer.Save(export_dir)));  // not empty now
  }
  EXPECT_TRUE(MaybeSavedModelDirectory(export_dir));
  EXPECT_TRUE(Env::Default()->FileExists(JoinPath(export_dir, "variables/variables.index")));
  EXPECT_TRUE(Env::Default()->FileExists(JoinPath(export_dir, "variables/variables.data-00000-of-00001")));
  EXPECT_TRUE(Env::Default()->FileExists(JoinPath(export_dir, "assets/vocab.txt")));
  EXPECT_FALSE(Env::Default()->FileExists(JoinPath(export_dir, "variables/variables.meta")));
  auto bundle = LoadSavedModel(SessionOptions(), RunOptions(), export_dir, {kSavedModelTagServe});
  ASSERT_TRUE(bundle.ok()) << bundle.status();
  std::vector<std::string> keys;
  auto out = RunSignature(*bundle, kDefaultServingSignatureDefKey, {{"x", Input2()}}, {}, &keys);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(keys, (std::vector<std::string>{"asset", "y"}));
  EXPECT_EQ(Values((*out)[1]), expected_y);
  // The errors name what is there.
  auto no_tag = LoadSavedModel(SessionOptions(), RunOptions(), export_dir, {"train"});
  ASSERT_FALSE(no_tag.ok());
  EXPECT_TRUE(absl::StrContains(no_tag.status().message(), "[serve]")) << no_tag.status();
  auto no_sig = RunSignature(*bundle, "predict", {{"x", Input2()}});
  ASSERT_FALSE(no_sig.ok());
  EXPECT_TRUE(absl::StrContains(no_sig.status().message(), "[serving_default]")) << no_sig.status();
  auto no_input = RunSignature(*bundle, kDefaultServingSignatureDefKey, {{"z", Input2()}});
  EXPECT_TRUE(absl::StrContains(no_input.status().message(), "its inputs: [x]")) << no_input.status();
  EXPECT_TRUE(absl::IsNotFound(ReadSavedModel(dir.path()).status()));
}

}  // namespace
}  // namespace dflow
