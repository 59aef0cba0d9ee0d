// MonitoredSession: readiness (ReportUninitializedVariables), the default saver, the chief and
// worker session creators, hooks around each step, and recovery from failed runs injected by a
// session target whose runs fail on demand (and lose the variables, as a restarted ps does).
#include "dflow/monitored_session.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>

#include "base/env.h"
#include "base/logging.h"
#include "base/temp_dir.h"
#include "dflow/basic_session_run_hooks.h"
#include "dflow/dflow.h"
#include "framework/resource_mgr.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/executor_test_util.h"
#include "runtime/local_device.h"

namespace dflow::train {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Strings(const Tensor& t) {
  std::vector<std::string> r;
  for (int64_t i = 0; i < t.NumElements(); ++i) r.push_back(t.data<std::string>()[i]);
  return r;
}

TEST(ReportUninitializedVariablesTest, NamesTheVariablesWithoutAValueInOrder) {
  Scope root = Scope::NewRootScope();
  Variable a = Variable::Create(root.WithOpName("a"), {2}, DT_FLOAT, init::Ones());
  Variable b = Variable::Create(root.WithOpName("b"), {}, DT_INT32, init::Zeros());
  CreateGlobalStep(root);
  Output all = ReportUninitializedVariables(root);
  Output only_b = ReportUninitializedVariables(root, {b.ref()});
  Output init_a = ops::IsVariableInitialized(root, a.ref());
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  auto r = session.Run({all, only_b, init_a});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Strings((*r)[0]), ElementsAre("a", "b", "global_step"));
  EXPECT_THAT(Strings((*r)[1]), ElementsAre("b"));
  EXPECT_FALSE((*r)[2].scalar<bool>());
  ASSERT_TRUE(session.Run({a.initializer()}).ok());
  r = session.Run({all, init_a});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(Strings((*r)[0]), ElementsAre("b", "global_step"));
  EXPECT_TRUE((*r)[1].scalar<bool>());
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  r = session.Run({all});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].NumElements(), 0);
  EXPECT_EQ((*r)[0].dims(), 1);
}

TEST(ReportUninitializedVariablesTest, AGraphWithoutVariablesIsReady) {
  Scope root = Scope::NewRootScope();
  Output ready = ReportUninitializedVariables(root);
  ClientSession session(root);
  auto r = session.Run({ready});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].NumElements(), 0);
}

TEST(ReportUninitializedVariablesTest, ANonVariableIsAnError) {
  Scope root = Scope::NewRootScope();
  Output c = ops::Const(root.WithOpName("c"), 1.0f);
  EXPECT_FALSE(ReportUninitializedVariables(root, {c}).valid());
  EXPECT_THAT(root.status().message(), HasSubstr("'c:0' is a float, not a variable"));
  Scope other = Scope::NewRootScope();
  EXPECT_FALSE(ops::IsVariableInitialized(other, ops::Const(other, 1.0f)).valid());  // needs a reference
  EXPECT_FALSE(other.ok());
}

// w (2 floats, starts at 1) trained on loss = sum(w^2) with learning rate 0.1: each step
// multiplies w by 0.8.
struct Model {
  explicit Model(const Scope& root) {
    global_step = CreateGlobalStep(root);
    w = Variable::Create(root.WithOpName("w"), {2}, DT_FLOAT, init::Constant(1.0f));
    loss = ops::Sum(root, ops::Square(root, w.read()), {0});
    train_op = GradientDescentOptimizer(0.1f).Minimize(root, loss, {}, global_step);
  }
  Output global_step, loss;
  Variable w;
  Operation train_op;
};

float Trained(int steps) {
  float w = 1.0f;
  for (int i = 0; i < steps; ++i) w -= 0.1f * (2.0f * w);
  return w;
}

