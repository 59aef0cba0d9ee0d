// The basic hooks, each in a MonitoredTrainingSession of this process: when they act, what they
// fetch, write, log and save, and their bad arguments.
#include "dflow/basic_session_run_hooks.h"

#include <cmath>

#include "base/env.h"
#include "base/logging.h"
#include "base/temp_dir.h"
#include "dflow/dflow.h"
#include "dflow/summary.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow::train {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

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

MonitoredTrainingSessionOptions Quiet() {
  MonitoredTrainingSessionOptions o;
  o.log_step_count_steps = 0;
  return o;
}

// Runs train_op until the session says stop (at most `max_steps`); returns the steps run.
int TrainUntilStop(MonitoredSession* s, const Model& m, int max_steps = 1000) {
  int n = 0;
  while (!s->ShouldStop() && n < max_steps) {
    auto r = s->Run({}, {}, {m.train_op});
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) break;
    ++n;
  }
  return n;
}

// w after `steps` steps of the model's training, computed as the graph does.
float Trained(int steps) {
  float w = 1.0f;
  for (int i = 0; i < steps; ++i) w -= 0.1f * (2.0f * w);
  return w;
}

int64_t GlobalStep(MonitoredSession* s, const Model& m) {
  auto r = s->raw_session()->Run({m.global_step});
  return r.ok() ? (*r)[0].scalar<int64_t>() : -1;
}

TEST(SecondOrStepTimerTest, TriggersFirstThenEveryNSteps) {
  SecondOrStepTimer t(0, 3);
  EXPECT_TRUE(t.ShouldTriggerForStep(5));
  EXPECT_FALSE(t.UpdateLastTriggeredStep(5).has_value());
  EXPECT_FALSE(t.ShouldTriggerForStep(5));
  EXPECT_FALSE(t.ShouldTriggerForStep(7));
  EXPECT_TRUE(t.ShouldTriggerForStep(8));
  auto e = t.UpdateLastTriggeredStep(9);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->second, 4);
  EXPECT_GE(e->first, 0.0);
}

TEST(StopAtStepHookTest, StopsAtTheLastStep) {
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto o = Quiet();
  o.hooks = {std::make_shared<StopAtStepHook>(m.global_step, 0, 7)};
  auto s = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(TrainUntilStop(s->get(), m), 7);
  EXPECT_EQ(GlobalStep(s->get(), m), 7);
}

TEST(StopAtStepHookTest, NumStepsCountFromTheStartingStep) {
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto hook = std::make_shared<StopAtStepHook>(m.global_step, 4, 0);
  auto o = Quiet();
  o.hooks = {hook};
  auto s = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(s.ok()) << s.status();
  // Someone else already took 3 steps.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*s)->raw_session()->Run({m.train_op}).ok());
  (*s)->Close().IgnoreError();
  auto s2 = MonitoredSession::Create(
      [&] {
        auto scaffold = std::make_shared<Scaffold>();
        scaffold->init_op = ops::NoOp(root);  // keep the trained values
        EXPECT_TRUE(scaffold->Finalize(root).ok());
        return std::make_unique<ChiefSessionCreator>(root, scaffold, SessionOptions(), "");
      }(),
      {std::make_shared<StopAtStepHook>(m.global_step, 4, 0)});
  ASSERT_TRUE(s2.ok()) << s2.status();
  EXPECT_EQ(TrainUntilStop(s2->get(), m), 4);
  EXPECT_EQ(GlobalStep(s2->get(), m), 7);
}

TEST(StopAtStepHookTest, BadArgumentsFailAtBegin) {
  Scope root = Scope::NewRootScope();
  Model m(root);
  for (auto [num, last] : {std::pair<int64_t, int64_t>{0, 0}, {3, 5}}) {
    auto o = Quiet();
    o.hooks = {std::make_shared<StopAtStepHook>(m.global_step, num, last)};
    auto s = MonitoredTrainingSession(root, o);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.status().message(), HasSubstr("exactly one of num_steps and last_step"));
  }
  auto o = Quiet();
  o.hooks = {std::make_shared<StopAtStepHook>(Output(), 0, 5)};
  EXPECT_EQ(MonitoredTrainingSession(root, o).status().code(), absl::StatusCode::kFailedPrecondition);
}

