// Between-graph asynchronous training on a cluster with MonitoredTrainingSession: every worker
// process runs this program with the cluster flags, builds the same model — layer 1's weights on
// /job:ps/task:0, layer 2's on /job:ps/task:1 (task 0 when there is one ps task), the ReLU layers
// on its own worker — and trains one shared set of parameters on a synthetic regression task until
// the global step reaches --last_step. Task 0 (the chief) restores the latest checkpoint of
// --checkpoint_dir or initializes the variables, and saves a checkpoint every
// --save_checkpoint_steps steps; the others wait for the model. When a ps task or a peer dies, the
// session is recreated (the chief restores the latest checkpoint) and training goes on.
//
//   dflow launch --ps 2 --workers 2 -- build/bin/distributed_trainer --last_step 2000 --checkpoint_dir /tmp/m
//
// Flags: --last_step N (or --train_steps N), --checkpoint_dir DIR, --save_checkpoint_steps N
// (100), --worker_steps N (instead of a last global step: every worker runs --warmup W (20) steps,
// then N timed steps of its own, all workers' timed steps side by side: each session starts with a
// barrier, a counter on /job:ps/task:0 that every worker increments, then waits for; for measuring
// throughput), --max_wait_secs N (how long a worker waits for the chief, 600), --sync (synchronous
// training with SyncReplicasOptimizer: each step applies the mean of --replicas_to_aggregate N
// gradients, all workers by default; the rest are backups; a worker stops once its step took a
// token of --last_step), --credentials DIR (the cluster's credentials, see docs/SECURITY.md;
// without it DFLOW_CREDENTIALS, which `dflow launch` sets, or this user's store on loopback).
// With --job_name=ps it serves (Server::Join) until the job is complete: the chief's
// MonitoredTrainingSession tells every task when it closes, after its final checkpoint; then
// every task exits 0. Nothing here ends the job by hand: a trainer written as in TensorFlow's
// guide gets this from the library. Prints, per worker, a line per session
// it created, then its own steps, the final global step and the loss before and after.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "dflow/basic_session_run_hooks.h"
#include "dflow/dflow.h"
#include "dflow/flags.h"
#include "dflow/monitored_session.h"
#include "dflow/server.h"
#include "dflow/sync_replicas_optimizer.h"

namespace {

using namespace dflow;  // NOLINT

constexpr int kInputs = 10, kHidden = 32, kBatch = 64;

int Fail(const Status& s) {
  std::fprintf(stderr, "distributed_trainer: %s\n", s.ToString().c_str());
  return 1;
}

// Prints the global step every session starts at: after a failure, it shows where training
// resumed.
class SessionStartPrinter : public train::SessionRunHook {
 public:
  SessionStartPrinter(int task, Output global_step) : task_(task), global_step_(global_step) {}
  Status AfterCreateSession(ClientSession* session, train::Coordinator*) override {
    DFLOW_ASSIGN_OR_RETURN(std::vector<Tensor> r, session->Run({global_step_}));
    std::printf("worker %d: session %d starts at global step %lld\n", task_, ++sessions_,
                static_cast<long long>(r[0].scalar<int64_t>()));
    std::fflush(stdout);
    return absl::OkStatus();
  }