TEST(SaverAdapterTest, SavesRestoresAndFindsTheLatestCheckpoint) {
  TempDir dir;
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto saver = NewSaver(Saver(root));
  Operation init = GlobalVariablesInitializer(root);
  ASSERT_TRUE(root.ok()) << root.status();
  auto none = saver->LatestCheckpoint(dir.path());
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(*none, "");
  ClientSession session(root);
  ASSERT_TRUE(session.Run({init}).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(session.Run({m.train_op}).ok());
  auto before = session.Run({m.w.read(), m.global_step});
  ASSERT_TRUE(before.ok());
  const std::string prefix = JoinPath(dir.path(), "model.ckpt");
  auto path = saver->Save(session, prefix, 3);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, prefix + "-3");
  EXPECT_EQ(*saver->LatestCheckpoint(dir.path()), prefix + "-3");
  // Train on, then restore: the values come back exactly.
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(session.Run({m.train_op}).ok());
  ASSERT_TRUE(saver->Restore(session, *path).ok());
  auto after = session.Run({m.w.read(), m.global_step});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(std::memcmp((*before)[0].raw_data(), (*after)[0].raw_data(), 8), 0);
  EXPECT_EQ((*after)[1].scalar<int64_t>(), 3);
  EXPECT_EQ((*after)[0].flat<float>()[0], Trained(3));
}

TEST(SessionCreatorTest, TheChiefInitializesThenRestoresTheLatestCheckpoint) {
  TempDir dir;
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto scaffold = std::make_shared<Scaffold>();
  ASSERT_TRUE(scaffold->Finalize(root).ok());
  ChiefSessionCreator chief(root, scaffold, SessionOptions(), dir.path());
  auto s1 = chief.CreateSession();
  ASSERT_TRUE(s1.ok()) << s1.status();
  EXPECT_EQ(chief.restored_checkpoint(), "");
  auto w = (*s1)->Run({m.w.read()});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ((*w)[0].flat<float>()[0], 1.0f);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE((*s1)->Run({m.train_op}).ok());
  ASSERT_TRUE(scaffold->saver->Save(**s1, JoinPath(dir.path(), "model.ckpt"), 4).ok());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE((*s1)->Run({m.train_op}).ok());
  auto s2 = chief.CreateSession();
  ASSERT_TRUE(s2.ok()) << s2.status();
  EXPECT_EQ(chief.restored_checkpoint(), JoinPath(dir.path(), "model.ckpt-4"));
  auto r = (*s2)->Run({m.w.read(), m.global_step});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].flat<float>()[1], Trained(4));
  EXPECT_EQ((*r)[1].scalar<int64_t>(), 4);
}

// Ways a checkpoint's files get damaged (a bad disk, a copy cut short, a file lost).
enum class Damage { kFlipDataByte, kTruncateData, kDeleteData, kFlipIndexByte, kTruncateIndex, kDeleteIndex };

void DamageCheckpoint(const std::string& prefix, Damage d) {
  const std::string data = prefix + ".data-00000-of-00001", index = prefix + ".index";
  const bool on_data = d == Damage::kFlipDataByte || d == Damage::kTruncateData || d == Damage::kDeleteData;
  const std::string file = on_data ? data : index;
  if (d == Damage::kDeleteData || d == Damage::kDeleteIndex) {
    ASSERT_TRUE(Env::Default()->DeleteFile(file).ok());
    return;
  }
  std::string bytes = Env::Default()->ReadFile(file).value();
  ASSERT_GT(bytes.size(), 8u);
  if (d == Damage::kTruncateData || d == Damage::kTruncateIndex) {
    bytes.resize(bytes.size() / 2);
  } else {
    bytes[bytes.size() / 3] ^= 0x20;
  }
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(file, bytes).ok());
}

// The model in a graph of its own with a finalized default scaffold (`extra`: with one more
// variable, a different model).
struct Chief {
  explicit Chief(bool extra = false) : m(root) {
    if (extra) Variable::Create(root.WithOpName("extra"), {1}, DT_FLOAT, init::Zeros());
    status = scaffold->Finalize(root);
  }
  Scope root = Scope::NewRootScope();
  Model m;
  std::shared_ptr<Scaffold> scaffold = std::make_shared<Scaffold>();
  Status status;
};

