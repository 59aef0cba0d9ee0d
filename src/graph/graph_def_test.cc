#include "graph/graph_def.h"

#include <iostream>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "base/env.h"
#include "framework/shape_inference.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/stubs/logging.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"
#include "proto/attr_value.pb.h"
#include "proto/graph.pb.h"
#include "proto/tensor.pb.h"
#include "proto/tensor_shape.pb.h"
#include "tensor/tensor_proto.h"

namespace dflow {
namespace {

const char kDevice[] = "/job:localhost/replica:0/task:0/device:CPU:0";

Status TestPairShape(InferenceContext* c) {
  c->set_output(0, c->input(0));
  c->set_output(1, c->input(0));
  return absl::OkStatus();
}

// Test-only ops: the math ops are registered elsewhere, and these cover multi-output nodes and
// every attr kind.
void RegisterTestOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterAllOps();
    RegisterOp(OpDefBuilder("GraphDefTestAdd")
                   .Input("x: T")
                   .Input("y: T")
                   .Output("z: T")
                   .Attr("T: {float, double, int32, int64}")
                   .SetShapeFn(BroadcastBinaryShape));
    RegisterOp(OpDefBuilder("GraphDefTestPair")
                   .Input("x: T")
                   .Output("a: T")
                   .Output("b: T")
                   .Attr("T: type")
                   .SetShapeFn(TestPairShape));
    RegisterOp(OpDefBuilder("GraphDefTestAttrs")
                   .Attr("s: string")
                   .Attr("i: int")
                   .Attr("f: float")
                   .Attr("b: bool")
                   .Attr("t: type")
                   .Attr("sh: shape")
                   .Attr("tn: tensor")
                   .Attr("ls: list(string)")
                   .Attr("li: list(int)")
                   .Attr("lf: list(float)")
                   .Attr("lb: list(bool)")
                   .Attr("lt: list(type)")
                   .Attr("lsh: list(shape)")
                   .Attr("ltn: list(tensor)")
                   .Attr("empty: list(int) = []")
                   .Attr("dflt: int = 7")
                   .SetShapeFn(NoOutputs));
    RegisterOp(
        OpDefBuilder("GraphDefTestSplit").Input("x: T").Output("out: N * T").Attr("N: int >= 1").Attr("T: type"));
  });
}

class GraphDefTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterTestOps(); }

  Node* Add(Graph* g, NodeSpec spec) {
    auto n = g->AddNode(std::move(spec));
    EXPECT_TRUE(n.ok()) << n.status();
    return n.ok() ? *n : nullptr;
  }

  // A graph with data, control and multi-output edges, a reference edge, devices and attrs of
  // every kind.
  void BuildSample(Graph* g) {
    auto value = Tensor::FromValues<float>({1, 2, 3, 4}, TensorShape{2, 2});
    ASSERT_TRUE(value.ok());
    Node* c = Add(g, {"c", "Const", {}, {}, {{"value", *value}, {"dtype", DT_FLOAT}}, kDevice});
    Node* p =
        Add(g, {"scope/p", "Placeholder", {}, {}, {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape({2, -1})}}, ""});
    Node* pair = Add(g, {"pair", "GraphDefTestPair", {{c, 0}}, {}, {}, ""});
    Node* sum = Add(g, {"sum", "GraphDefTestAdd", {{pair, 1}, {p, 0}}, {}, {}, ""});
    Node* v = Add(g, {"v",
                      "VariableV2",
                      {},
                      {},
                      {{"shape", PartialTensorShape({2, 2})}, {"dtype", DT_FLOAT}},
                      "/job:ps/replica:0/task:0/device:CPU:0"});
    Node* assign = Add(g, {"assign", "Assign", {{v, 0}, {sum, 0}}, {}, {}, ""});
    auto strs = Tensor::FromValues<std::string>({"x", "yz"}, TensorShape{2});
    ASSERT_TRUE(strs.ok());
    AttrMap attrs = {
        {"s", std::string("text\0bytes", 10)},
        {"i", int64_t{-5}},
        {"f", 2.5f},
        {"b", true},
        {"t", DT_INT64},
        {"sh", PartialTensorShape::UnknownRank()},
        {"tn", *strs},
        {"ls", std::vector<std::string>{"a", "b"}},
        {"li", std::vector<int64_t>{1, -2, 3}},
        {"lf", std::vector<float>{0.5f}},
        {"lb", std::vector<bool>{true, false}},
        {"lt", std::vector<DType>{DT_FLOAT, DT_STRING, DT_FLOAT_REF}},
        {"lsh", std::vector<PartialTensorShape>{PartialTensorShape::Scalar(), PartialTensorShape({-1, 3})}},
        {"ltn", std::vector<Tensor>{Tensor(1.0f), Tensor(int64_t{3})}},
        {"_class", std::vector<std::string>{"loc:@v"}},
        {"_internal", int64_t{9}},
    };
    Add(g, {"attrs", "GraphDefTestAttrs", {}, {}, attrs, ""});
    Node* split = Add(g, {"split", "GraphDefTestSplit", {{sum, 0}}, {}, {{"N", int64_t{3}}}, ""});
    Add(g, {"third", "Identity", {{split, 2}}, {}, {}, ""});
    Add(g, {"init", "NoOp", {}, {assign, p}, {}, kDevice});
  }
};

