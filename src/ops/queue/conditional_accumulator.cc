#include "ops/queue/conditional_accumulator.h"

#include <algorithm>
#include <cstring>

#include "base/logging.h"
#include "base/threadpool.h"

namespace dflow {
namespace {

template <typename T>
void AddInto(Tensor* accum, const Tensor& grad) {
  T* a = accum->data<T>();
  const T* g = grad.data<T>();
  const int64_t n = accum->NumElements();
  for (int64_t i = 0; i < n; ++i) a[i] += g[i];
}

template <typename T>
void Scale(Tensor* t, T factor) {
  T* a = t->data<T>();
  const int64_t n = t->NumElements();
  for (int64_t i = 0; i < n; ++i) a[i] *= factor;
}

const char* ReductionName(ConditionalAccumulator::Reduction r) {
  return r == ConditionalAccumulator::Reduction::kMean ? "MEAN" : "SUM";
}

}  // namespace

ConditionalAccumulator::ConditionalAccumulator(std::string name, DType dtype, PartialTensorShape shape,
                                               Reduction reduction, int64_t max_per_step)
    : name_(std::move(name)),
      dtype_(dtype),
      shape_(std::move(shape)),
      reduction_(reduction),
      max_per_step_(max_per_step) {}

std::string ConditionalAccumulator::DebugString() const { return absl::StrCat("ConditionalAccumulator '", name_, "'"); }

Status ConditionalAccumulator::MatchesAttrs(DType dtype, const PartialTensorShape& shape, Reduction reduction,
                                            int64_t max_per_step) const {
  if (dtype != dtype_) {
    return errors::InvalidArgument("Shared accumulator '", name_, "' has dtype ", DTypeString(dtype_),
                                   " but requested dtype was ", DTypeString(dtype));
  }
  if (!(shape == shape_)) {
    return errors::InvalidArgument("Shared accumulator '", name_, "' has shape ", shape_.DebugString(),
                                   " but requested shape was ", shape.DebugString());
  }
  if (reduction != reduction_) {
    return errors::InvalidArgument("Shared accumulator '", name_, "' has reduction_type ", ReductionName(reduction_),
                                   " but requested reduction_type was ", ReductionName(reduction));
  }
  if (max_per_step != max_per_step_) {
    return errors::InvalidArgument("Shared accumulator '", name_, "' has max_gradients_per_step ", max_per_step_,
                                   " but requested max_gradients_per_step was ", max_per_step);
  }
  return absl::OkStatus();
}

StatusOr<bool> ConditionalAccumulator::ApplyGrad(int64_t local_step, const Tensor& grad) {
  if (grad.dtype() != dtype_) {
    return errors::InvalidArgument("Cannot apply a ", DTypeString(grad.dtype()), " gradient to ", DebugString(),
                                   " of dtype ", DTypeString(dtype_));
  }
  if (!shape_.IsCompatibleWith(grad.shape())) {
    return errors::InvalidArgument("Shape mismatch: expected ", shape_.DebugString(), ", got ",
                                   grad.shape().DebugString(), " (a gradient applied to ", DebugString(), ")");
  }
  TakerList finished;
  {
    std::lock_guard<std::mutex> l(mu_);
    const bool stale = local_step < global_step_;
    if (stale || (max_per_step_ >= 0 && counter_ >= max_per_step_)) {
      ++dropped_;
      // Every dropped gradient is counted; the log says so at 1, 2, 4, 8, ... drops.
      if ((dropped_ & (dropped_ - 1)) == 0) {
        LOG(INFO)
            << DebugString() << " dropped a "
            << (stale ? absl::StrCat("stale gradient (local_step ", local_step, " < global step ", global_step_, ")")
                      : absl::StrCat("surplus gradient (", max_per_step_, " are there for step ", global_step_, ")"))
            << "; " << dropped_ << " dropped so far";
      }
      return false;
    }
    if (counter_ == 0) {
      ASSIGN_OR_RETURN(accum_, Tensor::Allocate(dtype_, grad.shape()));
      std::memcpy(accum_.raw_data(), grad.raw_data(), grad.TotalBytes());
    } else {
      if (accum_.shape() != grad.shape()) {
        return errors::InvalidArgument("Shape mismatch: expected ", accum_.shape().DebugString(), ", got ",
                                       grad.shape().DebugString(), " (the gradients ", DebugString(),
                                       " holds for this step have the former shape)");
      }
      if (dtype_ == DT_FLOAT) AddInto<float>(&accum_, grad);
      else AddInto<double>(&accum_, grad);
    }
    ++counter_;
    FlushLocked(&finished);
  }
  Complete(&finished);
  return true;
}

Status ConditionalAccumulator::TakeLocked(Tensor* out) {
  if (reduction_ == Reduction::kMean && counter_ > 1) {
    if (dtype_ == DT_FLOAT) Scale<float>(&accum_, 1.0f / static_cast<float>(counter_));
    else Scale<double>(&accum_, 1.0 / static_cast<double>(counter_));
  }
  *out = std::move(accum_);
  accum_ = Tensor();
  counter_ = 0;
  ++global_step_;
  return absl::OkStatus();
}

void ConditionalAccumulator::FlushLocked(TakerList* finished) {
  while (!takers_.empty() && counter_ >= takers_.front().num_required) {
    Taker& t = takers_.front();
    t.status = TakeLocked(&t.result);
    finished->splice(finished->end(), takers_, takers_.begin());
  }
}

void ConditionalAccumulator::TakeGrad(int32_t num_required, CancellationManager* cm, DoneFn done) {
  TakerList finished;
  {
    std::lock_guard<std::mutex> l(mu_);
    Taker t;
    t.id = next_id_++;
    t.num_required = std::max<int32_t>(num_required, 1);
    t.done = std::move(done);
    const int64_t id = t.id;
    takers_.push_back(std::move(t));
    FlushLocked(&finished);
    auto it = std::find_if(takers_.begin(), takers_.end(), [id](const Taker& x) { return x.id == id; });
    if (it != takers_.end() && cm != nullptr) {
      // It waits: its step's cancellation ends the wait.
      std::weak_ptr<ConditionalAccumulator> weak = weak_from_this();
      Status cancelled = errors::Cancelled("TakeGrad operation on ", DebugString(), " was cancelled");
      it->cm = cm;
      it->token = cm->NewToken();
      it->registered = cm->RegisterCallback(it->token, [weak, id, cancelled] {
        if (auto a = weak.lock()) a->Abandon(id, cancelled);
      });
      if (!it->registered) {
        it->status = cancelled;
        finished.splice(finished.end(), takers_, it);
      }
    }
  }
  Complete(&finished);
}

void ConditionalAccumulator::Abandon(int64_t id, const Status& status) {
  TakerList finished;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = std::find_if(takers_.begin(), takers_.end(), [id](const Taker& x) { return x.id == id; });
    if (it == takers_.end()) return;  // it completed already
    it->status = status;
    finished.splice(finished.end(), takers_, it);
    // A taker behind it that needs fewer gradients may be served now.
    FlushLocked(&finished);
  }
  Complete(&finished, /*defer_others=*/true, id);
}

