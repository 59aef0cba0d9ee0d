#include "distributed/local_master.h"

#include <map>
#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "base/net.h"

namespace dflow {
namespace {

std::mutex& RegistryMu() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}
std::map<int, std::shared_ptr<LocalMaster>>& Registry() {
  static auto* r = new std::map<int, std::shared_ptr<LocalMaster>>;
  return *r;
}
// Masters that stopped because the job is complete, by port (guarded by RegistryMu).
std::map<int, std::shared_ptr<LocalMaster>>& Completed() {
  static auto* r = new std::map<int, std::shared_ptr<LocalMaster>>;
  return *r;
}

// The port of a "grpc://host:port" target (0 when it is not one) and its host.
int TargetPort(const std::string& target, std::string* host) {
  constexpr absl::string_view kPrefix = "grpc://";
  if (!absl::StartsWith(target, kPrefix)) return 0;
  std::string address = target.substr(kPrefix.size());
  size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || colon == 0 || !absl::SimpleAtoi(address.substr(colon + 1), &port)) return 0;
  *host = address.substr(0, colon);
  return port;
}

}  // namespace

std::shared_ptr<LocalMaster> LocalMaster::Find(const std::string& host, int port) {
  std::lock_guard<std::mutex> l(RegistryMu());
  auto it = Registry().find(port);
  if (it == Registry().end()) return nullptr;
  if (!IsLoopbackHost(host) && host != it->second->host_) return nullptr;
  return it->second;
}

std::shared_ptr<LocalMaster> LocalMaster::FindTarget(const std::string& target) {
  std::string host;
  int port = TargetPort(target, &host);
  if (port == 0) return nullptr;
  return Find(host, port);
}

std::shared_ptr<LocalMaster> LocalMaster::FindCompletedTarget(const std::string& target) {
  std::string host;
  int port = TargetPort(target, &host);
  if (port == 0) return nullptr;
  std::lock_guard<std::mutex> l(RegistryMu());
  auto it = Completed().find(port);
  if (it == Completed().end()) return nullptr;
  if (!IsLoopbackHost(host) && host != it->second->host_) return nullptr;
  return it->second;
}

std::shared_ptr<LocalMaster> LocalMaster::Register(Master* master, const std::string& task, const std::string& host,
                                                   int port) {
  auto m = std::make_shared<LocalMaster>(master, task, host, port);
  std::lock_guard<std::mutex> l(RegistryMu());
  Registry()[port] = m;
  Completed().erase(port);
  return m;
}

void LocalMaster::BeginStop() {
  stopping_ = true;
  {
    std::lock_guard<std::mutex> l(RegistryMu());
    auto it = Registry().find(port_);
    if (it != Registry().end() && it->second.get() == this) {
      if (job_complete_) Completed()[port_] = it->second;
      Registry().erase(it);
    }
  }
  std::lock_guard<std::mutex> l(calls_mu_);
  for (CallOptions* c : calls_) c->StartCancel();
}

void LocalMaster::Revoke() {
  BeginStop();
  std::unique_lock<std::shared_mutex> l(mu_);
  master_ = nullptr;
}

template <typename Fn>
Status LocalMaster::Call(Fn&& fn) {
  if (!stopping_) {
    std::shared_lock<std::shared_mutex> l(mu_);
    if (master_ != nullptr && !stopping_) return fn(master_);
  }
  return errors::Unavailable("The server of task ", task_, " on port ", port_, " has stopped");
}

Status LocalMaster::CreateSession(const proto::CreateSessionRequest& req, proto::CreateSessionResponse* resp) {
  return Call([&](Master* m) { return m->CreateSession(req, resp); });
}
Status LocalMaster::ExtendSession(const proto::ExtendSessionRequest& req, proto::ExtendSessionResponse* resp) {
  return Call([&](Master* m) { return m->ExtendSession(req, resp); });
}
Status LocalMaster::RunStep(const proto::RunStepRequest& req, proto::RunStepResponse* resp,
                            CancellationManager* cancellation) {
  CallOptions opts;  // so that a stopping server cancels the step, as gRPC cancels remote calls
  {
    std::lock_guard<std::mutex> l(calls_mu_);
    calls_.insert(&opts);
  }
  CancellationManager::Token token = -1;
  bool registered = false;
  if (cancellation != nullptr) {
    token = cancellation->NewToken();
    registered = cancellation->RegisterCallback(token, [&opts] { opts.StartCancel(); });
    if (!registered) opts.StartCancel();
  }
  Status s = Call([&](Master* m) { return m->RunStep(req, resp, &opts); });
  if (registered) cancellation->DeregisterCallback(token);
  std::lock_guard<std::mutex> l(calls_mu_);
  calls_.erase(&opts);
  return s;
}
Status LocalMaster::CloseSession(const proto::CloseSessionRequest& req, proto::CloseSessionResponse* resp) {
  return Call([&](Master* m) { return m->CloseSession(req, resp); });
}
Status LocalMaster::ListDevices(const proto::ListDevicesRequest& req, proto::ListDevicesResponse* resp) {
  return Call([&](Master* m) { return m->ListDevices(req, resp); });
}

Status LocalMaster::CompleteJob(const proto::CompleteJobRequest& req, proto::CompleteJobResponse* resp) {
  return Call([&](Master* m) { return m->CompleteJob(req, resp); });
}

}  // namespace dflow
