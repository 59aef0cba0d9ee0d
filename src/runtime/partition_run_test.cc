// Partitioned execution in one process: a step graph placed on two devices, split by
// PartitionGraph, each partition imported from its GraphDef and run by its own Executor, all
// sharing one LocalRendezvous and step id — compared with running the same graph unpartitioned.
// Also: a failing partition must not leave the others waiting.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "base/notification.h"
#include "framework/cancellation.h"
#include "gmock/gmock.h"
#include "graph/graph_builder.h"
#include "graph/graph_def.h"
#include "graph/partition.h"
#include "graph/placer.h"
#include "graph/subgraph.h"
#include "gtest/gtest.h"
#include "ops/register_all.h"
#include "proto/graph.pb.h"
#include "runtime/executor.h"
#include "runtime/local_rendezvous.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

constexpr char kPs[] = "/job:ps/replica:0/task:0/device:CPU:0";
constexpr char kWorker[] = "/job:worker/replica:0/task:0/device:CPU:0";
constexpr char kAlone[] = "/job:localhost/replica:0/task:0/device:CPU:0";

// One step graph split into partitions, each with its executor.
struct Partitioned {
  struct Part {
    Device* device = nullptr;
    std::unique_ptr<Executor> executor;
    std::vector<int> args;     // the step's feed index of each of this partition's _Arg nodes
    std::vector<int> retvals;  // the step's fetch index of each of its _Retval nodes
  };
  std::vector<Part> parts;
  size_t num_fetches = 0;
};

// Gives the partition's _Arg (or _Retval) nodes local indices; returns their step indices.
StatusOr<std::vector<int>> Renumber(proto::GraphDef* def, const std::string& op) {
  std::vector<std::pair<int64_t, proto::NodeDef*>> found;
  for (auto& n : *def->mutable_node()) {
    if (n.op() != op) continue;
    auto it = n.attr().find("index");
    if (it == n.attr().end()) return errors::Internal(op, " ", n.name(), " has no index");
    found.emplace_back(it->second.i(), &n);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int> global;
  for (size_t i = 0; i < found.size(); ++i) {
    global.push_back(static_cast<int>(found[i].first));
    (*found[i].second->mutable_attr())["index"].set_i(static_cast<int64_t>(i));
  }
  return global;
}

StatusOr<Partitioned> Build(const Graph& full, const std::vector<std::string>& feeds,
                            const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
                            const std::vector<Device*>& devices, bool soft = false) {
  ASSIGN_OR_RETURN(StepGraph step, BuildStepGraph(full, feeds, fetches, targets));
  PlacementOptions popts;
  popts.allow_soft_placement = soft;
  RETURN_IF_ERROR(PlaceGraph(step.graph.get(), devices, popts));
  PartitionOptions po;
  po.node_to_loc = [](const Node& n) { return n.assigned_device(); };
  po.get_incarnation = [](const std::string& d) -> uint64_t { return std::hash<std::string>()(d); };
  std::map<std::string, proto::GraphDef> defs;
  RETURN_IF_ERROR(PartitionGraph(po, *step.graph, &defs));
  Partitioned out;
  out.num_fetches = fetches.size();
  for (auto& [loc, def] : defs) {
    Partitioned::Part p;
    for (Device* d : devices)
      if (d->name() == loc) p.device = d;
    if (p.device == nullptr) return errors::Internal("no device ", loc);
    ASSIGN_OR_RETURN(p.args, Renumber(&def, "_Arg"));
    ASSIGN_OR_RETURN(p.retvals, Renumber(&def, "_Retval"));
    auto g = std::make_unique<Graph>();
    RETURN_IF_ERROR(ImportGraphDef(def, g.get()));
    for (Node* n : g->nodes()) n->set_assigned_device(n->requested_device());
    ExecutorParams params;
    params.device = p.device;
    Device* device = p.device;
    params.create_kernel = [device](const Node& n) -> StatusOr<std::shared_ptr<OpKernel>> {
      ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k,
                       KernelRegistry::Global()->CreateKernel(device, device->device_type(), n.props_ptr()));
      return std::shared_ptr<OpKernel>(std::move(k));
    };
    ASSIGN_OR_RETURN(p.executor, Executor::Create(std::move(params), std::move(g)));
    out.parts.push_back(std::move(p));
  }
  return out;
}

