// BuildStepGraph (pruning, feeds and fetches, cycles) and PlaceGraph.
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

// ---- BuildStepGraph ----

class StepGraphTest : public GraphTest {
 protected:
  void SetUp() override {
    GraphTest::SetUp();
    if (HasFatalFailure()) return;
    // a (fed) and b feed c = a + b, d = c * c; e -> f is unrelated; g runs after f.
    a_ = Placeholder("a", DT_FLOAT, PartialTensorShape{2});
    b_ = ConstF("b", {1, 2}, TensorShape{2});
    c_ = Add(Binary("c", "AddV2", a_, b_));
    d_ = Add(Binary("d", "Mul", c_, c_));
    e_ = ConstF("e", {5}, TensorShape{1});
    f_ = Add(Unary("f", "Identity", e_));
    NodeSpec g;
    g.name = "g";
    g.op = "NoOp";
    g.control_inputs = {f_};
    g_node_ = Add(std::move(g));
    ASSERT_NE(g_node_, nullptr);
  }

  StepGraph Build(std::vector<std::string> feeds, std::vector<std::string> fetches,
                  std::vector<std::string> targets = {}) {
    StatusOr<StepGraph> s = BuildStepGraph(g_, feeds, fetches, targets);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok()) return StepGraph{};
    EXPECT_NE(s->graph, nullptr);
    return *std::move(s);
  }

  static std::multiset<std::string> Ops(const Graph& g) {
    std::multiset<std::string> ops;
    for (Node* n : g.nodes()) ops.insert(n->op());
    return ops;
  }

  Node *a_ = nullptr, *b_ = nullptr, *c_ = nullptr, *d_ = nullptr, *e_ = nullptr, *f_ = nullptr, *g_node_ = nullptr;
};

using Names = std::vector<std::string>;

TEST_F(StepGraphTest, PrunesToWhatTheFetchesNeed) {
  StepGraph s = Build({"a"}, {"d"});
  ASSERT_NE(s.graph, nullptr);
  EXPECT_EQ(s.kept_nodes, (Names{"b", "c", "d"}));
  EXPECT_EQ(Ops(*s.graph), (std::multiset<std::string>{"_Arg", "Const", "AddV2", "Mul", "_Retval"}));
  EXPECT_EQ(s.graph->FindNode("a"), nullptr);  // fed: replaced by an _Arg
  EXPECT_EQ(s.graph->FindNode("e"), nullptr);
  EXPECT_EQ(s.graph->FindNode("f"), nullptr);
  Node* c = s.graph->FindNode("c");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->data_inputs().size(), 2u);
  EXPECT_EQ(c->data_inputs()[0]->src->op(), "_Arg");
  EXPECT_EQ(c->data_inputs()[0]->src->attrs().at("index"), AttrValue(0));
  EXPECT_EQ(c->data_inputs()[0]->src->output_type(0), DT_FLOAT);
  EXPECT_EQ(c->data_inputs()[1]->src->name(), "b");
  // The _Retval reads d.
  int retvals = 0;
  for (Node* n : s.graph->nodes()) {
    if (n->op() != "_Retval") continue;
    ++retvals;
    ASSERT_EQ(n->data_inputs().size(), 1u);
    EXPECT_EQ(n->data_inputs()[0]->src->name(), "d");
    EXPECT_EQ(n->attrs().at("index"), AttrValue(0));
  }
  EXPECT_EQ(retvals, 1);
}

TEST_F(StepGraphTest, UnfedPlaceholderIsKept) {
  StepGraph s = Build({}, {"c:0"});
  EXPECT_EQ(s.kept_nodes, (Names{"a", "b", "c"}));
}

TEST_F(StepGraphTest, FeedingAnInnerTensorCutsTheGraph) {
  StepGraph s = Build({"c:0"}, {"d"});
  EXPECT_EQ(s.kept_nodes, (Names{"d"}));
  ASSERT_NE(s.graph, nullptr);
  Node* d = s.graph->FindNode("d");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->data_inputs()[0]->src->op(), "_Arg");
  EXPECT_EQ(d->data_inputs()[1]->src->op(), "_Arg");
  EXPECT_EQ(d->data_inputs()[0]->src, d->data_inputs()[1]->src);
}

TEST_F(StepGraphTest, FetchingAFedTensorRunsNothing) {
  StepGraph s = Build({"a"}, {"a"});
  EXPECT_TRUE(s.kept_nodes.empty());
  ASSERT_NE(s.graph, nullptr);
  EXPECT_EQ(Ops(*s.graph), (std::multiset<std::string>{"_Arg", "_Retval"}));
}

