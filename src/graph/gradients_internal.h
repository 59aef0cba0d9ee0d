// Internals of automatic differentiation shared by gradients.cc (the reverse pass) and
// while_gradients.cc (the backward loop of a while loop).
#pragma once

#include <map>
#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graph/cond_context.h"
#include "graph/control_flow_info.h"
#include "graph/gradients.h"

namespace dflow {
namespace grad_internal {

// (node id, output index) -> the gradient terms that flowed there; summed when consumed.
using GradMap = std::map<std::pair<int, int>, std::vector<NodeOut>>;

class WhileGradient;  // the gradient of one while loop while it is being built (while_gradients.cc)

struct BackpropState {
  Graph* graph;
  ControlFlowInfo cf;  // of the graph as it was before any gradient node was added
  GraphBuilder root;   // "gradients/", on `device`
  std::string device;  // for gradient nodes whose forward node requested no device
  std::string DeviceFor(const Node* forward) const {
    return forward->requested_device().empty() ? device : forward->requested_device();
  }
  int limit() const { return static_cast<int>(cf.frame_of.size()); }

  // The Cond branches of the forward graph, analysed on first use.
  const CondInfo& conds() {
    if (cond_info == nullptr) cond_info = std::make_unique<CondInfo>(BuildCondInfo(*graph, cf));
    return *cond_info;
  }
  std::unique_ptr<CondInfo> cond_info;
  // Forward frame -> the gradient of that loop being built, so that the gradient of a loop
  // nested in it can push, pop and enter through it.
  std::map<int, WhileGradient*> loops;
  // Nodes added to the forward side (counters, stacks, pushes and the Enters that bring stack
  // handles into forward frames): the rewrite of a backward loop body leaves them alone.
  std::unordered_set<int> forward_added;
};

// One reverse pass over the nodes of frame `level` (loops below it are handled as units):
// the gradient of sum(ys * grad_ys) with respect to each x, null where none flows. Gradients
// neither pass through nor into the nodes marked in `blocked` (indexed by node id; may be
// empty). `from_x_out`, when given, receives which nodes the xs reach.
Status Backprop(BackpropState* st, int level, const std::vector<NodeOut>& ys, const std::vector<NodeOut>& grad_ys,
                const std::vector<NodeOut>& xs, const std::vector<char>& blocked, std::vector<NodeOut>* x_grads);

// The gradient through the while loop of frame `frame` (a child of `level`): from the
// gradients that reached its Exit nodes (in `grads`), builds the backward loop and adds the
// gradients of the tensors that enter the loop to `grads`. `from_x`: nodes the xs reach.
Status AddWhileLoopGradient(BackpropState* st, int level, int frame, const std::vector<char>& from_x, GradMap* grads);

// Gradient helpers.
NodeOut ZerosLike(GraphBuilder* b, const NodeOut& x);
NodeOut SumTerms(GraphBuilder* b, const std::vector<NodeOut>& terms);

}  // namespace grad_internal
}  // namespace dflow