// Proto maps (NodeDef.attr) serialize in a per-process random order unless asked not to; the
// hostile-input test needs the same bytes every run.
std::string DeterministicBytes(const proto::GraphDef& def) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    def.SerializeToCodedStream(&coded);
  }
  return out;
}

// Returns the error of parsing and importing `bytes` into a fresh graph.
Status ParseAndImport(absl::string_view bytes, Graph* g) {
  proto::GraphDef def;
  RETURN_IF_ERROR(ParseGraphDef(bytes, &def));
  return ImportGraphDef(def, g);
}

std::string InputName(const Edge* e) {
  if (e->IsControlEdge()) return absl::StrCat("^", e->src->name());
  return absl::StrCat(e->src->name(), ":", e->src_output);
}

void ExpectSameGraphs(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  for (Node* n : a.nodes()) {
    SCOPED_TRACE(n->name());
    Node* m = b.FindNode(n->name());
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(n->op(), m->op());
    EXPECT_EQ(n->requested_device(), m->requested_device());
    ASSERT_EQ(n->data_inputs().size(), m->data_inputs().size());
    for (size_t i = 0; i < n->data_inputs().size(); ++i) {
      EXPECT_EQ(InputName(n->data_inputs()[i]), InputName(m->data_inputs()[i]));
    }
    std::set<std::string> cn, cm;
    for (const Edge* e : n->control_inputs()) cn.insert(InputName(e));
    for (const Edge* e : m->control_inputs()) cm.insert(InputName(e));
    EXPECT_EQ(cn, cm);
    ASSERT_EQ(n->attrs().size(), m->attrs().size());
    for (const auto& [k, v] : n->attrs()) {
      auto it = m->attrs().find(k);
      ASSERT_NE(it, m->attrs().end()) << k;
      EXPECT_TRUE(v == it->second) << k << ": " << v.DebugString() << " vs " << it->second.DebugString();
    }
    ASSERT_EQ(n->num_outputs(), m->num_outputs());
    for (int i = 0; i < n->num_outputs(); ++i) {
      EXPECT_EQ(n->output_type(i), m->output_type(i));
      EXPECT_EQ(n->output_shape(i), m->output_shape(i));
    }
  }
}

proto::NodeDef* AddNodeDef(proto::GraphDef* def, const std::string& name, const std::string& op,
                           std::vector<std::string> inputs = {}) {
  proto::NodeDef* n = def->add_node();
  n->set_name(name);
  n->set_op(op);
  for (auto& in : inputs) n->add_input(in);
  return n;
}

