// CPU kernels of the Apply* optimizer updates, for float and double.
//
// Each kernel locks the mutexes of its variables (always, whatever use_locking says: the
// attr is accepted for TensorFlow graphs, and an unlocked update would race with the
// executor's snapshot reads), checks that every variable is initialized and that the shapes
// agree, and then updates the buffers in place. A buffer that someone else still holds (a
// snapshot an earlier read took) is copied first, so that snapshot never changes under its
// reader. The output is the reference to var.
#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <vector>

#include "framework/op_kernel.h"
#include "ops/training/apply_util.h"
#include "ops/training/training_ops.h"

namespace dflow {
namespace {

// The common part of every Apply kernel. Inputs [0, num_refs) are the variables; `scalars` and
// `dense` name the value inputs (hyperparameters and tensors of var's shape) in the order the
// concrete kernel's Update receives them.
template <typename T>
class ApplyKernel : public OpKernel {
 public:
  ApplyKernel(OpKernelConstruction* c, int num_refs, std::vector<int> scalars, std::vector<int> dense)
      : OpKernel(c), num_refs_(num_refs), scalars_(std::move(scalars)), dense_(std::move(dense)) {}

  void Compute(OpKernelContext* ctx) final {
    std::vector<Var*> vars(num_refs_);
    for (int i = 0; i < num_refs_; ++i) {
      vars[i] = ctx->input_ref(i);
      OP_REQUIRES(ctx, vars[i] != nullptr,
                  errors::InvalidArgument(Where(), ": input '", ArgName(i), "' is not a variable reference"));
    }
    // Lock each distinct variable once, in address order, so that updates that share variables
    // cannot deadlock.
    std::vector<Var*> distinct = vars;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    std::vector<std::unique_lock<std::mutex>> locks;
    locks.reserve(distinct.size());
    for (Var* v : distinct) locks.emplace_back(*v->mu());

    for (int i = 0; i < num_refs_; ++i) {
      const Tensor& t = *vars[i]->tensor();
      OP_REQUIRES(ctx, t.IsInitialized(),
                  errors::FailedPrecondition(Where(), ": attempting to use uninitialized value ", vars[i]->name()));
      OP_REQUIRES(ctx, t.dtype() == DTypeOf<T>::value,
                  errors::InvalidArgument(Where(), ": variable ", vars[i]->name(), " holds ", DTypeString(t.dtype()),
                                          ", the op expects ", DTypeString(DTypeOf<T>::value)));
    }
    const TensorShape& shape = vars[0]->tensor()->shape();
    for (int i = 1; i < num_refs_; ++i) {
      OP_REQUIRES(ctx, vars[i]->tensor()->shape() == shape,
                  errors::InvalidArgument(Where(), ": var and ", ArgName(i), " do not have the same shape: ",
                                          shape.DebugString(), " vs ", vars[i]->tensor()->shape().DebugString()));
    }
    std::vector<T> scalar_values;
    scalar_values.reserve(scalars_.size());
    for (int i : scalars_) {
      const Tensor& t = ctx->input(i);
      OP_REQUIRES(ctx, t.IsInitialized() && t.dims() == 0,
                  errors::InvalidArgument(Where(), ": ", ArgName(i), " is not a scalar: ", t.shape().DebugString()));
      scalar_values.push_back(t.scalar<T>());
    }
    std::vector<const T*> dense_values;
    for (int i : dense_) {
      const Tensor& t = ctx->input(i);
      OP_REQUIRES(ctx, t.IsInitialized() && t.shape() == shape,
                  errors::InvalidArgument(Where(), ": var and ", ArgName(i), " do not have the same shape: ",
                                          shape.DebugString(), " vs ", t.shape().DebugString()));
      dense_values.push_back(t.data<T>());
    }
    OP_REQUIRES_OK(ctx, CheckScalars(scalar_values));

    // Exclusive buffers (copy on write), then the update in place.
    for (Var* v : distinct) {
      if (!v->tensor()->RefCountIsOne()) *v->tensor() = v->tensor()->DeepCopy();
    }
    std::vector<T*> var_data(num_refs_);
    for (int i = 0; i < num_refs_; ++i) var_data[i] = vars[i]->tensor()->template data<T>();
    Update(var_data.data(), scalar_values.data(), dense_values.data(), shape.num_elements());
    locks.clear();
    ctx->set_output_ref(0, ctx->input_ref_ptr(0));
  }

 protected:
  // Rejects hyperparameter values the update is not defined for.
  virtual Status CheckScalars(const std::vector<T>& s) const { return absl::OkStatus(); }
  // Updates n elements of each variable in place.
  virtual void Update(T* const* var, const T* s, const T* const* dense, int64_t n) const = 0;

  std::string Where() const { return absl::StrCat(type_string(), " '", name(), "'"); }
  std::string ArgName(int i) const {
    const OpDef* def = node().op_def;
    return def != nullptr && i < static_cast<int>(def->inputs.size()) ? def->inputs[i].name : absl::StrCat("input ", i);
  }

