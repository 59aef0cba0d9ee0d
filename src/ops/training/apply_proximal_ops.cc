// ApplyAdadelta, ApplyProximalGradientDescent, ApplyProximalAdagrad, ApplyFtrlV2, ApplyAdagradDA:
// the dense updates of tf.compat.v1.train's AdadeltaOptimizer, ProximalGradientDescentOptimizer,
// ProximalAdagradOptimizer, FtrlOptimizer with l2_shrinkage_regularization_strength and
// AdagradDAOptimizer, with
// TensorFlow's OpDefs and formulas. Kernels behave as those of apply_kernels.cc: every variable
// locked, initialized, of var's dtype and shape; buffers another reader holds copied first; the
// output is the reference to var.
#include <cmath>
#include <vector>

#include "absl/strings/match.h"
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "graph/gradients.h"
#include "ops/training/apply_util.h"
#include "ops/training/training_ops.h"

namespace dflow {
namespace {

// Inputs [0, refs) are variables, then scalars, then `dense` tensors of var's shape (the
// gradient), in the op's order given by `scalar_inputs` / `dense_inputs`.
template <typename T>
class MoreApplyKernel : public OpKernel {
 public:
  MoreApplyKernel(OpKernelConstruction* c, int refs, std::vector<int> scalar_inputs, int dense_input)
      : OpKernel(c),
        refs_(refs),
        scalars_(std::move(scalar_inputs)),
        dense_(dense_input),
        resource_(absl::StartsWith(c->node().op, "Resource")) {}

  void Compute(OpKernelContext* ctx) final {
    LockedVars lv;
    OP_REQUIRES_OK(ctx, LockApplyVars(ctx, refs_, resource_, DTypeOf<T>::value, Where(), &lv));
    const TensorShape& shape = lv.vars[0]->tensor()->shape();
    std::vector<T> s;
    OP_REQUIRES_OK(ctx, ReadApplyScalars(ctx, scalars_, Where(), &s));
    const Tensor& grad = ctx->input(dense_);
    OP_REQUIRES(ctx, grad.IsInitialized() && grad.shape() == shape,
                errors::InvalidArgument(Where(), ": var and grad do not have the same shape: ", shape.DebugString(),
                                        " vs ", grad.shape().DebugString()));
    OP_REQUIRES_OK(ctx, Check(s));
    std::vector<T*> data = lv.ExclusiveData<T>();
    Update(data.data(), s.data(), grad.data<T>(), shape.num_elements());
    lv.locks.clear();
    if (!resource_) ctx->set_output_ref(0, ctx->input_ref_ptr(0));
  }

 protected:
  virtual Status Check(const std::vector<T>&) const { return absl::OkStatus(); }
  virtual void Update(T* const* v, const T* s, const T* grad, int64_t n) const = 0;
  std::string Where() const { return absl::StrCat(type_string(), " '", name(), "'"); }

 private:
  const int refs_;
  const std::vector<int> scalars_;
  const int dense_;
  const bool resource_;
};

// The formulas are apply_util.h's.
template <typename T>
class ApplyAdadeltaOp : public MoreApplyKernel<T> {
 public:
  explicit ApplyAdadeltaOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 3, {3, 4, 5}, 6) {}

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override { AdadeltaUpdate(v, s, g, n); }
};

template <typename T>
class ApplyProximalGradientDescentOp : public MoreApplyKernel<T> {
 public:
  explicit ApplyProximalGradientDescentOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 1, {1, 2, 3}, 4) {}

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override {
    ProximalGradientDescentUpdate(v, s, g, n);
  }
};

template <typename T>
class ApplyProximalAdagradOp : public MoreApplyKernel<T> {
 public:
  explicit ApplyProximalAdagradOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 2, {2, 3, 4}, 5) {}

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override { ProximalAdagradUpdate(v, s, g, n); }
};

template <typename T, bool kShrinkage>
class FtrlOp : public MoreApplyKernel<T> {
 public:
  explicit FtrlOp(OpKernelConstruction* c)
      : MoreApplyKernel<T>(c, 3, kShrinkage ? std::vector<int>{4, 5, 6, 7, 8} : std::vector<int>{4, 5, 6, 7}, 3) {
    c->SetStatus(c->GetAttr("multiply_linear_by_lr", &multiply_linear_by_lr_));
  }

