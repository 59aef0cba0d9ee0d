// Recovery of MonitoredSession with an injected failing session: the target "flaky://NAME"
// runs a local session whose runs fail on demand with a chosen error; a failure may also wipe
// the variables, as a ps task that died and restarted does. The chief must restore the latest
// checkpoint exactly, a worker must wait again, and the retry budget must bound the loop.
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "base/env.h"
#include "base/temp_dir.h"
#include "dflow/basic_session_run_hooks.h"
#include "dflow/dflow.h"
#include "dflow/monitored_session.h"
#include "framework/resource_mgr.h"
#include "framework/session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/local_device.h"

namespace dflow::train {
namespace {

using ::testing::HasSubstr;

// What the flaky target named NAME does next.
struct Faults {
  std::mutex mu;
  int fail_runs = 0;     // the next this many runs fail
  int fail_creates = 0;  // the next this many graph creations fail
  absl::StatusCode code = absl::StatusCode::kUnavailable;
  bool wipe_variables = false;  // a failure also loses every variable of the container
  std::string container;
  int failures = 0;  // injected so far
  int sessions = 0;  // sessions opened
  // Runs that fetched the tensor named `watched` (a ready op) and found variables uninitialized:
  // a test waits on `cv` for a worker that checks the model and finds it not ready.
  std::string watched;
  int not_ready = 0;
  std::condition_variable cv;
};

std::map<std::string, Faults*>& Registry() {
  static auto* r = new std::map<std::string, Faults*>;
  return *r;
}
std::mutex registry_mu;

class FlakySession : public Session {
 public:
  FlakySession(std::unique_ptr<Session> inner, Faults* f) : inner_(std::move(inner)), f_(f) {}
  Status Create(const proto::GraphDef& g) override {
    RETURN_IF_ERROR(Inject("creating the session"));
    return inner_->Create(g);
  }
  Status Extend(const proto::GraphDef& g) override { return inner_->Extend(g); }
  Status Run(const RunOptions& o, const std::vector<std::pair<std::string, Tensor>>& in,
             const std::vector<std::string>& out, const std::vector<std::string>& targets, std::vector<Tensor>* r,
             RunMetadata* md) override {
    {
      std::lock_guard<std::mutex> l(f_->mu);
      if (f_->fail_runs > 0) {
        --f_->fail_runs;
        return Fail("running a step");
      }
    }
    Status s = inner_->Run(o, in, out, targets, r, md);
    if (s.ok() && r != nullptr) NoteNotReady(out, *r);
    return s;
  }
  std::vector<std::string> ListDevices() const override { return inner_->ListDevices(); }
  Status Close() override { return inner_->Close(); }

 private:
  Status Inject(const char* what) {
    std::lock_guard<std::mutex> l(f_->mu);
    if (f_->fail_creates == 0) return absl::OkStatus();
    --f_->fail_creates;
    return Fail(what);
  }
  void NoteNotReady(const std::vector<std::string>& out, const std::vector<Tensor>& r) {
    std::lock_guard<std::mutex> l(f_->mu);
    for (size_t i = 0; i < out.size() && i < r.size(); ++i) {
      if (!f_->watched.empty() && out[i] == f_->watched && r[i].NumElements() > 0) {
        ++f_->not_ready;
        f_->cv.notify_all();
      }
    }
  }
  // With f_->mu held.
  Status Fail(const char* what) {
    ++f_->failures;
    if (f_->wipe_variables) LocalCpuDevice()->resource_manager()->Cleanup(f_->container);
    return Status(f_->code, absl::StrCat("injected failure while ", what, ": /job:ps/replica:0/task:0 is gone"));
  }
  std::unique_ptr<Session> inner_;
  Faults* f_;
};

class FlakyFactory : public SessionFactory {
 public:
  bool AcceptsOptions(const SessionOptions& o) const override { return o.target.rfind("flaky://", 0) == 0; }
  StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& o) override {
    Faults* f;
    {
      std::lock_guard<std::mutex> l(registry_mu);
      auto it = Registry().find(o.target.substr(8));
      if (it == Registry().end()) return errors::NotFound("no flaky target ", o.target);
      f = it->second;
    }
    SessionOptions local = o;
    local.target = "";
    ASSIGN_OR_RETURN(std::unique_ptr<Session> inner, ::dflow::NewSession(local));
    std::lock_guard<std::mutex> l(f->mu);
    ++f->sessions;
    return std::unique_ptr<Session>(new FlakySession(std::move(inner), f));
  }
};

// A flaky target of its own for one test, with its own variable container.
class FlakyTarget {
 public:
  explicit FlakyTarget(const std::string& name) : name_(name) {
    static std::once_flag once;
    std::call_once(once, [] { RegisterSessionFactory("flaky", std::make_unique<FlakyFactory>()); });
    faults.container = "flaky_" + name;
    std::lock_guard<std::mutex> l(registry_mu);
    Registry()[name] = &faults;
  }
  ~FlakyTarget() {
    LocalCpuDevice()->resource_manager()->Cleanup(faults.container);
    std::lock_guard<std::mutex> l(registry_mu);
    Registry().erase(name_);
  }
  SessionOptions options() const {
    SessionOptions o;
    o.target = "flaky://" + name_;
    o.default_container = faults.container;
    return o;
  }
  Faults faults;

