// Function libraries: a body graph to TensorFlow's FunctionDef format and back, names of
// multi-output ops ("node:out_arg:index"), and malformed functions.
#include "graph/function_library.h"

#include "gmock/gmock.h"
#include "graph/graph_def.h"
#include "graph/graph_test_fixture.h"
#include "gtest/gtest.h"
#include "proto/graph.pb.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

class FunctionLibraryTest : public graph_testing::GraphTest {};

TEST_F(FunctionLibraryTest, RoundTripNamesOutputsByArgument) {
  ASSERT_NE(OpRegistry::Global()->LookUp("Split"), nullptr) << "Split is not registered";
  Node* x = Placeholder("x", DT_FLOAT, PartialTensorShape({4}));
  Node* dim = Const("dim", Tensor(int32_t{0}));
  Node* split = Add({"split", "Split", {{dim, 0}, {x, 0}}, {}, {{"num_split", int64_t{2}}}, ""});
  Node* sum = Add({"sum", "AddV2", {{split, 0}, {split, 1}}, {}, {}, ""});
  ASSERT_NE(sum, nullptr);
  proto::FunctionDef fdef;
  Status made = GraphToFunctionDef(g_, "f", {x}, {{sum, 0}, {split, 1}}, &fdef);
  ASSERT_TRUE(made.ok()) << made;
  EXPECT_EQ(fdef.signature().name(), "f");
  ASSERT_EQ(fdef.signature().input_arg_size(), 1);
  EXPECT_EQ(fdef.signature().input_arg(0).name(), "arg0");
  EXPECT_EQ(fdef.ret().at("output0"), "sum:z:0");
  EXPECT_EQ(fdef.ret().at("output1"), "split:output:1");
  for (const auto& n : fdef.node_def()) {
    if (n.name() == "sum") {
      EXPECT_EQ(n.input(0), "split:output:0");
      EXPECT_EQ(n.input(1), "split:output:1");
    }
    if (n.name() == "split") EXPECT_EQ(n.input(1), "arg0");
  }
  proto::GraphDef def;
  ASSERT_TRUE(FunctionDefToGraphDef(fdef, &def).ok());
  Graph back;
  Status s = ImportGraphDef(def, &back);
  ASSERT_TRUE(s.ok()) << s;
  Node* ret1 = back.FindNode("output1_retval");
  ASSERT_NE(ret1, nullptr);
  EXPECT_EQ(ret1->data_inputs()[0]->src->name(), "split");
  EXPECT_EQ(ret1->data_inputs()[0]->src_output, 1);
  EXPECT_EQ(back.FindNode("arg0")->op(), "_Arg");
}

TEST_F(FunctionLibraryTest, BadReferencesAndDuplicates) {
  proto::FunctionDef fdef;
  fdef.mutable_signature()->set_name("g");
  auto* out = fdef.mutable_signature()->add_output_arg();
  out->set_name("output0");
  out->set_type(proto::DT_FLOAT);
  (*fdef.mutable_ret())["output0"] = "nowhere:y:0";
  proto::GraphDef def;
  Status s = FunctionDefToGraphDef(fdef, &def);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("nowhere:y:0"));
  FunctionLibraryDefinition lib;
  ASSERT_TRUE(lib.Add(fdef).ok());
  EXPECT_TRUE(lib.Add(fdef).ok());  // the same again is fine
  (*fdef.mutable_ret())["output0"] = "elsewhere:y:0";
  s = lib.Add(fdef);
  EXPECT_THAT(std::string(s.message()), HasSubstr("defined twice"));
  fdef.mutable_ret()->clear();
  FunctionLibraryDefinition other;
  EXPECT_THAT(std::string(other.Add(fdef).message()), HasSubstr("no ret entry"));
  fdef.mutable_signature()->set_name("bad name!");
  EXPECT_THAT(std::string(other.Add(fdef).message()), HasSubstr("invalid"));
  EXPECT_EQ(lib.UniqueName("g"), "g_1");
}

// Names as TensorFlow writes them (tf.function: "__inference_f_50"), of [A-Za-z0-9_.-/<>].
TEST_F(FunctionLibraryTest, TensorFlowFunctionNames) {
  proto::FunctionDef fdef;
  for (auto* args : {fdef.mutable_signature()->mutable_input_arg(), fdef.mutable_signature()->mutable_output_arg()}) {
    auto* a = args->Add();
    a->set_name(args == fdef.mutable_signature()->mutable_input_arg() ? "arg0" : "output0");
    a->set_type(proto::DT_FLOAT);
  }
  (*fdef.mutable_ret())["output0"] = "arg0";
  for (const char* name : {"__inference_f_50", "a.b-c/d<e>", "_f"}) {
    fdef.mutable_signature()->set_name(name);
    FunctionLibraryDefinition lib;
    Status s = lib.Add(fdef);
    EXPECT_TRUE(s.ok()) << name << ": " << s;
  }
  for (const char* name : {"", "a b", "f!", "f:0"}) {
    fdef.mutable_signature()->set_name(name);
    FunctionLibraryDefinition lib;
    EXPECT_THAT(std::string(lib.Add(fdef).message()), HasSubstr("invalid")) << name;
  }
}

}  // namespace
}  // namespace dflow
