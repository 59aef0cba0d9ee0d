// PartitionGraph: _Send/_Recv pairs for data and control edges, their attrs, names, devices,
// one pair per (tensor, destination), loops, and errors.
#include "graph/partition.h"

#include <set>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "graph/graph_builder.h"
#include "graph/graph_def.h"
#include "graph/graph_test_fixture.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using namespace graph_testing;  // NOLINT
using ::testing::HasSubstr;

constexpr char kA[] = "/job:ps/replica:0/task:0/device:CPU:0";
constexpr char kB[] = "/job:worker/replica:0/task:0/device:CPU:0";
constexpr char kC[] = "/job:worker/replica:0/task:1/device:CPU:0";

const proto::NodeDef* Find(const proto::GraphDef& def, const std::string& name) {
  for (const auto& n : def.node())
    if (n.name() == name) return &n;
  return nullptr;
}

std::vector<const proto::NodeDef*> OfOp(const proto::GraphDef& def, const std::string& op) {
  std::vector<const proto::NodeDef*> out;
  for (const auto& n : def.node())
    if (n.op() == op) out.push_back(&n);
  return out;
}

AttrValue Attr(const proto::NodeDef& n, const std::string& name) {
  AttrValue v;
  auto it = n.attr().find(name);
  if (it != n.attr().end()) EXPECT_TRUE(AttrValueFromProto(it->second, "", &v).ok());
  return v;
}

std::vector<std::string> Inputs(const proto::NodeDef& n) { return {n.input().begin(), n.input().end()}; }

class PartitionTest : public GraphTest {
 protected:
  void SetUp() override {
    GraphTest::SetUp();
    if (HasFatalFailure()) return;
    for (const char* op : {"_Send", "_Recv", "Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"}) {
      ASSERT_NE(OpRegistry::Global()->LookUp(op), nullptr) << "op " << op << " is not registered";
    }
  }

  Status Partition(std::map<std::string, proto::GraphDef>* parts) {
    PartitionOptions o;
    o.node_to_loc = [](const Node& n) { return n.assigned_device(); };
    o.get_incarnation = [](const std::string& d) -> uint64_t { return d == kA ? 0xa11ce : d == kB ? 0xb0b : 7; };
    return PartitionGraph(o, g_, parts);
  }

  // Every partition must be a valid graph of its own.
  static void ExpectImports(const std::map<std::string, proto::GraphDef>& parts) {
    for (const auto& [loc, def] : parts) {
      Graph g;
      Status s = ImportGraphDef(def, &g);
      EXPECT_TRUE(s.ok()) << loc << ": " << s;
      for (Node* n : g.nodes()) EXPECT_EQ(n->requested_device(), loc) << n->name();
    }
  }

  Node* At(Node* n, const std::string& device) {
    n->set_assigned_device(device);
    return n;
  }
};

TEST_F(PartitionTest, OneLocationIsTheGraphItself) {
  Node* a = At(ConstF("a", {1, 2}, TensorShape{2}), kA);
  At(Add(Unary("b", "Identity", a)), kA);
  std::map<std::string, proto::GraphDef> parts;
  ASSERT_TRUE(Partition(&parts).ok());
  ASSERT_EQ(parts.size(), 1u);
  const proto::GraphDef& p = parts[kA];
  ASSERT_EQ(p.node_size(), 2);
  EXPECT_EQ(Find(p, "a")->device(), kA);
  EXPECT_EQ(Inputs(*Find(p, "b")), std::vector<std::string>{"a"});
  EXPECT_TRUE(OfOp(p, "_Send").empty());
  ExpectImports(parts);
}

