// Graph building: AddNode validation, names, static shapes, edges.
#include "graph/graph.h"
#include "graph/graph_test_fixture.h"

#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "framework/device.h"
#include "framework/op_def.h"
#include "framework/shape_inference.h"
#include "graph/placer.h"
#include "graph/subgraph.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

using namespace graph_testing;  // NOLINT

// ---- AddNode ----

TEST_F(GraphTest, TypeAttrIsInferredFromInputs) {
  Node* a = ConstF("a", {1, 2}, TensorShape{2});
  Node* b = ConstF("b", {3, 4}, TensorShape{2});
  Node* add = Add(Binary("add", "AddV2", a, b));
  ASSERT_NE(add, nullptr);
  const DType* t = add->attrs().at("T").get_if<DType>();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(*t, DT_FLOAT);
  EXPECT_EQ(add->num_inputs(), 2);
  EXPECT_EQ(add->input_type(0), DT_FLOAT);
  EXPECT_EQ(add->input_type(1), DT_FLOAT);
  EXPECT_EQ(add->num_outputs(), 1);
  EXPECT_EQ(add->output_type(0), DT_FLOAT);
  EXPECT_EQ(add->output_shape(0).DebugString(), "[2]");
  EXPECT_EQ(add->op(), "AddV2");
  EXPECT_EQ(add->op_def().name, "AddV2");
  EXPECT_EQ(add->name(), "add");
  EXPECT_EQ(add->graph(), &g_);
  EXPECT_FALSE(add->IsStateful());

  Node* i = Const("i", Tensor(int32_t{3}));
  Node* id = Add(Unary("id", "Identity", i));
  ASSERT_NE(id, nullptr);
  EXPECT_EQ(*id->attrs().at("T").get_if<DType>(), DT_INT32);
  EXPECT_EQ(id->output_type(0), DT_INT32);
}

TEST_F(GraphTest, DefaultsAreFilledIn) {
  Node* a = ConstF("a", {1, 2, 3, 4}, TensorShape{2, 2});
  Node* mm = Add(Binary("mm", "MatMul", a, a));
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->attrs().at("transpose_a"), AttrValue(false));
  EXPECT_EQ(mm->attrs().at("transpose_b"), AttrValue(false));
  EXPECT_EQ(mm->attrs().at("T"), AttrValue(DT_FLOAT));

  NodeSpec p;
  p.name = "p";
  p.op = "Placeholder";
  p.attrs["dtype"] = DT_FLOAT;
  Node* ph = Add(std::move(p));
  ASSERT_NE(ph, nullptr);
  ASSERT_TRUE(ph->attrs().count("shape"));
  EXPECT_TRUE(ph->attrs().at("shape").get_if<PartialTensorShape>()->unknown_rank());
  EXPECT_TRUE(ph->output_shape(0).unknown_rank());

  Node* shape = Const("shape", MakeTensor<int32_t>({4}, TensorShape{1}));
  Node* r = Add(Binary("r", "Reshape", a, shape));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->attrs().at("Tshape"), AttrValue(DT_INT32));
}

TEST_F(GraphTest, InternalAttrsAreKept) {
  Node* a = ConstF("a", {1}, TensorShape{1});
  NodeSpec s = Unary("id", "Identity", a);
  s.attrs["_class"] = std::vector<std::string>{"loc:@a"};
  Node* id = Add(std::move(s));
  ASSERT_NE(id, nullptr);
  EXPECT_EQ(id->attrs().at("_class"), AttrValue(std::vector<std::string>{"loc:@a"}));
}

TEST_F(GraphTest, UnknownAttrIsInvalidArgumentNamingIt) {
  Node* a = ConstF("a", {1}, TensorShape{1});
  NodeSpec s = Binary("add", "AddV2", a, a);
  s.attrs["bogus_attr"] = 1;
  ExpectAddFails(std::move(s), absl::StatusCode::kInvalidArgument, {"bogus_attr", "add", "AddV2"});
}

