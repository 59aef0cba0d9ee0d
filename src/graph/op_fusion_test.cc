// FuseOps: which chains become _FusedConv2D / _FusedMatMul, which stay apart, and how the fused
// node takes over the chain's name, inputs, control inputs and consumers. (The fused kernels'
// values: ops/nn/fused_ops_test.cc; sessions with fusion on and off: runtime/op_fusion_session_test.cc.)
#include "graph/op_fusion.h"

#include <functional>
#include <set>

#include "graph/graph_test_fixture.h"

namespace dflow {
namespace {

using graph_testing::GraphTest;
using graph_testing::kCpu;

constexpr char kOtherCpu[] = "/job:localhost/replica:0/task:0/device:CPU:1";

class OpFusionTest : public GraphTest {
 protected:
  void SetUp() override {
    GraphTest::SetUp();
    for (const char* op :
         {"Conv2D", "BiasAdd", "Relu", "Relu6", "Elu", "LeakyRelu", "Sigmoid", "_FusedConv2D", "_FusedMatMul"}) {
      ASSERT_NE(OpRegistry::Global()->LookUp(op), nullptr) << "op " << op << " is not registered";
    }
    x_ = Placeholder("x", DT_FLOAT, PartialTensorShape({2, 6, 6, 3}));
    filter_ = ConstF("filter", std::vector<float>(3 * 3 * 3 * 4, 0.5f), TensorShape{3, 3, 3, 4});
    bias_ = ConstF("bias", {1, 2, 3, 4}, TensorShape{4});
  }

  Node* Conv(const std::string& name, const std::string& format = "NHWC") {
    NodeSpec s = Binary(name, "Conv2D", x_, filter_);
    s.attrs["strides"] = std::vector<int64_t>{1, 2, 2, 1};
    s.attrs["padding"] = "SAME";
    s.attrs["data_format"] = format;
    return Add(std::move(s));
  }
  Node* BiasAdd(const std::string& name, Node* value, const std::string& format = "NHWC") {
    NodeSpec s = Binary(name, "BiasAdd", value, bias_);
    s.attrs["data_format"] = format;
    return Add(std::move(s));
  }
  // Every node on the CPU, as the placer leaves a one-device graph.
  void PlaceAll() {
    for (Node* n : g_.nodes()) n->set_assigned_device(kCpu);
  }
  static std::vector<std::string> Strings(const Node* n, const std::string& attr) {
    return *n->attrs().at(attr).get_if<std::vector<std::string>>();
  }
  static std::string InputName(const Node* n, int i) {
    const Edge* e = n->data_inputs()[i];
    return e == nullptr ? "<missing>" : absl::StrCat(e->src->name(), ":", e->src_output);
  }

  // Places every node on the CPU, then `adjust`s, then expects FuseOps to change nothing.
  void ExpectNothingFused(const std::function<void()>& adjust = [] {}) {
    PlaceAll();
    adjust();
    const int before = g_.num_nodes();
    StatusOr<int> fused = FuseOps(&g_);
    ASSERT_TRUE(fused.ok()) << fused.status();
    EXPECT_EQ(*fused, 0);
    EXPECT_EQ(g_.num_nodes(), before);
    for (Node* n : g_.nodes()) EXPECT_NE(n->op().rfind("_Fused", 0), 0u) << n->name();
  }

