// Servers over real gRPC on 127.0.0.1 in one process: the hello session, placement across
// tasks, shared variables, big tensors in both directions, unreachable tasks and hostile calls.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <latch>
#include <set>
#include <sstream>
#include <thread>

#include "base/net.h"
#include "dflow/dflow.h"
#include "dflow/server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/rpc/services.grpc.pb.h"
#include "rpc/grpc_util.h"
#include "tests/delay_proxy.h"

namespace dflow {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

std::vector<int> FreePorts(int n) { return PickFreePorts(n).value(); }

std::string Addr(int port) { return "127.0.0.1:" + std::to_string(port); }

// ps tasks and worker tasks, all in this process.
struct Cluster {
  Cluster(int num_ps, int num_workers, int64_t startup_wait_ms = 10000) {
    std::vector<int> ports = FreePorts(num_ps + num_workers);
    std::vector<std::string> ps, workers;
    for (int i = 0; i < num_ps; ++i) ps.push_back(Addr(ports[i]));
    for (int i = 0; i < num_workers; ++i) workers.push_back(Addr(ports[num_ps + i]));
    spec = ClusterSpec::FromJobs({{"ps", ps}, {"worker", workers}}).value();
    for (const auto& [job, n] : {std::pair<std::string, int>{"ps", num_ps}, {"worker", num_workers}}) {
      for (int i = 0; i < n; ++i) {
        ServerOptions o;
        o.cluster = spec;
        o.job_name = job;
        o.task_index = i;
        o.startup_wait_ms = startup_wait_ms;
        auto s = Server::Create(o);
        EXPECT_TRUE(s.ok()) << s.status();
        if (s.ok()) servers.push_back(std::move(s).value());
      }
    }
  }
  std::string worker_target(int i) const { return "grpc://" + spec.TaskAddress("worker", i).value(); }
  ClusterSpec spec;
  std::vector<std::unique_ptr<Server>> servers;  // ps first
};

TEST(GrpcServerTest, HelloDistributedTensorFlow) {
  auto server = Server::CreateLocalServer();
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_THAT((*server)->target(), ::testing::StartsWith("grpc://localhost:"));
  Scope root = Scope::NewRootScope();
  Output hello = ops::Const(root, "Hello, distributed TensorFlow!");
  ClientSession session(root, (*server)->target());
  auto r = session.Run({hello});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<std::string>(), "Hello, distributed TensorFlow!");
  (*server)->Stop();
  (*server)->Stop();  // idempotent
}

TEST(GrpcServerTest, PlacementAcrossTasksAndSharedVariables) {
  Cluster c(2, 2);
  ASSERT_EQ(c.servers.size(), 4u);
  // The seeds' example: weights on the ps tasks, the computation on the worker.
  auto build = [](const Scope& root, Variable* w1, Variable* w2) {
    *w1 = Variable::Create(root.WithDevice("/job:ps/task:0").WithOpName("w1"), TensorShape({2, 2}), DT_FLOAT,
                           init::Constant(0.5));
    *w2 = Variable::Create(root.WithDevice("/job:ps/task:1").WithOpName("w2"), TensorShape({2, 1}), DT_FLOAT,
                           init::Constant(2.0));
  };
  Scope root = Scope::NewRootScope();
  Variable w1, w2;
  build(root, &w1, &w2);
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output y = ops::MatMul(root.WithDevice("/job:worker/task:0"), ops::Relu(root, ops::MatMul(root, x, w1)), w2);
  Output bump = ops::AssignAdd(root.WithOpName("bump"), w2.ref(), ops::Const(root, {{1.0f}, {1.0f}}));
  Operation init = GlobalVariablesInitializer(root);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession s0(root, c.worker_target(0));
  ASSERT_TRUE(s0.Run({init}).ok());
  Tensor xv = Tensor::FromValues<float>({1, 2}, TensorShape({1, 2})).value();
  auto r = s0.Run({{x, xv}}, {y});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FLOAT_EQ((*r)[0].flat<float>()[0], (1.5f + 1.5f) * 2.0f);
  // Another client, on the other worker, with its own copy of the graph, shares the variables.
  Scope root2 = Scope::NewRootScope();
  Variable v1, v2;
  build(root2, &v1, &v2);
  Output bump2 = ops::AssignAdd(root2.WithOpName("bump"), v2.ref(), ops::Const(root2, {{1.0f}, {1.0f}}));
  ClientSession s1(root2, c.worker_target(1));
  auto b = s1.Run({bump2});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)[0].flat<float>()[0], 3.0f);
  auto again = s0.Run({{x, xv}}, {y});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FLOAT_EQ((*again)[0].flat<float>()[0], 3.0f * 3.0f);
  (void)bump;
}

