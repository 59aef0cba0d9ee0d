#include "distributed/cluster_spec.h"

#include <cmath>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/json_text.h"
#include "dflow/flags.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace dflow {

namespace {

// TensorFlow's rule for job names: [a-zA-Z][_a-zA-Z0-9]*.
bool IsValidJobName(absl::string_view name) {
  if (name.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// Long or odd strings from outside are cut before they go into messages.
std::string Shown(absl::string_view s) {
  if (s.size() <= 100) return std::string(s);
  return absl::StrCat(s.substr(0, 100), "...");
}

// "host:port" or "[v6-host]:port" with port in 0..65535 (0: the OS picks one when served). Returns what is wrong, or "" when fine.
std::string AddressProblem(absl::string_view address) {
  if (address.empty()) return "is empty";
  for (char c : address) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F || c == ',') return "contains a space, a comma or a control character";
  }
  absl::string_view host, port;
  if (address[0] == '[') {
    size_t close = address.find(']');
    if (close == absl::string_view::npos) return "has '[' without ']'";
    host = address.substr(1, close - 1);
    absl::string_view after = address.substr(close + 1);
    if (after.empty() || after[0] != ':') return "has no port (expected host:port)";
    port = after.substr(1);
  } else {
    size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos) return "has no port (expected host:port)";
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (host.find(':') != absl::string_view::npos) {
      return "has an IPv6 host without brackets (write [::1]:2222)";
    }
  }
  if (host.empty()) return "has an empty host";
  if (port.empty()) return "has no port (expected host:port)";
  if (port.size() > 5 || !absl::c_all_of(port, [](char c) { return c >= '0' && c <= '9'; })) {
    return absl::StrCat("has a bad port '", port, "' (expected a number in 0..65535)");
  }
  int value = 0;
  for (char c : port) value = value * 10 + (c - '0');
  // Port 0 asks the OS for a free port when a server binds it.
  if (value < 0 || value > 65535) return absl::StrCat("has port ", value, ", which is out of range 0..65535");
  return "";
}

std::string TaskName(const std::string& job, int task) { return absl::StrCat("/job:", job, "/replica:0/task:", task); }

std::string DescribeIndices(const std::map<int, std::string>& tasks) {
  if (tasks.empty()) return "no tasks";
  bool contiguous = tasks.begin()->first == 0 && tasks.rbegin()->first == static_cast<int>(tasks.size()) - 1;
  if (contiguous) {
    return tasks.size() == 1 ? "task 0 only" : absl::StrCat("tasks 0..", tasks.size() - 1);
  }
  std::vector<int> indices;
  for (const auto& [i, address] : tasks) indices.push_back(i);
  if (indices.size() > 20) indices.resize(20);
  return absl::StrCat("tasks [", absl::StrJoin(indices, ", "), tasks.size() > 20 ? ", ...]" : "]");
}

bool ComputeIsChief(const ClusterSpec& cluster, const std::string& job, int task) {
  if (cluster.jobs().count("chief") > 0) return job == "chief" && task == 0;
  return job == "worker" && task == 0;
}

// ---- flags ----

StatusOr<std::vector<std::string>> SplitHosts(const std::string& flag, const std::string& hosts) {
  std::vector<std::string> out;
  if (hosts.empty()) return out;
  out = absl::StrSplit(hosts, ',');
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].empty()) {
      return errors::InvalidArgument(flag, " has an empty entry at position ", i, " in '", Shown(hosts), "'");
    }
  }
  return out;
}

// ---- TF_CONFIG ----

constexpr const char* kTfConfigJobs[] = {"chief", "worker", "ps", "evaluator"};

bool IsTfConfigJob(absl::string_view job) {
  for (const char* j : kTfConfigJobs) {
    if (job == j) return true;
  }
  return false;
}

using JsonValue = google::protobuf::Value;
using JsonObject = google::protobuf::Struct;

// The kinds as JSON names them.
const char* KindName(const JsonValue& v) {
  switch (v.kind_case()) {
    case JsonValue::kBoolValue: return "bool";
    case JsonValue::kNumberValue: return "number";
    case JsonValue::kStringValue: return "string";
    case JsonValue::kListValue: return "array";
    case JsonValue::kStructValue: return "object";
    default: return "null";
  }
}

