// Cast: converts every element of x from SrcT to DstT.
//
// Conversions: to bool, nonzero (and NaN) is true; from bool, 0 or 1; between integers, modular
// (two's complement) as C++ defines it; floating point to integer truncates toward zero, with
// NaN giving 0 and values beyond the target's range saturating to its limits (TensorFlow leaves
// those cases undefined; dflow never runs undefined behaviour on input data).
#include <cmath>
#include <limits>
#include <type_traits>

#include "framework/op_kernel.h"
#include "framework/shape_inference.h"
#include "ops/math/math_ops.h"

namespace dflow {
namespace {

template <typename Dst, typename Src>
inline Dst CastValue(Src v) {
  if constexpr (std::is_same_v<Dst, bool>) {
    return v != Src{0};
  } else if constexpr (std::is_floating_point_v<Src> && std::is_integral_v<Dst>) {
    if (std::isnan(v)) return 0;
    // Both limits are exactly representable as a power of two (or zero) in Src.
    constexpr Src kLow = static_cast<Src>(std::numeric_limits<Dst>::min());
    constexpr Src kHigh = static_cast<Src>(std::numeric_limits<Dst>::max()) + Src{1};  // 2^bits(-1)
    if (v <= kLow) return std::numeric_limits<Dst>::min();
    if (v >= kHigh) return std::numeric_limits<Dst>::max();
    return static_cast<Dst>(v);
  } else {
    return static_cast<Dst>(v);
  }
}

using CastFn = void (*)(const void* in, void* out, int64_t n);

template <typename Src, typename Dst>
void CastLoop(const void* in, void* out, int64_t n) {
  const Src* s = static_cast<const Src*>(in);
  Dst* d = static_cast<Dst*>(out);
  for (int64_t i = 0; i < n; ++i) d[i] = CastValue<Dst>(s[i]);
}

class CastOp : public OpKernel {
 public:
  explicit CastOp(OpKernelConstruction* c) : OpKernel(c) {
    DType src = input_type(0), dst = output_type(0);
    if (src == dst) return;  // forwards the input
    bool ok = VisitPOD(src, [&]<typename S>() { VisitPOD(dst, [&]<typename D>() { fn_ = &CastLoop<S, D>; }); });
    if (!ok || fn_ == nullptr) {
      c->SetStatus(errors::Unimplemented("Cast ", name(), ": no cast from ", DTypeString(src), " to ",
                                         DTypeString(dst)));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (fn_ == nullptr) {
      ctx->set_output(0, x);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    if (x.NumElements() > 0) fn_(x.raw_data(), out->raw_data(), x.NumElements());
  }

 private:
  CastFn fn_ = nullptr;
};

}  // namespace

void RegisterCastOp() {
  RegisterOp(OpDefBuilder("Cast")
                 .Input("x: SrcT")
                 .Output("y: DstT")
                 .Attr("SrcT: {float, double, int32, int64, uint8, bool}")
                 .Attr("DstT: {float, double, int32, int64, uint8, bool}")
                 .Attr("Truncate: bool = false")
                 .SetShapeFn(UnchangedShape)
                 .Doc("Converts x to DstT element-wise."));
  RegisterKernel<CastOp>(KernelBuilder("Cast"));
}

}  // namespace dflow
