// A cluster in one process: a Worker per task and a WorkerCache that reaches them directly,
// without a network. Used by tests of the master and worker, and as the in-process transport.
#pragma once

#include <map>
#include <mutex>
#include <memory>
#include <string>
#include <vector>

#include "distributed/cluster_spec.h"
#include "distributed/worker.h"

namespace dflow {

class InProcessWorkerCache : public WorkerCache {
 public:
  StatusOr<std::shared_ptr<WorkerInterface>> GetWorker(const std::string& task) override;
  std::vector<std::string> ListTasks() const override;
  std::string TaskAddress(const std::string& task) const override { return ""; }
  void Add(const std::string& task, std::shared_ptr<WorkerInterface> w);
  // Takes a task out, as if it died: it stays in the cluster, but calls to it fail with
  // Unavailable.
  void Remove(const std::string& task);

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<WorkerInterface>> workers_;  // null: unreachable
};

// One Worker per task of `cluster`, wired to each other.
class InProcessCluster {
 public:
  explicit InProcessCluster(const ClusterSpec& cluster);
  WorkerCache* cache() { return &cache_; }
  Worker* worker(const std::string& task) { return workers_.at(task).get(); }

 private:
  InProcessWorkerCache cache_;
  std::map<std::string, std::shared_ptr<Worker>> workers_;
};

}  // namespace dflow
