#include "runtime/direct_session.h"

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "absl/strings/str_join.h"
#include "base/env.h"
#include "base/notification.h"
#include "framework/cancellation.h"
#include "graph/function_library.h"
#include "graph/graph_def.h"
#include "graph/graph_extension.h"
#include "graph/op_fusion.h"
#include "graph/placer.h"
#include "graph/subgraph.h"
#include "proto/graph.pb.h"
#include "runtime/executor.h"
#include "runtime/function_runtime.h"
#include "runtime/local_device.h"

namespace dflow {
namespace {

struct FeedInfo {
  std::string name;
  DType dtype;
  PartialTensorShape shape;
};

struct PreparedStep {
  std::unique_ptr<Executor> executor;
  std::vector<FeedInfo> feeds;
  std::shared_ptr<FunctionLibraryRuntime> function_library;  // of the first device
};

// What a step shares with its executor; it lives until both are done with it.
struct StepState {
  explicit StepState(std::vector<Tensor> args, size_t num_fetches) : frame(std::move(args), num_fetches) {}
  CallFrame frame;
  CancellationManager cancellation;
  Notification done;
  Status status;
  std::vector<NodeExecStats> stats;
};

class DirectSession : public Session {
 public:
  DirectSession(const SessionOptions& options, std::vector<Device*> devices)
      : options_(options), devices_(std::move(devices)) {}

  ~DirectSession() override { Close().IgnoreError(); }

  Status Create(const proto::GraphDef& def) override {
    std::lock_guard<std::mutex> l(mu_);
    if (graph_ != nullptr) return errors::FailedPrecondition("Session already has a graph: use Extend to add nodes");
    return ExtendLocked(def);
  }

  Status Extend(const proto::GraphDef& def) override {
    std::lock_guard<std::mutex> l(mu_);
    return ExtendLocked(def);
  }

  Status Run(const RunOptions& run_options, const std::vector<std::pair<std::string, Tensor>>& inputs,
             const std::vector<std::string>& output_names, const std::vector<std::string>& target_names,
             std::vector<Tensor>* outputs, RunMetadata* metadata) override;

  std::vector<std::string> ListDevices() const override {
    std::vector<std::string> out;
    for (Device* d : devices_) out.push_back(d->name());
    return out;
  }

  Status Close() override {
    std::vector<std::shared_ptr<StepState>> active;
    {
      std::lock_guard<std::mutex> l(mu_);
      closed_ = true;
      for (auto& w : active_steps_)
        if (auto s = w.lock()) active.push_back(std::move(s));
    }
    for (auto& s : active) s->cancellation.StartCancel();
    session_cancellation_->StartCancel();  // stops the background work of iterators it made
    return absl::OkStatus();
  }

 private:
  Status ExtendLocked(const proto::GraphDef& def);
  StatusOr<std::shared_ptr<PreparedStep>> Prepare(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                                  const std::vector<std::string>& outputs,
                                                  const std::vector<std::string>& targets);
  StatusOr<std::shared_ptr<OpKernel>> CreateKernel(const Node& n);
  // The function runtime of `device` over the current graph's library (under mu_).
  std::shared_ptr<FunctionLibraryRuntime> FunctionLibraryOf(Device* device);

  const SessionOptions options_;
  const std::vector<Device*> devices_;
  std::atomic<int64_t> next_step_id_{1};

  std::mutex mu_;
  bool closed_ = false;
  proto::GraphDef graph_def_;     // everything given so far
  std::unique_ptr<Graph> graph_;  // built from graph_def_
  std::unordered_map<std::string, std::shared_ptr<PreparedStep>> prepared_;
  std::vector<std::weak_ptr<StepState>> active_steps_;
  std::map<Device*, std::shared_ptr<FunctionLibraryRuntime>> function_libraries_;  // for graph_
  const std::shared_ptr<CancellationManager> session_cancellation_ = std::make_shared<CancellationManager>();

