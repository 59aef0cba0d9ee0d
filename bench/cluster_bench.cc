// Cluster benchmarks, each beside its reference in the same run (on 127.0.0.1, all tasks in
// this process, every tensor still crossing a real TCP connection through gRPC):
//  - null step: a session on a worker fetching a scalar variable held by a ps task, beside an
//    empty gRPC call (the worker service's GetStatus) on the same machine; the session is in the
//    worker's process (as between-graph trainers run), and, for comparison, reaches the worker's
//    master through the RPC a client in another process uses;
//  - transfer: pulling a 64 MiB variable from the ps task to the worker and pushing one back,
//    beside raw loopback TCP moving the same bytes.
// Each cluster benchmark runs three times: tls:0 on a cluster started --insecure (plaintext, no
// secret), tls:1 on the default secure one (TLS from the cluster's CA, the secret checked on every
// call), tls:2 with the secret checked but no TLS (what authentication alone costs), so the cost
// of security is the ratio of the runs in one process.
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "bench/bench_util.h"
#include "dflow/dflow.h"
#include "dflow/server.h"
// The reference beside the session benchmarks is a bare call of the worker's gRPC service: that
// service and its channel set-up are internal (the rpc layer), and reaching them is the point.
#include "proto/rpc/services.grpc.pb.h"
#include "rpc/grpc_util.h"

namespace dflow {
namespace {

constexpr int64_t kBytes = int64_t{64} << 20;

// One ps task and one worker task: mode 0 explicitly insecure, 1 TLS and the secret, 2 the
// secret over plaintext.
struct TwoTasks {
  explicit TwoTasks(int mode) {
    if (mode == 0) {
      creds.insecure = true;
    } else {
      creds = GenerateClusterCredentials({}).value();
    }
    if (mode == 2) {
      creds.ca_pem.clear();
      creds.cert_pem.clear();
      creds.key_pem.clear();
      creds.server_name.clear();
    }
    std::vector<int> ports = bench::FreeLoopbackPorts(2).value();
    std::string ps = "127.0.0.1:" + std::to_string(ports[0]);
    std::string worker = "127.0.0.1:" + std::to_string(ports[1]);
    spec = ClusterSpec::FromJobs({{"ps", {ps}}, {"worker", {worker}}}).value();
    for (const char* job : {"ps", "worker"}) {
      ServerOptions o;
      o.cluster = spec;
      o.job_name = job;
      o.credentials = creds;
      servers.push_back(Server::Create(o).value());
    }
  }
  std::string worker_target() const { return servers[1]->target(); }
  ClusterSpec spec;
  ClusterCredentials creds;
  std::vector<std::unique_ptr<Server>> servers;
};

// state.range(0): the mode.
TwoTasks* Cluster(const benchmark::State& state) {
  static TwoTasks* clusters[3] = {new TwoTasks(0), new TwoTasks(1), new TwoTasks(2)};
  return clusters[state.range(0)];
}

void BM_EmptyGrpcCall(benchmark::State& state) {
  TwoTasks* c = Cluster(state);
  auto stub = proto::rpc::WorkerService::NewStub(rpc::NewChannel(c->spec.TaskAddress("ps", 0).value(), c->creds));
  for (auto _ : state) {
    grpc::ClientContext ctx;
    proto::GetStatusRequest req;
    proto::GetStatusResponse resp;
    if (!stub->GetStatus(&ctx, req, &resp).ok()) state.SkipWithError("GetStatus failed");
  }
}
BENCHMARK(BM_EmptyGrpcCall)->Arg(0)->Arg(1)->Arg(2)->ArgName("tls")->Unit(benchmark::kMicrosecond)->UseRealTime();

// The same empty call through the callback API (what the master uses to reach workers).
void BM_EmptyGrpcCallbackCall(benchmark::State& state) {
  TwoTasks* c = Cluster(state);
  auto stub = proto::rpc::WorkerService::NewStub(rpc::NewChannel(c->spec.TaskAddress("ps", 0).value(), c->creds));
  for (auto _ : state) {
    grpc::ClientContext ctx;
    proto::GetStatusRequest req;
    proto::GetStatusResponse resp;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    stub->async()->GetStatus(&ctx, &req, &resp, [&](grpc::Status) {
      std::lock_guard<std::mutex> l(mu);
      done = true;
      cv.notify_one();
    });
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return done; });
  }
}
BENCHMARK(BM_EmptyGrpcCallbackCall)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->ArgName("tls")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// A session on the worker fetching a scalar variable held by `device`, once per iteration.
void FetchScalar(benchmark::State& state, const std::string& device, const std::string& name, bool direct = true) {
  Scope root = Scope::NewRootScope();
  Variable v = Variable::Create(root.WithDevice(device).WithOpName(name), {}, DT_FLOAT, init::Constant(3.0));
  Operation init = GlobalVariablesInitializer(root);
  SessionOptions options;
  options.target = Cluster(state)->worker_target();
  options.direct_to_local_master = direct;
  options.credentials = Cluster(state)->creds;
  ClientSession session(root, options);
  if (!session.Run({init}).ok()) state.SkipWithError("init failed");
  for (auto _ : state) {
    auto r = session.Run({v.read()});
    if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
  }
}

