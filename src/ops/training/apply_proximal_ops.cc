// ApplyAdadelta, ApplyProximalGradientDescent, ApplyProximalAdagrad, ApplyFtrlV2, ApplyAdagradDA:
// the dense updates of tf.compat.v1.train's AdadeltaOptimizer, ProximalGradientDescentOptimizer,
// ProximalAdagradOptimizer, FtrlOptimizer with l2_shrinkage_regularization_strength and
// AdagradDAOptimizer, with
// TensorFlow's OpDefs and formulas. Kernels behave as those of apply_kernels.cc: every variable
// locked, initialized, of var's dtype and shape; buffers another reader holds copied first; the
// output is the reference to var.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <vector>

#include "absl/strings/match.h"
#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "framework/variable.h"
#include "graph/gradients.h"
#include "ops/state/resource_util.h"
#include "ops/training/training_ops.h"

namespace dflow {
namespace {

// Inputs [0, refs) are variables, then scalars, then `dense` tensors of var's shape (the
// gradient), in the op's order given by `scalar_inputs` / `dense_inputs`.
template <typename T>
class MoreApplyKernel : public OpKernel {
 public:
  MoreApplyKernel(OpKernelConstruction* c, int refs, std::vector<int> scalar_inputs, int dense_input)
      : OpKernel(c), refs_(refs), scalars_(std::move(scalar_inputs)), dense_(dense_input),
        resource_(absl::StartsWith(c->node().op, "Resource")) {}