  std::mutex kernels_mu_;
  std::unordered_map<std::string, std::shared_ptr<OpKernel>> stateful_kernels_;  // by node name
};

Status DirectSession::ExtendLocked(const proto::GraphDef& def) {
  if (closed_) return errors::FailedPrecondition("Session has been closed");
  // Build the extended graph aside, so that a bad extension leaves the session as it was.
  proto::GraphDef merged = graph_def_;
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, ExtendGraphDef(def, &merged));
  graph_def_ = std::move(merged);
  graph_ = std::move(g);
  function_libraries_.clear();  // kernels made before keep the functions they instantiated
  return absl::OkStatus();
}

std::shared_ptr<FunctionLibraryRuntime> DirectSession::FunctionLibraryOf(Device* device) {
  auto& flr = function_libraries_[device];
  if (flr == nullptr) flr = NewFunctionLibraryRuntime(device, graph_->library());
  return flr;
}

StatusOr<std::shared_ptr<OpKernel>> DirectSession::CreateKernel(const Node& n) {
  Device* device = devices_[0];
  for (Device* d : devices_)
    if (d->name() == n.assigned_device()) device = d;
  // Called from Prepare, under mu_.
  FunctionLibraryRuntime* flr = FunctionLibraryOf(device).get();
  if (!n.IsStateful()) {
    ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k,
                     KernelRegistry::Global()->CreateKernel(device, device->device_type(), n.props_ptr(), flr));
    return std::shared_ptr<OpKernel>(std::move(k));
  }
  // Stateful kernels are shared by every executor of this session, so their state persists.
  std::lock_guard<std::mutex> l(kernels_mu_);
  auto it = stateful_kernels_.find(n.name());
  if (it != stateful_kernels_.end() && it->second->type_string() == n.op()) return it->second;
  ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k,
                   KernelRegistry::Global()->CreateKernel(device, device->device_type(), n.props_ptr(), flr));
  std::shared_ptr<OpKernel> shared(std::move(k));
  if (n.op() != "_Arg" && n.op() != "_Retval") stateful_kernels_[n.name()] = shared;
  return shared;
}

StatusOr<std::shared_ptr<PreparedStep>> DirectSession::Prepare(
    const std::vector<std::pair<std::string, Tensor>>& inputs, const std::vector<std::string>& outputs,
    const std::vector<std::string>& targets) {
  std::string key;
  for (const auto& in : inputs) absl::StrAppend(&key, in.first, ",");
  absl::StrAppend(&key, "->", absl::StrJoin(outputs, ","), "//", absl::StrJoin(targets, ","));
  std::lock_guard<std::mutex> l(mu_);
  if (closed_) return errors::FailedPrecondition("Session has been closed");
  if (graph_ == nullptr) return errors::FailedPrecondition("Session has no graph: call Create first");
  auto it = prepared_.find(key);
  if (it != prepared_.end()) return it->second;

  std::vector<std::string> feed_names;
  auto prepared = std::make_shared<PreparedStep>();
  for (const auto& in : inputs) {
    feed_names.push_back(in.first);
    ASSIGN_OR_RETURN(NodeOut t, ResolveTensor(*graph_, in.first));
    prepared->feeds.push_back({in.first, BaseType(t.node->output_type(t.index)), t.node->output_shape(t.index)});
  }
  ASSIGN_OR_RETURN(StepGraph step, BuildStepGraph(*graph_, feed_names, outputs, targets));
  PlacementOptions popts;
  popts.allow_soft_placement = options_.allow_soft_placement;
  popts.log_device_placement = options_.log_device_placement;
  RETURN_IF_ERROR(PlaceGraph(step.graph.get(), devices_, popts));
  if (options_.fuse_ops) RETURN_IF_ERROR(FuseOps(step.graph.get()).status());
  prepared->function_library = FunctionLibraryOf(devices_[0]);
  ExecutorParams params;
  params.device = devices_[0];
  params.create_kernel = [this](const Node& n) { return CreateKernel(n); };
  ASSIGN_OR_RETURN(prepared->executor, Executor::Create(std::move(params), std::move(step.graph)));
  prepared_[key] = prepared;
  return prepared;
}

