// Graph: nodes (operations, variables, constants) connected by edges (tensors and control
// dependencies). Building a graph computes nothing.
//
// Graph::AddNode validates a node completely against its OpDef — attrs and their defaults,
// input count and dtypes, type attrs inferred from inputs — and runs the op's shape function,
// so every Node in a Graph is well-formed. Errors name the node and the op.
//
// A Graph is built by one thread at a time; concurrent readers are fine while nobody adds.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <unordered_map>
#include <vector>

#include "framework/node_properties.h"

namespace dflow {

class FunctionLibraryDefinition;
class Graph;
class Node;
constexpr int kControlSlot = -1;

struct Edge {
  Node* src;
  int src_output;  // kControlSlot for a control edge
  Node* dst;
  int dst_input;  // kControlSlot for a control edge
  bool IsControlEdge() const { return src_output == kControlSlot; }
};

class Node {
 public:
  int id() const { return id_; }
  Graph* graph() const { return graph_; }
  const std::string& name() const { return props_->name; }
  const std::string& op() const { return props_->op; }
  const OpDef& op_def() const { return *props_->op_def; }
  const NodeProperties& props() const { return *props_; }
  std::shared_ptr<const NodeProperties> props_ptr() const { return props_; }
  const AttrMap& attrs() const { return props_->attrs; }
  bool IsStateful() const { return props_->op_def->is_stateful; }

  int num_inputs() const { return static_cast<int>(props_->input_types.size()); }
  int num_outputs() const { return static_cast<int>(props_->output_types.size()); }
  DType input_type(int i) const { return props_->input_types[i]; }
  DType output_type(int i) const { return props_->output_types[i]; }
  const PartialTensorShape& output_shape(int i) const { return output_shapes_[i]; }
  // Refines output `i`'s static shape with what the client knows (TensorFlow's set_shape): ops
  // built afterwards infer from the merged shape. InvalidArgument when the two are incompatible.
  Status RefineOutputShape(int i, const PartialTensorShape& s) {
    StatusOr<PartialTensorShape> merged = output_shapes_[i].MergeWith(s);
    if (!merged.ok()) return merged.status();
    output_shapes_[i] = *std::move(merged);
    return absl::OkStatus();
  }

  // Data edges indexed by input slot (nullptr while a back edge is missing), then control edges.
  const std::vector<const Edge*>& data_inputs() const { return data_inputs_; }
  const std::vector<const Edge*>& control_inputs() const { return control_inputs_; }
  const std::vector<const Edge*>& out_edges() const { return out_edges_; }

  const std::string& requested_device() const { return props_->requested_device; }
  const std::string& assigned_device() const { return props_->assigned_device; }
  void set_assigned_device(std::string d);

  // The value of a Const node, else nullptr.
  const Tensor* const_value() const { return const_value_; }

 private:
  friend class Graph;
  int id_ = -1;
  Graph* graph_ = nullptr;
  std::shared_ptr<NodeProperties> props_;
  std::vector<PartialTensorShape> output_shapes_;
  std::vector<const Edge*> data_inputs_;
  std::vector<const Edge*> control_inputs_;
  std::vector<const Edge*> out_edges_;
  const Tensor* const_value_ = nullptr;
};

// One output of a node: the tensor "name:index".
struct NodeOut {
  Node* node = nullptr;
  int index = 0;
};

// Everything that describes a node to be added.
struct NodeSpec {
  std::string name;
  std::string op;
  std::vector<NodeOut> inputs;  // flat, in the order of the OpDef's inputs (lists expanded)
  std::vector<Node*> control_inputs;
  AttrMap attrs;  // type attrs may be omitted where the inputs determine them
  std::string device;
};

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // A process-unique id, for containers and caches keyed by graph.
  uint64_t id() const { return id_; }

