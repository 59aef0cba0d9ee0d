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
// Limits (MasterOptions; docs/SECURITY.md, "Resource limits"): a session's accumulated graph
// may not pass max_graph_bytes (serialized) or max_graph_nodes; one client (the peer's host)
// may hold at most max_sessions_per_client open sessions; a session no call has used for
// session_idle_timeout_ms is closed by a background thread, and its later calls are Aborted
// saying so. Each limit fails the request with ResourceExhausted naming it.
//
// Thread-safe; calls block until done (each RPC it makes has a deadline or ends with its peer).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "distributed/worker_interface.h"
#include "proto/master.pb.h"

namespace dflow {

struct MasterOptions {
  // How long a new session waits for the other tasks to come up.
  int64_t startup_wait_ms = 30000;
  // How long one attempt to reach a task may take.
  int64_t probe_timeout_ms = 2000;
  // A session's whole graph (every CreateSession/ExtendSession GraphDef together): at most this
  // many serialized bytes and nodes. 0: unlimited. Importing costs tens of times a GraphDef's
  // bytes in memory, mostly per node, so the node count is the limit that protects memory;
  // the byte limit is TensorFlow's own ceiling (protobuf's 2 GiB), halved.
  int64_t max_graph_bytes = int64_t{1} << 30;
  int64_t max_graph_nodes = 500000;
  // Open sessions one client (peer host, as CreateSession's `client` gives it) may hold; 0:
  // unlimited. Callers in the server's own process (client "") are not limited.
  int max_sessions_per_client = 64;
  // A session that no call (Extend, RunStep, ListDevices) has used for this long, and that has
  // no step in progress, is closed. 0: never. TensorFlow closes none; an hour keeps a training
  // or evaluation client that pauses between checkpoints, and bounds what abandoned sessions
  // (a client that died, or never called CloseSession) hold.
  int64_t session_idle_timeout_ms = 3600 * 1000;
};

class MasterSession;

class Master {
 public:
  // `local_task` ("/job:worker/replica:0/task:0") hosts the master; `workers` (not owned)
  // reaches every task, this one included.
  Master(std::string local_task, WorkerCache* workers, MasterOptions options = {});
  ~Master();

  // `client` names who asks (the gRPC peer, "ipv4:10.0.0.5:41234"): sessions are counted per
  // host (ClientHost) against max_sessions_per_client. "": the server's own process, unlimited.
  Status CreateSession(const proto::CreateSessionRequest& req, proto::CreateSessionResponse* resp,
                       const std::string& client = "");
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
  // Closes every session and stops the idle-session thread.
  void Stop();
  // Waits until no RunStep is in progress, at most `timeout_ms`. False on timeout.
  bool WaitUntilIdle(int64_t timeout_ms);
  // Open sessions (for tests and status pages).
  size_t num_sessions();
  // Called (on the idle-session thread) with the handle of each session closed for being idle.
  void SetIdleCloseCallbackForTest(std::function<void(const std::string&)> fn);

  // The host part of a gRPC peer: "ipv4:10.0.0.5:41234" -> "ipv4:10.0.0.5",
  // "ipv6:[::1]:41234" -> "ipv6:[::1]"; anything else unchanged.
  static std::string ClientHost(const std::string& peer);

 private:
  struct Entry {
    std::shared_ptr<MasterSession> session;
    std::string client;        // host; "" for in-process callers
    int64_t last_used_us = 0;  // steady clock, when the last call on it ended (or began)
    int active = 0;            // calls on it in progress
  };
  // The session of `handle`, counted as in use until Release(handle).
  StatusOr<std::shared_ptr<MasterSession>> Acquire(const std::string& handle);
  void Release(const std::string& handle);
  // The error for a handle that is not open (closed as idle, or unknown).
  Status NotFoundLocked(const std::string& handle) const;
  // Removes an entry (mu_ held) and gives its session back to close outside the lock.
  std::shared_ptr<MasterSession> EraseLocked(std::map<std::string, Entry>::iterator it);
  void IdleLoop();

  const std::string local_task_;
  WorkerCache* const workers_;
  const MasterOptions options_;
  std::mutex mu_;
  int64_t next_session_ = 1;
  std::map<std::string, Entry> sessions_;
  // Sessions open or being created per client host (only clients with a limit).
  std::unordered_map<std::string, int> per_client_;
  // Handles closed for being idle, the most recent kIdleClosedKept, so their calls can say so.
  std::deque<std::string> idle_closed_order_;
  std::unordered_map<std::string, int64_t> idle_closed_;  // handle -> idle ms when closed
  std::condition_variable idle_cv_;
  int64_t running_ = 0;  // RunStep calls in progress; guarded by mu_
  // The idle-session thread: wakes at the earliest deadline, on a new deadline, or on Stop.
  std::condition_variable reaper_cv_;
  bool stopping_ = false;
  int64_t reaper_wake_us_ = 0;  // when the idle thread wakes; INT64_MAX: only when notified
  std::function<void(const std::string&)> on_idle_close_;
  std::thread reaper_;
};

}  // namespace dflow
