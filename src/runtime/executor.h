// Executor: runs one graph (a step's graph on one device) by dataflow: a node runs when all its
// inputs and control dependencies are there.
//
// Scheduling: cheap ready nodes run inline on the thread that made them ready (a chain of small
// ops costs no thread hand-offs); when several nodes become ready at once, expensive ones go to
// the thread pool so that independent branches run in parallel. The pool is the one owner of
// the cores. Dead values (untaken control-flow branches) propagate: a node with a dead input
// does not run and its outputs are dead — except a _Send, which runs and passes the deadness to
// its _Recv (ctx->input_is_dead(0)), so that a branch spanning devices stays dead.
//
// When a step fails or is cancelled, its rendezvous (args.step.rendezvous) is aborted with the
// error, so that receives waiting in it — in this graph and in the other partitions of the step
// that share it — end instead of waiting for sends that will never come.
//
// An Executor is immutable after Create and may run many steps concurrently.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "base/threadpool.h"
#include "framework/op_kernel.h"
#include "framework/session.h"
#include "graph/graph.h"

namespace dflow {

struct ExecutorParams {
  Device* device = nullptr;
  // The kernel for a node: a new one for stateless nodes, a shared one for stateful nodes so
  // that their state (e.g. a random generator) persists across steps.
  std::function<StatusOr<std::shared_ptr<OpKernel>>(const Node&)> create_kernel;
};

class Executor {
 public:
  // InvalidArgument when the graph has a cycle; kernel creation errors name the node.
  static StatusOr<std::unique_ptr<Executor>> Create(ExecutorParams params, std::unique_ptr<Graph> graph);
  virtual ~Executor() = default;

  struct Args {
    StepParams step;
    bool collect_stats = false;
    ThreadPool* pool = nullptr;  // ThreadPool::Default() when null
    // When set (an Env::NowMonotonicMicros() time, never the wall clock: a clock jump must not
    // end or stretch a step), nodes that would start later are skipped and the step ends with
    // DeadlineExceeded; kernels that wait are cancelled through the session. Only meaningful in
    // this process: a deadline sent to another task travels as the time left.
    int64_t deadline_micros = 0;
  };
  using DoneCallback = std::function<void(const Status&, std::vector<NodeExecStats> stats)>;

  // Runs a step. Ready nodes start on the calling thread. `done` is called exactly once, with the
  // first error (annotated with the node) or OK. If args.step.cancellation is cancelled, nodes not
  // yet started are skipped and the step ends with the status given to Abort (or Cancelled).
  virtual void RunAsync(const Args& args, DoneCallback done) const = 0;

  virtual const Graph& graph() const = 0;
};

}  // namespace dflow
