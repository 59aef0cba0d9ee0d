// OpKernel: the computation of one node on one device, and OpKernelContext, what a kernel sees
// while it runs (inputs, outputs, step state). Kernels are registered per (op, device type,
// type constraints) and created once per node and executor (stateful ops: once per session).
//
// A kernel reports bad input through ctx->SetStatus(InvalidArgument naming the op and shapes),
// never by crashing. Compute may run concurrently for different steps: kernels keep no mutable
// state outside their own locks.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "framework/call_frame.h"
#include "framework/node_properties.h"
#include "framework/variable.h"
#include "tensor/memory_budget.h"

namespace dflow {

class CancellationManager;
class Device;
class FunctionLibraryRuntime;
class Rendezvous;

// The value on one edge: a tensor, or for Ref(T) edges the variable itself.
struct TensorValue {
  Tensor tensor;
  std::shared_ptr<Var> ref;
  // Instead of `tensor`: a value its producer keeps alive and unchanged for as long as the
  // executor exists (a Const's), read in place, so that passing it to many consumers costs no
  // reference counting. A kernel that keeps it copies it (a Tensor copy shares the buffer).
  const Tensor* borrowed = nullptr;
  bool is_dead = false;  // on untaken branches of control flow
};

// What every kernel of one step shares.
struct StepParams {
  int64_t step_id = 0;
  Device* device = nullptr;
  // Container for stateful resources of nodes that name none.
  std::string default_container;
  // Where the resources that TensorFlow keeps per session go when they have no shared_name
  // (queues, dataset iterators, gradient accumulators): a worker serving remote sessions keeps
  // one container per session ("__session_<handle>") and drops it when the session closes.
  // Empty: they go where shared ones do (an in-process session keeps them per graph).
  std::string session_container;
  CallFrame* call_frame = nullptr;
  Rendezvous* rendezvous = nullptr;
  CancellationManager* cancellation = nullptr;
  // Runs functions of the step's graph (null where the graph has none to run). Valid during
  // the step only: kernels that keep a function instantiate it at construction.
  FunctionLibraryRuntime* function_library = nullptr;
  // Cancelled when the session that runs the step closes (null when it cannot say). Resources
  // with background work (dataset iterators) stop it then.
  std::shared_ptr<CancellationManager> session_cancellation;
  // Charged with every buffer that kernels allocate through their OpKernelContext, until it is
  // freed (tensor/memory_budget.h); an allocation past its limit fails the kernel with
  // ResourceExhausted. Null: nothing is counted (in-process sessions).
  std::shared_ptr<MemoryBudget> memory_budget;
};

class OpKernelConstruction {
 public:
  OpKernelConstruction(Device* device, std::shared_ptr<const NodeProperties> props,
                       FunctionLibraryRuntime* function_library = nullptr)
      : device_(device), props_(std::move(props)), function_library_(function_library) {}

  const NodeProperties& node() const { return *props_; }
  std::shared_ptr<const NodeProperties> props() const { return props_; }
  Device* device() const { return device_; }
  // Instantiates the functions that the node's "func" attrs name; null when the creator of the
  // kernel has no function library (the kernel then reports Unimplemented). Valid during
  // construction only.
  FunctionLibraryRuntime* function_library() const { return function_library_; }
  template <typename T>
  Status GetAttr(absl::string_view name, T* out) const {
    return dflow::GetAttr(props_->attrs, name, out);
  }
  void SetStatus(const Status& s) {
    if (status_.ok()) status_ = s;
  }
  const Status& status() const { return status_; }

 private:
  Device* device_;
  std::shared_ptr<const NodeProperties> props_;
  FunctionLibraryRuntime* function_library_;
  Status status_;
};

class OpKernelContext;
class AsyncOpKernel;

class OpKernel {
 public:
  explicit OpKernel(OpKernelConstruction* ctx) : props_(ctx->props()) {}
  virtual ~OpKernel() = default;

  virtual void Compute(OpKernelContext* ctx) = 0;
  virtual AsyncOpKernel* AsAsync() { return nullptr; }
  // Expensive kernels are handed to another thread when other work is ready at the same time;
  // cheap ones run inline on the thread that made them ready.
  virtual bool IsExpensive() const { return false; }
  // A kernel whose only output is always this same value, which lives as long as the kernel
  // (Const): the executor hands it to consumers without running Compute or counting references.
  virtual const Tensor* const_value() const { return nullptr; }

  const std::string& name() const { return props_->name; }
  const std::string& type_string() const { return props_->op; }
  const NodeProperties& node() const { return *props_; }
  int num_inputs() const { return static_cast<int>(props_->input_types.size()); }
  int num_outputs() const { return static_cast<int>(props_->output_types.size()); }
  DType input_type(int i) const { return props_->input_types[i]; }
  DType output_type(int i) const { return props_->output_types[i]; }

 private:
  std::shared_ptr<const NodeProperties> props_;
};

// A kernel that finishes later (a Recv, a blocking dequeue): it must call `done` exactly once.
class AsyncOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  using DoneCallback = std::function<void()>;
  virtual void ComputeAsync(OpKernelContext* ctx, DoneCallback done) = 0;
  AsyncOpKernel* AsAsync() override { return this; }
  void Compute(OpKernelContext* ctx) final;  // not used: the executor calls ComputeAsync
};

class OpKernelContext {
 public:
  OpKernelContext(const StepParams* step, OpKernel* kernel, TensorValue* inputs, int num_inputs)
      : step_(step), kernel_(kernel), inputs_(inputs), num_inputs_(num_inputs), outputs_(kernel->num_outputs()) {}

