// Datasets that run functions or background work: MapDataset, ParallelMapDataset,
// FilterDataset (functions of the graph's library, run through the FunctionLibraryRuntime) and
// PrefetchDataset (a producer thread per iterator).
//
// Parallel map keeps up to num_parallel_calls calls in flight on the process's thread pool and
// returns results in input order; a consumer waiting for a call that has not started yet runs
// it itself, so pool threads never wait for work queued behind them. Prefetch's producer thread
// starts with the first GetNext and is stopped and joined by the iterator's destructor; its
// waits (for room, and inside its input) are cancelled then.
#include <deque>
#include <thread>

#include "base/threadpool.h"
#include "framework/function.h"
#include "framework/shape_inference.h"
#include "ops/data/dataset_kernel.h"
#include "ops/register_all.h"

namespace dflow {
namespace {

// ---- functions ----

// What a dataset needs to call its function: the instantiated function and captured inputs.
struct CapturedFunction {
  std::shared_ptr<const InstantiatedFunction> fn;
  std::vector<Tensor> captured;

  std::vector<Tensor> Args(std::vector<Tensor> element) const {
    for (const Tensor& t : captured) element.push_back(t);
    return element;
  }
};

// Instantiates the function named by attr `attr` at kernel construction.
std::shared_ptr<const InstantiatedFunction> InstantiateAttr(OpKernelConstruction* c, const char* attr) {
  NameAttrList f;
  Status s = c->GetAttr(attr, &f);
  if (!s.ok()) {
    c->SetStatus(s);
    return nullptr;
  }
  if (c->function_library() == nullptr) {
    c->SetStatus(errors::Unimplemented(c->node().op, " ", c->node().name, ": no function library to run function '",
                                       f.name, "' here"));
    return nullptr;
  }
  StatusOr<std::shared_ptr<const InstantiatedFunction>> fn = c->function_library()->Instantiate(f.name);
  if (!fn.ok()) {
    c->SetStatus(fn.status());
    return nullptr;
  }
  return *fn;
}

class FunctionDatasetOp : public DatasetOpKernel {
 public:
  FunctionDatasetOp(OpKernelConstruction* c, const char* attr) : DatasetOpKernel(c) { fn_ = InstantiateAttr(c, attr); }

 protected:
  // The captured inputs: inputs [first, first + count of Targuments).
  StatusOr<CapturedFunction> Capture(OpKernelContext* ctx, int first) const {
    CapturedFunction cf;
    cf.fn = fn_;
    const size_t n = node().attrs.count("Targuments")
                         ? node().attrs.at("Targuments").get_if<std::vector<DType>>()->size()
                         : 0;
    for (size_t i = 0; i < n; ++i) cf.captured.push_back(ctx->input(first + static_cast<int>(i)));
    return cf;
  }
  std::shared_ptr<const InstantiatedFunction> fn_;
};

Status CheckResults(const std::vector<Tensor>& r, const DatasetBase& ds, const std::string& fn) {
  Status s = CheckElement(r, ds.output_dtypes(), ds.output_shapes(), absl::StrCat("function '", fn, "'"));
  return s;
}

// ---- MapDataset / ParallelMapDataset ----

class MapDataset : public DatasetBase {
 public:
  MapDataset(std::shared_ptr<const DatasetBase> input, CapturedFunction fn, int parallel, std::vector<DType> types,
             std::vector<PartialTensorShape> shapes)
      : DatasetBase(std::move(types), std::move(shapes)),
        input_(std::move(input)),
        fn_(std::move(fn)),
        parallel_(parallel) {}
  std::string Name() const override { return parallel_ > 1 ? "ParallelMapDataset" : "MapDataset"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override;

 private:
  friend class MapIterator;
  friend class ParallelMapIterator;
  std::shared_ptr<const DatasetBase> input_;
  CapturedFunction fn_;
  int parallel_;
};

class MapIterator : public IteratorBase {
 public:
  MapIterator(std::shared_ptr<const MapDataset> ds, std::unique_ptr<IteratorBase> in)
      : ds_(std::move(ds)), input_(std::move(in)) {}
  Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    std::vector<Tensor> e;
    RETURN_IF_ERROR(input_->GetNext(ctx, &e, end));
    if (*end) return absl::OkStatus();
    InstantiatedFunction::Options opts;
    opts.cancellation = ctx->cancellation;
    opts.step_id = ctx->step_id;
    opts.memory_budget = ctx->memory_budget;
    RETURN_IF_ERROR(ds_->fn_.fn->Run(opts, ds_->fn_.Args(std::move(e)), out));
    return CheckResults(*out, *ds_, ds_->fn_.fn->name());
  }

