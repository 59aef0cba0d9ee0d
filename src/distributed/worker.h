// Worker: the part of a task that runs graph partitions. A master registers each partition of
// a step graph once (RegisterGraph) and runs it every step (RunGraph) with the step's feeds;
// the partition's _Recv nodes pull tensors from other tasks through the step's rendezvous,
// which peers in turn pull from with RecvTensor.
//
// The task has one CPU device, "<task>/device:CPU:0". Its variables, and resources with a
// shared_name, outlive sessions and are shared by every session that names them (the default
// container is the same for all); what TensorFlow keeps per session — queues, iterators and
// accumulators without a shared_name, stateful kernels such as random generators — is kept per
// session and dropped when the session closes (its graphs are deregistered). The incarnation, drawn at random when the Worker is made, lets masters tell
// a restarted task from the one they registered graphs with.
//
// Thread-safe. Every call completes through its callback.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "distributed/step_rendezvous.h"
#include "distributed/worker_interface.h"
#include "framework/cancellation.h"
#include "framework/device.h"
#include "framework/op_kernel.h"
#include "runtime/executor.h"
#include "tensor/memory_budget.h"

namespace dflow {

// What one task lets its steps and graphs take (docs/SECURITY.md, "Resource limits"). Each limit
// fails the request with ResourceExhausted naming it.
struct WorkerOptions {
  // The bytes that buffers allocated by kernels of this task's steps may hold at once, values
  // kept after their step (variables, queues) included (tensor/memory_budget.h). -1: half of the
  // memory the process may use, min(MemTotal, its cgroup's limit); 0: unlimited.
  int64_t step_memory_limit_bytes = -1;
  // The largest partition a master may register here: its serialized GraphDef size and node
  // count. 0: unlimited. (A master checks the whole session graph against its own limits first.)
  int64_t max_graph_bytes = int64_t{1} << 30;
  int64_t max_graph_nodes = 500000;
};

class Worker : public WorkerInterface {
 public:
  // `task`: "/job:ps/replica:0/task:0". `peers` (not owned) reaches the other tasks; it may be
  // null for a cluster of one task.
  Worker(std::string task, WorkerCache* peers, WorkerOptions options = {});
  ~Worker() override;

  const std::string& task() const { return task_; }
  Device* device() { return device_.get(); }
  uint64_t incarnation() const { return incarnation_; }
  // The budget every step here runs under (its limit may be changed while serving).
  MemoryBudget* memory_budget() { return memory_budget_.get(); }

  void GetStatusAsync(const proto::GetStatusRequest* req, proto::GetStatusResponse* resp, CallOptions* opts,
                      StatusCallback done) override;
  void RegisterGraphAsync(const proto::RegisterGraphRequest* req, proto::RegisterGraphResponse* resp,
                          StatusCallback done) override;
  void DeregisterGraphAsync(const proto::DeregisterGraphRequest* req, proto::DeregisterGraphResponse* resp,
                            StatusCallback done) override;
  void RunGraphAsync(const proto::RunGraphRequest* req, proto::RunGraphResponse* resp, CallOptions* opts,
                     StatusCallback done) override;
  void AbortStepAsync(const proto::AbortStepRequest* req, proto::AbortStepResponse* resp, StatusCallback done) override;
  void RecvTensorAsync(const proto::RecvTensorRequest* req, RecvTensorResult* result, CallOptions* opts,
                       StatusCallback done) override;
  void ResetAsync(const proto::ResetRequest* req, proto::ResetResponse* resp, StatusCallback done) override;
  Status Deposit(int64_t step_id, const std::string& key, const Tensor& value, bool is_dead) override;
  // Marks the job complete: RunGraph of steps not yet known here fails with JobCompleteError
  // from now on, and GetStatus tells who declared it; then, unless req->record_only, calls the
  // handler (once), which drains and stops the server.
  void JobCompleteAsync(const proto::JobCompleteRequest* req, proto::JobCompleteResponse* resp, CallOptions* opts,
                        StatusCallback done) override;
  // What a JobComplete does beyond refusing new steps: `handler(source_task, drain_ms)`. It must
  // return promptly (start a thread for the drain). Set before serving.
  using JobCompleteHandler = std::function<void(const std::string& source_task, int64_t drain_ms)>;
  void SetJobCompleteHandler(JobCompleteHandler handler);
  // The error new steps get after JobComplete; OK before.
  Status job_complete_status();

