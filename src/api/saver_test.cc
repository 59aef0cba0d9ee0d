// train::Saver on a local session: what it saves, restoring bit-exactly, max_to_keep and
// keep_checkpoint_every_n_hours, partitioned variables, TensorFlow's checkpoints and graphs,
// damaged files and injected failures.
#include "dflow/saver.h"

#include <cstring>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "base/fault_injection_env.h"
#include "base/temp_dir.h"
#include "dflow/dflow.h"
#include "graph/graph_def.h"
#include "gtest/gtest.h"
#include "proto/graph.pb.h"
#include "tensor/tensor_bundle.h"
#include "train/checkpoint_state.h"

namespace dflow {
namespace {

std::string TestData(absl::string_view name) { return JoinPath(DFLOW_SOURCE_DIR "/testdata/tf", name); }

Tensor Floats(std::vector<float> v, TensorShape shape) { return Tensor::FromValues<float>(v, shape).value(); }

void ExpectBitEqual(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()), 0) << a.DebugString() << " vs " << b.DebugString();
}

// A small model trained one Adam step: trainable variables, global_step and Adam's slots.
struct Model {
  Variable w, b;
  Output step, x, loss;
  Operation train_op, init;
};

Model BuildModel(const Scope& root) {
  Model m;
  m.w = Variable::Create(root.WithOpName("w"), {2, 3}, DT_FLOAT, init::RandomUniform(-1, 1, 3));
  m.b = Variable::Create(root.WithOpName("b"), {3}, DT_FLOAT, init::Constant(0.5f));
  m.step = train::CreateGlobalStep(root);
  m.x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT, PartialTensorShape({-1, 2}));
  m.loss = ops::ReduceSum(root, ops::Square(root, ops::Add(root, ops::MatMul(root, m.x, m.w), m.b)), {0, 1});
  m.train_op = train::AdamOptimizer(0.1).Minimize(root, m.loss, {}, m.step);
  m.init = GlobalVariablesInitializer(root);
  return m;
}

TEST(SaverTest, SavesEveryGlobalVariableAndRestoresBitExactly) {
  TempDir dir;
  Scope root = Scope::NewRootScope();
  Model m = BuildModel(root);
  train::Saver saver(root);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(saver.saved_names(), (std::vector<std::string>{"b", "b/Adam", "b/Adam_1", "beta1_power", "beta2_power",
                                                           "global_step", "w", "w/Adam", "w/Adam_1"}));
  ClientSession session(root);
  ASSERT_TRUE(session.Run({m.init}).ok());
  Tensor xs = Floats({1, 2, 3, 4}, {2, 2});
  ASSERT_TRUE(session.Run({{m.x, xs}}, {}, {m.train_op}).status().ok());
  auto before = session.Run({m.w.read(), m.b.read(), m.step});
  ASSERT_TRUE(before.ok()) << before.status();
  auto path = saver.Save(session, dir.File("model"), 1);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, dir.File("model-1"));
  EXPECT_EQ(train::LatestCheckpoint(dir.path()).value(), *path);

  // Train on: everything changes; restoring brings back the saved values exactly.
  ASSERT_TRUE(session.Run({{m.x, xs}}, {}, {m.train_op}).status().ok());
  auto moved = session.Run({m.w.read()});
  ASSERT_FALSE(std::memcmp(moved->at(0).raw_data(), before->at(0).raw_data(), moved->at(0).TotalBytes()) == 0);
  ASSERT_TRUE(saver.Restore(session, *path).ok());
  auto after = session.Run({m.w.read(), m.b.read(), m.step});
  ASSERT_TRUE(after.ok());
  for (int i = 0; i < 3; ++i) ExpectBitEqual((*after)[i], (*before)[i]);
  EXPECT_EQ((*after)[2].scalar<int64_t>(), 1);

  // A fresh graph with the same model (different initial values) restores the same values.
  Scope root2 = Scope::NewRootScope();
  Model m2 = BuildModel(root2);
  train::Saver saver2(root2);
  ClientSession session2(root2);
  ASSERT_TRUE(saver2.Restore(session2, *path).ok());
  auto again = session2.Run({m2.w.read(), m2.b.read(), m2.step});
  ASSERT_TRUE(again.ok()) << again.status();
  for (int i = 0; i < 3; ++i) ExpectBitEqual((*again)[i], (*before)[i]);

  // The file is a readable bundle with the values (an independent reader).
  auto r = BundleReader::Open(Env::Default(), *path);
  ASSERT_TRUE(r.ok());
  ExpectBitEqual((*r)->Lookup("w").value(), (*before)[0]);
  EXPECT_EQ(saver.Restore(session, dir.File("model-9")).code(), absl::StatusCode::kNotFound);
}