 private:
  std::shared_ptr<const MapDataset> ds_;
  std::unique_ptr<IteratorBase> input_;
};

class ParallelMapIterator : public IteratorBase {
 public:
  ParallelMapIterator(std::shared_ptr<const MapDataset> ds, std::unique_ptr<IteratorBase> in)
      : ds_(std::move(ds)), input_(std::move(in)), shared_(std::make_shared<Shared>()) {}
  // Calls in flight are cancelled; they hold what they use (the shared state, their slot and
  // the function), so nothing waits for them here.
  ~ParallelMapIterator() override { shared_->cancel.StartCancel(); }

  Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    while (!input_done_ && static_cast<int>(slots_.size()) < ds_->parallel_) {
      std::vector<Tensor> e;
      bool e_end = false;
      RETURN_IF_ERROR(input_->GetNext(ctx, &e, &e_end));
      if (e_end) {
        input_done_ = true;
        break;
      }
      auto slot = std::make_shared<Slot>();
      slot->args = ds_->fn_.Args(std::move(e));
      slot->budget = ctx->memory_budget;
      slots_.push_back(slot);
      // The first call runs on this thread below; the others go to the pool.
      if (slots_.size() > 1) {
        auto shared = shared_;
        auto fn = ds_->fn_.fn;
        ThreadPool::Default()->Schedule([shared, slot, fn] { Run(shared, slot, fn); });
      }
    }
    if (slots_.empty()) {
      *end = true;
      return absl::OkStatus();
    }
    std::shared_ptr<Slot> front = slots_.front();
    Run(shared_, front, ds_->fn_.fn);  // a no-op when a pool thread took it
    {
      std::unique_lock<std::mutex> l(shared_->mu);
      RETURN_IF_ERROR(WaitWithCancellation(
          ctx, &shared_->cv, &l, [&] { return front->done; }, "ParallelMapDataset GetNext"));
    }
    slots_.pop_front();
    *end = false;
    RETURN_IF_ERROR(front->status);
    *out = std::move(front->result);
    return CheckResults(*out, *ds_, ds_->fn_.fn->name());
  }

 private:
  struct Slot {
    std::vector<Tensor> args;
    std::shared_ptr<MemoryBudget> budget;  // of the step that asked for the element
    std::atomic<bool> claimed{false};
    bool done = false;  // guarded by Shared::mu
    Status status;
    std::vector<Tensor> result;
  };
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    CancellationManager cancel;
  };
  // Starts the slot's call unless someone did. The call completes through a callback, so no
  // thread waits for it here (a function whose kernels wait holds no pool thread).
  static void Run(const std::shared_ptr<Shared>& shared, const std::shared_ptr<Slot>& slot,
                  const std::shared_ptr<const InstantiatedFunction>& fn) {
    if (slot->claimed.exchange(true)) return;
    InstantiatedFunction::Options opts;
    opts.cancellation = &shared->cancel;
    opts.memory_budget = slot->budget;
    fn->RunAsync(opts, std::move(slot->args), [shared, slot, fn](const Status& s, std::vector<Tensor> result) {
      std::lock_guard<std::mutex> l(shared->mu);
      slot->status = s;
      slot->result = std::move(result);
      slot->done = true;
      shared->cv.notify_all();
    });
  }