TEST(GrpcServerTest, InGraphReplicationAveragesTowerGradients) {
  // One client builds a tower per worker; the averaged gradient updates w on the ps task.
  Cluster c(1, 2);
  ASSERT_EQ(c.servers.size(), 3u);
  Scope root = Scope::NewRootScope();
  Variable w = Variable::Create(root.WithDevice("/job:ps/task:0").WithOpName("w"), {2}, DT_FLOAT, init::Constant(1.0));
  std::vector<Output> xs, grads;
  for (int t = 0; t < 2; ++t) {
    Scope tower = root.WithDevice("/job:worker/task:" + std::to_string(t)).NewSubScope("tower" + std::to_string(t));
    Output x = ops::Placeholder(tower.WithOpName("x"), DT_FLOAT);
    Output loss = ops::Sum(tower, ops::Square(tower, ops::Mul(tower, w.read(), x)), {0});  // sum (w x)^2
    xs.push_back(x);
    grads.push_back(Gradients(tower, {loss}, {w.read()})[0]);
  }
  Output mean = ops::Mul(root, ops::Add(root, grads[0], grads[1]), 0.5f);
  Output step = ops::ApplyGradientDescent(root, w.ref(), 0.1f, mean);
  Operation init = GlobalVariablesInitializer(root);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root, c.worker_target(0));
  ASSERT_TRUE(session.Run({init}).ok());
  Tensor x0 = Tensor::FromValues<float>({1, 2}, TensorShape({2})).value();
  Tensor x1 = Tensor::FromValues<float>({3, -1}, TensorShape({2})).value();
  RunMetadata md;
  auto r = session.Run({{xs[0], x0}, {xs[1], x1}}, {step}, {}, &md);
  ASSERT_TRUE(r.ok()) << r.status();
  // d/dw sum (w x)^2 = 2 w x^2; mean over the towers at w = 1: (x0^2 + x1^2); w -= 0.1 * that.
  EXPECT_FLOAT_EQ((*r)[0].flat<float>()[0], 1.0f - 0.1f * (1 + 9));
  EXPECT_FLOAT_EQ((*r)[0].flat<float>()[1], 1.0f - 0.1f * (4 + 1));
  // Each tower's gradient ran on its own worker.
  std::set<std::string> devices;
  for (const NodeExecStats& st : md.step_stats) {
    if (st.op[0] != '_' && st.node_name.rfind("tower1/", 0) == 0) devices.insert(st.device);
  }
  EXPECT_EQ(devices, std::set<std::string>{"/job:worker/replica:0/task:1/device:CPU:0"});
}

TEST(GrpcServerTest, ModelParallelLayersOnDifferentTasksTrain) {
  Cluster c(1, 2);
  ASSERT_EQ(c.servers.size(), 3u);
  Scope root = Scope::NewRootScope();
  Scope w0 = root.WithDevice("/job:worker/task:0"), w1 = root.WithDevice("/job:worker/task:1");
  Output x = ops::RandomUniform(w0, ops::Const(w0, {32, 4}), DT_FLOAT, 1);
  Output y = ops::Sum(w0, x, {1}, /*keep_dims=*/true);
  Variable a = Variable::Create(w0.WithOpName("layer1"), {4, 8}, DT_FLOAT, init::GlorotUniform(2));
  Variable b = Variable::Create(w1.WithOpName("layer2"), {8, 1}, DT_FLOAT, init::GlorotUniform(3));
  Output h = ops::Tanh(w0, ops::MatMul(w0, x, a));
  Output y_hat = ops::MatMul(w1, h, b);
  Output loss = losses::MeanSquaredError(w1, y, y_hat);
  Operation step = train::GradientDescentOptimizer(0.1f).Minimize(root, loss);
  Operation init = GlobalVariablesInitializer(root);
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession session(root, c.worker_target(0));
  ASSERT_TRUE(session.Run({init}).ok());
  auto first = session.Run({loss});
  ASSERT_TRUE(first.ok()) << first.status();
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(session.Run({step}).ok());
  auto last = session.Run({loss});
  ASSERT_TRUE(last.ok());
  EXPECT_LT((*last)[0].scalar<float>(), 0.1f * (*first)[0].scalar<float>());
}

