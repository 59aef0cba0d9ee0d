// MonitoredTrainingSession on a server of this process: once that task is told the job is
// complete, a step that fails because the ps task is gone ends training (OutOfRange) instead of
// being recovered from, with no job_complete callback set by the trainer; and the chief's
// session ends the job when it closes (ps tasks' Join returns, other workers stop).
#include <future>
#include <thread>

#include "base/net.h"
#include "dflow/dflow.h"
#include "dflow/monitored_session.h"
#include "dflow/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

TEST(MonitoredSessionClusterTest, AFailureAfterTheJobCompletedEndsTrainingWithoutACallback) {
  std::vector<int> ports = PickFreePorts(2).value();
  auto addr = [&](int i) { return "127.0.0.1:" + std::to_string(ports[i]); };
  ClusterSpec spec = ClusterSpec::FromJobs({{"ps", {addr(0)}}, {"worker", {addr(1)}}}).value();
  std::vector<std::unique_ptr<Server>> servers;
  for (const char* job : {"ps", "worker"}) {
    ServerOptions o;
    o.cluster = spec;
    o.job_name = job;
    o.startup_wait_ms = 2000;
    auto s = Server::Create(o);
    ASSERT_TRUE(s.ok()) << s.status();
    servers.push_back(std::move(s).value());
  }
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithDevice("/job:ps/task:0").WithOpName("w"), {}, DT_FLOAT, init::Zeros());
  Output step = ops::AssignAdd(root.WithDevice("/job:ps/task:0"), w.ref(), ops::Const(root, 1.0f));
  train::MonitoredTrainingSessionOptions o;
  o.master = servers[1]->target();
  o.is_chief = true;
  o.recovery.max_recovery_attempts = 3;
  o.recovery.initial_backoff_ms = 10;
  o.recovery.max_backoff_ms = 10;
  ASSERT_FALSE(o.recovery.job_complete);  // nothing set by the trainer
  auto session = train::MonitoredTrainingSession(root, o);
  ASSERT_TRUE(session.ok()) << session.status();
  auto r = (*session)->Run({step});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 1.0f);
  // The ps task goes away, then the worker's task is told the job is complete.
  servers[0]->Stop();
  JobCompleteOptions jc;
  jc.drain_ms = 100;
  jc.retry_ms = 0;
  ASSERT_TRUE(servers[1]->NotifyJobComplete(jc).ok());
  ASSERT_TRUE(servers[1]->job_complete());
  // Its server drains (100 ms) and stops: the next step fails with Unavailable, as when the
  // tasks it needs are gone, not with the OutOfRange a draining task answers.
  servers[1]->Join();
  auto after = (*session)->Run({step});
  ASSERT_FALSE(after.ok());
  EXPECT_TRUE(absl::IsOutOfRange(after.status())) << after.status();
  EXPECT_TRUE((*session)->ShouldStop());
}

// A ps and two workers in this process, each with its own graph as between-graph trainers have.
struct ThreeTasks {
  ThreeTasks() {
    std::vector<int> ports = PickFreePorts(3).value();
    auto addr = [&](int i) { return "127.0.0.1:" + std::to_string(ports[i]); };
    spec = ClusterSpec::FromJobs({{"ps", {addr(0)}}, {"worker", {addr(1), addr(2)}}}).value();
    for (auto [job, task] : std::vector<std::pair<const char*, int>>{{"ps", 0}, {"worker", 0}, {"worker", 1}}) {
      ServerOptions o;
      o.cluster = spec;
      o.job_name = job;
      o.task_index = task;
      o.startup_wait_ms = 5000;
      servers.push_back(Server::Create(o).value());
    }
  }
  ClusterSpec spec;
  std::vector<std::unique_ptr<Server>> servers;  // ps 0, worker 0 (the chief), worker 1
};

struct Model {
  Model() {
    Scope ps = root.WithDevice("/job:ps/task:0");
    step = train::CreateGlobalStep(ps);
    Variable w = Variable::Create(ps.WithOpName("w"), {}, DT_FLOAT, init::Zeros());
    Output add = ops::AssignAdd(ps, w.ref(), ops::Const(root, 1.0f));
    train_op = ops::AssignAdd(ps.WithControlDependencies({add.op()}), step, ops::Const(root, Tensor(int64_t{1}))).op();
  }
  train::MonitoredTrainingSessionOptions Options(Server* server, bool chief, int64_t last_step) const {
    train::MonitoredTrainingSessionOptions o;
    o.master = server->target();
    o.is_chief = chief;
    o.global_step = step;
    o.log_step_count_steps = 0;
    o.max_wait_secs = 30;
    o.hooks = {std::make_shared<train::StopAtStepHook>(step, 0, last_step)};
    o.job_complete_drain_ms = 200;
    return o;
  }
  Scope root = Scope::NewRootScope();
  Output step;
  Operation train_op;
};

