// Session: runs (parts of) a graph. The interface every target implements — "" for this
// process, "grpc://host:port" for a server — its options, and NewSession, which picks the
// implementation by target.
//
// A session receives its graph as GraphDefs (Create, then Extend with nodes added later) and
// runs by tensor names ("node:0"). Run is thread-safe: concurrent steps share variables.
// ClientSession (dflow/session.h) runs a Scope's graph by Outputs instead; dflow/graph_def.h
// loads GraphDef files.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dflow/credentials.h"
#include "dflow/status.h"
#include "dflow/tensor.h"

namespace dflow {
namespace proto {
class GraphDef;
}
// Defined inside dflow: RunOptions::cancellation is set by dflow's own step loops (QueueRunner).
class CancellationManager;

struct SessionOptions {
  std::string target;  // "" or "local" for this process; "grpc://host:port" for a server
  // Threads for independent nodes; 0: one per core.
  int inter_op_threads = 0;
  // Place a node whose requested device does not exist on an available one instead of failing.
  bool allow_soft_placement = false;
  // Log every node's device when the session places a graph.
  bool log_device_placement = false;
  // Deadline for every step that sets none itself; 0: none.
  int64_t operation_timeout_ms = 0;
  // Container for stateful resources (variables) of nodes that name none. Sessions that pass the
  // same value share them by name; the client API passes one per graph.
  std::string default_container;
  // For "grpc://" targets: only tasks matching one of these partial device names ("/job:ps",
  // "/job:worker/task:1") take part in the session (the target's own task always does). Empty:
  // every task of the cluster.
  std::vector<std::string> device_filters;
  // Rewrite the graphs steps run so that a Conv2D or MatMul followed by BiasAdd (and Relu, Relu6,
  // Elu or LeakyRelu) runs as one kernel (_FusedConv2D, _FusedMatMul), as TensorFlow's remapper
  // does. The results are the unfused ones up to float rounding; fetched or otherwise shared
  // intermediates are never fused away. TensorFlow's
  // graph_options.rewrite_options.remapping = OFF turns it off in Python.
  bool fuse_ops = true;
  // For "grpc://" targets served by a Server in this process: call its master directly (true), or
  // through the MasterService RPC as a client in another process does (false; for tests and
  // benchmarks of that path).
  bool direct_to_local_master = true;
  // For "grpc://" targets: what to present to the server (dflow/credentials.h). Unset: the
  // directory named by DFLOW_CREDENTIALS, else the per-user store's credentials for the target's
  // address (a local cluster this user started without credentials), else none.
  ClusterCredentials credentials;
};

struct RunOptions {
  // The step fails with DeadlineExceeded after this; 0: the session's operation_timeout_ms.
  int64_t timeout_in_ms = 0;
  // Record which nodes ran (always on when run metadata is requested).
  bool trace = false;
  // Not owned, may be null: cancelling it cancels the step (its waiting kernels wake up and the
  // run fails with Cancelled). It must outlive the Run call. This is how a thread that runs
  // steps in a loop (a QueueRunner) is stopped without closing the session.
  CancellationManager* cancellation = nullptr;
};

struct NodeExecStats {
  std::string node_name;
  std::string op;
  std::string device;
  int64_t start_micros = 0;
  int64_t end_micros = 0;
};

struct RunMetadata {
  std::vector<NodeExecStats> step_stats;  // one per node that ran, in completion order
};

class Session {
 public:
  virtual ~Session() = default;
  // Sets the graph. FailedPrecondition if the session already has one.
  virtual Status Create(const proto::GraphDef& graph) = 0;
  // Adds nodes; existing nodes stay as they are (AlreadyExists if a name is reused).
  virtual Status Extend(const proto::GraphDef& graph) = 0;
  // Feeds `inputs`, runs what `output_names` and `target_names` need, and returns the outputs in
  // order. `metadata` may be null.
  virtual Status Run(const RunOptions& options, const std::vector<std::pair<std::string, Tensor>>& inputs,
                     const std::vector<std::string>& output_names, const std::vector<std::string>& target_names,
                     std::vector<Tensor>* outputs, RunMetadata* metadata) = 0;
  Status Run(const std::vector<std::pair<std::string, Tensor>>& inputs, const std::vector<std::string>& output_names,
             const std::vector<std::string>& target_names, std::vector<Tensor>* outputs) {
    return Run(RunOptions(), inputs, output_names, target_names, outputs, nullptr);
  }
  // The full names of the devices this session places nodes on.
  virtual std::vector<std::string> ListDevices() const = 0;
  virtual Status Close() = 0;
};

// A session for options.target. The targets are registered by InitDflow() (dflow/core.h), which
// must have run first (ClientSession and the functions of dflow/graph_def.h call it).
// InvalidArgument naming the target when no registered factory accepts it.
StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options);

}  // namespace dflow
