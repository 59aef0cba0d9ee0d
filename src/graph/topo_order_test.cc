// TopologicalOrder, its index-based Kahn core and cycle search, and IsLoopBackEdge.
#include "graph/topo_order.h"

#include <string>
#include <vector>

#include "graph/graph_test_fixture.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using namespace graph_testing;  // NOLINT

// ---- The index-based core ----

struct Adjacency {
  std::vector<std::vector<int>> succ, pred;
  explicit Adjacency(int n) : succ(n), pred(n) {}
  void Edge(int from, int to) {
    succ[from].push_back(to);
    pred[to].push_back(from);
  }
  std::vector<int> Pending() const {
    std::vector<int> p;
    for (const auto& in : pred) p.push_back(static_cast<int>(in.size()));
    return p;
  }
  std::vector<int> Order(std::vector<int>& pending, TopoTieBreak tie) const {
    return topo_internal::KahnOrder(
        pending,
        [&](int i, const auto& visit) {
          for (int j : succ[i]) visit(j);
        },
        tie);
  }
  std::vector<int> Cycle(const std::vector<int>& pending) const {
    return topo_internal::FindCycle(pending, [&](int i, const auto& visit) {
      for (int j : pred[i]) visit(j);
    });
  }
};

TEST(KahnOrderTest, LowestIndexFirstAmongReadyNodes) {
  // 3 -> 0, 2 -> 1; 4 free.
  Adjacency a(5);
  a.Edge(3, 0);
  a.Edge(2, 1);
  std::vector<int> pending = a.Pending();
  EXPECT_EQ(a.Order(pending, TopoTieBreak::kLowestId), (std::vector<int>{2, 1, 3, 0, 4}));
}

TEST(KahnOrderTest, AnyOrderRespectsEveryEdge) {
  Adjacency a(6);
  a.Edge(5, 0);
  a.Edge(0, 1);
  a.Edge(4, 1);
  a.Edge(1, 2);
  a.Edge(1, 3);
  a.Edge(3, 2);
  std::vector<int> pending = a.Pending();
  std::vector<int> order = a.Order(pending, TopoTieBreak::kAny);
  ASSERT_EQ(order.size(), 6u);
  std::vector<int> pos(6, -1);
  for (size_t k = 0; k < order.size(); ++k) pos[order[k]] = static_cast<int>(k);
  for (int from = 0; from < 6; ++from)
    for (int to : a.succ[from]) EXPECT_LT(pos[from], pos[to]) << from << " -> " << to;
}

TEST(KahnOrderTest, CycleLeavesItsNodesAndTheirConsumersOut) {
  // 0 -> 1 -> 2 -> 3 -> 1 (cycle 1, 2, 3), 2 -> 4 (downstream), 5 free.
  Adjacency a(6);
  a.Edge(0, 1);
  a.Edge(1, 2);
  a.Edge(2, 3);
  a.Edge(3, 1);
  a.Edge(2, 4);
  std::vector<int> pending = a.Pending();
  EXPECT_EQ(a.Order(pending, TopoTieBreak::kLowestId), (std::vector<int>{0, 5}));
  for (int i : {1, 2, 3, 4}) EXPECT_GT(pending[i], 0) << i;
  // The cycle, in the direction of the edges, starting where the backward walk closed it.
  EXPECT_EQ(a.Cycle(pending), (std::vector<int>{1, 2, 3}));
}

TEST(KahnOrderTest, CycleSearchSkipsNodesOnlyDownstreamOfTheCycle) {
  // 0 is stuck only because it reads from the cycle 2 <-> 3.
  Adjacency a(4);
  a.Edge(3, 0);
  a.Edge(2, 3);
  a.Edge(3, 2);
  a.Edge(1, 2);
  std::vector<int> pending = a.Pending();
  EXPECT_EQ(a.Order(pending, TopoTieBreak::kAny), (std::vector<int>{1}));
  EXPECT_EQ(a.Cycle(pending), (std::vector<int>{3, 2}));
}

TEST(KahnOrderTest, NoCycleNoCycleFound) {
  Adjacency a(2);
  a.Edge(0, 1);
  std::vector<int> pending = a.Pending();
  EXPECT_EQ(a.Order(pending, TopoTieBreak::kAny).size(), 2u);
  EXPECT_TRUE(a.Cycle(pending).empty());
}

TEST(KahnOrderTest, DescribeCycle) {
  EXPECT_EQ(topo_internal::DescribeCycle({"a", "b"}, 3), "'a' -> 'b' -> 'a' (3 nodes cannot be ordered)");
  EXPECT_EQ(topo_internal::DescribeCycle({"self"}, 1), "'self' -> 'self' (1 nodes cannot be ordered)");
}

// ---- TopologicalOrder on a Graph ----

std::vector<std::string> NamesOf(const std::vector<Node*>& nodes) {
  std::vector<std::string> names;
  for (const Node* n : nodes) names.push_back(n->name());
  return names;
}

class TopoOrderTest : public GraphTest {};