TEST_F(StepGraphTest, TargetsAndControlEdges) {
  StepGraph s = Build({}, {}, {"g"});
  EXPECT_EQ(s.kept_nodes, (Names{"e", "f", "g"}));
  StepGraph s2 = Build({}, {}, {"^f"});
  EXPECT_EQ(s2.kept_nodes, (Names{"e", "f"}));
  StepGraph s3 = Build({"a"}, {"d", "b"}, {"g"});
  EXPECT_EQ(s3.kept_nodes, (Names{"b", "c", "d", "e", "f", "g"}));
  ASSERT_NE(s3.graph, nullptr);
  Node* g = s3.graph->FindNode("g");
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->control_inputs().size(), 1u);
  EXPECT_EQ(g->control_inputs()[0]->src->name(), "f");
}

TEST_F(StepGraphTest, KeepsRequestedDevicesAndAttrs) {
  NodeSpec s = Unary("on_cpu", "Identity", b_);
  s.device = "/cpu:0";
  ASSERT_NE(Add(std::move(s)), nullptr);
  StepGraph step = Build({}, {"on_cpu"});
  ASSERT_NE(step.graph, nullptr);
  Node* n = step.graph->FindNode("on_cpu");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->requested_device(), "/cpu:0");
  EXPECT_EQ(n->attrs().at("T"), AttrValue(DT_FLOAT));
}

TEST_F(StepGraphTest, FetchingOneTensorTwiceGivesTwoResults) {
  StepGraph s = Build({"a"}, {"d", "d:0"});
  ASSERT_NE(s.graph, nullptr);
  EXPECT_EQ(s.kept_nodes, (Names{"b", "c", "d"}));
  std::set<int64_t> indices;
  for (Node* n : s.graph->nodes()) {
    if (n->op() == "_Retval") indices.insert(*n->attrs().at("index").get_if<int64_t>());
  }
  EXPECT_EQ(indices, (std::set<int64_t>{0, 1}));
}

