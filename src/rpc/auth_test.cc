// Authentication and encryption of the transport: what a caller without the cluster's secret, a
// member without the chief's, a plaintext client, and a capture of the link get.
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <cstdlib>

#include "base/env.h"
#include "base/net.h"
#include "base/temp_dir.h"
#include "dflow/dflow.h"
#include "dflow/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/rpc/services.grpc.pb.h"
#include "rpc/grpc_server.h"
#include "rpc/grpc_util.h"
#include "tests/delay_proxy.h"

namespace dflow::rpc {
namespace {

using ::testing::HasSubstr;

std::string Addr(int port) { return "127.0.0.1:" + std::to_string(port); }

// A one-task cluster "worker" on a free loopback port with `creds`.
std::unique_ptr<GrpcServer> StartServer(const ClusterCredentials& creds) {
  GrpcServerOptions o;
  o.cluster = ClusterSpec::FromJobs({{"worker", {Addr(PickFreePorts(1).value()[0])}}}).value();
  o.job_name = "worker";
  o.credentials = creds;
  auto s = GrpcServer::Create(o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(s).value() : nullptr;
}

template <typename Stub, typename Req, typename Resp, typename Method>
grpc::StatusCode Call(Stub* stub, Method method, const Req& req) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  Resp resp;
  return (stub->*method)(&ctx, req, &resp).error_code();
}

// The status of every method of both services called with `creds`, by method name.
std::map<std::string, grpc::StatusCode> CallEveryMethod(int port, const ClusterCredentials& creds) {
  auto channel = NewChannel(Addr(port), creds);
  auto worker = proto::rpc::WorkerService::NewStub(channel);
  auto master = proto::rpc::MasterService::NewStub(channel);
  using W = proto::rpc::WorkerService::Stub;
  using M = proto::rpc::MasterService::Stub;
  std::map<std::string, grpc::StatusCode> codes;
  codes["GetStatus"] = Call<W, proto::GetStatusRequest, proto::GetStatusResponse>(worker.get(), &W::GetStatus, {});
  codes["RegisterGraph"] = Call<W, proto::RegisterGraphRequest, proto::RegisterGraphResponse>(worker.get(),
                                                                                              &W::RegisterGraph, {});
  codes["DeregisterGraph"] =
      Call<W, proto::DeregisterGraphRequest, proto::DeregisterGraphResponse>(worker.get(), &W::DeregisterGraph, {});
  codes["RunGraph"] = Call<W, proto::RunGraphRequest, proto::RunGraphResponse>(worker.get(), &W::RunGraph, {});
  codes["AbortStep"] = Call<W, proto::AbortStepRequest, proto::AbortStepResponse>(worker.get(), &W::AbortStep, {});
  codes["Worker.Reset"] = Call<W, proto::ResetRequest, proto::ResetResponse>(worker.get(), &W::Reset, {});
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    auto reader = worker->RecvTensor(&ctx, proto::RecvTensorRequest());
    proto::RecvTensorChunk chunk;
    while (reader->Read(&chunk)) {
    }
    codes["RecvTensor"] = reader->Finish().error_code();
  }
  codes["CreateSession"] = Call<M, proto::CreateSessionRequest, proto::CreateSessionResponse>(master.get(),
                                                                                              &M::CreateSession, {});
  codes["ExtendSession"] = Call<M, proto::ExtendSessionRequest, proto::ExtendSessionResponse>(master.get(),
                                                                                              &M::ExtendSession, {});
  codes["RunStep"] = Call<M, proto::RunStepRequest, proto::RunStepResponse>(master.get(), &M::RunStep, {});
  codes["CloseSession"] = Call<M, proto::CloseSessionRequest, proto::CloseSessionResponse>(master.get(),
                                                                                           &M::CloseSession, {});
  codes["ListDevices"] = Call<M, proto::ListDevicesRequest, proto::ListDevicesResponse>(master.get(), &M::ListDevices,
                                                                                        {});
  codes["Master.Reset"] = Call<M, proto::MasterResetRequest, proto::MasterResetResponse>(master.get(), &M::Reset, {});
  codes["CompleteJob"] = Call<M, proto::CompleteJobRequest, proto::CompleteJobResponse>(master.get(), &M::CompleteJob,
                                                                                        {});
  // Last: when it is allowed, the task ends its job and stops.
  proto::JobCompleteRequest jc;
  jc.set_source_task("/job:attacker/replica:0/task:0");
  codes["JobComplete"] = Call<W, proto::JobCompleteRequest, proto::JobCompleteResponse>(worker.get(), &W::JobComplete,
                                                                                        jc);
  return codes;
}

const std::set<std::string> kChiefMethods = {"Worker.Reset", "JobComplete", "Master.Reset", "CompleteJob"};

TEST(AuthTest, EveryMethodRefusesACallWithoutTheSecretOrWithAWrongOne) {
  const ClusterCredentials creds = GenerateClusterCredentials({}).value();
  auto server = StartServer(creds);
  ASSERT_NE(server, nullptr);
  ClusterCredentials none = creds;  // TLS works (the CA is known); the secrets are missing
  none.secret.clear();
  none.chief_secret.clear();
  ClusterCredentials wrong = creds;
  wrong.secret = NewSecret().value();
  for (const ClusterCredentials& c : {none, wrong}) {
    auto codes = CallEveryMethod(server->port(), c);
    EXPECT_EQ(codes.size(), 15u);
    for (const auto& [method, code] : codes) {
      EXPECT_EQ(code, grpc::StatusCode::UNAUTHENTICATED) << method;
    }
  }
  EXPECT_FALSE(server->job_complete());
  // With the secret the same calls reach the service: they fail as the empty requests deserve,
  // but not for want of credentials (the chief's methods too: these credentials are the chief's).
  // The chief's CompleteJob ends the job of this one-task cluster, so the server may already have
  // stopped serving when JobComplete, called last, arrives: UNAVAILABLE is its one allowed failure.
  for (const auto& [method, code] : CallEveryMethod(server->port(), creds)) {
    EXPECT_NE(code, grpc::StatusCode::UNAUTHENTICATED) << method;
    EXPECT_NE(code, grpc::StatusCode::PERMISSION_DENIED) << method;
    if (method != "JobComplete") EXPECT_NE(code, grpc::StatusCode::UNAVAILABLE) << method;
  }
  EXPECT_TRUE(server->job_complete());  // the chief's CompleteJob (and JobComplete) ended the job
}

TEST(AuthTest, OnlyTheChiefEndsOrWipesTheJob) {
  const ClusterCredentials creds = GenerateClusterCredentials({}).value();
  auto server = StartServer(creds);
  ASSERT_NE(server, nullptr);
  const ClusterCredentials member = creds.WithoutChief();
  ASSERT_FALSE(member.chief());
  for (const auto& [method, code] : CallEveryMethod(server->port(), member)) {
    if (kChiefMethods.count(method)) {
      EXPECT_EQ(code, grpc::StatusCode::PERMISSION_DENIED) << method;
    } else {
      EXPECT_NE(code, grpc::StatusCode::PERMISSION_DENIED) << method;
      EXPECT_NE(code, grpc::StatusCode::UNAUTHENTICATED) << method;
    }
  }
  EXPECT_FALSE(server->job_complete());  // the member's JobComplete did nothing
  // A member's session runs graphs.
  Scope root = Scope::NewRootScope();
  Output sum = ops::Add(root, 3, 4);
  SessionOptions so;
  so.target = "grpc://" + Addr(server->port());
  so.direct_to_local_master = false;
  so.credentials = member;
  auto r = ClientSession(root, so).Run({sum});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<int>(), 7);
}