void SetType(proto::NodeDef* n, const std::string& attr, proto::DataType t) { (*n->mutable_attr())[attr].set_type(t); }

proto::NodeDef* AddPlaceholder(proto::GraphDef* def, const std::string& name, proto::DataType t = proto::DT_FLOAT) {
  proto::NodeDef* n = AddNodeDef(def, name, "Placeholder");
  SetType(n, "dtype", t);
  return n;
}

void ExpectError(const proto::GraphDef& def, absl::StatusCode code, std::vector<std::string> mentions) {
  Graph g;
  Status s = ImportGraphDef(def, &g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), code) << s;
  for (const auto& m : mentions) EXPECT_NE(std::string(s.message()).find(m), std::string::npos) << m << " in " << s;
}

TEST_F(GraphDefTest, ExportImportRoundTrip) {
  Graph g;
  ASSERT_NO_FATAL_FAILURE(BuildSample(&g));
  proto::GraphDef def;
  ExportGraphDef(g, &def);
  EXPECT_GT(def.versions().producer(), 0);
  ASSERT_EQ(def.node_size(), g.num_nodes());

  // The wire form names inputs the TensorFlow way.
  const proto::NodeDef* sum = nullptr;
  const proto::NodeDef* init = nullptr;
  for (const auto& n : def.node()) {
    if (n.name() == "sum") sum = &n;
    if (n.name() == "init") init = &n;
  }
  ASSERT_NE(sum, nullptr);
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(std::vector<std::string>(sum->input().begin(), sum->input().end()),
            (std::vector<std::string>{"pair:1", "scope/p"}));
  EXPECT_EQ(std::vector<std::string>(init->input().begin(), init->input().end()),
            (std::vector<std::string>{"^assign", "^scope/p"}));
  EXPECT_EQ(init->device(), kDevice);
  // Defaults are written too.
  EXPECT_TRUE(sum->attr().count("T"));

  std::string bytes = def.SerializeAsString();
  Graph h;
  Status s = ParseAndImport(bytes, &h);
  ASSERT_TRUE(s.ok()) << s;
  ExpectSameGraphs(g, h);

  // And again: the second export is identical to the first.
  proto::GraphDef def2;
  ExportGraphDef(h, &def2);
  Graph k;
  ASSERT_TRUE(ImportGraphDef(def2, &k).ok());
  ExpectSameGraphs(g, k);
}

TEST_F(GraphDefTest, ExportFromANodeIdAndImportIntoTheSameGraph) {
  Graph g;
  ASSERT_NO_FATAL_FAILURE(BuildSample(&g));
  int first = g.num_node_ids();
  Node* sum = g.FindNode("sum");
  ASSERT_NE(sum, nullptr);
  Add(&g, {"more", "Identity", {{sum, 0}}, {}, {}, ""});
  proto::GraphDef tail;
  ExportGraphDef(g, &tail, first);
  ASSERT_EQ(tail.node_size(), 1);
  EXPECT_EQ(tail.node(0).name(), "more");

  // A graph holding the first part takes the tail, whose input refers to an existing node.
  proto::GraphDef head;
  ExportGraphDef(g, &head);
  head.mutable_node()->RemoveLast();
  Graph h;
  ASSERT_TRUE(ImportGraphDef(head, &h).ok());
  Status s = ImportGraphDef(tail, &h);
  ASSERT_TRUE(s.ok()) << s;
  ExpectSameGraphs(g, h);
  // Importing it twice names an existing node.
  s = ImportGraphDef(tail, &h);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("'more'"), std::string::npos) << s;
}

