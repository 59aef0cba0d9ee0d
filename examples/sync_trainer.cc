// Synchronous training with backup workers, and job completion: every worker process runs this
// program with the cluster flags; each builds the same model (w on the ps tasks) under
// SyncReplicasOptimizer, so that every global step applies the mean of exactly
// --replicas_to_aggregate gradients. Worker 0 (the chief) initializes the variables, runs the
// sync hook, and when global_step reaches --last_step tells every task that the job is
// complete: the ps tasks (`dflow server`, or this program with --job_name=ps) exit 0 by
// themselves, and the workers end their loops.
//
//   dflow launch --ps 1 --workers 3 -- build/bin/sync_trainer --replicas_to_aggregate=2 --last_step=50
//
// The gradient of w is 1 from every replica and the learning rate 1, so after G steps w = -G
// exactly. Each worker prints how many gradients it sent; the chief also prints the final
// global step, w, and how many gradients the accumulators dropped (stale or surplus) or still
// hold, once every other worker has finished (it waits 10 s at most for them): 2 * G + dropped +
// held = the gradients all workers sent.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "absl/strings/match.h"
#include "dflow/dflow.h"
#include "dflow/flags.h"
#include "dflow/server.h"

namespace {

using namespace dflow;  // NOLINT

int Fail(const Status& s) {
  std::fprintf(stderr, "sync_trainer: %s\n", s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc), rest;
  const char* env = std::getenv("TF_CONFIG");
  StatusOr<TaskConfig> task = TaskConfigFromArgs(args, env == nullptr ? "" : env, &rest);
  if (!task.ok()) return Fail(task.status());
  FlagSpec spec;
  spec.values = {"--replicas_to_aggregate", "--last_step"};
  spec.unknown_hint = " (--replicas_to_aggregate=N, --last_step=N: positive integers)";
  StatusOr<ParsedFlags> flags = ParsedFlags::Parse(rest, spec);
  if (flags.ok() && !flags->positional().empty()) {
    flags = errors::InvalidArgument("unexpected argument '", flags->positional()[0], "'", spec.unknown_hint);
  }
  if (!flags.ok()) return Fail(flags.status());
  StatusOr<int64_t> replicas_flag = flags->GetInt64("--replicas_to_aggregate", 0, 1);
  StatusOr<int64_t> last_step_flag = flags->GetInt64("--last_step", 20, 1);
  if (!replicas_flag.ok()) return Fail(replicas_flag.status());
  if (!last_step_flag.ok()) return Fail(last_step_flag.status());
  int64_t replicas = *replicas_flag;
  const int64_t last_step = *last_step_flag;
  ServerOptions so;
  so.cluster = task->cluster;
  so.job_name = task->job_name;
  so.task_index = task->task_index;
  StatusOr<std::unique_ptr<Server>> server = Server::Create(so);
  if (!server.ok()) return Fail(server.status());
  if (task->job_name == "ps") {
    (*server)->Join();  // returns when the chief declares the job complete
    return 0;
  }
  const int workers = task->cluster.num_tasks("worker");
  if (replicas == 0) replicas = workers;
  const std::string worker = "/job:worker/task:" + std::to_string(task->task_index);

  Scope root = Scope::NewRootScope();
  Scope s = root.WithDeviceFunction(train::ReplicaDeviceSetter(task->cluster.num_tasks("ps"), worker));
  Variable w = Variable::Create(s.WithOpName("w"), {1}, DT_FLOAT, init::Zeros());
  Output global_step = train::CreateGlobalStep(s);
  Output loss = ops::Sum(s, w.read() * ops::Const(s, {1.0f}), ops::Const(s, 0));
  train::GradientDescentOptimizer sgd(1.0f);
  train::SyncReplicasOptimizer sync(sgd, static_cast<int>(replicas), workers);
  Operation train_op = sync.Minimize(s, loss, {}, global_step);
  // The token the step took: the global step its next gradient is for. A worker stops on it,
  // not on a read of global_step that may lag a step (docs/CLUSTER.md, "Who stops").
  Output token = ops::Identity(root.WithDevice(worker).WithControlDependencies({train_op}), sync.local_step());
  std::unique_ptr<train::SessionRunHook> hook = sync.MakeSessionRunHook(s, task->is_chief);
  Output dropped = sync.NumDroppedGradients(s);
  Output held = ops::AccumulatorNumAccumulated(s, sync.accumulators().empty() ? Output() : sync.accumulators()[0]);
  // Each other worker adds one when it has left its loop. The chief waits for them before it
  // reads the counts: a worker's last step may send its gradient after the chief closed the token
  // queue. (Made after Minimize: not a variable to train.)
  Variable finished = Variable::Create(s.WithOpName("workers_finished"), {}, DT_INT64);
  Output finish = ops::AssignAdd(s, finished.ref(), ops::Const(s, int64_t{1}));
  Operation init = GlobalVariablesInitializer(s);
  if (!root.ok()) return Fail(root.status());

  SessionOptions options;
  options.target = (*server)->target();
  options.device_filters = {"/job:ps", worker};
  ClientSession session(root, options);
  if (task->is_chief) {
    Status st = session.Run({init});
    if (!st.ok()) return Fail(st);
  } else {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (true) {
      auto r = session.Run({global_step});
      if (r.ok()) break;
      if (r.status().code() != absl::StatusCode::kFailedPrecondition || std::chrono::steady_clock::now() > deadline) {
        return Fail(errors::Annotate(r.status(), "waiting for the chief to initialize the model: "));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  train::Coordinator coord;
  Status st = hook->AfterCreateSession(&session, &coord);
  if (!st.ok()) return Fail(st);

  int64_t sent = 0, step = 0;
  RunOptions run_options;
  run_options.timeout_in_ms = 60000;
  while (step < last_step && !coord.ShouldStop()) {
    auto r = session.Run({}, {token}, {train_op}, nullptr, run_options);
    // OutOfRange: the token queue was closed after the gradient was sent, or the job completed
    // (a step refused then sent nothing).
    const bool refused = absl::StrContains(r.status().message(), "Job is complete");
    if (r.ok() || (r.status().code() == absl::StatusCode::kOutOfRange && !refused)) ++sent;
    if (!r.ok()) {
      if (r.status().code() == absl::StatusCode::kOutOfRange) break;
      return Fail(r.status());
    }
    step = (*r)[0].scalar<int64_t>();
  }
  std::printf("worker %d: sent %lld gradients\n", task->task_index, static_cast<long long>(sent));
  std::fflush(stdout);
  if (!task->is_chief) {
    st = session.Run({finish}).status();
    // The job may be complete already (the chief stopped waiting for this worker).
    if (!st.ok() && !(*server)->job_complete()) return Fail(st);
    return 0;
  }
  st = hook->End(&session);
  if (!st.ok()) return Fail(st);
  if (!coord.GetStatus().ok()) return Fail(coord.GetStatus());
  // A worker that died never reports: the wait is bounded.
  const auto wait_until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int64_t done = 0;
  while (done < workers - 1 && std::chrono::steady_clock::now() < wait_until) {
    auto r = session.Run({finished.read()});
    if (!r.ok()) return Fail(r.status());
    done = (*r)[0].scalar<int64_t>();
    if (done < workers - 1) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (done < workers - 1) {
    std::printf("chief: %lld of %d other workers finished; the counts may miss their last gradients\n",
                static_cast<long long>(done), workers - 1);
  }
  auto final_values = session.Run({global_step, w.ref(), dropped, held});
  if (!final_values.ok()) return Fail(final_values.status());
  std::printf("chief: global step %lld, w %.1f, dropped %lld, held %d\n",
              static_cast<long long>((*final_values)[0].scalar<int64_t>()), (*final_values)[1].flat<float>()[0],
              static_cast<long long>((*final_values)[2].scalar<int64_t>()), (*final_values)[3].scalar<int32_t>());
  std::fflush(stdout);
  JobCompleteResult result;
  st = (*server)->NotifyJobComplete({}, &result);
  if (!st.ok()) return Fail(st);
  for (const std::string& t : result.unreachable_tasks) std::printf("chief: not told (gone): %s\n", t.c_str());
  std::fflush(stdout);
  return 0;
}
