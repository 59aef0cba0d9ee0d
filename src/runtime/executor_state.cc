// One step of an Executor: per-(frame, iteration) pending counts and input slots, inline and
// pooled scheduling, dead-value propagation, loops, errors and cancellation.
#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>

#include "base/env.h"
#include "framework/cancellation.h"
#include "framework/device.h"
#include "framework/rendezvous.h"
#include "runtime/executor_internal.h"

namespace dflow::executor_internal {

// The state of one iteration of one frame instance.
struct Iteration {
  explicit Iteration(const FrameInfo& info)
      : pending(new std::atomic<int32_t>[info.items.size()]),
        dead(new std::atomic<int32_t>[info.items.size()]),
        merge_live(new std::atomic<int32_t>[info.items.size()]),
        fired(new std::atomic<uint8_t>[info.items.size()]),
        dead_control(new std::atomic<uint8_t>[info.items.size()]),
        entries(info.total_inputs) {
    Reset(info);
  }
  // Back to the state before the first node ran. The entries are not touched: a step that
  // finished OK cleared each of them (every node's inputs are cleared once it ran); the root
  // frame's bound constants are put back by the executor.
  void Reset(const FrameInfo& info) {
    for (size_t l = 0; l < info.items.size(); ++l) {
      pending[l].store(info.pending_init[l], std::memory_order_relaxed);
      dead[l].store(0, std::memory_order_relaxed);
      merge_live[l].store(-1, std::memory_order_relaxed);
      fired[l].store(0, std::memory_order_relaxed);
      dead_control[l].store(0, std::memory_order_relaxed);
    }
  }
  std::unique_ptr<std::atomic<int32_t>[]> pending;
  std::unique_ptr<std::atomic<int32_t>[]> dead;        // Merge: dead data inputs so far
  std::unique_ptr<std::atomic<int32_t>[]> merge_live;  // Merge: the first live input slot
  std::unique_ptr<std::atomic<uint8_t>[]> fired;       // Merge: already scheduled
  // A control input came from a dead node: this node is dead too (how a branch's ops that
  // depend on the branch pivot only by control become dead).
  std::unique_ptr<std::atomic<uint8_t>[]> dead_control;
  std::vector<TensorValue> entries;
};

ExecutorImpl::ExecutorImpl(std::unique_ptr<Graph> graph, ExecutorParams params)
    : graph_(std::move(graph)), params_(std::move(params)) {}
ExecutorImpl::~ExecutorImpl() = default;

std::unique_ptr<Iteration> ExecutorImpl::TakeRootIteration() const {
  {
    std::lock_guard<std::mutex> l(root_pool_mu_);
    if (!root_pool_.empty()) {
      std::unique_ptr<Iteration> it = std::move(root_pool_.back());
      root_pool_.pop_back();
      return it;
    }
  }
  auto it = std::make_unique<Iteration>(frames_[0]);
  for (const BoundConstant& c : bound_constants_) it->entries[c.entry].borrowed = c.value;
  return it;
}

void ExecutorImpl::ReturnRootIteration(std::unique_ptr<Iteration> it) const {
  it->Reset(frames_[0]);
  for (const BoundConstant& c : bound_constants_) it->entries[c.entry].borrowed = c.value;
  std::lock_guard<std::mutex> l(root_pool_mu_);
  if (root_pool_.size() < kRootPoolSize) root_pool_.push_back(std::move(it));
}

namespace {

// One instance of a frame: the root, or one execution of a while loop.
struct Frame {
  const FrameInfo* info = nullptr;
  Frame* parent = nullptr;
  int64_t parent_iter = 0;
  std::mutex mu;
  std::deque<std::unique_ptr<Iteration>> iters;  // guarded by mu; addresses are stable
  // Nodes ready or running in this frame, plus live child frames.
  std::atomic<int64_t> active{0};
  int pending_enters = 0;                               // guarded by mu
  std::vector<std::pair<int, TensorValue>> invariants;  // constant Enter values; guarded by mu
  std::vector<uint8_t> exit_live;                       // guarded by mu
  bool finished = false;                                // guarded by mu
};

struct Task {
  int item;
  Frame* frame;
  int64_t iter;
};
// The nodes one node made ready: most make none or one, which then cost no heap allocation.
class TaskList {
 public:
  void push_back(const Task& t) {
    if (n_ < kInline) {
      inline_[n_++] = t;
    } else {
      more_.push_back(t);
    }
  }
  size_t size() const { return n_ + more_.size(); }
  bool empty() const { return n_ == 0; }
  const Task& operator[](size_t i) const { return i < kInline ? inline_[i] : more_[i - kInline]; }