Status DirectSession::Run(const RunOptions& run_options, const std::vector<std::pair<std::string, Tensor>>& inputs,
                          const std::vector<std::string>& output_names, const std::vector<std::string>& target_names,
                          std::vector<Tensor>* outputs, RunMetadata* metadata) {
  ASSIGN_OR_RETURN(std::shared_ptr<PreparedStep> prepared, Prepare(inputs, output_names, target_names));
  std::vector<Tensor> args;
  args.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const FeedInfo& f = prepared->feeds[i];
    const Tensor& v = inputs[i].second;
    if (v.dtype() != f.dtype) {
      return errors::InvalidArgument("Cannot feed value of type ", DTypeString(v.dtype()), " for tensor '", f.name,
                                     "', which has type ", DTypeString(f.dtype));
    }
    if (!f.shape.IsCompatibleWith(v.shape())) {
      return errors::InvalidArgument("Cannot feed value of shape ", v.shape().DebugString(), " for tensor '", f.name,
                                     "', which has shape ", f.shape.DebugString());
    }
    args.push_back(v);
  }
  auto state = std::make_shared<StepState>(std::move(args), output_names.size());
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return errors::FailedPrecondition("Session has been closed");
    active_steps_.erase(std::remove_if(active_steps_.begin(), active_steps_.end(),
                                       [](const std::weak_ptr<StepState>& w) { return w.expired(); }),
                        active_steps_.end());
    active_steps_.push_back(state);
  }
  // The caller's cancellation cancels this step; deregistered (waiting for a callback in flight)
  // before `state` can go away.
  CancellationManager::Token caller_token = -1;
  if (run_options.cancellation != nullptr) {
    caller_token = run_options.cancellation->NewToken();
    if (!run_options.cancellation->RegisterCallback(caller_token, [state] { state->cancellation.StartCancel(); })) {
      return errors::Cancelled("Run was cancelled before it started");
    }
  }
  struct Deregister {
    CancellationManager* cm;
    CancellationManager::Token token;
    ~Deregister() {
      if (cm != nullptr) cm->DeregisterCallback(token);
    }
  } deregister{run_options.cancellation, caller_token};
  Executor::Args args_e;
  args_e.step.step_id = next_step_id_.fetch_add(1);
  args_e.step.device = devices_[0];
  args_e.step.default_container = options_.default_container;
  args_e.step.call_frame = &state->frame;
  args_e.step.cancellation = &state->cancellation;
  args_e.step.function_library = prepared->function_library.get();
  args_e.step.session_cancellation = session_cancellation_;
  args_e.collect_stats = metadata != nullptr || run_options.trace;
  int64_t timeout_ms = run_options.timeout_in_ms > 0 ? run_options.timeout_in_ms : options_.operation_timeout_ms;
  if (timeout_ms > 0) args_e.deadline_micros = Env::Default()->NowMonotonicMicros() + timeout_ms * 1000;

  prepared->executor->RunAsync(args_e, [state, prepared](const Status& s, std::vector<NodeExecStats> stats) {
    state->status = s;
    state->stats = std::move(stats);
    state->done.Notify();
  });
  if (timeout_ms > 0) {
    int64_t left_us = std::max<int64_t>(0, args_e.deadline_micros - Env::Default()->NowMonotonicMicros());
    if (!state->done.WaitFor(std::chrono::microseconds(left_us))) {
      state->cancellation.StartCancel();
      // Kernels that wait honour the cancellation; give running ones a bounded grace period.
      state->done.WaitFor(std::chrono::seconds(10));
      return errors::DeadlineExceeded("Run did not finish within the deadline of ", timeout_ms, " ms");
    }
  } else {
    state->done.Wait();  // cancellation path: Close() cancels every active step
  }
  if (!state->status.ok()) return state->status;
  std::vector<Tensor> rets = state->frame.TakeRetvals();
  for (size_t i = 0; i < rets.size(); ++i) {
    if (!rets[i].IsInitialized()) {  // a dead tensor (an untaken branch): InvalidArgument, as in TensorFlow
      return errors::InvalidArgument("Fetch '", output_names[i], "' produced no value");
    }
  }
  if (outputs != nullptr) *outputs = std::move(rets);
  if (metadata != nullptr) metadata->step_stats = std::move(state->stats);
  return absl::OkStatus();
}

class DirectSessionFactory : public SessionFactory {
 public:
  bool AcceptsOptions(const SessionOptions& o) const override { return o.target.empty() || o.target == "local"; }
  StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& o) override {
    return NewDirectSession(o, {LocalCpuDevice()});
  }
};

}  // namespace

std::unique_ptr<Session> NewDirectSession(const SessionOptions& options, std::vector<Device*> devices) {
  return std::make_unique<DirectSession>(options, std::move(devices));
}

void RegisterDirectSessionFactory() {
  RegisterSessionFactory("DIRECT_SESSION", std::make_unique<DirectSessionFactory>());
}

}  // namespace dflow