TEST(AuthTest, APlaintextClientCannotReachATlsServer) {
  auto server = StartServer(GenerateClusterCredentials({}).value());
  ASSERT_NE(server, nullptr);
  for (const auto& [method, code] : CallEveryMethod(server->port(), ClusterCredentials{})) {
    EXPECT_EQ(code, grpc::StatusCode::UNAVAILABLE) << method;
  }
  // A session says what is missing.
  SessionOptions so;
  so.target = "grpc://" + Addr(server->port());
  so.direct_to_local_master = false;
  so.credentials.insecure = true;
  Scope root = Scope::NewRootScope();
  auto r = ClientSession(root, so).Run({ops::Add(root, 1, 2)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
}

// What crosses the link between a client and its master, with and without TLS.
std::string CaptureARun(const ClusterCredentials& creds, const std::string& marker) {
  auto server = StartServer(creds);
  if (server == nullptr) return "";
  DelayProxy proxy(server->port(), 0);
  Scope root = Scope::NewRootScope();
  auto fed = ops::Placeholder(root, DT_STRING);
  Output echoed = ops::Identity(root, ops::Add(root, fed, ops::Const(root, marker)));
  SessionOptions so;
  so.target = "grpc://" + Addr(proxy.port());
  so.direct_to_local_master = false;
  so.credentials = creds;
  ClientSession session(root, so);
  auto r = session.Run({{fed, Tensor(marker)}}, {echoed});
  EXPECT_TRUE(r.ok()) << r.status();
  if (r.ok()) EXPECT_EQ((*r)[0].scalar<std::string>(), marker + marker);
  return proxy.Captured();
}

TEST(AuthTest, TheLinkCarriesNoPlaintext) {
  const std::string marker = "dflow-plaintext-marker-7f3a9c";
  ClusterCredentials insecure;
  insecure.insecure = true;
  // The check can fail: without TLS the marker (fed, in the graph, fetched) is on the wire.
  EXPECT_THAT(CaptureARun(insecure, marker), HasSubstr(marker));
  const std::string captured = CaptureARun(GenerateClusterCredentials({}).value(), marker);
  EXPECT_GT(captured.size(), 1000u);
  EXPECT_EQ(captured.find(marker), std::string::npos);
  EXPECT_EQ(captured.find("dflow-plaintext"), std::string::npos);
}

TEST(AuthTest, MutualTlsRefusesAClientWithoutACertificate) {
  const ClusterCredentials creds = GenerateClusterCredentials({}, /*mutual_tls=*/true).value();
  auto server = StartServer(creds);
  ASSERT_NE(server, nullptr);
  ClusterCredentials no_cert = creds;
  no_cert.cert_pem.clear();
  no_cert.key_pem.clear();
  no_cert.mutual_tls = false;
  EXPECT_EQ(CallEveryMethod(server->port(), no_cert)["GetStatus"], grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(CallEveryMethod(server->port(), creds)["GetStatus"], grpc::StatusCode::OK);
  // A certificate from another cluster's CA is refused too.
  ClusterCredentials stranger = GenerateClusterCredentials({}, true).value();
  stranger.ca_pem = creds.ca_pem;  // trusts the server, but its own certificate is foreign
  stranger.secret = creds.secret;
  EXPECT_EQ(CallEveryMethod(server->port(), stranger)["GetStatus"], grpc::StatusCode::UNAVAILABLE);
}

TEST(AuthTest, ATaskOnEveryInterfaceNeedsCredentialsOrInsecure) {
  GrpcServerOptions o;
  o.cluster = ClusterSpec::FromJobs({{"worker", {"ps0.example.invalid:2222"}}}).value();
  o.job_name = "worker";
  auto s = GrpcServer::Create(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << s.status();
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("--insecure"));
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("dflow credentials create"));
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

int Mode(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 0777) : -1;
}

TEST(AuthTest, AHandStartedLocalClusterIsSecureWithNoUserAction) {
  TempDir home, stranger;
  ScopedEnv store("DFLOW_CONFIG_DIR", home.File("dflow"));
  ScopedEnv no_env(kCredentialsEnv, "");
  std::vector<int> ports = PickFreePorts(2).value();
  ClusterSpec spec =
      ClusterSpec::FromJobs({{"ps", {Addr(ports[0])}}, {"worker", {"localhost:" + std::to_string(ports[1])}}}).value();
  std::vector<std::unique_ptr<Server>> servers;
  for (const char* job : {"ps", "worker"}) {
    ServerOptions o;
    o.cluster = spec;
    o.job_name = job;
    auto s = Server::Create(o);
    ASSERT_TRUE(s.ok()) << s.status();
    servers.push_back(std::move(s).value());
  }
  // Both tasks found the same credentials: TLS, a secret, the chief's secret.
  const ClusterCredentials& c = servers[0]->credentials();
  EXPECT_TRUE(c.tls());
  EXPECT_EQ(c.secret.size(), 64u);
  EXPECT_EQ(servers[1]->credentials().secret, c.secret);
  EXPECT_EQ(Mode(home.File("dflow")), 0700);
  auto clusters = Env::Default()->GetChildren(home.File("dflow/clusters")).value();
  ASSERT_EQ(clusters.size(), 1u);
  const std::string dir = home.File("dflow/clusters/" + clusters[0]);
  EXPECT_EQ(Mode(dir), 0700);
  EXPECT_EQ(Mode(dir + "/secret"), 0600);
  EXPECT_EQ(Mode(dir + "/tls.key"), 0600);

  // A client of this user, given nothing, finds them by the address (any loopback name).
  Scope root = Scope::NewRootScope();
  Variable v = Variable::Create(root.WithDevice("/job:ps/task:0").WithOpName("v"), {}, DT_FLOAT, init::Constant(2.0f));
  Output doubled = ops::Mul(root.WithDevice("/job:worker/task:0"), v.read(), 2.0f);
  SessionOptions so;
  so.target = "grpc://localhost:" + std::to_string(ports[1]);
  so.direct_to_local_master = false;
  ClientSession session(root, so);
  ASSERT_TRUE(session.Run({GlobalVariablesInitializer(root)}).ok());
  auto r = session.Run({doubled});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<float>(), 4.0f);

  // Another user (another store) has nothing to present and is refused.
  {
    ScopedEnv other("DFLOW_CONFIG_DIR", stranger.File("dflow"));
    SessionOptions so2 = so;
    ClientSession theirs(root, so2);
    auto refused = theirs.Run({doubled});
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr("DFLOW_CREDENTIALS"));
  }
  // A store other users can read is not used.
  ASSERT_EQ(::chmod(home.File("dflow").c_str(), 0755), 0);
  ServerOptions o;
  o.cluster = ClusterSpec::FromJobs({{"w", {Addr(PickFreePorts(1).value()[0])}}}).value();
  o.job_name = "w";
  auto open = Server::Create(o);
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.status().code(), absl::StatusCode::kPermissionDenied) << open.status();
  ASSERT_EQ(::chmod(home.File("dflow").c_str(), 0700), 0);
  // A stopped task's address record goes with it.
  servers[1]->Stop();
  EXPECT_FALSE(FindStoredCredentials("localhost", ports[1]).ok());
  EXPECT_TRUE(FindStoredCredentials("127.0.0.1", ports[0]).ok());
}

TEST(AuthTest, CredentialsFromTheEnvironmentServeAndConnect) {
  TempDir dir;
  const ClusterCredentials creds = GenerateClusterCredentials({"127.0.0.1"}).value();
  ASSERT_TRUE(WriteCredentials(creds, dir.File("creds")).ok());
  ScopedEnv env(kCredentialsEnv, dir.File("creds"));
  auto server = StartServer(ClusterCredentials{});
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->credentials().secret, creds.secret);
  Scope root = Scope::NewRootScope();
  SessionOptions so;
  so.target = "grpc://" + Addr(server->port());
  so.direct_to_local_master = false;
  auto r = ClientSession(root, so).Run({ops::Add(root, 20, 22)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<int>(), 42);
}

}  // namespace
}  // namespace dflow::rpc