TEST(SaverTest, MaxToKeepDeletesOldCheckpointsAfterTheStateFile) {
  TempDir dir;
  Scope root = Scope::NewRootScope();
  Variable v = Variable::Create(root.WithOpName("v"), {2}, DT_FLOAT, init::Zeros());
  train::SaverOptions o;
  o.max_to_keep = 2;
  train::Saver saver(root, o);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({v.initializer()}).ok());
  for (int step = 1; step <= 4; ++step) ASSERT_TRUE(saver.Save(session, dir.File("model"), step).ok());
  EXPECT_EQ(saver.last_checkpoints(), (std::vector<std::string>{dir.File("model-3"), dir.File("model-4")}));
  for (int step = 1; step <= 4; ++step) {
    EXPECT_EQ(train::CheckpointExists(dir.File(absl::StrCat("model-", step))), step >= 3) << step;
    EXPECT_EQ(Env::Default()->FileExists(dir.File(absl::StrCat("model-", step, ".data-00000-of-00001"))), step >= 3);
  }
  auto text = Env::Default()->ReadFile(dir.File("checkpoint")).value();
  EXPECT_NE(text.find("model_checkpoint_path: \"model-4\""), std::string::npos) << text;
  EXPECT_NE(text.find("all_model_checkpoint_paths: \"model-3\""), std::string::npos) << text;
  EXPECT_EQ(text.find("model-2"), std::string::npos) << text;
  // A saver of a later run adopts the list, so the oldest goes at its first save.
  train::Saver later(root, o);
  ASSERT_TRUE(later.RecoverLastCheckpoints(dir.path()).ok());
  ASSERT_TRUE(later.Save(session, dir.File("model"), 5).ok());
  EXPECT_FALSE(train::CheckpointExists(dir.File("model-3")));
  EXPECT_EQ(later.last_checkpoints(), (std::vector<std::string>{dir.File("model-4"), dir.File("model-5")}));
}

// An Env whose clock the test sets.
class ClockEnv : public Env {
 public:
  int64_t NowMicros() const override { return now_seconds * 1000000; }
  int64_t now_seconds = 1000000;
};

TEST(SaverTest, KeepCheckpointEveryNHoursPreservesOnePerPeriod) {
  TempDir dir;
  ClockEnv clock;
  Scope root = Scope::NewRootScope();
  Variable v = Variable::Create(root.WithOpName("v"), {1}, DT_FLOAT, init::Zeros());
  train::SaverOptions o;
  o.max_to_keep = 1;
  o.keep_checkpoint_every_n_hours = 1;
  o.env = &clock;
  const int64_t t0 = clock.now_seconds;
  train::Saver saver(root, o);  // the first keep time is t0 + 1 h
  ClientSession session(root);
  ASSERT_TRUE(session.Run({v.initializer()}).ok());
  const int64_t times[] = {0, 1800, 4000, 4100, 5000};
  for (int i = 0; i < 5; ++i) {
    clock.now_seconds = t0 + times[i];
    ASSERT_TRUE(saver.Save(session, dir.File("m"), i).ok());
  }
  // m-0 (t0) and m-1 (t0 + 30 min) come before the first hour and go; m-2 (t0 + 4000 s) is the
  // first at or past it and stays for good; m-3 goes (the next keep time is t0 + 2 h); m-4 is
  // the one max_to_keep keeps.
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(train::CheckpointExists(dir.File(absl::StrCat("m-", i))), i == 2 || i == 4) << i;
  auto state = train::ReadCheckpointState(Env::Default(), dir.path()).value();
  EXPECT_EQ(state.last_preserved_timestamp(), static_cast<double>(t0 + 4000));
  ASSERT_EQ(state.all_model_checkpoint_paths_size(), 1);
  EXPECT_EQ(state.all_model_checkpoint_timestamps(0), static_cast<double>(t0 + 5000));
}