// Trains 3 steps and saves, then 3 more and saves again: model.ckpt-3 and -6 in `dir`.
void SaveAt3And6(const std::string& dir) {
  Chief c;
  ASSERT_TRUE(c.status.ok()) << c.status;
  ClientSession session(c.root);
  ASSERT_TRUE(session.Run({c.scaffold->init_op}).ok());
  for (int step : {3, 6}) {
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(session.Run({c.m.train_op}).ok());
    ASSERT_TRUE(c.scaffold->saver->Save(session, JoinPath(dir, "model.ckpt"), step).ok());
  }
}

TEST(SessionCreatorTest, TheChiefRestoresThePreviousCheckpointWhenTheLatestIsDamaged) {
  logging::SetMinSeverity(logging::Severity::kWarning);
  for (Damage d : {Damage::kFlipDataByte, Damage::kTruncateData, Damage::kDeleteData, Damage::kFlipIndexByte,
                   Damage::kTruncateIndex, Damage::kDeleteIndex}) {
    SCOPED_TRACE(static_cast<int>(d));
    TempDir dir;
    SaveAt3And6(dir.path());
    const std::string damaged = JoinPath(dir.path(), "model.ckpt-6");
    DamageCheckpoint(damaged, d);
    Chief c;  // a restarted chief: a new graph
    ASSERT_TRUE(c.status.ok()) << c.status;
    ChiefSessionCreator chief(c.root, c.scaffold, SessionOptions(), dir.path());
    ::testing::internal::CaptureStderr();
    auto s = chief.CreateSession();
    const std::string log = ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(chief.restored_checkpoint(), JoinPath(dir.path(), "model.ckpt-3"));
    EXPECT_THAT(log, HasSubstr("The checkpoint " + damaged + " is damaged and is skipped (DATA_LOSS: "));
    auto r = (*s)->Run({c.m.w.read(), c.m.global_step});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)[0].flat<float>()[0], Trained(3));
    EXPECT_EQ((*r)[0].flat<float>()[1], Trained(3));
    EXPECT_EQ((*r)[1].scalar<int64_t>(), 3);
  }
}

TEST(SessionCreatorTest, WhenEveryCheckpointIsDamagedTheChiefFailsWithDataLoss) {
  TempDir dir;
  SaveAt3And6(dir.path());
  const std::string p = JoinPath(dir.path(), "model.ckpt");
  DamageCheckpoint(p + "-6", Damage::kTruncateData);
  DamageCheckpoint(p + "-3", Damage::kFlipIndexByte);
  Chief c;
  ASSERT_TRUE(c.status.ok()) << c.status;
  ChiefSessionCreator chief(c.root, c.scaffold, SessionOptions(), dir.path());
  auto s = chief.CreateSession();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
  EXPECT_THAT(s.status().message(), HasSubstr("No checkpoint recorded in " + dir.path() + " can be restored"));
  EXPECT_THAT(s.status().message(), HasSubstr(p + "-6 ("));
  EXPECT_THAT(s.status().message(), HasSubstr(p + "-3 ("));
  EXPECT_EQ(chief.restored_checkpoint(), "");
}

// A checkpoint without one of the model's variables is a different model, not damage: no
// fallback to an older checkpoint.
TEST(SessionCreatorTest, AVariableMissingFromTheCheckpointIsAnErrorNotDamage) {
  TempDir dir;
  SaveAt3And6(dir.path());
  Chief c(/*extra=*/true);
  ASSERT_TRUE(c.status.ok()) << c.status;
  ChiefSessionCreator chief(c.root, c.scaffold, SessionOptions(), dir.path());
  auto s = chief.CreateSession();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound) << s.status();
  EXPECT_THAT(s.status().message(), HasSubstr("Restoring the checkpoint " + JoinPath(dir.path(), "model.ckpt-6")));
  EXPECT_THAT(s.status().message(), HasSubstr("extra"));
}

TEST(SessionCreatorTest, TheChiefFailsWhenInitDoesNotMakeTheModelReady) {
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto scaffold = std::make_shared<Scaffold>();
  scaffold->init_op = ops::NoOp(root);
  ASSERT_TRUE(scaffold->Finalize(root).ok());
  ChiefSessionCreator chief(root, scaffold, SessionOptions(), "");
  auto s = chief.CreateSession();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.status().message(), HasSubstr("uninitialized variables: global_step, w"));
}