// A short text of the value for messages: 0.5, "0", true, [...].
std::string ValueText(const JsonValue& v) {
  switch (v.kind_case()) {
    case JsonValue::kBoolValue: return v.bool_value() ? "true" : "false";
    case JsonValue::kNumberValue: return absl::StrCat(v.number_value());
    case JsonValue::kStringValue: return absl::StrCat("\"", Shown(v.string_value()), "\"");
    case JsonValue::kListValue: return "[...]";
    case JsonValue::kStructValue: return "{...}";
    default: return "null";
  }
}

// An object's members in key order (Struct's map has none), so that errors do not depend on it.
std::vector<std::pair<std::string, const JsonValue*>> Members(const JsonObject& object) {
  std::vector<std::pair<std::string, const JsonValue*>> members;
  for (const auto& [key, value] : object.fields()) members.emplace_back(key, &value);
  absl::c_sort(members, [](const auto& a, const auto& b) { return a.first < b.first; });
  return members;
}

const JsonValue* Find(const JsonObject& object, const std::string& key) {
  auto it = object.fields().find(key);
  return it == object.fields().end() ? nullptr : &it->second;
}

// JSON numbers are doubles: an integer in [min, max] (1.0 counts; 1.5, -1 and 1e20 do not).
StatusOr<int> IntegerIn(const JsonValue& v, absl::string_view what, int min, int max) {
  if (v.kind_case() != JsonValue::kNumberValue) {
    return errors::InvalidArgument(what, " must be an integer, got ", KindName(v), " ", ValueText(v));
  }
  const double d = v.number_value();
  if (d != std::floor(d)) return errors::InvalidArgument(what, " must be an integer, got ", ValueText(v));
  if (d < min || d > max) {
    return errors::InvalidArgument(what, " must be in [", min, ", ", max, "], got ", ValueText(v));
  }
  return static_cast<int>(d);
}

StatusOr<std::map<int, std::string>> ParseTfConfigJob(const std::string& job, const JsonValue& v) {
  std::map<int, std::string> tasks;
  if (v.has_list_value()) {
    const auto& items = v.list_value().values();
    for (int i = 0; i < items.size(); ++i) {
      if (!items[i].has_string_value()) {
        return errors::InvalidArgument("TF_CONFIG: cluster.", job, "[", i, "] must be a \"host:port\" string, got ",
                                       KindName(items[i]));
      }
      tasks[i] = items[i].string_value();
    }
    return tasks;
  }
  if (v.has_struct_value()) {  // the sparse form: {"1": "host:port", ...}
    for (const auto& [key, address] : Members(v.struct_value())) {
      int index = -1;
      if (key.empty() || key.size() > 9 || !absl::c_all_of(key, [](char c) { return c >= '0' && c <= '9'; }) ||
          !absl::SimpleAtoi(key, &index)) {
        return errors::InvalidArgument("TF_CONFIG: cluster.", job, " has task index \"", Shown(key),
                                       "\", which is not a non-negative integer");
      }
      if (!address->has_string_value()) {
        return errors::InvalidArgument("TF_CONFIG: cluster.", job, ".", key, " must be a \"host:port\" string, got ",
                                       KindName(*address));
      }
      if (!tasks.emplace(index, address->string_value()).second) {
        return errors::InvalidArgument("TF_CONFIG: cluster.", job, " has task index ", index, " twice");
      }
    }
    return tasks;
  }
  return errors::InvalidArgument("TF_CONFIG: cluster.", job, " must be a list of \"host:port\" strings, got ",
                                 KindName(v));
}

// ---- arguments ----

constexpr const char* kTaskFlags[] = {"--ps_hosts", "--worker_hosts", "--job_name", "--task_index"};

}  // namespace

StatusOr<ClusterSpec> ClusterSpec::FromJobs(const std::map<std::string, std::vector<std::string>>& jobs) {
  std::map<std::string, std::map<int, std::string>> sparse;
  for (const auto& [job, addresses] : jobs) {
    auto& tasks = sparse[job];
    for (size_t i = 0; i < addresses.size(); ++i) tasks[static_cast<int>(i)] = addresses[i];
  }
  return FromSparseJobs(sparse);
}

