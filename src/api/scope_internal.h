// Internals of the client API shared by its .cc files.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dflow/scope.h"
#include "graph/graph.h"

namespace dflow {

struct Scope::Collections {
  std::vector<Operation> initializers;      // one Assign per variable, for GlobalVariablesInitializer
  std::vector<Output> trainable_variables;  // the ref() of each Variable::Create, for optimizers
  std::vector<Output> summaries;            // summary::Scalar and Histogram outputs, for summary::MergeAll
  // TensorFlow's LOCAL_VARIABLES (Variable::CreateLocal): per-session state such as metric
  // accumulators, neither trainable nor global (so never checkpointed).
  std::vector<Output> local_variables;
  std::vector<Operation> local_initializers;
  // TensorFlow's TABLE_INITIALIZERS: the initializers of lookup tables (dflow/lookup_ops.h).
  std::vector<Operation> table_initializers;
  // The ref() of every variable of the graph, trainable or not (global_step, optimizer slots,
  // the parts of partitioned variables): what a Saver saves by default.
  std::vector<Output> global_variables;
  // Where a part of a PartitionedVariable lies in the whole (keyed by the part's VariableV2), so
  // that a Saver writes it as a slice of the whole under the whole's name, as TensorFlow does.
  struct PartInfo {
    std::string full_name;
    TensorShape full_shape;
    std::vector<int64_t> offset;  // per dimension
  };
  std::map<const Node*, PartInfo> partitions;
  bool container_cleanup_registered = false;
};

struct Scope::DeviceFunctionLevel {
  DeviceFunction fn;
  std::string outer_device;  // the WithDevice in effect where the function was installed
};

struct Scope::Shared {
  std::shared_ptr<Graph> graph;
  Collections collections;
};

struct ScopeAccess {
  // A scope whose ops are named "<prefix>Op" exactly (prefix ends with '/' or is empty).
  static Scope WithPrefix(const Scope& s, const std::string& prefix) {
    Scope r = s;
    r.prefix_ = prefix;
    r.op_name_.clear();
    return r;
  }
  static Scope WithoutControlDependencies(const Scope& s) {
    Scope r = s;
    r.control_deps_.clear();
    return r;
  }
  // A scope whose ops run where `node` was asked to run: its requested device, and no device
  // functions (TensorFlow's colocate_with). Ops a variable owns are built this way.
  static Scope ColocatedWith(const Scope& s, const Node* node) {
    Scope r = s;
    r.device_functions_.clear();
    r.device_ = node->requested_device();
    return r;
  }
  static bool HasDeviceFunctions(const Scope& s) { return !s.device_functions_.empty(); }
  // The device an op built in `s` requests: the innermost WithDevice, then each device function
  // from the inside out (see Scope::WithDeviceFunction). Errors name the node and the op.
  static StatusOr<std::string> DeviceForOp(const Scope& s, absl::string_view op, absl::string_view name,
                                           const AttrMap& attrs);
  // A root scope that builds into `graph`, which the caller keeps alive (for tests that build
  // client ops inside graphs made elsewhere, such as the gradient checker's).
  static Scope ForGraph(Graph* graph) {
    auto shared = std::make_shared<Scope::Shared>();
    shared->graph = std::shared_ptr<Graph>(std::shared_ptr<Graph>(), graph);  // not owned
    return Scope(std::move(shared));
  }
  // The scope a node was built in (its name scope and device), for operators on Outputs.
  // Empty when every scope of the graph is gone.
  static std::optional<Scope> ScopeOfNode(const Node* n);
};

}  // namespace dflow