 protected:
  Status Check(const std::vector<T>& s) const override { return CheckFtrlScalars<T, kShrinkage>(this->Where(), s); }
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override {
    FtrlUpdate<T, kShrinkage>(v, s, g, n, multiply_linear_by_lr_);
  }

 private:
  bool multiply_linear_by_lr_ = false;
};

template <typename T>
class ApplyAdagradDAOp : public MoreApplyKernel<T> {
 public:
  explicit ApplyAdagradDAOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 3, {4, 5, 6, 7}, 3) {}

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override { AdagradDAUpdate(v, s, g, n); }
};

template <typename T>
using ApplyFtrlV2Op = FtrlOp<T, true>;
template <typename T>
using ResourceFtrlOp = FtrlOp<T, false>;

// The updates of apply_kernels.cc for the ResourceApply* forms (same formulas, same order).
template <typename T>
class GradientDescentOp : public MoreApplyKernel<T> {
 public:
  explicit GradientDescentOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 1, {1}, 2) {}

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override {
    for (int64_t i = 0; i < n; ++i) v[0][i] -= g[i] * s[0];
  }
};

template <typename T>
class MomentumOp : public MoreApplyKernel<T> {
 public:
  explicit MomentumOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 2, {2, 4}, 3) {
    c->SetStatus(c->GetAttr("use_nesterov", &nesterov_));
  }

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override { MomentumUpdate(v, s, g, n, nesterov_); }

 private:
  bool nesterov_ = false;
};

template <typename T>
class AdagradOp : public MoreApplyKernel<T> {
 public:
  explicit AdagradOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 2, {2}, 3) {
    c->SetStatus(c->GetAttr("update_slots", &update_slots_));
  }

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override {
    AdagradUpdate(v, s, g, n, update_slots_);
  }

 private:
  bool update_slots_ = true;
};

template <typename T>
class AdamOp : public MoreApplyKernel<T> {
 public:
  explicit AdamOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 3, {3, 4, 5, 6, 7, 8}, 9) {
    c->SetStatus(c->GetAttr("use_nesterov", &nesterov_));
  }

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override { AdamUpdate(v, s, g, n, nesterov_); }

 private:
  bool nesterov_ = false;
};

template <typename T>
class RMSPropOp : public MoreApplyKernel<T> {
 public:
  explicit RMSPropOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 3, {3, 4, 5, 6}, 7) {}

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override { RMSPropUpdate(v, s, g, n); }
};

template <typename T>
class CenteredRMSPropOp : public MoreApplyKernel<T> {
 public:
  explicit CenteredRMSPropOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 4, {4, 5, 6, 7}, 8) {}

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override { CenteredRMSPropUpdate(v, s, g, n); }
};

// ResourceApply*: `args` the inputs in order ("var: resource" ...), `scalars` those that are
// rank 0; no outputs.
void RegisterResourceApplyOpDef(const char* op, std::vector<const char*> args, std::vector<int> scalars,
                                std::vector<const char*> attrs, const char* doc) {
  OpDefBuilder b(op);
  for (const char* a : args) b.Input(a);
  b.Attr("T: {float, double}").Attr("use_locking: bool = false");
  for (const char* a : attrs) b.Attr(a);
  b.SetShapeFn([scalars = std::move(scalars)](InferenceContext* c) { return CheckScalarRanks(c, scalars); });
  RegisterOp(b.SetIsStateful().Doc(doc));
  RegisterNoGradient(op);
}

template <template <typename> class K>
void RegisterBoth(const char* op) {
  RegisterKernel<K<float>>(KernelBuilder(op).TypeConstraint<float>("T"));
  RegisterKernel<K<double>>(KernelBuilder(op).TypeConstraint<double>("T"));
}