TEST_F(GraphDefTest, ImportsNodesInAnyOrder) {
  proto::GraphDef def;
  AddNodeDef(&def, "init", "NoOp", {"^sum", "^a"});
  AddNodeDef(&def, "sum", "GraphDefTestAdd", {"a", "b:0"});
  AddPlaceholder(&def, "b");
  AddPlaceholder(&def, "a");
  Graph g;
  Status s = ImportGraphDef(def, &g);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(g.num_nodes(), 4);
  Node* sum = g.FindNode("sum");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->data_inputs()[0]->src->name(), "a");
  EXPECT_EQ(sum->data_inputs()[1]->src->name(), "b");
  EXPECT_EQ(sum->output_type(0), DT_FLOAT);
  EXPECT_EQ(g.FindNode("init")->control_inputs().size(), 2u);
  // Ids follow a topological order.
  for (Node* n : g.nodes()) {
    for (const Edge* e : n->data_inputs()) EXPECT_LT(e->src->id(), n->id());
    for (const Edge* e : n->control_inputs()) EXPECT_LT(e->src->id(), n->id());
  }
}

TEST_F(GraphDefTest, KeepsFileOrderWhenAlreadySorted) {
  proto::GraphDef def;
  AddPlaceholder(&def, "z");
  AddPlaceholder(&def, "a");
  AddNodeDef(&def, "m", "GraphDefTestAdd", {"z", "a"});
  Graph g;
  ASSERT_TRUE(ImportGraphDef(def, &g).ok());
  std::vector<std::string> names;
  for (Node* n : g.nodes()) names.push_back(n->name());
  EXPECT_EQ(names, (std::vector<std::string>{"z", "a", "m"}));
}

TEST_F(GraphDefTest, MissingInputNamesBothNodes) {
  proto::GraphDef def;
  AddPlaceholder(&def, "a");
  AddNodeDef(&def, "sum", "GraphDefTestAdd", {"a", "ghost"});
  ExpectError(def, absl::StatusCode::kInvalidArgument, {"'sum'", "'ghost'"});

  proto::GraphDef ctl;
  AddNodeDef(&ctl, "init", "NoOp", {"^nowhere"});
  ExpectError(ctl, absl::StatusCode::kInvalidArgument, {"'init'", "'nowhere'"});
}

TEST_F(GraphDefTest, CyclesAreRejected) {
  proto::GraphDef def;
  AddPlaceholder(&def, "p");
  AddNodeDef(&def, "x", "GraphDefTestAdd", {"p", "y"});
  AddNodeDef(&def, "y", "Identity", {"x"});
  AddNodeDef(&def, "after", "Identity", {"y"});
  ExpectError(def, absl::StatusCode::kInvalidArgument, {"cycle", "'x'", "'y'"});

  proto::GraphDef self;
  AddNodeDef(&self, "loop", "NoOp", {"^loop"});
  ExpectError(self, absl::StatusCode::kInvalidArgument, {"cycle", "'loop'"});
}

TEST_F(GraphDefTest, UnknownOpIsNotFound) {
  proto::GraphDef def;
  AddNodeDef(&def, "n", "NoSuchOpAnywhere");
  ExpectError(def, absl::StatusCode::kNotFound, {"NoSuchOpAnywhere", "'n'"});
}