TEST(SaverTest, PartitionedVariablesRestoreIntoAnotherPartitioning) {
  TempDir dir;
  std::vector<float> values(15);
  for (int i = 0; i < 15; ++i) values[i] = 0.25f * static_cast<float>(i) - 1;
  Tensor whole = Floats(values, {5, 3});
  std::string path;
  {
    Scope root = Scope::NewRootScope();
    PartitionedVariable emb = CreatePartitionedVariable(root, "emb", {5, 3}, DT_FLOAT, init::Constant(whole),
                                                        FixedSizePartitioner(2));
    train::Saver saver(root);
    ASSERT_TRUE(root.ok()) << root.status();
    EXPECT_EQ(saver.saved_names(), std::vector<std::string>{"emb"});
    ClientSession session(root);
    ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
    path = saver.Save(session, dir.File("model"), 3).value();
    auto r = BundleReader::Open(Env::Default(), path);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ((*r)->TensorNames(), std::vector<std::string>{"emb"});
    EXPECT_EQ((*r)->GetEntry("emb")->slices_size(), 2);
  }
  // Three parts, from zeros.
  Scope root = Scope::NewRootScope();
  PartitionedVariable emb3 = CreatePartitionedVariable(root, "emb", {5, 3}, DT_FLOAT, init::Zeros(),
                                                       FixedSizePartitioner(3));
  Output got = emb3.AsTensor(root);
  train::SaverOptions o;
  o.partitioned_var_list = {emb3};
  train::Saver saver(root, o);
  // And one whole variable restored from the slices, under another graph name.
  Variable plain = Variable::Create(root.WithOpName("plain"), {5, 3}, DT_FLOAT, init::Zeros());
  train::SaverOptions o2;
  o2.named_vars = {{"emb", plain.ref()}};
  o2.name = "save_plain";
  train::Saver by_name(root, o2);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  ASSERT_TRUE(saver.Restore(session, path).ok());
  ASSERT_TRUE(by_name.Restore(session, path).ok());
  auto out = session.Run({got, plain.read()});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectBitEqual((*out)[0], whole);
  ExpectBitEqual((*out)[1], whole);
}

TEST(SaverTest, BadVarListsAreErrors) {
  Scope root = Scope::NewRootScope();
  Variable v = Variable::Create(root.WithOpName("v"), {1}, DT_FLOAT, init::Zeros());
  {
    Scope s = Scope::NewRootScope();
    train::Saver none(s);
    EXPECT_FALSE(none.valid());
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  }
  train::SaverOptions o;
  o.var_list = {v.ref(), v.read()};
  Scope s1 = root.NewSubScope("a");
  train::Saver twice(s1, o);
  EXPECT_FALSE(twice.valid());
  EXPECT_NE(s1.status().message().find("listed twice"), std::string::npos) << s1.status();
  Scope root2 = Scope::NewRootScope();
  Output c = ops::Const(root2, 1.0f);
  train::SaverOptions o2;
  o2.var_list = {c};
  train::Saver not_var(root2, o2);
  EXPECT_NE(root2.status().message().find("is not a variable"), std::string::npos) << root2.status();
}

TEST(SaverTest, RestoresTensorFlowsCheckpoint) {
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithOpName("W"), {}, DT_FLOAT, init::Zeros());
  Variable b = Variable::Create(root.WithOpName("b"), {}, DT_FLOAT, init::Zeros());
  train::Saver saver(root);
  ClientSession session(root);
  EXPECT_EQ(train::LatestCheckpoint(TestData("checkpoint_v2_regression")).value(),
            TestData("checkpoint_v2_regression/model"));
  ASSERT_TRUE(saver.Restore(session, TestData("checkpoint_v2_regression/model")).ok());
  auto out = session.Run({w.read(), b.read()});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].scalar<float>(), 0.21396178f);
  EXPECT_EQ((*out)[1].scalar<float>(), 1.0495254f);
  // A variable whose shape differs from the checkpoint's is an error naming it.
  Scope root2 = Scope::NewRootScope();
  Variable w2 = Variable::Create(root2.WithOpName("W"), {2}, DT_FLOAT, init::Zeros());
  train::SaverOptions o;
  o.var_list = {w2.ref()};
  train::Saver saver2(root2, o);
  ClientSession session2(root2);
  Status s = saver2.Restore(session2, TestData("checkpoint_v2_regression/model"));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("W"), std::string::npos) << s;
}

