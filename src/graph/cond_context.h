// Which branch of which Cond each value of a graph is computed in. The gradient of a while loop
// uses it: a value computed inside a Cond branch of the loop body exists only in the iterations
// that take that branch, so it is pushed only there and its pop is guarded by the branch's
// predicate (see while_gradients.cc).
//
// A Cond is recognised by its Switch nodes: a Switch whose predicate is not a LoopCond opens
// the branches (predicate, false) and (predicate, true) for its two outputs; a Merge without a
// loop back edge closes them again. Every other node runs in the deepest branch among its
// inputs (control inputs included, so the ops that hang off a branch pivot are in the branch).
// Branches do not cross loop frames: the values inside a loop are unconditional relative to
// the loop (the whole loop is dead when its branch is not taken), and the Exits of a loop are
// in the branch its Enters were in.
#pragma once

#include <array>
#include <vector>

#include "graph/control_flow_info.h"

namespace dflow {

struct CondInfo {
  struct Branch {
    NodeOut pred;    // the predicate of the Cond
    int branch = 0;  // 0: the false branch (Switch output 0), 1: the true branch
    int parent = 0;  // the branch the Cond itself is in (0: none)
    int depth = 0;   // number of enclosing branches, this one included
  };
  std::vector<Branch> branches;            // branches[0]: not inside any Cond
  std::vector<std::array<int, 2>> out_of;  // node id -> branch of output 0 and of outputs >= 1

  // The branch the value `v` is computed in (0 when none, or when v is not a node of the
  // analysed graph).
  int BranchOf(const NodeOut& v) const {
    if (v.node == nullptr || v.node->id() >= static_cast<int>(out_of.size())) return 0;
    return out_of[v.node->id()][v.index == 0 ? 0 : 1];
  }
};

// Analyses the nodes of `g` that `cf` (its loop structure) covers; nodes added since are left
// out (branch 0). Never fails on a graph BuildControlFlowInfo accepted.
CondInfo BuildCondInfo(const Graph& g, const ControlFlowInfo& cf);

}  // namespace dflow
