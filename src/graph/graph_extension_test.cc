// ExtendGraphDef: the GraphDef-extension path both sessions take.
#include "graph/graph_extension.h"

#include <string>

#include "graph/function_library.h"
#include "graph/graph_def.h"
#include "graph/graph_test_fixture.h"
#include "gtest/gtest.h"
#include "proto/graph.pb.h"

namespace dflow {
namespace {

using namespace graph_testing;  // NOLINT

class GraphExtensionTest : public GraphTest {
 protected:
  static proto::NodeDef Identity(const std::string& name, const std::string& input) {
    proto::NodeDef n;
    n.set_name(name);
    n.set_op("Identity");
    n.add_input(input);
    return n;
  }
};

TEST_F(GraphExtensionTest, AppendsNodesFunctionsAndVersions) {
  Node* x = Placeholder("x", DT_FLOAT, PartialTensorShape({2}));
  Node* y = Add(Unary("y", "Identity", x));
  ASSERT_NE(y, nullptr);
  proto::FunctionDef fdef;
  ASSERT_TRUE(GraphToFunctionDef(g_, "f", {x}, {{y, 0}}, &fdef).ok());
  proto::GraphDef first;
  ExportGraphDef(g_, &first);
  *first.mutable_library()->add_function() = fdef;
  const int producer = first.versions().producer();

  proto::GraphDef def;
  StatusOr<std::unique_ptr<Graph>> g = ExtendGraphDef(first, &def);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->num_nodes(), 2);
  EXPECT_EQ(def.node_size(), 2);
  EXPECT_EQ(def.library().function_size(), 1);
  EXPECT_NE((*g)->library().Find("f"), nullptr);
  EXPECT_EQ(def.versions().producer(), producer);

  // A second extension reads the first one's nodes; the function sent again collapses into one;
  // versions not given are kept.
  proto::GraphDef second;
  *second.add_node() = Identity("z", "y");
  *second.mutable_library()->add_function() = fdef;
  g = ExtendGraphDef(second, &def);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->num_nodes(), 3);
  Node* z = (*g)->FindNode("z");
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->data_inputs()[0]->src->name(), "y");
  EXPECT_EQ(def.node_size(), 3);
  EXPECT_EQ(def.node(2).name(), "z");
  EXPECT_EQ(def.library().function_size(), 1);
  EXPECT_EQ(def.versions().producer(), producer);

  // Versions given replace the kept ones.
  proto::GraphDef third;
  *third.add_node() = Identity("w", "z");
  third.mutable_versions()->set_producer(producer - 1);
  g = ExtendGraphDef(third, &def);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->num_nodes(), 4);
  EXPECT_EQ(def.versions().producer(), producer - 1);
}

TEST_F(GraphExtensionTest, NoGraphDefToExtendImportsTheDeltaAsItIs) {
  Node* x = Placeholder("x", DT_FLOAT, PartialTensorShape({2}));
  Node* y = Add(Unary("y", "Identity", x));
  ASSERT_NE(y, nullptr);
  proto::FunctionDef fdef;
  ASSERT_TRUE(GraphToFunctionDef(g_, "f", {x}, {{y, 0}}, &fdef).ok());
  proto::GraphDef first;
  ExportGraphDef(g_, &first);
  *first.mutable_library()->add_function() = fdef;
  *first.mutable_library()->add_function() = fdef;
  StatusOr<std::unique_ptr<Graph>> g = ExtendGraphDef(first, nullptr);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->num_nodes(), 2);
  ASSERT_NE((*g)->FindNode("y"), nullptr);
  EXPECT_EQ((*g)->FindNode("y")->data_inputs()[0]->src->name(), "x");
  proto::FunctionDefLibrary library;
  (*g)->library().ToProto(&library);
  EXPECT_EQ(library.function_size(), 1);

  proto::GraphDef bad;
  *bad.add_node() = Identity("a", "nowhere");
  EXPECT_EQ(ExtendGraphDef(bad, nullptr).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(GraphExtensionTest, ErrorsAreImportErrors) {
  proto::GraphDef def;
  *def.add_node() = Identity("a", "nowhere");
  proto::GraphDef base;
  StatusOr<std::unique_ptr<Graph>> g = ExtendGraphDef(def, &base);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(g.status().message(), "'nowhere'")) << g.status();

  // A node name the graph has already.
  Node* x = Placeholder("x", DT_FLOAT);
  ASSERT_NE(x, nullptr);
  ExportGraphDef(g_, &base);
  proto::GraphDef again;
  *again.add_node() = base.node(0);
  g = ExtendGraphDef(again, &base);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(g.status().message(), "'x'")) << g.status();
}

}  // namespace
}  // namespace dflow
