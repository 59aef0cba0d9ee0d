// The SparseApply* ops (Adagrad, AdagradDA, Momentum, RMSProp, CenteredRMSProp, Adadelta,
// ProximalGradientDescent, ProximalAdagrad, Ftrl, FtrlV2): the optimizer updates of rows `indices`
// of var (and of its slots) by the rows of grad, which tf.compat.v1.train's optimizers write for
// IndexedSlices gradients (embedding lookups, gathers). TensorFlow's OpDefs and per-element formulas (the dense Apply*
// ops' formulas, row by row, rows in the order of indices). Kernels lock every variable, check
// that each is initialized, of var's shape and dtype, that grad is [len(indices)] + var.shape[1:]
// and that every index is in [0, var.shape[0]) before they change anything; buffers another reader
// holds are copied first; the output is the reference to var.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>
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

// Input layout of one SparseApply op: `refs` variables first; `scalars` and the grad and
// indices inputs anywhere after them.
struct Layout {
  int refs;
  std::vector<int> scalars;
  int grad;
  int indices;
};

template <typename T, typename Idx>
class SparseApplyKernel : public OpKernel {
 public:
  SparseApplyKernel(OpKernelConstruction* c, Layout layout)
      : OpKernel(c), l_(std::move(layout)), resource_(absl::StartsWith(c->node().op, "Resource")) {}

  void Compute(OpKernelContext* ctx) final {
    std::vector<Var*> vars(l_.refs);
    std::vector<std::shared_ptr<Var>> held(l_.refs);  // ResourceSparseApply*: the handles' variables
    for (int i = 0; i < l_.refs; ++i) {
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
    OP_REQUIRES(ctx, shape.dims() >= 1, errors::InvalidArgument(Where(), ": var must be at least 1 dimensional"));
    for (int i = 1; i < l_.refs; ++i) {
      OP_REQUIRES(ctx, vars[i]->tensor()->shape() == shape,
                  errors::InvalidArgument(Where(), ": var and input ", i, " do not have the same shape: ",
                                          shape.DebugString(), " vs ", vars[i]->tensor()->shape().DebugString()));
    }
    std::vector<T> s;
    for (int i : l_.scalars) {
      const Tensor& t = ctx->input(i);
      OP_REQUIRES(ctx, t.IsInitialized() && t.dims() == 0,
                  errors::InvalidArgument(Where(), ": input ", i, " is not a scalar: ", t.shape().DebugString()));
      // global_step (AdagradDA) is int64 whatever T is
      s.push_back(t.dtype() == DT_INT64 ? static_cast<T>(t.scalar<int64_t>()) : t.scalar<T>());
    }
    OP_REQUIRES_OK(ctx, Check(s));
    const Tensor& grad = ctx->input(l_.grad);
    const Tensor& indices = ctx->input(l_.indices);
    OP_REQUIRES(ctx, indices.dims() == 1, errors::InvalidArgument(Where(), ": indices must be one-dimensional"));
    const int64_t n = indices.NumElements();
    OP_REQUIRES(ctx, grad.dims() == shape.dims() && grad.dim_size(0) == n,
                errors::InvalidArgument(Where(), ": grad must be the indices' length by var's inner dimensions; grad ",
                                        grad.shape().DebugString(), ", indices ", indices.shape().DebugString(),
                                        ", var ", shape.DebugString()));
    for (int d = 1; d < shape.dims(); ++d) {
      OP_REQUIRES(ctx, grad.dim_size(d) == shape.dim_size(d),
                  errors::InvalidArgument(Where(), ": var and grad must match in dimension ", d));
    }
    const Idx* idx = indices.data<Idx>();
    const int64_t rows = shape.dim_size(0);
    for (int64_t k = 0; k < n; ++k) {
      OP_REQUIRES(ctx, idx[k] >= 0 && idx[k] < rows,
                  errors::InvalidArgument(Where(), ": Index ", idx[k], " at offset ", k,
                                          " in indices is out of range [0, ", rows, ")"));
    }
    for (Var* v : distinct) {
      if (!v->tensor()->RefCountIsOne()) *v->tensor() = v->tensor()->DeepCopy();
    }
    const int64_t inner = rows == 0 ? 0 : shape.num_elements() / rows;
    std::vector<T*> data(l_.refs), row(l_.refs);
    for (int i = 0; i < l_.refs; ++i) data[i] = vars[i]->tensor()->template data<T>();
    const T* g = grad.data<T>();
    for (int64_t k = 0; k < n; ++k) {
      for (int i = 0; i < l_.refs; ++i) row[i] = data[i] + idx[k] * inner;
      UpdateRow(row.data(), s.data(), g + k * inner, inner);
    }
    locks.clear();
    if (!resource_) ctx->set_output_ref(0, ctx->input_ref_ptr(0));
  }

 protected:
  virtual Status Check(const std::vector<T>&) const { return absl::OkStatus(); }
  // Updates n elements of each variable's row with the matching row of grad.
  virtual void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const = 0;
  std::string Where() const { return absl::StrCat(type_string(), " '", name(), "'"); }

 private:
  const Layout l_;
  const bool resource_;
};

template <typename T>
T Proximal(T p, T threshold, T l1, T shrink) {
  if (l1 > T(0)) {
    const T sign = p > T(0) ? T(1) : (p < T(0) ? T(-1) : T(0));
    return sign * std::max(std::abs(p) - threshold, T(0)) / (T(1) + shrink);
  }
  return p / (T(1) + shrink);
}

template <typename T, typename Idx>
class SparseApplyAdagradOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyAdagradOp(OpKernelConstruction* c) : SparseApplyKernel<T, Idx>(c, {2, {2}, 3, 4}) {
    c->SetStatus(c->GetAttr("update_slots", &update_slots_));
  }

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override {
    for (int64_t i = 0; i < n; ++i) {
      if (update_slots_) v[1][i] += g[i] * g[i];
      v[0][i] -= g[i] * s[0] / std::sqrt(v[1][i]);
    }
  }

