#include "rpc/grpc_server.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/strings/numbers.h"
#include "base/net.h"
#include "distributed/local_master.h"
#include "distributed/worker.h"
#include "rpc/grpc_master_service.h"
#include "rpc/grpc_remote_worker.h"
#include <grpcpp/impl/codegen/service_type.h>

#include "rpc/grpc_util.h"
#include "rpc/grpc_worker_service.h"

namespace dflow::rpc {

struct GrpcServer::Impl {
  std::string task;
  int port = 0;
  std::shared_ptr<Worker> worker;
  std::unique_ptr<GrpcWorkerCache> cache;
  std::unique_ptr<Master> master;
  std::shared_ptr<LocalMaster> local_master;  // sessions of this process reach the master directly
  std::unique_ptr<grpc::Service> worker_service, master_service;
  std::unique_ptr<grpc::Server> server;
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  bool stopped = false;
  std::thread drain;  // finishes the steps in progress after JobComplete, then stops
};

namespace {

// gRPC 1.51 shares one completion queue among the servers that use its callback API and tears
// it down when the last of them goes away; a thread of the old queue can then free it twice
// (seen under ASan when servers come and go in one process). A server without ports, made once
// and never destroyed, keeps that queue for the life of the process.
void KeepCallbackQueue() {
  static grpc::Server* anchor = [] {
    static std::unique_ptr<grpc::Service> service = NewGrpcWorkerService(nullptr);  // never called
    grpc::ServerBuilder builder;
    builder.RegisterService(service.get());
    return builder.BuildAndStart().release();
  }();
  (void)anchor;
}

// Stops serving; steps still running fail with `abort`. The first caller does it, later ones wait
// until it is done.
void StopServer(GrpcServer::Impl* impl, const Status& abort) {
  {
    std::unique_lock<std::mutex> l(impl->mu);
    if (impl->stopping) {
      impl->cv.wait(l, [&] { return impl->stopped; });
      return;
    }
    impl->stopping = true;
  }
  impl->local_master->BeginStop();
  impl->worker->AbortAll(abort);
  impl->master->Stop();
  impl->local_master->Revoke();
  // The calls in progress finish (with the abort) before gRPC forgets them: a reactor must not be
  // finished after its server is gone. Kernels that ignore cancellation get 10 s.
  if (!impl->worker->WaitUntilIdle(10000)) {
    std::fprintf(stderr, "dflow: task %s stops with calls still running\n", impl->task.c_str());
  }
  impl->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  impl->server->Wait();
  {
    std::lock_guard<std::mutex> l(impl->mu);
    impl->stopped = true;
  }
  impl->cv.notify_all();
}

// After JobComplete: new steps are refused already (the worker does it); the steps in progress
// get `drain_ms` to finish, then the server stops and Join returns.
void StartDrain(GrpcServer::Impl* impl, const std::string& source, int64_t drain_ms) {
  std::lock_guard<std::mutex> l(impl->mu);
  if (impl->stopping || impl->drain.joinable()) return;
  impl->drain = std::thread([impl, source, drain_ms] {
    std::fprintf(stderr, "dflow: task %s: the job is complete (%s ended training); finishing the steps in progress\n",
                 impl->task.c_str(), source.c_str());
    Status done = impl->worker->job_complete_status();
    // Steps of this task's clients (its master) and partitions run here (its worker) get drain_ms.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(drain_ms);
    auto left_ms = [&] {
      return std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(
                                      deadline - std::chrono::steady_clock::now())
                                      .count());
    };
    bool idle = impl->master->WaitUntilIdle(drain_ms) && impl->worker->WaitUntilStepsDone(left_ms());
    if (!idle) {
      std::fprintf(stderr, "dflow: task %s: steps still running after %lld ms fail: the job is complete\n",
                   impl->task.c_str(), static_cast<long long>(drain_ms));
      // Failed here first, the steps report the job's end (OutOfRange) to their clients rather
      // than the cancellation that stopping the server would cause.
      impl->worker->AbortAll(done);
      impl->worker->WaitUntilIdle(2000);
      impl->master->WaitUntilIdle(2000);  // steps waiting on other tasks, which drain too
    }
    StopServer(impl, done);
  });
}

}  // namespace

GrpcServer::GrpcServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GrpcServer::~GrpcServer() { Stop(); }

StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Create(const GrpcServerOptions& options) {
  ASSIGN_OR_RETURN(std::string address, options.cluster.TaskAddress(options.job_name, options.task_index));
  KeepCallbackQueue();
  auto impl = std::make_unique<Impl>();
  impl->task = absl::StrCat("/job:", options.job_name, "/replica:0/task:", options.task_index);
  size_t colon = address.rfind(':');
  std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  // Loopback clusters listen on loopback only; others on every interface.
  int port_number = 0;
  if (!absl::SimpleAtoi(port, &port_number) || port_number < 0 || port_number > 65535) {
    return errors::InvalidArgument("Task ", impl->task, " has the address '", address, "', whose port is not a number");
  }
  std::string listen = ListenAddress(host, port_number);
  // The worker reaches its peers through the cache, and the cache reaches it directly.
  impl->cache = std::make_unique<GrpcWorkerCache>(options.cluster, impl->task, nullptr);
  impl->worker = std::make_shared<Worker>(impl->task, impl->cache.get());
  impl->cache->set_local(impl->worker);
  impl->master = std::make_unique<Master>(impl->task, impl->cache.get(), options.master);
  impl->worker_service = NewGrpcWorkerService(impl->worker.get());
  impl->master_service = NewGrpcMasterService(impl->master.get());
  grpc::ServerBuilder builder;
  ConfigureServer(&builder);
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &impl->port);
  builder.RegisterService(impl->worker_service.get());
  builder.RegisterService(impl->master_service.get());
  impl->server = builder.BuildAndStart();
  if (impl->server == nullptr || impl->port == 0) {
    return errors::Unavailable("Cannot listen on ", listen, " for task ", impl->task,
                               " (is the port in use?)");
  }
  impl->local_master = LocalMaster::Register(impl->master.get(), impl->task, host, impl->port);
  impl->local_master->set_num_tasks(static_cast<int>(options.cluster.TaskNames().size()));
  Impl* raw = impl.get();
  impl->worker->SetJobCompleteHandler([raw](const std::string& source, int64_t drain_ms) {
    raw->local_master->MarkJobComplete();
    StartDrain(raw, source, drain_ms);
  });
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(impl)));
}

int GrpcServer::port() const { return impl_->port; }
std::string GrpcServer::target() const { return absl::StrCat("grpc://localhost:", impl_->port); }
const std::string& GrpcServer::task() const { return impl_->task; }
Worker* GrpcServer::worker() { return impl_->worker.get(); }

void GrpcServer::Join() {
  std::unique_lock<std::mutex> l(impl_->mu);
  impl_->cv.wait(l, [&] { return impl_->stopped; });
}

bool GrpcServer::job_complete() const { return !impl_->worker->job_complete_status().ok(); }

void GrpcServer::Stop() {
  StopServer(impl_.get(), errors::Unavailable("Task ", impl_->task, " is stopping"));
  std::thread drain;
  {
    std::lock_guard<std::mutex> l(impl_->mu);
    drain.swap(impl_->drain);
  }
  if (drain.joinable()) {
    if (drain.get_id() == std::this_thread::get_id()) drain.detach();  // never: the drain owns no GrpcServer
    else drain.join();
  }
}

}  // namespace dflow::rpc