TEST_F(PartitionTest, ACrossingEdgeBecomesASendRecvPair) {
  Node* a = At(ConstF("a", {1, 2}, TensorShape{2}), kA);
  Node* b = At(Add(Unary("b", "Identity", a)), kB);
  ASSERT_NE(b, nullptr);
  std::map<std::string, proto::GraphDef> parts;
  ASSERT_TRUE(Partition(&parts).ok());
  ASSERT_EQ(parts.size(), 2u);
  auto sends = OfOp(parts[kA], "_Send");
  auto recvs = OfOp(parts[kB], "_Recv");
  ASSERT_EQ(sends.size(), 1u);
  ASSERT_EQ(recvs.size(), 1u);
  const proto::NodeDef& send = *sends[0];
  const proto::NodeDef& recv = *recvs[0];
  EXPECT_EQ(Inputs(send), std::vector<std::string>{"a"});
  EXPECT_EQ(send.device(), kA);
  EXPECT_EQ(recv.device(), kB);
  EXPECT_EQ(Attr(send, "T"), AttrValue(DT_FLOAT));
  EXPECT_EQ(Attr(recv, "tensor_type"), AttrValue(DT_FLOAT));
  for (const proto::NodeDef* n : {&send, &recv}) {
    EXPECT_EQ(Attr(*n, "send_device"), AttrValue(kA));
    EXPECT_EQ(Attr(*n, "recv_device"), AttrValue(kB));
    EXPECT_EQ(Attr(*n, "send_device_incarnation"), AttrValue(int64_t{0xa11ce}));
    EXPECT_EQ(Attr(*n, "client_terminated"), AttrValue(false));
  }
  EXPECT_EQ(Attr(send, "tensor_name"), Attr(recv, "tensor_name"));
  const AttrValue tensor_name = Attr(send, "tensor_name");
  const std::string* tn = tensor_name.get_if<std::string>();
  ASSERT_NE(tn, nullptr);
  EXPECT_TRUE(absl::StartsWith(*tn, "edge_") && absl::EndsWith(*tn, "_a")) << *tn;
  EXPECT_EQ(Inputs(*Find(parts[kB], "b")), std::vector<std::string>{recv.name()});
  EXPECT_EQ(Find(parts[kB], "a"), nullptr);
  EXPECT_EQ(Find(parts[kA], "b"), nullptr);
  ExpectImports(parts);
}

TEST_F(PartitionTest, OnePairPerTensorAndDestination) {
  NodeOut sw;
  {
    GraphBuilder b(&g_);
    NodeOut x = b.Const(MakeTensor<float>({1}, TensorShape{1}), "x");
    NodeOut p = b.Const(Tensor(true), "p");
    Node* s = b.AddNode("Switch", {x, p}, {}, "s");
    ASSERT_TRUE(b.ok()) << b.status();
    sw = {s, 0};
    for (const char* n : {"x", "p", "s"}) At(g_.FindNode(n), kA);
  }
  // s:0 read twice on B and once on C; s:1 read on B.
  At(Add(Unary("b1", "Identity", sw.node)), kB);
  At(Add(Unary("b2", "Neg", sw.node)), kB);
  At(Add(Unary("c1", "Identity", sw.node)), kC);
  NodeSpec b3 = Unary("b3", "Identity", sw.node);
  b3.inputs[0].index = 1;
  At(Add(std::move(b3)), kB);
  std::map<std::string, proto::GraphDef> parts;
  ASSERT_TRUE(Partition(&parts).ok());
  EXPECT_EQ(OfOp(parts[kA], "_Send").size(), 3u);
  ASSERT_EQ(OfOp(parts[kB], "_Recv").size(), 2u);
  EXPECT_EQ(OfOp(parts[kC], "_Recv").size(), 1u);
  EXPECT_EQ(Inputs(*Find(parts[kB], "b1")), Inputs(*Find(parts[kB], "b2")));
  EXPECT_NE(Inputs(*Find(parts[kB], "b1")), Inputs(*Find(parts[kB], "b3")));
  std::set<std::string> names;
  for (const auto* s : OfOp(parts[kA], "_Send")) names.insert(*Attr(*s, "tensor_name").get_if<std::string>());
  EXPECT_EQ(names.size(), 3u) << "tensor names are unique";
  for (const auto* s : OfOp(parts[kA], "_Send")) {
    if (Inputs(*s)[0] == "s:1") EXPECT_EQ(Attr(*s, "recv_device"), AttrValue(kB));
  }
  ExpectImports(parts);
}