 private:
  static constexpr size_t kInline = 4;
  Task inline_[kInline];
  size_t n_ = 0;
  std::vector<Task> more_;
};

// The nodes one thread runs inline, in FIFO order; tasks before `next` have been taken. It is
// emptied whenever it drains, so a long chain keeps it a few entries long.
struct InlineQueue {
  absl::InlinedVector<Task, 8> tasks;
  size_t next = 0;
  bool HasPending() const { return next < tasks.size(); }
};

}  // namespace

class ExecutorState : public std::enable_shared_from_this<ExecutorState> {
 public:
  ExecutorState(const ExecutorImpl* impl, const Executor::Args& args, Executor::DoneCallback done)
      : impl_(impl), args_(args), pool_(args.pool ? args.pool : ThreadPool::Default()), done_(std::move(done)) {
    root_.info = &impl->frames_[0];
    root_.iters.push_back(impl->TakeRootIteration());
    root_iter_ = root_.iters[0].get();
  }

  void Own(std::shared_ptr<ExecutorState> self) { self_ = std::move(self); }

  void Start() {
    if (impl_->items_.empty()) {
      Finish();
      return;
    }
    CancellationManager* cm = args_.step.cancellation;
    if (cm != nullptr) {
      cancel_token_ = cm->NewToken();
      // The callback may outlive the step (it can be running while the step finishes), so it
      // holds the state weakly.
      std::weak_ptr<ExecutorState> weak = weak_from_this();
      if (!cm->RegisterCallback(cancel_token_, [weak] {
            if (auto s = weak.lock()) s->Abort(errors::Cancelled("Step was cancelled"));
          })) {
        Abort(errors::Cancelled("Step was cancelled before it started"));
      }
    }
    outstanding_.store(static_cast<int64_t>(impl_->roots_.size()), std::memory_order_relaxed);
    TaskList ready;
    for (int id : impl_->roots_) ready.push_back({id, &root_, 0});
    InlineQueue inline_ready;
    ScheduleReady(ready, &inline_ready);
    RunInline(&inline_ready);
  }

  // Ends the step with `s` (the first status wins). Receives of this step wait in the
  // rendezvous — here and, through the shared rendezvous, in the step's other partitions, whose
  // sends this step may now never make — so the rendezvous is aborted too.
  void Abort(const Status& s) {
    bool first = false;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (status_.ok()) {
        status_ = s;
        first = true;
      }
    }
    aborted_.store(true, std::memory_order_release);
    if (first && args_.step.rendezvous != nullptr) args_.step.rendezvous->StartAbort(s);
  }

 private:
  Iteration* GetIteration(Frame* f, int64_t iter) {
    if (f == &root_) return root_iter_;
    std::lock_guard<std::mutex> l(f->mu);
    return f->iters[iter].get();
  }

  void RunInline(InlineQueue* inline_ready) {
    // FIFO over a growing vector: cheap successors run here, in order.
    while (inline_ready->HasPending()) {
      Task t = inline_ready->tasks[inline_ready->next++];
      if (!inline_ready->HasPending()) {
        inline_ready->tasks.clear();
        inline_ready->next = 0;
      }
      Process(t, inline_ready);
    }
  }