// w and the global step of checkpoint `path`, restored into a fresh graph of the model.
StatusOr<std::pair<float, int64_t>> RestoredValues(const std::string& path) {
  Scope check = Scope::NewRootScope();
  Model m(check);
  auto saver = NewSaver(Saver(check));
  ClientSession session(check);
  RETURN_IF_ERROR(saver->Restore(session, path));
  ASSIGN_OR_RETURN(std::vector<Tensor> r, session.Run({m.w.read(), m.global_step}));
  return std::make_pair(r[0].flat<float>()[0], r[1].scalar<int64_t>());
}

// Trains the model to global step 8 in a chief's MonitoredSession whose CheckpointSaverHook saves
// into `dir` every 3 steps, and closes it; returns the hook. With `log`, what was logged while
// training goes there.
std::shared_ptr<CheckpointSaverHook> TrainTo8SavingEvery3Steps(const std::string& dir, std::string* log = nullptr) {
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto scaffold = std::make_shared<Scaffold>();
  EXPECT_TRUE(scaffold->Finalize(root).ok());
  auto hook = std::make_shared<CheckpointSaverHook>(dir, scaffold->saver, m.global_step, 0, 3);
  auto s = MonitoredSession::Create(std::make_unique<ChiefSessionCreator>(root, scaffold, SessionOptions(), ""),
                                    {std::make_shared<StopAtStepHook>(m.global_step, 0, 8), hook});
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return hook;
  if (log != nullptr) ::testing::internal::CaptureStderr();
  EXPECT_EQ(TrainUntilStop(s->get(), m), 8);
  if (log != nullptr) *log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE((*s)->Close().ok());
  return hook;
}

TEST(CheckpointSaverHookTest, SavesAtCreationEveryNStepsAndAtTheEnd) {
  TempDir dir;
  auto hook = TrainTo8SavingEvery3Steps(dir.path());
  const std::string p = JoinPath(dir.path(), "model.ckpt");
  EXPECT_THAT(hook->saved(), ElementsAre(p + "-0", p + "-3", p + "-6", p + "-8"));
  // What was saved at 6 is the model after 6 steps.
  auto v = RestoredValues(p + "-6");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->first, Trained(6));
  EXPECT_EQ(v->second, 6);
}

// Makes the save of `step` into `dir` fail where it renames the checkpoint's data file into place,
// as an I/O error there would: a directory has that name.
void BlockSave(const std::string& dir, int64_t step) {
  const std::string data = JoinPath(dir, absl::StrCat("model.ckpt-", step, ".data-00000-of-00001"));
  ASSERT_TRUE(Env::Default()->CreateDirs(data).ok());
}

// The entries of `dir` that only an unfinished save writes.
std::vector<std::string> Temporaries(const std::string& dir) {
  std::vector<std::string> out;
  const std::vector<std::string> children = Env::Default()->GetChildren(dir).value();
  for (const std::string& c : children) {
    if (c.find("_temp_") != std::string::npos || c.find(".tempstate") != std::string::npos) out.push_back(c);
  }
  return out;
}

TEST(CheckpointSaverHookTest, AFailedSaveIsLoggedAndRetriedAtTheNextSave) {
  logging::SetMinSeverity(logging::Severity::kWarning);
  TempDir dir;
  BlockSave(dir.path(), 3);
  std::string log;
  auto hook = TrainTo8SavingEvery3Steps(dir.path(), &log);  // training goes on after the failed save
  const std::string p = JoinPath(dir.path(), "model.ckpt");
  EXPECT_THAT(log, HasSubstr("Saving the checkpoint " + p + "-3 failed (1 of at most 3 failed saves in a row)"));
  EXPECT_EQ(hook->consecutive_save_failures(), 0);  // reset by the save at 6
  EXPECT_THAT(hook->saved(), ElementsAre(p + "-0", p + "-6", p + "-8"));
  EXPECT_THAT(Temporaries(dir.path()), ElementsAre());
  EXPECT_FALSE(Env::Default()->FileExists(p + "-3.index"));
  EXPECT_EQ(LatestCheckpoint(dir.path()).value(), p + "-8");
  for (int step : {6, 8}) {
    auto v = RestoredValues(absl::StrCat(p, "-", step));
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->first, Trained(step));
    EXPECT_EQ(v->second, step);
  }
}