// TensorFlow's own training graph with its Saver nodes, run through a session: save with
// save/control_dependency, change the variables, restore with save/restore_all.
TEST(SaverTest, TensorFlowGraphSavesAndRestoresThroughItsOwnOps) {
  InitDflow();  // registers the ops and the session targets (this test builds no Scope)
  TempDir dir;
  proto::GraphDef def;
  ASSERT_TRUE(ReadGraphDefFile(TestData("rust_regression_checkpoint_train.pb"), &def).ok());
  auto session = NewSession(SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Create(def).ok());
  ASSERT_TRUE((*session)->Run({}, {}, {"init"}, nullptr).ok());
  std::vector<Tensor> out;
  Tensor xs = Floats({1, 2, 3}, {3}), ys = Floats({0.4f, 0.5f, 0.6f}, {3});
  ASSERT_TRUE((*session)->Run({{"x", xs}, {"y", ys}}, {}, {"train"}, nullptr).ok());
  ASSERT_TRUE((*session)->Run({}, {"w", "b"}, {}, &out).ok());
  const std::vector<Tensor> saved = out;
  const std::string prefix = dir.File("tf_graph_ckpt");
  ASSERT_TRUE((*session)->Run({{"save/Const", Tensor(prefix)}}, {"save/control_dependency"}, {}, &out).ok());
  EXPECT_EQ(out[0].scalar<std::string>(), prefix);
  ASSERT_TRUE((*session)->Run({{"x", xs}, {"y", ys}}, {}, {"train"}, nullptr).ok());
  ASSERT_TRUE((*session)->Run({{"save/Const", Tensor(prefix)}}, {}, {"save/restore_all"}, nullptr).ok());
  ASSERT_TRUE((*session)->Run({}, {"w", "b"}, {}, &out).ok());
  ExpectBitEqual(out[0], saved[0]);
  ExpectBitEqual(out[1], saved[1]);
  // The file names the tensors as TensorFlow's saver does, and dflow's Saver reads it.
  auto r = BundleReader::Open(Env::Default(), prefix);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->TensorNames(), (std::vector<std::string>{"b", "w"}));
}

TEST(SaverTest, DamagedCheckpointIsDataLoss) {
  TempDir dir;
  Scope root = Scope::NewRootScope();
  Variable v = Variable::Create(root.WithOpName("v"), {4}, DT_FLOAT, init::Constant(Floats({1, 2, 3, 4}, {4})));
  train::Saver saver(root);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({v.initializer()}).ok());
  auto path = saver.Save(session, dir.File("model"), 1);
  ASSERT_TRUE(path.ok());
  const std::string data = *path + ".data-00000-of-00001";
  std::string bytes = Env::Default()->ReadFile(data).value();
  bytes[5] ^= 1;
  {
    std::ofstream f(data, std::ios::binary | std::ios::trunc);
    f << bytes;
  }
  Status s = saver.Restore(session, *path);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find(data), std::string::npos) << s;
  EXPECT_NE(s.message().find("tensor 'v'"), std::string::npos) << s;
}

