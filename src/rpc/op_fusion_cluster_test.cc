// Op fusion on a real gRPC cluster (1 ps + 1 worker in this process, on 127.0.0.1): the master
// fuses before it partitions, so the worker runs _FusedConv2D; a chain whose BiasAdd is placed on
// another task stays apart; SessionOptions::fuse_ops = false reaches the master through
// CreateSession (SessionConfig.disable_op_fusion) and turns it off; the values agree.

#include <map>

#include "base/net.h"
#include "dflow/dflow.h"
#include "dflow/server.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

constexpr char kPs[] = "/job:ps/replica:0/task:0/device:CPU:0";
constexpr char kWorker[] = "/job:worker/replica:0/task:0/device:CPU:0";

struct Ran {
  std::vector<Tensor> values;
  std::map<std::string, std::pair<std::string, std::string>> nodes;  // name -> (op, device)
};

Ran RunOnce(const std::string& target, bool fuse) {
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0");
  Scope worker = root.WithDevice("/job:worker/task:0");
  Tensor x(DT_FLOAT, TensorShape{2, 6, 6, 3});
  for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<float>()[i] = std::sin(0.3f * float(i));
  Variable f = Variable::Create(ps.WithOpName("f"), {3, 3, 3, 4}, DT_FLOAT, init::RandomUniform(-1, 1, 1));
  Variable b = Variable::Create(ps.WithOpName("b"), {4}, DT_FLOAT, init::RandomUniform(-1, 1, 2));
  Variable w = Variable::Create(ps.WithOpName("w"), {144, 5}, DT_FLOAT, init::RandomUniform(-1, 1, 3));
  Variable c = Variable::Create(ps.WithOpName("c"), {5}, DT_FLOAT, init::RandomUniform(-1, 1, 4));
  Output conv = ops::Conv2D(worker.WithOpName("conv"), ops::Const(worker, x), f.read());
  Output relu = ops::Relu(worker.WithOpName("relu"), ops::BiasAdd(worker.WithOpName("bias_add"), conv, b.read()));
  Output flat = ops::Reshape(worker, relu, {2, 144});
  // The product on the worker, its BiasAdd on the ps task: two devices, no fusion.
  Output logits = ops::BiasAdd(ps.WithOpName("logits"), ops::MatMul(worker.WithOpName("mm"), flat, w.read()), c.read());
  Operation init = GlobalVariablesInitializer(root);
  EXPECT_TRUE(root.ok()) << root.status();
  SessionOptions so;
  so.target = target;
  so.direct_to_local_master = false;  // through CreateSession's SessionConfig, as another process
  so.fuse_ops = fuse;
  ClientSession session(root, so);
  EXPECT_TRUE(session.Run({init}).ok());
  Ran ran;
  RunMetadata md;
  auto r = session.Run({}, {relu, logits}, {}, &md);
  EXPECT_TRUE(r.ok()) << r.status();
  if (r.ok()) ran.values = *r;
  for (const NodeExecStats& st : md.step_stats) ran.nodes[st.node_name] = {st.op, st.device};
  return ran;
}

TEST(OpFusionClusterTest, TheMasterFusesWithinATaskAndObeysTheSessionOption) {
  std::vector<int> ports = PickFreePorts(2).value();
  auto addr = [&](int i) { return "127.0.0.1:" + std::to_string(ports[i]); };
  ClusterSpec spec = ClusterSpec::FromJobs({{"ps", {addr(0)}}, {"worker", {addr(1)}}}).value();
  std::vector<std::unique_ptr<Server>> servers;
  for (const char* job : {"ps", "worker"}) {
    ServerOptions o;
    o.cluster = spec;
    o.job_name = job;
    o.startup_wait_ms = 10000;
    auto s = Server::Create(o);
    ASSERT_TRUE(s.ok()) << s.status();
    servers.push_back(std::move(s).value());
  }
  const Ran fused = RunOnce("grpc://" + addr(1), true);
  const Ran plain = RunOnce("grpc://" + addr(1), false);
  ASSERT_EQ(fused.values.size(), 2u);
  ASSERT_EQ(plain.values.size(), 2u);

  // Fused: the worker ran one _FusedConv2D named after the Relu; conv and bias_add are gone.
  ASSERT_TRUE(fused.nodes.count("relu")) << "relu did not run";
  EXPECT_EQ(fused.nodes.at("relu").first, "_FusedConv2D");
  EXPECT_EQ(fused.nodes.at("relu").second, kWorker);
  EXPECT_EQ(fused.nodes.count("conv"), 0u);
  EXPECT_EQ(fused.nodes.count("bias_add"), 0u);
  // The product and its BiasAdd on two tasks ran apart.
  ASSERT_TRUE(fused.nodes.count("mm") && fused.nodes.count("logits"));
  EXPECT_EQ(fused.nodes.at("mm").first, "MatMul");
  EXPECT_EQ(fused.nodes.at("logits").first, "BiasAdd");
  EXPECT_EQ(fused.nodes.at("logits").second, kPs);
  // Unfused: the three ops ran.
  ASSERT_TRUE(plain.nodes.count("conv") && plain.nodes.count("bias_add") && plain.nodes.count("relu"));
  EXPECT_EQ(plain.nodes.at("conv").first, "Conv2D");
  EXPECT_EQ(plain.nodes.at("relu").first, "Relu");

  for (size_t v = 0; v < 2; ++v) {
    ASSERT_EQ(fused.values[v].shape(), plain.values[v].shape());
    for (int64_t i = 0; i < fused.values[v].NumElements(); ++i) {
      ASSERT_NEAR(fused.values[v].flat<float>()[i], plain.values[v].flat<float>()[i], 1e-5) << v << " " << i;
    }
  }
}

}  // namespace
}  // namespace dflow