// MonitoredTrainingSessionOptions::max_consecutive_save_failures saves in a row fail: the last
// one's error ends training (1: the first failure, as a plain error would).
TEST(CheckpointSaverHookTest, ConsecutiveFailedSavesEndTrainingWithTheSaveError) {
  for (int max_failures : {1, 3}) {
    SCOPED_TRACE(max_failures);
    TempDir dir;
    for (int step : {3, 6, 9}) BlockSave(dir.path(), step);
    Scope root = Scope::NewRootScope();
    Model m(root);
    auto o = Quiet();
    o.checkpoint_dir = dir.path();
    o.save_checkpoint_steps = 3;
    o.max_consecutive_save_failures = max_failures;
    o.hooks = {std::make_shared<StopAtStepHook>(m.global_step, 0, 20)};
    auto s = MonitoredTrainingSession(root, o);
    ASSERT_TRUE(s.ok()) << s.status();
    int steps = 0;
    Status error;
    while (!(*s)->ShouldStop() && steps < 20) {
      auto r = (*s)->Run({}, {}, {m.train_op});
      if (!r.ok()) {
        error = r.status();
        break;
      }
      ++steps;
    }
    const std::string failed = JoinPath(dir.path(), absl::StrCat("model.ckpt-", 3 * max_failures));
    // The step that reached the global step of the last failed save returned the save's error.
    EXPECT_EQ(steps, 3 * max_failures - 1);
    // The rename's Unavailable, which recovery would retry forever from the last checkpoint.
    EXPECT_EQ(error.code(), absl::StatusCode::kFailedPrecondition) << error;
    EXPECT_THAT(error.message(),
                HasSubstr("Saving the checkpoint " + failed + " failed (" + std::to_string(max_failures) +
                          " of at most " + std::to_string(max_failures) + " failed saves in a row)"));
    EXPECT_THAT(error.message(), HasSubstr(failed + ".data-00000-of-00001"));
    EXPECT_TRUE((*s)->ShouldStop());
    EXPECT_EQ((*s)->Close().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(Temporaries(dir.path()), ElementsAre());
    // The checkpoint saved at creation is the latest, with the initial values.
    const std::string first = JoinPath(dir.path(), "model.ckpt-0");
    EXPECT_EQ(LatestCheckpoint(dir.path()).value(), first);
    auto v = RestoredValues(first);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->first, 1.0f);
    EXPECT_EQ(v->second, 0);
  }
}

TEST(CheckpointSaverHookTest, AFailedFinalSaveIsReturnedByClose) {
  TempDir dir;
  BlockSave(dir.path(), 4);
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto o = Quiet();
  o.checkpoint_dir = dir.path();
  o.save_checkpoint_steps = 100;
  o.hooks = {std::make_shared<StopAtStepHook>(m.global_step, 0, 4)};
  auto s = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(TrainUntilStop(s->get(), m), 4);
  Status closed = (*s)->Close();
  EXPECT_FALSE(closed.ok());
  EXPECT_THAT(closed.message(), HasSubstr("Saving the checkpoint " + JoinPath(dir.path(), "model.ckpt-4") + " failed"));
  EXPECT_EQ(LatestCheckpoint(dir.path()).value(), JoinPath(dir.path(), "model.ckpt-0"));
  EXPECT_THAT(Temporaries(dir.path()), ElementsAre());
}

TEST(CheckpointSaverHookTest, MaxConsecutiveSaveFailuresMustBePositive) {
  TempDir dir;
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto o = Quiet();
  o.checkpoint_dir = dir.path();
  o.save_checkpoint_steps = 3;
  o.max_consecutive_save_failures = 0;
  auto s = MonitoredTrainingSession(root, o);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("max_consecutive_save_failures must be at least 1, got 0"));
}

