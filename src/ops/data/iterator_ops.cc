// Iterator ops with TensorFlow's names and attrs: IteratorV2 (an iterator resource, initialized
// by MakeIterator), OneShotIterator (initialized on first use from its dataset_factory
// function), MakeIterator and IteratorGetNext.
//
// An iterator is a resource of the device's ResourceMgr under (container, shared_name), or
// without a shared_name under (the session's container, the node's name): private to the
// session that made it where the runtime keeps sessions apart (MakeSessionResourceHandle). GetNext calls are serialized per iterator. The session whose step initialized
// it (StepParams::session_cancellation) stops it when it closes: its background work ends and
// later GetNext calls fail with Cancelled.
#include <atomic>

#include "base/threadpool.h"
#include "framework/function.h"
#include "framework/resource_mgr.h"
#include "framework/shape_inference.h"
#include "ops/data/dataset_kernel.h"
#include "ops/register_all.h"
#include "ops/state/resource_util.h"

namespace dflow {
namespace {

class IteratorResource : public ResourceBase {
 public:
  IteratorResource(std::vector<DType> types, std::vector<PartialTensorShape> shapes)
      : types_(std::move(types)), shapes_(std::move(shapes)) {}
  ~IteratorResource() override {
    Unwatch();
    std::unique_ptr<IteratorBase> it;
    {
      std::lock_guard<std::mutex> l(mu_);
      it = std::move(iterator_);
    }
  }
  std::string DebugString() const override { return "Iterator"; }

  Status CheckStructure(const std::vector<DType>& types, absl::string_view what) const {
    if (types != types_) {
      return errors::InvalidArgument(what, ": the dataset's element types do not match the iterator's (", types.size(),
                                     " vs ", types_.size(), " components or different dtypes)");
    }
    return absl::OkStatus();
  }

  // Starts over with `dataset`. The old iterator (and its background work) is destroyed.
  Status Reset(const DatasetBase& dataset, std::shared_ptr<CancellationManager> session) {
    RETURN_IF_ERROR(CheckStructure(dataset.output_dtypes(), "MakeIterator"));
    ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> it, dataset.MakeIterator());
    Unwatch();
    {
      std::lock_guard<std::mutex> l(mu_);
      std::swap(it, iterator_);
      closed_ = absl::OkStatus();
      may_block_ = dataset.MayBlock();
    }
    it.reset();  // outside the lock: it may join a prefetch thread
    Watch(std::move(session));
    return absl::OkStatus();
  }

  Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) {
    std::lock_guard<std::mutex> l(mu_);
    RETURN_IF_ERROR(closed_);
    if (iterator_ == nullptr) {
      return errors::FailedPrecondition("GetNext() failed because the iterator has not been initialized. Ensure "
                                        "that you have run the initializer operation for this iterator before "
                                        "getting the next element.");
    }
    RETURN_IF_ERROR(iterator_->GetNext(ctx, out, end));
    if (!*end) RETURN_IF_ERROR(CheckElement(*out, types_, shapes_, "IteratorGetNext"));
    return absl::OkStatus();
  }

  // Whether GetNext of the current iterator may wait (true before one is made).
  bool may_block() const { return may_block_.load(std::memory_order_relaxed); }

 private:
  // Closes the iterator when `session` closes.
  void Watch(std::shared_ptr<CancellationManager> session) {
    if (session == nullptr) return;
    CancellationManager::Token token = session->NewToken();
    bool ok = session->RegisterCallback(token, [this] {
      std::unique_ptr<IteratorBase> it;
      {
        std::lock_guard<std::mutex> l(mu_);
        it = std::move(iterator_);
        closed_ = errors::Cancelled("The session that initialized this iterator was closed");
      }
    });
    if (!ok) {
      std::lock_guard<std::mutex> l(mu_);
      iterator_.reset();
      closed_ = errors::Cancelled("The session that initialized this iterator was closed");
      return;
    }
    std::lock_guard<std::mutex> l(watch_mu_);
    session_ = std::move(session);
    token_ = token;
  }
  void Unwatch() {
    std::shared_ptr<CancellationManager> s;
    CancellationManager::Token token;
    {
      std::lock_guard<std::mutex> l(watch_mu_);
      s = std::move(session_);
      token = token_;
    }
    if (s != nullptr) s->DeregisterCallback(token);  // waits for a running callback
  }

  const std::vector<DType> types_;
  const std::vector<PartialTensorShape> shapes_;
  std::mutex mu_;  // serializes GetNext
  std::unique_ptr<IteratorBase> iterator_;
  std::atomic<bool> may_block_{true};
  Status closed_;
  std::mutex watch_mu_;
  std::shared_ptr<CancellationManager> session_;
  CancellationManager::Token token_ = 0;
};

constexpr const char* kKind = "Iterator";

struct IteratorAttrs {
  std::vector<DType> types;
  std::vector<PartialTensorShape> shapes;
  std::string container, shared_name;
};

