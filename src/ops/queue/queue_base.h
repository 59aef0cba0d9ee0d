// QueueBase: a queue of tuples of tensors (one tensor per component) shared by name in a
// device's ResourceMgr — the state behind FIFOQueueV2 and RandomShuffleQueueV2.
//
// Blocking follows TensorFlow: an enqueue waits while the queue is full, a dequeue while it has
// too few elements. A waiting operation holds no thread: it is an "attempt" parked in the queue
// and completed (its DoneFn called exactly once) when it can make progress, when its step is
// cancelled (Cancelled), when its timeout passes (DeadlineExceeded), or when the queue is
// closed. Attempts are served in arrival order on each side. DequeueMany takes elements as
// they come (so n may exceed the capacity) and puts them back if it then fails; EnqueueMany
// adds elements as room appears.
//
// Closing: later enqueues fail with Cancelled ("... is closed."); dequeues are served while
// enough elements remain, then fail with OutOfRange ("... is closed and has insufficient
// elements (requested n, current size k)"). Close waits for the enqueues that arrived before
// it, unless cancel_pending_enqueues, which fails them at once.
//
// Thread-safe. DoneFns run on the thread that completed the attempt, with no lock held.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tensor/memory_budget.h"
#include "framework/cancellation.h"
#include "framework/resource_mgr.h"
#include "ops/queue/timer.h"
#include "tensor/tensor.h"

namespace dflow {

class QueueBase : public ResourceBase, public std::enable_shared_from_this<QueueBase> {
 public:
  using Tuple = std::vector<Tensor>;
  // The status, and for dequeues the components (batched along a new dimension 0 for
  // DequeueMany).
  using DoneFn = std::function<void(const Status&, Tuple)>;

  // How an operation may wait: `cm` (may be null) cancels it; timeout_ms < 0 waits without a
  // deadline.
  struct WaitOptions {
    CancellationManager* cm = nullptr;
    int64_t timeout_ms = -1;
    // DequeueMany's batch is charged to it (StepParams::memory_budget); null: not counted.
    std::shared_ptr<MemoryBudget> memory_budget;
  };

  // `kind` is "FIFOQueue" or "RandomShuffleQueue"; `shapes` is empty (unconstrained) or one
  // fully defined shape per component; capacity < 0 means unbounded.
  QueueBase(std::string kind, std::string name, std::vector<DType> types, std::vector<TensorShape> shapes,
            int64_t capacity);
  ~QueueBase() override = default;

  const std::string& kind() const { return kind_; }
  const std::string& name() const { return name_; }
  const std::vector<DType>& component_types() const { return types_; }
  const std::vector<TensorShape>& component_shapes() const { return shapes_; }
  bool specified_shapes() const { return !shapes_.empty(); }
  int64_t capacity() const { return capacity_; }
  std::string DebugString() const override;

  // InvalidArgument naming `op` and the component whose count, dtype or shape does not fit.
  Status ValidateTuple(const Tuple& element, absl::string_view op) const;
  // The same for a batch: every component has the same dimension 0 and rows that fit.
  Status ValidateManyTuple(const Tuple& batch, absl::string_view op) const;
  // Whether a node declaring these attrs may share this queue; InvalidArgument says what differs.
  Status MatchesAttrs(absl::string_view kind, const std::vector<DType>& types, const std::vector<TensorShape>& shapes,
                      int64_t capacity) const;

  // The caller validated the tuples.
  void Enqueue(Tuple element, const WaitOptions& wait, DoneFn done);
  void EnqueueMany(Tuple batch, const WaitOptions& wait, DoneFn done);
  void Dequeue(const WaitOptions& wait, DoneFn done);
  // n >= 1; needs specified_shapes().
  void DequeueMany(int64_t n, const WaitOptions& wait, DoneFn done);
  void Close(bool cancel_pending_enqueues, const WaitOptions& wait, DoneFn done);

  int64_t Size();
  bool IsClosed();

 protected:
  // The element store, guarded by mu_.
  virtual size_t StorageSize() const = 0;
  virtual void Push(Tuple element) = 0;
  // How many elements a dequeue may take now.
  virtual size_t Available() const = 0;
  virtual Tuple Pop() = 0;
  // Puts back an element that a failed dequeue had taken, where it would be taken next.
  virtual void Restore(Tuple element) = 0;

  bool closed_locked() const { return closed_; }
  mutable std::mutex mu_;

 private:
  enum class Kind { kEnqueue, kEnqueueMany, kClose, kDequeue, kDequeueMany };
  enum class Progress { kNone, kSome, kComplete };

  struct Attempt {
    int64_t id = 0;
    Kind kind;
    Tuple tuple;               // kEnqueue: the element; kEnqueueMany: the batch
    int64_t count = 1;         // kEnqueueMany: rows of the batch; kDequeueMany: n
    int64_t pushed = 0;        // kEnqueueMany: rows added so far
    std::vector<Tuple> taken;  // dequeues: elements taken so far
    DoneFn done;
    CancellationManager* cm = nullptr;
    std::shared_ptr<MemoryBudget> budget;  // kDequeueMany: charged with the batch
    CancellationManager::Token token = -1;
    bool registered = false;
    Timer::Id timer = 0;
    Status status;
  };
  using AttemptList = std::list<Attempt>;

  // Queues `a`, serves what can be served and arms the cancellation and the timeout of `a` if it
  // still waits.
  void Start(Attempt a, bool enqueue_side, const WaitOptions& wait);
  // Serves the head attempts of both sides until neither can progress; moves finished ones to
  // `finished`. Requires mu_.
  void FlushLocked(AttemptList* finished);
  Progress RunEnqueueSide(Attempt* a);
  Progress RunDequeueSide(Attempt* a);
  // Ends attempt `id` (if it still waits) with `status`: from a cancellation or a timeout.
  void Abandon(int64_t id, const Status& status);
  void PutBackLocked(Attempt* a);
  // Disarms, builds dequeue results and calls the DoneFns. `defer_others`: run the DoneFns of
  // attempts other than `self_id` on the thread pool (used from the timer thread and from
  // cancellation callbacks, which must stay short).
  void Complete(AttemptList* finished, bool defer_others = false, int64_t self_id = 0);
  Tuple BuildResult(Attempt* a);
  std::string ClosedInsufficient(int64_t requested, size_t size) const;

  const std::string kind_;
  const std::string name_;
  const std::vector<DType> types_;
  const std::vector<TensorShape> shapes_;
  const int64_t capacity_;

  bool closed_ = false;   // guarded by mu_
  AttemptList enqueues_;  // guarded by mu_; enqueues and closes, in arrival order
  AttemptList dequeues_;  // guarded by mu_
  int64_t next_id_ = 1;   // guarded by mu_
};

}  // namespace dflow
