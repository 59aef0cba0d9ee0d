#include "distributed/worker.h"

#include <atomic>
#include <chrono>
#include <random>
#include <set>

#include "absl/strings/match.h"
#include "base/env.h"
#include "distributed/job_completion.h"
#include "framework/call_frame.h"
#include "framework/cancellation.h"
#include "graph/graph_def.h"
#include "runtime/function_runtime.h"
#include "tensor/tensor_proto.h"

namespace dflow {
namespace {

uint64_t NewIncarnation() {
  std::random_device rd;
  uint64_t v = 0;
  while (v == 0) v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return v;
}

constexpr size_t kAbortedStepsKept = 4096;
// Tensors up to this size ride back in a RunGraph response (push_keys); bigger ones are pulled.
constexpr size_t kMaxPushedBytes = size_t{1} << 20;

// What one RunGraph shares with its executor until both are done.
struct RunState {
  RunState(std::vector<Tensor> args, int num_retvals) : frame(std::move(args), num_retvals) {}
  CallFrame frame;
  CancellationManager cancellation;
  // Why AbortAll cancelled the partition (reported instead of the bare cancellation).
  std::mutex mu;
  Status abort_reason;
};

// The step's arguments, parsed from the request.
StatusOr<std::vector<Tensor>> ArgsFromRequest(const proto::RunGraphRequest& req, int num_args,
                                              const std::string& task) {
  if (req.args_size() != num_args) {
    return errors::InvalidArgument("RunGraph on ", task, ": ", req.args_size(), " args for a graph that takes ",
                                   num_args);
  }
  std::vector<Tensor> args;
  args.reserve(req.args_size());
  for (const proto::TensorProto& p : req.args()) {
    StatusOr<Tensor> t = TensorFromProto(p);
    if (!t.ok()) return errors::Annotate(t.status(), absl::StrCat("RunGraph on ", task, ": "));
    args.push_back(std::move(t).value());
  }
  return args;
}

// Puts the partition's results (its _Retval values) and the stats of its nodes in the response.
Status ResultsToResponse(RunState* state, const std::vector<NodeExecStats>& stats, const std::string& task,
                         proto::RunGraphResponse* resp) {
  Status status;
  std::vector<Tensor> rets = state->frame.TakeRetvals();
  for (size_t i = 0; i < rets.size() && status.ok(); ++i) {
    if (!rets[i].IsInitialized()) {
      status = errors::Internal("RunGraph on ", task, ": output ", i, " produced no value");
    } else {
      TensorToProto(rets[i], resp->add_retvals());
    }
  }
  for (const NodeExecStats& st : stats) {
    proto::NodeStats* p = resp->add_stats();
    p->set_node_name(st.node_name);
    p->set_op(st.op);
    p->set_device(st.device);
    p->set_start_micros(st.start_micros);
    p->set_end_micros(st.end_micros);
  }
  return status;
}

// The tensors for the master's task (req.push_keys): small ones ride back in the response, big
// ones stay to be pulled. Every one was sent before the partition finished, so each answer
// comes at once; the answer is shared so that a late one (which would be a bug) touches
// nothing gone.
Status PushToResponse(const proto::RunGraphRequest& req, StepRendezvous* rendezvous, const std::string& task,
                      proto::RunGraphResponse* resp) {
  for (int i = 0; i < req.push_keys_size(); ++i) {
    struct Answer {
      bool done = false;
      Status status;
      Tensor value;
      bool is_dead = false;
    };
    auto answer = std::make_shared<Answer>();
    rendezvous->ServeRecv(req.push_keys(i), [answer](const Status& st, Tensor t, bool is_dead) {
      answer->status = st;
      answer->value = std::move(t);
      answer->is_dead = is_dead;
      answer->done = true;
    });
    if (!answer->done) {
      return errors::Internal("RunGraph on ", task, ": the tensor '", req.push_keys(i), "' to return was never sent");
    }
    if (!answer->status.ok()) return answer->status;
    proto::PushedTensor* p = resp->add_pushed();
    p->set_key(req.push_keys(i));
    p->set_is_dead(answer->is_dead);
    if (answer->is_dead || !answer->value.IsInitialized()) continue;
    if (answer->value.TotalBytes() <= kMaxPushedBytes) {
      TensorToProto(answer->value, p->mutable_tensor());
    } else {
      RETURN_IF_ERROR(rendezvous->Send(req.push_keys(i), answer->value, false));
    }
  }
  return absl::OkStatus();
}

}  // namespace

Worker::Worker(std::string task, WorkerCache* peers, WorkerOptions options)
    : task_(std::move(task)),
      peers_(peers),
      options_(options),
      incarnation_(NewIncarnation()),
      device_(std::make_unique<Device>(task_ + "/device:CPU:0", "CPU")),
      memory_budget_(std::make_shared<MemoryBudget>(MemoryBudget::ResolveLimit(options.step_memory_limit_bytes))) {}

Worker::~Worker() { AbortAll(errors::Cancelled("The worker of ", task_, " is shutting down")); }

void Worker::GetStatusAsync(const proto::GetStatusRequest*, proto::GetStatusResponse* resp, CallOptions*,
                            StatusCallback done) {
  proto::DeviceAttributes* d = resp->add_device_attributes();
  d->set_name(device_->name());
  d->set_device_type(device_->device_type());
  d->set_incarnation(incarnation_);
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!job_complete_.ok()) resp->set_job_complete_source(job_complete_source_);
  }
  done(absl::OkStatus());
}