 private:
  bool update_slots_ = true;
};

template <typename T, typename Idx>
class SparseApplyMomentumOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyMomentumOp(OpKernelConstruction* c) : SparseApplyKernel<T, Idx>(c, {2, {2, 5}, 3, 4}) {
    c->SetStatus(c->GetAttr("use_nesterov", &nesterov_));
  }

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override {
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

template <typename T, typename Idx>
class SparseApplyRMSPropOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyRMSPropOp(OpKernelConstruction* c) : SparseApplyKernel<T, Idx>(c, {3, {3, 4, 5, 6}, 7, 8}) {}

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override {
    const T lr = s[0], rho = s[1], momentum = s[2], epsilon = s[3];
    for (int64_t i = 0; i < n; ++i) {
      v[1][i] += (g[i] * g[i] - v[1][i]) * (T(1) - rho);
      v[2][i] = v[2][i] * momentum + (g[i] * lr) / std::sqrt(v[1][i] + epsilon);
      v[0][i] -= v[2][i];
    }
  }
};

template <typename T, typename Idx>
class SparseApplyCenteredRMSPropOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyCenteredRMSPropOp(OpKernelConstruction* c)
      : SparseApplyKernel<T, Idx>(c, {4, {4, 5, 6, 7}, 8, 9}) {}

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override {
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

template <typename T, typename Idx>
class SparseApplyAdadeltaOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyAdadeltaOp(OpKernelConstruction* c) : SparseApplyKernel<T, Idx>(c, {3, {3, 4, 5}, 6, 7}) {}

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override {
    const T lr = s[0], rho = s[1], epsilon = s[2];
    for (int64_t i = 0; i < n; ++i) {
      v[1][i] = v[1][i] * rho + g[i] * g[i] * (T(1) - rho);
      const T update = std::sqrt(v[2][i] + epsilon) * (T(1) / std::sqrt(v[1][i] + epsilon)) * g[i];
      v[2][i] = v[2][i] * rho + update * update * (T(1) - rho);
      v[0][i] -= update * lr;
    }
  }
};

template <typename T, typename Idx>
class SparseApplyProximalGradientDescentOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyProximalGradientDescentOp(OpKernelConstruction* c)
      : SparseApplyKernel<T, Idx>(c, {1, {1, 2, 3}, 4, 5}) {}

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override {
    const T alpha = s[0], l1 = s[1], l2 = s[2];
    for (int64_t i = 0; i < n; ++i) v[0][i] = Proximal(v[0][i] - g[i] * alpha, alpha * l1, l1, alpha * l2);
  }
};