StatusOr<ClusterSpec> ClusterSpec::FromSparseJobs(const std::map<std::string, std::map<int, std::string>>& jobs) {
  if (jobs.empty()) return errors::InvalidArgument("Invalid cluster: it has no jobs");
  std::map<std::string, std::string> owner;  // address -> task name
  for (const auto& [job, tasks] : jobs) {
    if (!IsValidJobName(job)) {
      return errors::InvalidArgument("Invalid cluster: job name '", Shown(job),
                                     "' is not valid (a letter, then letters, digits and '_')");
    }
    if (tasks.empty()) return errors::InvalidArgument("Invalid cluster: job '", job, "' has no tasks");
    for (const auto& [index, address] : tasks) {
      if (index < 0) {
        return errors::InvalidArgument("Invalid cluster: job '", job, "' has a negative task index ", index);
      }
      std::string problem = AddressProblem(address);
      if (!problem.empty()) {
        return errors::InvalidArgument("Invalid cluster: job '", job, "' task ", index, ": address '", Shown(address),
                                       "' ", problem);
      }
      auto [it, inserted] = owner.emplace(address, TaskName(job, index));
      if (!inserted) {
        return errors::InvalidArgument("Invalid cluster: address '", address, "' is used by both ", it->second, " and ",
                                       TaskName(job, index));
      }
    }
  }
  ClusterSpec spec;
  spec.jobs_ = jobs;
  return spec;
}

std::vector<std::string> ClusterSpec::job_names() const {
  std::vector<std::string> names;
  for (const auto& [job, tasks] : jobs_) names.push_back(job);
  return names;
}

int ClusterSpec::num_tasks(const std::string& job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? 0 : static_cast<int>(it->second.size());
}

bool ClusterSpec::HasTask(const std::string& job, int task) const {
  auto it = jobs_.find(job);
  return it != jobs_.end() && it->second.count(task) > 0;
}

StatusOr<std::string> ClusterSpec::TaskAddress(const std::string& job, int task) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) {
    return errors::InvalidArgument("Job '", Shown(job),
                                   "' is not in the cluster (jobs: ", absl::StrJoin(job_names(), ", "), ")");
  }
  auto t = it->second.find(task);
  if (t == it->second.end()) {
    return errors::InvalidArgument("Task index ", task, " is out of range for job '", job, "', which has ",
                                   DescribeIndices(it->second));
  }
  return t->second;
}

std::vector<std::string> ClusterSpec::TaskNames() const {
  std::vector<std::string> names;
  for (const auto& [job, tasks] : jobs_) {
    for (const auto& [index, address] : tasks) names.push_back(TaskName(job, index));
  }
  return names;
}

std::string ClusterSpec::DebugString() const {
  std::vector<std::string> parts;
  for (const auto& [job, tasks] : jobs_) {
    bool contiguous = tasks.empty() ||
                      (tasks.begin()->first == 0 && tasks.rbegin()->first == static_cast<int>(tasks.size()) - 1);
    std::vector<std::string> entries;
    for (const auto& [index, address] : tasks) {
      entries.push_back(contiguous ? address : absl::StrCat(index, ": ", address));
    }
    parts.push_back(contiguous ? absl::StrCat(job, ": [", absl::StrJoin(entries, ", "), "]")
                               : absl::StrCat(job, ": {", absl::StrJoin(entries, ", "), "}"));
  }
  return absl::StrJoin(parts, ", ");
}