// Fails each file operation of the state-file update and of deleting old checkpoints in turn:
// the state file always names a checkpoint that restores bit-exactly.
TEST(SaverTest, InjectedStateFileFailuresKeepTheLatestCheckpointReadable) {
  TempDir dir;
  Scope root = Scope::NewRootScope();
  Variable v = Variable::Create(root.WithOpName("v"), {3}, DT_FLOAT, init::Zeros());
  Output value = ops::Placeholder(root.WithOpName("value"), DT_FLOAT);
  Output set = ops::Assign(root.WithOpName("set"), v.ref(), value);
  ClientSession session(root);
  ASSERT_TRUE(session.Run({v.initializer()}).ok());
  auto value_at = [](int step) { return Floats({1.0f * step, 2.5f * step, -0.5f * step}, {3}); };
  int64_t ops_per_save = 0;
  {
    FaultInjectionEnv counting;
    train::SaverOptions o;
    o.max_to_keep = 1;
    o.env = &counting;
    train::Saver saver(root.NewSubScope("count"), o);
    ASSERT_TRUE(saver.Save(session, dir.File("count/m"), 1).ok());
    ASSERT_TRUE(saver.Save(session, dir.File("count/m"), 2).ok());  // writes the state and deletes m-1
    ops_per_save = counting.operations() / 2 + 2;
  }
  ASSERT_GE(ops_per_save, 4);
  int step = 0;
  {
    train::Saver first(root.NewSubScope("first"));
    ASSERT_TRUE(session.Run({{value, value_at(step)}}, {set}).ok());
    ASSERT_TRUE(first.Save(session, dir.File("m"), step).ok());
  }
  for (int64_t k = 1; k <= ops_per_save; ++k) {
    FaultInjectionEnv env(k);
    train::SaverOptions o;
    o.max_to_keep = 1;
    o.env = &env;
    Scope s = root.NewSubScope(absl::StrCat("s", k));
    train::Saver saver(s, o);
    ASSERT_TRUE(s.ok()) << s.status();
    ASSERT_TRUE(saver.RecoverLastCheckpoints(dir.path()).ok());
    ++step;
    ASSERT_TRUE(session.Run({{value, value_at(step)}}, {set}).ok());
    const bool saved = saver.Save(session, dir.File("m"), step).ok();
    auto latest = train::LatestCheckpoint(dir.path());
    ASSERT_TRUE(latest.ok()) << k << latest.status();
    const int saved_step = std::stoi(latest->substr(latest->rfind('-') + 1));
    if (saved) EXPECT_EQ(saved_step, step) << k;
    auto r = BundleReader::Open(Env::Default(), *latest);
    ASSERT_TRUE(r.ok()) << k << r.status();
    auto got = (*r)->Lookup("v");
    ASSERT_TRUE(got.ok()) << k << got.status();
    ExpectBitEqual(*got, value_at(saved_step));
  }
}

// The names in `dir` that only an unfinished save writes: temporary files and the temporary
// directories of sharded saves.
std::vector<std::string> Temporaries(const std::string& dir) {
  std::vector<std::string> out;
  const std::vector<std::string> children = Env::Default()->GetChildren(dir).value();
  for (const std::string& c : children) {
    if (c.find("_temp_") != std::string::npos || c.find(".tempstate") != std::string::npos ||
        c.find(".tmp") != std::string::npos) {
      out.push_back(c);
    }
  }
  return out;
}

// The files of checkpoint `base` (a name in `dir`): its index and data files, and its
// temporary directory.
std::vector<std::string> FilesOf(const std::string& dir, const std::string& base) {
  std::vector<std::string> out;
  const std::vector<std::string> children = Env::Default()->GetChildren(dir).value();
  for (const std::string& c : children) {
    if (absl::StartsWith(c, base + ".") || absl::StartsWith(c, base + "_")) out.push_back(c);
  }
  return out;
}

