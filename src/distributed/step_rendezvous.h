// StepRendezvous: the rendezvous of one step on one task. Sends go into a local table; a
// receive whose sender is on this task reads that table, one whose sender is on another task
// pulls the tensor with that task's RecvTensor (through the WorkerCache). Peers pull the values
// sent here for them through ServeRecv.
//
// It counts the values sent for other tasks that no peer has pulled yet, so that the worker
// keeps the step's table exactly as long as someone still needs it (Idle()).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "distributed/worker_interface.h"
#include "framework/rendezvous.h"
#include "runtime/local_rendezvous.h"

namespace dflow {

class StepRendezvous : public Rendezvous {
 public:
  // `local_task`: "/job:ps/replica:0/task:0". `peers` may be null when the cluster is one task.
  StepRendezvous(int64_t step_id, std::string local_task, WorkerCache* peers);
  ~StepRendezvous() override;

  Status Send(const std::string& key, const Tensor& value, bool is_dead) override;
  void RecvAsync(const std::string& key, DoneCallback done) override;
  // Fails pending and future receives (local and remote) and cancels pulls in flight.
  void StartAbort(const Status& status) override;

  // For a peer's RecvTensor: the value sent here under `key`, when it is sent.
  void ServeRecv(const std::string& key, DoneCallback done);
  // The peer that asked for `key` gave up: its ServeRecv, if still waiting, ends with `status`.
  void CancelServe(const std::string& key, const Status& status) { local_.CancelRecv(key, status); }
  // Keys whose values the master deposits (sent by another task, yet received from the local
  // table instead of pulled).
  void ExpectDeposits(const std::vector<std::string>& keys);
  Status Deposit(const std::string& key, const Tensor& value, bool is_dead);
  // No value sent for another task is still waiting to be pulled, and no deposited value waits
  // for its local receiver.
  bool Idle() const { return unserved_.load() == 0 && undelivered_.load() == 0; }
  Status aborted_status() const;

 private:
  const int64_t step_id_;
  const std::string local_task_;
  WorkerCache* const peers_;
  LocalRendezvous local_;
  std::atomic<int64_t> unserved_{0};
  std::atomic<int64_t> undelivered_{0};
  mutable std::mutex mu_;
  Status abort_status_;
  std::set<std::shared_ptr<CallOptions>> in_flight_;  // remote pulls, cancelled on abort
  std::set<std::string> deposited_;
};

}  // namespace dflow