struct PartResult {
  Status status;
  Notification done;
};

// Runs every partition of one step with a shared rendezvous (`rendezvous`, or a fresh local one);
// `statuses` gets each partition's own status. Returns the first error.
Status RunStep(const Partitioned& p, const std::vector<Tensor>& feeds, std::vector<Tensor>* fetches,
               std::vector<Status>* statuses = nullptr, Rendezvous* rendezvous = nullptr,
               const std::vector<bool>& skip = {}) {
  static std::atomic<int64_t> next_step{1};
  LocalRendezvous local;
  Rendezvous* r = rendezvous != nullptr ? rendezvous : &local;
  const int64_t step_id = next_step.fetch_add(1);
  size_t n = p.parts.size();
  std::vector<std::unique_ptr<CallFrame>> frames(n);
  std::vector<std::unique_ptr<CancellationManager>> cms(n);
  std::vector<std::unique_ptr<PartResult>> results(n);
  for (size_t i = 0; i < n; ++i) {
    const Partitioned::Part& part = p.parts[i];
    std::vector<Tensor> args;
    for (int a : part.args) args.push_back(feeds.at(a));
    frames[i] = std::make_unique<CallFrame>(std::move(args), part.retvals.size());
    cms[i] = std::make_unique<CancellationManager>();
    results[i] = std::make_unique<PartResult>();
  }
  for (size_t i = 0; i < n; ++i) {
    if (i < skip.size() && skip[i]) {
      results[i]->status = errors::Cancelled("not run");
      results[i]->done.Notify();
      continue;
    }
    Executor::Args args;
    args.step.step_id = step_id;
    args.step.device = p.parts[i].device;
    args.step.default_container = "partition_run_test";
    args.step.call_frame = frames[i].get();
    args.step.rendezvous = r;
    args.step.cancellation = cms[i].get();
    PartResult* res = results[i].get();
    p.parts[i].executor->RunAsync(args, [res](const Status& s, std::vector<NodeExecStats>) {
      res->status = s;
      res->done.Notify();
    });
  }
  Status first;
  for (size_t i = 0; i < n; ++i) {
    if (!results[i]->done.WaitFor(std::chrono::seconds(30))) {
      // Never leave executors running on this frame's objects: abort, then wait for them.
      Status late = errors::DeadlineExceeded("partition on ", p.parts[i].device->name(), " did not finish");
      r->StartAbort(late);
      for (auto& cm : cms) cm->StartCancel();
      for (auto& res : results) res->done.WaitFor(std::chrono::seconds(30));
      return late;
    }
  }
  fetches->assign(p.num_fetches, Tensor());
  for (size_t i = 0; i < n; ++i) {
    if (statuses != nullptr) statuses->push_back(results[i]->status);
    if (!results[i]->status.ok() && first.ok()) first = results[i]->status;
    std::vector<Tensor> rets = frames[i]->TakeRetvals();
    for (size_t k = 0; k < rets.size(); ++k) (*fetches)[p.parts[i].retvals[k]] = rets[k];
  }
  return first;
}

void ExpectSameTensor(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_TRUE(got.IsInitialized()) << what;
  ASSERT_TRUE(want.IsInitialized()) << what;
  EXPECT_EQ(got.dtype(), want.dtype()) << what;
  EXPECT_EQ(got.shape(), want.shape()) << what;
  EXPECT_EQ(got.DebugString(), want.DebugString()) << what;
}

class PartitionRunTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterAllOps(); }

  // Runs the graph partitioned on {worker, ps} and alone on one device; expects the same fetches
  // and returns them.
  std::vector<Tensor> RunBoth(const std::vector<std::pair<std::string, Tensor>>& feeds,
                              const std::vector<std::string>& fetches, const std::vector<std::string>& targets = {},
                              size_t want_parts = 2) {
    std::vector<std::string> feed_names;
    std::vector<Tensor> feed_values;
    for (const auto& [n, v] : feeds) {
      feed_names.push_back(n);
      feed_values.push_back(v);
    }
    auto split = Build(g_, feed_names, fetches, targets, {&worker_, &ps_});
    EXPECT_TRUE(split.ok()) << split.status();
    auto alone = Build(g_, feed_names, fetches, targets, {&alone_}, /*soft=*/true);
    EXPECT_TRUE(alone.ok()) << alone.status();
    if (!split.ok() || !alone.ok()) return {};
    EXPECT_EQ(split->parts.size(), want_parts);
    EXPECT_EQ(alone->parts.size(), 1u);
    std::vector<Tensor> got, want;
    Status s1 = RunStep(*split, feed_values, &got);
    Status s2 = RunStep(*alone, feed_values, &want);
    EXPECT_TRUE(s1.ok()) << s1;
    EXPECT_TRUE(s2.ok()) << s2;
    if (!s1.ok() || !s2.ok()) return {};
    for (size_t i = 0; i < fetches.size(); ++i) ExpectSameTensor(got[i], want[i], fetches[i]);
    return got;
  }

  GraphBuilder Ps() { return GraphBuilder(&g_).WithDevice("/job:ps/task:0"); }
  GraphBuilder Worker() { return GraphBuilder(&g_).WithDevice("/job:worker/task:0"); }

  Graph g_;
  Device worker_{kWorker, "CPU"};
  Device ps_{kPs, "CPU"};
  Device alone_{kAlone, "CPU"};
};

Tensor Vec(std::vector<float> v) {
  return Tensor::FromValues<float>(absl::MakeConstSpan(v), TensorShape{static_cast<int64_t>(v.size())}).value();
}

TEST_F(PartitionRunTest, ArithmeticAcrossTwoDevices) {
  GraphBuilder ps = Ps(), worker = Worker();
  NodeOut x = worker.Op("Placeholder", {}, {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape{3}}}, "x");
  NodeOut w = ps.Const(Vec({2, 3, 4}), "w");
  NodeOut y = ps.Op("Mul", {x, w}, {}, "y");           // x crosses to ps
  NodeOut z = worker.Op("AddV2", {y, x}, {}, "z");     // y crosses back
  NodeOut y2 = worker.Op("Square", {y}, {}, "y2");     // the same tensor, the same pair
  NodeOut sum = ps.Op("AddN", {z, y2, w}, {}, "sum");  // two tensors to ps
  ASSERT_TRUE(ps.ok() && worker.ok()) << ps.status() << worker.status();
  std::vector<Tensor> out = RunBoth({{"x", Vec({1, -2, 0.5})}}, {"z", "sum", "y"});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].DebugString(), Vec({3, -8, 2.5}).DebugString());
  EXPECT_FLOAT_EQ(out[1].flat<float>()[0], 3 + 4 + 2);
  EXPECT_FLOAT_EQ(out[1].flat<float>()[1], -8 + 36 + 3);
}

TEST_F(PartitionRunTest, AVariableOnThePsUpdatedFromTheWorker) {
  GraphBuilder ps = Ps(), worker = Worker();
  NodeOut v = ps.Op("VariableV2", {}, {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape{2}}}, "v");
  NodeOut init = worker.Const(Vec({1, 2}), "init");
  // Built on the worker; placement moves the updates to the variable's device.
  GraphBuilder(&g_).Op("Assign", {v, init}, {}, "assign");
  NodeOut x = worker.Op("Placeholder", {}, {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape{2}}}, "x");
  NodeOut grad = worker.Op("Mul", {x, x}, {}, "grad");
  NodeOut lr = worker.Const(Tensor(0.5f), "lr");
  GraphBuilder(&g_).Op("ApplyGradientDescent", {v, lr, grad}, {}, "sgd");
  GraphBuilder(&g_).Op("AssignAdd", {v, init}, {}, "add");
  worker.Op("Identity", {v}, {}, "read");
  ASSERT_TRUE(ps.ok() && worker.ok()) << ps.status() << worker.status();

  RunBoth({}, {}, {"assign"});
  RunBoth({{"x", Vec({2, 4})}}, {}, {"sgd"});  // v -= 0.5 * x^2
  RunBoth({}, {}, {"add"});
  std::vector<Tensor> out = RunBoth({}, {"read"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].DebugString(), Vec({1 - 2 + 1, 2 - 8 + 2}).DebugString());
  // The variable lives on the ps, not on the worker.
  EXPECT_TRUE(ps_.resource_manager()->Lookup<Var>("partition_run_test", "v").ok());
  EXPECT_FALSE(worker_.resource_manager()->Lookup<Var>("partition_run_test", "v").ok());
}