  std::shared_ptr<const MapDataset> ds_;
  std::unique_ptr<IteratorBase> input_;
  std::shared_ptr<Shared> shared_;
  std::deque<std::shared_ptr<Slot>> slots_;
  bool input_done_ = false;
};

StatusOr<std::unique_ptr<IteratorBase>> MapDataset::MakeIterator() const {
  ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> in, input_->MakeIterator());
  auto self = std::static_pointer_cast<const MapDataset>(shared_from_this());
  if (parallel_ > 1) return std::unique_ptr<IteratorBase>(std::make_unique<ParallelMapIterator>(self, std::move(in)));
  return std::unique_ptr<IteratorBase>(std::make_unique<MapIterator>(self, std::move(in)));
}

class MapDatasetOp : public FunctionDatasetOp {
 public:
  explicit MapDatasetOp(OpKernelConstruction* c) : FunctionDatasetOp(c, "f") {
    parallel_input_ = c->node().op == "ParallelMapDataset";
  }
  StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(auto input, InputDataset(ctx));
    ASSIGN_OR_RETURN(CapturedFunction cf, Capture(ctx, 1));
    int parallel = 1;
    if (parallel_input_) {
      ASSIGN_OR_RETURN(int64_t n, ScalarInt(ctx, ctx->num_inputs() - 1, "num_parallel_calls"));
      if (n == -1) n = NumCores();  // AUTOTUNE
      if (n <= 0 || n > 1024) return Error("num_parallel_calls must be in [1, 1024] or -1, not ", n);
      parallel = static_cast<int>(n);
    }
    if (cf.fn->ret_types() != types_)
      return Error("function '", cf.fn->name(), "' returns other types than output_types");
    return std::shared_ptr<const DatasetBase>(std::make_shared<MapDataset>(std::move(input), std::move(cf), parallel,
                                                                           types_, shapes_));
  }

 private:
  bool parallel_input_ = false;
};

// ---- FilterDataset ----

class FilterDataset : public DatasetBase {
 public:
  FilterDataset(std::shared_ptr<const DatasetBase> input, CapturedFunction fn)
      : DatasetBase(input->output_dtypes(), input->output_shapes()), input_(std::move(input)), fn_(std::move(fn)) {}
  std::string Name() const override { return "FilterDataset"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override {
    class Iter : public IteratorBase {
     public:
      Iter(std::shared_ptr<const FilterDataset> ds, std::unique_ptr<IteratorBase> in)
          : ds_(std::move(ds)), input_(std::move(in)) {}
      Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
        const std::string& fn = ds_->fn_.fn->name();
        while (true) {
          RETURN_IF_ERROR(input_->GetNext(ctx, out, end));
          if (*end) return absl::OkStatus();
          InstantiatedFunction::Options opts;
          opts.cancellation = ctx->cancellation;
          opts.step_id = ctx->step_id;
          opts.memory_budget = ctx->memory_budget;
          std::vector<Tensor> r;
          RETURN_IF_ERROR(ds_->fn_.fn->Run(opts, ds_->fn_.Args(*out), &r));
          if (r.size() != 1 || r[0].dtype() != DT_BOOL || r[0].dims() != 0) {
            return errors::InvalidArgument("Filter predicate '", fn, "' must return a scalar bool");
          }
          if (r[0].scalar<bool>()) return absl::OkStatus();
        }
      }

     private:
      std::shared_ptr<const FilterDataset> ds_;
      std::unique_ptr<IteratorBase> input_;
    };
    ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> in, input_->MakeIterator());
    return std::unique_ptr<IteratorBase>(
        std::make_unique<Iter>(std::static_pointer_cast<const FilterDataset>(shared_from_this()), std::move(in)));
  }

 private:
  std::shared_ptr<const DatasetBase> input_;
  CapturedFunction fn_;
};