TEST_F(GraphTest, AttrOfWrongKindIsInvalidArgument) {
  Node* a = ConstF("a", {1, 2, 3, 4}, TensorShape{2, 2});
  NodeSpec s = Binary("mm", "MatMul", a, a);
  s.attrs["transpose_a"] = 1;  // an int, not a bool
  ExpectAddFails(std::move(s), absl::StatusCode::kInvalidArgument, {"transpose_a", "mm"});

  NodeSpec p;
  p.name = "p";
  p.op = "Placeholder";
  p.attrs["dtype"] = "float";  // a string, not a type
  ExpectAddFails(std::move(p), absl::StatusCode::kInvalidArgument, {"dtype", "p"});
}

TEST_F(GraphTest, MissingRequiredAttrIsInvalidArgument) {
  NodeSpec p;
  p.name = "p";
  p.op = "Placeholder";
  ExpectAddFails(std::move(p), absl::StatusCode::kInvalidArgument, {"dtype", "p", "Placeholder"});
}

TEST_F(GraphTest, TypeOutsideAllowedListIsInvalidArgument) {
  Node* a = Const("a", MakeTensor<uint8_t>({1, 2, 3, 4}, TensorShape{2, 2}));
  ExpectAddFails(Binary("mm", "MatMul", a, a), absl::StatusCode::kInvalidArgument, {"mm", "uint8"});
}

TEST_F(GraphTest, DtypeMismatchBetweenInputsNamesTheOp) {
  Node* f = ConstF("f", {1}, TensorShape{1});
  Node* i = Const("i", MakeTensor<int32_t>({1}, TensorShape{1}));
  ExpectAddFails(Binary("add", "AddV2", f, i), absl::StatusCode::kInvalidArgument, {"AddV2", "add", "float", "int32"});
  // An explicit type attr that disagrees with the input.
  NodeSpec s = Unary("id", "Identity", f);
  s.attrs["T"] = DT_INT32;
  ExpectAddFails(std::move(s), absl::StatusCode::kInvalidArgument, {"Identity", "id"});
}

TEST_F(GraphTest, WrongNumberOfInputs) {
  Node* a = ConstF("a", {1}, TensorShape{1});
  ExpectAddFails(Unary("one", "AddV2", a), absl::StatusCode::kInvalidArgument, {"one", "AddV2"});
  NodeSpec three = Binary("three", "AddV2", a, a);
  three.inputs.push_back({a, 0});
  ExpectAddFails(std::move(three), absl::StatusCode::kInvalidArgument, {"three", "AddV2"});
  ExpectAddFails(Unary("noop", "NoOp", a), absl::StatusCode::kInvalidArgument, {"noop", "NoOp"});
  NodeSpec none;
  none.name = "none";
  none.op = "Identity";
  ExpectAddFails(std::move(none), absl::StatusCode::kInvalidArgument, {"none", "Identity"});
}

TEST_F(GraphTest, BadInputReferences) {
  Node* a = ConstF("a", {1}, TensorShape{1});
  NodeSpec out_of_range;
  out_of_range.name = "oor";
  out_of_range.op = "Identity";
  out_of_range.inputs = {{a, 1}};
  ExpectAddFails(std::move(out_of_range), absl::StatusCode::kInvalidArgument, {"oor", "a"});

  NodeSpec negative;
  negative.name = "neg";
  negative.op = "Identity";
  negative.inputs = {{a, -1}};
  ExpectAddFails(std::move(negative), absl::StatusCode::kInvalidArgument, {"neg"});

  NodeSpec null_input;
  null_input.name = "null";
  null_input.op = "Identity";
  null_input.inputs = {{nullptr, 0}};
  ExpectAddFails(std::move(null_input), absl::StatusCode::kInvalidArgument, {"null"});

  NodeSpec null_control;
  null_control.name = "nullctl";
  null_control.op = "NoOp";
  null_control.control_inputs = {nullptr};
  ExpectAddFails(std::move(null_control), absl::StatusCode::kInvalidArgument, {"nullctl"});
}

