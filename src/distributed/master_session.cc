#include "distributed/master_session.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"
#include "base/env.h"
#include "distributed/job_completion.h"
#include "framework/device_name.h"
#include "framework/rendezvous.h"
#include "graph/function_library.h"
#include "graph/graph_def.h"
#include "graph/graph_extension.h"
#include "graph/op_fusion.h"
#include "graph/partition.h"
#include "graph/placer.h"
#include "graph/subgraph.h"
#include "tensor/memory_budget.h"
#include "tensor/tensor_proto.h"

namespace dflow {
namespace {

bool PassesFilters(const std::string& task, const proto::SessionConfig& config) {
  if (config.device_filters_size() == 0) return true;
  StatusOr<DeviceName> name = DeviceName::Parse(task + "/device:CPU:0");
  if (!name.ok()) return false;
  for (const std::string& f : config.device_filters()) {
    StatusOr<DeviceName> spec = DeviceName::Parse(f);
    if (spec.ok() && name->Matches(*spec)) return true;
  }
  return false;
}

// The attr `name` of a node the partitioner made (Internal when it is missing: a bug).
StatusOr<const proto::AttrValue*> PartitionAttr(const proto::NodeDef& n, const std::string& name) {
  auto it = n.attr().find(name);
  if (it == n.attr().end()) return errors::Internal("Partitioned node '", n.name(), "' has no attr '", name, "'");
  return &it->second;
}

// Renumbers the partition's _Arg (or _Retval) nodes 0..n-1 in order of their global index and
// returns the global indices.
StatusOr<std::vector<int>> Renumber(proto::GraphDef* def, const std::string& op) {
  std::vector<std::pair<int64_t, proto::NodeDef*>> found;
  for (proto::NodeDef& n : *def->mutable_node()) {
    if (n.op() != op) continue;
    ASSIGN_OR_RETURN(const proto::AttrValue* index, PartitionAttr(n, "index"));
    found.emplace_back(index->i(), &n);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int> global;
  for (size_t i = 0; i < found.size(); ++i) {
    global.push_back(static_cast<int>(found[i].first));
    (*found[i].second->mutable_attr())["index"].set_i(static_cast<int64_t>(i));
  }
  return global;
}

}  // namespace

MasterSession::MasterSession(std::string handle, std::string local_task, WorkerCache* workers,
                             proto::SessionConfig config)
    : handle_(std::move(handle)),
      local_task_(std::move(local_task)),
      workers_(workers),
      config_(std::move(config)),
      step_ids_(std::random_device{}()) {}

MasterSession::~MasterSession() { Close().IgnoreError(); }

std::string MasterSession::Where(const std::string& task) const {
  std::string address = workers_->TaskAddress(task);
  return address.empty() ? task : absl::StrCat(task, " (", address, ")");
}

StatusOr<std::shared_ptr<MasterSession>> MasterSession::Create(std::string handle, std::string local_task,
                                                               WorkerCache* workers, const proto::SessionConfig& config,
                                                               int64_t startup_wait_ms, int64_t probe_timeout_ms) {
  std::shared_ptr<MasterSession> s(new MasterSession(std::move(handle), local_task, workers, config));
  // The chief (TensorFlow's rule: /job:chief/task:0, else /job:worker/task:0) is asked too when
  // it is outside the filters, only whether the job is complete, while a task of the session is
  // silent: it keeps the record of the job's end while it tells the tasks it could not reach.
  std::vector<std::string> pending, bystanders;
  const std::vector<std::string> tasks = workers->ListTasks();
  const bool has_chief_job = std::any_of(tasks.begin(), tasks.end(),
                                         [](const std::string& t) { return absl::StartsWith(t, "/job:chief/"); });
  const std::string chief = has_chief_job ? "/job:chief/replica:0/task:0" : "/job:worker/replica:0/task:0";
  for (const std::string& task : tasks) {
    if (task == local_task || PassesFilters(task, config)) {
      pending.push_back(task);
    } else if (task == chief) {
      bystanders.push_back(task);
    }
  }
  // Ask every task for its devices; retry the silent ones until the wait is over.
  Env* env = Env::Default();
  const int64_t deadline = env->NowMonotonicMicros() + startup_wait_ms * 1000;
  std::map<std::string, proto::GetStatusResponse> found;
  std::map<std::string, Status> last_error;
  int64_t next_log = env->NowMonotonicMicros() + 2000000;
  for (int round = 0; !pending.empty(); ++round) {
    // While some task is silent (this task may be cut off, or recovering from a lost link), the
    // chief is asked too.
    std::vector<std::string> asked = pending;
    if (round > 0) asked.insert(asked.end(), bystanders.begin(), bystanders.end());
    struct Probe {
      proto::GetStatusRequest req;
      proto::GetStatusResponse resp;
      CallOptions opts;
      Status status;
    };
    std::vector<std::unique_ptr<Probe>> probes;
    std::mutex mu;
    std::condition_variable cv;
    size_t left = asked.size();
    for (const std::string& task : asked) {
      probes.push_back(std::make_unique<Probe>());
      Probe* p = probes.back().get();
      p->opts.timeout_ms = probe_timeout_ms;
      StatusOr<std::shared_ptr<WorkerInterface>> w = workers->GetWorker(task);
      if (!w.ok()) return w.status();
      (*w)->GetStatusAsync(&p->req, &p->resp, &p->opts, [&, p](const Status& st) {
        std::lock_guard<std::mutex> l(mu);
        p->status = st;
        if (--left == 0) cv.notify_all();
      });
    }
    {
      std::unique_lock<std::mutex> l(mu);
      cv.wait(l, [&] { return left == 0; });
    }
    // A task that was told the job is complete: this task missed the announcement. It learns it
    // now, as if told, and the session is refused the way every step is after the job ended.
    for (size_t i = 0; i < asked.size(); ++i) {
      const std::string& source = probes[i]->resp.job_complete_source();
      if (!probes[i]->status.ok() || source.empty()) continue;
      std::fprintf(stderr, "dflow: task %s says the job is complete (%s ended training)\n", asked[i].c_str(),
                   source.c_str());
      StatusOr<std::shared_ptr<WorkerInterface>> self = workers->GetWorker(local_task);
      if (self.ok()) {
        auto req = std::make_shared<proto::JobCompleteRequest>();
        auto resp = std::make_shared<proto::JobCompleteResponse>();
        req->set_source_task(source);
        req->set_drain_ms(kDefaultJobDrainMs);
        (*self)->JobCompleteAsync(req.get(), resp.get(), nullptr, [req, resp](const Status&) {});
      }
      return JobCompleteError(local_task, source);
    }
    std::vector<std::string> still;
    for (size_t i = 0; i < pending.size(); ++i) {
      if (probes[i]->status.ok()) {
        found[pending[i]] = probes[i]->resp;
      } else {
        still.push_back(pending[i]);
        last_error[pending[i]] = probes[i]->status;
      }
    }
    pending = std::move(still);
    if (pending.empty()) break;
    const int64_t now = env->NowMonotonicMicros();
    if (now >= deadline) {
      const std::string& task = pending[0];
      return errors::Unavailable("Task ", s->Where(task), " is unreachable after waiting ", startup_wait_ms,
                                 " ms: ", last_error[task].message());
    }
    if (now >= next_log) {
      for (const std::string& task : pending) {
        std::fprintf(stderr, "dflow: waiting for task %s: %s\n", s->Where(task).c_str(),
                     std::string(last_error[task].message()).c_str());
      }
      next_log = now + 5000000;
    }
    env->SleepForMicros(std::min<int64_t>(200000, deadline - now + 1000));
  }
  // The local task's devices first: nodes without a device go there.
  for (bool local : {true, false}) {
    for (const auto& [task, resp] : found) {
      if ((task == local_task) != local) continue;
      for (const proto::DeviceAttributes& d : resp.device_attributes()) {
        s->devices_.push_back(std::make_unique<Device>(d.name(), d.device_type()));
        s->incarnations_[d.name()] = d.incarnation();
      }
    }
  }
  if (s->devices_.empty()) return errors::Internal("Session ", s->handle_, " found no devices");
  return s;
}

void MasterSession::SetGraphLimits(int64_t max_bytes, int64_t max_nodes) {
  std::lock_guard<std::mutex> l(mu_);
  max_graph_bytes_ = max_bytes;
  max_graph_nodes_ = max_nodes;
}

Status MasterSession::CheckGraphLimits(const proto::GraphDef& def, int64_t have_bytes, int64_t have_nodes,
                                       int64_t max_bytes, int64_t max_nodes, const std::string& task) {
  const int64_t nodes = have_nodes + def.node_size();
  if (max_nodes > 0 && nodes > max_nodes) {
    return errors::ResourceExhausted("The session's graph would have ", nodes, " nodes, more than the limit of ",
                                     max_nodes, " of the master on ", task, " (max_graph_nodes)");
  }
  if (max_bytes > 0) {
    const int64_t bytes = have_bytes + static_cast<int64_t>(def.ByteSizeLong());
    if (bytes > max_bytes) {
      return errors::ResourceExhausted("The session's graph would be ", HumanReadableBytes(bytes),
                                       ", more than the limit of ", HumanReadableBytes(max_bytes), " of the master on ",
                                       task, " (max_graph_bytes)");
    }
  }
  return absl::OkStatus();
}

namespace {

// Appends the node fields of `def` to `out` as serialized GraphDef fields (field 1).
void AppendNodeBytes(const proto::GraphDef& def, std::string* out) {
  google::protobuf::io::StringOutputStream stream(out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  for (const proto::NodeDef& n : def.node()) {
    google::protobuf::internal::WireFormatLite::WriteMessage(proto::GraphDef::kNodeFieldNumber, n, &coded);
  }
}

}  // namespace

Status MasterSession::Extend(const proto::GraphDef& def) {
  std::lock_guard<std::mutex> l(mu_);
  if (closed_) return errors::FailedPrecondition("Session has been closed");
  RETURN_IF_ERROR(CheckGraphLimits(def, graph_bytes_, num_nodes_, max_graph_bytes_, max_graph_nodes_, local_task_));
  // The whole graph is imported anew into a new Graph, so that a bad extension leaves the
  // session as it was. The first GraphDef is imported as it came (no copy).
  proto::GraphDef merged;
  if (graph_ != nullptr) {
    if (!merged.ParseFromString(node_bytes_)) return errors::Internal("Session ", handle_, ": kept graph unreadable");
    *merged.mutable_library() = library_;
    *merged.mutable_versions() = versions_;
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, ExtendGraphDef(def, graph_ == nullptr ? nullptr : &merged));
  AppendNodeBytes(def, &node_bytes_);
  num_nodes_ += def.node_size();
  // Identical functions sent again collapse into one.
  library_.Clear();
  g->library().ToProto(&library_);
  if (def.has_versions()) versions_ = def.versions();
  graph_bytes_ = static_cast<int64_t>(node_bytes_.size() + library_.ByteSizeLong() + versions_.ByteSizeLong());
  graph_ = std::move(g);
  return absl::OkStatus();
}

void MasterSession::ListDevices(proto::ListDevicesResponse* resp) const {
  for (const auto& d : devices_) {
    proto::DeviceAttributes* a = resp->add_device();
    a->set_name(d->name());
    a->set_device_type(d->device_type());
    a->set_incarnation(incarnations_.at(d->name()));
  }
}

StatusOr<std::shared_ptr<MasterSession::Prepared>> MasterSession::Prepare(const proto::RunStepRequest& req) {
  std::string key;
  for (const auto& f : req.feed()) absl::StrAppend(&key, f.name(), ",");
  absl::StrAppend(&key, "->", absl::StrJoin(req.fetch(), ","), "//", absl::StrJoin(req.target(), ","));
  std::lock_guard<std::mutex> l(mu_);
  if (closed_) return errors::FailedPrecondition("Session has been closed");
  if (graph_ == nullptr) return errors::FailedPrecondition("Session has no graph");
  auto it = prepared_.find(key);
  if (it != prepared_.end()) return it->second;
  ASSIGN_OR_RETURN(std::shared_ptr<Prepared> p, Build(req));
  prepared_[key] = p;
  return p;
}

StatusOr<std::shared_ptr<MasterSession::Prepared>> MasterSession::Build(const proto::RunStepRequest& req) {
  auto prepared = std::make_shared<Prepared>();
  std::vector<std::string> feeds, fetches(req.fetch().begin(), req.fetch().end()),
      targets(req.target().begin(), req.target().end());
  for (const auto& f : req.feed()) {
    feeds.push_back(f.name());
    ASSIGN_OR_RETURN(NodeOut t, ResolveTensor(*graph_, f.name()));
    prepared->feeds.push_back({f.name(), BaseType(t.node->output_type(t.index)), t.node->output_shape(t.index)});
  }
  ASSIGN_OR_RETURN(StepGraph step, BuildStepGraph(*graph_, feeds, fetches, targets));
  PlacementOptions popts;
  popts.allow_soft_placement = config_.allow_soft_placement();
  popts.log_device_placement = config_.log_device_placement();
  std::vector<Device*> devices;
  for (const auto& d : devices_) devices.push_back(d.get());
  RETURN_IF_ERROR(PlaceGraph(step.graph.get(), devices, popts));
  if (!config_.disable_op_fusion()) RETURN_IF_ERROR(FuseOps(step.graph.get()).status());
  PartitionOptions po;
  po.node_to_loc = [](const Node& n) { return n.assigned_device(); };
  po.get_incarnation = [this](const std::string& device) {
    auto it = incarnations_.find(device);
    return it == incarnations_.end() ? uint64_t{0} : it->second;
  };
  std::map<std::string, proto::GraphDef> parts;
  RETURN_IF_ERROR(PartitionGraph(po, *step.graph, &parts));
  // Nothing below needs the step graph: free it before the workers build theirs (with the
  // master's own task among them, both would be in this process at once).
  step.graph.reset();
  // Partitions that receive nothing send their tensors for the master's task in their response.
  std::vector<std::string> all_pushed;
  std::map<std::string, std::vector<std::string>> push_keys;
  for (auto& [device, def] : parts) {
    ASSIGN_OR_RETURN(std::string task, TaskOfDevice(device));
    if (task == local_task_) continue;
    bool receives = false;
    for (const proto::NodeDef& n : def.node()) receives |= n.op() == "_Recv";
    if (receives) continue;
    for (const proto::NodeDef& n : def.node()) {
      if (n.op() != "_Send") continue;
      RendezvousKey k;
      ASSIGN_OR_RETURN(const proto::AttrValue* send_device, PartitionAttr(n, "send_device"));
      ASSIGN_OR_RETURN(const proto::AttrValue* incarnation, PartitionAttr(n, "send_device_incarnation"));
      ASSIGN_OR_RETURN(const proto::AttrValue* recv_device, PartitionAttr(n, "recv_device"));
      ASSIGN_OR_RETURN(const proto::AttrValue* tensor_name, PartitionAttr(n, "tensor_name"));
      k.send_device = send_device->s();
      k.send_device_incarnation = static_cast<uint64_t>(incarnation->i());
      k.recv_device = recv_device->s();
      k.edge_name = tensor_name->s();
      StatusOr<std::string> recv_task = TaskOfDevice(k.recv_device);
      if (!recv_task.ok() || *recv_task != local_task_) continue;
      push_keys[device].push_back(CreateRendezvousKey(k));
      all_pushed.push_back(push_keys[device].back());
    }
  }
  for (auto& [device, def] : parts) {
    Partition p;
    p.push_keys = push_keys[device];
    p.receives = false;
    for (const proto::NodeDef& n : def.node()) p.receives |= n.op() == "_Recv";
    ASSIGN_OR_RETURN(p.task, TaskOfDevice(device));
    ASSIGN_OR_RETURN(p.worker, workers_->GetWorker(p.task));
    ASSIGN_OR_RETURN(p.args, Renumber(&def, "_Arg"));
    ASSIGN_OR_RETURN(p.retvals, Renumber(&def, "_Retval"));
    *def.mutable_versions() = versions_;
    proto::RegisterGraphRequest rreq;
    proto::RegisterGraphResponse rresp;
    rreq.set_session_handle(handle_);
    *rreq.mutable_graph_def() = std::move(def);
    Status s = CallAndWait([&](StatusCallback done) { p.worker->RegisterGraphAsync(&rreq, &rresp, std::move(done)); });
    if (!s.ok()) return errors::Annotate(s, absl::StrCat("Task ", Where(p.task), ": "));
    p.graph_handle = rresp.graph_handle();
    if (p.task == local_task_) p.pushed_keys = all_pushed;
    prepared->partitions.push_back(std::move(p));
  }
  return prepared;
}

namespace {

// How the RunGraph calls of one step stand: the pieces of work left, and the first error.
struct StepProgress {
  explicit StepProgress(size_t n) : left(n) {}