class FilterDatasetOp : public FunctionDatasetOp {
 public:
  explicit FilterDatasetOp(OpKernelConstruction* c) : FunctionDatasetOp(c, "predicate") {}
  StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(auto input, InputDataset(ctx));
    ASSIGN_OR_RETURN(CapturedFunction cf, Capture(ctx, 1));
    if (cf.fn->ret_types() != std::vector<DType>{DT_BOOL}) {
      return Error("Filter predicate '", cf.fn->name(), "' must return a scalar bool");
    }
    return std::shared_ptr<const DatasetBase>(std::make_shared<FilterDataset>(std::move(input), std::move(cf)));
  }
};

// ---- PrefetchDataset ----

class PrefetchDataset : public DatasetBase {
 public:
  PrefetchDataset(std::shared_ptr<const DatasetBase> input, int64_t buffer)
      : DatasetBase(input->output_dtypes(), input->output_shapes()), input_(std::move(input)), buffer_(buffer) {}
  std::string Name() const override { return "PrefetchDataset"; }
  StatusOr<std::unique_ptr<IteratorBase>> MakeIterator() const override;

 private:
  friend class PrefetchIterator;
  std::shared_ptr<const DatasetBase> input_;
  int64_t buffer_;
};

class PrefetchIterator : public IteratorBase {
 public:
  PrefetchIterator(std::shared_ptr<const PrefetchDataset> ds, std::unique_ptr<IteratorBase> in)
      : ds_(std::move(ds)), input_(std::move(in)) {}
  ~PrefetchIterator() override {
    {
      std::lock_guard<std::mutex> l(mu_);
      stopping_ = true;
      cv_.notify_all();
    }
    stop_.StartCancel();
    if (thread_.joinable()) thread_.join();
  }

  Status GetNext(IteratorContext* ctx, std::vector<Tensor>* out, bool* end) override {
    std::unique_lock<std::mutex> l(mu_);
    if (!thread_.joinable() && !producer_done_) {
      // The producer's functions are charged to the budget of the step that started it.
      budget_ = ctx->memory_budget;
      thread_ = std::thread([this] { Produce(); });
    }
    RETURN_IF_ERROR(WaitWithCancellation(
        ctx, &cv_, &l, [&] { return !buffer_.empty() || producer_done_; }, "PrefetchDataset GetNext"));
    if (buffer_.empty()) {  // after the end or an error
      *end = true;
      return absl::OkStatus();
    }
    Entry e = std::move(buffer_.front());
    buffer_.pop_front();
    cv_.notify_all();
    *end = e.end;
    if (!e.status.ok()) return e.status;
    *out = std::move(e.element);
    return absl::OkStatus();
  }

 private:
  struct Entry {
    std::vector<Tensor> element;
    Status status;
    bool end = false;
  };
  std::shared_ptr<MemoryBudget> budget_;  // set before the producer starts

  void Produce() {
    IteratorContext ctx;
    ctx.cancellation = &stop_;
    ctx.memory_budget = budget_;
    while (true) {
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return stopping_ || static_cast<int64_t>(buffer_.size()) < ds_->buffer_; });
        if (stopping_) break;
      }
      Entry e;
      e.status = input_->GetNext(&ctx, &e.element, &e.end);
      std::lock_guard<std::mutex> l(mu_);
      if (stopping_) break;
      const bool last = e.end || !e.status.ok();
      buffer_.push_back(std::move(e));
      if (last) break;
      cv_.notify_all();
    }
    std::lock_guard<std::mutex> l(mu_);
    producer_done_ = true;
    cv_.notify_all();
  }

  std::shared_ptr<const PrefetchDataset> ds_;
  std::unique_ptr<IteratorBase> input_;  // used by the producer thread only once it started
  CancellationManager stop_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Entry> buffer_;    // guarded by mu_
  bool producer_done_ = false;  // guarded by mu_
  bool stopping_ = false;       // guarded by mu_
  std::thread thread_;
};

