// The graph one step runs: only the nodes that the fetches and targets need, with every fed
// tensor read from an _Arg node and every fetched tensor written by a _Retval node.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace dflow {

struct StepGraph {
  std::unique_ptr<Graph> graph;
  // The nodes of the original graph that the step will run, sorted by name.
  std::vector<std::string> kept_nodes;
};

// Errors: NotFound for a feed, fetch or target that names no tensor or node (or an output index
// out of range); InvalidArgument for a tensor fed twice, or a cycle among the needed nodes.
StatusOr<StepGraph> BuildStepGraph(const Graph& full, const std::vector<std::string>& feeds,
                                   const std::vector<std::string>& fetches, const std::vector<std::string>& targets);

// Resolves "node:index" in `g` (NotFound with the name when missing).
StatusOr<NodeOut> ResolveTensor(const Graph& g, const std::string& name);

}  // namespace dflow