  const StepParams& step() const { return *step_; }
  OpKernel& op_kernel() const { return *kernel_; }
  const std::string& node_name() const { return kernel_->name(); }

  int num_inputs() const { return num_inputs_; }
  const Tensor& input(int i) const { return inputs_[i].borrowed != nullptr ? *inputs_[i].borrowed : inputs_[i].tensor; }
  // The variable behind a Ref(T) input; nullptr for value inputs.
  Var* input_ref(int i) const { return inputs_[i].ref.get(); }
  const std::shared_ptr<Var>& input_ref_ptr(int i) const { return inputs_[i].ref; }
  bool input_is_dead(int i) const { return inputs_[i].is_dead; }

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // Allocates output i with the kernel's declared output type; the values are uninitialized.
  // Charged to the step's memory budget, if any (ResourceExhausted past its limit).
  Status allocate_output(int i, const TensorShape& shape, Tensor** out);
  // A scratch tensor for the kernel's own use, charged like an output; uninitialized values.
  Status allocate_temp(DType type, const TensorShape& shape, Tensor* out);
  // Output `output` takes over the buffer of the first value input among `candidates` that
  // nobody else holds (no other tensor, slot, variable, feed or fetch shares it) and that has the
  // output's type (a number type or bool) and as many elements as `shape`; otherwise it is
  // allocated as allocate_output does. The input stays readable through input(i): it is the same
  // memory, so a kernel that forwards must read each element before it writes the same element,
  // and write no element it still has to read (element-wise kernels do). Sets *forwarded_from,
  // if given, to the input taken, or -1.
  Status forward_input_or_allocate_output(std::initializer_list<int> candidates, int output, const TensorShape& shape,
                                          Tensor** out, int* forwarded_from = nullptr);
  void set_output(int i, Tensor t) { outputs_[i].tensor = std::move(t); }
  void set_output_ref(int i, std::shared_ptr<Var> v) { outputs_[i].ref = std::move(v); }
  absl::InlinedVector<TensorValue, 2>& outputs() { return outputs_; }

  void SetStatus(const Status& s) {
    if (status_.ok() && !s.ok()) status_ = s;
  }
  const Status& status() const { return status_; }

 private:
  const StepParams* step_;
  OpKernel* kernel_;
  TensorValue* inputs_;
  int num_inputs_;
  absl::InlinedVector<TensorValue, 2> outputs_;
  Status status_;
};

// Sets the status and returns from Compute when `cond` does not hold.
#define OP_REQUIRES(ctx, cond, status) \
  do {                                 \
    if (!(cond)) {                     \
      (ctx)->SetStatus(status);        \
      return;                          \
    }                                  \
  } while (0)

#define OP_REQUIRES_OK(ctx, expr) \
  do {                            \
    ::absl::Status _s = (expr);   \
    if (!_s.ok()) {               \
      (ctx)->SetStatus(_s);       \
      return;                     \
    }                             \
  } while (0)

#define OP_REQUIRES_ASSIGN(ctx, lhs, rexpr)                  \
  auto DFLOW_CONCAT(_or_, __LINE__) = (rexpr);               \
  if (!DFLOW_CONCAT(_or_, __LINE__).ok()) {                  \
    (ctx)->SetStatus(DFLOW_CONCAT(_or_, __LINE__).status()); \
    return;                                                  \
  }                                                          \
  lhs = std::move(DFLOW_CONCAT(_or_, __LINE__)).value()

// ---- Kernel registration ----

using KernelFactory = std::function<std::unique_ptr<OpKernel>(OpKernelConstruction*)>;

class KernelBuilder {
 public:
  explicit KernelBuilder(std::string op) : op_(std::move(op)) {}
  KernelBuilder& Device(std::string type) {
    device_type_ = std::move(type);
    return *this;
  }
  KernelBuilder& TypeConstraint(std::string attr, DType t) {
    constraints_.push_back({std::move(attr), t});
    return *this;
  }
  template <typename T>
  KernelBuilder& TypeConstraint(std::string attr) {
    return TypeConstraint(std::move(attr), DTypeOf<T>::value);
  }

 private:
  friend class KernelRegistry;
  std::string op_;
  std::string device_type_ = "CPU";
  std::vector<std::pair<std::string, DType>> constraints_;
};

class KernelRegistry {
 public:
  static KernelRegistry* Global();
  void Register(const KernelBuilder& b, KernelFactory factory);
  // Creates the kernel for `props` on `device`. NotFound names the op, the node, its type attrs
  // and the kernels that are registered; other errors come from the kernel's constructor.
  // `function_library` (may be null) is what the kernel sees as its construction's.
  StatusOr<std::unique_ptr<OpKernel>> CreateKernel(Device* device, const std::string& device_type,
                                                   std::shared_ptr<const NodeProperties> props,
                                                   FunctionLibraryRuntime* function_library = nullptr) const;
  bool HasKernel(const std::string& device_type, const NodeProperties& props) const;
  // "CPU: T=float" lines for `dflow ops`.
  std::vector<std::string> DescribeKernels(const std::string& op) const;

 private:
  struct Entry {
    std::string device_type;
    std::vector<std::pair<std::string, DType>> constraints;
    KernelFactory factory;
  };
  const Entry* Find(const std::string& device_type, const NodeProperties& props) const;
  mutable std::mutex mu_;
  std::map<std::string, std::vector<Entry>, std::less<>> kernels_;
};

// Registers kernel class K for builder `b`.
template <typename K>
void RegisterKernel(const KernelBuilder& b) {
  KernelRegistry::Global()->Register(b, [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
    return std::make_unique<K>(c);
  });
}

}  // namespace dflow