  void Compute(OpKernelContext* ctx) final {
    std::vector<Var*> vars(refs_);
    std::vector<std::shared_ptr<Var>> held(refs_);  // ResourceApply*: the variables the handles name
    for (int i = 0; i < refs_; ++i) {
      if (resource_) {
        StatusOr<const ResourceHandle*> h = HandleFromInput(ctx, i);
        OP_REQUIRES_OK(ctx, h.status());
        StatusOr<std::shared_ptr<Var>> v = LookupResource<Var>(ctx, **h);
        OP_REQUIRES(ctx, v.ok(),
                    errors::FailedPrecondition(Where(), ": attempting to use uninitialized value ", (*h)->name,
                                               " (", v.status().message(), ")"));
        held[i] = *v;
        vars[i] = held[i].get();
        continue;
      }
      vars[i] = ctx->input_ref(i);
      OP_REQUIRES(ctx, vars[i] != nullptr,
                  errors::InvalidArgument(Where(), ": input ", i, " is not a variable reference"));
    }
    std::vector<Var*> distinct = vars;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    std::vector<std::unique_lock<std::mutex>> locks;
    for (Var* v : distinct) locks.emplace_back(*v->mu());
    for (Var* v : vars) {
      const Tensor& t = *v->tensor();
      OP_REQUIRES(ctx, t.IsInitialized(),
                  errors::FailedPrecondition(Where(), ": attempting to use uninitialized value ", v->name()));
      OP_REQUIRES(ctx, t.dtype() == DTypeOf<T>::value,
                  errors::InvalidArgument(Where(), ": variable ", v->name(), " holds ", DTypeString(t.dtype()),
                                          ", the op expects ", DTypeString(DTypeOf<T>::value)));
    }
    const TensorShape& shape = vars[0]->tensor()->shape();
    for (int i = 1; i < refs_; ++i) {
      OP_REQUIRES(ctx, vars[i]->tensor()->shape() == shape,
                  errors::InvalidArgument(Where(), ": var and input ", i, " do not have the same shape: ",
                                          shape.DebugString(), " vs ", vars[i]->tensor()->shape().DebugString()));
    }
    std::vector<T> s;
    for (int i : scalars_) {
      const Tensor& t = ctx->input(i);
      OP_REQUIRES(ctx, t.IsInitialized() && t.dims() == 0,
                  errors::InvalidArgument(Where(), ": input ", i, " is not a scalar: ", t.shape().DebugString()));
      // global_step (AdagradDA) is int64 whatever T is
      s.push_back(t.dtype() == DT_INT64 ? static_cast<T>(t.scalar<int64_t>()) : t.scalar<T>());
    }
    const Tensor& grad = ctx->input(dense_);
    OP_REQUIRES(ctx, grad.IsInitialized() && grad.shape() == shape,
                errors::InvalidArgument(Where(), ": var and grad do not have the same shape: ", shape.DebugString(),
                                        " vs ", grad.shape().DebugString()));
    OP_REQUIRES_OK(ctx, Check(s));
    for (Var* v : distinct) {
      if (!v->tensor()->RefCountIsOne()) *v->tensor() = v->tensor()->DeepCopy();
    }
    std::vector<T*> data(refs_);
    for (int i = 0; i < refs_; ++i) data[i] = vars[i]->tensor()->template data<T>();
    Update(data.data(), s.data(), grad.data<T>(), shape.num_elements());
    locks.clear();
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

// sign(p) * max(|p| - threshold, 0) / (1 + shrink): the proximal step of L1/L2 regularization.
template <typename T>
T Proximal(T p, T l1_threshold, T l1, T shrink) {
  if (l1 > T(0)) {
    const T sign = p > T(0) ? T(1) : (p < T(0) ? T(-1) : T(0));
    return sign * std::max(std::abs(p) - l1_threshold, T(0)) / (T(1) + shrink);
  }
  return p / (T(1) + shrink);
}

// accum = rho accum + (1 - rho) g^2; update = sqrt(accum_update + eps) / sqrt(accum + eps) g;
// accum_update = rho accum_update + (1 - rho) update^2; var -= lr update.
template <typename T>
class ApplyAdadeltaOp : public MoreApplyKernel<T> {
 public:
  explicit ApplyAdadeltaOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 3, {3, 4, 5}, 6) {}

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override {
    T *var = v[0], *accum = v[1], *accum_update = v[2];
    const T lr = s[0], rho = s[1], epsilon = s[2];
    for (int64_t i = 0; i < n; ++i) {
      accum[i] = accum[i] * rho + g[i] * g[i] * (T(1) - rho);
      const T update = std::sqrt(accum_update[i] + epsilon) * (T(1) / std::sqrt(accum[i] + epsilon)) * g[i];
      accum_update[i] = accum_update[i] * rho + update * update * (T(1) - rho);
      var[i] -= update * lr;
    }
  }
};

// var = prox(var - alpha delta) with threshold alpha l1 and shrinkage alpha l2.
template <typename T>
class ApplyProximalGradientDescentOp : public MoreApplyKernel<T> {
 public:
  explicit ApplyProximalGradientDescentOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 1, {1, 2, 3}, 4) {}

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override {
    T* var = v[0];
    const T alpha = s[0], l1 = s[1], l2 = s[2];
    for (int64_t i = 0; i < n; ++i) var[i] = Proximal(var[i] - g[i] * alpha, alpha * l1, l1, alpha * l2);
  }
};

// accum += g^2; rate = lr / sqrt(accum); var = prox(var - rate g) with threshold rate l1,
// shrinkage rate l2.
template <typename T>
class ApplyProximalAdagradOp : public MoreApplyKernel<T> {
 public:
  explicit ApplyProximalAdagradOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 2, {2, 3, 4}, 5) {}

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override {
    T *var = v[0], *accum = v[1];
    const T lr = s[0], l1 = s[1], l2 = s[2];
    for (int64_t i = 0; i < n; ++i) {
      accum[i] += g[i] * g[i];
      const T rate = lr * (T(1) / std::sqrt(accum[i]));
      var[i] = Proximal(var[i] - g[i] * rate, rate * l1, l1, l2 * rate);
    }
  }
};

// FTRL-proximal; with kShrinkage (FtrlV2) the linear term sees g + 2 l2_shrinkage var, the
// accumulator g.
template <typename T, bool kShrinkage>
class FtrlOp : public MoreApplyKernel<T> {
 public:
  explicit FtrlOp(OpKernelConstruction* c)
      : MoreApplyKernel<T>(c, 3, kShrinkage ? std::vector<int>{4, 5, 6, 7, 8} : std::vector<int>{4, 5, 6, 7}, 3) {
    c->SetStatus(c->GetAttr("multiply_linear_by_lr", &multiply_linear_by_lr_));
  }

