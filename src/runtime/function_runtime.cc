#include "runtime/function_runtime.h"

#include "framework/cancellation.h"
#include "graph/graph_def.h"
#include "proto/graph.pb.h"
#include "runtime/executor.h"

namespace dflow {
namespace {

class FunctionLibraryRuntimeImpl;

class Function : public InstantiatedFunction {
 public:
  Function(std::string name, std::vector<DType> args, std::vector<DType> rets, std::unique_ptr<Executor> executor,
           std::shared_ptr<FunctionLibraryRuntimeImpl> runtime)
      : name_(std::move(name)),
        args_(std::move(args)),
        rets_(std::move(rets)),
        executor_(std::move(executor)),
        runtime_(std::move(runtime)) {}

  const std::string& name() const override { return name_; }
  const std::vector<DType>& arg_types() const override { return args_; }
  const std::vector<DType>& ret_types() const override { return rets_; }
  void RunAsync(const Options& options, std::vector<Tensor> args, DoneCallback done) const override;

 private:
  std::string name_;
  std::vector<DType> args_, rets_;
  std::unique_ptr<Executor> executor_;
  std::shared_ptr<FunctionLibraryRuntimeImpl> runtime_;
};

class FunctionLibraryRuntimeImpl : public FunctionLibraryRuntime,
                                   public std::enable_shared_from_this<FunctionLibraryRuntimeImpl> {
 public:
  FunctionLibraryRuntimeImpl(Device* device, const FunctionLibraryDefinition& library)
      : device_(device), library_(library) {}

  Device* device() const override { return device_; }

  StatusOr<std::shared_ptr<const InstantiatedFunction>> Instantiate(const std::string& name) override {
    const proto::FunctionDef* fdef = library_.Find(name);
    if (fdef == nullptr) return errors::NotFound("Function '", name, "' is not in the graph's function library");
    proto::GraphDef def;
    RETURN_IF_ERROR(FunctionDefToGraphDef(*fdef, &def));
    auto graph = std::make_unique<Graph>();
    graph->library() = library_;
    Status s = ImportGraphDef(def, graph.get());
    if (!s.ok()) return errors::Annotate(s, absl::StrCat("Function '", name, "': "));
    for (Node* n : graph->nodes()) n->set_assigned_device(device_->name());
    std::vector<DType> args, rets;
    for (const auto& a : fdef->signature().input_arg()) args.push_back(static_cast<DType>(a.type()));
    for (const auto& r : fdef->signature().output_arg()) rets.push_back(static_cast<DType>(r.type()));
    ExecutorParams params;
    params.device = device_;
    FunctionLibraryRuntime* self = this;
    params.create_kernel = [self, device = device_](const Node& n) -> StatusOr<std::shared_ptr<OpKernel>> {
      ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k,
                       KernelRegistry::Global()->CreateKernel(device, device->device_type(), n.props_ptr(), self));
      return std::shared_ptr<OpKernel>(std::move(k));
    };
    StatusOr<std::unique_ptr<Executor>> ex = Executor::Create(std::move(params), std::move(graph));
    if (!ex.ok()) return errors::Annotate(ex.status(), absl::StrCat("Function '", name, "': "));
    return std::shared_ptr<const InstantiatedFunction>(
        std::make_shared<Function>(name, std::move(args), std::move(rets), std::move(ex).value(), shared_from_this()));
  }

 private:
  Device* device_;
  const FunctionLibraryDefinition library_;
};

// What one call shares with its executor until both are done.
struct Call {
  Call(std::vector<Tensor> args, size_t num_rets) : frame(std::move(args), num_rets) {}
  CallFrame frame;
  CancellationManager cancellation;
};

void Function::RunAsync(const Options& options, std::vector<Tensor> args, DoneCallback done) const {
  if (args.size() != args_.size()) {
    done(errors::InvalidArgument("Function '", name_, "' takes ", args_.size(), " arguments but got ", args.size()),
         {});
    return;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].dtype() != args_[i]) {
      done(errors::InvalidArgument("Function '", name_, "': argument ", i, " is ", DTypeString(args[i].dtype()),
                                   " but the function takes ", DTypeString(args_[i])),
           {});
      return;
    }
  }
  auto call = std::make_shared<Call>(std::move(args), rets_.size());
  // The call has a cancellation of its own, cancelled with the caller's: a failing node cancels
  // its own call, never the caller's step.
  CancellationManager* parent = options.cancellation;
  CancellationManager::Token token = 0;
  if (parent != nullptr) {
    token = parent->NewToken();
    if (!parent->RegisterCallback(token, [call] { call->cancellation.StartCancel(); })) {
      call->cancellation.StartCancel();
      parent = nullptr;
    }
  }
  Executor::Args a;
  a.step.step_id = options.step_id;
  a.step.device = runtime_->device();
  a.step.call_frame = &call->frame;
  a.step.cancellation = &call->cancellation;
  a.step.function_library = runtime_.get();
  a.step.memory_budget = options.memory_budget;
  executor_->RunAsync(a, [call, parent, token, done = std::move(done), name = name_](const Status& s,
                                                                                     std::vector<NodeExecStats>) {
    if (parent != nullptr) parent->DeregisterCallback(token);
    if (!s.ok()) {
      done(errors::Annotate(s, absl::StrCat("In function '", name, "': ")), {});
      return;
    }
    std::vector<Tensor> rets = call->frame.TakeRetvals();
    for (size_t i = 0; i < rets.size(); ++i) {
      if (!rets[i].IsInitialized()) {
        done(errors::Internal("Function '", name, "' produced no value for result ", i), {});
        return;
      }
    }
    done(absl::OkStatus(), std::move(rets));
  });
}

}  // namespace

std::shared_ptr<FunctionLibraryRuntime> NewFunctionLibraryRuntime(Device* device,
                                                                  const FunctionLibraryDefinition& library) {
  return std::make_shared<FunctionLibraryRuntimeImpl>(device, library);
}

}  // namespace dflow
