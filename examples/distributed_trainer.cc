// Between-graph asynchronous training on a cluster: every worker process runs this program with
// the cluster flags, builds the same model — layer 1's weights on /job:ps/task:0, layer 2's on
// /job:ps/task:1 (task 0 when there is one ps task), the ReLU layers on its own worker — and trains
// one shared set of parameters on a synthetic regression task until the global step reaches
// --train_steps. Task 0 (the chief) initializes the variables; the others wait for that.
//
//   dflow launch --ps 2 --workers 2 -- build/bin/distributed_trainer --train_steps 2000
//
// With --job_name=ps it just serves. Prints, per worker, its own steps, the final global step and
// the loss before and after.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "absl/strings/numbers.h"
#include "dflow/dflow.h"
#include "dflow/server.h"

namespace {

using namespace dflow;  // NOLINT

constexpr int kInputs = 10, kHidden = 32, kBatch = 64;

int Fail(const Status& s) {
  std::fprintf(stderr, "distributed_trainer: %s\n", s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc), rest;
  const char* env = std::getenv("TF_CONFIG");
  StatusOr<TaskConfig> task = TaskConfigFromArgs(args, env == nullptr ? "" : env, &rest);
  if (!task.ok()) return Fail(task.status());
  int64_t train_steps = 2000;
  for (size_t i = 0; i < rest.size(); ++i) {
    std::string v;
    if (rest[i].rfind("--train_steps=", 0) == 0) v = rest[i].substr(14);
    else if (rest[i] == "--train_steps" && i + 1 < rest.size()) v = rest[++i];
    else return Fail(errors::InvalidArgument("unknown argument '", rest[i], "'"));
    if (!absl::SimpleAtoi(v, &train_steps) || train_steps <= 0) {
      return Fail(errors::InvalidArgument("--train_steps must be a positive integer, got '", v, "'"));
    }
  }
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
  Operation train_op = train::GradientDescentOptimizer(0.1f).Minimize(w.WithOpName("train"), loss, {}, global_step);
  Operation init = GlobalVariablesInitializer(root);
  if (!root.ok()) return Fail(root.status());

  SessionOptions options;
  options.target = (*server)->target();
  // This worker's session involves the ps tasks and itself only.
  options.device_filters = {"/job:ps", worker};
  ClientSession session(root, options);
  if (task->is_chief) {
    Status s = session.Run({init});
    if (!s.ok()) return Fail(s);
  } else {
    // Wait (bounded) for the chief to initialize the model.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (true) {
      auto r = session.Run({global_step});
      if (r.ok()) break;
      if (r.status().code() != absl::StatusCode::kFailedPrecondition ||
          std::chrono::steady_clock::now() > deadline) {
        return Fail(errors::Annotate(r.status(), "waiting for the chief to initialize the model: "));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  auto first = session.Run({loss});
  if (!first.ok()) return Fail(first.status());
  const float initial_loss = (*first)[0].scalar<float>();
  int64_t local_steps = 0, step = 0;
  auto start = std::chrono::steady_clock::now();
  while (step < train_steps) {
    auto r = session.Run({}, {global_step}, {train_op});
    if (!r.ok()) return Fail(r.status());
    step = (*r)[0].scalar<int64_t>();
    ++local_steps;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto last = session.Run({loss, global_step});
  if (!last.ok()) return Fail(last.status());
  std::printf("worker %d: %lld local steps (%.0f steps/s), global step %lld, loss %.6f -> %.6f\n",
              task->task_index, static_cast<long long>(local_steps), local_steps / secs,
              static_cast<long long>((*last)[1].scalar<int64_t>()), initial_loss, (*last)[0].scalar<float>());
  return 0;
}