TEST_F(GraphTest, InputFromAnotherGraphIsRejected) {
  Graph other;
  NodeSpec c;
  c.name = "foreign";
  c.op = "Const";
  c.attrs["dtype"] = DT_FLOAT;
  c.attrs["value"] = Tensor(1.0f);
  StatusOr<Node*> foreign = other.AddNode(std::move(c));
  ASSERT_TRUE(foreign.ok()) << foreign.status();

  // A node whose input lives in another graph would leave an edge to a node this graph does not
  // own (and ids that index past this graph's nodes).
  ExpectAddFails(Unary("id", "Identity", *foreign), absl::StatusCode::kInvalidArgument, {"id"});

  NodeSpec ctl;
  ctl.name = "ctl";
  ctl.op = "NoOp";
  ctl.control_inputs = {*foreign};
  ExpectAddFails(std::move(ctl), absl::StatusCode::kInvalidArgument, {"ctl"});

  Node* mine = Add([] {
    NodeSpec s;
    s.name = "mine";
    s.op = "NoOp";
    return s;
  }());
  ASSERT_NE(mine, nullptr);
  EXPECT_EQ(g_.AddControlEdge(*foreign, mine).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(mine->control_inputs().empty());
}

TEST_F(GraphTest, BadNodeNames) {
  for (const char* bad : {"", "a b", "-x", "_x", "a:b", "/a", "a^", "^a", "a\n"}) {
    NodeSpec s;
    s.name = bad;
    s.op = "NoOp";
    StatusOr<Node*> n = g_.AddNode(std::move(s));
    ASSERT_FALSE(n.ok()) << "'" << bad << "' accepted";
    EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(g_.num_nodes(), 0);
  for (const char* good : {"a", "a/b", "a.b", "1a", ".a", "A-b_c/d.e", "x_1"}) {
    NodeSpec s;
    s.name = good;
    s.op = "NoOp";
    EXPECT_NE(Add(std::move(s)), nullptr) << good;
  }
}

TEST_F(GraphTest, DuplicateNameIsInvalidArgument) {
  ConstF("a", {1}, TensorShape{1});
  NodeSpec s;
  s.name = "a";
  s.op = "NoOp";
  const int before = g_.num_nodes();
  StatusOr<Node*> n = g_.AddNode(std::move(s));
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(n.status().message(), "'a'")) << n.status();
  EXPECT_EQ(g_.num_nodes(), before);
  EXPECT_EQ(g_.FindNode("a")->op(), "Const");
}

TEST_F(GraphTest, UnknownOpIsNotFound) {
  NodeSpec s;
  s.name = "x";
  s.op = "NoSuchOpAnywhere";
  ExpectAddFails(std::move(s), absl::StatusCode::kNotFound, {"NoSuchOpAnywhere", "x", "Op type not registered"});
}

TEST_F(GraphTest, BadRequestedDeviceIsInvalidArgument) {
  NodeSpec s;
  s.name = "x";
  s.op = "NoOp";
  s.device = "job:ps";
  ExpectAddFails(std::move(s), absl::StatusCode::kInvalidArgument, {"x", "job:ps"});
}

TEST_F(GraphTest, RefInputs) {
  Node* v = Variable("v", DT_FLOAT, PartialTensorShape{2});
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->output_type(0), DT_FLOAT_REF);
  EXPECT_TRUE(v->IsStateful());
  EXPECT_EQ(v->output_shape(0).DebugString(), "[2]");
  Node* init = ConstF("init", {1, 2}, TensorShape{2});

  Node* assign = Add(Binary("assign", "Assign", v, init));
  ASSERT_NE(assign, nullptr);
  EXPECT_EQ(assign->input_type(0), DT_FLOAT_REF);
  EXPECT_EQ(assign->input_type(1), DT_FLOAT);
  EXPECT_EQ(assign->output_type(0), DT_FLOAT_REF);
  EXPECT_EQ(*assign->attrs().at("T").get_if<DType>(), DT_FLOAT);  // the base type

  Node* add_to = Add(Binary("assign_add", "AssignAdd", v, init));
  ASSERT_NE(add_to, nullptr);
  EXPECT_EQ(add_to->output_type(0), DT_FLOAT_REF);

  // A ref may feed a value input: reading a variable.
  Node* sum = Add(Binary("sum", "AddV2", v, init));
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->input_type(0), DT_FLOAT);
  EXPECT_EQ(sum->output_type(0), DT_FLOAT);
  Node* read = Add(Unary("read", "Identity", v));
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->output_type(0), DT_FLOAT);

  // A value may not feed a Ref input.
  ExpectAddFails(Binary("bad_assign", "Assign", init, init), absl::StatusCode::kInvalidArgument,
                 {"bad_assign", "init"});
  ExpectAddFails(Binary("bad_add", "AssignAdd", sum, init), absl::StatusCode::kInvalidArgument, {"bad_add"});
  // Nor a variable of another type.
  Node* i = Const("i", MakeTensor<int32_t>({1, 2}, TensorShape{2}));
  ExpectAddFails(Binary("bad_type", "Assign", v, i), absl::StatusCode::kInvalidArgument, {"bad_type", "int32"});
}

