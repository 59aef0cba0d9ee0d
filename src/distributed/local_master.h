// LocalMaster: the masters of the servers running in this process, found by port, so that a
// session on "grpc://localhost:PORT" created in the process that serves PORT calls that master
// directly instead of through an RPC to itself (TensorFlow does the same). Between-graph trainers
// run exactly so: each worker process serves its task and opens its sessions on its own target.
//
// A server registers its master when it starts and revokes it when it stops. Revoking waits for
// calls in progress, which the stopping master fails promptly; later calls get Unavailable, as a
// remote client of a stopped server would. Thread-safe.
#pragma once

#include <atomic>
#include <mutex>
#include <set>
#include <memory>
#include <shared_mutex>
#include <string>

#include "distributed/master.h"
#include "framework/cancellation.h"

namespace dflow {

class LocalMaster {
 public:
  // The master serving `port` in this process when `host` can name this machine (a loopback
  // name, or the host the server was configured with); null otherwise.
  static std::shared_ptr<LocalMaster> Find(const std::string& host, int port);
  // The same for a session target "grpc://host:port"; null for any other target.
  static std::shared_ptr<LocalMaster> FindTarget(const std::string& target);
  // The master that served `target` in this process and stopped because its task was told the
  // job is complete (until another server serves that port here); null otherwise. A training
  // session opened on it afterwards learns that the job is over instead of retrying.
  static std::shared_ptr<LocalMaster> FindCompletedTarget(const std::string& target);

  // Called by a server once it serves `port` as task `task` configured with address host `host`.
  static std::shared_ptr<LocalMaster> Register(Master* master, const std::string& task, const std::string& host,
                                               int port);
  // BeginStop fails new calls (Unavailable), cancels the steps in progress and removes the
  // entry; Revoke then waits for the calls in progress to return.
  void BeginStop();
  bool stopping() const { return stopping_; }
  void Revoke();

  Status CreateSession(const proto::CreateSessionRequest& req, proto::CreateSessionResponse* resp);
  Status ExtendSession(const proto::ExtendSessionRequest& req, proto::ExtendSessionResponse* resp);
  // `cancellation` (may be null) cancels the step, as cancelling a remote call does.
  Status RunStep(const proto::RunStepRequest& req, proto::RunStepResponse* resp,
                 CancellationManager* cancellation = nullptr);
  Status CloseSession(const proto::CloseSessionRequest& req, proto::CloseSessionResponse* resp);
  Status ListDevices(const proto::ListDevicesRequest& req, proto::ListDevicesResponse* resp);
  Status CompleteJob(const proto::CompleteJobRequest& req, proto::CompleteJobResponse* resp);

  // Whether this server's task was told the job is complete (set by the server, and still true
  // after it stopped): a training session on this target takes a failure from then on as the
  // end of the job, not something to recover from.
  void MarkJobComplete() { job_complete_ = true; }
  bool job_complete() const { return job_complete_; }
  // How many tasks the server's cluster has (set by the server): a training session's chief
  // ends the job when it is done only when there are other tasks to tell.
  void set_num_tasks(int n) { num_tasks_ = n; }
  int num_tasks() const { return num_tasks_; }

  LocalMaster(Master* master, std::string task, std::string host, int port)
      : master_(master), task_(std::move(task)), host_(std::move(host)), port_(port) {}

 private:
  template <typename Fn>
  Status Call(Fn&& fn);

  std::shared_mutex mu_;  // shared by calls, exclusive to revoke
  Master* master_;        // null once revoked
  std::atomic<bool> stopping_{false};
  std::atomic<bool> job_complete_{false};
  std::atomic<int> num_tasks_{1};
  std::mutex calls_mu_;
  std::set<CallOptions*> calls_;  // steps in progress, cancelled by BeginStop
  const std::string task_, host_;
  const int port_;
};

}  // namespace dflow
