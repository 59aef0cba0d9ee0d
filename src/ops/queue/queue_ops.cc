// Queue ops with TensorFlow's names and attrs: FIFOQueueV2, RandomShuffleQueueV2 (output a
// handle, creating the queue in the device's ResourceMgr on first use under (container,
// shared_name), or without a shared_name under the session's container and the node name:
// private to a session where the runtime keeps sessions apart, see MakeSessionResourceHandle), QueueEnqueueV2, QueueEnqueueManyV2, QueueDequeueV2,
// QueueDequeueManyV2, QueueCloseV2 (asynchronous: they wait inside the queue without holding a
// thread, cancelled with their step), QueueSizeV2 and QueueIsClosedV2.
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/queue/fifo_queue.h"
#include "ops/queue/random_shuffle_queue.h"
#include "ops/register_all.h"
#include "ops/state/resource_util.h"

namespace dflow {
namespace {

// Reads the attrs every queue constructor has.
struct QueueAttrs {
  std::vector<DType> types;
  std::vector<TensorShape> shapes;
  int64_t capacity = -1;
  std::string container, shared_name;
};

Status ReadQueueAttrs(OpKernelConstruction* c, QueueAttrs* a) {
  const std::string& node = c->node().name;
  RETURN_IF_ERROR(c->GetAttr("component_types", &a->types));
  RETURN_IF_ERROR(c->GetAttr("capacity", &a->capacity));
  RETURN_IF_ERROR(c->GetAttr("container", &a->container));
  RETURN_IF_ERROR(c->GetAttr("shared_name", &a->shared_name));
  std::vector<PartialTensorShape> shapes;
  RETURN_IF_ERROR(c->GetAttr("shapes", &shapes));
  if (a->types.empty()) return errors::InvalidArgument(c->node().op, " ", node, ": component_types is empty");
  if (!shapes.empty() && shapes.size() != a->types.size()) {
    return errors::InvalidArgument(c->node().op, " ", node, ": shapes has ", shapes.size(),
                                   " entries but component_types has ", a->types.size());
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    StatusOr<TensorShape> s = shapes[i].ToTensorShape();
    if (!s.ok()) {
      return errors::InvalidArgument(c->node().op, " ", node, ": the shape of component ", i, " (",
                                     shapes[i].DebugString(), ") must be fully defined");
    }
    a->shapes.push_back(*s);
  }
  return absl::OkStatus();
}

class FIFOQueueOp : public OpKernel {
 public:
  explicit FIFOQueueOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(ReadQueueAttrs(c, &attrs_)); }

  void Compute(OpKernelContext* ctx) override {
    ResourceHandle h = MakeSessionResourceHandle(ctx, attrs_.container, attrs_.shared_name, FIFOQueue::kKind);
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<QueueBase> q,
                       ctx->step().device->resource_manager()->LookupOrCreate<QueueBase>(
                           h.container, h.name, [&]() -> StatusOr<std::shared_ptr<QueueBase>> {
                             return std::make_shared<FIFOQueue>(h.name, attrs_.types, attrs_.shapes, attrs_.capacity);
                           }));
    OP_REQUIRES_OK(ctx, q->MatchesAttrs(FIFOQueue::kKind, attrs_.types, attrs_.shapes, attrs_.capacity));
    SetHandleOutput(ctx, 0, std::move(h));
  }

 private:
  QueueAttrs attrs_;
};

class RandomShuffleQueueOp : public OpKernel {
 public:
  explicit RandomShuffleQueueOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ReadQueueAttrs(c, &attrs_));
    c->SetStatus(c->GetAttr("min_after_dequeue", &min_after_dequeue_));
    c->SetStatus(c->GetAttr("seed", &seed_));
    c->SetStatus(c->GetAttr("seed2", &seed2_));
    if (min_after_dequeue_ < 0) {
      c->SetStatus(errors::InvalidArgument("RandomShuffleQueueV2 ", name(), ": min_after_dequeue ", min_after_dequeue_,
                                           " must be >= 0"));
    }
    if (attrs_.capacity >= 0 && min_after_dequeue_ >= attrs_.capacity) {
      c->SetStatus(errors::InvalidArgument("RandomShuffleQueueV2 ", name(), ": min_after_dequeue ", min_after_dequeue_,
                                           " must be < capacity ", attrs_.capacity));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    ResourceHandle h = MakeSessionResourceHandle(ctx, attrs_.container, attrs_.shared_name, RandomShuffleQueue::kKind);
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<QueueBase> q,
                       ctx->step().device->resource_manager()->LookupOrCreate<QueueBase>(
                           h.container, h.name, [&]() -> StatusOr<std::shared_ptr<QueueBase>> {
                             return std::make_shared<RandomShuffleQueue>(h.name, attrs_.types, attrs_.shapes,
                                                                         attrs_.capacity, min_after_dequeue_, seed_,
                                                                         seed2_);
                           }));
    OP_REQUIRES_OK(ctx, q->MatchesAttrs(RandomShuffleQueue::kKind, attrs_.types, attrs_.shapes, attrs_.capacity));
    auto* rsq = static_cast<RandomShuffleQueue*>(q.get());  // the kind matched
    OP_REQUIRES(ctx, rsq->min_after_dequeue() == min_after_dequeue_,
                errors::InvalidArgument("Shared queue '", h.name, "' has min_after_dequeue ", rsq->min_after_dequeue(),
                                        " but requested min_after_dequeue was ", min_after_dequeue_));
    SetHandleOutput(ctx, 0, std::move(h));
  }

 private:
  QueueAttrs attrs_;
  int64_t min_after_dequeue_ = 0, seed_ = 0, seed2_ = 0;
};