void BM_NullStep(benchmark::State& state) { FetchScalar(state, "/job:ps/task:0", "scalar"); }
BENCHMARK(BM_NullStep)->Arg(0)->Arg(1)->Arg(2)->ArgName("tls")->Unit(benchmark::kMicrosecond)->UseRealTime();

// The same from a client that reaches the worker's master through the MasterService RPC, as a
// client in another process does (two RPCs: RunStep, then the worker's RunGraph on the ps).
void BM_NullStepRemoteClient(benchmark::State& state) {
  FetchScalar(state, "/job:ps/task:0", "scalar_remote_client", /*direct=*/false);
}
BENCHMARK(BM_NullStepRemoteClient)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->ArgName("tls")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// For reference: the same fetch of a variable held by the worker itself (one RPC: RunStep).
void BM_LocalStep(benchmark::State& state) { FetchScalar(state, "/job:worker/task:0", "local_scalar"); }
BENCHMARK(BM_LocalStep)->Arg(0)->Arg(1)->Arg(2)->ArgName("tls")->Unit(benchmark::kMicrosecond)->UseRealTime();

// Pull: the worker reads the ps variable (the Shape runs on the worker, so the bytes cross).
// Push: the ps variable is assigned the worker's variable.
void BM_Transfer64MiB(benchmark::State& state) {
  const bool push = state.range(1) == 1;
  Scope root = Scope::NewRootScope();
  Scope ps = root.WithDevice("/job:ps/task:0"), worker = root.WithDevice("/job:worker/task:0");
  const int64_t n = kBytes / 4;
  Variable on_ps = Variable::Create(ps.WithOpName(push ? "big_ps_push" : "big_ps"), {n}, DT_FLOAT, init::Ones());
  Variable on_worker = Variable::Create(worker.WithOpName("big_worker"), {n}, DT_FLOAT, init::Ones());
  Output pulled = ops::Shape(worker, on_ps.read());
  Output pushed = ops::Shape(ps, ops::Assign(ps, on_ps.ref(), on_worker.read()));
  Operation init = GlobalVariablesInitializer(root);
  ClientSession session(root, Cluster(state)->worker_target());
  if (!session.Run({init}).ok()) state.SkipWithError("init failed");
  for (auto _ : state) {
    auto r = session.Run({push ? pushed : pulled});
    if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
  }
  state.SetBytesProcessed(state.iterations() * kBytes);
}
BENCHMARK(BM_Transfer64MiB)
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->ArgNames({"tls", "push"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Raw loopback TCP: one connection, 64 MiB written and read per iteration.
void BM_RawTcp64MiB(benchmark::State& state) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  listen(listener, 1);
  int client = socket(AF_INET, SOCK_STREAM, 0);
  connect(client, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  int server = accept(listener, nullptr, nullptr);
  std::vector<char> out(kBytes, 1), in(kBytes);
  for (auto _ : state) {
    std::thread writer([&] {
      for (int64_t off = 0; off < kBytes;) {
        ssize_t w = write(client, out.data() + off, kBytes - off);
        if (w <= 0) return;
        off += w;
      }
    });
    for (int64_t off = 0; off < kBytes;) {
      ssize_t r = read(server, in.data() + off, kBytes - off);
      if (r <= 0) break;
      off += r;
    }
    writer.join();
  }
  state.SetBytesProcessed(state.iterations() * kBytes);
  close(client);
  close(server);
  close(listener);
}
BENCHMARK(BM_RawTcp64MiB)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace dflow

BENCHMARK_MAIN();