TEST_F(StepGraphTest, UnknownNamesAreNotFound) {
  StatusOr<StepGraph> s = BuildStepGraph(g_, {}, {"nope"}, {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(s.status().message(), "nope")) << s.status();

  EXPECT_EQ(BuildStepGraph(g_, {}, {"d:1"}, {}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(BuildStepGraph(g_, {"nope:0"}, {"d"}, {}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(BuildStepGraph(g_, {}, {}, {"nope"}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(BuildStepGraph(g_, {}, {"g:0"}, {}).status().code(), absl::StatusCode::kNotFound);  // no outputs
  EXPECT_FALSE(BuildStepGraph(g_, {}, {"d:x"}, {}).ok());
  EXPECT_FALSE(BuildStepGraph(g_, {}, {"^d"}, {}).ok());
}

TEST_F(StepGraphTest, FeedingATensorTwiceIsInvalidArgument) {
  StatusOr<StepGraph> s = BuildStepGraph(g_, {"a", "a:0"}, {"d"}, {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.status().message(), "a:0")) << s.status();
}

TEST_F(StepGraphTest, ControlCycleIsInvalidArgument) {
  // q = Identity(p), r = Identity(q), and q runs after r: a cycle.
  Node* p = ConstF("p", {1}, TensorShape{1});
  Node* q = Add(Unary("q", "Identity", p));
  Node* r = Add(Unary("r", "Identity", q));
  ASSERT_TRUE(g_.AddControlEdge(r, q).ok());
  StatusOr<StepGraph> s = BuildStepGraph(g_, {}, {"r"}, {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.status().message(), "cycle")) << s.status();
  EXPECT_TRUE(Contains(s.status().message(), "q")) << s.status();

  // The cycle does not matter to steps that do not need it...
  StepGraph other = Build({}, {"p"});
  EXPECT_EQ(other.kept_nodes, (Names{"p"}));
  // ... nor when feeding q's output cuts it.
  StepGraph cut = Build({"q:0"}, {"r"});
  EXPECT_EQ(cut.kept_nodes, (Names{"r"}));
}

TEST_F(StepGraphTest, SelfControlEdgeIsACycle) {
  Node* p = ConstF("p", {1}, TensorShape{1});
  ASSERT_TRUE(g_.AddControlEdge(p, p).ok());
  StatusOr<StepGraph> s = BuildStepGraph(g_, {}, {"p"}, {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.status().message(), "cycle")) << s.status();
}

TEST_F(StepGraphTest, ResolveTensor) {
  StatusOr<NodeOut> t = ResolveTensor(g_, "d:0");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->node, d_);
  EXPECT_EQ(t->index, 0);
  EXPECT_EQ(ResolveTensor(g_, "d:1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ResolveTensor(g_, "zz").status().code(), absl::StatusCode::kNotFound);
}

// ---- PlaceGraph ----

class PlacerTest : public GraphTest {
 protected:
  void SetUp() override {
    GraphTest::SetUp();
    if (HasFatalFailure()) return;
    cpu_ = std::make_unique<Device>(kCpu, "CPU");
  }
  Node* Requesting(const std::string& name, const std::string& device) {
    NodeSpec s;
    s.name = name;
    s.op = "Const";
    s.attrs["dtype"] = DT_FLOAT;
    s.attrs["value"] = Tensor(1.0f);
    s.device = device;
    return Add(std::move(s));
  }
  std::unique_ptr<Device> cpu_;
};

TEST_F(PlacerTest, PlacesOnTheMatchingDevice) {
  Node* a = Requesting("a", "/cpu:0");
  Node* b = Requesting("b", "");
  Node* c = Requesting("c", kCpu);
  Node* d = Requesting("d", "/job:localhost/device:CPU:*");
  Node* sum = Add(Binary("sum", "AddV2", a, b));
  ASSERT_NE(sum, nullptr);
  ASSERT_TRUE(PlaceGraph(&g_, {cpu_.get()}, PlacementOptions()).ok());
  for (Node* n : {a, b, c, d, sum}) EXPECT_EQ(n->assigned_device(), kCpu) << n->name();
  EXPECT_EQ(a->requested_device(), "/cpu:0");
}

TEST_F(PlacerTest, UnsatisfiableRequestListsTheDevices) {
  Node* a = Requesting("a", "/job:ps/task:0");
  Status s = PlaceGraph(&g_, {cpu_.get()}, PlacementOptions());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s.message(), "'a'")) << s;
  EXPECT_TRUE(Contains(s.message(), "/job:ps/task:0")) << s;
  EXPECT_TRUE(Contains(s.message(), kCpu)) << s;
  EXPECT_EQ(a->assigned_device(), "");

  Graph g2;
  NodeSpec gpu;
  gpu.name = "on_gpu";
  gpu.op = "NoOp";
  gpu.device = "/gpu:0";
  ASSERT_TRUE(g2.AddNode(std::move(gpu)).ok());
  EXPECT_EQ(PlaceGraph(&g2, {cpu_.get()}, PlacementOptions()).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PlacerTest, SoftPlacementFallsBackToTheCpu) {
  Node* a = Requesting("a", "/job:ps/task:0");
  Node* b = Requesting("b", "/gpu:0");
  PlacementOptions opts;
  opts.allow_soft_placement = true;
  Status s = PlaceGraph(&g_, {cpu_.get()}, opts);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(a->assigned_device(), kCpu);
  EXPECT_EQ(b->assigned_device(), kCpu);
}

TEST_F(PlacerTest, NoDevicesIsInvalidArgument) {
  Requesting("a", "");
  EXPECT_EQ(PlaceGraph(&g_, {}, PlacementOptions()).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PlacerTest, MissingKernelIsNotFound) {
  Node* a = Requesting("a", "");
  NodeSpec s = Unary("nk", "GraphTestNoKernel", a);
  ASSERT_NE(Add(std::move(s)), nullptr);
  PlacementOptions opts;
  opts.allow_soft_placement = true;
  Status st = PlaceGraph(&g_, {cpu_.get()}, opts);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), absl::StatusCode::kNotFound) << st;
  EXPECT_TRUE(Contains(st.message(), "nk")) << st;
}

TEST_F(PlacerTest, RequestedDeviceWithoutTheKernelIsNotSilentlyIgnored) {
  // The request matches a device, but that device has no kernel for the op: without soft
  // placement that is an error, not a quiet move to another device.
  Device fake("/job:localhost/replica:0/task:0/device:FAKE:0", "FAKE");
  Node* a = Requesting("a", "/device:FAKE:0");
  Status s = PlaceGraph(&g_, {cpu_.get(), &fake}, PlacementOptions());
  EXPECT_FALSE(s.ok()) << "placed on " << a->assigned_device();
  if (!s.ok()) {
    EXPECT_TRUE(s.code() == absl::StatusCode::kInvalidArgument || s.code() == absl::StatusCode::kNotFound) << s;
    EXPECT_TRUE(Contains(s.message(), "'a'")) << s;
  }

  PlacementOptions soft;
  soft.allow_soft_placement = true;
  ASSERT_TRUE(PlaceGraph(&g_, {cpu_.get(), &fake}, soft).ok());
  EXPECT_EQ(a->assigned_device(), kCpu);
}

TEST_F(PlacerTest, PicksTheRequestedOneOfSeveralDevices) {
  Device cpu1("/job:localhost/replica:0/task:0/device:CPU:1", "CPU");
  Node* a = Requesting("a", "/cpu:1");
  Node* b = Requesting("b", "");
  ASSERT_TRUE(PlaceGraph(&g_, {cpu_.get(), &cpu1}, PlacementOptions()).ok());
  EXPECT_EQ(a->assigned_device(), cpu1.name());
  EXPECT_EQ(b->assigned_device(), kCpu);  // the first device that can run it
}

}  // namespace
}  // namespace dflow