// The queue named by input 0.
StatusOr<std::shared_ptr<QueueBase>> GetQueue(OpKernelContext* ctx) {
  ASSIGN_OR_RETURN(const ResourceHandle* h, HandleFromInput(ctx, 0));
  StatusOr<std::shared_ptr<QueueBase>> q = LookupResource<QueueBase>(ctx, *h);
  if (q.status().code() == absl::StatusCode::kNotFound) {
    return errors::NotFound(ctx->op_kernel().type_string(), " ", ctx->node_name(), ": queue ", h->DebugString(),
                            " does not exist");
  }
  return q;
}

// Base of the blocking queue kernels: finds the queue, then runs Start, which must end by
// calling `done` (directly or from the queue's DoneFn).
class QueueAccessOp : public AsyncOpKernel {
 public:
  explicit QueueAccessOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    if (c->node().attrs.count("timeout_ms")) c->SetStatus(c->GetAttr("timeout_ms", &timeout_ms_));
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) final {
    StatusOr<std::shared_ptr<QueueBase>> q = GetQueue(ctx);
    if (!q.ok()) {
      ctx->SetStatus(q.status());
      done();
      return;
    }
    QueueBase::WaitOptions wait;
    wait.cm = ctx->step().cancellation;
    wait.timeout_ms = timeout_ms_;
    wait.memory_budget = ctx->step().memory_budget;
    // A waiting operation keeps its queue alive, even if the ResourceMgr drops it meanwhile,
    // so that it still ends (cancelled, timed out or served).
    std::shared_ptr<QueueBase> queue = std::move(q).value();
    QueueBase* raw = queue.get();
    Start(ctx, raw, wait, [done = std::move(done), queue = std::move(queue)] { done(); });
  }

 protected:
  virtual void Start(OpKernelContext* ctx, QueueBase* q, const QueueBase::WaitOptions& wait, DoneCallback done) = 0;

  // A DoneFn that reports the status (and, for dequeues, sets the outputs) and finishes.
  static QueueBase::DoneFn Finisher(OpKernelContext* ctx, DoneCallback done, bool set_outputs) {
    return [ctx, done = std::move(done), set_outputs](const Status& s, QueueBase::Tuple t) {
      if (!s.ok()) {
        ctx->SetStatus(s);
      } else if (set_outputs) {
        if (static_cast<int>(t.size()) != ctx->num_outputs()) {
          ctx->SetStatus(errors::Internal("The queue returned ", t.size(), " components for ", ctx->num_outputs(),
                                          " outputs"));
        } else {
          for (size_t i = 0; i < t.size(); ++i) ctx->set_output(static_cast<int>(i), std::move(t[i]));
        }
      }
      done();
    };
  }

 private:
  int64_t timeout_ms_ = -1;
};

template <bool kMany>
class QueueEnqueueOp : public QueueAccessOp {
 public:
  using QueueAccessOp::QueueAccessOp;

 protected:
  void Start(OpKernelContext* ctx, QueueBase* q, const QueueBase::WaitOptions& wait, DoneCallback done) override {
    QueueBase::Tuple tuple;
    for (int i = 1; i < ctx->num_inputs(); ++i) tuple.push_back(ctx->input(i));
    const std::string op = absl::StrCat(type_string(), " ", name());
    Status s = kMany ? q->ValidateManyTuple(tuple, op) : q->ValidateTuple(tuple, op);
    if (!s.ok()) {
      ctx->SetStatus(s);
      done();
      return;
    }
    if constexpr (kMany) q->EnqueueMany(std::move(tuple), wait, Finisher(ctx, std::move(done), false));
    else q->Enqueue(std::move(tuple), wait, Finisher(ctx, std::move(done), false));
  }
};