TEST(CheckpointSaverHookTest, AnUnwritableDirectoryEndsTraining) {
  TempDir dir;
  const std::string file = JoinPath(dir.path(), "a_file");
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(file, "x").ok());
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto o = Quiet();
  o.checkpoint_dir = JoinPath(file, "sub");  // below a regular file
  o.save_checkpoint_steps = 2;
  o.recovery.initial_backoff_ms = 1;
  o.recovery.max_backoff_ms = 1;
  auto s = MonitoredTrainingSession(root, o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("a_file/sub"));
}

class FakeWriter : public SummaryWriterInterface {
 public:
  Status AddSummary(const std::string& s, int64_t step) override {
    summaries.emplace_back(s, step);
    return absl::OkStatus();
  }
  Status AddScalar(const std::string& tag, double v, int64_t step) override {
    scalars.push_back({tag, v, step});
    return absl::OkStatus();
  }
  Status Flush() override {
    ++flushes;
    return absl::OkStatus();
  }
  struct Scalar {
    std::string tag;
    double value;
    int64_t step;
  };
  std::vector<std::pair<std::string, int64_t>> summaries;
  std::vector<Scalar> scalars;
  int flushes = 0;
};

TEST(SummarySaverHookTest, WritesTheSummaryEveryNStepsAndFlushesAtTheEnd) {
  Scope root = Scope::NewRootScope();
  Model m(root);
  Output summary = ops::Const(root.WithOpName("summary"), std::string("serialized"));
  auto writer = std::make_shared<FakeWriter>();
  auto o = Quiet();
  o.scaffold.summary_op = summary;
  o.summary_writer = writer;
  o.save_summaries_steps = 3;
  o.hooks = {std::make_shared<StopAtStepHook>(m.global_step, 0, 10)};
  auto s = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(TrainUntilStop(s->get(), m), 10);
  ASSERT_TRUE((*s)->Close().ok());
  std::vector<int64_t> steps;
  for (const auto& [text, step] : writer->summaries) {
    EXPECT_EQ(text, "serialized");
    steps.push_back(step);
  }
  // The first step's summary at step 1, then every 3 steps of the global step.
  EXPECT_THAT(steps, ElementsAre(1, 4, 7, 10));
  EXPECT_EQ(writer->flushes, 1);
}