StatusOr<std::shared_ptr<OpKernel>> Worker::CreateKernel(const std::string& session, const Node& n,
                                                         FunctionLibraryRuntime* flr) {
  if (!n.IsStateful() || n.op() == "_Arg" || n.op() == "_Retval") {
    ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k,
                     KernelRegistry::Global()->CreateKernel(device_.get(), device_->device_type(), n.props_ptr(), flr));
    return std::shared_ptr<OpKernel>(std::move(k));
  }
  // Stateful kernels (random generators, ...) are shared by the session's graphs on this task.
  std::lock_guard<std::mutex> l(kernels_mu_);
  auto key = std::make_pair(session, n.name());
  auto it = stateful_kernels_.find(key);
  if (it != stateful_kernels_.end() && it->second->type_string() == n.op()) return it->second;
  ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k,
                   KernelRegistry::Global()->CreateKernel(device_.get(), device_->device_type(), n.props_ptr(), flr));
  std::shared_ptr<OpKernel> shared(std::move(k));
  stateful_kernels_[key] = shared;
  return shared;
}

void Worker::RegisterGraphAsync(const proto::RegisterGraphRequest* req, proto::RegisterGraphResponse* resp,
                                StatusCallback done) {
  // Checked before anything is built from it: the import costs many times the GraphDef's size.
  const proto::GraphDef& def = req->graph_def();
  if (options_.max_graph_nodes > 0 && def.node_size() > options_.max_graph_nodes) {
    done(errors::ResourceExhausted("RegisterGraph on ", task_, ": the graph has ", def.node_size(),
                                   " nodes, more than this task's limit of ", options_.max_graph_nodes,
                                   " (max_graph_nodes)"));
    return;
  }
  if (options_.max_graph_bytes > 0) {
    const int64_t bytes = static_cast<int64_t>(def.ByteSizeLong());
    if (bytes > options_.max_graph_bytes) {
      done(errors::ResourceExhausted("RegisterGraph on ", task_, ": the graph is ", HumanReadableBytes(bytes),
                                     ", more than this task's limit of ", HumanReadableBytes(options_.max_graph_bytes),
                                     " (max_graph_bytes)"));
      return;
    }
  }
  auto graph = std::make_unique<Graph>();
  Status s = ImportGraphDef(def, graph.get());
  if (!s.ok()) {
    done(errors::Annotate(s, absl::StrCat("RegisterGraph on ", task_, ": ")));
    return;
  }
  auto reg = std::make_shared<Registered>();
  reg->session = req->session_handle();
  std::vector<char> arg_seen, ret_seen;
  for (Node* n : graph->nodes()) {
    if (!n->requested_device().empty()) {
      StatusOr<DeviceName> spec = DeviceName::Parse(n->requested_device());
      if (!spec.ok() || !device_->parsed_name().Matches(*spec)) {
        done(errors::InvalidArgument("RegisterGraph on ", task_, ": node '", n->name(), "' is placed on '",
                                     n->requested_device(), "', not on this task's device ", device_->name()));
        return;
      }
    }
    n->set_assigned_device(device_->name());
    if (n->op() != "_Arg" && n->op() != "_Retval") continue;
    int64_t index = -1;
    s = GetAttr(n->attrs(), "index", &index);
    if (!s.ok() || index < 0 || index > 1000000) {
      done(errors::InvalidArgument("RegisterGraph on ", task_, ": node '", n->name(), "' has a bad index"));
      return;
    }
    std::vector<char>& seen = n->op() == "_Arg" ? arg_seen : ret_seen;
    if (seen.size() <= static_cast<size_t>(index)) seen.resize(index + 1, 0);
    seen[index]++;
  }
  for (const auto* seen : {&arg_seen, &ret_seen}) {
    for (size_t i = 0; i < seen->size(); ++i) {
      if ((*seen)[i] != 1) {
        done(errors::InvalidArgument("RegisterGraph on ", task_, ": ", seen == &arg_seen ? "_Arg" : "_Retval",
                                     " indices must be 0..n-1, each once (index ", i, ")"));
        return;
      }
    }
  }
  reg->num_args = static_cast<int>(arg_seen.size());
  reg->num_retvals = static_cast<int>(ret_seen.size());
  reg->function_library = NewFunctionLibraryRuntime(device_.get(), graph->library());
  ExecutorParams params;
  params.device = device_.get();
  std::string session = req->session_handle();
  FunctionLibraryRuntime* flr = reg->function_library.get();
  params.create_kernel = [this, session, flr](const Node& n) { return CreateKernel(session, n, flr); };
  StatusOr<std::unique_ptr<Executor>> ex = Executor::Create(std::move(params), std::move(graph));
  if (!ex.ok()) {
    done(errors::Annotate(ex.status(), absl::StrCat("RegisterGraph on ", task_, ": ")));
    return;
  }
  reg->executor = std::move(ex).value();
  {
    std::lock_guard<std::mutex> l(mu_);
    std::string handle = absl::StrCat("g", next_graph_++);
    graphs_[handle] = reg;
    resp->set_graph_handle(handle);
  }
  done(absl::OkStatus());
}

