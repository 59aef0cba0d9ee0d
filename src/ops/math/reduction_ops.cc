// Sum, Mean, Max, Min, Prod over the axes given by `reduction_indices` (a scalar or a vector;
// negative axes count from the end; empty: nothing is reduced). As in TensorFlow, an axis named
// twice passes the shape function and fails the kernel (InvalidArgument).
//
// Reducing over no elements gives the reduction's identity: Sum 0, Prod 1, Max -inf (the lowest
// integer), Min +inf (the highest integer); Mean of nothing is NaN for floating point and 0 for
// integers. float sums, means and products accumulate in double. Max and Min propagate NaN.
// Integer sums and products wrap around.
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "ops/math/cwise_functors.h"
#include "ops/math/math_ops.h"
#include "ops/math/reduction.h"

namespace dflow {
namespace {

// float accumulates in double; everything else in its own type.
template <typename T>
using WideAcc = std::conditional_t<std::is_same_v<T, float>, double, T>;

template <typename T>
struct SumReducer {
  using Acc = WideAcc<T>;
  static Acc Init() { return Acc{0}; }
  static Acc Combine(Acc a, T x) { return functor::WrapAdd(a, static_cast<Acc>(x)); }
  static T Finish(Acc a, int64_t) { return static_cast<T>(a); }
};

// Integer means accumulate in int64 (so a mean of uint8 or int32 values does not wrap unless
// the int64 sum does) and truncate toward zero.
template <typename T>
struct MeanReducer {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  static Acc Init() { return Acc{0}; }
  static Acc Combine(Acc a, T x) { return functor::WrapAdd(a, static_cast<Acc>(x)); }
  static T Finish(Acc a, int64_t count) {
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(a / static_cast<double>(count));  // 0 / 0 is NaN
    } else {
      if (count == 0) return T{0};
      if (count == 1) return static_cast<T>(a);
      return static_cast<T>(a / count);
    }
  }
};

template <typename T>
struct ProdReducer {
  using Acc = WideAcc<T>;
  static Acc Init() { return Acc{1}; }
  static Acc Combine(Acc a, T x) { return functor::WrapMul(a, static_cast<Acc>(x)); }
  static T Finish(Acc a, int64_t) { return static_cast<T>(a); }
};

template <typename T>
struct MaxReducer {
  using Acc = T;
  static T Init() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  static T Combine(T a, T x) {
    if constexpr (std::is_floating_point_v<T>) {
      return (x > a || std::isnan(x)) && !std::isnan(a) ? x : a;
    } else {
      return x > a ? x : a;
    }
  }
  static T Finish(T a, int64_t) { return a; }
};

template <typename T>
struct MinReducer {
  using Acc = T;
  static T Init() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
  static T Combine(T a, T x) {
    if constexpr (std::is_floating_point_v<T>) {
      return (x < a || std::isnan(x)) && !std::isnan(a) ? x : a;
    } else {
      return x < a ? x : a;
    }
  }
  static T Finish(T a, int64_t) { return a; }
};

template <typename T, template <typename> class R>
class ReductionOp : public OpKernel {
 public:
  explicit ReductionOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("keep_dims", &keep_dims_)); }

  void Compute(OpKernelContext* ctx) override {
    using Reducer = R<T>;
    using Acc = typename Reducer::Acc;
    const Tensor& x = ctx->input(0);
    StatusOr<ReductionPlan> plan = MakeReductionPlan(x.shape(), ctx->input(1), keep_dims_);
    OP_REQUIRES(ctx, plan.ok(),
                errors::Annotate(plan.status(), absl::StrCat(type_string(), " '", name(), "' of input shape ",
                                                             x.shape().DebugString(), ": ")));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, plan->output_shape, &out));
    const int64_t n = out->NumElements();
    if (n == 0) return;
    T* o = out->data<T>();
    if constexpr (std::is_same_v<Acc, T>) {
      for (int64_t i = 0; i < n; ++i) o[i] = Reducer::Init();
      ReduceLoop(*plan, x.data<T>(), o, [](Acc a, T v) { return Reducer::Combine(a, v); });
      if constexpr (!std::is_same_v<Reducer, SumReducer<T>>) {
        for (int64_t i = 0; i < n; ++i) o[i] = Reducer::Finish(o[i], plan->reduced_count);
      }
    } else {
      std::vector<Acc> acc(static_cast<size_t>(n), Reducer::Init());
      ReduceLoop(*plan, x.data<T>(), acc.data(), [](Acc a, T v) { return Reducer::Combine(a, v); });
      for (int64_t i = 0; i < n; ++i) o[i] = Reducer::Finish(acc[i], plan->reduced_count);
    }
  }

 private:
  bool keep_dims_ = false;
};

template <template <typename> class R, typename... Ts>
void RegisterReductionKernels(const char* op) {
  (RegisterKernel<ReductionOp<Ts, R>>(KernelBuilder(op).TypeConstraint<Ts>("T")), ...);
}

void RegisterReductionOpDef(const char* name, const char* doc) {
  RegisterOp(OpDefBuilder(name)
                 .Input("input: T")
                 .Input("reduction_indices: Tidx")
                 .Output("output: T")
                 .Attr("keep_dims: bool = false")
                 .Attr("T: {float, double, int32, int64, uint8}")
                 .Attr("Tidx: {int32, int64} = DT_INT32")
                 .SetShapeFn(ReductionShape)
                 .Doc(doc));
}

}  // namespace

void RegisterReductionOps() {
  RegisterReductionOpDef("Sum", "The sum of the elements along the given axes.");
  RegisterReductionOpDef("Mean", "The mean of the elements along the given axes.");
  RegisterReductionOpDef("Max", "The maximum of the elements along the given axes.");
  RegisterReductionOpDef("Min", "The minimum of the elements along the given axes.");
  RegisterReductionOpDef("Prod", "The product of the elements along the given axes.");
  RegisterReductionKernels<SumReducer, float, double, int32_t, int64_t, uint8_t>("Sum");
  RegisterReductionKernels<MeanReducer, float, double, int32_t, int64_t, uint8_t>("Mean");
  RegisterReductionKernels<MaxReducer, float, double, int32_t, int64_t, uint8_t>("Max");
  RegisterReductionKernels<MinReducer, float, double, int32_t, int64_t, uint8_t>("Min");
  RegisterReductionKernels<ProdReducer, float, double, int32_t, int64_t, uint8_t>("Prod");
}

}  // namespace dflow