TEST(SummarySaverHookTest, ASummaryOpThatIsNotAStringIsRejected) {
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto hook = std::make_shared<SummarySaverHook>(m.loss, std::make_shared<FakeWriter>(), m.global_step, 2);
  EXPECT_THAT(hook->Begin().message(), HasSubstr("not a serialized Summary"));
  EXPECT_EQ(SummarySaverHook(m.loss, nullptr, m.global_step, 2).Begin().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SummarySaverHook(m.loss, std::make_shared<FakeWriter>(), m.global_step, 0).Begin().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(StepCounterHookTest, WritesGlobalStepsPerSecond) {
  Scope root = Scope::NewRootScope();
  Model m(root);
  auto writer = std::make_shared<FakeWriter>();
  auto counter = std::make_shared<StepCounterHook>(m.global_step, 5, 0, writer);
  auto o = Quiet();
  o.hooks = {std::make_shared<StopAtStepHook>(m.global_step, 0, 16), counter};
  auto s = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(TrainUntilStop(s->get(), m), 16);
  // The first trigger (step 1) sets the baseline; then steps 6, 11, 16.
  ASSERT_EQ(writer->scalars.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(writer->scalars[i].tag, "global_step/sec");
    EXPECT_EQ(writer->scalars[i].step, 6 + 5 * static_cast<int64_t>(i));
    EXPECT_GT(writer->scalars[i].value, 0);
    EXPECT_TRUE(std::isfinite(writer->scalars[i].value));
  }
  EXPECT_EQ(counter->last_steps_per_sec(), writer->scalars.back().value);
}

TEST(LoggingTensorHookTest, LogsEveryNIterationsAndAtTheEnd) {
  Scope root = Scope::NewRootScope();
  Model m(root);
  std::vector<std::string> lines;
  auto log = std::make_shared<LoggingTensorHook>(std::vector<std::pair<std::string, Output>>{{"step", m.global_step},
                                                                                             {"w", m.w.read()}},
                                                 2, 0,
                                                 /*at_end=*/true, [&](const std::string& l) { lines.push_back(l); });
  auto o = Quiet();
  o.hooks = {std::make_shared<StopAtStepHook>(m.global_step, 0, 5), log};
  auto s = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(TrainUntilStop(s->get(), m), 5);
  ASSERT_TRUE((*s)->Close().ok());
  // Iterations 0, 2, 4, then the end.
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_THAT(lines[0], HasSubstr("step = "));
  EXPECT_THAT(lines[0], HasSubstr(", w = ["));
  EXPECT_THAT(lines[1], HasSubstr(" sec)"));
  EXPECT_THAT(lines[3], HasSubstr("step = 5, w = "));
  EXPECT_EQ(LoggingTensorHook({}, 0).Begin().code(), absl::StatusCode::kInvalidArgument);
}

TEST(NanTensorHookTest, ANanLossFailsOrStops) {
  Scope root = Scope::NewRootScope();
  Model m(root);
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output loss = ops::Mul(root, m.loss, x);  // NaN when x is NaN
  for (bool fail : {true, false}) {
    auto o = Quiet();
    o.hooks = {std::make_shared<NanTensorHook>(loss, fail)};
    auto s = MonitoredTrainingSession(root, o);
    ASSERT_TRUE(s.ok()) << s.status();
    ASSERT_TRUE((*s)->Run({{x, 1.0f}}, {loss}, {}).ok());
    EXPECT_FALSE((*s)->ShouldStop());
    auto r = (*s)->Run({{x, std::nanf("")}}, {loss}, {});
    if (fail) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(r.status().message(), HasSubstr("NaN loss during training."));
    } else {
      EXPECT_TRUE(r.ok()) << r.status();
    }
    EXPECT_TRUE((*s)->ShouldStop());
  }
  auto o = Quiet();
  o.hooks = {std::make_shared<NanTensorHook>(m.global_step)};
  auto s = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(s.ok());
  EXPECT_THAT((*s)->Run({m.loss}).status().message(), HasSubstr("not float or double"));
}

TEST(FinalOpsHookTest, RunsTheFinalOpsAtTheEnd) {
  Scope root = Scope::NewRootScope();
  Model m(root);
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  auto final_ops = std::make_shared<FinalOpsHook>(std::vector<Output>{m.global_step, ops::Mul(root, x, 3.0f)},
                                                  ClientSession::FeedDict{{x, 2.0f}});
  auto o = Quiet();
  o.hooks = {std::make_shared<StopAtStepHook>(m.global_step, 0, 3), final_ops};
  auto s = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(TrainUntilStop(s->get(), m), 3);
  EXPECT_TRUE(final_ops->final_ops_values().empty());
  ASSERT_TRUE((*s)->Close().ok());
  ASSERT_EQ(final_ops->final_ops_values().size(), 2u);
  EXPECT_EQ(final_ops->final_ops_values()[0].scalar<int64_t>(), 3);
  EXPECT_EQ(final_ops->final_ops_values()[1].scalar<float>(), 6.0f);
}

TEST(MonitoredTrainingSessionTest, ASecondRunRestoresAndContinues) {
  TempDir dir;
  for (int run = 0; run < 2; ++run) {
    Scope root = Scope::NewRootScope();  // a fresh graph and variables, as a restarted process
    Model m(root);
    auto o = Quiet();
    o.checkpoint_dir = dir.path();
    o.save_checkpoint_steps = 100;
    o.hooks = {std::make_shared<StopAtStepHook>(m.global_step, 5, 0)};
    auto s = MonitoredTrainingSession(root, o);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(GlobalStep(s->get(), m), 5 * run);
    EXPECT_EQ(TrainUntilStop(s->get(), m), 5);
    ASSERT_TRUE((*s)->Close().ok());  // the final checkpoint
  }
  EXPECT_TRUE(Env::Default()->FileExists(JoinPath(dir.path(), "model.ckpt-10.index")));
}

TEST(MonitoredTrainingSessionTest, TheChiefWritesSummariesToAnEventFileInTheCheckpointDir) {
  TempDir dir;
  Scope root = Scope::NewRootScope();
  Model m(root);
  summary::Scalar(root, "loss", m.loss);
  MonitoredTrainingSessionOptions o;
  o.checkpoint_dir = dir.path();
  o.save_checkpoint_steps = 100;
  o.save_summaries_steps = 3;
  o.log_step_count_steps = 3;
  o.hooks = {std::make_shared<StopAtStepHook>(m.global_step, 0, 7)};
  auto s = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(TrainUntilStop(s->get(), m), 7);
  ASSERT_TRUE((*s)->Close().ok());
  s->reset();  // the writer's last holder: the file is closed
  auto files = Env::Default()->GetChildren(dir.path());
  ASSERT_TRUE(files.ok());
  std::string events;
  for (const std::string& f : *files) {
    if (f.rfind("events.out.tfevents.", 0) == 0) events = JoinPath(dir.path(), f);
  }
  ASSERT_NE(events, "");
  auto scalars = summary::ReadScalars(events);
  ASSERT_TRUE(scalars.ok()) << scalars.status();
  std::vector<int64_t> loss_steps, rate_steps;
  for (const auto& e : *scalars) {
    if (e.tag == "loss") {
      loss_steps.push_back(e.step);
      // The loss summary is computed before the step's update: 2 * w^2 with w after step - 1.
      float w = 1.0f;
      for (int i = 1; i < e.step; ++i) w -= 0.1f * (2.0f * w);
      EXPECT_FLOAT_EQ(e.value, 2 * w * w) << e.step;
    }
    if (e.tag == "global_step/sec") rate_steps.push_back(e.step);
  }
  EXPECT_THAT(loss_steps, ElementsAre(1, 4, 7));
  EXPECT_THAT(rate_steps, ElementsAre(4, 7));
}

TEST(MonitoredTrainingSessionTest, LocalVariablesAreSetByEveryTaskAndNotSaved) {
  TempDir dir;
  Scope root = Scope::NewRootScope();
  Model m(root);
  Variable count = Variable::CreateLocal(root.WithOpName("count"), {}, DT_FLOAT, init::Constant(5.0f));
  Operation add = ops::AssignAdd(root, count.ref(), 1.0f).op();
  auto o = Quiet();
  o.checkpoint_dir = dir.path();
  o.save_checkpoint_steps = 100;
  o.hooks = {std::make_shared<StopAtStepHook>(m.global_step, 0, 3)};
  auto s = MonitoredTrainingSession(root, o);
  ASSERT_TRUE(s.ok()) << s.status();
  while (!(*s)->ShouldStop()) ASSERT_TRUE((*s)->Run({}, {}, {m.train_op, add}).ok());
  auto c = (*s)->raw_session()->Run({count.read()});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)[0].scalar<float>(), 8.0f);
  ASSERT_TRUE((*s)->Close().ok());
  // A worker does not wait for the local variable; its local init sets it again.
  auto scaffold = std::make_shared<Scaffold>();
  ASSERT_TRUE(scaffold->Finalize(root).ok());
  WorkerSessionCreator worker(root, scaffold, SessionOptions(), 5);
  auto ws = worker.CreateSession();
  ASSERT_TRUE(ws.ok()) << ws.status();
  c = (*ws)->Run({count.read()});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0].scalar<float>(), 5.0f);
  // The checkpoint has no "count": restoring it into a fresh graph of the model works.
  Scope fresh = Scope::NewRootScope();
  Model m2(fresh);
  auto saver = NewSaver(Saver(fresh));
  ClientSession fs(fresh);
  EXPECT_TRUE(saver->Restore(fs, JoinPath(dir.path(), "model.ckpt-3")).ok());
}

TEST(MonitoredTrainingSessionTest, CheckpointsNeedAGlobalStep) {
  TempDir dir;
  Scope root = Scope::NewRootScope();
  Variable::Create(root.WithOpName("w"), {1}, DT_FLOAT);
  auto o = Quiet();
  o.checkpoint_dir = dir.path();
  o.save_checkpoint_steps = 3;
  auto s = MonitoredTrainingSession(root, o);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.status().message(), HasSubstr("global step"));
}

}  // namespace
}  // namespace dflow::train
