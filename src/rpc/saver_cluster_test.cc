// A sharded Saver on a real gRPC cluster (2 ps tasks and 1 worker in this process, on
// 127.0.0.1): each ps task writes its own variables, the worker merges the index files, and the
// checkpoint restores bit-exactly into the parameters on the ps tasks. A failed save leaves no
// files, and the chief falls back from a damaged checkpoint to the one before it.
#include <cstring>
#include <map>
#include <set>

#include "base/net.h"
#include "base/temp_dir.h"
#include "dflow/dflow.h"
#include "dflow/monitored_session.h"
#include "dflow/server.h"
#include "gtest/gtest.h"
#include "tensor/tensor_bundle.h"

namespace dflow {
namespace {

constexpr char kPs0[] = "/job:ps/replica:0/task:0/device:CPU:0";
constexpr char kPs1[] = "/job:ps/replica:0/task:1/device:CPU:0";
constexpr char kWorker[] = "/job:worker/replica:0/task:0/device:CPU:0";

struct Model {
  PartitionedVariable emb;
  Variable w;
  Output ids, y, loss, whole, step;
  Operation train_op, init;
};

Model Build(const Scope& root) {
  Model m;
  Scope s = root.WithDeviceFunction(train::ReplicaDeviceSetter(2, "/job:worker/task:0"));
  m.emb = CreatePartitionedVariable(s, "emb", {9, 3}, DT_FLOAT, init::RandomUniform(-0.5, 0.5, 1),
                                    FixedSizePartitioner(2));
  m.w = Variable::Create(s.WithOpName("w"), {3, 1}, DT_FLOAT, init::RandomUniform(-0.5, 0.5, 2));
  m.step = train::CreateGlobalStep(s);
  m.ids = ops::Placeholder(s.WithOpName("ids"), DT_INT32, PartialTensorShape({-1}));
  m.y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT, PartialTensorShape({-1, 1}));
  Output pred = ops::MatMul(s.WithOpName("pred"), ops::EmbeddingLookup(s, m.emb, m.ids, "div"), m.w);
  m.loss = losses::MeanSquaredError(s, m.y, pred);
  m.train_op = train::MomentumOptimizer(0.1f, 0.5f).Minimize(s, m.loss, {}, m.step);
  m.init = GlobalVariablesInitializer(s);
  m.whole = m.emb.AsTensor(s);
  return m;
}

void ExpectBitEqual(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()), 0);
}

// Starts ps tasks 0 and 1 and worker 0 on free ports; returns the worker's target.
std::string StartCluster(std::vector<std::unique_ptr<Server>>* servers) {
  std::vector<int> ports = PickFreePorts(3).value();
  auto addr = [&](int i) { return "127.0.0.1:" + std::to_string(ports[i]); };
  ClusterSpec spec = ClusterSpec::FromJobs({{"ps", {addr(0), addr(1)}}, {"worker", {addr(2)}}}).value();
  for (auto [job, task] : {std::pair<const char*, int>{"ps", 0}, {"ps", 1}, {"worker", 0}}) {
    ServerOptions o;
    o.cluster = spec;
    o.job_name = job;
    o.task_index = task;
    o.startup_wait_ms = 10000;
    auto s = Server::Create(o);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok()) return "";
    servers->push_back(std::move(s).value());
  }
  return "grpc://" + addr(2);
}

TEST(SaverClusterTest, ShardedSaveWritesEachPsTasksVariablesOnThatTask) {
  std::vector<std::unique_ptr<Server>> servers;
  const std::string target = StartCluster(&servers);
  ASSERT_NE(target, "");
  TempDir dir;
  Scope root = Scope::NewRootScope();
  Model m = Build(root);
  train::SaverOptions so;
  so.sharded = true;
  train::Saver saver(root, so);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root, target);
  ASSERT_TRUE(session.Run({m.init}).ok());
  Tensor ids = Tensor::FromValues<int32_t>({0, 4, 5, 8}, TensorShape({4})).value();
  Tensor targets = Tensor::FromValues<float>({1, -1, 0.5f, 2}, TensorShape({4, 1})).value();
  ASSERT_TRUE(session.Run({{m.ids, ids}, {m.y, targets}}, {}, {m.train_op}).ok());
  auto before = session.Run({m.whole, m.w.read(), m.step});
  ASSERT_TRUE(before.ok()) << before.status();

  // The save step traced by hand (the same ops Saver::Save runs): where every node ran.
  const std::string traced = dir.File("traced");
  RunMetadata meta;
  auto run = session.Run({{saver.filename(), Tensor(traced)}}, {saver.save_path()}, {}, &meta);
  ASSERT_TRUE(run.ok()) << run.status();
  std::map<std::string, std::string> saves;  // SaveV2 node -> device
  std::string merge_device;
  for (const NodeExecStats& st : meta.step_stats) {
    if (st.op == "SaveV2") saves[st.node_name] = st.device;
    if (st.op == "MergeV2Checkpoints") merge_device = st.device;
  }
  std::set<std::string> save_devices;
  for (const auto& [n, d] : saves) save_devices.insert(d);
  EXPECT_EQ(save_devices, (std::set<std::string>{kPs0, kPs1}));  // one SaveV2 on each ps task
  EXPECT_EQ(saves.size(), 2u);
  EXPECT_EQ(merge_device, kWorker);
  auto traced_reader = BundleReader::Open(Env::Default(), traced);
  ASSERT_TRUE(traced_reader.ok()) << traced_reader.status();
  EXPECT_EQ((*traced_reader)->num_shards(), 2);

  auto path = saver.Save(session, dir.File("model"), 1);
  ASSERT_TRUE(path.ok()) << path.status();
  // Two data files, one per ps task; no temporary directory left.
  EXPECT_TRUE(Env::Default()->FileExists(*path + ".data-00000-of-00002"));
  EXPECT_TRUE(Env::Default()->FileExists(*path + ".data-00001-of-00002"));
  const std::vector<std::string> children = Env::Default()->GetChildren(dir.path()).value();
  for (const std::string& c : children) {
    EXPECT_EQ(c.find("_temp_"), std::string::npos) << c;
  }
  auto r = BundleReader::Open(Env::Default(), *path);
  ASSERT_TRUE(r.ok());
  // The parts' optimizer slots are saved as variables of their own (not as slices).
  EXPECT_EQ((*r)->TensorNames(), (std::vector<std::string>{"emb", "emb/part_0/Momentum", "emb/part_1/Momentum",
                                                           "global_step", "w", "w/Momentum"}));
  ExpectBitEqual((*r)->Lookup("emb").value(), (*before)[0]);
  // The parts of "emb" lie in different data files: each ps task wrote its own part.
  auto entry = (*r)->GetEntry("emb").value();
  ASSERT_EQ(entry.slices_size(), 2);
  std::set<int> shards;
  for (const auto& sp : entry.slices()) {
    auto sl = TensorSlice::FromProto(sp).value();
    shards.insert((*r)->GetEntry(EncodeTensorNameSlice("emb", sl))->shard_id());
  }
  EXPECT_EQ(shards.size(), 2u);

  // Train on, then restore: the ps tasks hold the saved values again.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(session.Run({{m.ids, ids}, {m.y, targets}}, {}, {m.train_op}).ok());
  ASSERT_TRUE(saver.Restore(session, *path).ok());
  auto after = session.Run({m.whole, m.w.read(), m.step});
  ASSERT_TRUE(after.ok()) << after.status();
  for (int i = 0; i < 3; ++i) ExpectBitEqual((*after)[i], (*before)[i]);
  EXPECT_EQ(train::LatestCheckpoint(dir.path()).value(), *path);
}

