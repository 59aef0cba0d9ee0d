// The loop structure of a graph: which control-flow frame every node runs in, as the executor
// will see it (an Enter's output is in its loop's frame, an Exit's in the parent's), and for
// each loop its Enter and Exit nodes. Automatic differentiation uses it to treat a while loop as
// one unit and to build its backward loop.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/topo_order.h"

namespace dflow {

struct ControlFlowInfo {
  struct Frame {
    std::string name;           // the frame_name of its Enter nodes ("" for the root)
    int parent = -1;            // index into frames; -1 for the root
    std::vector<Node*> enters;  // loop variables and invariants (is_constant)
    std::vector<Node*> exits;
  };
  std::vector<Frame> frames;   // frames[0] is the root
  std::vector<int> frame_of;   // node id -> the frame the node runs in (-1: no node)
  std::vector<int> out_frame;  // node id -> the frame of its outputs
  std::vector<Node*> order;    // the nodes in a topological order (loop back edges left out)

  // The frame whose parent is `level` and that contains frame `f` (itself or an ancestor), or
  // -1 when f is not below level.
  int ChildOf(int level, int f) const;
  // True when frame f is `level` or below it.
  bool Within(int level, int f) const { return f == level || ChildOf(level, f) >= 0; }
};

// Errors: a cycle not closed by a NextIteration -> Merge edge.
StatusOr<ControlFlowInfo> BuildControlFlowInfo(const Graph& g);

}  // namespace dflow
