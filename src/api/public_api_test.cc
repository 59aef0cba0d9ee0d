// The public headers that have no internal twin: dflow/graph_def.h (GraphDef files, import into
// and export from a Scope, a session from a GraphDef) and dflow/checkpoint_reader.h (a V2
// checkpoint's variables and values). Only the public API is used, besides TempDir.
#include <algorithm>
#include <string>
#include <vector>

#include "base/temp_dir.h"
#include "dflow/checkpoint_reader.h"
#include "dflow/dflow.h"
#include "dflow/graph_def.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> NodeNames(const proto::GraphDef& def) {
  std::vector<std::string> names;
  for (const auto& n : def.node()) names.push_back(n.name());
  std::sort(names.begin(), names.end());
  return names;
}

// y = 2x + 1 on a float placeholder x.
Scope AffineScope() {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  ops::Add(root.WithOpName("y"), ops::Mul(root.WithOpName("two_x"), x, 2.0f), 1.0f);
  return root;
}

TEST(PublicGraphDefTest, ExportWriteReadAndRun) {
  Scope root = AffineScope();
  ASSERT_TRUE(root.ok()) << root.status();
  StatusOr<proto::GraphDef> def = ExportGraphDef(root);
  ASSERT_TRUE(def.ok()) << def.status();
  std::vector<std::string> names = NodeNames(*def);
  EXPECT_TRUE(std::find(names.begin(), names.end(), "x") != names.end());
  EXPECT_TRUE(std::find(names.begin(), names.end(), "y") != names.end());

  TempDir dir;
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(WriteGraphDef(*def, dir.File("g.pb")).ok());
  StatusOr<proto::GraphDef> back = ReadGraphDef(dir.File("g.pb"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(NodeNames(*back), names);
  StatusOr<proto::GraphDef> parsed = GraphDefFromBytes(def->SerializeAsString());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(NodeNames(*parsed), names);

  StatusOr<std::unique_ptr<Session>> session = NewSessionFromGraphDef(*back);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<Tensor> out;
  Tensor x = Tensor::FromValues<float>({1.0f, 2.5f}, TensorShape{2}).value();
  ASSERT_TRUE((*session)->Run({{"x", x}}, {"y"}, {}, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].dtype(), DT_FLOAT);
  ASSERT_EQ(out[0].NumElements(), 2);
  EXPECT_EQ(out[0].flat<float>()[0], 3.0f);
  EXPECT_EQ(out[0].flat<float>()[1], 6.0f);
  EXPECT_TRUE((*session)->Close().ok());
}

TEST(PublicGraphDefTest, ImportIntoScope) {
  StatusOr<proto::GraphDef> def = ExportGraphDef(AffineScope());
  ASSERT_TRUE(def.ok()) << def.status();
  Scope other = Scope::NewRootScope();
  ASSERT_TRUE(ImportGraphDef(other, *def).ok());
  StatusOr<proto::GraphDef> again = ExportGraphDef(other);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(NodeNames(*again), NodeNames(*def));
  // The scope's graph runs the imported nodes, by name.
  Output one = ops::Add(other, 0.5f, 0.5f);
  ClientSession session(other);
  ASSERT_TRUE(session.Run({one}).ok());  // sends every node of the graph, the imported ones too
  std::vector<Tensor> out;
  ASSERT_TRUE(session.session()->Run({{"x", Tensor(4.0f)}}, {"y"}, {}, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].scalar<float>(), 9.0f);
  // Importing the same nodes again clashes with their names.
  Status twice = ImportGraphDef(other, *def);
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(twice.message()), HasSubstr("already exists"));
}

TEST(PublicGraphDefTest, Errors) {
  StatusOr<proto::GraphDef> bad = GraphDefFromBytes("\xff\xff not a graph");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  TempDir dir;
  StatusOr<proto::GraphDef> missing = ReadGraphDef(dir.File("none.pb"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("none.pb"));
  // A scope with a build error exports that error, not a partial graph.
  Scope root = Scope::NewRootScope();
  ops::Add(root, 1.0f, 2);  // float + int32
  ASSERT_FALSE(root.ok());
  EXPECT_FALSE(ExportGraphDef(root).ok());
  // An unknown op fails the session's Create.
  proto::GraphDef unknown;
  auto* n = unknown.add_node();
  n->set_name("n");
  n->set_op("NoSuchOpAnywhere");
  EXPECT_FALSE(NewSessionFromGraphDef(unknown).ok());
}

TEST(PublicCheckpointReaderTest, ListsAndReadsVariables) {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("w"), {2, 3}, DT_FLOAT, init::Constant(1.5f));
  Variable b = Variable::Create(root.WithOpName("b"), {}, DT_INT64, init::Constant(int64_t{7}));
  train::Saver saver(root);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  TempDir dir;
  StatusOr<std::string> prefix = saver.Save(session, dir.File("model"), 3);
  ASSERT_TRUE(prefix.ok()) << prefix.status();

  StatusOr<std::unique_ptr<train::CheckpointReader>> reader = train::CheckpointReader::Open(*prefix);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->prefix(), *prefix);
  StatusOr<std::vector<train::CheckpointVariable>> vars = (*reader)->ListVariables();
  ASSERT_TRUE(vars.ok()) << vars.status();
  ASSERT_EQ(vars->size(), 2u);
  EXPECT_EQ((*vars)[0].name, "b");
  EXPECT_EQ((*vars)[0].dtype, DT_INT64);
  EXPECT_EQ((*vars)[0].shape, TensorShape({}));
  EXPECT_EQ((*vars)[1].name, "w");
  EXPECT_EQ((*vars)[1].dtype, DT_FLOAT);
  EXPECT_EQ((*vars)[1].shape, TensorShape({2, 3}));
  EXPECT_TRUE((*reader)->Has("w"));
  EXPECT_FALSE((*reader)->Has("v"));

  StatusOr<Tensor> wv = (*reader)->Read("w");
  ASSERT_TRUE(wv.ok()) << wv.status();
  ASSERT_EQ(wv->NumElements(), 6);
  for (float v : wv->flat<float>()) EXPECT_EQ(v, 1.5f);
  StatusOr<Tensor> bv = (*reader)->Read("b");
  ASSERT_TRUE(bv.ok()) << bv.status();
  EXPECT_EQ(bv->scalar<int64_t>(), 7);

  StatusOr<train::CheckpointVariable> none = (*reader)->Describe("v");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ((*reader)->Read("v").status().code(), absl::StatusCode::kNotFound);
}

TEST(PublicCheckpointReaderTest, MissingCheckpoint) {
  TempDir dir;
  auto reader = train::CheckpointReader::Open(dir.File("model-1"));
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace dflow
