// Extending a graph by a GraphDef, as a session's Extend does: the one path both DirectSession
// and MasterSession take, so that a graph extended in-process and one extended through a master
// come out the same.
#pragma once

#include <memory>

#include "graph/graph.h"

namespace dflow {
namespace proto {
class GraphDef;
}  // namespace proto

// Appends `delta` to `def` (its nodes after def's, its library functions to def's library, its
// versions, when set, in place of def's) and imports the whole into a new Graph. On success
// def's library is the graph's, in which a function sent again collapses into one (as it does
// in the returned graph's library). On error (ImportGraphDef's) `def` is partly extended: pass
// a copy where the caller must keep its graph as it was.
//
// A null `def` stands for an empty GraphDef that the caller does not keep: `delta` is imported
// as it is, without a copy (for a first, possibly large, GraphDef).
StatusOr<std::unique_ptr<Graph>> ExtendGraphDef(const proto::GraphDef& delta, proto::GraphDef* def);

}  // namespace dflow