void Worker::DeregisterGraphAsync(const proto::DeregisterGraphRequest* req, proto::DeregisterGraphResponse*,
                                  StatusCallback done) {
  std::shared_ptr<Registered> reg;  // destroyed outside the lock
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = graphs_.find(req->graph_handle());
    if (it != graphs_.end()) {
      reg = it->second;
      graphs_.erase(it);
    }
  }
  if (reg != nullptr) {
    reg->closed->StartCancel();
    DropSessionStateIfClosed(reg->session);
  }
  done(absl::OkStatus());
}

std::string Worker::SessionContainer(const std::string& session) {
  return session.empty() ? std::string() : absl::StrCat("__session_", session);
}

void Worker::DropSessionStateIfClosed(const std::string& session) {
  if (session.empty()) return;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [handle, reg] : graphs_) {
      if (reg->session == session) return;  // the session still has graphs here
    }
  }
  // Destroyed outside the lock: a kernel may hold resources whose destructors wait.
  std::vector<std::shared_ptr<OpKernel>> dropped;
  {
    std::lock_guard<std::mutex> l(kernels_mu_);
    for (auto it = stateful_kernels_.lower_bound({session, ""});
         it != stateful_kernels_.end() && it->first.first == session;) {
      dropped.push_back(std::move(it->second));
      it = stateful_kernels_.erase(it);
    }
  }
  device_->resource_manager()->Cleanup(SessionContainer(session));
}