 private:
  std::string name_;
};

struct Model {
  explicit Model(const Scope& root) {
    global_step = CreateGlobalStep(root);
    w = Variable::Create(root.WithOpName("w"), {3}, DT_FLOAT, init::Constant(1.0f));
    loss = ops::Sum(root, ops::Square(root, w.read()), {0});
    train_op = GradientDescentOptimizer(0.1f).Minimize(root, loss, {}, global_step);
  }
  Output global_step, loss;
  Variable w;
  Operation train_op;
};

RecoveryOptions FastRecovery(int attempts) {
  RecoveryOptions r;
  r.max_recovery_attempts = attempts;
  r.initial_backoff_ms = 1;
  r.max_backoff_ms = 4;
  return r;
}

// Options of a MonitoredTrainingSession on `target` that retries `attempts` times, quickly and
// without step-rate lines.
MonitoredTrainingSessionOptions OptionsFor(const FlakyTarget& target, int attempts) {
  MonitoredTrainingSessionOptions o;
  o.config = target.options();
  o.master = o.config.target;
  o.log_step_count_steps = 0;
  o.recovery = FastRecovery(attempts);
  return o;
}

// Captures the variables right after each session is created.
class SnapshotHook : public SessionRunHook {
 public:
  explicit SnapshotHook(std::vector<Output> vars) : vars_(std::move(vars)) {}
  Status AfterCreateSession(ClientSession* s, Coordinator*) override {
    ASSIGN_OR_RETURN(std::vector<Tensor> v, s->Run(vars_));
    snapshots.push_back(std::move(v));
    return absl::OkStatus();
  }
  std::vector<std::vector<Tensor>> snapshots;

 private:
  std::vector<Output> vars_;
};

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0;
}

TEST(MonitoredSessionRecoveryTest, TheChiefRestoresTheLatestCheckpointExactlyAfterAPsDies) {
  TempDir dir;
  FlakyTarget target("chief_restores");
  target.faults.wipe_variables = true;
  Scope root = Scope::NewRootScope();
  Model m(root);
  MonitoredTrainingSessionOptions o = OptionsFor(target, 3);
  o.checkpoint_dir = dir.path();
  o.save_checkpoint_steps = 4;
  auto snapshot = std::make_shared<SnapshotHook>(std::vector<Output>{m.w.read(), m.global_step});
  o.hooks = {std::make_shared<StopAtStepHook>(m.global_step, 0, 20), snapshot};
  auto ms = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(ms.ok()) << ms.status();
  int64_t last_seen_step = 0;
  bool injected = false;
  while (!(*ms)->ShouldStop()) {
    auto r = (*ms)->Run({}, {m.global_step}, {m.train_op});
    ASSERT_TRUE(r.ok()) << r.status();
    const int64_t step = (*r)[0].scalar<int64_t>();
    if (step == 10 && !injected) {
      injected = true;
      std::lock_guard<std::mutex> l(target.faults.mu);
      target.faults.fail_runs = 1;  // the next step fails and the "ps" loses everything
    }
    // The step never goes back past the last checkpoint (8, the last multiple of 4 before 10).
    if (injected) {
      EXPECT_GE(step, 8);
    }
    last_seen_step = step;
  }
  auto final_step = (*ms)->raw_session()->Run({m.global_step});
  ASSERT_TRUE(final_step.ok());
  EXPECT_EQ((*final_step)[0].scalar<int64_t>(), 20);
  EXPECT_GE(last_seen_step, 19);  // fetched with the last step, before or after its increment
  ASSERT_TRUE((*ms)->Close().ok());
  EXPECT_EQ(target.faults.failures, 1);
  EXPECT_EQ((*ms)->sessions_created(), 2);
  // The second session started from checkpoint model.ckpt-8, bit for bit.
  ASSERT_EQ(snapshot->snapshots.size(), 2u);
  const std::vector<Tensor>& restored = snapshot->snapshots[1];
  EXPECT_EQ(restored[1].scalar<int64_t>(), 8);
  Scope check = Scope::NewRootScope();
  Model m2(check);
  auto saver = NewSaver(Saver(check));
  ClientSession fresh(check);
  ASSERT_TRUE(saver->Restore(fresh, JoinPath(dir.path(), "model.ckpt-8")).ok());
  auto expected = fresh.Run({m2.w.read(), m2.global_step});
  ASSERT_TRUE(expected.ok());
  EXPECT_TRUE(SameBits(restored[0], (*expected)[0])) << restored[0].DebugString();
  // The final checkpoint is the last step.
  auto latest = saver->LatestCheckpoint(dir.path());
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(*latest, JoinPath(dir.path(), "model.ckpt-20"));
}