TEST(SessionCreatorTest, AWorkerWaitsForTheModelWithADeadline) {
  executor_test::RegisterStepProbeOps();
  executor_test::StepProbe& probe = executor_test::StepProbe::Get();
  probe.Reset();
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto scaffold = std::make_shared<Scaffold>();
  ASSERT_TRUE(scaffold->Finalize(root).ok());
  // The readiness check passes through TestPass: the probe counts the worker's checks.
  scaffold->ready_op = Output(ops::BuildOp(root.WithOpName("counted_ready"), "TestPass", {scaffold->ready_op}), 0);
  ASSERT_TRUE(root.ok()) << root.status();
  WorkerSessionCreator worker(root, scaffold, SessionOptions(), /*max_wait_secs=*/1);
  auto s = worker.CreateSession();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(s.status().message(), HasSubstr("uninitialized variables: global_step, w"));
  // Initialized by someone else once the worker has found the model not ready and waits.
  const int checks = probe.passes();
  ClientSession other(root);
  std::thread init([&] {
    EXPECT_TRUE(probe.WaitPasses(checks + 1)) << "the worker never checked the model";
    EXPECT_TRUE(other.Run({scaffold->init_op}).ok());
  });
  WorkerSessionCreator patient(root, scaffold, SessionOptions(), 20);
  auto ok = patient.CreateSession();
  init.join();
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_GE(probe.passes(), checks + 2) << "the worker did not check again after waiting";
  auto w = (*ok)->Run({m.w.read()});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)[0].flat<float>()[0], 1.0f);
}

// Records what the loop calls, fetches `extra` with each step and can ask to stop.
class RecordingHook : public SessionRunHook {
 public:
  explicit RecordingHook(Output extra, int stop_after = -1) : extra_(extra), stop_after_(stop_after) {}
  Status Begin() override { return Note("begin"); }
  Status AfterCreateSession(ClientSession* s, Coordinator*) override { return Note("create"); }
  StatusOr<SessionRunArgs> BeforeRun(SessionRunContext* ctx) override {
    RETURN_IF_ERROR(Note("before"));
    EXPECT_EQ(ctx->original_args().fetches.size(), expected_caller_fetches);
    return SessionRunArgs{{extra_}, {}, {}};
  }
  Status AfterRun(SessionRunContext* ctx, const SessionRunValues& v) override {
    RETURN_IF_ERROR(Note("after"));
    if (v.results.size() == 1) seen.push_back(v.results[0].scalar<int64_t>());
    if (++runs == stop_after_) ctx->RequestStop();
    return absl::OkStatus();
  }
  Status End(ClientSession* s) override { return Note("end"); }
  Status Note(const char* what) {
    calls.push_back(what);
    return fail_at == what ? errors::InvalidArgument("hook failed at ", what) : absl::OkStatus();
  }

  std::vector<std::string> calls;
  std::vector<int64_t> seen;
  std::string fail_at;
  size_t expected_caller_fetches = 1;
  int runs = 0;

 private:
  Output extra_;
  int stop_after_;
};