TEST_F(PartitionTest, ControlEdgesTravelAsADummyConstant) {
  Node* a = At(ConstF("a", {1}, TensorShape{1}), kA);
  NodeSpec s;
  s.name = "after";
  s.op = "NoOp";
  s.control_inputs = {a};
  Node* after = At(Add(std::move(s)), kB);
  NodeSpec s2;
  s2.name = "after2";
  s2.op = "NoOp";
  s2.control_inputs = {a};
  At(Add(std::move(s2)), kB);
  ASSERT_NE(after, nullptr);
  std::map<std::string, proto::GraphDef> parts;
  ASSERT_TRUE(Partition(&parts).ok());
  auto consts = OfOp(parts[kA], "Const");
  const proto::NodeDef* dummy = nullptr;
  for (const auto* c : consts)
    if (c->name() != "a") dummy = c;
  ASSERT_NE(dummy, nullptr);
  EXPECT_EQ(Inputs(*dummy), std::vector<std::string>{"^a"});
  EXPECT_EQ(dummy->device(), kA);
  auto sends = OfOp(parts[kA], "_Send");
  ASSERT_EQ(sends.size(), 1u) << "one pair per source and destination location";
  EXPECT_EQ(Inputs(*sends[0]), std::vector<std::string>{dummy->name()});
  auto recvs = OfOp(parts[kB], "_Recv");
  ASSERT_EQ(recvs.size(), 1u);
  EXPECT_EQ(Inputs(*Find(parts[kB], "after")), std::vector<std::string>{"^" + recvs[0]->name()});
  EXPECT_EQ(Inputs(*Find(parts[kB], "after2")), std::vector<std::string>{"^" + recvs[0]->name()});
  ExpectImports(parts);
}

TEST_F(PartitionTest, AttrsAndInternalAttrsAreKeptExactly) {
  NodeSpec c;
  c.name = "c";
  c.op = "Const";
  c.attrs["dtype"] = DT_INT64;
  c.attrs["value"] = MakeTensor<int64_t>({1, 1LL << 40}, TensorShape{2});
  c.attrs["_class"] = std::vector<std::string>{"loc:@c"};
  Node* cn = At(Add(std::move(c)), kA);
  At(Add(Unary("d", "Identity", cn)), kB);
  std::map<std::string, proto::GraphDef> parts;
  ASSERT_TRUE(Partition(&parts).ok());
  const proto::NodeDef* cd = Find(parts[kA], "c");
  ASSERT_NE(cd, nullptr);
  for (const auto& [k, v] : cn->attrs()) EXPECT_EQ(Attr(*cd, k), v) << k;
  EXPECT_EQ(cd->attr_size(), static_cast<int>(cn->attrs().size()));
  EXPECT_EQ(Attr(*OfOp(parts[kA], "_Send")[0], "T"), AttrValue(DT_INT64));
  ExpectImports(parts);
}

TEST_F(PartitionTest, AReferenceReadOnAnotherDeviceSendsTheValue) {
  Node* v = At(Variable("v", DT_FLOAT, PartialTensorShape{2}), kA);
  At(Add(Unary("read", "Identity", v)), kB);
  std::map<std::string, proto::GraphDef> parts;
  ASSERT_TRUE(Partition(&parts).ok());
  EXPECT_EQ(Attr(*OfOp(parts[kA], "_Send")[0], "T"), AttrValue(DT_FLOAT)) << "the value, not float_ref";
  ExpectImports(parts);
}