TEST_F(PartitionRunTest, ACondWhoseBranchesSpanDevices) {
  GraphBuilder ps = Ps(), worker = Worker();
  NodeOut x = ps.Op("Placeholder", {}, {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape{}}}, "x");
  NodeOut p = ps.Op("Placeholder", {}, {{"dtype", DT_BOOL}, {"shape", PartialTensorShape{}}}, "p");
  Node* sw = ps.AddNode("Switch", {x, p}, {}, "switch");
  ASSERT_NE(sw, nullptr);
  // Then-branch: its pivot on the ps, its ops on the worker, one depending on the pivot by
  // control only (a dead control edge crossing devices).
  Node* pivot_t = ps.AddNode("Identity", {{sw, 1}}, {}, "pivot_t");
  NodeOut ten = worker.WithControlInputs({pivot_t}).Const(Tensor(10.0f), "ten");
  NodeOut t = worker.Op("Mul", {{sw, 1}, ten}, {}, "t");
  // Else-branch on the ps.
  NodeOut f = ps.Op("Neg", {{sw, 0}}, {}, "f");
  Node* merge = worker.AddNode("Merge", {f, t}, {}, "merge");
  ASSERT_NE(merge, nullptr);
  ps.Op("Identity", {{merge, 0}}, {}, "out");
  ASSERT_TRUE(ps.ok() && worker.ok()) << ps.status() << worker.status();

  for (bool pred : {true, false}) {
    SCOPED_TRACE(pred);
    std::vector<Tensor> out = RunBoth({{"x", Tensor(3.0f)}, {"p", Tensor(pred)}}, {"out", "merge:1"});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].scalar<float>(), pred ? 30.0f : -3.0f);
    EXPECT_EQ(out[1].scalar<int32_t>(), pred ? 1 : 0);
  }
}

TEST_F(PartitionRunTest, AnUntakenBranchOnAnotherDeviceStaysDead) {
  // Only the untaken branch reaches the worker: its _Send runs dead, the worker's ops are
  // skipped (a division by zero there would fail the step), and the fetch comes from the ps.
  GraphBuilder ps = Ps(), worker = Worker();
  NodeOut x = ps.Op("Placeholder", {}, {{"dtype", DT_INT32}, {"shape", PartialTensorShape{}}}, "x");
  NodeOut p = ps.Op("Placeholder", {}, {{"dtype", DT_BOOL}, {"shape", PartialTensorShape{}}}, "p");
  Node* sw = ps.AddNode("Switch", {x, p}, {}, "switch");
  NodeOut zero = worker.Const(Tensor(int32_t{0}), "zero");
  NodeOut bad = worker.Op("Div", {{sw, 1}, zero}, {}, "bad");
  NodeOut good = ps.Op("Neg", {{sw, 0}}, {}, "good");
  ps.AddNode("Merge", {good, bad}, {}, "merge");
  ASSERT_TRUE(ps.ok() && worker.ok()) << ps.status() << worker.status();
  std::vector<Tensor> out = RunBoth({{"x", Tensor(int32_t{4})}, {"p", Tensor(false)}}, {"merge"});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].scalar<int32_t>(), -4);
}