TEST(MonitoredSessionRecoveryTest, AWorkerWaitsForTheChiefAgainAfterAFailure) {
  FlakyTarget target("worker_waits");
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto scaffold = std::make_shared<Scaffold>();
  ASSERT_TRUE(scaffold->Finalize(root).ok());
  ClientSession chief(root, target.options());
  ASSERT_TRUE(chief.Run({scaffold->init_op}).ok());
  auto ms = MonitoredSession::Create(std::make_unique<WorkerSessionCreator>(root, scaffold, target.options(),
                                                                            /*max_wait_secs=*/30),
                                     {}, FastRecovery(3));
  ASSERT_TRUE(ms.ok()) << ms.status();
  ASSERT_TRUE((*ms)->Run({}, {}, {m.train_op}).ok());
  {
    std::lock_guard<std::mutex> l(target.faults.mu);
    target.faults.fail_runs = 1;
    target.faults.code = absl::StatusCode::kAborted;
    target.faults.wipe_variables = true;
    target.faults.watched = scaffold->ready_op.name();
    EXPECT_EQ(target.faults.not_ready, 0);
  }
  // The chief initializes again once the worker's new session has found the model wiped; the
  // worker's retried step waits for that.
  std::thread chief_again([&] {
    {
      std::unique_lock<std::mutex> l(target.faults.mu);
      EXPECT_TRUE(target.faults.cv.wait_for(l, std::chrono::seconds(30), [&] { return target.faults.not_ready > 0; }))
          << "the worker never found the model not ready";
    }
    ClientSession again(root, target.options());
    EXPECT_TRUE(again.Run({scaffold->init_op}).ok());
  });
  auto r = (*ms)->Run({}, {m.global_step}, {m.train_op});
  chief_again.join();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LE((*r)[0].scalar<int64_t>(), 1);  // the first step after the new initialization
  EXPECT_EQ((*ms)->sessions_created(), 2);
}

TEST(MonitoredSessionRecoveryTest, OtherErrorsEndTheSessionWithoutRetry) {
  FlakyTarget target("other_errors");
  Scope root = Scope::NewRootScope();
  Model m(root);
  MonitoredTrainingSessionOptions o = OptionsFor(target, 5);
  auto ms = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(ms.ok()) << ms.status();
  {
    std::lock_guard<std::mutex> l(target.faults.mu);
    target.faults.fail_runs = 1;
    target.faults.code = absl::StatusCode::kInvalidArgument;
  }
  auto r = (*ms)->Run({}, {}, {m.train_op});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(target.faults.failures, 1);
  EXPECT_EQ((*ms)->sessions_created(), 1);
  EXPECT_TRUE((*ms)->ShouldStop());
}

TEST(MonitoredSessionRecoveryTest, TheRetryBudgetEndsWithTheLastError) {
  FlakyTarget target("budget");
  Scope root = Scope::NewRootScope();
  Model m(root);
  MonitoredTrainingSessionOptions o = OptionsFor(target, 4);
  auto ms = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(ms.ok()) << ms.status();
  {
    std::lock_guard<std::mutex> l(target.faults.mu);
    target.faults.fail_runs = 1000;  // every run fails from now on: steps and session creation
  }
  auto r = (*ms)->Run({}, {}, {m.train_op});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("injected failure"));
  // The first failure, then 4 recovery attempts that each fail once.
  EXPECT_EQ(target.faults.failures, 5);
  EXPECT_EQ((*ms)->Close().code(), absl::StatusCode::kUnavailable);
}

TEST(MonitoredSessionRecoveryTest, SessionCreationIsRetriedToo) {
  FlakyTarget target("creation");
  target.faults.fail_creates = 2;
  Scope root = Scope::NewRootScope();
  Model m(root);
  MonitoredTrainingSessionOptions o = OptionsFor(target, 2);
  auto ms = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_EQ(target.faults.failures, 2);
  auto r = (*ms)->Run({}, {m.global_step}, {m.train_op});
  ASSERT_TRUE(r.ok()) << r.status();

  FlakyTarget never("never");
  never.faults.fail_creates = 100;
  Scope root2 = Scope::NewRootScope();
  Model m2(root2);
  o.config = never.options();
  o.master = o.config.target;
  auto failed = MonitoredTrainingSession(root2, o);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(never.faults.failures, 3);
}

TEST(MonitoredSessionRecoveryTest, AFailureAfterTheJobCompletedEndsTrainingCleanly) {
  FlakyTarget target("job_complete");
  Scope root = Scope::NewRootScope();
  Model m(root);
  MonitoredTrainingSessionOptions o = OptionsFor(target, 5);
  bool complete = false;
  o.recovery.job_complete = [&complete] { return complete; };
  auto ms = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(ms.ok()) << ms.status();
  ASSERT_TRUE((*ms)->Run({}, {}, {m.train_op}).ok());
  {
    std::lock_guard<std::mutex> l(target.faults.mu);
    target.faults.fail_runs = 1000;
    target.faults.code = absl::StatusCode::kCancelled;  // the ps stopped during the step
  }
  complete = true;
  auto r = (*ms)->Run({}, {}, {m.train_op});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("Job is complete"));
  EXPECT_EQ(target.faults.failures, 1);  // no recovery attempt
  EXPECT_TRUE((*ms)->ShouldStop());
  EXPECT_TRUE((*ms)->Close().ok());
}

}  // namespace
}  // namespace dflow::train