 private:
  int task_;
  Output global_step_;
  int sessions_ = 0;
};

// The start barrier of --worker_steps: after each session is created, this worker adds one to
// `ready` and waits (up to `max_wait_secs`) until every worker has.
class StartBarrierHook : public train::SessionRunHook {
 public:
  StartBarrierHook(Output ready, Output mark_ready, int64_t workers, int64_t max_wait_secs)
      : ready_(ready), mark_ready_(mark_ready), workers_(workers), max_wait_secs_(max_wait_secs) {}
  Status AfterCreateSession(ClientSession* session, train::Coordinator*) override {
    DFLOW_RETURN_IF_ERROR(session->Run({mark_ready_}).status());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(max_wait_secs_);
    while (true) {
      DFLOW_ASSIGN_OR_RETURN(std::vector<Tensor> r, session->Run({ready_}));
      if (r[0].scalar<int64_t>() >= workers_) return absl::OkStatus();
      if (std::chrono::steady_clock::now() > deadline) {
        return errors::DeadlineExceeded("the other workers did not start within ", max_wait_secs_, " s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

 private:
  Output ready_, mark_ready_;
  int64_t workers_, max_wait_secs_;
};

struct Flags {
  int64_t last_step = 2000;
  int64_t worker_steps = 0;  // > 0: this many timed steps per worker, after a barrier and warmup
  int64_t warmup = 20;
  std::string checkpoint_dir;
  int64_t save_checkpoint_steps = 100;
  int64_t max_wait_secs = 600;
  bool sync = false;
  int64_t replicas_to_aggregate = 0;
  std::string credentials;  // a credentials directory; empty: DFLOW_CREDENTIALS or the user's store
};

Status ParseFlags(const std::vector<std::string>& rest, Flags* f) {
  FlagSpec spec;
  spec.values = {"--last_step",      "--save_checkpoint_steps", "--max_wait_secs", "--replicas_to_aggregate",
                 "--checkpoint_dir", "--credentials",           "--worker_steps",  "--warmup"};
  spec.switches = {"--sync"};
  spec.aliases = {{"--train_steps", "--last_step"}};
  DFLOW_ASSIGN_OR_RETURN(ParsedFlags flags, ParsedFlags::Parse(rest, spec));
  if (!flags.positional().empty()) return errors::InvalidArgument("unknown argument '", flags.positional()[0], "'");
  DFLOW_ASSIGN_OR_RETURN(f->last_step, flags.GetInt64("--last_step", f->last_step, 1));
  DFLOW_ASSIGN_OR_RETURN(f->save_checkpoint_steps,
                         flags.GetInt64("--save_checkpoint_steps", f->save_checkpoint_steps, 1));
  DFLOW_ASSIGN_OR_RETURN(f->worker_steps, flags.GetInt64("--worker_steps", f->worker_steps, 1));
  DFLOW_ASSIGN_OR_RETURN(f->warmup, flags.GetInt64("--warmup", f->warmup, 0));
  DFLOW_ASSIGN_OR_RETURN(f->max_wait_secs, flags.GetInt64("--max_wait_secs", f->max_wait_secs, 1));
  DFLOW_ASSIGN_OR_RETURN(f->replicas_to_aggregate,
                         flags.GetInt64("--replicas_to_aggregate", f->replicas_to_aggregate, 1));
  f->checkpoint_dir = flags.GetString("--checkpoint_dir", f->checkpoint_dir);
  f->credentials = flags.GetString("--credentials", f->credentials);
  f->sync = flags.Has("--sync");
  if (f->worker_steps > 0 && f->sync) return errors::InvalidArgument("--worker_steps is for asynchronous training");
  if (f->replicas_to_aggregate > 0 && !f->sync) {
    return errors::InvalidArgument("--replicas_to_aggregate needs --sync");
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc), rest;
  const char* env = std::getenv("TF_CONFIG");
  StatusOr<TaskConfig> task = TaskConfigFromArgs(args, env == nullptr ? "" : env, &rest);
  if (!task.ok()) return Fail(task.status());
  Flags flags;
  if (Status st = ParseFlags(rest, &flags); !st.ok()) return Fail(st);
  ServerOptions so;
  so.cluster = task->cluster;
  so.job_name = task->job_name;
  so.task_index = task->task_index;
  if (!flags.credentials.empty()) {
    StatusOr<ClusterCredentials> creds = LoadCredentials(flags.credentials);
    if (!creds.ok()) return Fail(creds.status());
    so.credentials = *std::move(creds);
  }
  StatusOr<std::unique_ptr<Server>> server = Server::Create(so);
  if (!server.ok()) return Fail(server.status());
  if (task->job_name == "ps") {
    (*server)->Join();
    return 0;
  }
  const int num_ps = task->cluster.num_tasks("ps");
  const std::string worker = "/job:" + task->job_name + "/task:" + std::to_string(task->task_index);

  Scope root = Scope::NewRootScope();
  Scope ps0 = root.WithDevice("/job:ps/task:0");
  Scope ps1 = root.WithDevice(num_ps > 1 ? "/job:ps/task:1" : "/job:ps/task:0");
  Output global_step = train::CreateGlobalStep(ps0);
  Variable w1 = Variable::Create(ps0.WithOpName("weights_1"), {kInputs, kHidden}, DT_FLOAT, init::GlorotUniform(1));
  Variable b1 = Variable::Create(ps0.WithOpName("biases_1"), {kHidden}, DT_FLOAT, init::Zeros());
  Variable w2 = Variable::Create(ps1.WithOpName("weights_2"), {kHidden, 1}, DT_FLOAT, init::GlorotUniform(2));
  Variable b2 = Variable::Create(ps1.WithOpName("biases_2"), {1}, DT_FLOAT, init::Zeros());
  // The data: x uniform in [0, 1)^10, y = sum_i c_i x_i + 0.5 with fixed c.
  Scope w = root.WithDevice(worker);
  Output x = ops::RandomUniform(w.WithOpName("x"), ops::Const(w, {kBatch, kInputs}), DT_FLOAT,
                                /*seed=*/100 + task->task_index);
  std::vector<float> c(kInputs);
  for (int i = 0; i < kInputs; ++i) c[i] = 0.1f * static_cast<float>(i + 1) - 0.4f;
  Output coeffs = ops::Const(w, Tensor::FromValues<float>(c, TensorShape({kInputs, 1})).value());
  Output y = ops::Add(w, ops::MatMul(w, x, coeffs), 0.5f);
  Output hidden = ops::Relu(w.WithOpName("layer_1"), ops::Add(w, ops::MatMul(w, x, w1), b1));
  Output y_hat = ops::Add(w.WithOpName("layer_2"), ops::MatMul(w, hidden, w2), b2);
  Output loss = losses::MeanSquaredError(w.WithOpName("loss"), y, y_hat);
  train::GradientDescentOptimizer sgd(0.1f);
  Operation train_op;
  std::shared_ptr<train::SessionRunHook> sync_hook;
  std::unique_ptr<train::SyncReplicasOptimizer> sync;
  if (flags.sync) {
    // Every step applies the mean of replicas_to_aggregate gradients (all workers by default);
    // the other workers are backups.
    const int workers = task->cluster.num_tasks("worker");
    const int replicas = flags.replicas_to_aggregate > 0 ? static_cast<int>(flags.replicas_to_aggregate) : workers;
    sync = std::make_unique<train::SyncReplicasOptimizer>(sgd, replicas, workers);
    train_op = sync->Minimize(w, loss, {}, global_step);
    sync_hook = sync->MakeSessionRunHook(root, task->is_chief);
  } else {
    train_op = sgd.Minimize(w.WithOpName("train"), loss, {}, global_step);
  }
  // The global step after this step: asynchronous, the train op is the global step's AssignAdd
  // (as in TensorFlow), so its output is the value this step's update made; synchronous, the
  // token the step took, the step of the apply that let it go on (and its next gradient's).
  Output step_after = flags.sync ? ops::Identity(w.WithControlDependencies({train_op}), sync->local_step())
                                 : Output(train_op.node(), 0);
  // --worker_steps: the start barrier's counter (made after Minimize: it is not trained).
  Output ready, mark_ready;
  if (flags.worker_steps > 0) {
    Variable counter = Variable::Create(ps0.WithOpName("ready_workers"), {}, DT_INT64, init::Zeros());
    ready = counter.read();
    mark_ready = ops::AssignAdd(ps0, counter.ref(), ops::Const(ps0, int64_t{1}));
  }
  if (!root.ok()) return Fail(root.status());

  train::MonitoredTrainingSessionOptions mts;
  mts.master = (*server)->target();
  mts.is_chief = task->is_chief;
  mts.checkpoint_dir = flags.checkpoint_dir;
  mts.save_checkpoint_steps = flags.save_checkpoint_steps;
  mts.max_wait_secs = flags.max_wait_secs;
  mts.global_step = global_step;
  // This worker's session involves the ps tasks and itself only.
  mts.config.device_filters = {"/job:ps", worker};
  // The global step when training ends (read at the end, before the chief ends the job).
  auto final_step = std::make_shared<train::FinalOpsHook>(std::vector<Output>{global_step});
  mts.hooks = {std::make_shared<SessionStartPrinter>(task->task_index, global_step), final_step};
  // Synchronous workers stop on the token their step took (below), not on a read of the global
  // step: a read may lag a step behind, and a worker that takes a second token of the last step
  // can leave the chief waiting for one that never comes.
  if (flags.worker_steps > 0) {
    mts.hooks.push_back(std::make_shared<StartBarrierHook>(ready, mark_ready, task->cluster.num_tasks("worker"),
                                                           flags.max_wait_secs));
  } else if (!flags.sync) {
    mts.hooks.push_back(std::make_shared<train::StopAtStepHook>(global_step, 0, flags.last_step));
  }
  if (sync_hook != nullptr) mts.hooks.push_back(sync_hook);
  // The job's end is the library's: the chief's session tells every task when it closes (after
  // its final checkpoint), so the ps tasks' Join returns; a worker whose step fails because the
  // job is complete ends cleanly (OutOfRange), and one that starts after it gets a session that
  // has nothing to do.
  auto session = train::MonitoredTrainingSession(root, mts);
  if (!session.ok()) return Fail(session.status());
  int64_t local_steps = 0, step_value = 0;
  float initial_loss = 0, loss_value = 0;
  // With --worker_steps, the steps are timed after the warmup, and fetch only the loss.
  const int64_t warmup = flags.worker_steps > 0 ? flags.warmup : 0;
  const int64_t steps = flags.worker_steps > 0 ? warmup + flags.worker_steps : -1;
  std::vector<Output> fetches = {loss};
  if (flags.worker_steps == 0) fetches.push_back(step_after);
  auto start = std::chrono::steady_clock::now();
  while (!(*session)->ShouldStop() && local_steps != steps) {
    if (local_steps == warmup && warmup > 0) start = std::chrono::steady_clock::now();
    auto r = (*session)->Run({}, fetches, {train_op});
    if (!r.ok()) {
      if (absl::IsOutOfRange(r.status())) break;  // the sync queue closed, or the job is complete
      return Fail(r.status());
    }
    loss_value = (*r)[0].scalar<float>();
    if (local_steps++ == 0) initial_loss = loss_value;
    if (fetches.size() > 1) step_value = (*r)[1].scalar<int64_t>();
    // Each apply gives a token of the new step to every worker, and each worker takes one token
    // of the last step at most: every worker gets one, and no gradient is sent past it.
    if (flags.sync && step_value >= flags.last_step) break;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The chief's final checkpoint, then (the chief) the end of the job.
  if (Status s = (*session)->Close(); !s.ok()) return Fail(s);
  // (Nothing when the job completed before this worker's end: then its last step's value.)
  if (!final_step->final_ops_values().empty()) {
    step_value = std::max(step_value, final_step->final_ops_values()[0].scalar<int64_t>());
  }
  const int64_t timed = std::max<int64_t>(local_steps - warmup, 0);
  std::printf("worker %d: %lld local steps (%.0f steps/s), global step %lld, loss %.6f -> %.6f\n", task->task_index,
              static_cast<long long>(local_steps), secs > 0 ? timed / secs : 0.0, static_cast<long long>(step_value),
              initial_loss, loss_value);
  std::fflush(stdout);
  return 0;
}