TEST(GrpcServerTest, BigTensorsTravelBothWays) {
  Cluster c(1, 1);
  ASSERT_EQ(c.servers.size(), 2u);
  const int64_t n = (int64_t{80} << 20) / 4;  // 80 MiB of floats: above one chunk and gRPC's default limit
  Scope root = Scope::NewRootScope();
  Output x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
  Output on_ps = ops::Mul(root.WithDevice("/job:ps/task:0"), x, 2.0f);         // worker -> ps
  Output back = ops::Add(root.WithDevice("/job:worker/task:0"), on_ps, 1.0f);  // ps -> worker
  ASSERT_TRUE(root.ok());
  Tensor xv(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) xv.flat<float>()[i] = static_cast<float>(i % 1000);
  ClientSession s(root, c.worker_target(0));
  auto r = s.Run({{x, xv}}, {back});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ((*r)[0].NumElements(), n);
  for (int64_t i : {int64_t{0}, int64_t{12345}, n / 2, n - 1}) {
    EXPECT_EQ((*r)[0].flat<float>()[i], 2.0f * static_cast<float>(i % 1000) + 1.0f) << i;
  }
}

// Past gRPC's 2 GiB message limit: 2 GiB + 4 KiB of floats made on the ps travel to the worker,
// and twice their value travels back. Sums and samples across chunk boundaries must agree.
TEST(GrpcServerTest, ATensorAboveTwoGiBTravelsBothWays) {
  Cluster c(1, 1);
  ASSERT_EQ(c.servers.size(), 2u);
  const int64_t n = (int64_t{2} << 30) / 4 + 1024;
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0"), worker = root.WithDevice("/job:worker/task:0");
  Output big = ops::RandomUniform(ps, ops::Const(ps, {n}), DT_FLOAT, /*seed=*/7);
  Output doubled = ops::Mul(worker, big, 2.0f);  // ps -> worker
  Output idx = ops::Const(root, {int64_t{0}, int64_t{(1 << 20) + 3}, n / 2 + 17, n - 1});
  Output at_ps = ops::Gather(ps, big, idx);
  Output at_worker = ops::Gather(worker, doubled, idx);
  Output sum_ps = ops::Sum(ps, big, 0);
  Output sum_back = ops::Sum(ps, doubled, 0);  // worker -> ps
  ASSERT_TRUE(root.ok()) << root.status();
  ClientSession s(root, c.worker_target(0));
  auto r = s.Run({at_ps, at_worker, sum_ps, sum_back});
  ASSERT_TRUE(r.ok()) << r.status();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ((*r)[1].flat<float>()[i], 2.0f * (*r)[0].flat<float>()[i]) << i;
  }
  double a = (*r)[2].scalar<float>(), b = (*r)[3].scalar<float>();
  EXPECT_GT(a, 0.4 * n);  // uniform [0, 1): about n / 2
  EXPECT_NEAR(b, 2 * a, 1e-5 * 2 * a);
}

TEST(GrpcServerTest, AnUnreachableTaskIsReportedInTime) {
  std::vector<int> ports = FreePorts(2);
  ServerOptions o;
  o.cluster = ClusterSpec::FromJobs({{"ps", {Addr(ports[0])}}, {"worker", {Addr(ports[1])}}}).value();
  o.job_name = "worker";
  o.startup_wait_ms = 500;
  auto worker = Server::Create(o);  // the ps task never starts
  ASSERT_TRUE(worker.ok()) << worker.status();
  Scope root = Scope::NewRootScope();
  Output a = ops::Const(root, 1.0f);
  ClientSession s(root, (*worker)->target());
  auto r = s.Run({a});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("/job:ps/replica:0/task:0"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(Addr(ports[0])));
}

// The local addresses of the sockets listening on `port`, as /proc/net/tcp and tcp6 write them
// (hex, each 32-bit word in host order): "0100007F" is 127.0.0.1 (also when an IPv6 socket
// holds it), 31 zeros and a 1 before the last six digits is ::1, all zeros is every interface.
std::vector<std::string> ListeningAddresses(int port) {
  std::vector<std::string> found;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream f(table);
    std::string line;
    std::getline(f, line);  // header
    while (std::getline(f, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      size_t colon = local.find(':');
      if (state != "0A" || colon == std::string::npos) continue;  // 0A: LISTEN
      if (std::stoi(local.substr(colon + 1), nullptr, 16) != port) continue;
      std::string address = local.substr(0, colon);
      // An IPv4 address bound through an IPv6 socket (::ffff:a.b.c.d): the IPv4 form.
      if (address.size() == 32 && address.compare(0, 24, "0000000000000000FFFF0000") == 0) address = address.substr(24);
      found.push_back(address);
    }
  }
  return found;
}