Status ReadIteratorAttrs(OpKernelConstruction* c, IteratorAttrs* a) {
  RETURN_IF_ERROR(c->GetAttr("output_types", &a->types));
  RETURN_IF_ERROR(c->GetAttr("output_shapes", &a->shapes));
  RETURN_IF_ERROR(c->GetAttr("container", &a->container));
  RETURN_IF_ERROR(c->GetAttr("shared_name", &a->shared_name));
  if (a->types.size() != a->shapes.size()) {
    return errors::InvalidArgument(c->node().op, " ", c->node().name, ": ", a->types.size(), " output_types but ",
                                   a->shapes.size(), " output_shapes");
  }
  return absl::OkStatus();
}

class IteratorHandleOp : public OpKernel {
 public:
  explicit IteratorHandleOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(ReadIteratorAttrs(c, &attrs_)); }
  void Compute(OpKernelContext* ctx) override {
    ResourceHandle h = MakeSessionResourceHandle(ctx, attrs_.container, attrs_.shared_name, kKind);
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<IteratorResource> it,
                       ctx->step().device->resource_manager()->LookupOrCreate<IteratorResource>(
                           h.container, h.name, [&]() -> StatusOr<std::shared_ptr<IteratorResource>> {
                             return std::make_shared<IteratorResource>(attrs_.types, attrs_.shapes);
                           }));
    OP_REQUIRES_OK(ctx, it->CheckStructure(attrs_.types, absl::StrCat("IteratorV2 ", name())));
    SetHandleOutput(ctx, 0, std::move(h));
  }

 private:
  IteratorAttrs attrs_;
};

StatusOr<std::shared_ptr<IteratorResource>> LookupIterator(OpKernelContext* ctx, int input) {
  ASSIGN_OR_RETURN(const ResourceHandle* h, HandleFromInput(ctx, input));
  return LookupResource<IteratorResource>(ctx, *h);
}

class MakeIteratorOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  // Making an iterator may join the old iterator's prefetch thread.
  bool IsExpensive() const override { return true; }
  void Compute(OpKernelContext* ctx) override {
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<const DatasetBase> ds, DatasetFromTensor(ctx->input(0), "dataset"));
    OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<IteratorResource> it, LookupIterator(ctx, 1));
    OP_REQUIRES_OK(ctx, it->Reset(*ds, ctx->step().session_cancellation));
  }
};

class OneShotIteratorOp : public OpKernel {
 public:
  explicit OneShotIteratorOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(ReadIteratorAttrs(c, &attrs_));
    NameAttrList f;
    Status s = c->GetAttr("dataset_factory", &f);
    if (s.ok() && c->function_library() == nullptr) {
      s = errors::Unimplemented("OneShotIterator ", c->node().name, ": no function library to run '", f.name, "'");
    }
    if (s.ok()) {
      StatusOr<std::shared_ptr<const InstantiatedFunction>> fn = c->function_library()->Instantiate(f.name);
      if (fn.ok()) factory_ = *fn;
      s = fn.status();
    }
    c->SetStatus(s);
  }
  bool IsExpensive() const override { return true; }

  void Compute(OpKernelContext* ctx) override {
    ResourceHandle h = MakeSessionResourceHandle(ctx, attrs_.container, attrs_.shared_name, kKind);
    ResourceMgr* rm = ctx->step().device->resource_manager();
    if (!rm->Lookup<IteratorResource>(h.container, h.name).ok()) {
      // Run the factory outside the manager's lock, then store the iterator unless another
      // step stored one meanwhile.
      InstantiatedFunction::Options opts;
      opts.cancellation = ctx->step().cancellation;
      opts.step_id = ctx->step().step_id;
      opts.memory_budget = ctx->step().memory_budget;
      std::vector<Tensor> rets;
      OP_REQUIRES_OK(ctx, factory_->Run(opts, {}, &rets));
      OP_REQUIRES(ctx, rets.size() == 1,
                  errors::InvalidArgument("OneShotIterator ", name(), ": the dataset factory must return one dataset"));
      OP_REQUIRES_ASSIGN(ctx, std::shared_ptr<const DatasetBase> ds, DatasetFromTensor(rets[0], "dataset_factory"));
      auto fresh = std::make_shared<IteratorResource>(attrs_.types, attrs_.shapes);
      OP_REQUIRES_OK(ctx, fresh->Reset(*ds, ctx->step().session_cancellation));
      OP_REQUIRES_OK(ctx, rm->LookupOrCreate<IteratorResource>(h.container, h.name,
                                                               [&]() -> StatusOr<std::shared_ptr<IteratorResource>> {
                                                                 return fresh;
                                                               })
                              .status());
    }
    SetHandleOutput(ctx, 0, std::move(h));
  }

 private:
  IteratorAttrs attrs_;
  std::shared_ptr<const InstantiatedFunction> factory_;
};

