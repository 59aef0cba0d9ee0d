// Running functions from kernels: FunctionLibraryRuntime instantiates a function of the graph's
// library (by name) on one device, and InstantiatedFunction runs it on tensors. Dataset kernels
// (map, filter, one-shot iterator factories) use it; the runtime layer implements it on top of
// the Executor (runtime/function_runtime.h). Kernels reach it through
// OpKernelConstruction::function_library() and StepParams::function_library.
//
// Ownership: an InstantiatedFunction is self-contained (it keeps what it needs alive), so a
// dataset may hold one beyond the session and step that made it. Thread-safety: both classes
// are thread-safe; one InstantiatedFunction may run many calls at once.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tensor/memory_budget.h"
#include "base/status.h"
#include "tensor/tensor.h"

namespace dflow {

class CancellationManager;
class Device;

class InstantiatedFunction {
 public:
  virtual ~InstantiatedFunction() = default;
  virtual const std::string& name() const = 0;
  virtual const std::vector<DType>& arg_types() const = 0;
  virtual const std::vector<DType>& ret_types() const = 0;

  struct Options {
    // Cancels the call: nodes not yet started are skipped and waiting kernels wake up. May be
    // null; must outlive the call.
    CancellationManager* cancellation = nullptr;
    int64_t step_id = 0;
    // Charged with the buffers the function's kernels allocate (StepParams::memory_budget); null:
    // nothing is counted.
    std::shared_ptr<MemoryBudget> memory_budget;
  };
  using DoneCallback = std::function<void(const Status&, std::vector<Tensor> rets)>;
  // Runs the function on `args` (InvalidArgument naming the function when their number or
  // dtypes do not match the signature). `done` is called exactly once, possibly on this thread
  // before RunAsync returns. The function must stay alive until then.
  virtual void RunAsync(const Options& options, std::vector<Tensor> args, DoneCallback done) const = 0;
  // Runs and waits. The wait ends when the call ends; a call whose kernels wait (none of the
  // dataset functions do) ends through options.cancellation.
  Status Run(const Options& options, std::vector<Tensor> args, std::vector<Tensor>* rets) const;
};

class FunctionLibraryRuntime {
 public:
  virtual ~FunctionLibraryRuntime() = default;
  // NotFound when the library has no such function; errors of the body (unknown ops, bad
  // attrs, missing kernels) name the function and the node.
  virtual StatusOr<std::shared_ptr<const InstantiatedFunction>> Instantiate(const std::string& name) = 0;
  virtual Device* device() const = 0;
};

}  // namespace dflow