  // Records `why` as the step's error unless it has one; true when the caller must tell every
  // task to abort the step (the first failure).
  bool Fail(const Status& why) {
    std::lock_guard<std::mutex> l(mu);
    if (!first_error.ok()) return false;
    first_error = why;
    const bool abort = !aborted;
    aborted = true;
    return abort;
  }
  // Ends one piece of work.
  void Done() {
    std::lock_guard<std::mutex> l(mu);
    if (--left == 0) cv.notify_all();
  }
  // Waits until no work is left. Past timeout_ms (when > 0) the step fails with
  // DeadlineExceeded and on_deadline(why, abort) runs once, unlocked, before the wait goes on.
  void Wait(int64_t timeout_ms, const std::function<void(const Status& why, bool abort)>& on_deadline) {
    std::unique_lock<std::mutex> l(mu);
    if (timeout_ms > 0) {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
      if (!cv.wait_until(l, deadline, [&] { return left == 0; })) {
        Status why = errors::DeadlineExceeded("Run did not finish within the deadline of ", timeout_ms, " ms");
        const bool abort = !aborted;
        aborted = true;
        if (first_error.ok()) first_error = why;
        l.unlock();
        on_deadline(why, abort);
        l.lock();
      }
    }
    cv.wait(l, [&] { return left == 0; });
  }