size_t Worker::num_session_states() {
  std::set<std::string> sessions;
  {
    std::lock_guard<std::mutex> l(kernels_mu_);
    for (const auto& [key, kernel] : stateful_kernels_) sessions.insert(SessionContainer(key.first));
  }
  for (const std::string& c : device_->resource_manager()->Containers()) {
    if (absl::StartsWith(c, "__session_")) sessions.insert(c);
  }
  return sessions.size();
}

StatusOr<std::shared_ptr<StepRendezvous>> Worker::FindOrCreateStep(int64_t step_id, bool for_run) {
  std::lock_guard<std::mutex> l(mu_);
  if (!stopped_.ok()) return stopped_;
  for (const auto& [id, status] : aborted_) {
    if (id == step_id) return status;
  }
  // After the job completed, steps already under way here may finish; new ones may not start.
  if (!job_complete_.ok() && for_run && steps_.find(step_id) == steps_.end()) return job_complete_;
  StepEntry& e = steps_[step_id];
  if (e.rendezvous == nullptr) {
    e.rendezvous = std::make_shared<StepRendezvous>(step_id, task_, peers_);
    idle_cv_.notify_all();  // WaitForSteps
  }
  if (for_run) e.runs++;
  return e.rendezvous;
}

void Worker::ReleaseStep(int64_t step_id, bool for_run) {
  std::shared_ptr<StepRendezvous> dropped;
  std::lock_guard<std::mutex> l(mu_);
  auto it = steps_.find(step_id);
  if (it == steps_.end()) return;
  if (for_run) it->second.runs--;
  if (it->second.runs == 0 && (it->second.rendezvous->Idle() || !it->second.rendezvous->aborted_status().ok())) {
    dropped = std::move(it->second.rendezvous);
    steps_.erase(it);
    idle_cv_.notify_all();  // WaitUntilStepsDone, WaitForSteps
  }
}

void Worker::RunGraphAsync(const proto::RunGraphRequest* req, proto::RunGraphResponse* resp, CallOptions* opts,
                           StatusCallback done_in) {
  StatusCallback done = Track(std::move(done_in));
  std::shared_ptr<Registered> reg;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = graphs_.find(req->graph_handle());
    if (it != graphs_.end()) reg = it->second;
  }
  if (reg == nullptr) {
    done(errors::Aborted("Graph '", req->graph_handle(), "' is not registered on ", task_,
                         ": the task restarted or the session was closed"));
    return;
  }
  StatusOr<std::vector<Tensor>> args = ArgsFromRequest(*req, reg->num_args, task_);
  if (!args.ok()) {
    done(args.status());
    return;
  }
  StatusOr<std::shared_ptr<StepRendezvous>> step = FindOrCreateStep(req->step_id(), true);
  if (!step.ok()) {
    done(step.status());
    return;
  }
  auto state = std::make_shared<RunState>(*std::move(args), reg->num_retvals);
  std::shared_ptr<StepRendezvous> rendezvous = *step;
  if (req->pushed_keys_size() > 0) {
    rendezvous->ExpectDeposits(std::vector<std::string>(req->pushed_keys().begin(), req->pushed_keys().end()));
  }
  if (opts != nullptr) {
    opts->SetCancelCallback([state, rendezvous]() {
      rendezvous->StartAbort(errors::Cancelled("The step was cancelled"));
      state->cancellation.StartCancel();
    });
  }
  int64_t run_id;
  {
    // AbortAll cancels the partitions that run (a kernel waiting on a queue wakes up).
    std::lock_guard<std::mutex> l(mu_);
    run_id = next_run_id_++;
    running_[run_id] = [state](const Status& why) {
      {
        std::lock_guard<std::mutex> sl(state->mu);
        if (state->abort_reason.ok()) state->abort_reason = why;
      }
      state->cancellation.StartCancel();
    };
  }
  Executor::Args a;
  a.step.step_id = req->step_id();
  a.step.device = device_.get();
  a.step.call_frame = &state->frame;
  a.step.rendezvous = rendezvous.get();
  a.step.cancellation = &state->cancellation;
  a.step.function_library = reg->function_library.get();
  a.step.session_cancellation = reg->closed;
  a.step.session_container = SessionContainer(reg->session);
  a.step.memory_budget = memory_budget_;
  a.collect_stats = req->collect_stats();
  // The request carries a duration (a monotonic time means nothing in another process).
  if (req->timeout_in_ms() > 0) a.deadline_micros = Env::Default()->NowMonotonicMicros() + req->timeout_in_ms() * 1000;
  const int64_t step_id = req->step_id();
  reg->executor->RunAsync(a, [this, reg, state, rendezvous, step_id, run_id, req, resp, opts,
                              done = std::move(done)](const Status& s, std::vector<NodeExecStats> stats) {
    if (opts != nullptr) opts->ClearCancelCallback();
    {
      std::lock_guard<std::mutex> l(mu_);
      running_.erase(run_id);
    }
    Status status = s;
    if (!status.ok()) {
      std::lock_guard<std::mutex> sl(state->mu);
      if (!state->abort_reason.ok()) status = state->abort_reason;
    }
    if (status.ok()) status = ResultsToResponse(state.get(), stats, task_, resp);
    if (status.ok()) status = PushToResponse(*req, rendezvous.get(), task_, resp);
    // Receivers elsewhere that wait for this task's tensors learn of the failure at once.
    if (!status.ok()) rendezvous->StartAbort(status);
    ReleaseStep(step_id, true);
    // A run that was under way when its session closed may have made session state after the
    // session's was dropped: drop it again.
    if (reg->closed->IsCancelled()) DropSessionStateIfClosed(reg->session);
    done(status);
  });
}

