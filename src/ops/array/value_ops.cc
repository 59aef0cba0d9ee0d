// Ops that make values rather than move them: ZerosLike, OnesLike, Range, OneHot, and
// StopGradient (the identity that backpropagation does not cross). None has a gradient.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "framework/op_kernel.h"
#include "graph/gradients.h"
#include "ops/array/array_ops.h"
#include "ops/array/array_util.h"

namespace dflow {
namespace {

using namespace ::dflow::array;  // NOLINT: the family's own helpers

// ---- ZerosLike, OnesLike, StopGradient ----

class ZerosLikeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    const bool ok = VisitStorage(x.dtype(), [&]<typename E>() { FillN(StorageData<E>(out), out->NumElements(), E{}); });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(x.dtype())));
  }
};

class OnesLikeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &out));
    const bool ok = VisitPOD(x.dtype(), [&]<typename T>() { FillN(out->data<T>(), out->NumElements(), T(1)); });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(x.dtype())));
  }
};

class StopGradientOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

// ---- Range ----

// The number of elements of [start, limit) by delta; InvalidArgument for a zero delta, a
// direction that never reaches the limit, or too many elements.
template <typename T>
StatusOr<int64_t> RangeSize(T start, T limit, T delta) {
  if (delta == 0) return errors::InvalidArgument("Requires delta != 0: ", delta);
  if (delta > 0 && start > limit) {
    return errors::InvalidArgument("Requires start <= limit when delta > 0: ", start, "/", limit);
  }
  if (delta < 0 && start < limit) {
    return errors::InvalidArgument("Requires start >= limit when delta < 0: ", start, "/", limit);
  }
  if constexpr (std::is_integral_v<T>) {
    // In 128 bits, so that limit - start cannot overflow.
    const __int128 span = static_cast<__int128>(limit) - start;
    const __int128 step = delta;
    const __int128 n = (span < 0 ? -span : span) / (step < 0 ? -step : step) +
                       ((span < 0 ? -span : span) % (step < 0 ? -step : step) != 0 ? 1 : 0);
    if (n > kMaxElements) {
      return errors::InvalidArgument("Range from ", start, " to ", limit, " by ", delta, " has too many elements");
    }
    return static_cast<int64_t>(n);
  } else {
    if (!std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
      return errors::InvalidArgument("Range requires finite start, limit and delta, got ", start, ", ", limit, ", ",
                                     delta);
    }
    const double n = std::ceil(std::abs((static_cast<double>(limit) - start) / delta));
    if (n > static_cast<double>(kMaxElements)) return errors::InvalidArgument("Range has too many elements: ", n);
    return static_cast<int64_t>(n);
  }
}

template <typename T>
class RangeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < 3; ++i) {
      OP_REQUIRES(ctx, ctx->input(i).dims() == 0,
                  KernelError(*this,
                              i == 0   ? "start"
                              : i == 1 ? "limit"
                                       : "delta",
                              " must be a scalar, not shape ", ShapeStr(ctx->input(i))));
    }
    const T start = ctx->input(0).scalar<T>(), limit = ctx->input(1).scalar<T>(), delta = ctx->input(2).scalar<T>();
    StatusOr<int64_t> n = RangeSize(start, limit, delta);
    OP_REQUIRES(ctx, n.ok(), KernelAnnotate(*this, n.status()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape{*n}, &out));
    T* o = out->data<T>();
    for (int64_t i = 0; i < *n; ++i) {
      if constexpr (std::is_integral_v<T>) {
        o[i] = static_cast<T>(static_cast<__int128>(start) + static_cast<__int128>(i) * delta);  // stays in range
      } else {
        o[i] = static_cast<T>(static_cast<double>(start) + static_cast<double>(i) * delta);
      }
    }
  }
};