 protected:
  Status Check(const std::vector<T>& s) const override {
    if (!(s[0] > T(0))) return errors::InvalidArgument(this->Where(), ": lr is not a positive scalar: ", s[0]);
    const char* what[] = {"l1 regularization strength", "l2 regularization strength",
                          "l2 shrinkage regularization strength"};
    const int last = kShrinkage ? 4 : 3;
    for (int i = 1; i < last; ++i) {
      if (!(s[i] >= T(0))) {
        return errors::InvalidArgument(this->Where(), ": ", what[i - 1], " is not a non-negative scalar: ", s[i]);
      }
    }
    if (!(s[last] <= T(0))) {
      return errors::InvalidArgument(this->Where(), ": lr_power is not a non-positive scalar: ", s[last]);
    }
    return absl::OkStatus();
  }

  void Update(T* const* v, const T* s, const T* g, int64_t n) const override {
    T *var = v[0], *accum = v[1], *linear = v[2];
    const T lr = s[0], l1 = s[1], l2 = s[2], shrinkage = kShrinkage ? s[3] : T(0), lr_power = s[kShrinkage ? 4 : 3];
    auto power = [lr_power](T a) { return lr_power == T(-0.5) ? std::sqrt(a) : std::pow(a, -lr_power); };
    for (int64_t i = 0; i < n; ++i) {
      const T gs = kShrinkage ? g[i] + T(2) * shrinkage * var[i] : g[i];
      const T new_accum = accum[i] + g[i] * g[i];
      const T sigma = power(new_accum) - power(accum[i]);
      T threshold, quadratic;
      if (multiply_linear_by_lr_) {
        linear[i] += gs * lr - sigma * var[i];
        threshold = l1 * lr;
        quadratic = power(new_accum) + T(2) * l2 * lr;
      } else {
        linear[i] += gs - sigma / lr * var[i];
        threshold = l1;
        quadratic = power(new_accum) / lr + T(2) * l2;
      }
      const T l = linear[i];
      var[i] = std::abs(l) > threshold ? ((l > T(0) ? T(1) : T(-1)) * threshold - l) / quadratic : T(0);
      accum[i] = new_accum;
    }
  }

 private:
  bool multiply_linear_by_lr_ = false;
};

// AdagradDA: g and gg accumulate grad and grad^2; with t the global step,
// var = -sign(g) lr max(|g| - l1 t, 0) / (l2 t lr + sqrt(gg)) (without the max when l1 is 0).
template <typename T>
void AdagradDARow(T* var, T* g_acc, T* gg_acc, const T* g, T lr, T l1, T l2, T step, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    g_acc[i] += g[i];
    gg_acc[i] += g[i] * g[i];
    const T denom = l2 * (step * lr) + std::sqrt(gg_acc[i]);
    if (l1 > T(0)) {
      const T sign = g_acc[i] > T(0) ? T(1) : (g_acc[i] < T(0) ? T(-1) : T(0));
      var[i] = lr * T(-1) * sign * std::max(std::abs(g_acc[i]) - step * l1, T(0)) / denom;
    } else {
      var[i] = lr * g_acc[i] * T(-1) / denom;
    }
  }
}

