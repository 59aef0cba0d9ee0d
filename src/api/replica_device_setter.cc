#include "dflow/replica_device_setter.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>

#include "absl/strings/str_join.h"
#include "distributed/cluster_spec.h"
#include "framework/device_name.h"

namespace dflow::train {
namespace {

// A device function that reports `s` for every op.
DeviceFunction Failing(Status s) {
  return [s](const DeviceRequest&) -> StatusOr<std::string> { return s; };
}

// `base` with the fields that `over` sets replaced by its (TensorFlow's make_merged_spec).
DeviceName Merged(DeviceName base, const DeviceName& over) {
  if (over.has_job) base.has_job = true, base.job = over.job;
  if (over.has_replica) base.has_replica = true, base.replica = over.replica;
  if (over.has_task) base.has_task = true, base.task = over.task;
  if (over.has_type) base.has_type = true, base.type = over.type;
  if (over.has_id) base.has_id = true, base.id = over.id;
  return base;
}

int64_t ElementBytes(DType t) {
  if (BaseType(t) == DT_STRING) return 8;  // numpy's object itemsize, as TensorFlow counts
  size_t s = DTypeSize(t);
  return s == 0 ? 1 : static_cast<int64_t>(s);
}

}  // namespace

PsStrategy RoundRobinStrategy(int num_tasks) {
  if (num_tasks <= 0) {
    return [num_tasks](const DeviceRequest&) -> StatusOr<int> {
      return errors::InvalidArgument("RoundRobinStrategy needs at least one task, got ", num_tasks);
    };
  }
  auto next = std::make_shared<int>(0);
  auto mu = std::make_shared<std::mutex>();
  return [num_tasks, next, mu](const DeviceRequest&) -> StatusOr<int> {
    std::lock_guard<std::mutex> l(*mu);
    int task = *next;
    *next = (*next + 1) % num_tasks;
    return task;
  };
}

StatusOr<int64_t> ByteSizeLoadFunction(const DeviceRequest& op) {
  auto shape_it = op.attrs.find("shape");
  auto dtype_it = op.attrs.find("dtype");
  const PartialTensorShape* shape = shape_it == op.attrs.end() ? nullptr
                                                               : shape_it->second.get_if<PartialTensorShape>();
  const DType* dtype = dtype_it == op.attrs.end() ? nullptr : dtype_it->second.get_if<DType>();
  if (shape == nullptr || dtype == nullptr) {
    return errors::InvalidArgument("The byte size of node '", op.name, "' (op ", op.op,
                                   ") is unknown: it has no \"shape\" and \"dtype\" attrs");
  }
  if (!shape->IsFullyDefined()) {
    return errors::InvalidArgument("The byte size of node '", op.name, "' (op ", op.op, ") is unknown: its shape ",
                                   shape->DebugString(), " is not fully defined");
  }
  int64_t elements = 1;
  for (int64_t d : shape->dim_sizes()) {
    if (d != 0 && elements > std::numeric_limits<int64_t>::max() / d) {
      return errors::InvalidArgument("The byte size of node '", op.name, "' overflows: shape ", shape->DebugString());
    }
    elements *= d;
  }
  const int64_t per = ElementBytes(*dtype);
  if (elements > std::numeric_limits<int64_t>::max() / per) {
    return errors::InvalidArgument("The byte size of node '", op.name, "' overflows: shape ", shape->DebugString());
  }
  return elements * per;
}

PsStrategy GreedyLoadBalancingStrategy(int num_tasks, LoadFunction load_fn) {
  if (num_tasks <= 0) {
    return [num_tasks](const DeviceRequest&) -> StatusOr<int> {
      return errors::InvalidArgument("GreedyLoadBalancingStrategy needs at least one task, got ", num_tasks);
    };
  }
  if (!load_fn) load_fn = ByteSizeLoadFunction;
  struct State {
    std::mutex mu;
    std::vector<int64_t> loads;
  };
  auto state = std::make_shared<State>();
  state->loads.assign(num_tasks, 0);
  return [state, load_fn](const DeviceRequest& op) -> StatusOr<int> {
    StatusOr<int64_t> load = load_fn(op);
    if (!load.ok()) return errors::Annotate(load.status(), "GreedyLoadBalancingStrategy: ");
    std::lock_guard<std::mutex> l(state->mu);
    auto least = std::min_element(state->loads.begin(), state->loads.end());
    *least += *load;
    return static_cast<int>(least - state->loads.begin());
  };
}

const std::vector<std::string>& StandardPsOps() {
  static const auto* ops = new std::vector<std::string>{"Variable",
                                                        "VariableV2",
                                                        "AutoReloadVariable",
                                                        "MutableHashTable",
                                                        "MutableHashTableV2",
                                                        "MutableHashTableOfTensors",
                                                        "MutableHashTableOfTensorsV2",
                                                        "MutableDenseHashTable",
                                                        "MutableDenseHashTableV2",
                                                        "VarHandleOp",
                                                        "BoostedTreesEnsembleResourceHandleOp",
                                                        "BoostedTreesQuantileStreamResourceHandleOp",
                                                        "ResourceConditionalAccumulator",
                                                        "DecisionTreeResource"};
  return *ops;
}

DeviceFunction ReplicaDeviceSetter(const ReplicaDeviceSetterOptions& options) {
  if (options.ps_tasks < 0) {
    return Failing(errors::InvalidArgument("ReplicaDeviceSetter: ps_tasks must be non-negative, got ",
                                           options.ps_tasks));
  }
  if (options.ps_tasks == 0) return nullptr;
  StatusOr<DeviceName> ps = DeviceName::Parse(options.ps_device);
  if (!ps.ok()) return Failing(errors::Annotate(ps.status(), "ReplicaDeviceSetter: ps_device: "));
  StatusOr<DeviceName> worker = DeviceName::Parse(options.worker_device);
  if (!worker.ok()) return Failing(errors::Annotate(worker.status(), "ReplicaDeviceSetter: worker_device: "));
  PsStrategy strategy = options.ps_strategy ? options.ps_strategy : RoundRobinStrategy(options.ps_tasks);
  const int ps_tasks = options.ps_tasks;
  const bool merge = options.merge_devices;
  const bool use_ps = !options.ps_device.empty();
  auto ps_ops = std::make_shared<const std::vector<std::string>>(options.ps_ops);
  return [ps = *ps, worker = *worker, strategy, ps_tasks, merge, use_ps,
          ps_ops](const DeviceRequest& op) -> StatusOr<std::string> {
    if (!merge && !op.device.empty()) return std::string(op.device);
    ASSIGN_OR_RETURN(DeviceName current, DeviceName::Parse(op.device));
    if (use_ps && std::find(ps_ops->begin(), ps_ops->end(), op.op) != ps_ops->end()) {
      DeviceName device = ps;
      if (ps.has_job && (!current.has_job || current.job == ps.job)) {
        ASSIGN_OR_RETURN(int task, strategy(op));
        if (task < 0 || task >= ps_tasks) {
          return errors::InvalidArgument("ReplicaDeviceSetter: the ps strategy chose task ", task, " for node '",
                                         op.name, "', but the ps job has tasks 0..", ps_tasks - 1);
        }
        device.has_task = true;
        device.task = task;
      }
      return Merged(device, current).ToString();
    }
    return Merged(worker, current).ToString();
  };
}

DeviceFunction ReplicaDeviceSetter(int ps_tasks, const std::string& worker_device, const std::string& ps_device,
                                   PsStrategy ps_strategy) {
  ReplicaDeviceSetterOptions o;
  o.ps_tasks = ps_tasks;
  o.worker_device = worker_device;
  o.ps_device = ps_device;
  o.ps_strategy = std::move(ps_strategy);
  return ReplicaDeviceSetter(o);
}

DeviceFunction ReplicaDeviceSetter(const ClusterSpec& cluster, ReplicaDeviceSetterOptions options) {
  StatusOr<DeviceName> ps = DeviceName::Parse(options.ps_device);
  if (!ps.ok()) return Failing(errors::Annotate(ps.status(), "ReplicaDeviceSetter: ps_device: "));
  const std::string job = ps->has_job ? ps->job : "ps";
  if (cluster.num_tasks(job) == 0) {
    return Failing(errors::InvalidArgument("ReplicaDeviceSetter: the cluster has no job '", job,
                                           "' (jobs: ", absl::StrJoin(cluster.job_names(), ", "), ")"));
  }
  options.ps_tasks = cluster.num_tasks(job);
  return ReplicaDeviceSetter(options);
}

}  // namespace dflow::train
