// Topological order: the one ordering algorithm (Kahn's) of the graph layer, used for a Graph
// (TopologicalOrder) and, through the index-based core, for the NodeDefs of a GraphDef before a
// Graph exists. While loops are the one kind of cycle a graph may have: the NextIteration ->
// Merge edge that closes a loop (IsLoopBackEdge) never orders its endpoints.
#pragma once

#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace dflow {

// The edge from a NextIteration to its Merge: what closes a while loop.
bool IsLoopBackEdge(const Edge* e);

// Which ready node goes first. kLowestId: the lowest index (node id), so that the order is
// stable and follows construction (a graph already in order keeps it). kAny: whatever is
// cheapest (a stack), for callers that only need some order.
enum class TopoTieBreak { kAny, kLowestId };

namespace topo_internal {

// Kahn's algorithm over the indices 0..pending.size()-1. pending[i] is the number of edges into
// i that order it; for_each_successor(i, visit) calls visit(j) once for each such edge i -> j.
// Returns the order; on a cycle it is shorter than pending, and pending[i] > 0 for exactly the
// indices left out.
template <typename ForEachSuccessor>
std::vector<int> KahnOrder(std::vector<int>& pending, const ForEachSuccessor& for_each_successor, TopoTieBreak tie) {
  const int n = static_cast<int>(pending.size());
  std::vector<int> order;
  order.reserve(n);
  if (tie == TopoTieBreak::kLowestId) {
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (int i = 0; i < n; ++i)
      if (pending[i] == 0) ready.push(i);
    while (!ready.empty()) {
      const int i = ready.top();
      ready.pop();
      order.push_back(i);
      for_each_successor(i, [&](int j) {
        if (--pending[j] == 0) ready.push(j);
      });
    }
  } else {
    std::vector<int> ready;
    for (int i = 0; i < n; ++i)
      if (pending[i] == 0) ready.push_back(i);
    while (!ready.empty()) {
      const int i = ready.back();
      ready.pop_back();
      order.push_back(i);
      for_each_successor(i, [&](int j) {
        if (--pending[j] == 0) ready.push_back(j);
      });
    }
  }
  return order;
}

// After KahnOrder left indices out (pending > 0): one cycle among them, in the direction the
// edges run, each index once. for_each_predecessor(i, visit) calls visit(j) for each edge
// j -> i that KahnOrder counted, in a fixed order. The walk starts at the lowest index left out
// and follows its first predecessor that was left out (every index left out has one). Empty
// when nothing was left out.
template <typename ForEachPredecessor>
std::vector<int> FindCycle(const std::vector<int>& pending, const ForEachPredecessor& for_each_predecessor) {
  int cur = -1;
  for (size_t i = 0; i < pending.size() && cur < 0; ++i)
    if (pending[i] > 0) cur = static_cast<int>(i);
  if (cur < 0) return {};
  std::vector<int> path;
  std::vector<int> pos(pending.size(), -1);
  while (pos[cur] < 0) {
    pos[cur] = static_cast<int>(path.size());
    path.push_back(cur);
    int next = -1;
    for_each_predecessor(cur, [&](int j) {
      if (next < 0 && pending[j] > 0) next = j;
    });
    if (next < 0) break;  // cannot happen; stop rather than loop
    cur = next;
  }
  // path[pos[cur]..] is the cycle against the edges' direction: reverse it, starting from cur.
  const int from = pos[cur] >= 0 ? pos[cur] : 0;
  std::vector<int> cycle{path[from]};
  for (int k = static_cast<int>(path.size()) - 1; k > from; --k) cycle.push_back(path[k]);
  return cycle;
}

// "'a' -> 'b' -> 'a' (N nodes cannot be ordered)" for a cycle from FindCycle.
std::string DescribeCycle(const std::vector<std::string>& cycle_names, int num_unordered);

}  // namespace topo_internal

struct TopoOrderOptions {
  // The nodes to order; all live nodes when empty. Edges from or to a node left out order nothing.
  std::function<bool(const Node*)> include;
  // The edges that order their endpoints; all when empty. Loop back edges never do, nor missing
  // (nullptr) inputs.
  std::function<bool(const Edge*)> edge_filter;
  TopoTieBreak tie = TopoTieBreak::kAny;
  // The start of the error for a cycle, followed by ": 'a' -> 'b' -> 'a' (N nodes cannot be
  // ordered)".
  std::string cycle_error = "Graph contains a cycle";
};

// The included nodes of `g`, each after the sources of the edges that order it. InvalidArgument
// (options.cycle_error) naming the nodes of one cycle when there is no such order.
StatusOr<std::vector<Node*>> TopologicalOrder(const Graph& g, const TopoOrderOptions& options = {});

}  // namespace dflow