TEST(MonitoredSessionClusterTest, TheChiefEndsTheJobWhenItsSessionCloses) {
  ThreeTasks c;
  auto ps_joined = std::async(std::launch::async, [&] { c.servers[0]->Join(); });
  Model chief_model, worker_model;
  auto chief = train::MonitoredTrainingSession(chief_model.root, chief_model.Options(c.servers[1].get(), true, 20));
  ASSERT_TRUE(chief.ok()) << chief.status();
  auto worker = train::MonitoredTrainingSession(worker_model.root,
                                                worker_model.Options(c.servers[2].get(), false, 1000));
  ASSERT_TRUE(worker.ok()) << worker.status();
  ASSERT_TRUE((*worker)->Run({}, {}, {worker_model.train_op}).ok());
  while (!(*chief)->ShouldStop()) ASSERT_TRUE((*chief)->Run({}, {}, {chief_model.train_op}).ok());
  // Nothing is told before the chief closes: the worker trains on.
  EXPECT_EQ(ps_joined.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  ASSERT_TRUE((*worker)->Run({}, {}, {worker_model.train_op}).ok());
  ASSERT_TRUE((*chief)->Close().ok());
  // The ps task's Join returned: it was told the job is complete.
  ASSERT_EQ(ps_joined.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(c.servers[0]->job_complete());
  EXPECT_TRUE(c.servers[2]->job_complete());
  // The other worker's next step ends its training cleanly.
  auto r = (*worker)->Run({}, {}, {worker_model.train_op});
  EXPECT_TRUE(absl::IsOutOfRange(r.status())) << r.status();
  EXPECT_TRUE((*worker)->ShouldStop());
  EXPECT_TRUE((*worker)->Close().ok());
  // A worker that comes up now has nothing to do: its session already stops.
  Model late_model;
  auto late = train::MonitoredTrainingSession(late_model.root, late_model.Options(c.servers[2].get(), false, 1000));
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_TRUE((*late)->ShouldStop());
  EXPECT_TRUE(absl::IsOutOfRange((*late)->Run({}, {}, {late_model.train_op}).status()));
  EXPECT_TRUE((*late)->Close().ok());
  // Telling the cluster again (as trainers that end the job themselves do) is fine.
  EXPECT_TRUE(c.servers[1]->NotifyJobComplete().ok());
}

TEST(MonitoredSessionClusterTest, AnAbandonedOrUnconfiguredChiefDoesNotEndTheJob) {
  ThreeTasks c;
  for (bool abandon : {true, false}) {
    Model m;
    train::MonitoredTrainingSessionOptions o = m.Options(c.servers[1].get(), true, 5);
    if (!abandon) o.notify_job_complete = false;
    auto chief = train::MonitoredTrainingSession(m.root, o);
    ASSERT_TRUE(chief.ok()) << chief.status();
    ASSERT_TRUE((*chief)->Run({}, {}, {m.train_op}).ok());
    if (abandon) {
      (*chief)->Abandon(errors::Aborted("the caller's loop failed"));
      EXPECT_TRUE((*chief)->ShouldStop());
      EXPECT_TRUE(absl::IsFailedPrecondition((*chief)->Run({}, {}, {m.train_op}).status()));
      EXPECT_TRUE(absl::IsAborted((*chief)->Close()));
    } else {
      while (!(*chief)->ShouldStop()) ASSERT_TRUE((*chief)->Run({}, {}, {m.train_op}).ok());
      EXPECT_TRUE((*chief)->Close().ok());
    }
    EXPECT_FALSE(c.servers[0]->job_complete());
    EXPECT_FALSE(c.servers[1]->job_complete());
  }
}

TEST(MonitoredSessionClusterTest, TheChiefRunsInitFnWithTheInitFeedsWhenThereIsNoCheckpoint) {
  Model m;
  Output x = ops::Placeholder(m.root, DT_FLOAT);
  Variable v = Variable::Create(m.root.WithOpName("v"), {}, DT_FLOAT, init::Zeros());
  Operation init = ops::Assign(m.root, v.ref(), x).op();
  train::MonitoredTrainingSessionOptions o;
  o.log_step_count_steps = 0;
  o.scaffold.init_op = init;
  o.scaffold.init_feed_dict = {{x, Input::Initializer(Tensor(3.0f))}};
  int calls = 0;
  o.scaffold.init_fn = [&](ClientSession* s) {
    ++calls;
    return s->Run({ops::AssignAdd(m.root, v.ref(), ops::Const(m.root, 1.0f)).op()});
  };
  // The default init op would initialize the others; this one sets v only, so the model is
  // ready only when the ready op looks at v alone.
  o.scaffold.ready_op = ReportUninitializedVariables(m.root, {v.ref()});
  auto s = train::MonitoredTrainingSession(m.root, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(calls, 1);
  auto r = (*s)->raw_session()->Run({v.read()});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 4.0f);
}

}  // namespace
}  // namespace dflow