TEST_F(TopoOrderTest, ControlEdgesOrderAndLowestIdBreaksTies) {
  Node* p = ConstF("p", {1}, TensorShape{1});
  Node* q = Add(Unary("q", "Identity", p));
  Node* r = ConstF("r", {2}, TensorShape{1});
  ASSERT_NE(q, nullptr);
  ASSERT_TRUE(g_.AddControlEdge(r, p).ok());  // p waits for r, which was added after it
  TopoOrderOptions opts;
  opts.tie = TopoTieBreak::kLowestId;
  StatusOr<std::vector<Node*>> order = TopologicalOrder(g_, opts);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(NamesOf(*order), (std::vector<std::string>{"r", "p", "q"}));
}

TEST_F(TopoOrderTest, FiltersLeaveNodesAndEdgesOut) {
  Node* p = ConstF("p", {1}, TensorShape{1});
  Node* q = Add(Unary("q", "Identity", p));
  Node* r = Add(Unary("r", "Identity", q));
  Node* s = ConstF("s", {2}, TensorShape{1});
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(g_.AddControlEdge(s, q).ok());
  ASSERT_TRUE(g_.AddControlEdge(r, s).ok());  // s -> q -> r -> s: a cycle through control edges

  TopoOrderOptions all;
  StatusOr<std::vector<Node*>> order = TopologicalOrder(g_, all);
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().code(), absl::StatusCode::kInvalidArgument);

  // Without s, the cycle is gone and so is s.
  TopoOrderOptions no_s;
  no_s.include = [&](const Node* n) { return n != s; };
  no_s.tie = TopoTieBreak::kLowestId;
  order = TopologicalOrder(g_, no_s);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(NamesOf(*order), (std::vector<std::string>{"p", "q", "r"}));

  // Without control edges, data edges alone order the nodes.
  TopoOrderOptions data_only;
  data_only.edge_filter = [](const Edge* e) { return !e->IsControlEdge(); };
  data_only.tie = TopoTieBreak::kLowestId;
  order = TopologicalOrder(g_, data_only);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(NamesOf(*order), (std::vector<std::string>{"p", "q", "r", "s"}));
}

TEST_F(TopoOrderTest, CycleErrorNamesTheCycleNotWhatHangsBelowIt) {
  Node* p = ConstF("p", {1}, TensorShape{1});
  Node* below = Add(Unary("below", "Identity", p));  // lowest id among the nodes left out
  Node* q = Add(Unary("q", "Identity", p));
  Node* r = Add(Unary("r", "Identity", q));
  ASSERT_NE(below, nullptr);
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(g_.AddControlEdge(r, q).ok());
  ASSERT_TRUE(g_.AddControlEdge(r, below).ok());
  TopoOrderOptions opts;
  opts.cycle_error = "Step graph contains a cycle";
  StatusOr<std::vector<Node*>> order = TopologicalOrder(g_, opts);
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(order.status().message(), "Step graph contains a cycle: 'r' -> 'q' -> 'r' (3 nodes cannot be ordered)");
}

TEST_F(TopoOrderTest, SelfControlEdgeIsACycle) {
  Node* p = ConstF("p", {1}, TensorShape{1});
  ASSERT_TRUE(g_.AddControlEdge(p, p).ok());
  StatusOr<std::vector<Node*>> order = TopologicalOrder(g_);
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().message(), "Graph contains a cycle: 'p' -> 'p' (1 nodes cannot be ordered)");
}

TEST_F(TopoOrderTest, LoopBackEdgesDoNotOrder) {
  // x -> Merge(x, next) -> NextIteration: the NextIteration -> Merge edge closes a loop.
  Node* x = ConstF("x", {1}, TensorShape{1});
  NodeSpec merge;
  merge.name = "merge";
  merge.op = "Merge";
  merge.inputs = {{x, 0}, {x, 0}};
  Node* m = Add(std::move(merge));
  ASSERT_NE(m, nullptr);
  Node* next = Add(Unary("next", "NextIteration", m));
  ASSERT_NE(next, nullptr);
  ASSERT_TRUE(g_.UpdateInput(m, 1, {next, 0}).ok());
  int back_edges = 0;
  for (const Edge* e : m->data_inputs()) back_edges += IsLoopBackEdge(e) ? 1 : 0;
  EXPECT_EQ(back_edges, 1);
  for (const Edge* e : next->data_inputs()) EXPECT_FALSE(IsLoopBackEdge(e));

  for (TopoTieBreak tie : {TopoTieBreak::kAny, TopoTieBreak::kLowestId}) {
    TopoOrderOptions opts;
    opts.tie = tie;
    StatusOr<std::vector<Node*>> order = TopologicalOrder(g_, opts);
    ASSERT_TRUE(order.ok()) << order.status();
    EXPECT_EQ(NamesOf(*order), (std::vector<std::string>{"x", "merge", "next"}));
  }

  // A control edge from the NextIteration to the Merge is a real cycle.
  ASSERT_TRUE(g_.AddControlEdge(next, m).ok());
  StatusOr<std::vector<Node*>> order = TopologicalOrder(g_);
  ASSERT_FALSE(order.ok());
  EXPECT_TRUE(Contains(order.status().message(), "'merge' -> 'next' -> 'merge'")) << order.status();
}

}  // namespace
}  // namespace dflow