// The ResourceApply* forms of every dense update (resource variables: VarHandleOp handles).
void RegisterResourceApplyOps() {
  const char* kNesterov = "use_nesterov: bool = false";
  const char* kByLr = "multiply_linear_by_lr: bool = false";
  RegisterResourceApplyOpDef("ResourceApplyGradientDescent", {"var: resource", "alpha: T", "delta: T"}, {1}, {},
                             "var -= alpha * delta, var a resource variable.");
  RegisterResourceApplyOpDef("ResourceApplyMomentum",
                             {"var: resource", "accum: resource", "lr: T", "grad: T", "momentum: T"}, {2, 4},
                             {kNesterov}, "ApplyMomentum on resource variables.");
  RegisterResourceApplyOpDef("ResourceApplyAdagrad", {"var: resource", "accum: resource", "lr: T", "grad: T"}, {2},
                             {"update_slots: bool = true"}, "ApplyAdagrad on resource variables.");
  RegisterResourceApplyOpDef("ResourceApplyAdam",
                             {"var: resource", "m: resource", "v: resource", "beta1_power: T", "beta2_power: T",
                              "lr: T", "beta1: T", "beta2: T", "epsilon: T", "grad: T"},
                             {3, 4, 5, 6, 7, 8}, {kNesterov}, "ApplyAdam on resource variables.");
  RegisterResourceApplyOpDef("ResourceApplyRMSProp",
                             {"var: resource", "ms: resource", "mom: resource", "lr: T", "rho: T", "momentum: T",
                              "epsilon: T", "grad: T"},
                             {3, 4, 5, 6}, {}, "ApplyRMSProp on resource variables.");
  RegisterResourceApplyOpDef("ResourceApplyCenteredRMSProp",
                             {"var: resource", "mg: resource", "ms: resource", "mom: resource", "lr: T", "rho: T",
                              "momentum: T", "epsilon: T", "grad: T"},
                             {4, 5, 6, 7}, {}, "ApplyCenteredRMSProp on resource variables.");
  RegisterResourceApplyOpDef("ResourceApplyFtrl",
                             {"var: resource", "accum: resource", "linear: resource", "grad: T", "lr: T", "l1: T",
                              "l2: T", "lr_power: T"},
                             {4, 5, 6, 7}, {kByLr}, "ApplyFtrl on resource variables.");
  RegisterResourceApplyOpDef("ResourceApplyFtrlV2",
                             {"var: resource", "accum: resource", "linear: resource", "grad: T", "lr: T", "l1: T",
                              "l2: T", "l2_shrinkage: T", "lr_power: T"},
                             {4, 5, 6, 7, 8}, {kByLr}, "ApplyFtrlV2 on resource variables.");
  RegisterResourceApplyOpDef("ResourceApplyAdadelta",
                             {"var: resource", "accum: resource", "accum_update: resource", "lr: T", "rho: T",
                              "epsilon: T", "grad: T"},
                             {3, 4, 5}, {}, "ApplyAdadelta on resource variables.");
  RegisterResourceApplyOpDef("ResourceApplyProximalGradientDescent",
                             {"var: resource", "alpha: T", "l1: T", "l2: T", "delta: T"}, {1, 2, 3}, {},
                             "ApplyProximalGradientDescent on a resource variable.");
  RegisterResourceApplyOpDef("ResourceApplyProximalAdagrad",
                             {"var: resource", "accum: resource", "lr: T", "l1: T", "l2: T", "grad: T"}, {2, 3, 4}, {},
                             "ApplyProximalAdagrad on resource variables.");
  RegisterResourceApplyOpDef("ResourceApplyAdagradDA",
                             {"var: resource", "gradient_accumulator: resource",
                              "gradient_squared_accumulator: resource", "grad: T", "lr: T", "l1: T", "l2: T",
                              "global_step: int64"},
                             {4, 5, 6, 7}, {}, "ApplyAdagradDA on resource variables.");
  RegisterBoth<GradientDescentOp>("ResourceApplyGradientDescent");
  RegisterBoth<MomentumOp>("ResourceApplyMomentum");
  RegisterBoth<AdagradOp>("ResourceApplyAdagrad");
  RegisterBoth<AdamOp>("ResourceApplyAdam");
  RegisterBoth<RMSPropOp>("ResourceApplyRMSProp");
  RegisterBoth<CenteredRMSPropOp>("ResourceApplyCenteredRMSProp");
  RegisterBoth<ResourceFtrlOp>("ResourceApplyFtrl");
  RegisterBoth<ApplyFtrlV2Op>("ResourceApplyFtrlV2");
  RegisterBoth<ApplyAdadeltaOp>("ResourceApplyAdadelta");
  RegisterBoth<ApplyProximalGradientDescentOp>("ResourceApplyProximalGradientDescent");
  RegisterBoth<ApplyProximalAdagradOp>("ResourceApplyProximalAdagrad");
  RegisterBoth<ApplyAdagradDAOp>("ResourceApplyAdagradDA");
}

}  // namespace