// GetNext may block (reading files, running functions, waiting for a prefetch thread), so it
// runs on a pool of its own: the step's thread stays free to notice the step's deadline, and a
// blocked GetNext cannot starve the executor's pool. Its waits end when the step is cancelled.
// A dataset held in memory cannot block: its GetNext runs on the step's thread, which saves two
// thread hand-offs per step.
ThreadPool* GetNextPool() {
  static ThreadPool* pool = new ThreadPool("dataset_get_next", std::max(4, NumCores()));
  return pool;
}

class IteratorGetNextOp : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    StatusOr<std::shared_ptr<IteratorResource>> found = LookupIterator(ctx, 0);
    if (!found.ok()) {
      ctx->SetStatus(found.status());
      done();
      return;
    }
    std::shared_ptr<IteratorResource> it = *std::move(found);
    if (!it->may_block()) {
      GetNext(ctx, it.get());
      done();
      return;
    }
    GetNextPool()->Schedule([this, ctx, it = std::move(it), done = std::move(done)] {
      GetNext(ctx, it.get());
      done();
    });
  }

 private:
  void GetNext(OpKernelContext* ctx, IteratorResource* it) {
    IteratorContext ictx;
    ictx.cancellation = ctx->step().cancellation;
    ictx.step_id = ctx->step().step_id;
    ictx.memory_budget = ctx->step().memory_budget;
    std::vector<Tensor> out;
    bool end = false;
    OP_REQUIRES_OK(ctx, it->GetNext(&ictx, &out, &end));
    OP_REQUIRES(ctx, !end, EndOfSequence());
    OP_REQUIRES(ctx, static_cast<int>(out.size()) == num_outputs(),
                errors::InvalidArgument("IteratorGetNext ", name(), ": the element has ", out.size(),
                                        " components but the op has ", num_outputs(), " outputs"));
    for (size_t i = 0; i < out.size(); ++i) {
      OP_REQUIRES(ctx, out[i].dtype() == output_type(static_cast<int>(i)),
                  errors::InvalidArgument("IteratorGetNext ", name(), ": component ", i, " is ",
                                          DTypeString(out[i].dtype()), " but output ", i, " is ",
                                          DTypeString(output_type(static_cast<int>(i)))));
      ctx->set_output(static_cast<int>(i), std::move(out[i]));
    }
  }
};

Status GetNextShape(InferenceContext* c) {
  std::vector<PartialTensorShape> shapes;
  RETURN_IF_ERROR(c->GetAttr("output_shapes", &shapes));
  if (static_cast<int>(shapes.size()) != c->num_outputs()) {
    return errors::InvalidArgument("output_shapes has ", shapes.size(), " shapes for ", c->num_outputs(), " outputs");
  }
  for (int i = 0; i < c->num_outputs(); ++i) c->set_output(i, shapes[i]);
  return absl::OkStatus();
}

}  // namespace

void RegisterIteratorOps() {
  RegisterOp(OpDefBuilder("IteratorV2")
                 .Output("handle: resource")
                 .Attr("shared_name: string")
                 .Attr("container: string")
                 .Attr("output_types: list(type) >= 1")
                 .Attr("output_shapes: list(shape) >= 1")
                 .SetIsStateful()
                 .SetShapeFn(ScalarShape)
                 .Doc("An iterator resource; MakeIterator initializes it."));
  RegisterOp(OpDefBuilder("OneShotIterator")
                 .Output("handle: resource")
                 .Attr("dataset_factory: func")
                 .Attr("output_types: list(type) >= 1")
                 .Attr("output_shapes: list(shape) >= 1")
                 .Attr("container: string = ''")
                 .Attr("shared_name: string = ''")
                 .SetIsStateful()
                 .SetShapeFn(ScalarShape)
                 .Doc("An iterator initialized on first use from dataset_factory's dataset."));
  RegisterOp(OpDefBuilder("MakeIterator")
                 .Input("dataset: variant")
                 .Input("iterator: resource")
                 .SetIsStateful()
                 .SetShapeFn(NoOutputs)
                 .Doc("(Re)starts the iterator at the dataset's first element."));
  RegisterOp(OpDefBuilder("IteratorGetNext")
                 .Input("iterator: resource")
                 .Output("components: output_types")
                 .Attr("output_types: list(type) >= 1")
                 .Attr("output_shapes: list(shape) >= 1")
                 .SetIsStateful()
                 .SetShapeFn(GetNextShape)
                 .Doc("The iterator's next element; OutOfRange at the end."));
  RegisterKernel<IteratorHandleOp>(KernelBuilder("IteratorV2"));
  RegisterKernel<OneShotIteratorOp>(KernelBuilder("OneShotIterator"));
  RegisterKernel<MakeIteratorOp>(KernelBuilder("MakeIterator"));
  RegisterKernel<IteratorGetNextOp>(KernelBuilder("IteratorGetNext"));
}

}  // namespace dflow