Status RangeShape(InferenceContext* c) {
  PartialTensorShape s;
  for (int i = 0; i < 3; ++i) RETURN_IF_ERROR(c->WithRank(c->input(i), 0, &s));
  const Tensor* t[3] = {c->input_tensor(0), c->input_tensor(1), c->input_tensor(2)};
  if (t[0] == nullptr || t[1] == nullptr || t[2] == nullptr) {
    c->set_output(0, PartialTensorShape{-1});
    return absl::OkStatus();
  }
  StatusOr<int64_t> n = errors::InvalidArgument("Range: unsupported type ", DTypeString(t[0]->dtype()));
  auto size = [&]<typename T>() { n = RangeSize(t[0]->scalar<T>(), t[1]->scalar<T>(), t[2]->scalar<T>()); };
  switch (t[0]->dtype()) {
    case DT_FLOAT: size.operator()<float>(); break;
    case DT_DOUBLE: size.operator()<double>(); break;
    case DT_INT32: size.operator()<int32_t>(); break;
    case DT_INT64: size.operator()<int64_t>(); break;
    default: break;
  }
  RETURN_IF_ERROR(n.status());
  c->set_output(0, PartialTensorShape{*n});
  return absl::OkStatus();
}

// ---- OneHot ----

Status OneHotShape(InferenceContext* c) {
  PartialTensorShape s;
  RETURN_IF_ERROR(c->WithRank(c->input(1), 0, &s));
  RETURN_IF_ERROR(c->WithRank(c->input(2), 0, &s));
  RETURN_IF_ERROR(c->WithRank(c->input(3), 0, &s));
  int64_t axis = -1;
  RETURN_IF_ERROR(c->GetAttr("axis", &axis));
  if (axis < -1) return errors::InvalidArgument("Expected axis to be -1 or between [0, rank], got ", axis);
  int64_t depth = -1;
  ASSIGN_OR_RETURN(bool known, ConstIndexScalar(c, 1, "depth", &depth));
  if (known && depth < 0) return errors::InvalidArgument("depth must be non-negative, got: ", depth);
  const PartialTensorShape& in = c->input(0);
  if (in.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  if (axis > in.dims()) {  // the kernel's to reject, as in TensorFlow
    c->set_output(0, PartialTensorShape());
    return absl::OkStatus();
  }
  std::vector<int64_t> dims(in.dim_sizes().begin(), in.dim_sizes().end());
  dims.insert(axis == -1 ? dims.end() : dims.begin() + axis, known ? depth : -1);
  ASSIGN_OR_RETURN(PartialTensorShape out, PartialTensorShape::FromDims(dims));
  c->set_output(0, std::move(out));
  return absl::OkStatus();
}

class OneHotOp : public OpKernel {
 public:
  explicit OneHotOp(OpKernelConstruction* c) : OpKernel(c) { c->SetStatus(c->GetAttr("axis", &axis_)); }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& on = ctx->input(2);
    const Tensor& off = ctx->input(3);
    OP_REQUIRES(ctx, ctx->input(1).dims() == 0,
                KernelError(*this, "depth must be a scalar, got shape ", ShapeStr(ctx->input(1))));
    const int64_t depth = ctx->input(1).scalar<int32_t>();
    OP_REQUIRES(ctx, depth >= 0, KernelError(*this, "depth must be non-negative, got: ", depth));
    OP_REQUIRES(ctx, on.dims() == 0, KernelError(*this, "on_value must be a scalar, got shape ", ShapeStr(on)));
    OP_REQUIRES(ctx, off.dims() == 0, KernelError(*this, "off_value must be a scalar, got shape ", ShapeStr(off)));
    const int rank = indices.dims();
    OP_REQUIRES(ctx, axis_ >= -1 && axis_ <= rank,
                KernelError(*this, "Expected axis to be -1 or between [0, ", rank, "], got ", axis_));
    const int a = axis_ == -1 ? rank : static_cast<int>(axis_);
    DimVector dims(indices.shape().dim_sizes().begin(), indices.shape().dim_sizes().end());
    dims.insert(dims.begin() + a, depth);
    OP_REQUIRES_ASSIGN(ctx, TensorShape out_shape, MakeShape(*this, dims));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, out_shape, &out));
    if (out->NumElements() == 0) return;
    // out[p][d][s] = indices[p][s] == d ? on : off, with p over indices' dims before the axis.
    const int64_t prefix = DimProduct(indices.shape(), 0, a);
    const int64_t suffix = DimProduct(indices.shape(), a, rank);
    std::vector<int64_t> idx(indices.NumElements());
    if (indices.dtype() == DT_UINT8) {
      for (size_t i = 0; i < idx.size(); ++i) idx[i] = indices.data<uint8_t>()[i];
    } else if (indices.dtype() == DT_INT32) {
      for (size_t i = 0; i < idx.size(); ++i) idx[i] = indices.data<int32_t>()[i];
    } else {
      for (size_t i = 0; i < idx.size(); ++i) idx[i] = indices.data<int64_t>()[i];
    }
    const bool ok = VisitStorage(on.dtype(), [&]<typename E>() {
      const E on_v = StorageData<E>(on)[0], off_v = StorageData<E>(off)[0];
      E* o = StorageData<E>(out);
      FillN(o, out->NumElements(), off_v);
      for (int64_t p = 0; p < prefix; ++p) {
        for (int64_t s = 0; s < suffix; ++s) {
          const int64_t d = idx[p * suffix + s];
          if (d >= 0 && d < depth) o[(p * depth + d) * suffix + s] = on_v;  // others stay off
        }
      }
    });
    OP_REQUIRES(ctx, ok, KernelError(*this, "unsupported type ", DTypeString(on.dtype())));
  }

 private:
  int64_t axis_ = -1;
};

}  // namespace