void RegisterProximalApplyOps() {
  constexpr char kTypes[] = "T: {float, double}";
  constexpr char kLocking[] = "use_locking: bool = false";
  RegisterOp(OpDefBuilder("ApplyAdadelta")
                 .Input("var: Ref(T)")
                 .Input("accum: Ref(T)")
                 .Input("accum_update: Ref(T)")
                 .Input("lr: T")
                 .Input("rho: T")
                 .Input("epsilon: T")
                 .Input("grad: T")
                 .Output("out: Ref(T)")
                 .Attr(kTypes)
                 .Attr(kLocking)
                 .SetShapeFn(ApplyShape({1, 2, 6}, {3, 4, 5}))
                 .Doc("accum = rho * accum + (1 - rho) * grad^2; update = sqrt(accum_update + epsilon) / "
                      "sqrt(accum + epsilon) * grad; accum_update = rho * accum_update + (1 - rho) * update^2; "
                      "var -= lr * update."));
  RegisterOp(OpDefBuilder("ApplyProximalGradientDescent")
                 .Input("var: Ref(T)")
                 .Input("alpha: T")
                 .Input("l1: T")
                 .Input("l2: T")
                 .Input("delta: T")
                 .Output("out: Ref(T)")
                 .Attr(kTypes)
                 .Attr(kLocking)
                 .SetShapeFn(ApplyShape({4}, {1, 2, 3}))
                 .Doc("prox_v = var - alpha * delta; var = sign(prox_v) * max(|prox_v| - alpha * l1, 0) / "
                      "(1 + alpha * l2)."));
  RegisterOp(OpDefBuilder("ApplyProximalAdagrad")
                 .Input("var: Ref(T)")
                 .Input("accum: Ref(T)")
                 .Input("lr: T")
                 .Input("l1: T")
                 .Input("l2: T")
                 .Input("grad: T")
                 .Output("out: Ref(T)")
                 .Attr(kTypes)
                 .Attr(kLocking)
                 .SetShapeFn(ApplyShape({1, 5}, {2, 3, 4}))
                 .Doc("accum += grad^2; rate = lr / sqrt(accum); prox_v = var - rate * grad; "
                      "var = sign(prox_v) * max(|prox_v| - rate * l1, 0) / (1 + rate * l2)."));
  RegisterOp(OpDefBuilder("ApplyFtrlV2")
                 .Input("var: Ref(T)")
                 .Input("accum: Ref(T)")
                 .Input("linear: Ref(T)")
                 .Input("grad: T")
                 .Input("lr: T")
                 .Input("l1: T")
                 .Input("l2: T")
                 .Input("l2_shrinkage: T")
                 .Input("lr_power: T")
                 .Output("out: Ref(T)")
                 .Attr(kTypes)
                 .Attr(kLocking)
                 .Attr("multiply_linear_by_lr: bool = false")
                 .SetShapeFn(ApplyShape({1, 2, 3}, {4, 5, 6, 7, 8}))
                 .Doc("The FTRL-proximal update with L2 shrinkage (grad + 2 * l2_shrinkage * var in the "
                      "linear term)."));
  RegisterOp(OpDefBuilder("ApplyAdagradDA")
                 .Input("var: Ref(T)")
                 .Input("gradient_accumulator: Ref(T)")
                 .Input("gradient_squared_accumulator: Ref(T)")
                 .Input("grad: T")
                 .Input("lr: T")
                 .Input("l1: T")
                 .Input("l2: T")
                 .Input("global_step: int64")
                 .Output("out: Ref(T)")
                 .Attr(kTypes)
                 .Attr(kLocking)
                 .SetShapeFn(ApplyShape({1, 2, 3}, {4, 5, 6, 7}))
                 .Doc("Adagrad dual averaging: the accumulators add grad and grad^2; var = -sign(g) * lr * "
                      "max(|g| - l1 * global_step, 0) / (l2 * global_step * lr + sqrt(gg))."));
  RegisterBoth<ApplyAdagradDAOp>("ApplyAdagradDA");
  RegisterNoGradient("ApplyAdagradDA");
  RegisterBoth<ApplyAdadeltaOp>("ApplyAdadelta");
  RegisterBoth<ApplyProximalGradientDescentOp>("ApplyProximalGradientDescent");
  RegisterBoth<ApplyProximalAdagradOp>("ApplyProximalAdagrad");
  RegisterBoth<ApplyFtrlV2Op>("ApplyFtrlV2");
  RegisterResourceApplyOps();
  for (const char* op : {"ApplyAdadelta", "ApplyProximalGradientDescent", "ApplyProximalAdagrad", "ApplyFtrlV2"}) {
    RegisterNoGradient(op);
  }
}

}  // namespace dflow