// The names in `dir` of `prefix`'s files and of any save's temporary files or directories.
std::vector<std::string> Leftovers(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  const std::vector<std::string> children = Env::Default()->GetChildren(dir).value();
  for (const std::string& c : children) {
    if (c.rfind(prefix + ".", 0) == 0 || c.find("_temp_") != std::string::npos ||
        c.find(".tempstate") != std::string::npos) {
      out.push_back(c);
    }
  }
  return out;
}

// The chief's default saver (sharded) on the cluster: ps task 1's shard cannot be moved into
// place, so the merge fails after moving ps task 0's: nothing of that save is left. Then the
// newest checkpoint's data file of ps task 1 is damaged: a new chief session restores the one
// before it, bit-exactly on both ps tasks.
TEST(SaverClusterTest, AFailedSaveLeavesNoFilesAndTheChiefSkipsADamagedCheckpoint) {
  std::vector<std::unique_ptr<Server>> servers;
  const std::string target = StartCluster(&servers);
  ASSERT_NE(target, "");
  TempDir dir;
  Scope root = Scope::NewRootScope();
  Model m = Build(root);
  auto scaffold = std::make_shared<train::Scaffold>();
  ASSERT_TRUE(scaffold->Finalize(root).ok());
  SessionOptions options;
  options.target = target;
  train::ChiefSessionCreator chief(root, scaffold, options, dir.path());
  auto session = chief.CreateSession();
  ASSERT_TRUE(session.ok()) << session.status();
  Tensor ids = Tensor::FromValues<int32_t>({0, 4, 5, 8}, TensorShape({4})).value();
  Tensor targets = Tensor::FromValues<float>({1, -1, 0.5f, 2}, TensorShape({4, 1})).value();
  auto train_and_save = [&](int64_t step) {
    EXPECT_TRUE((*session)->Run({{m.ids, ids}, {m.y, targets}}, {}, {m.train_op}).ok());
    return scaffold->saver->Save(**session, dir.File("model"), step);
  };
  ASSERT_TRUE(train_and_save(1).ok());
  auto at_1 = (*session)->Run({m.whole, m.w.read(), m.step});
  ASSERT_TRUE(at_1.ok()) << at_1.status();

  const std::string blocked = dir.File("model-2.data-00001-of-00002");
  ASSERT_TRUE(Env::Default()->CreateDirs(blocked).ok());
  auto failed = train_and_save(2);
  EXPECT_FALSE(failed.ok());
  ASSERT_TRUE(Env::Default()->DeleteDir(blocked).ok());
  EXPECT_EQ(Leftovers(dir.path(), "model-2"), std::vector<std::string>()) << failed.status();
  EXPECT_EQ(train::LatestCheckpoint(dir.path()).value(), dir.File("model-1"));

  ASSERT_TRUE(train_and_save(3).ok());  // the retry
  const std::string data = dir.File("model-3.data-00001-of-00002");
  std::string bytes = Env::Default()->ReadFile(data).value();
  bytes[bytes.size() / 2] ^= 1;
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(data, bytes).ok());
  auto restored = chief.CreateSession();
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(chief.restored_checkpoint(), dir.File("model-1"));
  auto after = (*restored)->Run({m.whole, m.w.read(), m.step});
  ASSERT_TRUE(after.ok()) << after.status();
  for (int i = 0; i < 3; ++i) ExpectBitEqual((*after)[i], (*at_1)[i]);
  EXPECT_EQ((*after)[2].scalar<int64_t>(), 1);
}

}  // namespace
}  // namespace dflow