// Fails each file operation of a save in turn — the save ops' writes and renames (through
// Env::Default()), the merge of a sharded save, the state file — once, as a full disk or an I/O
// error would: the failed save leaves no file behind and the state file as it was (the previous
// checkpoint stays the latest, bit-exactly), and the next save, the retry, succeeds.
TEST(SaverTest, AFailedSaveRemovesWhatItWroteAndTheNextSaveSucceeds) {
  for (bool sharded : {false, true}) {
    SCOPED_TRACE(sharded ? "sharded" : "not sharded");
    TempDir dir;
    Scope root = Scope::NewRootScope();
    // Two devices by name (one CPU in this process): a sharded save writes two shards and merges.
    Variable a = Variable::Create(root.WithOpName("a"), {3}, DT_FLOAT, init::Zeros());
    Variable b = Variable::Create(root.WithDevice("/device:CPU:0").WithOpName("b"), {2}, DT_FLOAT, init::Zeros());
    Output va = ops::Placeholder(root.WithOpName("va"), DT_FLOAT);
    Output vb = ops::Placeholder(root.WithOpName("vb"), DT_FLOAT);
    Output set_a = ops::Assign(root.WithOpName("set_a"), a.ref(), va);
    Output set_b = ops::Assign(root.WithOpName("set_b"), b.ref(), vb);
    ClientSession session(root);
    ASSERT_TRUE(session.Run({a.initializer(), b.initializer()}).ok());
    auto value_a = [](int step) { return Floats({1.0f * step, -2.0f * step, 0.25f * step}, {3}); };
    auto value_b = [](int step) { return Floats({3.5f * step, 100.0f + step}, {2}); };
    auto set = [&](int step) {
      return session.Run({{va, value_a(step)}, {vb, value_b(step)}}, {set_a, set_b}).status();
    };
    auto options = [&](Env* env) {
      train::SaverOptions o;
      o.sharded = sharded;
      o.env = env;
      return o;
    };
    int64_t ops_per_save = 0;
    {
      FaultInjectionEnv counting;
      ScopedDefaultEnv scoped(&counting);
      train::Saver saver(root.NewSubScope("count"), options(&counting));
      ASSERT_TRUE(saver.Save(session, dir.File("count/m"), 1).ok());
      ops_per_save = counting.operations();
    }
    ASSERT_GE(ops_per_save, sharded ? 20 : 12) << "fewer file operations than expected";
    int latest = 0;
    ASSERT_TRUE(set(latest).ok());
    ASSERT_TRUE(train::Saver(root.NewSubScope("first"), options(nullptr)).Save(session, dir.File("m"), latest).ok());
    EXPECT_EQ(Env::Default()->FileExists(dir.File("m-0.data-00001-of-00002")), sharded);
    int failures = 0;
    for (int64_t k = 1; k <= ops_per_save; ++k) {
      SCOPED_TRACE(absl::StrCat("failing file operation #", k));
      FaultInjectionEnv env(k, /*stop_after_failure=*/false);
      ScopedDefaultEnv scoped(&env);
      train::Saver saver(root.NewSubScope(absl::StrCat("s", k)), options(&env));
      ASSERT_TRUE(saver.RecoverLastCheckpoints(dir.path()).ok());
      const int step = 2 * static_cast<int>(k);
      ASSERT_TRUE(set(step).ok());
      auto saved = saver.Save(session, dir.File("m"), step);
      EXPECT_TRUE(Temporaries(dir.path()).empty()) << absl::StrJoin(Temporaries(dir.path()), ", ");
      if (saved.ok()) {
        latest = step;
      } else {
        ++failures;
        EXPECT_TRUE(FilesOf(dir.path(), absl::StrCat("m-", step)).empty())
            << saved.status() << ": " << absl::StrJoin(FilesOf(dir.path(), absl::StrCat("m-", step)), ", ");
      }
      auto check_latest = [&] {
        auto path = train::LatestCheckpoint(dir.path());
        ASSERT_TRUE(path.ok()) << path.status();
        EXPECT_EQ(*path, dir.File(absl::StrCat("m-", latest)));
        auto r = BundleReader::Open(Env::Default(), *path);
        ASSERT_TRUE(r.ok()) << r.status();
        ExpectBitEqual((*r)->Lookup("a").value(), value_a(latest));
        ExpectBitEqual((*r)->Lookup("b").value(), value_b(latest));
      };
      check_latest();
      if (saved.ok()) continue;
      // The retry: the same saver, the disk working again.
      ASSERT_TRUE(set(step + 1).ok());
      auto retried = saver.Save(session, dir.File("m"), step + 1);
      ASSERT_TRUE(retried.ok()) << retried.status();
      latest = step + 1;
      check_latest();
      EXPECT_TRUE(Temporaries(dir.path()).empty()) << absl::StrJoin(Temporaries(dir.path()), ", ");
    }
    EXPECT_GE(failures, ops_per_save / 2);
  }
}

}  // namespace
}  // namespace dflow
