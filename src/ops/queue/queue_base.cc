#include "ops/queue/queue_base.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_join.h"
#include "base/threadpool.h"
#include "ops/state/tensor_rows.h"

namespace dflow {
namespace {

std::string TypesString(const std::vector<DType>& types) {
  return absl::StrJoin(types, ", ", [](std::string* o, DType t) { o->append(DTypeString(t)); });
}

std::string ShapesString(const std::vector<TensorShape>& shapes) {
  if (shapes.empty()) return "unconstrained";
  return absl::StrJoin(shapes, ", ", [](std::string* o, const TensorShape& s) { o->append(s.DebugString()); });
}

// Row `i` of `batch` as a tensor of the row's shape, sharing the batch's buffer.
Tensor Row(const Tensor& batch, int64_t i) {
  TensorShape s;
  for (int d = 1; d < batch.dims(); ++d) s.AddDimUnchecked(batch.dim_size(d));
  return batch.Slice(i, i + 1).value().Reshaped(s).value();
}

}  // namespace

QueueBase::QueueBase(std::string kind, std::string name, std::vector<DType> types, std::vector<TensorShape> shapes,
                     int64_t capacity)
    : kind_(std::move(kind)),
      name_(std::move(name)),
      types_(std::move(types)),
      shapes_(std::move(shapes)),
      capacity_(capacity) {}

std::string QueueBase::DebugString() const { return absl::StrCat(kind_, " '", name_, "'"); }

Status QueueBase::ValidateTuple(const Tuple& element, absl::string_view op) const {
  if (element.size() != types_.size()) {
    return errors::InvalidArgument(op, ": ", DebugString(), " has ", types_.size(), " components, but ", element.size(),
                                   " were given");
  }
  for (size_t i = 0; i < element.size(); ++i) {
    if (element[i].dtype() != types_[i]) {
      return errors::InvalidArgument(op, ": type mismatch in component ", i, " of ", DebugString(), ": expected ",
                                     DTypeString(types_[i]), ", got ", DTypeString(element[i].dtype()));
    }
    if (specified_shapes() && element[i].shape() != shapes_[i]) {
      return errors::InvalidArgument(op, ": shape mismatch in component ", i, " of ", DebugString(), ": expected ",
                                     shapes_[i].DebugString(), ", got ", element[i].shape().DebugString());
    }
  }
  return absl::OkStatus();
}

Status QueueBase::ValidateManyTuple(const Tuple& batch, absl::string_view op) const {
  if (batch.size() != types_.size()) {
    return errors::InvalidArgument(op, ": ", DebugString(), " has ", types_.size(), " components, but ", batch.size(),
                                   " were given");
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    const Tensor& t = batch[i];
    if (t.dtype() != types_[i]) {
      return errors::InvalidArgument(op, ": type mismatch in component ", i, " of ", DebugString(), ": expected ",
                                     DTypeString(types_[i]), ", got ", DTypeString(t.dtype()));
    }
    if (t.dims() < 1) {
      return errors::InvalidArgument(op, ": component ", i, " must be at least a vector (a batch of elements), ",
                                     "but has shape ", t.shape().DebugString());
    }
    if (t.dim_size(0) != batch[0].dim_size(0)) {
      return errors::InvalidArgument(op, ": component ", i, " has ", t.dim_size(0), " elements (shape ",
                                     t.shape().DebugString(), ") but component 0 has ", batch[0].dim_size(0));
    }
    if (specified_shapes()) {
      bool match = t.dims() == shapes_[i].dims() + 1;
      for (int d = 1; match && d < t.dims(); ++d) match = t.dim_size(d) == shapes_[i].dim_size(d - 1);
      if (!match) {
        return errors::InvalidArgument(op, ": shape mismatch in component ", i, " of ", DebugString(),
                                       ": expected elements of shape ", shapes_[i].DebugString(),
                                       ", got a batch of shape ", t.shape().DebugString());
      }
    }
  }
  return absl::OkStatus();
}

Status QueueBase::MatchesAttrs(absl::string_view kind, const std::vector<DType>& types,
                               const std::vector<TensorShape>& shapes, int64_t capacity) const {
  if (kind != kind_) {
    return errors::InvalidArgument("Shared queue '", name_, "' is a ", kind_, ", not a ", kind);
  }
  if (types != types_) {
    return errors::InvalidArgument("Shared queue '", name_, "' has component types [", TypesString(types_),
                                   "] but requested component types were [", TypesString(types), "]");
  }
  if (shapes != shapes_) {
    return errors::InvalidArgument("Shared queue '", name_, "' has component shapes [", ShapesString(shapes_),
                                   "] but requested component shapes were [", ShapesString(shapes), "]");
  }
  if (capacity != capacity_) {
    return errors::InvalidArgument("Shared queue '", name_, "' has capacity ", capacity_,
                                   " but requested capacity was ", capacity);
  }
  return absl::OkStatus();
}

void QueueBase::Enqueue(Tuple element, const WaitOptions& wait, DoneFn done) {
  Attempt a;
  a.kind = Kind::kEnqueue;
  a.tuple = std::move(element);
  a.done = std::move(done);
  Start(std::move(a), /*enqueue_side=*/true, wait);
}

void QueueBase::EnqueueMany(Tuple batch, const WaitOptions& wait, DoneFn done) {
  const int64_t rows = batch.empty() ? 0 : batch[0].dim_size(0);
  if (rows == 0) {  // nothing to add, as in TensorFlow (even when closed)
    done(absl::OkStatus(), {});
    return;
  }
  Attempt a;
  a.kind = Kind::kEnqueueMany;
  a.tuple = std::move(batch);
  a.count = rows;
  a.done = std::move(done);
  Start(std::move(a), /*enqueue_side=*/true, wait);
}

void QueueBase::Dequeue(const WaitOptions& wait, DoneFn done) {
  Attempt a;
  a.kind = Kind::kDequeue;
  a.done = std::move(done);
  Start(std::move(a), /*enqueue_side=*/false, wait);
}

void QueueBase::DequeueMany(int64_t n, const WaitOptions& wait, DoneFn done) {
  Attempt a;
  a.kind = Kind::kDequeueMany;
  a.count = n;
  a.budget = wait.memory_budget;
  a.done = std::move(done);
  Start(std::move(a), /*enqueue_side=*/false, wait);
}

void QueueBase::Close(bool cancel_pending_enqueues, const WaitOptions& wait, DoneFn done) {
  if (!cancel_pending_enqueues) {
    Attempt a;
    a.kind = Kind::kClose;
    a.done = std::move(done);
    Start(std::move(a), /*enqueue_side=*/true, wait);
    return;
  }
  AttemptList finished;
  {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
    for (Attempt& a : enqueues_) a.status = errors::Cancelled("Queue '", name_, "' is already closed.");
    finished.splice(finished.end(), enqueues_);
    FlushLocked(&finished);
  }
  Complete(&finished);
  done(absl::OkStatus(), {});
}

int64_t QueueBase::Size() {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int64_t>(StorageSize());
}

bool QueueBase::IsClosed() {
  std::lock_guard<std::mutex> l(mu_);
  return closed_;
}

void QueueBase::Start(Attempt a, bool enqueue_side, const WaitOptions& wait) {
  const Kind kind = a.kind;
  AttemptList finished;
  {
    std::lock_guard<std::mutex> l(mu_);
    const int64_t id = next_id_++;
    a.id = id;
    AttemptList& list = enqueue_side ? enqueues_ : dequeues_;
    list.push_back(std::move(a));
    FlushLocked(&finished);
    auto it = std::find_if(list.begin(), list.end(), [id](const Attempt& x) { return x.id == id; });
    if (it != list.end()) {
      // It waits: arm its cancellation and its deadline.
      const char* what = kind == Kind::kClose ? "Close" : enqueue_side ? "Enqueue" : "Dequeue";
      std::weak_ptr<QueueBase> weak = weak_from_this();
      if (wait.cm != nullptr) {
        it->cm = wait.cm;
        it->token = wait.cm->NewToken();
        Status cancelled = errors::Cancelled(what, " operation on ", DebugString(), " was cancelled");
        it->registered = wait.cm->RegisterCallback(it->token, [weak, id, cancelled] {
          if (auto q = weak.lock()) q->Abandon(id, cancelled);
        });
        if (!it->registered) {
          it->status = cancelled;
          if (!enqueue_side) PutBackLocked(&*it);
          finished.splice(finished.end(), list, it);
          FlushLocked(&finished);
          it = list.end();
        }
      }
      if (it != list.end() && wait.timeout_ms >= 0) {
        const int64_t ms = wait.timeout_ms;
        Status timed_out = errors::DeadlineExceeded(what, " operation on ", DebugString(), " timed out after ", ms,
                                                    " ms (timeout_ms)");
        const int64_t micros = std::min<int64_t>(ms, INT64_MAX / 1000) * 1000;
        it->timer = Timer::Global()->Schedule(micros, [weak, id, timed_out] {
          if (auto q = weak.lock()) q->Abandon(id, timed_out);
        });
      }
    }
  }
  Complete(&finished);
}

void QueueBase::FlushLocked(AttemptList* finished) {
  for (;;) {
    bool progress = false;
    if (!enqueues_.empty()) {
      Progress p = RunEnqueueSide(&enqueues_.front());
      progress |= p != Progress::kNone;
      if (p == Progress::kComplete) finished->splice(finished->end(), enqueues_, enqueues_.begin());
    }
    if (!dequeues_.empty()) {
      Progress p = RunDequeueSide(&dequeues_.front());
      progress |= p != Progress::kNone;
      if (p == Progress::kComplete) finished->splice(finished->end(), dequeues_, dequeues_.begin());
    }
    if (!progress) return;
  }
}

QueueBase::Progress QueueBase::RunEnqueueSide(Attempt* a) {
  auto has_room = [this] { return capacity_ < 0 || static_cast<int64_t>(StorageSize()) < capacity_; };
  switch (a->kind) {
    case Kind::kClose:
      if (closed_) a->status = errors::Cancelled("Queue '", name_, "' is already closed.");
      closed_ = true;
      return Progress::kComplete;
    case Kind::kEnqueue:
      if (closed_) {
        a->status = errors::Cancelled(DebugString(), " is closed.");
        return Progress::kComplete;
      }
      if (!has_room()) return Progress::kNone;
      Push(std::move(a->tuple));
      return Progress::kComplete;
    case Kind::kEnqueueMany: {
      if (closed_) {
        a->status = errors::Cancelled(DebugString(), " is closed.");
        return Progress::kComplete;
      }
      bool any = false;
      while (a->pushed < a->count && has_room()) {
        Tuple element;
        element.reserve(a->tuple.size());
        for (const Tensor& t : a->tuple) element.push_back(Row(t, a->pushed));
        Push(std::move(element));
        ++a->pushed;
        any = true;
      }
      if (a->pushed == a->count) {
        a->tuple.clear();
        return Progress::kComplete;
      }
      return any ? Progress::kSome : Progress::kNone;
    }
    default:
      a->status = errors::Internal("A dequeue among the enqueues of ", DebugString());
      return Progress::kComplete;
  }
}

QueueBase::Progress QueueBase::RunDequeueSide(Attempt* a) {
  const int64_t remaining = a->count - static_cast<int64_t>(a->taken.size());
  if (closed_ && static_cast<int64_t>(StorageSize()) < remaining) {
    a->status = errors::OutOfRange(ClosedInsufficient(remaining, StorageSize()));
    PutBackLocked(a);
    return Progress::kComplete;
  }
  const int64_t k = std::min<int64_t>(static_cast<int64_t>(Available()), remaining);
  for (int64_t i = 0; i < k; ++i) a->taken.push_back(Pop());
  if (static_cast<int64_t>(a->taken.size()) == a->count) return Progress::kComplete;
  return k > 0 ? Progress::kSome : Progress::kNone;
}

std::string QueueBase::ClosedInsufficient(int64_t requested, size_t size) const {
  return absl::StrCat(DebugString(), " is closed and has insufficient elements (requested ", requested,
                      ", current size ", size, ")");
}

void QueueBase::PutBackLocked(Attempt* a) {
  for (auto it = a->taken.rbegin(); it != a->taken.rend(); ++it) Restore(std::move(*it));
  a->taken.clear();
}

void QueueBase::Abandon(int64_t id, const Status& status) {
  AttemptList finished;
  {
    std::lock_guard<std::mutex> l(mu_);
    bool found = false;
    for (AttemptList* list : {&enqueues_, &dequeues_}) {
      auto it = std::find_if(list->begin(), list->end(), [id](const Attempt& x) { return x.id == id; });
      if (it == list->end()) continue;
      it->status = status;
      if (list == &dequeues_) PutBackLocked(&*it);
      finished.splice(finished.end(), *list, it);
      found = true;
      break;
    }
    if (!found) return;  // it completed already
    // Its leaving may let others progress (elements put back, a close behind an enqueue).
    FlushLocked(&finished);
  }
  Complete(&finished, /*defer_others=*/true, id);
}

QueueBase::Tuple QueueBase::BuildResult(Attempt* a) {
  if (a->kind == Kind::kDequeue) return std::move(a->taken[0]);
  Tuple out;
  for (size_t c = 0; c < types_.size(); ++c) {
    TensorShape s;
    Status st = s.AddDim(a->count);
    for (int d = 0; st.ok() && d < shapes_[c].dims(); ++d) st = s.AddDim(shapes_[c].dim_size(d));
    StatusOr<Tensor> t = st.ok() ? Tensor::Allocate(types_[c], s, a->budget) : StatusOr<Tensor>(st);
    if (!t.ok()) {
      // The batch cannot be made (a memory budget, a size past the limits): the elements go back
      // to the front of the queue, in order, and whoever waits for them may take them.
      a->status = errors::Annotate(t.status(), absl::StrCat("DequeueMany from ", DebugString(), ": "));
      AttemptList finished;
      {
        std::lock_guard<std::mutex> l(mu_);
        PutBackLocked(a);
        FlushLocked(&finished);
      }
      Complete(&finished, /*defer_others=*/true, /*self_id=*/-1);
      return {};
    }
    const int64_t row = shapes_[c].num_elements();
    for (int64_t i = 0; i < a->count; ++i) CopyRow(a->taken[i][c], 0, &*t, i, row);
    out.push_back(std::move(t).value());
  }
  return out;
}

void QueueBase::Complete(AttemptList* finished, bool defer_others, int64_t self_id) {
  auto finish = [](std::shared_ptr<QueueBase> q, Attempt& a) {
    if (a.timer != 0) Timer::Global()->Cancel(a.timer);
    if (a.registered) a.cm->DeregisterCallback(a.token);
    Tuple result;
    if (a.status.ok() && (a.kind == Kind::kDequeue || a.kind == Kind::kDequeueMany)) result = q->BuildResult(&a);
    DoneFn done = std::move(a.done);
    done(a.status, std::move(result));
  };
  std::shared_ptr<QueueBase> self = shared_from_this();
  for (Attempt& a : *finished) {
    if (defer_others && a.id != self_id) {
      ThreadPool::Default()->Schedule([self, finish, a = std::move(a)]() mutable { finish(self, a); });
    } else {
      finish(self, a);
    }
  }
  finished->clear();
}

}  // namespace dflow