  // Validates and adds a node. Errors: NotFound for an unknown op; InvalidArgument for a bad or
  // duplicate name, unknown or mistyped attrs, wrong inputs or dtypes, and shape-function
  // failures — each naming the node and op.
  StatusOr<Node*> AddNode(NodeSpec spec);
  // Adds a control dependency: `dst` runs after `src`.
  Status AddControlEdge(Node* src, Node* dst);
  // Replaces data input `index` of `dst` with `src` (same value dtype). This is how loops are
  // closed: a Merge is built with a stand-in input, then given its NextIteration back edge.
  Status UpdateInput(Node* dst, int index, NodeOut src);
  // Removes `n` and every edge into or out of it; the data inputs it fed become missing
  // (nullptr) until UpdateInput gives them a new source. Its id is not reused (node(id) is then
  // nullptr) and its name becomes free. For graph rewrites (graph/op_fusion.h).
  Status RemoveNode(Node* n);

  Node* FindNode(absl::string_view name) const;
  // Node by id; nullptr for ids of removed nodes.
  Node* node(int id) const { return nodes_[id].get(); }
  int num_node_ids() const { return static_cast<int>(nodes_.size()); }
  int num_nodes() const { return num_nodes_; }
  // Live nodes in id order (which is a topological order for graphs built by AddNode).
  std::vector<Node*> nodes() const;

  // A name not yet used in this graph: `base`, else `base_1`, `base_2`, ...
  std::string UniqueName(absl::string_view base);
  // Names that differ only in case collide in UniqueName, as in TensorFlow's Python graphs (the
  // Python front end sets this; the C++ API keeps exact names).
  void set_case_insensitive_names(bool v) { case_insensitive_names_ = v; }
  bool IsNameUsed(absl::string_view name) const;

  // The graph-level random seed; ops with no seed of their own derive one from it.
  std::optional<int64_t> seed() const { return seed_; }
  void set_seed(std::optional<int64_t> s) { seed_ = s; }

  // The first error met while building through the client API (kept so that a later Run can
  // report it), OK otherwise.
  const Status& build_status() const { return build_status_; }
  // Returns the recorded error and forgets it, so that building can go on (the Python front end
  // raises each error as an exception where it happens, as TensorFlow does).
  Status TakeBuildError() {
    Status s = build_status_;
    build_status_ = absl::OkStatus();
    return s;
  }
  void RecordBuildError(const Status& s) {
    if (build_status_.ok()) build_status_ = s;
  }

  // State of the client API that built this graph (its Scope), held weakly.
  void set_client_state(std::weak_ptr<void> s) { client_state_ = std::move(s); }
  std::shared_ptr<void> client_state() const { return client_state_.lock(); }

  // The functions that nodes of this graph name in "func" attrs (see graph/function_library.h).
  FunctionLibraryDefinition& library() { return *library_; }
  const FunctionLibraryDefinition& library() const { return *library_; }

  // Runs `fn` when the graph is destroyed (e.g. to free the variables of its sessions).
  void AddDestructionCallback(std::function<void()> fn) { on_destroy_.push_back(std::move(fn)); }

 private:
  Status FillAttrsAndTypes(NodeSpec* spec, NodeProperties* props) const;
  const Edge* NewEdge(Node* src, int src_output, Node* dst, int dst_input);

  uint64_t id_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Edge>> edges_;
  std::unordered_map<std::string, Node*> by_name_;
  bool case_insensitive_names_ = false;
  std::unordered_map<std::string, int> name_counters_;
  int num_nodes_ = 0;
  std::optional<int64_t> seed_;
  Status build_status_;
  std::vector<std::function<void()>> on_destroy_;
  std::weak_ptr<void> client_state_;
  std::unique_ptr<FunctionLibraryDefinition> library_;
};

// Parses "node", "node:1" and "^node" (control). Returns false on a malformed name.
bool ParseTensorName(absl::string_view name, absl::string_view* node, int* index, bool* is_control);
// TensorFlow's node-name rule: [A-Za-z0-9.][A-Za-z0-9_.\-/]*
bool IsValidNodeName(absl::string_view name);

}  // namespace dflow
