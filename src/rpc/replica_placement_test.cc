// A model placed by train::ReplicaDeviceSetter on a real gRPC cluster (2 ps tasks and 1 worker
// in this process, on 127.0.0.1): a partitioned embedding spans both ps tasks, each shard's
// lookup runs where the shard lives, and the model trains.

#include <map>
#include <set>

#include "base/net.h"
#include "dflow/dflow.h"
#include "dflow/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

// Free ports on 127.0.0.1, chosen by the OS (held open until all are chosen so they differ).
std::vector<int> FreePorts(int n) { return PickFreePorts(n).value(); }

constexpr char kPs0[] = "/job:ps/replica:0/task:0/device:CPU:0";
constexpr char kPs1[] = "/job:ps/replica:0/task:1/device:CPU:0";
constexpr char kWorker[] = "/job:worker/replica:0/task:0/device:CPU:0";

struct Model {
  PartitionedVariable emb;
  Variable w;
  Output ids, y, loss, whole;
  Operation train_op, init;
};

Model Build(const Scope& root) {
  Model m;
  Scope s = root.WithDeviceFunction(train::ReplicaDeviceSetter(2, "/job:worker/task:0"));
  m.emb = CreatePartitionedVariable(s, "emb", {9, 3}, DT_FLOAT, init::RandomUniform(-0.5, 0.5, 1),
                                    FixedSizePartitioner(2));
  m.w = Variable::Create(s.WithOpName("w"), {3, 1}, DT_FLOAT, init::RandomUniform(-0.5, 0.5, 2));
  m.ids = ops::Placeholder(s.WithOpName("ids"), DT_INT32, PartialTensorShape({-1}));
  m.y = ops::Placeholder(s.WithOpName("y"), DT_FLOAT, PartialTensorShape({-1, 1}));
  Output pred = ops::MatMul(s.WithOpName("pred"), ops::EmbeddingLookup(s, m.emb, m.ids, "div"), m.w);
  m.loss = losses::MeanSquaredError(s, m.y, pred);
  m.train_op = train::MomentumOptimizer(0.1f, 0.5f).Minimize(s, m.loss);
  m.init = GlobalVariablesInitializer(s);
  m.whole = m.emb.AsTensor(s);
  return m;
}

TEST(ReplicaPlacementTest, APartitionedEmbeddingSpansBothPsTasksAndTrains) {
  std::vector<int> ports = FreePorts(3);
  auto addr = [&](int i) { return "127.0.0.1:" + std::to_string(ports[i]); };
  ClusterSpec spec = ClusterSpec::FromJobs({{"ps", {addr(0), addr(1)}}, {"worker", {addr(2)}}}).value();
  std::vector<std::unique_ptr<Server>> servers;
  for (auto [job, task] : {std::pair<const char*, int>{"ps", 0}, {"ps", 1}, {"worker", 0}}) {
    ServerOptions o;
    o.cluster = spec;
    o.job_name = job;
    o.task_index = task;
    o.startup_wait_ms = 10000;
    auto s = Server::Create(o);
    ASSERT_TRUE(s.ok()) << s.status();
    servers.push_back(std::move(s).value());
  }
  Scope root = Scope::NewRootScope();
  Model m = Build(root);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root, "grpc://" + addr(2));
  ASSERT_TRUE(session.Run({m.init}).ok());

  Tensor ids = Tensor::FromValues<int32_t>({0, 4, 5, 8, 2, 5}, TensorShape({6})).value();
  Tensor targets = Tensor::FromValues<float>({1, -1, 0.5f, 2, -0.5f, -1}, TensorShape({6, 1})).value();
  auto before = session.Run({m.whole});
  ASSERT_TRUE(before.ok()) << before.status();

  // One traced step: where every node ran.
  RunMetadata meta;
  auto first = session.Run({{m.ids, ids}, {m.y, targets}}, {m.loss}, {m.train_op}, &meta);
  ASSERT_TRUE(first.ok()) << first.status();
  std::map<std::string, std::string> device_of;
  std::set<std::string> devices;
  for (const NodeExecStats& st : meta.step_stats) {
    device_of[st.node_name] = st.device;
    devices.insert(st.device);
  }
  EXPECT_THAT(devices, ::testing::IsSupersetOf({kPs0, kPs1, kWorker}));
  EXPECT_EQ(device_of["emb/part_0"], kPs0);  // rows 0..4
  EXPECT_EQ(device_of["emb/part_1"], kPs1);  // rows 5..8
  EXPECT_EQ(device_of["w"], kPs0);
  EXPECT_EQ(device_of["embedding_lookup/GatherV2"], kPs0);  // each shard gathers its own rows
  EXPECT_EQ(device_of["embedding_lookup/GatherV2_1"], kPs1);
  EXPECT_EQ(device_of["embedding_lookup/DynamicStitch"], kWorker);
  EXPECT_EQ(device_of["pred"], kWorker);
  int updates = 0;
  for (const auto& [name, device] : device_of) {
    // The shards update only the rows looked up (their gradient is a gather's); w densely.
    const bool sparse = name.ends_with("/SparseApplyMomentum");
    if (!sparse && !name.ends_with("/ApplyMomentum")) continue;  // not the sends and receives they feed
    ++updates;
    EXPECT_EQ(sparse, name.find("emb/part_") != std::string::npos) << name;
    EXPECT_EQ(device, name.find("emb/part_1") != std::string::npos ? kPs1 : kPs0) << name;
  }
  EXPECT_EQ(updates, 3);

  float loss0 = (*first)[0].scalar<float>(), loss = loss0;
  for (int step = 0; step < 60; ++step) {
    auto r = session.Run({{m.ids, ids}, {m.y, targets}}, {m.loss}, {m.train_op});
    ASSERT_TRUE(r.ok()) << r.status();
    loss = (*r)[0].scalar<float>();
  }
  EXPECT_LT(loss, loss0 * 0.2f);

  // The shards changed on both ps tasks where ids reached them, and nowhere else.
  auto after = session.Run({m.whole});
  ASSERT_TRUE(after.ok());
  auto row_moved = [&](int row) {
    bool moved = false;
    for (int j = 0; j < 3; ++j)
      moved |= (*after)[0].flat<float>()[row * 3 + j] != (*before)[0].flat<float>()[row * 3 + j];
    return moved;
  };
  for (int row : {0, 2, 4, 5, 8}) EXPECT_TRUE(row_moved(row)) << row;
  for (int row : {1, 3, 6, 7}) EXPECT_FALSE(row_moved(row)) << row;

  // Another client with its own copy of the graph shares the trained shards on the ps tasks.
  Scope root2 = Scope::NewRootScope();
  Model m2 = Build(root2);
  ClientSession other(root2, "grpc://" + addr(2));
  auto shared = other.Run({m2.whole});
  ASSERT_TRUE(shared.ok()) << shared.status();
  for (int i = 0; i < 27; ++i) EXPECT_EQ((*shared)[0].flat<float>()[i], (*after)[0].flat<float>()[i]) << i;
}

}  // namespace
}  // namespace dflow
