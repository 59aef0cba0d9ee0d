// Input pipelines in a cluster: a dataset pipeline (with a map function from the graph's
// library) placed on another task than the session's, reached through gRPC, and sharded
// between two workers.
#include "base/net.h"
#include "dflow/dflow.h"
#include "dflow/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dflow {
namespace {

using ::testing::ElementsAre;

TEST(DatasetClusterTest, APipelineOnAnotherTaskFeedsTheSessionsTask) {
  std::vector<int> ports = PickFreePorts(3).value();
  auto addr = [&](int i) { return "127.0.0.1:" + std::to_string(ports[i]); };
  ClusterSpec spec = ClusterSpec::FromJobs({{"ps", {addr(0)}}, {"worker", {addr(1), addr(2)}}}).value();
  std::vector<std::unique_ptr<Server>> servers;
  for (auto [job, task] : {std::pair{"ps", 0}, {"worker", 0}, {"worker", 1}}) {
    ServerOptions o;
    o.cluster = spec;
    o.job_name = job;
    o.task_index = task;
    auto s = Server::Create(o);
    ASSERT_TRUE(s.ok()) << s.status();
    servers.push_back(std::move(s).value());
  }
  // Each worker reads its own shard on its own task; a sum on the ps task combines them.
  Scope root = Scope::NewRootScope();
  std::vector<data::Element> nexts;
  for (int w = 0; w < 2; ++w) {
    Scope on = root.WithDevice("/job:worker/task:" + std::to_string(w));
    data::Dataset ds = data::Dataset::Range(on, 10)
                           .Shard(2, w)
                           .Map([](const Scope& s, const std::vector<Output>& x) {
                             return std::vector<Output>{ops::Mul(s, x[0], int64_t{100})};
                           })
                           .Batch(5)
                           .Prefetch(1);
    nexts.push_back(ds.MakeOneShotIterator().GetNext());
  }
  Output total = ops::Add(root.WithDevice("/job:ps/task:0"), ops::Sum(root, nexts[0][0], 0),
                          ops::Sum(root, nexts[1][0], 0));
  ASSERT_TRUE(root.ok()) << root.status();
  SessionOptions so;
  so.target = servers[0]->target();
  so.direct_to_local_master = false;  // through the MasterService RPC, as another process would
  ClientSession session(root, so);
  auto r = session.Run({nexts[0][0], nexts[1][0], total});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)[0].flat<int64_t>(), ElementsAre(0, 200, 400, 600, 800));
  EXPECT_THAT((*r)[1].flat<int64_t>(), ElementsAre(100, 300, 500, 700, 900));
  EXPECT_EQ((*r)[2].scalar<int64_t>(), 4500);
  // The end of input comes back from the remote task as OutOfRange.
  auto end = session.Run({nexts[0][0]});
  ASSERT_FALSE(end.ok());
  EXPECT_TRUE(absl::IsOutOfRange(end.status())) << end.status();
  EXPECT_THAT(std::string(end.status().message()), ::testing::HasSubstr("End of sequence"));
}

}  // namespace
}  // namespace dflow
