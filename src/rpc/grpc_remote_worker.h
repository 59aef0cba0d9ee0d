// WorkerInterface over gRPC, and the WorkerCache of a task in a cluster: the local task's
// Worker is called directly, the others through one channel each (made on first use).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "distributed/cluster_spec.h"
#include "distributed/worker_interface.h"
#include "framework/credentials.h"

namespace dflow::rpc {

class GrpcWorkerCache : public WorkerCache {
 public:
  // `local` may be null (a client that is not a task). Calls to other tasks present `creds`.
  GrpcWorkerCache(ClusterSpec cluster, std::string local_task, std::shared_ptr<WorkerInterface> local,
                  ClusterCredentials creds);
  ~GrpcWorkerCache() override;
  // Sets the local task's worker (before any call).
  void set_local(std::shared_ptr<WorkerInterface> local) { local_ = std::move(local); }
  StatusOr<std::shared_ptr<WorkerInterface>> GetWorker(const std::string& task) override;
  std::vector<std::string> ListTasks() const override;
  std::string TaskAddress(const std::string& task) const override;

 private:
  const ClusterSpec cluster_;
  const std::string local_task_;
  std::shared_ptr<WorkerInterface> local_;
  const ClusterCredentials creds_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<WorkerInterface>> remote_;
};

// A WorkerInterface that calls the worker at "host:port", presenting `creds`.
std::shared_ptr<WorkerInterface> NewGrpcRemoteWorker(const std::string& address, const std::string& task,
                                                     const ClusterCredentials& creds);

// RecvTensor calls this process made to other tasks, by path: a tensor whose key last carried one
// that fits in one chunk comes by a unary call, the others (and each key's first) by a stream.
struct RecvTensorCallCounts {
  int64_t unary = 0;
  int64_t streamed = 0;
};
RecvTensorCallCounts GetRecvTensorCallCounts();

}  // namespace dflow::rpc