TEST_F(PartitionTest, AReferenceInputOnAnotherDeviceIsAnError) {
  Node* v = At(Variable("v", DT_FLOAT, PartialTensorShape{2}), kA);
  Node* x = At(ConstF("x", {1, 2}, TensorShape{2}), kB);
  At(Add(Binary("assign", "Assign", v, x)), kB);
  std::map<std::string, proto::GraphDef> parts;
  Status s = Partition(&parts);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("'v'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("'assign'"));
  EXPECT_TRUE(parts.empty());
}

TEST_F(PartitionTest, GeneratedNamesAvoidExistingNodes) {
  Node* a = At(ConstF("a", {1}, TensorShape{1}), kA);
  // Nodes named like the pair of the first crossing edge would be.
  At(ConstF("edge_0_a/_send", {1}, TensorShape{1}), kA);
  At(ConstF("edge_0_a/_recv", {1}, TensorShape{1}), kB);
  At(Add(Unary("b", "Identity", a)), kB);
  std::map<std::string, proto::GraphDef> parts;
  ASSERT_TRUE(Partition(&parts).ok());
  ExpectImports(parts);
  std::set<std::string> all;
  for (const auto& [loc, def] : parts)
    for (const auto& n : def.node()) EXPECT_TRUE(all.insert(n.name()).second) << n.name();
}

TEST_F(PartitionTest, NodesMustBePlaced) {
  ConstF("unplaced", {1}, TensorShape{1});
  std::map<std::string, proto::GraphDef> parts;
  Status s = Partition(&parts);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'unplaced'"));
}

// A loop counting i from 0 while i < 3: Enter -> Merge -> LoopCond/Switch -> body -> NextIteration.
class PartitionLoopTest : public PartitionTest {
 protected:
  void BuildLoop() {
    GraphBuilder b(&g_);
    NodeOut zero = b.Const(Tensor(int32_t{0}), "zero");
    NodeOut limit = b.Const(Tensor(int32_t{3}), "limit");
    Node* enter = b.AddNode("Enter", {zero}, {{"frame_name", std::string("loop")}}, "enter");
    Node* limit_in = b.AddNode("Enter", {limit}, {{"frame_name", std::string("loop")}, {"is_constant", true}},
                               "limit_in");
    Node* merge = b.AddNode("Merge", {{enter, 0}, {enter, 0}}, {}, "merge");
    Node* less = b.AddNode("Less", {{merge, 0}, {limit_in, 0}}, {}, "less");
    Node* cond = b.AddNode("LoopCond", {{less, 0}}, {}, "cond");
    Node* sw = b.AddNode("Switch", {{merge, 0}, {cond, 0}}, {}, "switch");
    Node* one = b.AddNode("Const", {}, {{"dtype", DT_INT32}, {"value", Tensor(int32_t{1})}}, "one");
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE(g_.AddControlEdge(sw, one).ok());
    body_ = b.AddNode("AddV2", {{sw, 1}, {one, 0}}, {}, "body");
    Node* next = b.AddNode("NextIteration", {{body_, 0}}, {}, "next");
    exit_ = b.AddNode("Exit", {{sw, 0}}, {}, "exit");
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE(g_.UpdateInput(merge, 1, {next, 0}).ok());
    for (Node* n : g_.nodes()) n->set_assigned_device(kA);
  }
  Node* body_ = nullptr;
  Node* exit_ = nullptr;
};

TEST_F(PartitionLoopTest, ALoopOnOneDeviceWithItsResultSentElsewhere) {
  BuildLoop();
  At(Add(Unary("use", "Identity", exit_)), kB);
  std::map<std::string, proto::GraphDef> parts;
  Status s = Partition(&parts);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Inputs(*Find(parts[kA], "merge")), (std::vector<std::string>{"enter", "next"})) << "back edge kept";
  ASSERT_EQ(OfOp(parts[kA], "_Send").size(), 1u);
  EXPECT_EQ(Inputs(*OfOp(parts[kA], "_Send")[0]), std::vector<std::string>{"exit"});
  ExpectImports(parts);
}

TEST_F(PartitionLoopTest, AnEdgeCrossingInsideALoopIsUnimplemented) {
  BuildLoop();
  body_->set_assigned_device(kB);
  std::map<std::string, proto::GraphDef> parts;
  Status s = Partition(&parts);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("'switch:1' -> 'body'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("'loop'"));
  EXPECT_TRUE(parts.empty());
}

TEST_F(PartitionLoopTest, AControlEdgeIntoALoopIsUnimplemented) {
  BuildLoop();
  Node* one = g_.FindNode("one");
  Node* outside = At(ConstF("outside", {1}, TensorShape{1}), kB);
  ASSERT_TRUE(g_.AddControlEdge(one, outside).ok());
  std::map<std::string, proto::GraphDef> parts;
  EXPECT_EQ(Partition(&parts).code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace dflow