  std::mutex mu;
  std::condition_variable cv;
  size_t left;
  Status first_error;
  bool aborted = false;
};

}  // namespace

struct MasterSession::Call {
  proto::RunGraphRequest req;
  proto::RunGraphResponse resp;
  CallOptions opts;
};

Status MasterSession::CheckFeeds(const Prepared& prepared, const proto::RunStepRequest& req) {
  for (int i = 0; i < req.feed_size(); ++i) {
    const FeedInfo& f = prepared.feeds[i];
    const proto::TensorProto& v = req.feed(i).tensor();
    if (static_cast<DType>(v.dtype()) != f.dtype) {
      return errors::InvalidArgument("Cannot feed value of type ", DTypeString(static_cast<DType>(v.dtype())),
                                     " for tensor '", f.name, "', which has type ", DTypeString(f.dtype));
    }
    ASSIGN_OR_RETURN(PartialTensorShape shape, PartialShapeFromProto(v.tensor_shape()));
    if (!f.shape.IsCompatibleWith(shape)) {
      return errors::InvalidArgument("Cannot feed value of shape ", shape.DebugString(), " for tensor '", f.name,
                                     "', which has shape ", f.shape.DebugString());
    }
  }
  return absl::OkStatus();
}

void MasterSession::FillCalls(const Prepared& prepared, const proto::RunStepRequest& req, int64_t step_id,
                              int64_t timeout_ms, std::vector<Call>* calls) const {
  for (size_t k = 0; k < prepared.partitions.size(); ++k) {
    const Partition& p = prepared.partitions[k];
    Call& c = (*calls)[k];
    c.req.set_session_handle(handle_);
    c.req.set_graph_handle(p.graph_handle);
    c.req.set_step_id(step_id);
    c.req.set_timeout_in_ms(timeout_ms);
    c.req.set_collect_stats(req.trace());
    for (int g : p.args) *c.req.add_args() = req.feed(g).tensor();
    for (const std::string& key : p.push_keys) c.req.add_push_keys(key);
    for (const std::string& key : p.pushed_keys) c.req.add_pushed_keys(key);
    if (timeout_ms > 0) c.opts.timeout_ms = timeout_ms + 10000;
  }
}

std::vector<size_t> MasterSession::CallOrder(const Prepared& prepared, int* sync_partition) const {
  // With one other task whose partition receives nothing (a step that reads parameters from one
  // ps task, say), that partition runs first, synchronously.
  const size_t n = prepared.partitions.size();
  int sync = -1, remote = 0;
  for (size_t k = 0; k < n; ++k) {
    if (prepared.partitions[k].task == local_task_) continue;
    ++remote;
    if (!prepared.partitions[k].receives) sync = static_cast<int>(k);
  }
  if (remote != 1) sync = -1;
  std::vector<size_t> order;
  if (sync >= 0) order.push_back(sync);
  for (size_t k = 0; k < n; ++k)
    if (static_cast<int>(k) != sync) order.push_back(k);
  *sync_partition = sync;
  return order;
}

void MasterSession::AbortStep(const Prepared& prepared, int64_t step_id, const Status& why) {
  for (const Partition& p : prepared.partitions) {
    auto areq = std::make_shared<proto::AbortStepRequest>();
    auto aresp = std::make_shared<proto::AbortStepResponse>();
    areq->set_step_id(step_id);
    areq->set_code(static_cast<int>(why.code()));
    areq->set_message(std::string(why.message()));
    p.worker->AbortStepAsync(areq.get(), aresp.get(), [areq, aresp](const Status&) {});
  }
}

Status MasterSession::CollectFetches(const Prepared& prepared, const proto::RunStepRequest& req,
                                     std::vector<Call>* calls, proto::RunStepResponse* resp) const {
  resp->mutable_tensor()->Clear();
  for (int i = 0; i < req.fetch_size(); ++i) resp->add_tensor();
  for (size_t k = 0; k < prepared.partitions.size(); ++k) {
    const Partition& p = prepared.partitions[k];
    proto::RunGraphResponse& r = (*calls)[k].resp;
    if (r.retvals_size() != static_cast<int>(p.retvals.size())) {
      return errors::Internal("Task ", Where(p.task), " returned ", r.retvals_size(), " tensors, not ",
                              p.retvals.size());
    }
    for (size_t j = 0; j < p.retvals.size(); ++j) {
      resp->mutable_tensor(p.retvals[j])->Swap(r.mutable_retvals(static_cast<int>(j)));
    }
    for (proto::NodeStats& st : *r.mutable_stats()) *resp->add_stats() = std::move(st);
  }
  return absl::OkStatus();
}

Status MasterSession::Run(const proto::RunStepRequest& req, proto::RunStepResponse* resp, CallOptions* client) {
  ASSIGN_OR_RETURN(std::shared_ptr<Prepared> prepared, Prepare(req));
  RETURN_IF_ERROR(CheckFeeds(*prepared, req));
  int64_t step_id;
  {
    std::lock_guard<std::mutex> l(mu_);
    step_id = static_cast<int64_t>(step_ids_() >> 1);
  }
  const int64_t timeout_ms = req.timeout_in_ms() > 0 ? req.timeout_in_ms() : config_.operation_timeout_ms();
  const size_t n = prepared->partitions.size();
  // Shared with the client's cancel callback, which may run while this returns.
  auto calls_owner = std::make_shared<std::vector<Call>>(n);
  std::vector<Call>& calls = *calls_owner;
  FillCalls(*prepared, req, step_id, timeout_ms, &calls);
  if (client != nullptr) {
    client->SetCancelCallback([calls_owner]() {
      for (Call& c : *calls_owner) c.opts.StartCancel();
    });
  }
  StepProgress progress(n);
  int sync_partition;
  for (size_t k : CallOrder(*prepared, &sync_partition)) {
    const Partition& p = prepared->partitions[k];
    // Ends one of the `left` pieces of work, failing the step on the first error: every task
    // is told, so that nothing waits for a tensor that will not come.
    auto finish = [&, k](const Status& s) {
      if (!s.ok()) {
        Status why = errors::Annotate(s, absl::StrCat("Task ", Where(prepared->partitions[k].task), ": "));
        if (progress.Fail(why)) AbortStep(*prepared, step_id, why);
      }
      progress.Done();
    };
    auto completed = [&, k, finish](const Status& s) {
      if (s.ok() && !prepared->partitions[k].push_keys.empty()) {
        DeliverPushed(step_id, prepared->partitions[k], &calls[k].resp, finish, &progress.mu, &progress.left);
      }
      finish(s);
    };
    if (static_cast<int>(k) == sync_partition) {
      // It depends on no other partition: run it on this thread first (no hand-off to a
      // callback thread), then the others find its tensors already delivered. Blocking here,
      // it gets the step's deadline itself.
      if (timeout_ms > 0) calls[k].opts.timeout_ms = timeout_ms;
      completed(p.worker->RunGraph(&calls[k].req, &calls[k].resp, &calls[k].opts));
    } else {
      p.worker->RunGraphAsync(&calls[k].req, &calls[k].resp, &calls[k].opts, completed);
    }
  }
  // Past the deadline, the step fails everywhere: tasks that still run it (a frozen one
  // included) are told to abort and their calls are cancelled.
  progress.Wait(timeout_ms, [&](const Status& why, bool abort) {
    if (abort) AbortStep(*prepared, step_id, why);
    for (Call& c : calls) c.opts.StartCancel();
  });
  if (client != nullptr) client->ClearCancelCallback();
  if (!progress.first_error.ok()) return progress.first_error;
  return CollectFetches(*prepared, req, &calls, resp);
}

void MasterSession::DeliverPushed(int64_t step_id, const Partition& from, proto::RunGraphResponse* resp,
                                  const std::function<void(const Status&)>& finish, std::mutex* mu, size_t* left) {
  StatusOr<std::shared_ptr<WorkerInterface>> local = workers_->GetWorker(local_task_);
  std::map<std::string, proto::PushedTensor*> pushed;
  for (proto::PushedTensor& p : *resp->mutable_pushed()) pushed[p.key()] = &p;
  auto one_more = [&] {
    std::lock_guard<std::mutex> l(*mu);
    ++*left;  // finish() ends one piece of work
  };
  for (const std::string& key : from.push_keys) {
    auto it = pushed.find(key);
    const proto::PushedTensor* p = it == pushed.end() ? nullptr : it->second;
    Status s = local.status();
    if (s.ok() && p != nullptr && (p->is_dead() || p->has_tensor())) {
      StatusOr<Tensor> t = p->is_dead() ? StatusOr<Tensor>(Tensor()) : TensorFromProto(p->tensor());
      s = t.ok() ? (*local)->Deposit(step_id, key, *t, p->is_dead()) : t.status();
    } else if (s.ok()) {
      // Too big to ride along (or not returned): pull it on the receiver's behalf.
      one_more();
      auto req = std::make_shared<proto::RecvTensorRequest>();
      auto result = std::make_shared<RecvTensorResult>();
      req->set_step_id(step_id);
      req->set_rendezvous_key(key);
      std::shared_ptr<WorkerInterface> to = *local;
      from.worker->RecvTensorAsync(req.get(), result.get(), nullptr,
                                   [req, result, to, step_id, finish](const Status& st) {
                                     Status ds = st.ok() ? to->Deposit(step_id, req->rendezvous_key(), result->tensor,
                                                                       result->is_dead)
                                                         : st;
                                     finish(ds);
                                   });
    }
    if (!s.ok()) {
      one_more();
      finish(s);
    }
  }
}

Status MasterSession::Close() {
  std::unordered_map<std::string, std::shared_ptr<Prepared>> prepared;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    prepared.swap(prepared_);
  }
  for (auto& [key, p] : prepared) {
    for (const Partition& part : p->partitions) {
      auto req = std::make_shared<proto::DeregisterGraphRequest>();
      auto resp = std::make_shared<proto::DeregisterGraphResponse>();
      req->set_session_handle(handle_);
      req->set_graph_handle(part.graph_handle);
      part.worker->DeregisterGraphAsync(req.get(), resp.get(), [req, resp](const Status&) {});
    }
  }
  return absl::OkStatus();
}

}  // namespace dflow