TEST_F(GraphDefTest, AttrErrors) {
  {  // An int where a type is declared.
    proto::GraphDef def;
    (*AddNodeDef(&def, "p", "Placeholder")->mutable_attr())["dtype"].set_i(1);
    ExpectError(def, absl::StatusCode::kInvalidArgument, {"'p'", "dtype"});
  }
  {  // A type number dflow does not have.
    proto::GraphDef def;
    SetType(AddNodeDef(&def, "p", "Placeholder"), "dtype", proto::DT_HALF);
    ExpectError(def, absl::StatusCode::kInvalidArgument, {"'p'", "DT_HALF"});
    proto::GraphDef def2;
    SetType(AddNodeDef(&def2, "p", "Placeholder"), "dtype", static_cast<proto::DataType>(77));
    ExpectError(def2, absl::StatusCode::kInvalidArgument, {"'p'", "77"});
  }
  {  // An attr the op does not declare.
    proto::GraphDef def;
    (*AddPlaceholder(&def, "p")->mutable_attr())["bogus"].set_i(1);
    ExpectError(def, absl::StatusCode::kInvalidArgument, {"'p'", "bogus"});
  }
  {  // A required attr left out.
    proto::GraphDef def;
    AddNodeDef(&def, "p", "Placeholder");
    ExpectError(def, absl::StatusCode::kInvalidArgument, {"'p'", "dtype"});
  }
  {  // A bad tensor in a Const.
    proto::GraphDef def;
    proto::NodeDef* c = AddNodeDef(&def, "c", "Const");
    SetType(c, "dtype", proto::DT_FLOAT);
    proto::TensorProto* t = (*c->mutable_attr())["value"].mutable_tensor();
    t->set_dtype(proto::DT_FLOAT);
    t->mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);
    t->add_float_val(1);
    ExpectError(def, absl::StatusCode::kInvalidArgument, {"'c'", "value"});
  }
  {  // Function attrs name a function; polymorphic ones (with attrs of their own) are refused.
    proto::GraphDef def;
    proto::NameAttrList* f = (*AddPlaceholder(&def, "p")->mutable_attr())["_f"].mutable_func();
    f->set_name("f");
    (*f->mutable_attr())["T"].set_type(proto::DT_FLOAT);
    ExpectError(def, absl::StatusCode::kInvalidArgument, {"'p'", "_f", "monomorphic"});
  }
}

TEST_F(GraphDefTest, HugeOutputCountsAreRefused) {
  proto::GraphDef def;
  AddPlaceholder(&def, "p");
  proto::NodeDef* split = AddNodeDef(&def, "split", "GraphDefTestSplit", {"p"});
  (*split->mutable_attr())["N"].set_i(int64_t{1} << 40);
  ExpectError(def, absl::StatusCode::kInvalidArgument, {"'split'", "'N'"});

  (*split->mutable_attr())["N"].set_i(3);
  AddNodeDef(&def, "last", "Identity", {"split:2"});
  Graph g;
  Status s = ImportGraphDef(def, &g);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(g.FindNode("split")->num_outputs(), 3);
}

TEST_F(GraphDefTest, OmittedAttrsTakeDefaults) {
  proto::GraphDef def;
  proto::NodeDef* p = AddPlaceholder(&def, "p", proto::DT_INT32);
  p->set_device("/cpu:0");
  (*p->mutable_attr())["_class"].mutable_list()->add_s("loc:@q");
  Graph g;
  Status s = ImportGraphDef(def, &g);
  ASSERT_TRUE(s.ok()) << s;
  Node* n = g.FindNode("p");
  ASSERT_NE(n, nullptr);
  PartialTensorShape shape({1});
  ASSERT_TRUE(GetAttr(n->attrs(), "shape", &shape).ok());
  EXPECT_TRUE(shape.unknown_rank());
  EXPECT_EQ(n->output_type(0), DT_INT32);
  EXPECT_EQ(n->requested_device(), "/cpu:0");
  std::vector<std::string> cls;
  ASSERT_TRUE(GetAttr(n->attrs(), "_class", &cls).ok());
  EXPECT_EQ(cls, std::vector<std::string>{"loc:@q"});
}