  void Process(const Task& task, InlineQueue* inline_ready) {
    const NodeItem& item = impl_->items_[task.item];
    Iteration* iter = GetIteration(task.frame, task.iter);
    TensorValue* in = iter->entries.data() + item.input_start;
    TaskList ready;
    if (args_.deadline_micros > 0 && !aborted_.load(std::memory_order_relaxed) &&
        Env::Default()->NowMonotonicMicros() > args_.deadline_micros) {
      Abort(errors::DeadlineExceeded("The step passed its deadline before node '", item.node->name(), "' ran"));
    }
    if (aborted_.load(std::memory_order_acquire)) {
      if (item.kind != NodeKind::kMerge) ClearInputs(item, in);
      NodeDone(task, ready, inline_ready);
      return;
    }
    if (item.kind == NodeKind::kMerge) {
      // Merge runs here: the first live input (or dead, when every forward input was dead).
      absl::InlinedVector<TensorValue, 2> outputs(2);
      int live = iter->merge_live[item.local].load(std::memory_order_acquire);
      if (live >= 0) {
        outputs[0] = std::move(in[live]);
        // Every slot is left empty for the next step that reuses this iteration.
        ClearInputs(item, in);
        if (outputs[0].ref != nullptr && !item.input_is_ref[live]) {
          Status s = Deref(&outputs[0]);
          if (!s.ok()) {
            Fail(item, s);
            NodeDone(task, ready, inline_ready);
            return;
          }
        }
        outputs[1].tensor = Tensor(static_cast<int32_t>(live));
      } else {
        outputs[0].is_dead = outputs[1].is_dead = true;
      }
      if (args_.collect_stats) RecordStats(item, Env::Default()->NowMicros());
      Propagate(item, task, &outputs, &ready, /*node_dead=*/live < 0);
      NodeDone(task, ready, inline_ready);
      return;
    }
    bool any_dead = iter->dead_control[item.local].load(std::memory_order_acquire) != 0;
    for (int i = 0; i < item.num_inputs; ++i) any_dead |= in[i].is_dead;
    // A ControlTrigger runs even when its inputs are dead, as in TensorFlow: while-loop gradients
    // use it to join a cond's branches, one of which is always dead.
    if (any_dead && item.node->op() == "ControlTrigger") any_dead = false;
    // A dead node reads no variable: an untaken branch may refer to one not initialized yet.
    for (int i = 0; i < item.num_inputs && !any_dead; ++i) {
      if (in[i].ref != nullptr && !item.input_is_ref[i]) {
        Status s = Deref(&in[i]);
        if (!s.ok()) {
          Fail(item, s);
          ClearInputs(item, in);
          NodeDone(task, ready, inline_ready);
          return;
        }
      }
    }
    if (any_dead && item.kind == NodeKind::kSend) {
      // A _Send runs dead (dead input or dead control input) and tells its _Recv so, so that
      // an untaken branch stays dead across devices.
      if (item.num_inputs > 0) in[0].is_dead = true;
    } else if (any_dead) {
      absl::InlinedVector<TensorValue, 2> outputs(item.kernel->num_outputs());
      for (auto& o : outputs) o.is_dead = true;
      ClearInputs(item, in);
      Propagate(item, task, &outputs, &ready, /*node_dead=*/true);
      NodeDone(task, ready, inline_ready);
      return;
    }
    int64_t start = args_.collect_stats ? Env::Default()->NowMicros() : 0;
    if (item.const_value != nullptr) {
      // A Const: its consumers read the kernel's own tensor.
      ClearInputs(item, in);
      absl::InlinedVector<TensorValue, 2> outputs(1);
      outputs[0].borrowed = item.const_value;
      if (args_.collect_stats) RecordStats(item, start);
      Propagate(item, task, &outputs, &ready);
      NodeDone(task, ready, inline_ready);
      return;
    }
    if (item.is_async) {
      // A kernel that finishes within ComputeAsync (an iterator over data in memory) hands its
      // successors to this thread's queue, as a synchronous kernel does; a later completion
      // runs them from the completing thread. `phase` tells which happened: the first of the
      // callback (kDoneInCall) and this thread (kReturned) to get past kInCall decides.
      struct AsyncCall {
        AsyncCall(const StepParams* step, OpKernel* k, TensorValue* in, int n) : ctx(step, k, in, n) {}
        OpKernelContext ctx;
        std::atomic<int> phase{0};
        TaskList ready;
      };
      enum { kInCall = 0, kDoneInCall = 1, kReturned = 2 };
      auto* call = new AsyncCall(&args_.step, item.kernel.get(), in, item.num_inputs);
      item.kernel->AsAsync()->ComputeAsync(&call->ctx, [this, task, call, in, start] {
        const NodeItem& it = impl_->items_[task.item];
        Complete(it, task, &call->ctx, in, start, &call->ready);
        int expected = kInCall;
        if (call->phase.compare_exchange_strong(expected, kDoneInCall, std::memory_order_acq_rel)) return;
        TaskList r = std::move(call->ready);
        delete call;
        NodeDone(task, r, nullptr);
      });
      int expected = kInCall;
      if (call->phase.compare_exchange_strong(expected, kReturned, std::memory_order_acq_rel)) return;
      ready = std::move(call->ready);
      delete call;
      NodeDone(task, ready, inline_ready);
      return;
    }
    OpKernelContext ctx(&args_.step, item.kernel.get(), in, item.num_inputs);
    if (item.expensive) {
      const auto t0 = std::chrono::steady_clock::now();
      item.kernel->Compute(&ctx);
      impl_->RecordCost(
          task.item,
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
    } else {
      item.kernel->Compute(&ctx);
    }
    Complete(item, task, &ctx, in, start, &ready);
    NodeDone(task, ready, inline_ready);
  }

  static Status Deref(TensorValue* v) {
    // A plain value is wanted: read a snapshot of the variable.
    Var* var = v->ref.get();
    std::lock_guard<std::mutex> l(*var->mu());
    if (!var->is_initialized_locked()) return var->UninitializedError();
    v->tensor = *var->tensor();
    v->ref.reset();
    return absl::OkStatus();
  }

  void Complete(const NodeItem& item, const Task& task, OpKernelContext* ctx, TensorValue* in, int64_t start,
                TaskList* ready) {
    ClearInputs(item, in);
    if (args_.collect_stats) RecordStats(item, start);
    if (!ctx->status().ok()) {
      Fail(item, ctx->status());
      return;
    }
    auto& outputs = ctx->outputs();
    for (int i = 0; i < static_cast<int>(outputs.size()); ++i) {
      TensorValue& v = outputs[i];
      if (v.is_dead) continue;
      DType want = item.kernel->output_type(i);
      if (IsRefType(want)) {
        if (v.ref == nullptr) {
          Fail(item, errors::Internal("Kernel did not produce reference output ", i));
          return;
        }
      } else if (!v.tensor.IsInitialized()) {
        Fail(item, errors::Internal("Kernel did not produce output ", i));
        return;
      } else if (v.tensor.dtype() != want) {
        Fail(item, errors::Internal("Kernel produced output ", i, " of type ", DTypeString(v.tensor.dtype()),
                                    " instead of ", DTypeString(want)));
        return;
      }
    }
    Propagate(item, task, &outputs, ready);
  }

  // Delivers a node's outputs to its consumers in the right frame and iteration.
  void Propagate(const NodeItem& item, const Task& task, absl::InlinedVector<TensorValue, 2>* outputs, TaskList* ready,
                 bool node_dead = false) {
    Frame* frame = task.frame;
    int64_t iter = task.iter;
    bool dead = !outputs->empty() && (*outputs)[0].is_dead;
    switch (item.kind) {
      case NodeKind::kEnter: {
        Frame* child = EnterFrame(task, item.child_frame);
        if (item.constant_enter && !dead) {
          // Loop invariant: visible in every iteration, present and future.
          int64_t n;
          {
            std::lock_guard<std::mutex> l(child->mu);
            child->invariants.emplace_back(task.item, (*outputs)[0]);
            n = static_cast<int64_t>(child->iters.size());
          }
          for (int64_t i = 0; i < n; ++i) {
            absl::InlinedVector<TensorValue, 2> copy = *outputs;
            Deliver(item, child, i, &copy, ready);
          }
        } else {
          Deliver(item, child, 0, outputs, ready);
        }
        EnterDelivered(child, ready);
        return;
      }
      case NodeKind::kExit: {
        if (dead) return;  // only the live exit counts; a frame that ends dead says so when done
        {
          std::lock_guard<std::mutex> l(frame->mu);
          frame->exit_live[item.exit_index] = 1;
        }
        Deliver(item, frame->parent, frame->parent_iter, outputs, ready);
        return;
      }
      case NodeKind::kNextIteration: {
        if (dead) return;  // the loop ended: deadness does not start another iteration
        NewIteration(frame, iter + 1, ready);
        Deliver(item, frame, iter + 1, outputs, ready);
        return;
      }
      default: Deliver(item, frame, iter, outputs, ready, node_dead);
    }
  }

  // `node_dead`: the node was skipped because of a dead input (a Switch with one live output is
  // not dead); its control edges make their destinations dead too.
  void Deliver(const NodeItem& item, Frame* frame, int64_t iter, absl::InlinedVector<TensorValue, 2>* outputs,
               TaskList* ready, bool node_dead = false) {
    Iteration* it = GetIteration(frame, iter);
    // Two passes: the values first, then the counts. A locked decrement waits for the stores
    // before it, so interleaved, every store to a slot not in cache (a constant read by thousands
    // of nodes) would be waited for alone; this way their misses overlap. The release of each
    // decrement still publishes every value written before it.
    for (const OutEdge& e : item.out) {
      if (e.bound) {
        continue;
      } else if (e.dst_merge) {
        DeliverToMerge(impl_->items_[e.dst], e, frame, iter, it, outputs, ready);
      } else if (e.entry >= 0) {
        TensorValue& slot = it->entries[e.entry];
        const TensorValue& value = (*outputs)[e.src_slot];
        if (value.borrowed != nullptr) {
          // Slots are empty until their one delivery: a borrowed value is two words.
          slot.borrowed = value.borrowed;
          slot.is_dead = value.is_dead;
        } else if (e.last_use) {
          slot = std::move((*outputs)[e.src_slot]);
        } else {
          slot = value;
        }
      } else if (node_dead) {
        it->dead_control[e.dst_local].store(1, std::memory_order_release);
      }
    }
    for (const OutEdge& e : item.out) {
      if (!e.dst_merge && !e.bound && it->pending[e.dst_local].fetch_sub(1, std::memory_order_acq_rel) == 1) {
        Ready(e.dst, frame, iter, ready);
      }
    }
  }

  void DeliverToMerge(const NodeItem& dst, const OutEdge& e, Frame* frame, int64_t iter, Iteration* it,
                      absl::InlinedVector<TensorValue, 2>* outputs, TaskList* ready) {
    // Sequentially consistent: a control, a dead and a live arrival may race, and one of them
    // must see the others' effects.
    bool can_fire = false;
    if (e.dst_slot == kControlSlot) {
      can_fire = it->pending[dst.local].fetch_sub(1) == 1 &&
                 (it->merge_live[dst.local].load(std::memory_order_acquire) >= 0 ||
                  it->dead[dst.local].load(std::memory_order_acquire) >= dst.merge_forward_inputs);
    } else if ((*outputs)[e.src_slot].is_dead) {
      can_fire = it->dead[dst.local].fetch_add(1) + 1 == dst.merge_forward_inputs &&
                 it->merge_live[dst.local].load(std::memory_order_acquire) < 0 &&
                 it->pending[dst.local].load(std::memory_order_acquire) == 0;
    } else {
      int expected = -1;
      TensorValue& slot = it->entries[dst.input_start + e.dst_slot];
      // Only the first live input is kept; later ones are not read.
      if (it->merge_live[dst.local].load(std::memory_order_acquire) < 0) {
        slot = e.last_use ? std::move((*outputs)[e.src_slot]) : (*outputs)[e.src_slot];
        can_fire = it->merge_live[dst.local].compare_exchange_strong(expected, e.dst_slot) &&
                   it->pending[dst.local].load(std::memory_order_acquire) == 0;
      }
    }
    if (can_fire && it->fired[dst.local].exchange(1) == 0) Ready(e.dst, frame, iter, ready);
  }

  void Ready(int item, Frame* frame, int64_t iter, TaskList* ready) {
    if (frame != &root_) frame->active.fetch_add(1, std::memory_order_acq_rel);
    ready->push_back({item, frame, iter});
  }

  // The instance of `child_frame` entered from task's frame and iteration (created on first use).
  Frame* EnterFrame(const Task& task, int child_frame) {
    std::lock_guard<std::mutex> l(frames_mu_);
    auto key = std::make_tuple(task.frame, task.iter, child_frame);
    auto it = children_.find(key);
    if (it != children_.end()) return it->second.get();
    auto f = std::make_unique<Frame>();
    f->info = &impl_->frames_[child_frame];
    f->parent = task.frame;
    f->parent_iter = task.iter;
    f->pending_enters = f->info->num_enters;
    f->exit_live.assign(f->info->exits.size(), 0);
    f->iters.push_back(std::make_unique<Iteration>(*f->info));
    if (task.frame != &root_) task.frame->active.fetch_add(1, std::memory_order_acq_rel);  // a live child
    Frame* raw = f.get();
    children_.emplace(key, std::move(f));
    return raw;
  }

  void NewIteration(Frame* frame, int64_t iter, TaskList* ready) {
    std::vector<std::pair<int, TensorValue>> invariants;
    {
      std::lock_guard<std::mutex> l(frame->mu);
      if (static_cast<int64_t>(frame->iters.size()) > iter) return;
      frame->iters.push_back(std::make_unique<Iteration>(*frame->info));
      invariants = frame->invariants;
    }
    for (auto& [enter, value] : invariants) {
      absl::InlinedVector<TensorValue, 2> outputs{value};
      Deliver(impl_->items_[enter], frame, iter, &outputs, ready);
    }
  }

  void EnterDelivered(Frame* child, TaskList* ready) {
    {
      std::lock_guard<std::mutex> l(child->mu);
      --child->pending_enters;
    }
    MaybeFrameDone(child, ready);
  }

  // Called when a non-root frame has no work left: exits that never carried a value send a
  // dead one to the parent, and the frame is freed.
  void FrameDone(Frame* f, TaskList* ready) {
    std::vector<int> dead_exits;
    {
      std::lock_guard<std::mutex> l(f->mu);
      for (size_t i = 0; i < f->info->exits.size(); ++i)
        if (!f->exit_live[i]) dead_exits.push_back(f->info->exits[i]);
    }
    Frame* parent = f->parent;
    int64_t parent_iter = f->parent_iter;
    for (int exit : dead_exits) {
      absl::InlinedVector<TensorValue, 2> outputs(1);
      outputs[0].is_dead = true;
      Deliver(impl_->items_[exit], parent, parent_iter, &outputs, ready, /*node_dead=*/true);
    }
    {
      std::lock_guard<std::mutex> l(frames_mu_);
      for (auto it = children_.begin(); it != children_.end(); ++it) {
        if (it->second.get() == f) {
          children_.erase(it);
          break;
        }
      }
    }
    if (parent != &root_ && parent->active.fetch_sub(1, std::memory_order_acq_rel) == 1) MaybeFrameDone(parent, ready);
  }

  // A frame is done once every Enter has delivered and nothing in it is ready or running; the
  // first caller to see that finishes it.
  void MaybeFrameDone(Frame* f, TaskList* ready) {
    bool done;
    {
      std::lock_guard<std::mutex> l(f->mu);
      done = !f->finished && f->pending_enters == 0 && f->active.load() == 0;
      if (done) f->finished = true;
    }
    if (done) FrameDone(f, ready);
  }

  static void ClearValue(TensorValue* v) {
    v->tensor = Tensor();
    v->ref.reset();
    v->borrowed = nullptr;
    v->is_dead = false;
  }
  void ClearInputs(const NodeItem& item, TensorValue* in) {
    for (int i = 0; i < item.num_inputs; ++i) ClearValue(&in[i]);
  }

  void Fail(const NodeItem& item, const Status& s) {
    Abort(errors::Annotate(s, absl::StrCat("[node ", item.node->name(), " (", item.node->op(), ")] ")));
    // Unblocks kernels of this step that wait (queues, receives).
    if (args_.step.cancellation != nullptr) args_.step.cancellation->StartCancel();
  }

  void RecordStats(const NodeItem& item, int64_t start) {
    NodeExecStats s;
    s.node_name = item.node->name();
    s.op = item.node->op();
    s.device = item.node->assigned_device();
    s.start_micros = start;
    s.end_micros = Env::Default()->NowMicros();
    std::lock_guard<std::mutex> l(mu_);
    stats_.push_back(std::move(s));
  }

  // Hands ready nodes out: cheap ones to `inline_ready` (or the pool when there is none),
  // expensive ones to the pool except the last, which this thread keeps — after the cheap ones —
  // when it had nothing else queued: one hand-off (a thread wake-up, tens of microseconds on a
  // virtual machine) fewer than giving every expensive node away.
  void ScheduleReady(const TaskList& ready, InlineQueue* inline_ready) {
    if (ready.empty()) return;
    if (inline_ready == nullptr) {
      // Called from an async completion: run the first here, the rest on the pool.
      for (size_t i = 1; i < ready.size(); ++i) SchedulePool(ready[i]);
      InlineQueue local;
      local.tasks.push_back(ready[0]);
      RunInline(&local);
      return;
    }
    const bool had_work = inline_ready->HasPending();
    const Task* deferred = nullptr;
    for (size_t i = 0; i < ready.size(); ++i) {
      const Task& t = ready[i];
      if (!impl_->IsExpensive(t.item)) {
        inline_ready->tasks.push_back(t);
      } else {
        if (deferred != nullptr) SchedulePool(*deferred);
        deferred = &t;
      }
    }
    if (deferred != nullptr) {
      if (had_work) SchedulePool(*deferred);
      else inline_ready->tasks.push_back(*deferred);
    }
  }

  void SchedulePool(const Task& t) {
    pool_->Schedule([this, t] {
      InlineQueue local;
      local.tasks.push_back(t);
      RunInline(&local);
    });
  }

  void NodeDone(const Task& task, const TaskList& ready, InlineQueue* inline_ready) {
    int64_t delta = static_cast<int64_t>(ready.size()) - 1;
    // Count the new nodes before giving them out, so `outstanding_` cannot reach zero early.
    if (delta > 0) outstanding_.fetch_add(delta, std::memory_order_relaxed);
    TaskList more;
    if (task.frame != &root_ && task.frame->active.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      MaybeFrameDone(task.frame, &more);
      if (!more.empty()) outstanding_.fetch_add(static_cast<int64_t>(more.size()), std::memory_order_relaxed);
    }
    ScheduleReady(ready, inline_ready);
    ScheduleReady(more, inline_ready);
    if (delta < 0 && outstanding_.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish();
  }

  void Finish() {
    if (args_.step.cancellation != nullptr && cancel_token_ >= 0) {
      args_.step.cancellation->DeregisterCallback(cancel_token_);
    }
    Status s;
    std::vector<NodeExecStats> stats;
    {
      std::lock_guard<std::mutex> l(mu_);
      s = status_;
      stats = std::move(stats_);
    }
    {
      std::lock_guard<std::mutex> l(frames_mu_);
      children_.clear();  // frames left by an aborted step
    }
    // The next step reuses the root iteration (its ~100 bytes per input slot, fresh memory
    // every step otherwise). Only after a step that ran to the end: each slot is empty then.
    if (s.ok()) impl_->ReturnRootIteration(std::move(root_.iters.front()));
    Executor::DoneCallback done = std::move(done_);
    std::shared_ptr<ExecutorState> self = std::move(self_);  // released when this returns
    done(s, std::move(stats));
  }

  const ExecutorImpl* impl_;
  Executor::Args args_;
  ThreadPool* pool_;
  Frame root_;
  Iteration* root_iter_;
  std::atomic<int64_t> outstanding_{0};
  std::atomic<bool> aborted_{false};
  CancellationManager::Token cancel_token_ = -1;
  std::mutex mu_;
  Status status_;
  std::vector<NodeExecStats> stats_;
  std::mutex frames_mu_;
  std::map<std::tuple<Frame*, int64_t, int>, std::unique_ptr<Frame>> children_;
  Executor::DoneCallback done_;
  std::shared_ptr<ExecutorState> self_;  // keeps the state alive until Finish
};

void ExecutorImpl::RunAsync(const Args& args, DoneCallback done) const {
  auto state = std::make_shared<ExecutorState>(this, args, std::move(done));
  ExecutorState* raw = state.get();
  raw->Own(std::move(state));
  raw->Start();
}

}  // namespace dflow::executor_internal