TEST_F(GraphTest, ShapeFunctionErrorNamesNodeAndInputShapes) {
  Node* a = ConstF("a", {1, 2, 3, 4, 5, 6}, TensorShape{2, 3});
  Node* b = ConstF("b", {1, 2, 3, 4, 5, 6}, TensorShape{2, 3});
  ExpectAddFails(Binary("mm", "MatMul", a, b), absl::StatusCode::kInvalidArgument, {"'mm'", "MatMul", "[2,3]"});

  Node* c = ConstF("c", {1, 2}, TensorShape{2});
  Node* d = ConstF("d", {1, 2, 3}, TensorShape{3});
  ExpectAddFails(Binary("add", "AddV2", c, d), absl::StatusCode::kInvalidArgument, {"'add'", "[2]", "[3]"});

  Node* bad_shape = Const("bad_shape", MakeTensor<int32_t>({4, 4}, TensorShape{2}));
  ExpectAddFails(Binary("r", "Reshape", a, bad_shape), absl::StatusCode::kInvalidArgument, {"'r'", "[2,3]"});

  // Const whose value disagrees with its dtype.
  NodeSpec s;
  s.name = "k";
  s.op = "Const";
  s.attrs["dtype"] = DT_INT32;
  s.attrs["value"] = Tensor(1.0f);
  ExpectAddFails(std::move(s), absl::StatusCode::kInvalidArgument, {"'k'"});
}

TEST_F(GraphTest, StaticShapesAreInferred) {
  Node* a = ConstF("a", {1, 2, 3, 4, 5, 6}, TensorShape{2, 3});
  EXPECT_EQ(a->output_shape(0).DebugString(), "[2,3]");
  ASSERT_NE(a->const_value(), nullptr);
  EXPECT_EQ(a->const_value()->shape(), (TensorShape{2, 3}));

  Node* shape = Const("shape", MakeTensor<int32_t>({3, 2}, TensorShape{2}));
  Node* r = Add(Binary("r", "Reshape", a, shape));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->output_shape(0).DebugString(), "[3,2]");

  Node* shape2 = Const("shape2", MakeTensor<int64_t>({-1, 2}, TensorShape{2}));
  Node* r2 = Add(Binary("r2", "Reshape", a, shape2));
  ASSERT_NE(r2, nullptr);
  EXPECT_EQ(r2->output_shape(0).DebugString(), "[3,2]");
  EXPECT_EQ(r2->attrs().at("Tshape"), AttrValue(DT_INT64));

  // A shape known only by its length.
  Node* dyn = Placeholder("dyn", DT_INT32, PartialTensorShape{3});
  Node* r3 = Add(Binary("r3", "Reshape", a, dyn));
  ASSERT_NE(r3, nullptr);
  EXPECT_EQ(r3->output_shape(0).DebugString(), "[?,?,?]");

  Node* m = ConstF("m", std::vector<float>(12, 1.0f), TensorShape{3, 4});
  Node* mm = Add(Binary("mm", "MatMul", a, m));
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->output_shape(0).DebugString(), "[2,4]");

  Node* p = Placeholder("p", DT_FLOAT, PartialTensorShape{-1, 3});
  EXPECT_EQ(p->output_shape(0).DebugString(), "[?,3]");
  Node* row = ConstF("row", {1, 2, 3}, TensorShape{3});
  Node* add = Add(Binary("add", "AddV2", p, row));
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->output_shape(0).DebugString(), "[?,3]");
  Node* id = Add(Unary("id", "Identity", add));
  ASSERT_NE(id, nullptr);
  EXPECT_EQ(id->output_shape(0).DebugString(), "[?,3]");

  Node* unknown = Placeholder("unknown", DT_FLOAT);
  Node* mul = Add(Binary("mul", "Mul", unknown, row));
  ASSERT_NE(mul, nullptr);
  EXPECT_TRUE(mul->output_shape(0).unknown_rank());

  EXPECT_EQ(add->const_value(), nullptr);
}