StatusOr<TaskConfig> TaskConfigFromFlags(const std::string& ps_hosts, const std::string& worker_hosts,
                                         const std::string& job_name, int task_index) {
  ASSIGN_OR_RETURN(std::vector<std::string> ps, SplitHosts("--ps_hosts", ps_hosts));
  ASSIGN_OR_RETURN(std::vector<std::string> workers, SplitHosts("--worker_hosts", worker_hosts));
  if (workers.empty()) {
    return errors::InvalidArgument("--worker_hosts is empty: a cluster needs at least one worker");
  }
  if (job_name != "ps" && job_name != "worker") {
    return errors::InvalidArgument("--job_name must be 'ps' or 'worker', got '", Shown(job_name), "'");
  }
  const std::vector<std::string>& own = job_name == "ps" ? ps : workers;
  const char* own_flag = job_name == "ps" ? "--ps_hosts" : "--worker_hosts";
  if (own.empty()) {
    return errors::InvalidArgument("--job_name is 'ps' but --ps_hosts is empty");
  }
  if (task_index < 0 || task_index >= static_cast<int>(own.size())) {
    return errors::InvalidArgument("--task_index ", task_index, " is out of range: ", own_flag, " lists ", own.size(),
                                   own.size() == 1 ? " task" : " tasks", " of job '", job_name, "' (indices 0..",
                                   own.size() - 1, ")");
  }
  std::map<std::string, std::vector<std::string>> jobs;
  if (!ps.empty()) jobs["ps"] = ps;
  jobs["worker"] = workers;
  auto cluster = ClusterSpec::FromJobs(jobs);
  if (!cluster.ok()) return errors::Annotate(cluster.status(), "--ps_hosts/--worker_hosts: ");
  TaskConfig config;
  config.cluster = *std::move(cluster);
  config.job_name = job_name;
  config.task_index = task_index;
  config.is_chief = ComputeIsChief(config.cluster, job_name, task_index);
  return config;
}

StatusOr<TaskConfig> ParseTfConfig(absl::string_view text) {
  // The limits first: protobuf's parser has none of its own for size and nesting.
  RETURN_IF_ERROR(errors::Annotate(CheckJsonText(text, {.max_bytes = size_t{1} << 20, .max_depth = 16}),
                                   "TF_CONFIG: "));
  JsonValue parsed;
  if (auto s = google::protobuf::util::JsonStringToMessage(google::protobuf::StringPiece(text.data(), text.size()),
                                                           &parsed);
      !s.ok()) {
    return errors::Annotate(JsonParseError(absl::string_view(s.message().data(), s.message().size())), "TF_CONFIG: ");
  }
  if (!parsed.has_struct_value()) {
    return errors::InvalidArgument("TF_CONFIG: must be a JSON object with \"cluster\" and \"task\", got ",
                                   KindName(parsed));
  }
  const JsonObject& root = parsed.struct_value();
  for (const auto& [key, value] : Members(root)) {
    if (key == "cluster" || key == "task") continue;
    if (key == "environment" || key == "rpc_layer") {  // TensorFlow's optional keys; nothing to do here
      if (!value->has_string_value()) {
        return errors::InvalidArgument("TF_CONFIG: \"", key, "\" must be a string, got ", KindName(*value));
      }
      continue;
    }
    return errors::InvalidArgument("TF_CONFIG: unknown key \"", Shown(key),
                                   "\" (known: cluster, task, environment, rpc_layer)");
  }
  const JsonValue* cluster = Find(root, "cluster");
  if (cluster == nullptr) return errors::InvalidArgument("TF_CONFIG: \"cluster\" is missing");
  if (!cluster->has_struct_value()) {
    return errors::InvalidArgument("TF_CONFIG: \"cluster\" must be an object of job name -> addresses, got ",
                                   KindName(*cluster));
  }
  std::map<std::string, std::map<int, std::string>> jobs;
  for (const auto& [job, tasks] : Members(cluster->struct_value())) {
    if (!IsTfConfigJob(job)) {
      return errors::InvalidArgument("TF_CONFIG: cluster has job \"", Shown(job),
                                     "\"; TF_CONFIG jobs are chief, worker, ps and evaluator");
    }
    ASSIGN_OR_RETURN(jobs[job], ParseTfConfigJob(job, *tasks));
    if ((job == "chief" || job == "evaluator") && jobs[job].size() > 1) {
      return errors::InvalidArgument("TF_CONFIG: cluster.", job, " has ", jobs[job].size(),
                                     " tasks; there can be only one");
    }
  }
  if (jobs.empty()) return errors::InvalidArgument("TF_CONFIG: \"cluster\" has no jobs");
  auto spec = ClusterSpec::FromSparseJobs(jobs);
  if (!spec.ok()) return errors::Annotate(spec.status(), "TF_CONFIG: ");

  const JsonValue* task = Find(root, "task");
  if (task == nullptr) return errors::InvalidArgument("TF_CONFIG: \"task\" is missing");
  if (!task->has_struct_value()) {
    return errors::InvalidArgument("TF_CONFIG: \"task\" must be an object {\"type\": ..., \"index\": ...}, got ",
                                   KindName(*task));
  }
  for (const auto& [key, value] : Members(task->struct_value())) {
    if (key != "type" && key != "index" && key != "trial") {
      return errors::InvalidArgument("TF_CONFIG: unknown key \"", Shown(key),
                                     "\" in \"task\" (known: type, index, trial)");
    }
  }
  const JsonValue* type = Find(task->struct_value(), "type");
  if (type == nullptr) return errors::InvalidArgument("TF_CONFIG: task.type is missing");
  if (!type->has_string_value()) {
    return errors::InvalidArgument("TF_CONFIG: task.type must be a string, got ", KindName(*type));
  }
  const std::string& job = type->string_value();
  if (!IsTfConfigJob(job)) {
    return errors::InvalidArgument("TF_CONFIG: task.type \"", Shown(job),
                                   "\" is not one of chief, worker, ps, evaluator");
  }
  const JsonValue* index_value = Find(task->struct_value(), "index");
  if (index_value == nullptr) return errors::InvalidArgument("TF_CONFIG: task.index is missing");
  ASSIGN_OR_RETURN(const int index, IntegerIn(*index_value, "TF_CONFIG: task.index", 0, 1 << 30));

  TaskConfig config;
  config.cluster = *std::move(spec);
  config.job_name = job;
  config.task_index = index;
  // As in TensorFlow, the evaluator is not part of the training cluster: it may be left out.
  bool evaluator_outside = job == "evaluator" && config.cluster.num_tasks("evaluator") == 0;
  if (evaluator_outside) {
    if (index != 0) {
      return errors::InvalidArgument("TF_CONFIG: task.index is ", index, ", but there is only one evaluator (index 0)");
    }
  } else if (!config.cluster.HasTask(job, index)) {
    auto address = config.cluster.TaskAddress(job, index);
    return errors::Annotate(address.status(), "TF_CONFIG: \"task\" names no task of \"cluster\": ");
  }
  config.is_chief = ComputeIsChief(config.cluster, job, index);
  return config;
}