// Checks the node's component_types against the queue's.
Status CheckComponentTypes(OpKernelContext* ctx, const QueueBase& q) {
  std::vector<DType> want(ctx->num_outputs());
  for (int i = 0; i < ctx->num_outputs(); ++i) want[i] = ctx->op_kernel().output_type(i);
  if (want != q.component_types()) {
    std::string have, asked;
    for (DType t : q.component_types()) absl::StrAppend(&have, have.empty() ? "" : ", ", DTypeString(t));
    for (DType t : want) absl::StrAppend(&asked, asked.empty() ? "" : ", ", DTypeString(t));
    return errors::InvalidArgument(ctx->op_kernel().type_string(), " ", ctx->node_name(), ": ", q.DebugString(),
                                   " has component types [", have, "] but the op's component_types are [", asked, "]");
  }
  return absl::OkStatus();
}

class QueueDequeueOp : public QueueAccessOp {
 public:
  using QueueAccessOp::QueueAccessOp;

 protected:
  void Start(OpKernelContext* ctx, QueueBase* q, const QueueBase::WaitOptions& wait, DoneCallback done) override {
    Status s = CheckComponentTypes(ctx, *q);
    if (!s.ok()) {
      ctx->SetStatus(s);
      done();
      return;
    }
    q->Dequeue(wait, Finisher(ctx, std::move(done), true));
  }
};

class QueueDequeueManyOp : public QueueAccessOp {
 public:
  using QueueAccessOp::QueueAccessOp;

 protected:
  void Start(OpKernelContext* ctx, QueueBase* q, const QueueBase::WaitOptions& wait, DoneCallback done) override {
    Status s = CheckComponentTypes(ctx, *q);
    const Tensor& n = ctx->input(1);
    if (s.ok() && (n.dtype() != DT_INT32 || n.dims() != 0)) {
      s = errors::InvalidArgument(type_string(), " ", name(), ": n must be an int32 scalar, got shape ",
                                  n.shape().DebugString());
    }
    if (s.ok() && n.scalar<int32_t>() < 0) {
      s = errors::InvalidArgument(type_string(), " ", name(), ": n = ", n.scalar<int32_t>(), " must be >= 0");
    }
    if (s.ok() && !q->specified_shapes()) {
      s = errors::InvalidArgument(type_string(), " ", name(), ": ", q->DebugString(),
                                  " has no component shapes; DequeueMany requires the queue's shapes attr");
    }
    if (!s.ok()) {
      ctx->SetStatus(s);
      done();
      return;
    }
    const int64_t count = n.scalar<int32_t>();
    if (count == 0) {  // empty batches, at once (as TensorFlow)
      for (size_t c = 0; c < q->component_types().size(); ++c) {
        TensorShape shape{0};
        for (int64_t d : q->component_shapes()[c].dim_sizes()) shape.AddDimUnchecked(d);
        ctx->set_output(static_cast<int>(c), Tensor(q->component_types()[c], shape));
      }
      done();
      return;
    }
    q->DequeueMany(count, wait, Finisher(ctx, std::move(done), true));
  }
};

class QueueCloseOp : public QueueAccessOp {
 public:
  explicit QueueCloseOp(OpKernelConstruction* c) : QueueAccessOp(c) {
    c->SetStatus(c->GetAttr("cancel_pending_enqueues", &cancel_pending_enqueues_));
  }

 protected:
  void Start(OpKernelContext* ctx, QueueBase* q, const QueueBase::WaitOptions& wait, DoneCallback done) override {
    q->Close(cancel_pending_enqueues_, wait, Finisher(ctx, std::move(done), false));
  }

 private:
  bool cancel_pending_enqueues_ = false;
};

class QueueSizeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<QueueBase> q, GetQueue(ctx));
    const int64_t size = q->Size();
    OP_REQUIRES(ctx, size <= INT32_MAX,
                errors::OutOfRange("QueueSizeV2 ", name(), ": the size ", size, " of ", q->DebugString(),
                                   " does not fit in int32"));
    ctx->set_output(0, Tensor(static_cast<int32_t>(size)));
  }
};

class QueueIsClosedOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<QueueBase> q, GetQueue(ctx));
    ctx->set_output(0, Tensor(q->IsClosed()));
  }
};

Status QueueDequeueManyShape(InferenceContext* c) {
  // Batches of n elements: the rank is known only from the queue, which the graph does not see.
  PartialTensorShape n;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &n));
  return UnknownShape(c);
}

}  // namespace