StatusOr<std::unique_ptr<IteratorBase>> PrefetchDataset::MakeIterator() const {
  ASSIGN_OR_RETURN(std::unique_ptr<IteratorBase> in, input_->MakeIterator());
  if (buffer_ == 0) return in;  // no prefetching
  return std::unique_ptr<IteratorBase>(std::make_unique<PrefetchIterator>(
      std::static_pointer_cast<const PrefetchDataset>(shared_from_this()), std::move(in)));
}

class PrefetchDatasetOp : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;
  StatusOr<std::shared_ptr<const DatasetBase>> MakeDataset(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(auto input, InputDataset(ctx));
    ASSIGN_OR_RETURN(int64_t buffer, ScalarInt(ctx, 1, "buffer_size"));
    constexpr int64_t kAutotune = 4;
    if (buffer == -1) buffer = kAutotune;
    if (buffer < 0) return Error("buffer_size must be >= 0 or -1 (AUTOTUNE), not ", buffer);
    return std::shared_ptr<const DatasetBase>(std::make_shared<PrefetchDataset>(std::move(input), buffer));
  }
};

}  // namespace

void RegisterMapDatasetOps() {
  RegisterOp(OpDefBuilder("MapDataset")
                 .Input("input_dataset: variant")
                 .Input("other_arguments: Targuments")
                 .Output("handle: variant")
                 .Attr("f: func")
                 .Attr("Targuments: list(type) >= 0")
                 .Attr("output_types: list(type) >= 1")
                 .Attr("output_shapes: list(shape) >= 1")
                 .Attr("use_inter_op_parallelism: bool = true")
                 .Attr("preserve_cardinality: bool = false")
                 .SetShapeFn(ScalarShape)
                 .Doc("f applied to every element."));
  RegisterOp(OpDefBuilder("ParallelMapDataset")
                 .Input("input_dataset: variant")
                 .Input("other_arguments: Targuments")
                 .Input("num_parallel_calls: int32")
                 .Output("handle: variant")
                 .Attr("f: func")
                 .Attr("Targuments: list(type) >= 0")
                 .Attr("output_types: list(type) >= 1")
                 .Attr("output_shapes: list(shape) >= 1")
                 .Attr("use_inter_op_parallelism: bool = true")
                 .Attr("sloppy: bool = false")
                 .Attr("preserve_cardinality: bool = false")
                 .SetShapeFn(ScalarShape)
                 .Doc("f applied to every element, num_parallel_calls at a time, in order."));
  RegisterOp(OpDefBuilder("FilterDataset")
                 .Input("input_dataset: variant")
                 .Input("other_arguments: Targuments")
                 .Output("handle: variant")
                 .Attr("predicate: func")
                 .Attr("Targuments: list(type) >= 0")
                 .Attr("output_types: list(type) >= 1")
                 .Attr("output_shapes: list(shape) >= 1")
                 .SetShapeFn(ScalarShape)
                 .Doc("The elements for which predicate returns true."));
  RegisterOp(OpDefBuilder("PrefetchDataset")
                 .Input("input_dataset: variant")
                 .Input("buffer_size: int64")
                 .Output("handle: variant")
                 .Attr("output_types: list(type) >= 1")
                 .Attr("output_shapes: list(shape) >= 1")
                 .Attr("slack_period: int = 0")
                 .SetShapeFn(ScalarShape)
                 .Doc("Produces up to buffer_size elements ahead on a background thread."));
  RegisterKernel<MapDatasetOp>(KernelBuilder("MapDataset"));
  RegisterKernel<MapDatasetOp>(KernelBuilder("ParallelMapDataset"));
  RegisterKernel<FilterDatasetOp>(KernelBuilder("FilterDataset"));
  RegisterKernel<PrefetchDatasetOp>(KernelBuilder("PrefetchDataset"));
}

}  // namespace dflow