 private:
  const int num_refs_;
  const std::vector<int> scalars_, dense_;
};

// var -= alpha * delta
template <typename T>
class ApplyGradientDescentOp : public ApplyKernel<T> {
 public:
  explicit ApplyGradientDescentOp(OpKernelConstruction* c) : ApplyKernel<T>(c, 1, {1}, {2}) {}

 protected:
  void Update(T* const* v, const T* s, const T* const* d, int64_t n) const override {
    T* var = v[0];
    const T alpha = s[0];
    const T* delta = d[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) var[i] -= delta[i] * alpha;
  }
};

template <typename T>
class ApplyMomentumOp : public ApplyKernel<T> {
 public:
  explicit ApplyMomentumOp(OpKernelConstruction* c) : ApplyKernel<T>(c, 2, {2, 4}, {3}) {
    c->SetStatus(c->GetAttr("use_nesterov", &nesterov_));
  }

 protected:
  void Update(T* const* v, const T* s, const T* const* d, int64_t n) const override {
    MomentumUpdate(v, s, d[0], n, nesterov_);
  }

 private:
  bool nesterov_ = false;
};

template <typename T>
class ApplyAdagradOp : public ApplyKernel<T> {
 public:
  explicit ApplyAdagradOp(OpKernelConstruction* c) : ApplyKernel<T>(c, 2, {2}, {3}) {
    c->SetStatus(c->GetAttr("update_slots", &update_slots_));
  }

 protected:
  void Update(T* const* v, const T* s, const T* const* d, int64_t n) const override {
    AdagradUpdate(v, s, d[0], n, update_slots_);
  }

 private:
  bool update_slots_ = true;
};

template <typename T>
class ApplyAdamOp : public ApplyKernel<T> {
 public:
  explicit ApplyAdamOp(OpKernelConstruction* c) : ApplyKernel<T>(c, 3, {3, 4, 5, 6, 7, 8}, {9}) {
    c->SetStatus(c->GetAttr("use_nesterov", &nesterov_));
  }

 protected:
  void Update(T* const* v, const T* s, const T* const* d, int64_t n) const override {
    AdamUpdate(v, s, d[0], n, nesterov_);
  }

 private:
  bool nesterov_ = false;
};

template <typename T>
class ApplyRMSPropOp : public ApplyKernel<T> {
 public:
  explicit ApplyRMSPropOp(OpKernelConstruction* c) : ApplyKernel<T>(c, 3, {3, 4, 5, 6}, {7}) {}

 protected:
  void Update(T* const* v, const T* s, const T* const* d, int64_t n) const override { RMSPropUpdate(v, s, d[0], n); }
};

// Centered RMSProp: the second moment minus the squared first moment (an estimate of the
// variance) normalizes the step; TensorFlow's order of updates.
template <typename T>
class ApplyCenteredRMSPropOp : public ApplyKernel<T> {
 public:
  explicit ApplyCenteredRMSPropOp(OpKernelConstruction* c) : ApplyKernel<T>(c, 4, {4, 5, 6, 7}, {8}) {}

 protected:
  void Update(T* const* v, const T* s, const T* const* d, int64_t n) const override {
    CenteredRMSPropUpdate(v, s, d[0], n);
  }
};

template <typename T>
class ApplyFtrlOp : public ApplyKernel<T> {
 public:
  explicit ApplyFtrlOp(OpKernelConstruction* c) : ApplyKernel<T>(c, 3, {4, 5, 6, 7}, {3}) {
    c->SetStatus(c->GetAttr("multiply_linear_by_lr", &multiply_linear_by_lr_));
  }

 protected:
  Status CheckScalars(const std::vector<T>& s) const override { return CheckFtrlScalars<T, false>(this->Where(), s); }

  void Update(T* const* v, const T* s, const T* const* d, int64_t n) const override {
    FtrlUpdate<T, false>(v, s, d[0], n, multiply_linear_by_lr_);
  }

 private:
  bool multiply_linear_by_lr_ = false;
};

template <typename T>
void RegisterFor() {
  RegisterKernel<ApplyGradientDescentOp<T>>(KernelBuilder("ApplyGradientDescent").TypeConstraint<T>("T"));
  RegisterKernel<ApplyMomentumOp<T>>(KernelBuilder("ApplyMomentum").TypeConstraint<T>("T"));
  RegisterKernel<ApplyAdagradOp<T>>(KernelBuilder("ApplyAdagrad").TypeConstraint<T>("T"));
  RegisterKernel<ApplyAdamOp<T>>(KernelBuilder("ApplyAdam").TypeConstraint<T>("T"));
  RegisterKernel<ApplyRMSPropOp<T>>(KernelBuilder("ApplyRMSProp").TypeConstraint<T>("T"));
  RegisterKernel<ApplyCenteredRMSPropOp<T>>(KernelBuilder("ApplyCenteredRMSProp").TypeConstraint<T>("T"));
  RegisterKernel<ApplyFtrlOp<T>>(KernelBuilder("ApplyFtrl").TypeConstraint<T>("T"));
}

}  // namespace

void RegisterApplyKernels() {
  RegisterFor<float>();
  RegisterFor<double>();
}

}  // namespace dflow