  Node* x_ = nullptr;
  Node* filter_ = nullptr;
  Node* bias_ = nullptr;
};

TEST_F(OpFusionTest, ConvBiasAddReluBecomesOneNodeNamedAfterTheRelu) {
  Node* conv = Conv("conv");
  Node* bias = BiasAdd("bias_add", conv);
  Node* relu = Add(Unary("relu", "Relu", bias));
  Node* out = Add(Unary("out", "Identity", relu));
  NodeSpec after = Unary("after", "NoOp", x_);
  after.inputs.clear();
  after.control_inputs = {relu};
  Node* after_node = Add(std::move(after));
  const PartialTensorShape relu_shape = relu->output_shape(0);
  PlaceAll();
  const int before = g_.num_nodes();

  StatusOr<int> fused = FuseOps(&g_);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(*fused, 1);
  EXPECT_EQ(g_.num_nodes(), before - 2);
  EXPECT_EQ(g_.FindNode("conv"), nullptr);
  EXPECT_EQ(g_.FindNode("bias_add"), nullptr);
  Node* f = g_.FindNode("relu");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->op(), "_FusedConv2D");
  EXPECT_EQ(f->assigned_device(), kCpu);
  EXPECT_EQ(Strings(f, "fused_ops"), (std::vector<std::string>{"BiasAdd", "Relu"}));
  EXPECT_EQ(Strings(f, "_fused_nodes"), (std::vector<std::string>{"conv", "bias_add", "relu"}));
  EXPECT_EQ(*f->attrs().at("strides").get_if<std::vector<int64_t>>(), (std::vector<int64_t>{1, 2, 2, 1}));
  EXPECT_EQ(*f->attrs().at("padding").get_if<std::string>(), "SAME");
  ASSERT_EQ(f->num_inputs(), 3);
  EXPECT_EQ(InputName(f, 0), "x:0");
  EXPECT_EQ(InputName(f, 1), "filter:0");
  EXPECT_EQ(InputName(f, 2), "bias:0");
  EXPECT_EQ(f->output_shape(0).DebugString(), relu_shape.DebugString());
  // The consumers now read the fused node.
  EXPECT_EQ(InputName(out, 0), "relu:0");
  EXPECT_EQ(out->data_inputs()[0]->src, f);
  ASSERT_EQ(after_node->control_inputs().size(), 1u);
  EXPECT_EQ(after_node->control_inputs()[0]->src, f);
  // Nothing is left pointing at the removed nodes.
  for (const Edge* e : x_->out_edges()) EXPECT_EQ(e->dst, f);
  for (const Edge* e : bias_->out_edges()) EXPECT_EQ(e->dst, f);
}

TEST_F(OpFusionTest, MatMulBiasAddWithoutActivationLeavesTheNextOpAlone) {
  Node* a = Placeholder("a", DT_FLOAT, PartialTensorShape({5, 7}));
  Node* w = ConstF("w", std::vector<float>(7 * 4, 1.0f), TensorShape{7, 4});
  NodeSpec mm = Binary("mm", "MatMul", a, w);
  mm.attrs["transpose_b"] = false;
  Node* prod = Add(std::move(mm));
  Node* bias = BiasAdd("logits", prod);
  Node* sig = Add(Unary("sig", "Sigmoid", bias));
  PlaceAll();
  StatusOr<int> fused = FuseOps(&g_);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(*fused, 1);
  Node* f = g_.FindNode("logits");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->op(), "_FusedMatMul");
  EXPECT_EQ(Strings(f, "fused_ops"), (std::vector<std::string>{"BiasAdd"}));
  EXPECT_FALSE(*f->attrs().at("transpose_a").get_if<bool>());
  EXPECT_EQ(f->output_shape(0).DebugString(), "[5,4]");
  EXPECT_EQ(g_.FindNode("sig"), sig);
  EXPECT_EQ(sig->data_inputs()[0]->src, f);
}

TEST_F(OpFusionTest, LeakyReluKeepsItsAlpha) {
  Node* bias = BiasAdd("bias_add", Conv("conv"));
  NodeSpec lr = Unary("act", "LeakyRelu", bias);
  lr.attrs["alpha"] = 0.25f;
  Add(std::move(lr));
  PlaceAll();
  ASSERT_EQ(FuseOps(&g_).value(), 1);
  Node* f = g_.FindNode("act");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(Strings(f, "fused_ops"), (std::vector<std::string>{"BiasAdd", "LeakyRelu"}));
  EXPECT_EQ(*f->attrs().at("leakyrelu_alpha").get_if<float>(), 0.25f);
}

// A BiasAdd read by two nodes (TensorFlow's LeakyRelu gradient reads the activation's input):
// the contraction and BiasAdd still fuse, the activation stays.
TEST_F(OpFusionTest, SharedBiasAddOutputKeepsTheActivationApart) {
  Node* bias = BiasAdd("bias_add", Conv("conv"));
  Node* relu = Add(Unary("relu", "Relu", bias));
  Node* other = Add(Unary("other", "Identity", bias));
  PlaceAll();
  ASSERT_EQ(FuseOps(&g_).value(), 1);
  Node* f = g_.FindNode("bias_add");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->op(), "_FusedConv2D");
  EXPECT_EQ(Strings(f, "fused_ops"), (std::vector<std::string>{"BiasAdd"}));
  EXPECT_EQ(relu->op(), "Relu");
  EXPECT_EQ(relu->data_inputs()[0]->src, f);
  EXPECT_EQ(other->data_inputs()[0]->src, f);
}

// Chains that must stay apart: FuseOps changes nothing.
TEST_F(OpFusionTest, ConvolutionOutputReadTwiceStaysApart) {
  Node* conv = Conv("conv");
  BiasAdd("bias_add", conv);
  Add(Unary("also", "Identity", conv));
  ExpectNothingFused();
}