template <typename T, typename Idx>
class SparseApplyProximalAdagradOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyProximalAdagradOp(OpKernelConstruction* c)
      : SparseApplyKernel<T, Idx>(c, {2, {2, 3, 4}, 5, 6}) {}

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override {
    const T lr = s[0], l1 = s[1], l2 = s[2];
    for (int64_t i = 0; i < n; ++i) {
      v[1][i] += g[i] * g[i];
      const T rate = lr * (T(1) / std::sqrt(v[1][i]));
      v[0][i] = Proximal(v[0][i] - g[i] * rate, rate * l1, l1, l2 * rate);
    }
  }
};

// Adagrad dual averaging on rows (the formula of ApplyAdagradDA in apply_proximal_ops.cc).
template <typename T, typename Idx>
class SparseApplyAdagradDAOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyAdagradDAOp(OpKernelConstruction* c)
      : SparseApplyKernel<T, Idx>(c, {3, {5, 6, 7, 8}, 3, 4}) {}

 protected:
  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override {
    const T lr = s[0], l1 = s[1], l2 = s[2], step = s[3];
    T *var = v[0], *g_acc = v[1], *gg_acc = v[2];
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
};

// SparseApplyFtrl (shrinkage false) and SparseApplyFtrlV2 (an l2_shrinkage input).
template <typename T, typename Idx, bool kShrinkage>
class SparseApplyFtrlOp : public SparseApplyKernel<T, Idx> {
 public:
  explicit SparseApplyFtrlOp(OpKernelConstruction* c)
      : SparseApplyKernel<T, Idx>(c, {3, kShrinkage ? std::vector<int>{5, 6, 7, 8, 9} : std::vector<int>{5, 6, 7, 8},
                                      3, 4}) {
    c->SetStatus(c->GetAttr("multiply_linear_by_lr", &multiply_linear_by_lr_));
  }

 protected:
  Status Check(const std::vector<T>& s) const override {
    if (!(s[0] > T(0))) return errors::InvalidArgument(this->Where(), ": lr is not a positive scalar: ", s[0]);
    const int last = static_cast<int>(s.size()) - 1;
    for (int i = 1; i < last; ++i) {
      if (!(s[i] >= T(0))) {
        return errors::InvalidArgument(this->Where(), ": regularization strength ", i,
                                       " is not a non-negative scalar: ", s[i]);
      }
    }
    if (!(s[last] <= T(0))) {
      return errors::InvalidArgument(this->Where(), ": lr_power is not a non-positive scalar: ", s[last]);
    }
    return absl::OkStatus();
  }