void Worker::AbortStepAsync(const proto::AbortStepRequest* req, proto::AbortStepResponse*, StatusCallback done) {
  Status status(static_cast<absl::StatusCode>(req->code()), req->message());
  if (status.ok()) status = errors::Aborted("Step ", req->step_id(), " was aborted");
  std::shared_ptr<StepRendezvous> r;
  {
    std::lock_guard<std::mutex> l(mu_);
    aborted_.emplace_back(req->step_id(), status);
    if (aborted_.size() > kAbortedStepsKept) aborted_.pop_front();
    auto it = steps_.find(req->step_id());
    if (it != steps_.end()) {
      r = it->second.rendezvous;
      if (it->second.runs == 0) {
        steps_.erase(it);
        idle_cv_.notify_all();  // WaitUntilStepsDone, WaitForSteps
      }
    }
  }
  if (r != nullptr) r->StartAbort(status);
  done(absl::OkStatus());
}

void Worker::RecvTensorAsync(const proto::RecvTensorRequest* req, RecvTensorResult* result, CallOptions* opts,
                             StatusCallback done_in) {
  StatusCallback done = Track(std::move(done_in));
  RendezvousKey k;
  Status s = ParseRendezvousKey(req->rendezvous_key(), &k);
  if (!s.ok()) {
    done(s);
    return;
  }
  if (k.send_device_incarnation != incarnation_) {
    done(errors::Aborted("The tensor '", k.edge_name, "' was asked of an earlier incarnation of ", task_,
                         ": the task restarted"));
    return;
  }
  StatusOr<std::shared_ptr<StepRendezvous>> step = FindOrCreateStep(req->step_id(), false);
  if (!step.ok()) {
    done(step.status());
    return;
  }
  const int64_t step_id = req->step_id();
  const std::string key = req->rendezvous_key();  // `req` may be gone once `done` has run
  auto finished = std::make_shared<std::atomic<bool>>(false);
  (*step)->ServeRecv(key, [this, step_id, result, finished, done = std::move(done)](const Status& st, Tensor t,
                                                                                    bool is_dead) {
    finished->store(true);
    if (st.ok()) {
      result->tensor = std::move(t);
      result->is_dead = is_dead;
    }
    ReleaseStep(step_id, false);
    done(st);
  });
  // A caller that gives up (its deadline passed, it cancelled, it went away) takes its waiter
  // with it; otherwise a key that never comes would hold the waiter and the step forever. (Set
  // after ServeRecv: a cancellation that came first runs at once. `opts` stays valid until this
  // returns, as WorkerInterface requires.)
  if (opts != nullptr && !finished->load()) {
    std::shared_ptr<StepRendezvous> rendezvous = *step;
    opts->SetCancelCallback([rendezvous, key] {
      rendezvous->CancelServe(key, errors::Cancelled("The receiver of '", key, "' gave up waiting for it"));
    });
  }
}

