// Placement: assigns every node of a graph to one of the available devices, honouring the
// device each node requests (a full or partial name), the kernels each device has, and
// colocation.
//
// Colocation (TensorFlow's rules): a node that takes a reference input (Ref(T): Assign,
// AssignAdd, ApplyGradientDescent, ScatterUpdate, ...) or a resource handle (ReadVariableOp,
// AssignVariableOp, queue and stack ops, ...) runs on the device of the node that produces it
// (VariableV2, VarHandleOp, FIFOQueueV2, ...), transitively; so do nodes that name each other in
// a "_class" attr ("loc:@other"). A group's device is the merge of its members' requests and
// must have a kernel for every member. Two members requesting conflicting devices is an error
// naming both, unless soft placement is allowed, in which case the request of the member that
// comes first in the graph (the producer) wins.
//
// Nodes that request no device go to the first device in `devices` that has a kernel for them:
// callers list their preferred default device first.
#pragma once

#include <string>
#include <vector>

#include "framework/device.h"
#include "graph/graph.h"

namespace dflow {

struct PlacementOptions {
  // A node whose requested device matches none of `devices`, or none with a kernel for it, goes
  // to a device of the requested job/replica/task with a kernel for it, else to the first device
  // with a kernel, instead of failing; conflicting requests in a colocation group are resolved
  // in favour of the producer.
  bool allow_soft_placement = false;
  // Writes one line per node: "Add: (Add): /job:localhost/replica:0/task:0/device:CPU:0".
  bool log_device_placement = false;
};

// InvalidArgument naming the node, its requested device and the available devices when a request
// cannot be met, or naming both nodes and their devices when colocated nodes request conflicting
// devices; NotFound when no device has a kernel for a node.
Status PlaceGraph(Graph* graph, const std::vector<Device*>& devices, const PlacementOptions& options);

}  // namespace dflow