  void UpdateRow(T* const* v, const T* s, const T* g, int64_t n) const override {
    const T lr = s[0], l1 = s[1], l2 = s[2];
    const T shrinkage = kShrinkage ? s[3] : T(0), lr_power = kShrinkage ? s[4] : s[3];
    auto power = [lr_power](T a) { return lr_power == T(-0.5) ? std::sqrt(a) : std::pow(a, -lr_power); };
    T *var = v[0], *accum = v[1], *linear = v[2];
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
template <typename T, typename Idx>
using SparseApplyFtrlV1Op = SparseApplyFtrlOp<T, Idx, false>;
template <typename T, typename Idx>
using SparseApplyFtrlV2Op = SparseApplyFtrlOp<T, Idx, true>;

// var's shape for the output; slots must agree with var, scalars be scalars, indices a vector.
ShapeFn SparseApplyShape(Layout l) {
  return [l = std::move(l)](InferenceContext* c) -> Status {
    const OpDef& def = *c->node().op_def;
    PartialTensorShape s = c->input(0);
    for (int i = 1; i < l.refs; ++i) {
      auto merged = s.MergeWith(c->input(i));
      if (!merged.ok()) {
        return errors::InvalidArgument(def.name, ": var and ", def.inputs[i].name, " do not have compatible shapes: ",
                                       s.DebugString(), " vs ", c->input(i).DebugString());
      }
      s = *merged;
    }
    PartialTensorShape unused;
    for (int i : l.scalars) {
      if (!c->WithRank(c->input(i), 0, &unused).ok()) {
        return errors::InvalidArgument(def.name, ": ", def.inputs[i].name, " must be a scalar, got shape ",
                                       c->input(i).DebugString());
      }
    }
    if (!c->WithRank(c->input(l.indices), 1, &unused).ok()) {
      return errors::InvalidArgument(def.name, ": indices must be one-dimensional, got shape ",
                                     c->input(l.indices).DebugString());
    }
    c->set_output(0, s);
    return absl::OkStatus();
  };
}

template <template <typename, typename> class K>
void RegisterSparseKernels(const std::string& op);

// The kernels of the op and of its Resource* form.
template <template <typename, typename> class K>
void RegisterBothSparseKernels(const char* op) {
  RegisterSparseKernels<K>(op);
  RegisterSparseKernels<K>(absl::StrCat("Resource", op));
}

template <template <typename, typename> class K>
void RegisterSparseKernels(const std::string& op) {
  RegisterKernel<K<float, int32_t>>(
      KernelBuilder(op).TypeConstraint<float>("T").TypeConstraint<int32_t>("Tindices"));
  RegisterKernel<K<float, int64_t>>(
      KernelBuilder(op).TypeConstraint<float>("T").TypeConstraint<int64_t>("Tindices"));
  RegisterKernel<K<double, int32_t>>(
      KernelBuilder(op).TypeConstraint<double>("T").TypeConstraint<int32_t>("Tindices"));
  RegisterKernel<K<double, int64_t>>(
      KernelBuilder(op).TypeConstraint<double>("T").TypeConstraint<int64_t>("Tindices"));
}

// One OpDef: `args` are "name: type" of the inputs in order (Ref(T) for the variables).
// The op on reference variables and its Resource* form on resource variables (no output; the
// slots' shapes are known only while running).
void RegisterSparseOpDef(const char* op, std::vector<const char*> args, Layout layout, const char* doc,
                         const char* extra_attr = nullptr) {
  OpDefBuilder b(op);
  for (const char* a : args) b.Input(a);
  b.Output("out: Ref(T)").Attr("T: {float, double}").Attr("Tindices: {int32, int64}");
  b.Attr("use_locking: bool = false");
  if (extra_attr != nullptr) b.Attr(extra_attr);
  RegisterOp(b.SetShapeFn(SparseApplyShape(layout)).Doc(doc));
  RegisterNoGradient(op);

  const std::string resource_op = absl::StrCat("Resource", op);
  OpDefBuilder r(resource_op);
  for (int i = 0; i < static_cast<int>(args.size()); ++i) {
    r.Input(i < layout.refs ? absl::StrCat(std::string(args[i]).substr(0, std::string(args[i]).find(':')), ": resource")
                            : std::string(args[i]));
  }
  r.Attr("T: {float, double}").Attr("Tindices: {int32, int64}").Attr("use_locking: bool = false");
  if (extra_attr != nullptr) r.Attr(extra_attr);
  r.SetShapeFn([layout](InferenceContext* c) -> Status {
    PartialTensorShape unused;
    for (int i : layout.scalars) {
      if (!c->WithRank(c->input(i), 0, &unused).ok()) {
        return errors::InvalidArgument(c->node().op_def->name, ": ", c->node().op_def->inputs[i].name,
                                       " must be a scalar, got shape ", c->input(i).DebugString());
      }
    }
    if (!c->WithRank(c->input(layout.indices), 1, &unused).ok()) {
      return errors::InvalidArgument(c->node().op_def->name, ": indices must be one-dimensional, got shape ",
                                     c->input(layout.indices).DebugString());
    }
    return absl::OkStatus();
  });
  RegisterOp(r.SetIsStateful().Doc(absl::StrCat(doc, " (resource variables)")));
  RegisterNoGradient(resource_op);
}

}  // namespace

void RegisterSparseApplyOps() {
  RegisterSparseOpDef("SparseApplyAdagrad", {"var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T", "indices: Tindices"},
                      {2, {2}, 3, 4}, "ApplyAdagrad on the rows `indices` of var and accum.",
                      "update_slots: bool = true");
  RegisterSparseOpDef("SparseApplyMomentum",
                      {"var: Ref(T)", "accum: Ref(T)", "lr: T", "grad: T", "indices: Tindices", "momentum: T"},
                      {2, {2, 5}, 3, 4}, "ApplyMomentum on the rows `indices` of var and accum.",
                      "use_nesterov: bool = false");
  RegisterSparseOpDef("SparseApplyRMSProp",
                      {"var: Ref(T)", "ms: Ref(T)", "mom: Ref(T)", "lr: T", "rho: T", "momentum: T", "epsilon: T",
                       "grad: T", "indices: Tindices"},
                      {3, {3, 4, 5, 6}, 7, 8}, "ApplyRMSProp on the rows `indices` of var, ms and mom.");
  RegisterSparseOpDef("SparseApplyCenteredRMSProp",
                      {"var: Ref(T)", "mg: Ref(T)", "ms: Ref(T)", "mom: Ref(T)", "lr: T", "rho: T", "momentum: T",
                       "epsilon: T", "grad: T", "indices: Tindices"},
                      {4, {4, 5, 6, 7}, 8, 9}, "ApplyCenteredRMSProp on the rows `indices` of var, mg, ms and mom.");
  RegisterSparseOpDef("SparseApplyAdadelta",
                      {"var: Ref(T)", "accum: Ref(T)", "accum_update: Ref(T)", "lr: T", "rho: T", "epsilon: T",
                       "grad: T", "indices: Tindices"},
                      {3, {3, 4, 5}, 6, 7}, "ApplyAdadelta on the rows `indices` of var, accum and accum_update.");
  RegisterSparseOpDef("SparseApplyProximalGradientDescent",
                      {"var: Ref(T)", "alpha: T", "l1: T", "l2: T", "grad: T", "indices: Tindices"},
                      {1, {1, 2, 3}, 4, 5}, "ApplyProximalGradientDescent on the rows `indices` of var.");
  RegisterSparseOpDef("SparseApplyProximalAdagrad",
                      {"var: Ref(T)", "accum: Ref(T)", "lr: T", "l1: T", "l2: T", "grad: T", "indices: Tindices"},
                      {2, {2, 3, 4}, 5, 6}, "ApplyProximalAdagrad on the rows `indices` of var and accum.");
  RegisterSparseOpDef("SparseApplyFtrl",
                      {"var: Ref(T)", "accum: Ref(T)", "linear: Ref(T)", "grad: T", "indices: Tindices", "lr: T",
                       "l1: T", "l2: T", "lr_power: T"},
                      {3, {5, 6, 7, 8}, 3, 4}, "ApplyFtrl on the rows `indices` of var, accum and linear.",
                      "multiply_linear_by_lr: bool = false");
  RegisterSparseOpDef("SparseApplyFtrlV2",
                      {"var: Ref(T)", "accum: Ref(T)", "linear: Ref(T)", "grad: T", "indices: Tindices", "lr: T",
                       "l1: T", "l2: T", "l2_shrinkage: T", "lr_power: T"},
                      {3, {5, 6, 7, 8, 9}, 3, 4}, "ApplyFtrlV2 on the rows `indices` of var, accum and linear.",
                      "multiply_linear_by_lr: bool = false");
  RegisterSparseOpDef("SparseApplyAdagradDA",
                      {"var: Ref(T)", "gradient_accumulator: Ref(T)", "gradient_squared_accumulator: Ref(T)",
                       "grad: T", "indices: Tindices", "lr: T", "l1: T", "l2: T", "global_step: int64"},
                      {3, {5, 6, 7, 8}, 3, 4}, "ApplyAdagradDA on the rows `indices` of var and its accumulators.");
  RegisterBothSparseKernels<SparseApplyAdagradDAOp>("SparseApplyAdagradDA");
  RegisterBothSparseKernels<SparseApplyAdagradOp>("SparseApplyAdagrad");
  RegisterBothSparseKernels<SparseApplyMomentumOp>("SparseApplyMomentum");
  RegisterBothSparseKernels<SparseApplyRMSPropOp>("SparseApplyRMSProp");
  RegisterBothSparseKernels<SparseApplyCenteredRMSPropOp>("SparseApplyCenteredRMSProp");
  RegisterBothSparseKernels<SparseApplyAdadeltaOp>("SparseApplyAdadelta");
  RegisterBothSparseKernels<SparseApplyProximalGradientDescentOp>("SparseApplyProximalGradientDescent");
  RegisterBothSparseKernels<SparseApplyProximalAdagradOp>("SparseApplyProximalAdagrad");
  RegisterBothSparseKernels<SparseApplyFtrlV1Op>("SparseApplyFtrl");
  RegisterBothSparseKernels<SparseApplyFtrlV2Op>("SparseApplyFtrlV2");
}

}  // namespace dflow
