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
// (100), --max_wait_secs N (how long a worker waits for the chief, 600), --sync (synchronous
// training with SyncReplicasOptimizer: each step applies the mean of --replicas_to_aggregate N
// gradients, all workers by default; the rest are backups; a worker stops once its step took a
// token of --last_step).
// With --job_name=ps it just serves, until the chief tells every task that the job is complete
// (after its final checkpoint); then every task exits 0. Prints, per worker, a line per session
// it created, then its own steps, the final global step and the loss before and after.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "dflow/basic_session_run_hooks.h"
#include "dflow/dflow.h"
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
    ASSIGN_OR_RETURN(std::vector<Tensor> r, session->Run({global_step_}));
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

struct Flags {
  int64_t last_step = 2000;
  std::string checkpoint_dir;
  int64_t save_checkpoint_steps = 100;
  int64_t max_wait_secs = 600;
  bool sync = false;
  int64_t replicas_to_aggregate = 0;
};

Status ParseFlags(const std::vector<std::string>& rest, Flags* f) {
  for (size_t i = 0; i < rest.size(); ++i) {
    std::string name = rest[i], value;
    if (name == "--sync") {
      f->sync = true;
      continue;
    }
    size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (i + 1 < rest.size()) {
      value = rest[++i];
    } else {
      return errors::InvalidArgument("flag ", name, " needs a value");
    }
    int64_t* number = nullptr;
    if (name == "--last_step" || name == "--train_steps")
      number = &f->last_step;
    else if (name == "--save_checkpoint_steps")
      number = &f->save_checkpoint_steps;
    else if (name == "--max_wait_secs")
      number = &f->max_wait_secs;
    else if (name == "--replicas_to_aggregate")
      number = &f->replicas_to_aggregate;
    else if (name == "--checkpoint_dir")
      f->checkpoint_dir = value;
    else
      return errors::InvalidArgument("unknown argument '", rest[i], "'");
    if (number != nullptr && (!absl::SimpleAtoi(value, number) || *number <= 0)) {
      return errors::InvalidArgument(name, " must be a positive integer, got '", value, "'");
    }
  }
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
  // The global step read after this worker's update: the worker whose update is the last one
  // anywhere sees the final count. The read runs on the global step's task, after the update; on
  // the worker it would read the value the ps sent when its step began.
  Output step_after =
      ops::Identity(ps0.WithControlDependencies({train_op}).WithOpName("global_step_after"), global_step);
  // Synchronous: the token this worker's step took, the global step its next gradient is for.
  Output token = flags.sync ? ops::Identity(w.WithControlDependencies({train_op}), sync->local_step()) : step_after;
  if (!root.ok()) return Fail(root.status());

  train::MonitoredTrainingSessionOptions mts;
  mts.master = (*server)->target();
  mts.is_chief = task->is_chief;
  mts.checkpoint_dir = flags.checkpoint_dir;
  mts.save_checkpoint_steps = flags.save_checkpoint_steps;
  mts.max_wait_secs = flags.max_wait_secs;
  // Once the chief told every task the job is complete, a step that fails because the ps tasks
  // are gone is the end of training, not a failure to recover from: the session knows it from
  // this process's server (its target), with nothing to set here.
  Server* own_server = server->get();
  mts.global_step = global_step;
  // This worker's session involves the ps tasks and itself only.
  mts.config.device_filters = {"/job:ps", worker};
  mts.hooks = {std::make_shared<SessionStartPrinter>(task->task_index, global_step)};
  // Synchronous workers stop on the token their step took (below), not on a read of the global
  // step: a read may lag a step behind, and a worker that takes a second token of the last step
  // can leave the chief waiting for one that never comes.
  if (!flags.sync) mts.hooks.push_back(std::make_shared<train::StopAtStepHook>(global_step, 0, flags.last_step));
  if (sync_hook != nullptr) mts.hooks.push_back(sync_hook);
  // Once the job is complete the ps tasks may be gone: a failure then is the end, not an error.
  auto job_over = [&](const Status& s) { return absl::IsOutOfRange(s) || own_server->job_complete(); };
  // The job may end before this worker's first step (it was cut off, or started late).
  auto ended_before_training = [&](const Status& s) {
    if (!job_over(s)) return Fail(s);
    std::printf("worker %d: the job is complete; no steps to run\n", task->task_index);
    std::fflush(stdout);
    return 0;
  };
  auto session = train::MonitoredTrainingSession(root, mts);
  if (!session.ok()) return ended_before_training(session.status());
  auto first = (*session)->Run({loss});
  if (!first.ok()) return ended_before_training(first.status());
  const float initial_loss = (*first)[0].scalar<float>();
  int64_t local_steps = 0;
  // The last values a step returned: what this worker reports when the job completed under it
  // (the chief told every task, so no more steps run anywhere).
  float loss_value = initial_loss;
  int64_t step_value = 0;
  auto start = std::chrono::steady_clock::now();
  while (!(*session)->ShouldStop()) {
    auto r = (*session)->Run({}, {loss, step_after, token}, {train_op});
    if (!r.ok()) {
      if (absl::IsOutOfRange(r.status())) break;  // input done, sync queue closed, job complete
      return Fail(r.status());
    }
    loss_value = (*r)[0].scalar<float>();
    step_value = (*r)[1].scalar<int64_t>();
    ++local_steps;
    // Each apply gives a token of the new step to every worker, and each worker takes one token
    // of the last step at most: every worker gets one, and no gradient is sent past it.
    if (flags.sync && (*r)[2].scalar<int64_t>() >= flags.last_step) break;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // What the last step returned stands when the job completed meanwhile.
  if ((*session)->raw_session() != nullptr) {
    auto last = (*session)->raw_session()->Run({loss, global_step});
    if (last.ok()) {
      loss_value = (*last)[0].scalar<float>();
      step_value = (*last)[1].scalar<int64_t>();
    } else if (!job_over(last.status())) {
      return Fail(last.status());
    }
  }
  // The chief's final checkpoint. A worker whose task was told the job is complete cannot run
  // its hooks' last steps any more, which is fine: the job is over.
  if (Status s = (*session)->Close(); !s.ok() && !(job_over(s) && !task->is_chief)) return Fail(s);
  std::printf("worker %d: %lld local steps (%.0f steps/s), global step %lld, loss %.6f -> %.6f\n", task->task_index,
              static_cast<long long>(local_steps), local_steps / secs, static_cast<long long>(step_value),
              initial_loss, loss_value);
  std::fflush(stdout);
  if (task->is_chief) {
    // Training is over: every task hears it, so the ps tasks exit 0 by themselves.
    JobCompleteResult result;
    if (Status s = (*server)->NotifyJobComplete({}, &result); !s.ok()) return Fail(s);
  }
  return 0;
}