TEST_F(GraphDefTest, MalformedNodeDefs) {
  {
    proto::GraphDef def;
    AddPlaceholder(&def, "a");
    AddPlaceholder(&def, "a");
    ExpectError(def, absl::StatusCode::kInvalidArgument, {"Duplicate", "'a'"});
  }
  {
    proto::GraphDef def;
    AddPlaceholder(&def, "bad name!");
    ExpectError(def, absl::StatusCode::kInvalidArgument, {"'bad name!'"});
  }
  {
    proto::GraphDef def;
    AddPlaceholder(&def, "a");
    AddNodeDef(&def, "i", "Identity", {"a:x"});
    ExpectError(def, absl::StatusCode::kInvalidArgument, {"'i'", "'a:x'"});
  }
  {
    proto::GraphDef def;
    AddPlaceholder(&def, "a");
    AddPlaceholder(&def, "b");
    AddNodeDef(&def, "s", "GraphDefTestAdd", {"a", "^b", "b"});
    ExpectError(def, absl::StatusCode::kInvalidArgument, {"'s'", "control"});
  }
  {  // An output index past the node's outputs.
    proto::GraphDef def;
    AddPlaceholder(&def, "a");
    AddNodeDef(&def, "i", "Identity", {"a:3"});
    ExpectError(def, absl::StatusCode::kInvalidArgument, {"'i'"});
  }
  {  // Too few inputs.
    proto::GraphDef def;
    AddPlaceholder(&def, "a");
    AddNodeDef(&def, "s", "GraphDefTestAdd", {"a"});
    ExpectError(def, absl::StatusCode::kInvalidArgument, {"'s'"});
  }
  {  // A consumer that needs a newer GraphDef version.
    proto::GraphDef def;
    AddPlaceholder(&def, "a");
    def.mutable_versions()->set_min_consumer(1 << 30);
    ExpectError(def, absl::StatusCode::kInvalidArgument, {"version"});
  }
}

TEST_F(GraphDefTest, AttrValueConversions) {
  proto::AttrValue p;
  AttrValue v;
  p.mutable_list();
  ASSERT_TRUE(AttrValueFromProto(p, "list(shape)", &v).ok());
  EXPECT_EQ(v.TypeName(), "list(shape)");
  ASSERT_TRUE(AttrValueFromProto(p, "list(type)", &v).ok());
  EXPECT_EQ(v.TypeName(), "list(type)");
  ASSERT_TRUE(AttrValueFromProto(p, "", &v).ok());
  EXPECT_EQ(v.TypeName(), "list(int)");

  p.mutable_list()->add_i(1);
  p.mutable_list()->add_s("x");
  EXPECT_EQ(AttrValueFromProto(p, "", &v).code(), absl::StatusCode::kInvalidArgument);

  p.Clear();
  p.mutable_list()->add_type(proto::DT_COMPLEX64);
  EXPECT_EQ(AttrValueFromProto(p, "list(type)", &v).code(), absl::StatusCode::kInvalidArgument);

  p.Clear();
  p.set_type(proto::DT_INT32_REF);
  ASSERT_TRUE(AttrValueFromProto(p, "type", &v).ok());
  EXPECT_TRUE(v == AttrValue(DT_INT32_REF));

  p.Clear();
  p.set_placeholder("T");
  EXPECT_EQ(AttrValueFromProto(p, "type", &v).code(), absl::StatusCode::kInvalidArgument);

  // Every kind survives a trip through the proto.
  for (const AttrValue& a :
       {AttrValue("s"), AttrValue(int64_t{1} << 40), AttrValue(-0.25f), AttrValue(false), AttrValue(DT_BOOL),
        AttrValue(PartialTensorShape({3, -1})), AttrValue(Tensor(3.5)), AttrValue(std::vector<std::string>{}),
        AttrValue(std::vector<bool>{false}), AttrValue(std::vector<Tensor>{Tensor(true)})}) {
    proto::AttrValue q;
    AttrValueToProto(a, &q);
    AttrValue back;
    Status s = AttrValueFromProto(q, a.TypeName(), &back);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_TRUE(back == a) << a.DebugString() << " vs " << back.DebugString();
  }
}

