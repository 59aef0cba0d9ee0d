// What the executor's tests share: adding a node by hand, an executor on the local CPU device
// with the registered kernels, and running one step with a deadline.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/notification.h"
#include "framework/cancellation.h"
#include "framework/op_kernel.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "runtime/executor.h"
#include "runtime/local_device.h"

namespace dflow::executor_test {

// Adds `name` = `op`(inputs) to `g`; a failure fails the test (and returns null).
inline Node* Add(Graph* g, const std::string& name, const std::string& op, std::vector<NodeOut> inputs,
                 AttrMap attrs = {}) {
  NodeSpec s;
  s.name = name;
  s.op = op;
  s.inputs = std::move(inputs);
  s.attrs = std::move(attrs);
  auto n = g->AddNode(std::move(s));
  EXPECT_TRUE(n.ok()) << n.status();
  return n.ok() ? *n : nullptr;
}

// An executor of `g` on the local CPU device, with kernels from the global registry.
inline std::unique_ptr<Executor> MakeExecutor(std::unique_ptr<Graph> g) {
  ExecutorParams p;
  p.device = LocalCpuDevice();
  p.create_kernel = [](const Node& n) -> StatusOr<std::shared_ptr<OpKernel>> {
    ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> k,
                     KernelRegistry::Global()->CreateKernel(LocalCpuDevice(), "CPU", n.props_ptr()));
    return std::shared_ptr<OpKernel>(std::move(k));
  };
  auto e = Executor::Create(std::move(p), std::move(g));
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? std::move(e).value() : nullptr;
}

// Runs one step of `e` and waits for it: its status, or DeadlineExceeded after `limit`.
// `cm` (null: a manager of its own) cancels the step.
inline Status RunSync(const Executor& e, CancellationManager* cm = nullptr,
                      std::chrono::seconds limit = std::chrono::seconds(20)) {
  CancellationManager own;
  Executor::Args args;
  args.step.device = LocalCpuDevice();
  args.step.cancellation = cm != nullptr ? cm : &own;
  auto done = std::make_shared<Notification>();
  auto result = std::make_shared<Status>();
  e.RunAsync(args, [done, result](const Status& s, std::vector<NodeExecStats>) {
    *result = s;
    done->Notify();
  });
  if (!done->WaitFor(limit)) return errors::DeadlineExceeded("test step did not finish within ", limit.count(), " s");
  return *result;
}

}  // namespace dflow::executor_test
