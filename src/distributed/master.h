// Master: the part of a task that client sessions talk to. A master session holds the client's
// graph; each distinct (feeds, fetches, targets) of a step is prepared once — pruned to what it
// needs, placed on the devices of the cluster, partitioned by device with _Send/_Recv pairs, and
// each partition registered with its task's worker — then every step runs all partitions in
// parallel and returns the fetched tensors. A failure in any partition aborts the step on every
// task; the error names the task where it happened.
//
// Nodes without a device go to the master's own task. A task that cannot be reached when a
// session starts is waited for (and logged) up to MasterOptions::startup_wait_ms, then reported
// as Unavailable naming the task and its address.
//
// Thread-safe; calls block until done (each RPC it makes has a deadline or ends with its peer).
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "distributed/worker_interface.h"
#include "proto/master.pb.h"

namespace dflow {

struct MasterOptions {
  // How long a new session waits for the other tasks to come up.
  int64_t startup_wait_ms = 30000;
  // How long one attempt to reach a task may take.
  int64_t probe_timeout_ms = 2000;
};

class MasterSession;

class Master {
 public:
  // `local_task` ("/job:worker/replica:0/task:0") hosts the master; `workers` (not owned)
  // reaches every task, this one included.
  Master(std::string local_task, WorkerCache* workers, MasterOptions options = {});
  ~Master();

  Status CreateSession(const proto::CreateSessionRequest& req, proto::CreateSessionResponse* resp);
  Status ExtendSession(const proto::ExtendSessionRequest& req, proto::ExtendSessionResponse* resp);
  // `opts` (may be null) cancels the step when the client goes away.
  Status RunStep(const proto::RunStepRequest& req, proto::RunStepResponse* resp, CallOptions* opts);
  Status CloseSession(const proto::CloseSessionRequest& req, proto::CloseSessionResponse* resp);
  Status ListDevices(const proto::ListDevicesRequest& req, proto::ListDevicesResponse* resp);
  // Frees the resources of the containers on every task (matching the filters).
  Status Reset(const proto::MasterResetRequest& req, proto::MasterResetResponse* resp);
  // Tells every task of the cluster that the job is complete, this one last
  // (distributed/job_completion.h). Always OK: tasks that cannot be told are listed in `resp`.
  Status CompleteJob(const proto::CompleteJobRequest& req, proto::CompleteJobResponse* resp);
  // Closes every session.
  void Stop();
  // Waits until no RunStep is in progress, at most `timeout_ms`. False on timeout.
  bool WaitUntilIdle(int64_t timeout_ms);

 private:
  StatusOr<std::shared_ptr<MasterSession>> Find(const std::string& handle);

  const std::string local_task_;
  WorkerCache* const workers_;
  const MasterOptions options_;
  std::mutex mu_;
  int64_t next_session_ = 1;
  std::map<std::string, std::shared_ptr<MasterSession>> sessions_;
  std::condition_variable idle_cv_;
  int64_t running_ = 0;  // RunStep calls in progress; guarded by mu_
};

}  // namespace dflow
