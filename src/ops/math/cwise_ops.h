// The kernel templates of the element-wise math ops: BinaryOpKernel<F, T, TOut> (NumPy
// broadcasting) and UnaryOpKernel<F, T>, with the functors of cwise_functors.h.
//
// Per-node cost matters (graphs of thousands of tiny ops): Compute allocates nothing but the
// output tensor on the fast paths (same shapes, or one operand a single element), and not even
// that when it can take over an input's buffer; the functor is inlined into the loop. Other
// shapes go through a BroadcastPlan.
#pragma once

#include <utility>

#include "framework/op_kernel.h"
#include "ops/math/broadcast.h"
#include "ops/math/cwise_functors.h"

namespace dflow {

template <typename F, typename T, typename TOut>
class BinaryOpKernel : public OpKernel {
 public:
  explicit BinaryOpKernel(OpKernelConstruction* c) : OpKernel(c) {
    // Only Equal and NotEqual have it: false turns incompatible shapes into a scalar `false`
    // (NotEqual: `true`) instead of an error.
    if (c->node().attrs.count("incompatible_shape_error") != 0) {
      c->SetStatus(c->GetAttr("incompatible_shape_error", &incompatible_shape_error_));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    const T* xd = x.data<T>();
    const T* yd = y.data<T>();
    if constexpr (requires { F::template Check<T>(yd, int64_t{0}); }) {
      Status s = F::template Check<T>(yd, y.NumElements());
      if (!s.ok()) {
        ctx->SetStatus(errors::Annotate(s, Prefix()));
        return;
      }
    }
    Tensor* out = nullptr;
    const int64_t nx = x.NumElements(), ny = y.NumElements();
    // On the fast paths the output takes over an input's buffer when nobody else holds it (a
    // chain of element-wise ops then allocates nothing): element i is read before it is written,
    // and a broadcast operand is copied out first.
    if (x.shape() == y.shape()) {
      OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, x.shape(), &out));
      TOut* o = out->data<TOut>();
      for (int64_t i = 0; i < nx; ++i) o[i] = F::Apply(xd[i], yd[i]);
    } else if (ny == 1 && y.dims() <= x.dims()) {
      const T b = yd[0];
      OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &out));
      TOut* o = out->data<TOut>();
      for (int64_t i = 0; i < nx; ++i) o[i] = F::Apply(xd[i], b);
    } else if (nx == 1 && x.dims() <= y.dims()) {
      const T a = xd[0];
      OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({1}, 0, y.shape(), &out));
      TOut* o = out->data<TOut>();
      for (int64_t i = 0; i < ny; ++i) o[i] = F::Apply(a, yd[i]);
    } else {
      StatusOr<BroadcastPlan> plan = MakeBroadcastPlan(x.shape(), y.shape());
      if (!plan.ok()) {
        if (!incompatible_shape_error_) {
          OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
          TOut value{};  // Equal of incompatible shapes: false
          if constexpr (requires { F::kIncompatibleShapes; }) value = F::kIncompatibleShapes;
          out->data<TOut>()[0] = value;
          return;
        }
        ctx->SetStatus(errors::Annotate(plan.status(), Prefix()));
        return;
      }
      OP_REQUIRES_OK(ctx, ctx->allocate_output(0, plan->output_shape, &out));
      if (out->NumElements() == 0) return;
      BroadcastLoop(*plan, xd, yd, out->data<TOut>(), [](const T& a, const T& b) -> TOut { return F::Apply(a, b); });
    }
  }

 private:
  std::string Prefix() const { return absl::StrCat(type_string(), " '", name(), "': "); }

  bool incompatible_shape_error_ = true;
};

template <typename F, typename T>
class UnaryOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &out));
    const T* xd = x.data<T>();
    T* o = out->data<T>();
    const int64_t n = x.NumElements();
    for (int64_t i = 0; i < n; ++i) o[i] = F::Apply(xd[i]);
  }
};

}  // namespace dflow
