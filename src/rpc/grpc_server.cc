#include "rpc/grpc_server.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "absl/strings/numbers.h"
#include "base/net.h"
#include "distributed/local_master.h"
#include "distributed/worker.h"
#include "framework/file_policy.h"
#include "rpc/grpc_auth.h"
#include "rpc/grpc_master_service.h"
#include "rpc/grpc_remote_worker.h"
#include <grpcpp/impl/codegen/service_type.h>

#include "rpc/grpc_util.h"
#include "rpc/grpc_worker_service.h"

namespace dflow::rpc {

struct GrpcServer::Impl {
  std::string task;
  std::string host;
  int port = 0;
  ClusterCredentials credentials;
  std::unique_ptr<RpcAuthenticator> auth;
  // The per-user store's record of this task's address (empty: credentials came from elsewhere);
  // an ephemeral cluster's credentials (made for a task on a port the OS picks) go with it.
  std::string store_key;
  bool store_ephemeral = false;
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
    static std::unique_ptr<grpc::Service> service = NewGrpcWorkerService(nullptr, nullptr);  // never called
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
  if (!impl->store_key.empty()) {
    UnpublishStoredTarget(impl->host, impl->port, impl->store_key, impl->store_ephemeral);
  }
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
      return std::max<int64_t>(
          0,
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
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

// The credentials of a task (see GrpcServerOptions::credentials); `store_key` and `ephemeral`
// say where in the per-user store they came from.
StatusOr<ClusterCredentials> ResolveCredentials(const GrpcServerOptions& options, const std::string& task,
                                                const std::string& host, int port, const std::string& listen,
                                                std::string* store_key, bool* ephemeral) {
  ClusterCredentials c = options.credentials;
  if (!c.IsSet()) {
    const char* dir = std::getenv(kCredentialsEnv);
    if (dir != nullptr && *dir != '\0') {
      StatusOr<ClusterCredentials> loaded = LoadCredentials(dir);
      if (!loaded.ok()) return errors::Annotate(loaded.status(), absl::StrCat(kCredentialsEnv, "=", dir, ": "));
      c = *std::move(loaded);
    } else if (IsLoopbackHost(host)) {
      // One cluster, one key: every task of the cluster started by this user finds the same
      // credentials. A task on a port the OS picks is a cluster of its own.
      if (port == 0) {
        ASSIGN_OR_RETURN(std::string random, NewSecret());
        *store_key = "local-" + random.substr(0, 24);
        *ephemeral = true;
      } else {
        *store_key = "cluster-" + Sha256Hex(options.cluster.DebugString()).substr(0, 24);
      }
      StatusOr<ClusterCredentials> stored = LoadOrCreateStoredCredentials(*store_key, nullptr);
      if (!stored.ok()) {
        return errors::Annotate(stored.status(), absl::StrCat("Task ", task,
                                                              " has no credentials, and the per-user "
                                                              "store (",
                                                              CredentialStoreRoot(), ") cannot hold them: "));
      }
      c = *std::move(stored);
    } else {
      return errors::FailedPrecondition(
          "Task ", task, " would listen on ", listen,
          " (every interface) without credentials: any host that reaches the port could run anything as this "
          "user. Give it the cluster's credentials (--credentials DIR, made by `dflow credentials create DIR`, "
          "or ",
          kCredentialsEnv, "=DIR), or pass --insecure to serve plaintext without authentication on purpose");
    }
  }
  RETURN_IF_ERROR(c.Validate());
  if (!c.insecure) {
    if (c.secret.empty() && !c.mutual_tls) {
      return errors::InvalidArgument("Credentials of task ", task,
                                     " have neither a secret nor mutual TLS: nothing would authenticate callers");
    }
    if (c.tls() && c.cert_pem.empty()) {
      return errors::InvalidArgument("Credentials of task ", task,
                                     " have a CA but no certificate and key for the server (tls.crt, tls.key)");
    }
  }
  return c;
}

}  // namespace

std::vector<std::string> DefaultAllowedDirs() {
  std::vector<std::string> dirs;
  char cwd[4096];
  if (::getcwd(cwd, sizeof(cwd)) != nullptr) dirs.push_back(cwd);
  const char* tmp = std::getenv("TMPDIR");
  dirs.push_back(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
  return dirs;
}

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
  impl->host = host;
  // Ops that touch files (checkpoints, datasets) stay inside the allowed directories.
  const bool default_dirs = options.allowed_dirs.empty();
  StatusOr<std::shared_ptr<const FilePolicy>> made_policy =
      FilePolicy::Create(default_dirs ? DefaultAllowedDirs() : options.allowed_dirs, /*create_missing=*/default_dirs);
  if (!made_policy.ok()) {
    return errors::Annotate(made_policy.status(), absl::StrCat("Task ", impl->task, ": --allowed_dirs: "));
  }
  std::shared_ptr<const FilePolicy> policy = *std::move(made_policy);
  ASSIGN_OR_RETURN(impl->credentials, ResolveCredentials(options, impl->task, host, port_number, listen,
                                                         &impl->store_key, &impl->store_ephemeral));
  impl->auth = std::make_unique<RpcAuthenticator>(impl->credentials, impl->task);
  // The worker reaches its peers through the cache, and the cache reaches it directly.
  impl->cache = std::make_unique<GrpcWorkerCache>(options.cluster, impl->task, nullptr, impl->credentials);
  impl->worker = std::make_shared<Worker>(impl->task, impl->cache.get(), options.worker);
  impl->cache->set_local(impl->worker);
  impl->worker->device()->set_file_policy(std::move(policy));
  impl->master = std::make_unique<Master>(impl->task, impl->cache.get(), options.master);
  impl->worker_service = NewGrpcWorkerService(impl->worker.get(), impl->auth.get());
  impl->master_service = NewGrpcMasterService(impl->master.get(), impl->auth.get());
  grpc::ServerBuilder builder;
  ConfigureServer(&builder, options.max_message_bytes);
  builder.AddListeningPort(listen, NewServerCredentials(impl->credentials), &impl->port);
  builder.RegisterService(impl->worker_service.get());
  builder.RegisterService(impl->master_service.get());
  impl->server = builder.BuildAndStart();
  if (impl->server == nullptr || impl->port == 0) {
    if (impl->store_ephemeral) UnpublishStoredTarget(host, 0, impl->store_key, true);
    return errors::Unavailable("Cannot listen on ", listen, " for task ", impl->task, " (is the port in use?)");
  }
  if (!impl->store_key.empty()) {
    // Clients of this user that are given no credentials find them by this address.
    Status published = PublishStoredTarget(host, impl->port, impl->store_key);
    if (!published.ok()) {
      std::fprintf(stderr, "dflow: task %s: clients will not find its credentials: %s\n", impl->task.c_str(),
                   std::string(published.message()).c_str());
    }
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
const ClusterCredentials& GrpcServer::credentials() const { return impl_->credentials; }

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
