#include "distributed/in_process_cluster.h"

namespace dflow {

void InProcessWorkerCache::Add(const std::string& task, std::shared_ptr<WorkerInterface> w) {
  std::lock_guard<std::mutex> l(mu_);
  workers_[task] = std::move(w);
}

void InProcessWorkerCache::Remove(const std::string& task) {
  std::lock_guard<std::mutex> l(mu_);
  workers_[task] = nullptr;
}

namespace {

// Stands in for a task that cannot be reached: every call fails with Unavailable.
class UnreachableWorker : public WorkerInterface {
 public:
  explicit UnreachableWorker(std::string task) : task_(std::move(task)) {}
  void GetStatusAsync(const proto::GetStatusRequest*, proto::GetStatusResponse*, CallOptions*,
                      StatusCallback done) override {
    done(Error());
  }
  void RegisterGraphAsync(const proto::RegisterGraphRequest*, proto::RegisterGraphResponse*,
                          StatusCallback done) override {
    done(Error());
  }
  void DeregisterGraphAsync(const proto::DeregisterGraphRequest*, proto::DeregisterGraphResponse*,
                            StatusCallback done) override {
    done(Error());
  }
  void RunGraphAsync(const proto::RunGraphRequest*, proto::RunGraphResponse*, CallOptions*,
                     StatusCallback done) override {
    done(Error());
  }
  void AbortStepAsync(const proto::AbortStepRequest*, proto::AbortStepResponse*, StatusCallback done) override {
    done(Error());
  }
  void RecvTensorAsync(const proto::RecvTensorRequest*, RecvTensorResult*, CallOptions*, StatusCallback done) override {
    done(Error());
  }
  void ResetAsync(const proto::ResetRequest*, proto::ResetResponse*, StatusCallback done) override { done(Error()); }

 private:
  Status Error() const { return errors::Unavailable("Task ", task_, " is not reachable"); }
  std::string task_;
};

}  // namespace

StatusOr<std::shared_ptr<WorkerInterface>> InProcessWorkerCache::GetWorker(const std::string& task) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = workers_.find(task);
  if (it == workers_.end()) return errors::InvalidArgument("The cluster has no task ", task);
  if (it->second == nullptr) return std::shared_ptr<WorkerInterface>(std::make_shared<UnreachableWorker>(task));
  return it->second;
}

std::vector<std::string> InProcessWorkerCache::ListTasks() const {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::string> out;
  for (const auto& [task, w] : workers_) out.push_back(task);
  return out;
}

InProcessCluster::InProcessCluster(const ClusterSpec& cluster) {
  for (const std::string& task : cluster.TaskNames()) {
    auto w = std::make_shared<Worker>(task, &cache_);
    workers_[task] = w;
    cache_.Add(task, w);
  }
}

}  // namespace dflow
