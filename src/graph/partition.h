// Graph partitioning: splits a placed graph into one graph per location (a device or a task),
// replacing every edge that crosses locations with a _Send in the source location and a _Recv
// in the destination, which meet in the step's Rendezvous under the same key.
//
// Data edges: one _Send/_Recv pair per (tensor, destination location), however many consumers
// the tensor has there. Control edges: the source location sends a dummy scalar produced by a
// Const that depends on the source node; the _Recv of it becomes a control input of the
// destination node. Dead tensors travel as dead: a _Send runs even when its input is dead and
// its _Recv then outputs a dead tensor, so Cond branches may span locations.
//
// Edges that cross locations inside a while loop are not supported (Unimplemented naming the
// edge): the loop's nodes must share one location.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "graph/graph.h"
#include "proto/graph.pb.h"

namespace dflow {

struct PartitionOptions {
  // The location of a node; nodes of one location form one partition. Typically the node's
  // assigned device, or its task.
  std::function<std::string(const Node&)> node_to_loc;
  // The incarnation of a device (a number that changes when its task restarts); it becomes part
  // of the rendezvous keys, so that a restarted task does not accept stale tensors.
  std::function<uint64_t(const std::string& device)> get_incarnation;
};

// Every node of `g` must have an assigned device. Fills `partitions` (location -> GraphDef whose
// NodeDefs carry the assigned device in their `device` field). Errors: a node without an
// assigned device (InvalidArgument), a crossing edge inside a loop (Unimplemented).
Status PartitionGraph(const PartitionOptions& options, const Graph& g,
                      std::map<std::string, proto::GraphDef>* partitions);

}  // namespace dflow