template <typename T>
class ApplyAdagradDAOp : public MoreApplyKernel<T> {
 public:
  explicit ApplyAdagradDAOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 3, {4, 5, 6, 7}, 3) {}

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override {
    AdagradDARow(v[0], v[1], v[2], g, s[0], s[1], s[2], s[3], n);
  }
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
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override {
    const T lr = s[0], momentum = s[1];
    for (int64_t i = 0; i < n; ++i) {
      v[1][i] = v[1][i] * momentum + g[i];
      if (nesterov_) v[0][i] -= g[i] * lr + v[1][i] * momentum * lr;
      else v[0][i] -= v[1][i] * lr;
    }
  }

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
    for (int64_t i = 0; i < n; ++i) {
      if (update_slots_) v[1][i] += g[i] * g[i];
      v[0][i] -= g[i] * s[0] / std::sqrt(v[1][i]);
    }
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
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override {
    T *var = v[0], *m = v[1], *vv = v[2];
    const T beta1_power = s[0], beta2_power = s[1], lr = s[2], beta1 = s[3], beta2 = s[4], epsilon = s[5];
    const T alpha = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
    for (int64_t i = 0; i < n; ++i) {
      m[i] += (g[i] - m[i]) * (T(1) - beta1);
      vv[i] += (g[i] * g[i] - vv[i]) * (T(1) - beta2);
      const T denom = std::sqrt(vv[i]) + epsilon;
      if (nesterov_) var[i] -= ((g[i] * (T(1) - beta1) + beta1 * m[i]) * alpha) / denom;
      else var[i] -= (m[i] * alpha) / denom;
    }
  }

 private:
  bool nesterov_ = false;
};

template <typename T>
class RMSPropOp : public MoreApplyKernel<T> {
 public:
  explicit RMSPropOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 3, {3, 4, 5, 6}, 7) {}

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override {
    const T lr = s[0], rho = s[1], momentum = s[2], epsilon = s[3];
    for (int64_t i = 0; i < n; ++i) {
      v[1][i] += (g[i] * g[i] - v[1][i]) * (T(1) - rho);
      v[2][i] = v[2][i] * momentum + (g[i] * lr) / std::sqrt(v[1][i] + epsilon);
      v[0][i] -= v[2][i];
    }
  }
};

template <typename T>
class CenteredRMSPropOp : public MoreApplyKernel<T> {
 public:
  explicit CenteredRMSPropOp(OpKernelConstruction* c) : MoreApplyKernel<T>(c, 4, {4, 5, 6, 7}, 8) {}

 protected:
  void Update(T* const* v, const T* s, const T* g, int64_t n) const override {
    const T lr = s[0], rho = s[1], momentum = s[2], epsilon = s[3];
    T *var = v[0], *mg = v[1], *ms = v[2], *mom = v[3];
    for (int64_t i = 0; i < n; ++i) {
      ms[i] += (g[i] * g[i] - ms[i]) * (T(1) - rho);
      mg[i] += (g[i] - mg[i]) * (T(1) - rho);
      mom[i] = mom[i] * momentum + (g[i] * lr) / std::sqrt(ms[i] - mg[i] * mg[i] + epsilon);
      var[i] -= mom[i];
    }
  }
};

// Shape function: inputs `same` have var's shape, `scalars` are rank 0; the output is var's shape.
ShapeFn MoreApplyShape(std::vector<int> same, std::vector<int> scalars) {
  return [same = std::move(same), scalars = std::move(scalars)](InferenceContext* c) -> Status {
    const OpDef& def = *c->node().op_def;
    PartialTensorShape s = c->input(0);
    for (int i : same) {
      auto merged = s.MergeWith(c->input(i));
      if (!merged.ok()) {
        return errors::InvalidArgument(def.name, ": var and ", def.inputs[i].name, " do not have compatible shapes: ",
                                       s.DebugString(), " vs ", c->input(i).DebugString());
      }
      s = *merged;
    }
    for (int i : scalars) {
      PartialTensorShape unused;
      if (!c->WithRank(c->input(i), 0, &unused).ok()) {
        return errors::InvalidArgument(def.name, ": ", def.inputs[i].name, " must be a scalar, got shape ",
                                       c->input(i).DebugString());
      }
    }
    c->set_output(0, s);
    return absl::OkStatus();
  };
}