TEST_F(PartitionRunTest, ControlEdgesAcrossDevicesOrderTheStep) {
  // incr (ps) -> gate (worker) -> read (ps), by control edges only: the read sees the increment
  // of its own step. (A read on another device would snapshot the variable when its _Send runs,
  // which control edges at the reader do not order.)
  GraphBuilder ps = Ps(), worker = Worker();
  NodeOut v = ps.Op("VariableV2", {}, {{"dtype", DT_FLOAT}, {"shape", PartialTensorShape{}}}, "v");
  NodeOut zero = ps.Const(Tensor(0.0f), "zero");
  ps.Op("Assign", {v, zero}, {}, "init");
  NodeOut one = ps.Const(Tensor(1.0f), "one");
  Node* incr = ps.AddNode("AssignAdd", {v, one}, {}, "incr");
  Node* gate = worker.WithControlInputs({incr}).AddNode("NoOp", {}, {}, "gate");
  ps.WithControlInputs({gate}).Op("Identity", {v}, {}, "read");
  worker.WithControlInputs({incr}).AddNode("NoOp", {}, {}, "done");
  ASSERT_TRUE(ps.ok() && worker.ok()) << ps.status() << worker.status();
  RunBoth({}, {}, {"init"}, 1);
  for (float want : {1.0f, 2.0f, 3.0f}) {
    std::vector<Tensor> out = RunBoth({}, {"read"}, {"done"});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].scalar<float>(), want);
  }
}

TEST_F(PartitionRunTest, AFailingPartitionEndsTheOthers) {
  // The worker divides by zero; the ps waits for the quotient. The worker's executor aborts the
  // shared rendezvous with its error, so the ps's _Recv ends with it instead of waiting.
  GraphBuilder ps = Ps(), worker = Worker();
  NodeOut x = ps.Const(Tensor(int32_t{7}), "x");
  NodeOut zero = worker.Const(Tensor(int32_t{0}), "zero");
  NodeOut q = worker.Op("Div", {x, zero}, {}, "q");
  ps.Op("Identity", {q}, {}, "out");
  ASSERT_TRUE(ps.ok() && worker.ok()) << ps.status() << worker.status();
  auto split = Build(g_, {}, {"out"}, {}, {&worker_, &ps_});
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->parts.size(), 2u);
  std::vector<Tensor> out;
  std::vector<Status> statuses;
  LocalRendezvous rendezvous;
  Status s = RunStep(*split, {}, &out, &statuses, &rendezvous);
  EXPECT_FALSE(s.ok());
  ASSERT_EQ(statuses.size(), 2u);
  for (const Status& st : statuses) {
    EXPECT_FALSE(st.ok());
    EXPECT_THAT(std::string(st.message()), HasSubstr("division by zero")) << st;
  }
  EXPECT_THAT(std::string(rendezvous.status().message()), HasSubstr("[node q (Div)]"));
}

// A LocalRendezvous that shows when a receiver waits in it, and how many waited when it was
// first aborted: a test aborts once a receiver waits instead of after a sleep.
class WatchedRendezvous : public LocalRendezvous {
 public:
  void RecvAsync(const std::string& key, DoneCallback done) override {
    auto state = std::make_shared<RecvState>();
    LocalRendezvous::RecvAsync(key, [this, state, done = std::move(done)](const Status& s, Tensor t, bool dead) {
      {
        std::lock_guard<std::mutex> l(mu_);
        state->done = true;
        if (state->waiting) --waiting_;
      }
      done(s, std::move(t), dead);
    });
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!state->done) {  // its value was not there: it waits
        state->waiting = true;
        ++waiting_;
      }
    }
    cv_.notify_all();
  }
  void StartAbort(const Status& status) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (waiting_at_abort_ < 0) waiting_at_abort_ = waiting_;  // the first abort (the executor aborts again)
    }
    LocalRendezvous::StartAbort(status);
  }
  // Waits at most `seconds` until `n` receivers wait at once.
  bool WaitForReceivers(int n, int seconds) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::seconds(seconds), [&] { return waiting_ >= n; });
  }
  int waiting_at_abort() {
    std::lock_guard<std::mutex> l(mu_);
    return waiting_at_abort_;
  }

 private:
  struct RecvState {
    bool done = false;     // its callback ran
    bool waiting = false;  // counted in waiting_
  };
  std::mutex mu_;
  std::condition_variable cv_;
  int waiting_ = 0;  // guarded by mu_
  int waiting_at_abort_ = -1;
};

