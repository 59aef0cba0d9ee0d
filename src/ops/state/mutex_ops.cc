// Mutexes for critical sections in a graph: MutexV2, MutexLock and ConsumeMutexLock.
//
// MutexV2 outputs a handle naming a Mutex in the device's ResourceMgr (created on first lock).
// MutexLock waits — without holding a thread, and honouring the step's cancellation — until the
// mutex is free, then outputs a DT_RESOURCE "mutex_lock" whose payload holds the lock: the
// mutex is released when the last copy of that tensor is destroyed. Ops that must run inside
// the critical section take a control dependency on the MutexLock; a ConsumeMutexLock that
// depends on the section's last ops keeps the lock alive until they have run.
#include <deque>

#include "base/threadpool.h"
#include "framework/cancellation.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/state/resource_util.h"
#include "ops/state/state_ops.h"

namespace dflow {
namespace {

constexpr const char* kMutexType = "Mutex";

class Mutex : public ResourceBase, public std::enable_shared_from_this<Mutex> {
 public:
  // Called once with OK and the lock payload, or with the error that ended the wait.
  using Granted = std::function<void(const Status&, std::shared_ptr<void> lock)>;

  explicit Mutex(std::string name) : name_(std::move(name)) {}

  std::string DebugString() const override { return "Mutex " + name_; }

  // Acquires the mutex for `done`, now or when it is released. `cm` (may be null) cancels the
  // wait.
  void Acquire(CancellationManager* cm, Granted done) {
    std::unique_lock<std::mutex> l(mu_);
    if (!locked_) {
      locked_ = true;
      l.unlock();
      done(absl::OkStatus(), MakeLock());
      return;
    }
    const int64_t id = next_id_++;
    Waiter w{id, cm, -1, std::move(done)};
    if (cm != nullptr) {
      w.token = cm->NewToken();
      std::weak_ptr<Mutex> weak = weak_from_this();
      if (!cm->RegisterCallback(w.token, [weak, id] {
            if (auto m = weak.lock()) m->CancelWaiter(id);
          })) {
        l.unlock();
        w.done(errors::Cancelled("MutexLock on ", name_, " was cancelled"), nullptr);
        return;
      }
    }
    waiters_.push_back(std::move(w));
  }

 private:
  struct Waiter {
    int64_t id;
    CancellationManager* cm;
    CancellationManager::Token token;
    Granted done;
  };

  // Releases the mutex when the last copy of the lock tensor goes away.
  class Lock {
   public:
    explicit Lock(std::shared_ptr<Mutex> m) : mutex_(std::move(m)) {}
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;
    ~Lock() { mutex_->Release(); }

   private:
    std::shared_ptr<Mutex> mutex_;
  };

  std::shared_ptr<void> MakeLock() { return std::make_shared<Lock>(shared_from_this()); }

  void Release() {
    std::unique_lock<std::mutex> l(mu_);
    if (waiters_.empty()) {
      locked_ = false;
      return;
    }
    // Hand the mutex straight to the first waiter (it stays locked). Its step continues on the
    // pool, not inside the destructor of a tensor of another step.
    Waiter w = std::move(waiters_.front());
    waiters_.pop_front();
    std::shared_ptr<void> lock = MakeLock();
    l.unlock();
    ThreadPool::Default()->Schedule([w = std::move(w), lock = std::move(lock)]() mutable {
      if (w.cm != nullptr) w.cm->DeregisterCallback(w.token);
      w.done(absl::OkStatus(), std::move(lock));
    });
  }

  void CancelWaiter(int64_t id) {
    Granted done;
    {
      std::lock_guard<std::mutex> l(mu_);
      for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
        if (it->id == id) {
          done = std::move(it->done);
          waiters_.erase(it);
          break;
        }
      }
    }
    if (done) done(errors::Cancelled("MutexLock on ", name_, " was cancelled"), nullptr);
  }

  const std::string name_;
  std::mutex mu_;
  bool locked_ = false;         // guarded by mu_
  std::deque<Waiter> waiters_;  // guarded by mu_; FIFO
  int64_t next_id_ = 1;         // guarded by mu_
};

class MutexHandleOp : public OpKernel {
 public:
  explicit MutexHandleOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("container", &container_));
    c->SetStatus(c->GetAttr("shared_name", &shared_name_));
  }
  void Compute(OpKernelContext* ctx) override {
    SetHandleOutput(ctx, 0, MakeResourceHandle(ctx, container_, shared_name_, kMutexType));
  }

 private:
  std::string container_, shared_name_;
};

class MutexLockOp : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    StatusOr<const ResourceHandle*> h = HandleFromInput(ctx, 0);
    if (!h.ok()) {
      ctx->SetStatus(h.status());
      done();
      return;
    }
    ResourceHandle handle = **h;
    ResourceMgr* rm = ctx->step().device->resource_manager();
    StatusOr<std::shared_ptr<Mutex>> m = rm->LookupOrCreate<Mutex>(handle.container, handle.name,
                                                                   [&]() -> StatusOr<std::shared_ptr<Mutex>> {
                                                                     return std::make_shared<Mutex>(handle.name);
                                                                   });
    if (!m.ok()) {
      ctx->SetStatus(m.status());
      done();
      return;
    }
    (*m)->Acquire(ctx->step().cancellation,
                  [ctx, done = std::move(done), handle](const Status& s, std::shared_ptr<void> lock) mutable {
                    if (s.ok()) {
                      ResourceHandle out = handle;
                      out.type_name = "MutexLock";
                      out.payload = std::move(lock);
                      ctx->set_output(0, Tensor(std::move(out)));
                    } else {
                      ctx->SetStatus(s);
                    }
                    done();
                  });
  }
};

class ConsumeMutexLockOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    OP_REQUIRES(ctx, t.dtype() == DT_RESOURCE && t.dims() == 0 && t.scalar<ResourceHandle>().payload != nullptr,
                errors::InvalidArgument("ConsumeMutexLock ", name(), ": the input must be the output of a MutexLock, ",
                                        "got a ", DTypeString(t.dtype()), " tensor of shape ",
                                        t.shape().DebugString()));
    // Nothing to do: the lock is released when the executor drops this input.
  }
};

}  // namespace

void RegisterMutexOps() {
  RegisterOp(OpDefBuilder("MutexV2")
                 .Output("resource: resource")
                 .Attr("container: string = ''")
                 .Attr("shared_name: string = ''")
                 .SetIsStateful()
                 .SetShapeFn(ScalarShape)
                 .Doc("A handle to a mutex (container, shared_name or the node name)."));
  RegisterOp(OpDefBuilder("MutexLock")
                 .Input("mutex: resource")
                 .Output("mutex_lock: resource")
                 .SetIsStateful()
                 .SetShapeFn(ScalarShape)
                 .Doc("Waits for the mutex and holds it until the last copy of the output is destroyed."));
  RegisterOp(OpDefBuilder("ConsumeMutexLock")
                 .Input("mutex_lock: resource")
                 .SetIsStateful()
                 .SetShapeFn(NoOutputs)
                 .Doc("Keeps a mutex lock alive until this op runs."));
  RegisterKernel<MutexHandleOp>(KernelBuilder("MutexV2"));
  RegisterKernel<MutexLockOp>(KernelBuilder("MutexLock"));
  RegisterKernel<ConsumeMutexLockOp>(KernelBuilder("ConsumeMutexLock"));
  for (const char* op : {"MutexV2", "MutexLock", "ConsumeMutexLock"}) RegisterNoGradient(op);
}

}  // namespace dflow