// ResourceApply*: `args` the inputs in order ("var: resource" ...), `scalars` those that are
// rank 0; no outputs.
void RegisterResourceApplyOpDef(const char* op, std::vector<const char*> args, std::vector<int> scalars,
                                std::vector<const char*> attrs, const char* doc) {
  OpDefBuilder b(op);
  for (const char* a : args) b.Input(a);
  b.Attr("T: {float, double}").Attr("use_locking: bool = false");
  for (const char* a : attrs) b.Attr(a);
  b.SetShapeFn([scalars = std::move(scalars)](InferenceContext* c) -> Status {
    PartialTensorShape unused;
    for (int i : scalars) {
      if (!c->WithRank(c->input(i), 0, &unused).ok()) {
        return errors::InvalidArgument(c->node().op_def->name, ": ", c->node().op_def->inputs[i].name,
                                       " must be a scalar, got shape ", c->input(i).DebugString());
      }
    }
    return absl::OkStatus();
  });
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
                              "gradient_squared_accumulator: resource", "grad: T", "lr: T", "l1: T", "l2: T", "global_step: int64"},
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
                 .Input("var: Ref(T)").Input("accum: Ref(T)").Input("accum_update: Ref(T)").Input("lr: T")
                 .Input("rho: T").Input("epsilon: T").Input("grad: T").Output("out: Ref(T)")
                 .Attr(kTypes).Attr(kLocking)
                 .SetShapeFn(MoreApplyShape({1, 2, 6}, {3, 4, 5}))
                 .Doc("accum = rho * accum + (1 - rho) * grad^2; update = sqrt(accum_update + epsilon) / "
                      "sqrt(accum + epsilon) * grad; accum_update = rho * accum_update + (1 - rho) * update^2; "
                      "var -= lr * update."));
  RegisterOp(OpDefBuilder("ApplyProximalGradientDescent")
                 .Input("var: Ref(T)").Input("alpha: T").Input("l1: T").Input("l2: T").Input("delta: T")
                 .Output("out: Ref(T)")
                 .Attr(kTypes).Attr(kLocking)
                 .SetShapeFn(MoreApplyShape({4}, {1, 2, 3}))
                 .Doc("prox_v = var - alpha * delta; var = sign(prox_v) * max(|prox_v| - alpha * l1, 0) / "
                      "(1 + alpha * l2)."));
  RegisterOp(OpDefBuilder("ApplyProximalAdagrad")
                 .Input("var: Ref(T)").Input("accum: Ref(T)").Input("lr: T").Input("l1: T").Input("l2: T")
                 .Input("grad: T").Output("out: Ref(T)")
                 .Attr(kTypes).Attr(kLocking)
                 .SetShapeFn(MoreApplyShape({1, 5}, {2, 3, 4}))
                 .Doc("accum += grad^2; rate = lr / sqrt(accum); prox_v = var - rate * grad; "
                      "var = sign(prox_v) * max(|prox_v| - rate * l1, 0) / (1 + rate * l2)."));
  RegisterOp(OpDefBuilder("ApplyFtrlV2")
                 .Input("var: Ref(T)").Input("accum: Ref(T)").Input("linear: Ref(T)").Input("grad: T").Input("lr: T")
                 .Input("l1: T").Input("l2: T").Input("l2_shrinkage: T").Input("lr_power: T").Output("out: Ref(T)")
                 .Attr(kTypes).Attr(kLocking).Attr("multiply_linear_by_lr: bool = false")
                 .SetShapeFn(MoreApplyShape({1, 2, 3}, {4, 5, 6, 7, 8}))
                 .Doc("The FTRL-proximal update with L2 shrinkage (grad + 2 * l2_shrinkage * var in the "
                      "linear term)."));
  RegisterOp(OpDefBuilder("ApplyAdagradDA")
                 .Input("var: Ref(T)").Input("gradient_accumulator: Ref(T)")
                 .Input("gradient_squared_accumulator: Ref(T)").Input("grad: T").Input("lr: T").Input("l1: T")
                 .Input("l2: T").Input("global_step: int64").Output("out: Ref(T)")
                 .Attr(kTypes).Attr(kLocking)
                 .SetShapeFn(MoreApplyShape({1, 2, 3}, {4, 5, 6, 7}))
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