void RegisterQueueOps() {
  RegisterOp(OpDefBuilder("FIFOQueueV2")
                 .Output("handle: resource")
                 .Attr("component_types: list(type) >= 1")
                 .Attr("shapes: list(shape) >= 0 = []")
                 .Attr("capacity: int = -1")
                 .Attr("container: string = ''")
                 .Attr("shared_name: string = ''")
                 .SetIsStateful()
                 .SetShapeFn(ScalarShape)
                 .Doc("A queue that produces elements in first-in first-out order."));
  RegisterOp(OpDefBuilder("RandomShuffleQueueV2")
                 .Output("handle: resource")
                 .Attr("component_types: list(type) >= 1")
                 .Attr("shapes: list(shape) >= 0 = []")
                 .Attr("capacity: int = -1")
                 .Attr("min_after_dequeue: int = 0")
                 .Attr("seed: int = 0")
                 .Attr("seed2: int = 0")
                 .Attr("container: string = ''")
                 .Attr("shared_name: string = ''")
                 .SetIsStateful()
                 .SetShapeFn(ScalarShape)
                 .Doc("A queue that produces elements in random order."));
  for (const char* op : {"QueueEnqueueV2", "QueueEnqueueManyV2"}) {
    RegisterOp(OpDefBuilder(op)
                   .Input("handle: resource")
                   .Input("components: Tcomponents")
                   .Attr("Tcomponents: list(type) >= 1")
                   .Attr("timeout_ms: int = -1")
                   .SetShapeFn(NoOutputs)
                   .Doc("Enqueues one element (or, for Many, the rows of a batch); waits while the queue is full."));
  }
  RegisterOp(OpDefBuilder("QueueDequeueV2")
                 .Input("handle: resource")
                 .Output("components: component_types")
                 .Attr("component_types: list(type) >= 1")
                 .Attr("timeout_ms: int = -1")
                 .SetShapeFn(UnknownShape)
                 .Doc("Dequeues one element; waits while the queue is empty."));
  RegisterOp(OpDefBuilder("QueueDequeueManyV2")
                 .Input("handle: resource")
                 .Input("n: int32")
                 .Output("components: component_types")
                 .Attr("component_types: list(type) >= 1")
                 .Attr("timeout_ms: int = -1")
                 .SetShapeFn(QueueDequeueManyShape)
                 .Doc("Dequeues n elements, concatenated along a new dimension 0."));
  RegisterOp(OpDefBuilder("QueueCloseV2")
                 .Input("handle: resource")
                 .Attr("cancel_pending_enqueues: bool = false")
                 .SetShapeFn(NoOutputs)
                 .Doc("Closes the queue: later enqueues fail, dequeues drain it."));
  RegisterOp(OpDefBuilder("QueueSizeV2")
                 .Input("handle: resource")
                 .Output("size: int32")
                 .SetShapeFn(ScalarShape)
                 .Doc("The number of elements in the queue."));
  RegisterOp(OpDefBuilder("QueueIsClosedV2")
                 .Input("handle: resource")
                 .Output("is_closed: bool")
                 .SetShapeFn(ScalarShape)
                 .Doc("Whether the queue is closed."));

  RegisterKernel<FIFOQueueOp>(KernelBuilder("FIFOQueueV2"));
  RegisterKernel<RandomShuffleQueueOp>(KernelBuilder("RandomShuffleQueueV2"));
  RegisterKernel<QueueEnqueueOp<false>>(KernelBuilder("QueueEnqueueV2"));
  RegisterKernel<QueueEnqueueOp<true>>(KernelBuilder("QueueEnqueueManyV2"));
  RegisterKernel<QueueDequeueOp>(KernelBuilder("QueueDequeueV2"));
  RegisterKernel<QueueDequeueManyOp>(KernelBuilder("QueueDequeueManyV2"));
  RegisterKernel<QueueCloseOp>(KernelBuilder("QueueCloseV2"));
  RegisterKernel<QueueSizeOp>(KernelBuilder("QueueSizeV2"));
  RegisterKernel<QueueIsClosedOp>(KernelBuilder("QueueIsClosedV2"));
  for (const char* op : {"FIFOQueueV2", "RandomShuffleQueueV2", "QueueEnqueueV2", "QueueEnqueueManyV2",
                         "QueueDequeueV2", "QueueDequeueManyV2", "QueueCloseV2", "QueueSizeV2", "QueueIsClosedV2"}) {
    RegisterNoGradient(op);
  }
}

}  // namespace dflow