  // Fails every step in progress with `status`, and every later one (the server is stopping).
  void AbortAll(const Status& status);
  // Waits until no RunGraph or RecvTensor is in progress here (their callbacks have returned),
  // at most `timeout_ms`. False on timeout.
  bool WaitUntilIdle(int64_t timeout_ms);
  // Waits until, beyond that, every step here is over: no tensor a partition sent is still
  // waiting for its receiver on another task (a step's partition may end before its peers took
  // their inputs from it). At most `timeout_ms`; false on timeout. What a job-complete drain
  // waits for, so that stopping the server cannot fail a step that ran here.
  bool WaitUntilStepsDone(int64_t timeout_ms);
  // Sessions whose private state this task holds now: stateful kernels (random generators) and
  // a container of resources without a shared_name (queues, iterators, accumulators). Each is
  // dropped when its session deregisters its last graph here (the session closed).
  size_t num_session_states();
  // Steps whose state this task holds now (for tests: none is left once every call is over).
  size_t num_steps();
  // Waits until `done(num_steps())` holds, at most `timeout_ms` (for tests: a call's step comes
  // and goes asynchronously). False on timeout.
  bool WaitForSteps(const std::function<bool(size_t)>& done, int64_t timeout_ms);

 private:
  struct Registered {
    std::string session;
    std::unique_ptr<Executor> executor;
    std::shared_ptr<FunctionLibraryRuntime> function_library;
    // Cancelled when the graph is deregistered (its session closed) or the worker stops: the
    // background work of iterators its steps made stops then.
    std::shared_ptr<CancellationManager> closed = std::make_shared<CancellationManager>();
    int num_args = 0;
    int num_retvals = 0;
  };
  struct StepEntry {
    std::shared_ptr<StepRendezvous> rendezvous;
    int runs = 0;  // RunGraph calls of this step in progress here
  };

  // The step's rendezvous (made on first use); an error if the step was aborted here.
  StatusOr<std::shared_ptr<StepRendezvous>> FindOrCreateStep(int64_t step_id, bool for_run);
  void ReleaseStep(int64_t step_id, bool for_run);
  StatusOr<std::shared_ptr<OpKernel>> CreateKernel(const std::string& session, const Node& n,
                                                   FunctionLibraryRuntime* flr);
  // The container of the resources private to `session` ("" for none).
  static std::string SessionContainer(const std::string& session);
  // Drops what `session` kept here once it has no registered graph left.
  void DropSessionStateIfClosed(const std::string& session);
  // `done`, counted as in flight until it has returned.
  StatusCallback Track(StatusCallback done);

  const std::string task_;
  WorkerCache* const peers_;
  const WorkerOptions options_;
  const uint64_t incarnation_;
  std::unique_ptr<Device> device_;
  const std::shared_ptr<MemoryBudget> memory_budget_;

  std::mutex mu_;
  std::condition_variable idle_cv_;    // in_flight_ reached 0, or steps_ became empty
  int64_t in_flight_ = 0;              // RunGraph and RecvTensor calls not yet completed
  Status stopped_;                     // set by AbortAll
  Status job_complete_;                // set by JobComplete: refuses new steps
  std::string job_complete_source_;    // who declared it (GetStatus tells peers that missed it)
  bool job_complete_handled_ = false;  // the handler ran (a JobComplete that was not record_only)
  int64_t next_run_id_ = 1;
  // The partitions running here, each with the function that cancels it with a reason.
  std::map<int64_t, std::function<void(const Status&)>> running_;
  JobCompleteHandler job_complete_handler_;
  int64_t next_graph_ = 1;
  std::map<std::string, std::shared_ptr<Registered>> graphs_;
  std::unordered_map<int64_t, StepEntry> steps_;
  // Recently aborted steps, so that a late RunGraph or RecvTensor of one fails at once.
  std::deque<std::pair<int64_t, Status>> aborted_;
  std::mutex kernels_mu_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<OpKernel>> stateful_kernels_;
};

}  // namespace dflow