TEST_F(GraphTest, VariableLengthInputs) {
  Node* a = ConstF("a", {1}, TensorShape{1});
  NodeSpec s;
  s.name = "sum";
  s.op = "GraphTestSum";
  s.inputs = {{a, 0}, {a, 0}, {a, 0}};
  Node* sum = Add(std::move(s));
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->attrs().at("N"), AttrValue(3));
  EXPECT_EQ(sum->num_inputs(), 3);

  NodeSpec too_few;
  too_few.name = "too_few";
  too_few.op = "GraphTestSum";
  too_few.attrs["N"] = 5;
  too_few.inputs = {{a, 0}, {a, 0}, {a, 0}};
  ExpectAddFails(std::move(too_few), absl::StatusCode::kInvalidArgument, {"too_few"});

  NodeSpec too_many;
  too_many.name = "too_many";
  too_many.op = "GraphTestSum";
  too_many.attrs["N"] = 2;
  too_many.inputs = {{a, 0}, {a, 0}, {a, 0}};
  ExpectAddFails(std::move(too_many), absl::StatusCode::kInvalidArgument, {"too_many"});

  NodeSpec empty;
  empty.name = "empty_sum";
  empty.op = "GraphTestSum";
  empty.attrs["T"] = DT_FLOAT;
  ExpectAddFails(std::move(empty), absl::StatusCode::kInvalidArgument, {"empty_sum", "N"});

  NodeSpec list;
  list.name = "list";
  list.op = "GraphTestListIdentity";
  Node* i = Const("i", Tensor(int32_t{1}));
  list.inputs = {{a, 0}, {i, 0}};
  Node* l = Add(std::move(list));
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->num_outputs(), 2);
  EXPECT_EQ(l->output_type(0), DT_FLOAT);
  EXPECT_EQ(l->output_type(1), DT_INT32);
  EXPECT_EQ(l->attrs().at("T"), AttrValue(std::vector<DType>{DT_FLOAT, DT_INT32}));
}

