// What the optimizer update kernels of apply_kernels.cc (the first Apply* ops), apply_proximal_ops.cc
// (the other Apply* and the ResourceApply*) and sparse_apply_ops.cc (SparseApply* and
// ResourceSparseApply*) share: finding, locking and checking
// their variables, reading their scalar inputs, the shape functions, and one function per
// optimizer formula. The formulas update n elements of each variable in place: the whole
// variables for the dense ops, one row at a time for the sparse ones. `v` are the variables in
// the op's order (var first, then its slots), `s` the scalar inputs in the op's order, `g` the
// gradient.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "framework/op_def.h"
#include "framework/op_kernel.h"
#include "framework/variable.h"

namespace dflow {

// The variables of one update, locked (each distinct one once, in address order, so that updates
// sharing variables cannot deadlock) until this goes away or `locks` is cleared.
struct LockedVars {
  std::vector<Var*> vars;                  // in the op's order
  std::vector<std::shared_ptr<Var>> held;  // resource forms: the variables the handles name
  std::vector<Var*> distinct;
  std::vector<std::unique_lock<std::mutex>> locks;

  // Copies each buffer another reader still holds (so a snapshot never changes under its
  // reader); then each variable's data.
  template <typename T>
  std::vector<T*> ExclusiveData() {
    for (Var* v : distinct) {
      if (!v->tensor()->RefCountIsOne()) *v->tensor() = v->tensor()->DeepCopy();
    }
    std::vector<T*> data(vars.size());
    for (size_t i = 0; i < vars.size(); ++i) data[i] = vars[i]->tensor()->template data<T>();
    return data;
  }
};

// Inputs [0, refs) are variables (reference inputs, or resource handles when `resource`): finds
// and locks them, and checks that each is initialized, holds `dtype` and has var's shape.
// `where` names the op in errors.
Status LockApplyVars(OpKernelContext* ctx, int refs, bool resource, DType dtype, const std::string& where,
                     LockedVars* out);

// The scalar inputs `scalars` as T (global_step, int64 whatever T is, converted).
template <typename T>
Status ReadApplyScalars(OpKernelContext* ctx, const std::vector<int>& scalars, const std::string& where,
                        std::vector<T>* out) {
  for (int i : scalars) {
    const Tensor& t = ctx->input(i);
    if (!(t.IsInitialized() && t.dims() == 0)) {
      return errors::InvalidArgument(where, ": input ", i, " is not a scalar: ", t.shape().DebugString());
    }
    out->push_back(t.dtype() == DT_INT64 ? static_cast<T>(t.scalar<int64_t>()) : t.scalar<T>());
  }
  return absl::OkStatus();
}

// Shape function of an Apply op: inputs `same` have var's shape (input 0), `scalars` are rank 0;
// the output is var's shape merged with all of them.
ShapeFn ApplyShape(std::vector<int> same, std::vector<int> scalars);
// The inputs `scalars` are rank 0 (InvalidArgument naming the first that is not).
Status CheckScalarRanks(InferenceContext* c, const std::vector<int>& scalars);

// ---- The formulas (TensorFlow's, in its order of operations) ----

// sign(p) * max(|p| - l1_threshold, 0) / (1 + shrink): the proximal step of L1/L2 regularization.
template <typename T>
T Proximal(T p, T l1_threshold, T l1, T shrink) {
  if (l1 > T(0)) {
    const T sign = p > T(0) ? T(1) : (p < T(0) ? T(-1) : T(0));
    return sign * std::max(std::abs(p) - l1_threshold, T(0)) / (T(1) + shrink);
  }
  return p / (T(1) + shrink);
}

// var, accum; lr. accum += g^2 (when update_slots); var -= lr g / sqrt(accum).
template <typename T>
void AdagradUpdate(T* const* v, const T* s, const T* g, int64_t n, bool update_slots) {
  for (int64_t i = 0; i < n; ++i) {
    if (update_slots) v[1][i] += g[i] * g[i];
    v[0][i] -= g[i] * s[0] / std::sqrt(v[1][i]);
  }
}

// var, accum; lr, momentum. accum = momentum accum + g; var -= lr accum (Nesterov: lr g + lr
// momentum accum).
template <typename T>
void MomentumUpdate(T* const* v, const T* s, const T* g, int64_t n, bool nesterov) {
  const T lr = s[0], momentum = s[1];
  for (int64_t i = 0; i < n; ++i) {
    v[1][i] = v[1][i] * momentum + g[i];
    if (nesterov) v[0][i] -= g[i] * lr + v[1][i] * momentum * lr;
    else v[0][i] -= v[1][i] * lr;
  }
}

// var, m, v; beta1_power, beta2_power, lr, beta1, beta2, epsilon.
template <typename T>
void AdamUpdate(T* const* v, const T* s, const T* g, int64_t n, bool nesterov) {
  T *var = v[0], *m = v[1], *vv = v[2];
  const T beta1_power = s[0], beta2_power = s[1], lr = s[2], beta1 = s[3], beta2 = s[4], epsilon = s[5];
  const T alpha = lr * std::sqrt(T(1) - beta2_power) / (T(1) - beta1_power);
  for (int64_t i = 0; i < n; ++i) {
    m[i] += (g[i] - m[i]) * (T(1) - beta1);
    vv[i] += (g[i] * g[i] - vv[i]) * (T(1) - beta2);
    const T denom = std::sqrt(vv[i]) + epsilon;
    if (nesterov) var[i] -= ((g[i] * (T(1) - beta1) + beta1 * m[i]) * alpha) / denom;
    else var[i] -= (m[i] * alpha) / denom;
  }
}

// var, ms, mom; lr, rho, momentum, epsilon.
template <typename T>
void RMSPropUpdate(T* const* v, const T* s, const T* g, int64_t n) {
  const T lr = s[0], rho = s[1], momentum = s[2], epsilon = s[3];
  for (int64_t i = 0; i < n; ++i) {
    v[1][i] += (g[i] * g[i] - v[1][i]) * (T(1) - rho);
    v[2][i] = v[2][i] * momentum + (g[i] * lr) / std::sqrt(v[1][i] + epsilon);
    v[0][i] -= v[2][i];
  }
}

// var, mg, ms, mom; lr, rho, momentum, epsilon.
template <typename T>
void CenteredRMSPropUpdate(T* const* v, const T* s, const T* g, int64_t n) {
  const T lr = s[0], rho = s[1], momentum = s[2], epsilon = s[3];
  T *var = v[0], *mg = v[1], *ms = v[2], *mom = v[3];
  for (int64_t i = 0; i < n; ++i) {
    ms[i] += (g[i] * g[i] - ms[i]) * (T(1) - rho);
    mg[i] += (g[i] - mg[i]) * (T(1) - rho);
    mom[i] = mom[i] * momentum + (g[i] * lr) / std::sqrt(ms[i] - mg[i] * mg[i] + epsilon);
    var[i] -= mom[i];
  }
}

// var, accum, accum_update; lr, rho, epsilon. accum = rho accum + (1 - rho) g^2;
// update = sqrt(accum_update + eps) / sqrt(accum + eps) g; accum_update = rho accum_update +
// (1 - rho) update^2; var -= lr update.
template <typename T>
void AdadeltaUpdate(T* const* v, const T* s, const T* g, int64_t n) {
  T *var = v[0], *accum = v[1], *accum_update = v[2];
  const T lr = s[0], rho = s[1], epsilon = s[2];
  for (int64_t i = 0; i < n; ++i) {
    accum[i] = accum[i] * rho + g[i] * g[i] * (T(1) - rho);
    const T update = std::sqrt(accum_update[i] + epsilon) * (T(1) / std::sqrt(accum[i] + epsilon)) * g[i];
    accum_update[i] = accum_update[i] * rho + update * update * (T(1) - rho);
    var[i] -= update * lr;
  }
}

// var; alpha, l1, l2. var = prox(var - alpha delta) with threshold alpha l1 and shrinkage alpha l2.
template <typename T>
void ProximalGradientDescentUpdate(T* const* v, const T* s, const T* g, int64_t n) {
  T* var = v[0];
  const T alpha = s[0], l1 = s[1], l2 = s[2];
  for (int64_t i = 0; i < n; ++i) var[i] = Proximal(var[i] - g[i] * alpha, alpha * l1, l1, alpha * l2);
}

// var, accum; lr, l1, l2. accum += g^2; rate = lr / sqrt(accum); var = prox(var - rate g) with
// threshold rate l1, shrinkage rate l2.
template <typename T>
void ProximalAdagradUpdate(T* const* v, const T* s, const T* g, int64_t n) {
  T *var = v[0], *accum = v[1];
  const T lr = s[0], l1 = s[1], l2 = s[2];
  for (int64_t i = 0; i < n; ++i) {
    accum[i] += g[i] * g[i];
    const T rate = lr * (T(1) / std::sqrt(accum[i]));
    var[i] = Proximal(var[i] - g[i] * rate, rate * l1, l1, l2 * rate);
  }
}

// var, gradient_accumulator, gradient_squared_accumulator; lr, l1, l2, global_step. The
// accumulators add g and g^2; with t the global step, var = -sign(g_acc) lr max(|g_acc| - l1 t, 0)
// / (l2 t lr + sqrt(gg_acc)) (without the max when l1 is 0).
template <typename T>
void AdagradDAUpdate(T* const* v, const T* s, const T* g, int64_t n) {
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

// var, accum, linear; lr, l1, l2, (l2_shrinkage when kShrinkage,) lr_power. FTRL-proximal; with
// kShrinkage (FtrlV2) the linear term sees g + 2 l2_shrinkage var, the accumulator g.
template <typename T, bool kShrinkage>
void FtrlUpdate(T* const* v, const T* s, const T* g, int64_t n, bool multiply_linear_by_lr) {
  const T lr = s[0], l1 = s[1], l2 = s[2];
  const T shrinkage = kShrinkage ? s[3] : T(0), lr_power = kShrinkage ? s[4] : s[3];
  auto power = [lr_power](T a) { return lr_power == T(-0.5) ? std::sqrt(a) : std::pow(a, -lr_power); };
  T *var = v[0], *accum = v[1], *linear = v[2];
  for (int64_t i = 0; i < n; ++i) {
    const T gs = kShrinkage ? g[i] + T(2) * shrinkage * var[i] : g[i];
    const T new_accum = accum[i] + g[i] * g[i];
    const T sigma = power(new_accum) - power(accum[i]);
    T threshold, quadratic;
    if (multiply_linear_by_lr) {
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

// The Ftrl ops' checks of lr (positive), the regularization strengths (non-negative) and
// lr_power (non-positive), `s` as FtrlUpdate's.
template <typename T, bool kShrinkage>
Status CheckFtrlScalars(const std::string& where, const std::vector<T>& s) {
  if (!(s[0] > T(0))) return errors::InvalidArgument(where, ": lr is not a positive scalar: ", s[0]);
  const char* what[] = {"l1 regularization strength", "l2 regularization strength",
                        "l2 shrinkage regularization strength"};
  const int last = kShrinkage ? 4 : 3;
  for (int i = 1; i < last; ++i) {
    if (!(s[i] >= T(0))) {
      return errors::InvalidArgument(where, ": ", what[i - 1], " is not a non-negative scalar: ", s[i]);
    }
  }
  if (!(s[last] <= T(0))) {
    return errors::InvalidArgument(where, ": lr_power is not a non-positive scalar: ", s[last]);
  }
  return absl::OkStatus();
}

}  // namespace dflow
