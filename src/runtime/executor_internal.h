// The executor's precomputed view of a graph: node items grouped into frames. Internal to
// src/runtime/executor*.cc.
//
// Frames: the root frame holds every node outside while loops. Each while loop is a frame
// (named by its Enter nodes' frame_name) whose nodes run once per iteration. Enter moves a
// value from a frame into its child frame (iteration 0, or every iteration for a constant
// Enter), Exit moves it back to the parent, NextIteration to the next iteration. A frame's
// nodes are numbered locally, so one iteration's state is a pending count and an input slot
// array sized for that frame only.
#pragma once

#include <atomic>
#include <cstdint>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/executor.h"

namespace dflow::executor_internal {

struct OutEdge {
  int dst;        // item index
  int dst_slot;   // input slot, or kControlSlot
  int src_slot;   // output slot, or kControlSlot
  bool last_use;  // the last data edge reading src_slot: the value may be moved
  // Copied from the destination's item once all items are built, so that delivering reads no
  // other node's item: whether it is a Merge, its local index, and the slot's index in an
  // iteration's input array (-1 for a control edge).
  bool dst_merge = false;
  int dst_local = 0;
  int entry = -1;
  // From a Const to a node of the root frame that is not a Merge: the slot holds the constant
  // from the start of every step (ExecutorImpl::bound_constants_), and the edge is not delivered
  // or counted at run time.
  bool bound = false;
};

// kSend: a _Send runs even when its input is dead, to pass the deadness on to its _Recv.
enum class NodeKind : uint8_t { kOrdinary, kMerge, kSwitch, kEnter, kExit, kNextIteration, kSend };

struct NodeItem {
  const Node* node = nullptr;
  std::shared_ptr<OpKernel> kernel;
  NodeKind kind = NodeKind::kOrdinary;
  bool is_async = false;
  bool expensive = false;
  const Tensor* const_value = nullptr;  // the kernel's const_value(): the node runs no kernel
  int frame = 0;                        // the frame template this node runs in
  int local = 0;                        // index within its frame
  int num_inputs = 0;
  int input_start = 0;           // offset of its inputs within an iteration's slot array
  int pending_init = 0;          // data + control inputs (for a Merge: control inputs only)
  int merge_forward_inputs = 0;  // Merge: data inputs that are not back edges
  int child_frame = -1;          // Enter: the frame it enters
  bool constant_enter = false;
  int exit_index = -1;                // Exit: its index in its frame's exits
  std::vector<uint8_t> input_is_ref;  // 1 where the kernel takes the variable itself
  std::vector<OutEdge> out;
};

struct Iteration;  // executor_state.cc

struct FrameInfo {
  std::string name;
  int parent = -1;
  std::vector<int> items;             // by local index
  std::vector<int32_t> pending_init;  // each item's NodeItem::pending_init, by local index
  int total_inputs = 0;
  int num_enters = 0;      // Enter nodes that deliver into an instance of this frame
  std::vector<int> exits;  // Exit items of this frame
};

class ExecutorImpl : public Executor {
 public:
  ExecutorImpl(std::unique_ptr<Graph> graph, ExecutorParams params);  // executor_state.cc
  ~ExecutorImpl() override;

  Status Init();
  void RunAsync(const Args& args, DoneCallback done) const override;
  const Graph& graph() const override { return *graph_; }

  // Whether a ready node goes to another thread: only kernels that say they are expensive, and
  // only while they are measured to take at least kExpensiveNanos (a thread hand-off costs
  // tens of microseconds on a virtual machine; a small MatMul takes one).
  bool IsExpensive(int item) const {
    return items_[item].expensive && cost_ns_[item].load(std::memory_order_relaxed) >= kExpensiveNanos;
  }
  // Records how long an expensive kernel's Compute took: the first measurement replaces the
  // initial guess (expensive), later ones move a running average.
  void RecordCost(int item, int64_t nanos) const {
    std::atomic<int64_t>& c = cost_ns_[item];
    const int64_t old = c.load(std::memory_order_relaxed);
    c.store(old == kUnmeasured ? nanos : old + (nanos - old) / 8, std::memory_order_relaxed);
  }
  static constexpr int64_t kExpensiveNanos = 10000;
  static constexpr int64_t kUnmeasured = INT64_MAX;

  std::unique_ptr<Graph> graph_;
  ExecutorParams params_;
  std::vector<NodeItem> items_;
  std::unique_ptr<std::atomic<int64_t>[]> cost_ns_;  // per item; kUnmeasured until it ran
  std::vector<FrameInfo> frames_;                    // frames_[0] is the root
  std::vector<int> roots_;                           // root-frame items with nothing to wait for
  bool has_loops_ = false;
  // The root frame's input slots that hold a constant in every step (the bound out edges of
  // Consts that have no control inputs: such a Const always runs and is never dead).
  struct BoundConstant {
    int entry;
    const Tensor* value;
  };
  std::vector<BoundConstant> bound_constants_;

  // Root-frame iterations of finished steps, reset for the next: a step takes one (or makes one)
  // and gives it back when it ends OK. At most kRootPoolSize are kept (steps that run at once).
  std::unique_ptr<Iteration> TakeRootIteration() const;
  void ReturnRootIteration(std::unique_ptr<Iteration> it) const;
  static constexpr size_t kRootPoolSize = 4;
  mutable std::mutex root_pool_mu_;
  mutable std::vector<std::unique_ptr<Iteration>> root_pool_;

 private:
  // Init's steps. `index` maps a node id to its item.
  Status AssignFrames(const std::vector<Node*>& order, const std::vector<int>& index);
  Status InitItem(int i, const std::vector<int>& index);
  void BindConstants();
  bool Waits(const NodeItem& item) const {
    return item.kind == NodeKind::kMerge ? (item.pending_init > 0 || item.merge_forward_inputs > 0)
                                         : item.pending_init > 0;
  }
};

}  // namespace dflow::executor_internal
