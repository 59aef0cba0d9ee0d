// MasterSession: one client session on a master (see master.h): its graph, its devices (found
// when it starts) and its prepared steps.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "distributed/worker_interface.h"
#include "framework/device.h"
#include "graph/graph.h"
#include "proto/graph.pb.h"
#include "proto/master.pb.h"

namespace dflow {

class MasterSession {
 public:
  // Finds the devices of the tasks that pass the config's device filters (always including
  // `local_task`), waiting up to startup_wait_ms for tasks that do not answer yet.
  static StatusOr<std::shared_ptr<MasterSession>> Create(std::string handle, std::string local_task,
                                                         WorkerCache* workers, const proto::SessionConfig& config,
                                                         int64_t startup_wait_ms, int64_t probe_timeout_ms);
  ~MasterSession();

  // The limits on the session's whole graph (MasterOptions::max_graph_bytes/max_graph_nodes;
  // 0: none), checked by every Extend before anything is built.
  void SetGraphLimits(int64_t max_bytes, int64_t max_nodes);
  // ResourceExhausted naming the limit when a graph of `have_bytes`/`have_nodes` extended by
  // `def` passes `max_bytes` (serialized) or `max_nodes` (0: no limit).
  static Status CheckGraphLimits(const proto::GraphDef& def, int64_t have_bytes, int64_t have_nodes, int64_t max_bytes,
                                 int64_t max_nodes, const std::string& task);

  Status Extend(const proto::GraphDef& def);
  Status Run(const proto::RunStepRequest& req, proto::RunStepResponse* resp, CallOptions* opts);
  void ListDevices(proto::ListDevicesResponse* resp) const;
  // Deregisters its partitions; later runs fail.
  Status Close();

 private:
  struct Partition {
    std::string task;
    std::shared_ptr<WorkerInterface> worker;
    std::string graph_handle;
    std::vector<int> args;     // global feed index of each local _Arg
    std::vector<int> retvals;  // global fetch index of each local _Retval
    // Keys of the small tensors it returns in its response for the master's task (it receives
    // nothing, so it cannot wait on anyone), and, for the master's own partition, the keys it
    // gets that way.
    std::vector<std::string> push_keys, pushed_keys;
    bool receives = true;  // has _Recv nodes (else it depends on no other partition)
  };
  struct FeedInfo {
    std::string name;
    DType dtype;
    PartialTensorShape shape;
  };
  struct Prepared {
    std::vector<Partition> partitions;
    std::vector<FeedInfo> feeds;
  };

  MasterSession(std::string handle, std::string local_task, WorkerCache* workers, proto::SessionConfig config);
  StatusOr<std::shared_ptr<Prepared>> Prepare(const proto::RunStepRequest& req);
  StatusOr<std::shared_ptr<Prepared>> Build(const proto::RunStepRequest& req);
  std::string Where(const std::string& task) const;
  // Run's steps: the feeds checked, one RunGraph call per partition (the one that may run first,
  // synchronously, in *sync_partition, else -1), abort messages, and the fetches collected.
  struct Call;
  static Status CheckFeeds(const Prepared& prepared, const proto::RunStepRequest& req);
  void FillCalls(const Prepared& prepared, const proto::RunStepRequest& req, int64_t step_id, int64_t timeout_ms,
                 std::vector<Call>* calls) const;
  std::vector<size_t> CallOrder(const Prepared& prepared, int* sync_partition) const;
  static void AbortStep(const Prepared& prepared, int64_t step_id, const Status& why);
  Status CollectFetches(const Prepared& prepared, const proto::RunStepRequest& req, std::vector<Call>* calls,
                        proto::RunStepResponse* resp) const;
  // Puts the tensors a partition returned for the master's task into the local step (pulling
  // those that were too big to ride along; each pull is one more of `left`).
  void DeliverPushed(int64_t step_id, const Partition& from, proto::RunGraphResponse* resp,
                     const std::function<void(const Status&)>& finish, std::mutex* mu, size_t* left);

  const std::string handle_;
  const std::string local_task_;
  WorkerCache* const workers_;
  const proto::SessionConfig config_;
  std::vector<std::unique_ptr<Device>> devices_;  // the local task's first
  std::map<std::string, uint64_t> incarnations_;  // by device name

  std::mutex mu_;
  bool closed_ = false;
  int64_t max_graph_bytes_ = 0;
  int64_t max_graph_nodes_ = 0;
  // The session's accumulated GraphDef, kept serialized (a parsed GraphDef takes ~14 times its
  // serialized size; Extend parses it again to import the whole graph anew): the node fields
  // (a serialized GraphDef with nodes only, so appending a batch is concatenation), and the
  // function library and versions as Graph import left them.
  std::string node_bytes_;
  int64_t num_nodes_ = 0;
  proto::FunctionDefLibrary library_;
  proto::VersionDef versions_;
  int64_t graph_bytes_ = 0;  // serialized size of all three
  std::unique_ptr<Graph> graph_;
  std::unordered_map<std::string, std::shared_ptr<Prepared>> prepared_;
  std::mt19937_64 step_ids_;
};

}  // namespace dflow