TEST(GrpcServerTest, EveryLoopbackFormListensOnLoopbackOnly) {
  const std::string ipv6_loopback = "00000000000000000000000001000000";
  for (const auto& [host, expected] :
       std::vector<std::pair<std::string, std::string>>{{"[::1]", ipv6_loopback},
                                                        {"[0:0:0:0:0:0:0:1]", ipv6_loopback},
                                                        {"localhost", "0100007F"},
                                                        {"127.0.0.1", "0100007F"},
                                                        {"127.0.0.2", "0200007F"}}) {
    int port = FreePorts(1)[0];
    ServerOptions o;
    o.cluster = ClusterSpec::FromJobs({{"worker", {host + ":" + std::to_string(port)}}}).value();
    o.job_name = "worker";
    auto server = Server::Create(o);
    ASSERT_TRUE(server.ok()) << host << ": " << server.status();
    EXPECT_EQ(ListeningAddresses(port), std::vector<std::string>{expected}) << host;
    // And it serves there: a session on that very address runs a step.
    Scope root = Scope::NewRootScope();
    Output one = ops::Const(root, 1.0f);
    SessionOptions so;
    so.target = "grpc://" + host + ":" + std::to_string(port);
    so.direct_to_local_master = false;
    auto r = ClientSession(root, so).Run({one});
    ASSERT_TRUE(r.ok()) << host << ": " << r.status();
    EXPECT_EQ((*r)[0].scalar<float>(), 1.0f);
  }
}

// A client 300 ms away (each way) from its master, and that master 300 ms away from the ps task:
// every connection takes two round trips (1.2 s) before its first call, far beyond any short
// connect timeout.
TEST(GrpcServerTest, SessionsWorkOverALinkOf300MsEachWay) {
  std::vector<int> ports = FreePorts(2);
  auto spec_with_ps_at = [&](int ps_port) {
    return ClusterSpec::FromJobs({{"ps", {Addr(ps_port)}}, {"worker", {Addr(ports[1])}}}).value();
  };
  DelayProxy to_ps(ports[0], 300), to_worker(ports[1], 300);
  ASSERT_NE(to_ps.port(), 0);
  ASSERT_NE(to_worker.port(), 0);
  // One cluster seen through two specs: the tasks need the same credentials, given explicitly.
  const ClusterCredentials creds = GenerateClusterCredentials({}).value();
  ServerOptions pso;
  pso.credentials = creds;
  pso.cluster = spec_with_ps_at(ports[0]);
  pso.job_name = "ps";
  auto ps = Server::Create(pso);
  ASSERT_TRUE(ps.ok()) << ps.status();
  ServerOptions wo;
  wo.credentials = creds;
  wo.cluster = spec_with_ps_at(to_ps.port());  // the worker reaches the ps through the slow link
  wo.job_name = "worker";
  auto worker = Server::Create(wo);
  ASSERT_TRUE(worker.ok()) << worker.status();

  Scope root = Scope::NewRootScope();
  Variable v = Variable::Create(root.WithDevice("/job:ps/task:0").WithOpName("v"), {2}, DT_FLOAT, init::Constant(3.0f));
  Output doubled = ops::Mul(root.WithDevice("/job:worker/task:0"), v.read(), 2.0f);
  Operation init = GlobalVariablesInitializer(root);
  SessionOptions so;
  so.target = "grpc://" + Addr(to_worker.port());
  so.credentials = creds;
  const auto start = std::chrono::steady_clock::now();
  ClientSession session(root, so);
  ASSERT_TRUE(session.Run({init}).ok());
  auto r = session.Run({doubled});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].flat<float>()[0], 6.0f);
  EXPECT_EQ((*r)[0].flat<float>()[1], 6.0f);
  // The calls really crossed both links: at least the client's and the master's handshakes.
  EXPECT_GE(to_worker.connections(), 1);
  EXPECT_GE(to_ps.connections(), 1);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2400));
}