TEST_F(GraphTest, EmptyTypeListOutputDoesNotCrash) {
  // list(type) with no minimum may be empty; the node then has no inputs and no outputs. Run in
  // a child process so that a crash fails this test only.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Graph g;
        NodeSpec s;
        s.name = "empty_list";
        s.op = "GraphTestListIdentity";
        StatusOr<Node*> n = g.AddNode(std::move(s));
        bool good = n.ok() && (*n)->num_outputs() == 0 && (*n)->num_inputs() == 0;
        std::exit(good ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(GraphTest, EdgesAndControlEdges) {
  Node* a = ConstF("a", {1}, TensorShape{1});
  Node* b = ConstF("b", {2}, TensorShape{1});
  Node* add = Add(Binary("add", "AddV2", a, b));
  NodeSpec ns;
  ns.name = "after";
  ns.op = "NoOp";
  ns.control_inputs = {add, add};  // duplicates collapse
  Node* after = Add(std::move(ns));
  ASSERT_NE(after, nullptr);

  ASSERT_EQ(add->data_inputs().size(), 2u);
  EXPECT_EQ(add->data_inputs()[0]->src, a);
  EXPECT_EQ(add->data_inputs()[0]->dst_input, 0);
  EXPECT_EQ(add->data_inputs()[1]->src, b);
  EXPECT_EQ(add->data_inputs()[1]->dst_input, 1);
  EXPECT_FALSE(add->data_inputs()[0]->IsControlEdge());
  EXPECT_EQ(a->out_edges().size(), 1u);
  ASSERT_EQ(after->control_inputs().size(), 1u);
  EXPECT_TRUE(after->control_inputs()[0]->IsControlEdge());
  EXPECT_EQ(after->control_inputs()[0]->src, add);
  EXPECT_EQ(after->num_outputs(), 0);

  ASSERT_TRUE(g_.AddControlEdge(a, after).ok());
  ASSERT_TRUE(g_.AddControlEdge(a, after).ok());  // idempotent
  EXPECT_EQ(after->control_inputs().size(), 2u);
  EXPECT_EQ(g_.AddControlEdge(nullptr, after).code(), absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(g_.num_nodes(), 4);
  std::vector<Node*> nodes = g_.nodes();
  ASSERT_EQ(nodes.size(), 4u);
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_EQ(nodes[i]->id(), static_cast<int>(i));
    EXPECT_EQ(g_.node(nodes[i]->id()), nodes[i]);
  }
  EXPECT_EQ(g_.FindNode("add"), add);
  EXPECT_EQ(g_.FindNode("nope"), nullptr);
}

TEST_F(GraphTest, GraphIdsAndDestructionCallbacks) {
  bool destroyed = false;
  uint64_t id1, id2;
  {
    Graph g1, g2;
    id1 = g1.id();
    id2 = g2.id();
    g1.AddDestructionCallback([&destroyed] { destroyed = true; });
    EXPECT_FALSE(destroyed);
  }
  EXPECT_TRUE(destroyed);
  EXPECT_NE(id1, id2);
  EXPECT_NE(id1, g_.id());
}

TEST_F(GraphTest, UniqueNameSequence) {
  EXPECT_EQ(g_.UniqueName("Add"), "Add");
  NodeSpec first;
  first.name = "Add";
  first.op = "NoOp";
  ASSERT_NE(Add(std::move(first)), nullptr);
  NodeSpec explicit_one;
  explicit_one.name = "Add_1";
  explicit_one.op = "NoOp";
  ASSERT_NE(Add(std::move(explicit_one)), nullptr);
  std::string next = g_.UniqueName("Add");
  EXPECT_EQ(next, "Add_2");  // "Add_1" is taken
  NodeSpec second;
  second.name = next;
  second.op = "NoOp";
  ASSERT_NE(Add(std::move(second)), nullptr);
  EXPECT_EQ(g_.UniqueName("Add"), "Add_3");
  EXPECT_EQ(g_.UniqueName("Mul"), "Mul");
}

TEST_F(GraphTest, UniqueNameOfAnExplicitlyUsedName) {
  NodeSpec s;
  s.name = "x";
  s.op = "NoOp";
  ASSERT_NE(Add(std::move(s)), nullptr);
  EXPECT_TRUE(g_.IsNameUsed("x"));
  EXPECT_FALSE(g_.IsNameUsed("y"));
  EXPECT_EQ(g_.UniqueName("x"), "x_1");
  EXPECT_EQ(g_.UniqueName("x"), "x_2");  // handed-out names are not handed out again
}

TEST(ParseTensorNameTest, Cases) {
  absl::string_view node;
  int index = -7;
  bool control = true;
  ASSERT_TRUE(ParseTensorName("a", &node, &index, &control));
  EXPECT_EQ(node, "a");
  EXPECT_EQ(index, 0);
  EXPECT_FALSE(control);

  ASSERT_TRUE(ParseTensorName("scope/a:1", &node, &index, &control));
  EXPECT_EQ(node, "scope/a");
  EXPECT_EQ(index, 1);
  EXPECT_FALSE(control);

  ASSERT_TRUE(ParseTensorName("a:12", &node, &index, &control));
  EXPECT_EQ(index, 12);

  ASSERT_TRUE(ParseTensorName("^a", &node, &index, &control));
  EXPECT_EQ(node, "a");
  EXPECT_TRUE(control);
  EXPECT_EQ(index, 0);

  for (const char* bad : {"", "^", ":", "a:", "a:x", "a:-1", ":0", "a b", "a:1:2", "^a:1", "-a"}) {
    EXPECT_FALSE(ParseTensorName(bad, &node, &index, &control)) << "'" << bad << "'";
  }
}

TEST(IsValidNodeNameTest, Cases) {
  EXPECT_TRUE(IsValidNodeName("a"));
  EXPECT_TRUE(IsValidNodeName("A1.b-c_d/e"));
  EXPECT_TRUE(IsValidNodeName(".x"));
  EXPECT_TRUE(IsValidNodeName("9"));
  EXPECT_FALSE(IsValidNodeName(""));
  EXPECT_FALSE(IsValidNodeName("_a"));
  EXPECT_FALSE(IsValidNodeName("-a"));
  EXPECT_FALSE(IsValidNodeName("/a"));
  EXPECT_FALSE(IsValidNodeName("a b"));
  EXPECT_FALSE(IsValidNodeName("a:0"));
}

// RemoveNode takes the node and its edges out; its consumers' inputs become missing until
// UpdateInput fills them, and its name is free again.
TEST_F(GraphTest, RemoveNodeDetachesItsEdges) {
  Node* a = ConstF("a", {1}, TensorShape{1});
  Node* b = ConstF("b", {2}, TensorShape{1});
  Node* sum = Add(Binary("sum", "AddV2", a, b));
  Node* neg = Add(Unary("neg", "Neg", sum));
  NodeSpec wait;
  wait.name = "wait";
  wait.op = "NoOp";
  wait.control_inputs = {sum, a};
  Node* waiter = Add(std::move(wait));
  const int before = g_.num_nodes();
  const int sum_id = sum->id();

  ASSERT_TRUE(g_.RemoveNode(sum).ok());
  EXPECT_EQ(g_.num_nodes(), before - 1);
  EXPECT_EQ(g_.node(sum_id), nullptr);
  EXPECT_EQ(g_.FindNode("sum"), nullptr);
  EXPECT_FALSE(g_.IsNameUsed("sum"));
  EXPECT_TRUE(a->out_edges().size() == 1 && a->out_edges()[0]->dst == waiter);  // only the control edge
  EXPECT_TRUE(b->out_edges().empty());
  EXPECT_EQ(neg->data_inputs()[0], nullptr);
  ASSERT_EQ(waiter->control_inputs().size(), 1u);
  EXPECT_EQ(waiter->control_inputs()[0]->src, a);
  for (Node* n : g_.nodes()) EXPECT_NE(n->name(), "sum");

  ASSERT_TRUE(g_.UpdateInput(neg, 0, {b, 0}).ok());
  EXPECT_EQ(neg->data_inputs()[0]->src, b);
  // The name can be used again, by a node with a new id.
  Node* again = Add(Binary("sum", "AddV2", a, b));
  ASSERT_NE(again, nullptr);
  EXPECT_NE(again->id(), sum_id);
  // Only a live node of this graph can be removed.
  EXPECT_EQ(g_.RemoveNode(nullptr).code(), absl::StatusCode::kInvalidArgument);
  Graph other;
  EXPECT_EQ(other.RemoveNode(a).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dflow