TEST_F(GraphDefTest, ListOfHugeFilledTensorsIsRefusedBeforeAllocating) {
  // Each element is under the per-tensor limit; together they are far over the budget.
  proto::AttrValue p;
  for (int i = 0; i < 64; ++i) {
    proto::TensorProto* t = p.mutable_list()->add_tensor();
    t->set_dtype(proto::DT_UINT8);
    t->mutable_tensor_shape()->add_dim()->set_size(kMaxProtoTensorBytes / 2);
  }
  AttrValue v;
  Status s = AttrValueFromProto(p, "list(tensor)", &v);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST_F(GraphDefTest, ReadGraphDefFileErrors) {
  proto::GraphDef def;
  EXPECT_EQ(ReadGraphDefFile("/nonexistent/dflow/graph.pb", &def).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ParseGraphDef("\xff\xff\xff", &def).code(), absl::StatusCode::kInvalidArgument);
}

std::string TestDataPath(const std::string& name) { return std::string(DFLOW_SOURCE_DIR) + "/testdata/tf/" + name; }

std::string ReadTestData(const std::string& name) {
  auto bytes = Env::Default()->ReadFile(TestDataPath(name));
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : std::string();
}

// The ops the GraphDef uses that are not registered ("" when all are).
std::string MissingOps(const proto::GraphDef& def) {
  std::set<std::string> missing;
  for (const auto& n : def.node())
    if (OpRegistry::Global()->LookUp(n.op()) == nullptr) missing.insert(n.op());
  return absl::StrJoin(missing, ", ");
}

TEST_F(GraphDefTest, ParsesTensorFlowFiles) {
  proto::GraphDef def;
  ASSERT_TRUE(ReadGraphDefFile(TestDataPath("rust_addition.pb"), &def).ok());
  EXPECT_EQ(def.node_size(), 3);
  EXPECT_EQ(def.versions().producer(), 1882);
  ASSERT_TRUE(ReadGraphDefFile(TestDataPath("rust_multiplication.pb"), &def).ok());
  EXPECT_EQ(def.node_size(), 3);
  ASSERT_TRUE(ReadGraphDefFile(TestDataPath("rust_regression_train.pb"), &def).ok());
  EXPECT_EQ(def.node_size(), 95);
  ASSERT_TRUE(ReadGraphDefFile(TestDataPath("tf2onnx_regression_frozen.pb"), &def).ok());
  EXPECT_GT(def.node_size(), 0);
}

TEST_F(GraphDefTest, ImportsRustAddition) {
  proto::GraphDef def;
  ASSERT_TRUE(ReadGraphDefFile(TestDataPath("rust_addition.pb"), &def).ok());
  ASSERT_EQ(MissingOps(def), "");
  Graph g;
  Status s = ImportGraphDef(def, &g);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(g.num_nodes(), 3);
  for (const char* name : {"x", "y"}) {
    Node* n = g.FindNode(name);
    ASSERT_NE(n, nullptr) << name;
    EXPECT_EQ(n->op(), "Placeholder");
    EXPECT_EQ(n->output_type(0), DT_INT32);
  }
  Node* z = g.FindNode("z");
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->op(), "AddV2");
  EXPECT_EQ(z->output_type(0), DT_INT32);
  EXPECT_EQ(z->data_inputs()[0]->src->name(), "x");
  EXPECT_EQ(z->data_inputs()[1]->src->name(), "y");
}