void RegisterValueOps() {
  RegisterOp(OpDefBuilder("ZerosLike")
                 .Input("x: T")
                 .Output("y: T")
                 .Attr("T: type")
                 .SetShapeFn(UnchangedShape)
                 .Doc("Zeros (empty strings, false) of x's shape and type."));
  RegisterOp(OpDefBuilder("OnesLike")
                 .Input("x: T")
                 .Output("y: T")
                 .Attr("T: {float, double, int32, int64, uint8, bool}")
                 .SetShapeFn(UnchangedShape)
                 .Doc("Ones of x's shape and type."));
  RegisterOp(OpDefBuilder("StopGradient")
                 .Input("input: T")
                 .Output("output: T")
                 .Attr("T: type")
                 .SetShapeFn(UnchangedShape)
                 .Doc("The input; gradients do not flow through it."));
  RegisterOp(OpDefBuilder("Range")
                 .Input("start: Tidx")
                 .Input("limit: Tidx")
                 .Input("delta: Tidx")
                 .Output("output: Tidx")
                 .Attr("Tidx: {float, double, int32, int64} = int32")
                 .SetShapeFn(RangeShape)
                 .Doc("start, start + delta, ... up to but excluding limit."));
  RegisterOp(OpDefBuilder("OneHot")
                 .Input("indices: TI")
                 .Input("depth: int32")
                 .Input("on_value: T")
                 .Input("off_value: T")
                 .Output("output: T")
                 .Attr("axis: int = -1")
                 .Attr("T: type")
                 .Attr("TI: {uint8, int32, int64} = int64")
                 .SetShapeFn(OneHotShape)
                 .Doc("on_value where the new axis equals the index, off_value elsewhere (and for indices outside "
                      "[0, depth))."));
  RegisterKernel<ZerosLikeOp>(KernelBuilder("ZerosLike"));
  RegisterKernel<OnesLikeOp>(KernelBuilder("OnesLike"));
  RegisterKernel<StopGradientOp>(KernelBuilder("StopGradient"));
  RegisterKernel<RangeOp<float>>(KernelBuilder("Range").TypeConstraint<float>("Tidx"));
  RegisterKernel<RangeOp<double>>(KernelBuilder("Range").TypeConstraint<double>("Tidx"));
  RegisterKernel<RangeOp<int32_t>>(KernelBuilder("Range").TypeConstraint<int32_t>("Tidx"));
  RegisterKernel<RangeOp<int64_t>>(KernelBuilder("Range").TypeConstraint<int64_t>("Tidx"));
  RegisterKernel<OneHotOp>(KernelBuilder("OneHot"));
  for (const char* op : {"ZerosLike", "OnesLike", "StopGradient", "Range", "OneHot"}) RegisterNoGradient(op);
}

}  // namespace dflow