void ConditionalAccumulator::Complete(TakerList* finished, bool defer_others, int64_t self_id) {
  auto finish = [](Taker& t) {
    if (t.registered) t.cm->DeregisterCallback(t.token);
    DoneFn done = std::move(t.done);
    done(t.status, std::move(t.result));
  };
  for (Taker& t : *finished) {
    if (defer_others && t.id != self_id) {
      // Cancellation callbacks must stay short: others' completions run on the pool.
      ThreadPool::Default()->Schedule([finish, t = std::move(t)]() mutable { finish(t); });
    } else {
      finish(t);
    }
  }
  finished->clear();
}

void ConditionalAccumulator::SetGlobalStep(int64_t step) {
  std::lock_guard<std::mutex> l(mu_);
  if (step < global_step_) {
    LOG(WARNING) << "Attempt to set the global step of " << DebugString() << " to a smaller value: " << global_step_
                 << " >= " << step;
  }
  global_step_ = step;
}

int32_t ConditionalAccumulator::num_accumulated() {
  std::lock_guard<std::mutex> l(mu_);
  return counter_;
}

int64_t ConditionalAccumulator::global_step() {
  std::lock_guard<std::mutex> l(mu_);
  return global_step_;
}

int64_t ConditionalAccumulator::num_dropped() {
  std::lock_guard<std::mutex> l(mu_);
  return dropped_;
}

}  // namespace dflow