TEST_F(GraphDefTest, ImportsRustMultiplication) {
  proto::GraphDef def;
  ASSERT_TRUE(ReadGraphDefFile(TestDataPath("rust_multiplication.pb"), &def).ok());
  ASSERT_EQ(MissingOps(def), "");
  Graph g;
  Status s = ImportGraphDef(def, &g);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(g.num_nodes(), 3);
  for (const char* name : {"a", "b"}) {
    Node* n = g.FindNode(name);
    ASSERT_NE(n, nullptr) << name;
    EXPECT_EQ(n->op(), "Placeholder");
    EXPECT_EQ(n->output_type(0), DT_FLOAT);
  }
  Node* c = g.FindNode("c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->op(), "Mul");
  EXPECT_EQ(c->output_type(0), DT_FLOAT);
}

TEST_F(GraphDefTest, ImportsOtherTensorFlowGraphs) {
  for (const char* file : {"rust_regression_train.pb", "tf2onnx_regression_frozen.pb"}) {
    SCOPED_TRACE(file);
    proto::GraphDef def;
    ASSERT_TRUE(ReadGraphDefFile(TestDataPath(file), &def).ok());
    ASSERT_EQ(MissingOps(def), "");
    Graph g;
    Status s = ImportGraphDef(def, &g);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(g.num_nodes(), def.node_size());
  }
}

// Parses and imports hostile bytes: any status is fine except a crash, and a successful import
// must export and import again.
void ImportHostile(absl::string_view bytes, int* imported) {
  Graph g;
  Status s = ParseAndImport(bytes, &g);
  if (s.ok()) {
    ++*imported;
    proto::GraphDef again;
    ExportGraphDef(g, &again);
    Graph h;
    Status s2 = ParseAndImport(again.SerializeAsString(), &h);
    ASSERT_TRUE(s2.ok()) << s2;
    EXPECT_EQ(h.num_nodes(), g.num_nodes());
    return;
  }
  // Hostile bytes are the caller's fault: never an internal error.
  EXPECT_TRUE(s.code() == absl::StatusCode::kInvalidArgument || s.code() == absl::StatusCode::kNotFound) << s;
}

TEST_F(GraphDefTest, HostileInputsNeverCrash) {
  google::protobuf::LogSilencer quiet;  // invalid UTF-8 in names is logged by the parser
  Graph sample;
  ASSERT_NO_FATAL_FAILURE(BuildSample(&sample));
  proto::GraphDef sample_def;
  ExportGraphDef(sample, &sample_def);
  const std::string sample_bytes = DeterministicBytes(sample_def);
  std::vector<std::string> seeds = {sample_bytes};
  for (const char* f :
       {"rust_addition.pb", "rust_multiplication.pb", "rust_regression_train.pb", "tf2onnx_regression_frozen.pb"}) {
    seeds.push_back(ReadTestData(f));
  }

  int imported = 0, mutants_imported = 0;
  // (a) Every truncation.
  for (const std::string& seed : seeds) {
    for (size_t len = 0; len <= seed.size(); ++len) {
      ASSERT_NO_FATAL_FAILURE(ImportHostile(absl::string_view(seed).substr(0, len), &imported)) << "prefix " << len;
    }
  }
  // (b) Random bytes.
  std::mt19937 rng(20240611);
  for (int i = 0; i < 2000; ++i) {
    std::string bytes(rng() % 300, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    ASSERT_NO_FATAL_FAILURE(ImportHostile(bytes, &imported)) << "random " << i;
  }
  // (c) Single-byte mutations of valid GraphDefs.
  for (const std::string& seed : seeds) {
    for (int i = 0; i < 1500; ++i) {
      std::string bytes = seed;
      size_t pos = rng() % bytes.size();
      switch (rng() % 3) {
        case 0: bytes[pos] = static_cast<char>(rng()); break;
        case 1: bytes[pos] ^= static_cast<char>(1 << (rng() % 8)); break;
        default: bytes[pos] = static_cast<char>(std::vector<int>{0, 1, 0x7f, 0x80, 0xff}[rng() % 5]); break;
      }
      ASSERT_NO_FATAL_FAILURE(ImportHostile(bytes, &mutants_imported)) << "mutation at " << pos;
    }
  }
  // The mutations reach import and its checks, not only the parser.
  std::cout << "[   NOTE   ] imported " << imported << " truncated or random inputs and " << mutants_imported << " of "
            << seeds.size() * 1500 << " mutants\n";
  EXPECT_GT(mutants_imported, 0);
  // Clearly invalid bytes are refused.
  Graph g;
  EXPECT_EQ(ParseAndImport(std::string(16, '\xff'), &g).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow
