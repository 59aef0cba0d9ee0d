// A worker whose device has a file policy (what `dflow server --allowed_dirs` sets up): the
// graphs that clients run through the master may save and read files only under the allowed
// directories; without a policy they may go anywhere.
#include <unistd.h>

#include "base/temp_dir.h"
#include "distributed/in_process_cluster.h"
#include "distributed/master.h"
#include "distributed/master_test_util.h"
#include "dflow/dflow.h"
#include "framework/device.h"
#include "framework/file_policy.h"
#include "gmock/gmock.h"
#include "graph/graph_def.h"
#include "gtest/gtest.h"
#include "proto/graph.pb.h"
#include "tensor/tensor_proto.h"

namespace dflow {
namespace {

using ::testing::HasSubstr;

constexpr char kTask[] = "/job:worker/replica:0/task:0";

class FilePolicyClusterTest : public ::testing::Test {
 protected:
  FilePolicyClusterTest() : cluster_(ClusterSpec::FromJobs({{"worker", {"w0:1"}}}).value()) {
    InitDflow();
    MasterOptions o;
    o.startup_wait_ms = 300;
    o.probe_timeout_ms = 100;
    master_ = std::make_unique<Master>(kTask, cluster_.cache(), o);
    allowed_ = dir_.File("allowed");
    outside_ = dir_.File("outside");
    EXPECT_TRUE(Env::Default()->CreateDirs(allowed_).ok());
    EXPECT_TRUE(Env::Default()->CreateDirs(outside_).ok());
    EXPECT_TRUE(Env::Default()->WriteFileAtomic(allowed_ + "/in.txt", "inside\n").ok());
    EXPECT_TRUE(Env::Default()->WriteFileAtomic(outside_ + "/secret.txt", "secret\n").ok());
    EXPECT_EQ(::symlink(outside_.c_str(), (allowed_ + "/out").c_str()), 0);
    BuildGraph();
  }

  void Restrict() {
    auto p = FilePolicy::Create(FilePolicy::ParseDirList(allowed_));
    ASSERT_TRUE(p.ok()) << p.status();
    cluster_.worker(kTask)->device()->set_file_policy(*p);
  }

  // save: SaveV2 of a constant under the fed "prefix"; an initializable TextLine iterator over
  // the fed "file".
  void BuildGraph() {
    Output prefix = ops::Placeholder(root_.WithOpName("prefix"), DT_STRING);
    Output names = ops::Const(root_.WithOpName("names"), Input::Initializer(std::vector<std::string>{"v"}));
    Output specs = ops::Const(root_.WithOpName("specs"), Input::Initializer(std::vector<std::string>{""}));
    Output v = ops::Const(root_.WithOpName("v"), 2.5f);
    ops::BuildOp(root_.WithOpName("save"), "SaveV2", {prefix, names, specs, v},
                 {{"dtypes", std::vector<DType>{DT_FLOAT}}});
    Output file = ops::Placeholder(root_.WithOpName("file"), DT_STRING);
    data::Iterator it = data::Dataset::TextLine(root_, file).MakeInitializableIterator();
    init_ = it.initializer().node()->name();
    next_ = it.GetNext().components[0].name();
    ASSERT_TRUE(root_.ok()) << root_.status();
    proto::CreateSessionRequest req;
    ExportGraphDef(*root_.graph(), req.mutable_graph_def());
    proto::CreateSessionResponse resp;
    ASSERT_TRUE(master_->CreateSession(req, &resp).ok());
    session_ = resp.session_handle();
  }

  StatusOr<std::vector<Tensor>> Run(const std::string& feed, const std::string& value,
                                    const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
    std::vector<std::pair<std::string, Tensor>> feeds;
    if (!feed.empty()) feeds.emplace_back(feed, Tensor(value));
    return RunStepOnMaster(master_.get(), session_, feeds, fetches, targets);
  }
  Status Save(const std::string& prefix) { return Run("prefix:0", prefix, {}, {"save"}).status(); }
  // The first line of `file`.
  StatusOr<std::string> FirstLine(const std::string& file) {
    RETURN_IF_ERROR(Run("file:0", file, {}, {init_}).status());
    ASSIGN_OR_RETURN(std::vector<Tensor> out, Run("", "", {next_}, {}));
    return out.at(0).scalar<std::string>();
  }

  TempDir dir_;
  std::string allowed_, outside_;
  InProcessCluster cluster_;
  std::unique_ptr<Master> master_;
  Scope root_ = Scope::NewRootScope();
  std::string session_, init_, next_;
};

TEST_F(FilePolicyClusterTest, ARestrictedWorkerUsesOnlyItsAllowedDirectories) {
  Restrict();
  ASSERT_TRUE(Save(allowed_ + "/ckpt").ok());
  EXPECT_TRUE(Env::Default()->FileExists(allowed_ + "/ckpt.index"));
  for (const std::string& p : {outside_ + "/ckpt", allowed_ + "/../outside/ckpt", allowed_ + "/out/ckpt"}) {
    Status s = Save(p);
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << p << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("--allowed_dirs=" + allowed_)) << p;
  }
  EXPECT_EQ(*Env::Default()->GetChildren(outside_), std::vector<std::string>{"secret.txt"});
  auto line = FirstLine(allowed_ + "/in.txt");
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(*line, "inside");
  for (const std::string& p : {outside_ + "/secret.txt", allowed_ + "/out/secret.txt"}) {
    EXPECT_EQ(FirstLine(p).status().code(), absl::StatusCode::kPermissionDenied) << p;
  }
}

TEST_F(FilePolicyClusterTest, AWorkerWithoutAPolicyIsUnrestricted) {
  ASSERT_TRUE(Save(outside_ + "/ckpt").ok());
  EXPECT_TRUE(Env::Default()->FileExists(outside_ + "/ckpt.index"));
  auto line = FirstLine(outside_ + "/secret.txt");
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(*line, "secret");
}

}  // namespace
}  // namespace dflow
