// Graph building: Scope carries the graph, the name scope, the device and control dependencies;
// Operation and Output name the nodes and tensors built; Input accepts an Output or a literal.
//
//   Scope root = Scope::NewRootScope();
//   Output a = ops::Const(root, 3);
//   Output c = ops::Add(root, a, 5);          // literals become Consts
//   std::cout << c;                           // Tensor("Add:0", shape=(), dtype=int32)
//
// Building never throws. The first error (shape or dtype mismatch, bad name) is recorded in the
// scope — `scope.status()` — and every later op of that graph builds nothing; a Session run
// reports it too.
#pragma once

#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "dflow/core.h"
#include "dflow/attr_value.h"

namespace dflow {

class Graph;
class Node;
class Scope;

class Operation {
 public:
  Operation() = default;
  explicit Operation(Node* node) : node_(node) {}
  Node* node() const { return node_; }
  bool valid() const { return node_ != nullptr; }
  const std::string& name() const;
  const std::string& type() const;  // the op: "Add"
  int num_outputs() const;
  bool operator==(const Operation& o) const { return node_ == o.node_; }

 private:
  Node* node_ = nullptr;
};

class Output {
 public:
  Output() = default;
  Output(Node* node, int index) : op_(node), index_(index) {}
  Output(const Operation& op, int index) : op_(op), index_(index) {}

  bool valid() const { return op_.valid(); }
  Operation op() const { return op_; }
  Node* node() const { return op_.node(); }
  int index() const { return index_; }
  // "Add:0"
  std::string name() const;
  DType dtype() const;
  // The static shape inferred while building.
  PartialTensorShape shape() const;
  bool operator==(const Output& o) const { return op_ == o.op_ && index_ == o.index_; }

 private:
  Operation op_;
  int index_ = 0;
};

// Tensor("Add:0", shape=(), dtype=int32), as TensorFlow prints a symbolic tensor.
std::ostream& operator<<(std::ostream& os, const Output& o);
std::ostream& operator<<(std::ostream& os, const Operation& o);

// An op input: an Output, or a value that becomes a Const (scalars, strings, nested lists,
// Tensors). Literal numbers take the dtype of the op's other inputs where they share a type
// (x_float + 2 is a float add), else int → int32, float → float32, double → float64.
class Input {
 public:
  // A value given in code: a scalar, a (nested) list or a Tensor.
  struct Initializer {
    Initializer(int32_t v) : tensor(v), literal(true) {}             // NOLINT
    Initializer(int64_t v) : tensor(v), literal(true) {}             // NOLINT
    Initializer(float v) : tensor(v), literal(true) {}               // NOLINT
    Initializer(double v) : tensor(v), literal(true) {}              // NOLINT
    Initializer(bool v) : tensor(v), literal(true) {}                // NOLINT
    Initializer(const char* v) : tensor(v), literal(true) {}         // NOLINT
    Initializer(const std::string& v) : tensor(v), literal(true) {}  // NOLINT
    Initializer(const Tensor& t) : tensor(t) {}                      // NOLINT
    // Rows of equal shape and dtype: {1, 2}, {{1, 2}, {3, 4}}.
    Initializer(std::initializer_list<Initializer> rows);  // NOLINT
    template <typename T>
    Initializer(const std::vector<T>& v)  // NOLINT
        : literal(true) {
      TensorShape s;
      s.AddDimUnchecked(static_cast<int64_t>(v.size()));
      auto t = Tensor::FromValues<T>(absl::Span<const T>(v.data(), v.size()), s);
      if (t.ok()) tensor = *t;
      else status = t.status();
    }

    // The value as `dtype`, converting literal numbers (an int literal fed to a float).
    StatusOr<Tensor> AsType(DType dtype) const;

    Tensor tensor;
    Status status;
    bool literal = false;  // came from a C++ literal, so its dtype may adapt
  };

  Input(const Output& o) : output_(o) {}                                        // NOLINT
  Input(const Operation& op) : output_(op, 0) {}                                // NOLINT
  Input(const Initializer& init) : init_(init), is_init_(true) {}               // NOLINT
  Input(int32_t v) : Input(Initializer(v)) {}                                   // NOLINT
  Input(int64_t v) : Input(Initializer(v)) {}                                   // NOLINT
  Input(float v) : Input(Initializer(v)) {}                                     // NOLINT
  Input(double v) : Input(Initializer(v)) {}                                    // NOLINT
  Input(bool v) : Input(Initializer(v)) {}                                      // NOLINT
  Input(const char* v) : Input(Initializer(v)) {}                               // NOLINT
  Input(const std::string& v) : Input(Initializer(v)) {}                        // NOLINT
  Input(const Tensor& t) : Input(Initializer(t)) {}                             // NOLINT
  Input(std::initializer_list<Initializer> rows) : Input(Initializer(rows)) {}  // NOLINT

