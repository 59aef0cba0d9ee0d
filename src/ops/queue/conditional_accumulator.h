// ConditionalAccumulator: averages (or sums) gradients from several replicas for one global step,
// the state behind ResourceConditionalAccumulator and its ops (TensorFlow's semantics).
//
// - ApplyGrad(local_step, g): g is added when local_step >= the accumulator's global step. An
//   older (stale) gradient is dropped — not an error — and counted (num_dropped), since a
//   replica that computed it from parameters of an earlier step must not pollute this one.
// - TakeGrad(n): waits until at least n gradients were accumulated, then returns their mean
//   (MEAN) or sum (SUM), forgets them and increments the global step, so gradients computed for
//   the step just taken are stale from now on. Waiting takers are served in arrival order. A
//   waiting take holds no thread; its step's cancellation (an error elsewhere, a deadline,
//   Session::Close) ends it with Cancelled and leaves the accumulated gradients in place.
// - max_per_step (dflow's addition; < 0: no limit, TensorFlow's behaviour): gradients beyond
//   this many for the current step are dropped and counted like stale ones, so a take of
//   num_required == max_per_step aggregates exactly that many (the surplus of backup workers
//   does not sneak into the step).
// - SetGlobalStep(s): sets the global step (the chief does it when sync training starts, from
//   the global_step variable). A smaller value than the current one is allowed and logged, as
//   TensorFlow does.
//
// Shared by name in a device's ResourceMgr, like queues. Thread-safe; DoneFns run with no lock
// held, on the thread that completed the take.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "framework/cancellation.h"
#include "framework/resource_mgr.h"
#include "tensor/tensor.h"
#include "tensor/tensor_shape.h"

namespace dflow {

class ConditionalAccumulator : public ResourceBase, public std::enable_shared_from_this<ConditionalAccumulator> {
 public:
  static constexpr char kKind[] = "ConditionalAccumulator";
  enum class Reduction { kMean, kSum };
  using DoneFn = std::function<void(const Status&, Tensor)>;

  // `dtype` is float or double (the kernels check); `shape` may be partially known.
  ConditionalAccumulator(std::string name, DType dtype, PartialTensorShape shape, Reduction reduction,
                         int64_t max_per_step = -1);

  std::string DebugString() const override;
  DType dtype() const { return dtype_; }
  const PartialTensorShape& shape() const { return shape_; }
  Reduction reduction() const { return reduction_; }
  // Whether a node declaring these attrs may share this accumulator; InvalidArgument says what
  // differs.
  Status MatchesAttrs(DType dtype, const PartialTensorShape& shape, Reduction reduction,
                      int64_t max_per_step = -1) const;

  // True when `grad` was accumulated, false when it was stale (or surplus) and dropped. InvalidArgument for a
  // gradient whose dtype or shape does not fit (the accumulator's shape, and that of the
  // gradients accumulated for this step).
  StatusOr<bool> ApplyGrad(int64_t local_step, const Tensor& grad);
  // Completes `done` with the aggregate once `num_required` (>= 1) gradients are there. `cm`
  // (may be null) cancels the wait.
  void TakeGrad(int32_t num_required, CancellationManager* cm, DoneFn done);
  void SetGlobalStep(int64_t step);

  int32_t num_accumulated();
  int64_t global_step();
  // Stale and surplus gradients dropped since the accumulator was made.
  int64_t num_dropped();

 private:
  struct Taker {
    int64_t id = 0;
    int32_t num_required = 1;
    DoneFn done;
    CancellationManager* cm = nullptr;
    CancellationManager::Token token = -1;
    bool registered = false;
    Status status;
    Tensor result;
  };
  using TakerList = std::list<Taker>;

  // Serves the head takers while enough gradients are there. Requires mu_.
  void FlushLocked(TakerList* finished);
  // The aggregate of what was accumulated; resets the count and bumps the step. Requires mu_.
  Status TakeLocked(Tensor* out);
  void Abandon(int64_t id, const Status& status);
  // Calls the DoneFns; with defer_others, those of takers other than self_id on the thread pool.
  void Complete(TakerList* finished, bool defer_others = false, int64_t self_id = 0);

  const std::string name_;
  const DType dtype_;
  const PartialTensorShape shape_;
  const Reduction reduction_;
  const int64_t max_per_step_;

  std::mutex mu_;
  Tensor accum_;             // guarded by mu_; uninitialized while counter_ == 0
  int32_t counter_ = 0;      // guarded by mu_
  int64_t global_step_ = 0;  // guarded by mu_
  int64_t dropped_ = 0;      // guarded by mu_
  TakerList takers_;         // guarded by mu_
  int64_t next_id_ = 1;      // guarded by mu_
};

}  // namespace dflow