TEST_F(OpFusionTest, ConvolutionSomeoneWaitsForStaysApart) {
  Node* conv = Conv("conv");
  BiasAdd("bias_add", conv);
  NodeSpec s;
  s.name = "waits";
  s.op = "NoOp";
  s.control_inputs = {conv};
  Add(std::move(s));
  ExpectNothingFused();
}

TEST_F(OpFusionTest, BiasAddInTheOtherDataFormatStaysApart) {
  // [2,3,3,4] read as NCHW has 3 channels.
  NodeSpec s = Binary("bias_add", "BiasAdd", Conv("conv", "NHWC"), ConstF("bias3", {1, 2, 3}, TensorShape{3}));
  s.attrs["data_format"] = "NCHW";
  Add(std::move(s));
  ExpectNothingFused();
}

TEST_F(OpFusionTest, ChainOverTwoDevicesStaysApart) {
  BiasAdd("bias_add", Conv("conv"));
  ExpectNothingFused([this] { g_.FindNode("bias_add")->set_assigned_device(kOtherCpu); });
}

TEST_F(OpFusionTest, DoubleStaysApart) {
  Node* a = Placeholder("a", DT_DOUBLE, PartialTensorShape({2, 3}));
  Node* w = Const("w", graph_testing::MakeTensor<double>({1, 2, 3, 4, 5, 6}, TensorShape{3, 2}));
  Node* b = Const("b", graph_testing::MakeTensor<double>({1, 2}, TensorShape{2}));
  Node* mm = Add(Binary("mm", "MatMul", a, w));
  Add(Binary("bias_add", "BiasAdd", mm, b));
  ExpectNothingFused();
}

TEST_F(OpFusionTest, AddInsteadOfBiasAddStaysApart) {
  Add(Binary("add", "AddV2", Conv("conv"), bias_));
  ExpectNothingFused();
}

// The fused node waits for what any op of the chain waited for.
TEST_F(OpFusionTest, ControlInputsOfTheChainMoveToTheFusedNode) {
  Node* gate1 = Add([] {
    NodeSpec s;
    s.name = "gate1";
    s.op = "NoOp";
    return s;
  }());
  Node* gate2 = Add([] {
    NodeSpec s;
    s.name = "gate2";
    s.op = "NoOp";
    return s;
  }());
  NodeSpec c = Binary("conv", "Conv2D", x_, filter_);
  c.attrs["strides"] = std::vector<int64_t>{1, 1, 1, 1};
  c.attrs["padding"] = "VALID";
  c.control_inputs = {gate1};
  Node* conv = Add(std::move(c));
  NodeSpec b = Binary("bias_add", "BiasAdd", conv, bias_);
  b.control_inputs = {gate2};
  Node* bias = Add(std::move(b));
  Add(Unary("relu6", "Relu6", bias));
  PlaceAll();
  ASSERT_EQ(FuseOps(&g_).value(), 1);
  Node* f = g_.FindNode("relu6");
  ASSERT_NE(f, nullptr);
  std::set<std::string> waits;
  for (const Edge* e : f->control_inputs()) waits.insert(e->src->name());
  EXPECT_EQ(waits, (std::set<std::string>{"gate1", "gate2"}));
  EXPECT_EQ(gate1->out_edges().size(), 1u);
  EXPECT_EQ(gate2->out_edges().size(), 1u);
}

// Two stacked layers: the second chain's input is the first fused node.
TEST_F(OpFusionTest, StackedLayersBothFuse) {
  Node* a = Placeholder("a", DT_FLOAT, PartialTensorShape({3, 4}));
  Node* w = ConstF("w", std::vector<float>(16, 0.1f), TensorShape{4, 4});
  Node* b = ConstF("b", {0, 0, 0, 0}, TensorShape{4});
  Node* h1 = Add(Unary("h1", "Relu", Add(Binary("b1", "BiasAdd", Add(Binary("m1", "MatMul", a, w)), b))));
  Node* h2 = Add(Unary("h2", "Elu", Add(Binary("b2", "BiasAdd", Add(Binary("m2", "MatMul", h1, w)), b))));
  Add(Unary("out", "Identity", h2));
  PlaceAll();
  ASSERT_EQ(FuseOps(&g_).value(), 2);
  Node* f1 = g_.FindNode("h1");
  Node* f2 = g_.FindNode("h2");
  ASSERT_NE(f1, nullptr);
  ASSERT_NE(f2, nullptr);
  EXPECT_EQ(f1->op(), "_FusedMatMul");
  EXPECT_EQ(f2->op(), "_FusedMatMul");
  EXPECT_EQ(f2->data_inputs()[0]->src, f1);
  EXPECT_EQ(g_.FindNode("out")->data_inputs()[0]->src, f2);
}

}  // namespace
}  // namespace dflow
