// ClusterSpec: the jobs of a cluster and the address of every task, and the task a process is;
// with dflow/credentials.h, what a server and its clients prove themselves with.
//
//   ClusterSpec::FromJobs({{"ps", {"127.0.0.1:2222"}}, {"worker", {"127.0.0.1:2223", "127.0.0.1:2224"}}})
//   TaskConfigFromFlags("h1:2222,h2:2222", "h3:2222", "worker", 1)
//   ParseTfConfig(R"({"cluster": {"ps": ["h:1"], "worker": ["h:2"]}, "task": {"type": "worker", "index": 0}})")
//
// Task names are "/job:<job>/replica:0/task:<index>". Immutable after construction; copyable.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "dflow/credentials.h"
#include "dflow/status.h"

namespace dflow {

class ClusterSpec {
 public:
  ClusterSpec() = default;
  // Job name -> addresses ("host:port") of tasks 0, 1, ... InvalidArgument (naming the job,
  // task and address) for: no jobs, an empty job, a bad job name, an address without a port or
  // with a bad port, the same address twice.
  static StatusOr<ClusterSpec> FromJobs(const std::map<std::string, std::vector<std::string>>& jobs);
  // Sparse form: job -> task index -> address (indices need not be contiguous).
  static StatusOr<ClusterSpec> FromSparseJobs(const std::map<std::string, std::map<int, std::string>>& jobs);

  const std::map<std::string, std::map<int, std::string>>& jobs() const { return jobs_; }
  std::vector<std::string> job_names() const;
  int num_tasks(const std::string& job) const;  // 0 for an unknown job
  bool HasTask(const std::string& job, int task) const;
  // InvalidArgument naming the job (and the jobs there are) or the task index (and the range).
  StatusOr<std::string> TaskAddress(const std::string& job, int task) const;
  // "/job:ps/replica:0/task:0", ... for every task, jobs in name order.
  std::vector<std::string> TaskNames() const;
  // "ps: [a:1, b:2], worker: [c:3]"
  std::string DebugString() const;

 private:
  std::map<std::string, std::map<int, std::string>> jobs_;
};

// The task this process is, in its cluster.
struct TaskConfig {
  ClusterSpec cluster;
  std::string job_name;  // "ps", "worker", "chief", "evaluator"
  int task_index = 0;
  // The chief: task 0 of "chief" if the cluster has that job, else task 0 of "worker".
  bool is_chief = false;
};

// From the flags --ps_hosts=a:1,b:2 --worker_hosts=c:3 --job_name=worker --task_index=0. Errors
// name the flag: an empty host list, an unknown job_name, a task_index out of range.
// --worker_hosts must list at least one task; --ps_hosts may be empty (a cluster without a "ps"
// job), but not with --job_name=ps. An empty entry in a list ("a:1,,b:2") is an error. job_name
// is "ps" or "worker"; the chief is worker 0.
StatusOr<TaskConfig> TaskConfigFromFlags(const std::string& ps_hosts, const std::string& worker_hosts,
                                         const std::string& job_name, int task_index);

// From TF_CONFIG's JSON: {"cluster": {"chief": [...], "worker": [...], "ps": [...], "evaluator":
// [...]}, "task": {"type": "worker", "index": 1}}. InvalidArgument naming what is malformed
// (with the byte offset for JSON syntax errors) or missing.
// Details: the JSON is read by protobuf's parser (into google.protobuf.Value) after strict checks
// of the text: at most 1 MiB and 16 levels of nesting, strict escapes, no trailing commas;
// duplicate keys and numbers beyond a double are errors.
// Jobs are chief, worker, ps and evaluator only (as TensorFlow's multi-worker code requires);
// chief and evaluator have at most one task. A job is a list of "host:port" strings, or an
// object {"<index>": "host:port"} for sparse indices. "task" needs "type" (one of the four) and
// "index" (an integer; 1.0 counts), and must name a task of the cluster, except that an
// evaluator may be left out of "cluster" (it is not part of the training cluster) with index 0.
// Top-level "environment" and "rpc_layer" (strings) and task "trial" are accepted and ignored;
// any other key is an error, so that a misspelt key does not go unnoticed.
StatusOr<TaskConfig> ParseTfConfig(absl::string_view json);

// The task from command-line arguments of the form "--name=value" or "--name value"
// (--ps_hosts, --worker_hosts, --job_name, --task_index); when none of them is given, from the
// TF_CONFIG environment variable (`tf_config`, empty when unset). Arguments it does not know
// are returned in *rest in order. NotFound when neither flags nor TF_CONFIG describe a task.
// When any of the four flags is given, TF_CONFIG is ignored: --job_name and --worker_hosts are
// then required, --ps_hosts defaults to empty and --task_index to 0; a flag given twice or
// without a value is InvalidArgument. `rest` may be null (unknown arguments are then dropped).
StatusOr<TaskConfig> TaskConfigFromArgs(const std::vector<std::string>& args, const std::string& tf_config,
                                        std::vector<std::string>* rest);

}  // namespace dflow