  bool is_initializer() const { return is_init_; }
  const Output& output() const { return output_; }
  const Initializer& initializer() const { return init_; }

 private:
  Output output_;
  Initializer init_{Tensor()};
  bool is_init_ = false;
};

// What a device function (Scope::WithDeviceFunction) is told about the op being built.
struct DeviceRequest {
  absl::string_view op;      // the op type: "VariableV2"
  absl::string_view name;    // the node's full name: "layer1/weights"
  absl::string_view device;  // the device requested so far ("" when none; see WithDeviceFunction)
  const AttrMap& attrs;      // the attrs given when building (a variable's "shape" and "dtype")
};
// Returns the device the op requests: a full or partial device name, "" for none. An error is
// recorded in the scope and the op is not built.
using DeviceFunction = std::function<StatusOr<std::string>(const DeviceRequest&)>;

class Scope {
 public:
  // A new, empty graph.
  static Scope NewRootScope();

  // Ops built in the result are named "<name>/Op" (nested scopes stack; a repeated name gets a
  // suffix, "<name>_1").
  Scope NewSubScope(const std::string& name) const;
  // The next op built with the result gets exactly this name (within the name scope); if it is
  // taken, the op fails with InvalidArgument.
  Scope WithOpName(const std::string& name) const;
  // Ops built in the result request this device ("/job:ps/task:0", "/cpu:0"). It replaces the
  // device of an enclosing WithDevice (but not the device functions of enclosing scopes).
  Scope WithDevice(const std::string& device) const;
  // Ops built in the result request the device that `fn` returns for them: TensorFlow's
  // `tf.device(function)`, e.g. train::ReplicaDeviceSetter. Nested devices apply from the inside
  // out, as in TensorFlow: the innermost WithDevice gives the device requested so far; each
  // device function, innermost first, is called with it and returns the next one; a WithDevice
  // made outside a device function only fills the fields (job, replica, task, device type and
  // index) that the function's result leaves unset, so fields set further in win.
  //   Scope s = root.WithDeviceFunction(train::ReplicaDeviceSetter(3));
  //   s.WithDevice("/job:ps/task:2")       -> ops of ps_ops go to /job:ps/task:2
  //   s.WithDevice("/device:CPU:1")        -> other ops go to /job:worker/device:CPU:1
  // Ops that take a reference or resource input (Assign, ScatterAdd, ReadVariableOp, ...) work
  // on the state of their producer: when a device function's result conflicts with the device
  // that producer requests, they request the producer's device instead (TensorFlow's placer
  // makes the same override). Ops that Variable::Create and the optimizers add for a variable
  // (initializer, Assign, read, slots) are colocated with it and see no device function. An
  // empty `fn` returns the scope unchanged. `fn` is called on the thread that builds the op.
  Scope WithDeviceFunction(DeviceFunction fn) const;
  // Ops built in the result run after `deps`.
  Scope WithControlDependencies(const std::vector<Operation>& deps) const;

  // The graph-level random seed: random ops without a seed of their own become deterministic.
  void SetRandomSeed(int64_t seed) const;

  Graph* graph() const;
  std::shared_ptr<Graph> graph_as_shared_ptr() const;
  Status status() const;
  bool ok() const { return status().ok(); }
  // Records an error (the first one wins).
  void UpdateStatus(const Status& s) const;

  // The name the next op of kind `default_name` would get in this scope.
  std::string GetUniqueNameForOp(const std::string& default_name) const;
  const std::string& name_prefix() const { return prefix_; }
  // The device of the innermost WithDevice made inside the innermost device function ("" when
  // none): device functions are applied only when an op is built.
  const std::string& device() const { return device_; }
  const std::vector<Operation>& control_dependencies() const { return control_deps_; }

  // Graph-wide lists kept for the client API (variable initializers, ...).
  struct Collections;
  Collections* collections() const;

 private:
  friend struct ScopeAccess;
  struct Shared;
  explicit Scope(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
  std::shared_ptr<Shared> shared_;
  std::string prefix_;   // "layer1/"
  std::string op_name_;  // set by WithOpName
  std::string device_;
  struct DeviceFunctionLevel;  // a device function and the device set outside it
  std::vector<std::shared_ptr<const DeviceFunctionLevel>> device_functions_;  // outermost first
  std::vector<Operation> control_deps_;
};

}  // namespace dflow

template <>
struct std::hash<dflow::Output> {
  size_t operator()(const dflow::Output& o) const noexcept {
    return std::hash<const void*>()(o.node()) * 31 + static_cast<size_t>(o.index());
  }
};