Status Worker::Deposit(int64_t step_id, const std::string& key, const Tensor& value, bool is_dead) {
  ASSIGN_OR_RETURN(std::shared_ptr<StepRendezvous> step, FindOrCreateStep(step_id, false));
  Status s = step->Deposit(key, value, is_dead);
  ReleaseStep(step_id, false);
  return s;
}

void Worker::ResetAsync(const proto::ResetRequest* req, proto::ResetResponse*, StatusCallback done) {
  if (req->container_size() == 0) {
    device_->resource_manager()->Cleanup("");
  } else {
    for (const std::string& c : req->container()) device_->resource_manager()->Cleanup(c);
  }
  done(absl::OkStatus());
}

size_t Worker::num_steps() {
  std::lock_guard<std::mutex> l(mu_);
  return steps_.size();
}

bool Worker::WaitForSteps(const std::function<bool(size_t)>& done, int64_t timeout_ms) {
  std::unique_lock<std::mutex> l(mu_);
  return idle_cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), [&] { return done(steps_.size()); });
}

StatusCallback Worker::Track(StatusCallback done) {
  {
    std::lock_guard<std::mutex> l(mu_);
    ++in_flight_;
  }
  return [this, done = std::move(done)](const Status& s) {
    done(s);
    std::lock_guard<std::mutex> l(mu_);
    if (--in_flight_ == 0) idle_cv_.notify_all();
  };
}

void Worker::JobCompleteAsync(const proto::JobCompleteRequest* req, proto::JobCompleteResponse*, CallOptions*,
                              StatusCallback done) {
  JobCompleteHandler handler;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (job_complete_.ok()) {
      job_complete_ = JobCompleteError(task_, req->source_task());
      job_complete_source_ = req->source_task().empty() ? std::string("the chief") : req->source_task();
    }
    if (!req->record_only() && !job_complete_handled_) {
      job_complete_handled_ = true;
      handler = job_complete_handler_;
    }
  }
  if (handler) handler(req->source_task(), req->drain_ms());
  done(absl::OkStatus());
}

void Worker::SetJobCompleteHandler(JobCompleteHandler handler) {
  std::lock_guard<std::mutex> l(mu_);
  job_complete_handler_ = std::move(handler);
}

Status Worker::job_complete_status() {
  std::lock_guard<std::mutex> l(mu_);
  return job_complete_;
}

bool Worker::WaitUntilIdle(int64_t timeout_ms) {
  std::unique_lock<std::mutex> l(mu_);
  return idle_cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), [&] { return in_flight_ == 0; });
}

bool Worker::WaitUntilStepsDone(int64_t timeout_ms) {
  std::unique_lock<std::mutex> l(mu_);
  return idle_cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), [&] { return in_flight_ == 0 && steps_.empty(); });
}

void Worker::AbortAll(const Status& status) {
  std::vector<std::shared_ptr<StepRendezvous>> steps;
  std::vector<std::function<void(const Status&)>> runs;
  {
    std::lock_guard<std::mutex> l(mu_);
    stopped_ = status;
    for (auto& [id, e] : steps_) steps.push_back(e.rendezvous);
    for (auto& [handle, reg] : graphs_) reg->closed->StartCancel();
    for (auto& [id, abort] : running_) runs.push_back(abort);
  }
  for (auto& r : steps) r->StartAbort(status);
  for (auto& abort : runs) abort(status);
}

}  // namespace dflow