StatusOr<TaskConfig> TaskConfigFromArgs(const std::vector<std::string>& args, const std::string& tf_config,
                                        std::vector<std::string>* rest) {
  if (rest != nullptr) rest->clear();
  FlagSpec spec;
  spec.values.assign(std::begin(kTaskFlags), std::end(kTaskFlags));
  spec.keep_unknown = true;  // the program's own flags, for its own parser
  ASSIGN_OR_RETURN(ParsedFlags flags, ParsedFlags::Parse(args, spec));
  if (rest != nullptr) *rest = flags.positional();
  bool any = false;
  for (const char* flag : kTaskFlags) {
    if (flags.Count(flag) > 1) return errors::InvalidArgument(flag, " is given twice");
    any = any || flags.Has(flag);
  }
  if (!any) {
    if (!absl::StripAsciiWhitespace(tf_config).empty()) return ParseTfConfig(tf_config);
    return errors::NotFound(
        "No task described: give --job_name, --task_index, --ps_hosts and --worker_hosts, or set TF_CONFIG");
  }
  if (!flags.Has("--job_name")) return errors::InvalidArgument("--job_name is missing");
  if (!flags.Has("--worker_hosts")) return errors::InvalidArgument("--worker_hosts is missing");
  auto task_index = flags.GetInt64("--task_index", 0, 0);
  if (task_index.ok() && *task_index > 999999999) {  // more tasks than any cluster has
    task_index = errors::InvalidArgument("--task_index must be a non-negative integer, got '",
                                         Shown(flags.GetString("--task_index")), "'");
  }
  if (!task_index.ok()) return task_index.status();
  return TaskConfigFromFlags(flags.GetString("--ps_hosts"), flags.GetString("--worker_hosts"),
                             flags.GetString("--job_name"), static_cast<int>(*task_index));
}

}  // namespace dflow