TEST(MonitoredSessionTest, HooksRunAroundEveryStepWithTheirOwnFetches) {
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto scaffold = std::make_shared<Scaffold>();
  ASSERT_TRUE(scaffold->Finalize(root).ok());
  auto a = std::make_shared<RecordingHook>(m.global_step, /*stop_after=*/3);
  auto b = std::make_shared<RecordingHook>(m.global_step);
  auto ms = MonitoredSession::Create(std::make_unique<ChiefSessionCreator>(root, scaffold, SessionOptions(), ""),
                                     {a, b});
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_THAT(a->calls, ElementsAre("begin", "create"));
  int steps = 0;
  while (!(*ms)->ShouldStop()) {
    auto r = (*ms)->Run({}, {m.loss}, {m.train_op});
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->size(), 1u);  // only the caller's fetch comes back
    EXPECT_FLOAT_EQ((*r)[0].scalar<float>(), 2 * Trained(steps) * Trained(steps));
    ++steps;
  }
  EXPECT_EQ(steps, 3);
  // The global step fetched with the step is read before the step's increment or after it.
  ASSERT_EQ(b->seen.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(b->seen[i] == i || b->seen[i] == i + 1) << b->seen[i];
  EXPECT_TRUE((*ms)->Close().ok());
  EXPECT_THAT(b->calls, ElementsAre("begin", "create", "before", "after", "before", "after", "before", "after", "end"));
  EXPECT_EQ((*ms)->Run({m.loss}).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(MonitoredSessionTest, AFeedGivenTwiceIsAnError) {
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output y = ops::Mul(root, x, 2.0f);
  class FeedingHook : public SessionRunHook {
   public:
    explicit FeedingHook(Output x) : x_(x) {}
    StatusOr<SessionRunArgs> BeforeRun(SessionRunContext*) override { return SessionRunArgs{{}, {{x_, 5.0f}}, {}}; }
    Output x_;
  };
  auto scaffold = std::make_shared<Scaffold>();
  ASSERT_TRUE(scaffold->Finalize(root).ok());
  auto ms = MonitoredSession::Create(std::make_unique<ChiefSessionCreator>(root, scaffold, SessionOptions(), ""),
                                     {std::make_shared<FeedingHook>(x)});
  ASSERT_TRUE(ms.ok()) << ms.status();
  auto r = (*ms)->Run({}, {y}, {});  // the hook's feed is used
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 10.0f);
  auto bad = (*ms)->Run({{x, 1.0f}}, {y}, {});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("Same tensor is fed twice"));
  EXPECT_TRUE((*ms)->ShouldStop());
}

TEST(MonitoredSessionTest, AHookErrorEndsTrainingWithoutEnd) {
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto scaffold = std::make_shared<Scaffold>();
  ASSERT_TRUE(scaffold->Finalize(root).ok());
  auto hook = std::make_shared<RecordingHook>(m.global_step);
  hook->fail_at = "after";
  auto ms = MonitoredSession::Create(std::make_unique<ChiefSessionCreator>(root, scaffold, SessionOptions(), ""),
                                     {hook});
  ASSERT_TRUE(ms.ok());
  auto r = (*ms)->Run({}, {m.loss}, {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE((*ms)->ShouldStop());
  EXPECT_EQ((*ms)->Close().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(hook->calls, ElementsAre("begin", "create", "before", "after"));
}

TEST(MonitoredSessionTest, OutOfRangeEndsTrainingCleanly) {
  Scope root = Scope::NewRootScope();
  Output q = ops::FIFOQueue(root, {DT_FLOAT});
  Operation enqueue = ops::QueueEnqueue(root, q, {ops::Const(root, 1.0f)});
  Operation close = ops::QueueClose(root, q);
  std::vector<Output> item = ops::QueueDequeue(root, q, {DT_FLOAT});
  Output step = CreateGlobalStep(root);
  auto scaffold = std::make_shared<Scaffold>();
  ASSERT_TRUE(scaffold->Finalize(root).ok());
  auto hook = std::make_shared<RecordingHook>(step);
  hook->expected_caller_fetches = 1;
  auto ms = MonitoredSession::Create(std::make_unique<ChiefSessionCreator>(root, scaffold, SessionOptions(), ""),
                                     {hook});
  ASSERT_TRUE(ms.ok()) << ms.status();
  ASSERT_TRUE((*ms)->raw_session()->Run({enqueue}).ok());
  ASSERT_TRUE((*ms)->raw_session()->Run({close}).ok());
  int items = 0;
  while (!(*ms)->ShouldStop()) {
    auto r = (*ms)->Run(item);
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kOutOfRange) << r.status();
      break;
    }
    ++items;
  }
  EXPECT_EQ(items, 1);
  EXPECT_TRUE((*ms)->ShouldStop());
  EXPECT_TRUE((*ms)->Close().ok());
  EXPECT_EQ(hook->calls.back(), "end");
}

}  // namespace
}  // namespace dflow::train
