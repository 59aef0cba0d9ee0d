// Placing a between-graph replicated model: variables on the parameter servers, the computation
// on the worker — TensorFlow 1.x's tf.train.replica_device_setter.
//
//   Scope root = Scope::NewRootScope();
//   Scope s = root.WithDeviceFunction(train::ReplicaDeviceSetter(2, "/job:worker/task:0"));
//   Variable w1 = Variable::Create(s.WithOpName("w1"), {784, 100}, DT_FLOAT);  // /job:ps/task:0
//   Variable b1 = Variable::Create(s.WithOpName("b1"), {100}, DT_FLOAT);       // /job:ps/task:1
//   Variable w2 = Variable::Create(s.WithOpName("w2"), {100, 10}, DT_FLOAT);   // /job:ps/task:0
//   Output h = ops::Relu(s, ops::MatMul(s, x, w1) + b1);                       // /job:worker/task:0
//
// The device function sends every op whose type is one of `ps_ops` (variables) to a task of the
// ps job chosen by the strategy, and every other op to `worker_device`. Devices requested inside
// the function's scope (WithDevice) are merged in: the fields they set win, so
// s.WithDevice("/job:ps/task:1") pins a variable to ps task 1 (the strategy is still asked, and
// counts it, as in TensorFlow). A variable's initializer, Assign and read are built colocated
// with it (Variable::Create), so they run on its ps task, as do the optimizers' slots and
// updates; the gradient computation runs on the worker.
//
// The strategies are called once per ps op, in the order the ops are built; they keep state and
// are shared by every copy of the device function (a Scope copies it freely). A graph is built by
// one thread at a time, and so is a device function used.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dflow/scope.h"

namespace dflow {
class ClusterSpec;
}

namespace dflow::train {

// Chooses the ps task (in [0, ps_tasks)) of a ps op.
using PsStrategy = std::function<StatusOr<int>(const DeviceRequest&)>;
// The load an op puts on a ps task, for GreedyLoadBalancingStrategy.
using LoadFunction = std::function<StatusOr<int64_t>(const DeviceRequest&)>;

// Tasks 0, 1, ..., num_tasks - 1, 0, 1, ... in turn (TensorFlow's default).
PsStrategy RoundRobinStrategy(int num_tasks);

// The byte size of the op's value: the elements of its "shape" attr times the size of its
// "dtype" attr (strings count 8 bytes, resources 1), as TensorFlow's byte_size_load_fn.
// InvalidArgument when the op has no such attrs or the shape is not fully defined.
StatusOr<int64_t> ByteSizeLoadFunction(const DeviceRequest& op);

// The task with the least load so far (the lowest index among equals), which then carries the
// op's load as well: tf.contrib.training.GreedyLoadBalancingStrategy.
PsStrategy GreedyLoadBalancingStrategy(int num_tasks, LoadFunction load_fn = ByteSizeLoadFunction);

// The op types placed on ps tasks by default (TensorFlow's STANDARD_PS_OPS).
const std::vector<std::string>& StandardPsOps();

struct ReplicaDeviceSetterOptions {
  // Number of tasks of the ps job; 0 makes the device function a no-op (an empty function).
  int ps_tasks = 0;
  // Device of the ps job ("" uses no ps device: every op goes to worker_device).
  std::string ps_device = "/job:ps";
  // Device of every op that is not a ps op ("" requests nothing for them).
  std::string worker_device = "/job:worker";
  // False: an op that already requests a device (from an inner WithDevice) keeps that device
  // as it is instead of having the setter's fields merged in (and no strategy is asked).
  bool merge_devices = true;
  // Op types that go to the ps job.
  std::vector<std::string> ps_ops = StandardPsOps();
  // Chooses the ps task of each ps op; empty: RoundRobinStrategy(ps_tasks).
  PsStrategy ps_strategy;
};

// The device function (for Scope::WithDeviceFunction). For a ps op: ps_device with the task the
// strategy chose — chosen only when ps_device names a job and the op requests no other job —
// then the op's own request merged in (its fields win); for any other op: worker_device with the
// op's request merged in. Bad options (negative ps_tasks, a device name that does not parse) and
// a strategy's error or out-of-range task are errors recorded in the scope of the op being built.
DeviceFunction ReplicaDeviceSetter(const ReplicaDeviceSetterOptions& options);
// The common form: round robin unless `ps_strategy` is given.
DeviceFunction ReplicaDeviceSetter(int ps_tasks, const std::string& worker_device = "/job:worker",
                                   const std::string& ps_device = "/job:ps", PsStrategy ps_strategy = {});
// ps_tasks taken from the cluster: the number of tasks of the job that ps_device names ("ps").
DeviceFunction ReplicaDeviceSetter(const ClusterSpec& cluster, ReplicaDeviceSetterOptions options = {});

}  // namespace dflow::train