TEST(GrpcServerTest, FiveHundredClientsConnectingAtOnceAllSucceed) {
  constexpr int kClients = 500;
  // Every client is on this host: the server is told to take that many sessions from one host
  // (the default, 64, is the limit against one client hoarding sessions).
  ServerOptions o;
  o.cluster = ClusterSpec::FromJobs({{"localhost", {"localhost:0"}}}).value();
  o.job_name = "localhost";
  o.max_sessions_per_client = kClients;
  auto server = Server::Create(o);
  ASSERT_TRUE(server.ok()) << server.status();
  // Both ends of every connection are in this process: raise the soft limit on open files (1024
  // on many systems) as far as the hard limit allows.
  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  files.rlim_cur = std::max<rlim_t>(files.rlim_cur, std::min<rlim_t>(files.rlim_max, 4 * kClients + 1024));
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &files), 0);
  std::latch ready(kClients);
  std::vector<Status> results(kClients);
  std::vector<float> values(kClients, 0.0f);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      Scope root = Scope::NewRootScope();
      Output x = ops::Const(root, static_cast<float>(i));
      SessionOptions so;
      so.target = (*server)->target();
      so.direct_to_local_master = false;  // each client its own channel and connection
      ready.arrive_and_wait();
      auto r = ClientSession(root, so).Run({x});
      results[i] = r.status();
      if (r.ok()) values[i] = (*r)[0].scalar<float>();
    });
  }
  for (std::thread& t : clients) t.join();
  int failed = 0;
  for (int i = 0; i < kClients; ++i) {
    if (!results[i].ok()) {
      if (failed++ < 5) ADD_FAILURE() << "client " << i << ": " << results[i];
      continue;
    }
    EXPECT_EQ(values[i], static_cast<float>(i));
  }
  EXPECT_EQ(failed, 0);
}

TEST(GrpcServerTest, ARestartedTaskIsAbortedNamingIt) {
  Cluster c(1, 1);
  ASSERT_EQ(c.servers.size(), 2u);
  Scope root = Scope::NewRootScope();
  Output a = ops::Const(root.WithDevice("/job:ps/task:0"), 2.0f);
  Output b = ops::Mul(root, a, 3.0f);
  ClientSession session(root, c.worker_target(0));
  auto r = session.Run({b});
  ASSERT_TRUE(r.ok()) << r.status();
  // The ps task restarts on the same port: it has forgotten the session's graphs.
  c.servers[0]->Stop();
  c.servers[0].reset();
  ServerOptions o;
  o.cluster = c.spec;
  o.job_name = "ps";
  auto restarted = Server::Create(o);
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  auto again = session.Run({b});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAborted) << again.status();
  EXPECT_THAT(std::string(again.status().message()), HasSubstr("/job:ps/replica:0/task:0"));
  EXPECT_THAT(std::string(again.status().message()), HasSubstr("restarted"));
  // A new session works with the restarted task.
  auto fresh = ClientSession(root, c.worker_target(0)).Run({b});
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ((*fresh)[0].scalar<float>(), 6.0f);
}

TEST(GrpcServerTest, HostileCallsAreRejected) {
  auto server = Server::CreateLocalServer();
  ASSERT_TRUE(server.ok());
  // A client with the cluster's credentials, so that the calls reach the worker's checks.
  auto channel = rpc::NewChannel("127.0.0.1:" + std::to_string((*server)->port()), (*server)->credentials());
  auto stub = proto::rpc::WorkerService::NewStub(channel);
  {
    grpc::ClientContext ctx;
    proto::RunGraphRequest req;
    req.set_graph_handle("nope");
    proto::RunGraphResponse resp;
    grpc::Status s = stub->RunGraph(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::ABORTED);
  }
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    proto::RecvTensorRequest req;
    req.set_rendezvous_key("garbage");
    auto reader = stub->RecvTensor(&ctx, req);
    proto::RecvTensorChunk chunk;
    while (reader->Read(&chunk)) {
    }
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  {
    grpc::ClientContext ctx;
    proto::RegisterGraphRequest req;
    proto::NodeDef* n = req.mutable_graph_def()->add_node();
    n->set_name("x");
    n->set_op("NoSuchOp");
    proto::RegisterGraphResponse resp;
    grpc::Status s = stub->RegisterGraph(&ctx, req, &resp);
    EXPECT_FALSE(s.ok());
  }
  // Raw bytes that are not a message, and an absurd declared size inside a message.
  grpc::GenericStub generic(channel);
  for (const std::string& bytes :
       {std::string("\xff\xff\xff\xff\x0f garbage", 14), std::string("\x1a\xff\xff\xff\xff\x07", 6)}) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::Slice slice(bytes);
    grpc::ByteBuffer request(&slice, 1), response;
    grpc::CompletionQueue cq;
    auto call = generic.PrepareUnaryCall(&ctx, "/dflow.proto.rpc.WorkerService/RunGraph", request, &cq);
    call->StartCall();
    grpc::Status status;
    call->Finish(&response, &status, reinterpret_cast<void*>(1));
    void* tag;
    bool ok;
    ASSERT_TRUE(cq.Next(&tag, &ok));
    EXPECT_FALSE(status.ok());
  }
  // The server still serves.
  Scope root = Scope::NewRootScope();
  Output a = ops::Const(root, 7);
  auto r = ClientSession(root, (*server)->target()).Run({a});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].scalar<int32_t>(), 7);
}

}  // namespace
}  // namespace dflow