TEST_F(PartitionRunTest, AbortingTheRendezvousEndsAWaitingPartition) {
  // The sender's partition never runs (its task died): aborting the rendezvous ends the step of
  // the receiving partition with that error.
  GraphBuilder ps = Ps(), worker = Worker();
  NodeOut x = worker.Const(Tensor(1.0f), "x");
  ps.Op("Identity", {x}, {}, "out");
  ASSERT_TRUE(ps.ok() && worker.ok());
  auto split = Build(g_, {}, {"out"}, {}, {&worker_, &ps_});
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->parts.size(), 2u);
  std::vector<bool> skip;
  for (const auto& part : split->parts) skip.push_back(part.device == &worker_);
  WatchedRendezvous rendezvous;
  std::thread aborter([&] {
    EXPECT_TRUE(rendezvous.WaitForReceivers(1, 30)) << "the receiving partition never waited";
    rendezvous.StartAbort(errors::Unavailable("task /job:worker/replica:0/task:0 is gone"));
  });
  std::vector<Tensor> out;
  std::vector<Status> statuses;
  Status s = RunStep(*split, {}, &out, &statuses, &rendezvous, skip);
  aborter.join();
  EXPECT_FALSE(s.ok());
  ASSERT_EQ(statuses.size(), 2u);
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (skip[i]) continue;
    EXPECT_EQ(statuses[i].code(), absl::StatusCode::kUnavailable) << statuses[i];
    EXPECT_THAT(std::string(statuses[i].message()), HasSubstr("is gone"));
  }
  EXPECT_EQ(rendezvous.waiting_at_abort(), 1) << "the abort did not find the receiver waiting";
}

TEST_F(PartitionRunTest, CancellingOnePartitionEndsTheStep) {
  // A partition whose step is cancelled (a deadline, Session::Close) aborts the shared rendezvous
  // too, so its peers waiting for it end.
  GraphBuilder ps = Ps(), worker = Worker();
  NodeOut x = worker.Const(Tensor(1.0f), "x");
  NodeOut y = ps.Op("Identity", {x}, {}, "y");
  worker.Op("Identity", {y}, {}, "back");
  ASSERT_TRUE(ps.ok() && worker.ok());
  auto split = Build(g_, {}, {"back"}, {}, {&worker_, &ps_});
  ASSERT_TRUE(split.ok()) << split.status();
  ASSERT_EQ(split->parts.size(), 2u);
  // Run only the worker, whose _Recv of y waits; cancel it.
  LocalRendezvous rendezvous;
  CancellationManager cm;
  CallFrame frame({}, 1);
  PartResult res;
  const Partitioned::Part* worker_part = nullptr;
  for (const auto& part : split->parts)
    if (part.device == &worker_) worker_part = &part;
  ASSERT_NE(worker_part, nullptr);
  Executor::Args args;
  args.step.step_id = 77;
  args.step.device = &worker_;
  args.step.call_frame = &frame;
  args.step.rendezvous = &rendezvous;
  args.step.cancellation = &cm;
  worker_part->executor->RunAsync(args, [&res](const Status& s, std::vector<NodeExecStats>) {
    res.status = s;
    res.done.Notify();
  });
  EXPECT_FALSE(res.done.HasBeenNotified());
  cm.StartCancel();
  ASSERT_TRUE(res.done.WaitFor(std::chrono::seconds(30)));
  EXPECT_EQ(res.status.code(), absl::StatusCode::kCancelled) << res.status;
  EXPECT_EQ(rendezvous.status().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace dflow
